//===- HloUnrolledGenerator.h - One huge computation, dump style, by seed -===//
//
// The other shape of large module people have (beside the chain of while
// loops of HloModuleGenerator.h): what JAX dumps for an unrolled model, one
// ENTRY computation holding every layer. Each layer converts its f32 weight
// shard parameter to bf16, all-gathers it along dimension 1, reshapes the
// gathered weight into a matrix and multiplies the activations by it (the
// shape neuron_looped_einsum_replacer rewrites, MatchAllGatherInDotRhsRS
// with the weight reaching a parameter), then runs an elementwise chain
// (bias broadcast, add, multiply, tanh, residual add with the layer input,
// reduce-precision) over the result. The weight parameters are declared at
// the top of the computation, as JAX lists its arguments, so every layer
// reads an instruction a long way back in the text. `metadata={...}` on
// every instruction; the text is in the printer's canonical form, so
// parse + print without passes reproduces it byte for byte.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BENCH_HLOUNROLLEDGENERATOR_H
#define LOOM_BENCH_HLOUNROLLEDGENERATOR_H

#include "HloDumpStyleWriter.h"

#include <cstdint>
#include <string>

namespace loom::hlo::bench {

namespace detail {

class UnrolledTextWriter : DumpStyleWriter {
public:
  UnrolledTextWriter(int64_t instructions, uint64_t seed)
      : DumpStyleWriter(seed), instructions_(instructions) {}

  std::string Write() {
    // Per layer: a weight parameter, kLayerBody instructions; plus the
    // activation parameter and the ROOT copy.
    int64_t layers = (instructions_ - 2) / (kLayerBody + 1);
    if (layers < 1)
      layers = 1;
    int64_t filler_total = instructions_ - 2 - layers * (kLayerBody + 1);
    std::string body;
    body.reserve(static_cast<size_t>(instructions_) * 215 + 4096);
    std::string signature = "x: f32[128,256]";
    signature.reserve(static_cast<size_t>(layers) * 24 + 64);
    Line(body, "x", kAct, "parameter(0)", Metadata("args"));
    for (int64_t l = 0; l < layers; ++l) {
      std::string w = "w." + std::to_string(l);
      signature += ", " + w + ": f32[256,4,16]";
      Line(body, w, kShardF32, "parameter(" + std::to_string(l + 1) + ")", Metadata("args"));
    }
    std::string x = "x";
    for (int64_t l = 0; l < layers; ++l) {
      layer_ = l;
      int64_t extra = l == layers - 1 ? filler_total : 0;
      x = WriteLayer(body, "w." + std::to_string(l), x, extra);
    }
    std::string result = Name("copy");
    body += "  ROOT %" + result + " = f32[128,256]{1,0} copy(f32[128,256]{1,0} %" + x + ")" +
            Metadata("copy") + "\n";
    std::string out;
    out.reserve(body.size() + signature.size() + 512);
    out += "HloModule jit_train_step, is_scheduled=true, num_partitions=4, "
           "entry_computation_layout={(f32[128,256]{1,0})->f32[128,256]{1,0}}\n";
    out += "\nENTRY %main.0 (" + signature + ") -> f32[128,256] {\n";
    out += body;
    out += "}\n";
    return out;
  }

private:
  static constexpr int64_t kLayerBody = 20;
  static constexpr const char *kAct = "f32[128,256]{1,0}";
  static constexpr const char *kActBf = "bf16[128,256]{1,0}";
  static constexpr const char *kShardF32 = "f32[256,4,16]{2,1,0}";
  static constexpr const char *kShard = "bf16[256,4,16]{2,1,0}";
  static constexpr const char *kFull = "bf16[256,16,16]{2,1,0}";
  static constexpr const char *kMatrix = "bf16[256,256]{1,0}";

  static void Line(std::string &to, const std::string &name, const char *shape,
                   const std::string &rhs, const std::string &attributes) {
    to += "  %" + name + " = " + shape + " " + rhs + attributes + "\n";
  }
  static std::string Op(const char *shape, const std::string &name) {
    return std::string(shape) + " %" + name;
  }

  // kLayerBody instructions (plus `extra` elementwise ones); returns the
  // layer's output.
  std::string WriteLayer(std::string &to, const std::string &w, const std::string &x,
                         int64_t extra) {
    std::string wb = Name("convert");
    Line(to, wb, kShard, "convert(" + Op(kShardF32, w) + ")", Metadata("convert_element_type"));
    std::string ag = Name("all-gather");
    Line(to, ag, kFull, "all-gather(" + Op(kShard, wb) + ")",
         ", channel_id=" + std::to_string(++channel_) +
             ", replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true" +
             Metadata("all_gather"));
    std::string matrix = Name("reshape");
    Line(to, matrix, kMatrix, "reshape(" + Op(kFull, ag) + ")", Metadata("reshape"));
    std::string xb = Name("convert");
    Line(to, xb, kActBf, "convert(" + Op(kAct, x) + ")", Metadata("convert_element_type"));
    std::string dot = Name("dot");
    Line(to, dot, kActBf, "dot(" + Op(kActBf, xb) + ", " + Op(kMatrix, matrix) + ")",
         ", lhs_contracting_dims={1}, rhs_contracting_dims={0}" + Metadata("dot_general"));
    std::string y = Name("convert");
    Line(to, y, kAct, "convert(" + Op(kActBf, dot) + ")", Metadata("convert_element_type"));
    // 6 written; 14 more of elementwise work.
    std::string c = Name("constant");
    Line(to, c, "f32[]", "constant(" + std::to_string(Next() % 7) + ")", Metadata("bias"));
    std::string b = Name("broadcast");
    Line(to, b, kAct, "broadcast(" + Op("f32[]", c) + ")",
         ", dimensions={}" + Metadata("broadcast_in_dim"));
    std::string cur = Name("add");
    Line(to, cur, kAct, "add(" + Op(kAct, y) + ", " + Op(kAct, b) + ")", Metadata("add"));
    std::string prev = y;
    static const char *kBinary[] = {"add", "multiply", "subtract", "maximum"};
    static const char *kUnary[] = {"exponential", "tanh", "negate"};
    for (int64_t i = 0; i < 9 + extra; ++i) {
      uint64_t pick = Next() % 4;
      std::string n;
      if (pick < 2) {
        const char *op = kBinary[Next() % 4];
        n = Name(op);
        Line(to, n, kAct, std::string(op) + "(" + Op(kAct, cur) + ", " + Op(kAct, prev) + ")",
             Metadata(op));
      } else if (pick < 3) {
        const char *op = kUnary[Next() % 3];
        n = Name(op);
        Line(to, n, kAct, std::string(op) + "(" + Op(kAct, cur) + ")", Metadata(op));
      } else {
        n = Name("reduce-precision");
        Line(to, n, kAct, "reduce-precision(" + Op(kAct, cur) + ")",
             ", exponent_bits=8, mantissa_bits=7" + Metadata("reduce_precision"));
      }
      prev = cur;
      cur = n;
    }
    // The residual: the layer's input.
    std::string r = Name("add");
    Line(to, r, kAct, "add(" + Op(kAct, cur) + ", " + Op(kAct, x) + ")", Metadata("residual"));
    std::string t = Name("tanh");
    Line(to, t, kAct, "tanh(" + Op(kAct, r) + ")", Metadata("tanh"));
    return t;
  }

  int64_t instructions_;
};

} // namespace detail

/// The module text: exactly `instructions` instructions when that is at
/// least one layer's worth (23), deterministic by `seed`.
inline std::string GenerateUnrolledHloModule(int64_t instructions, uint64_t seed) {
  return detail::UnrolledTextWriter(instructions, seed).Write();
}

} // namespace loom::hlo::bench

#endif
