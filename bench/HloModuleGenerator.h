//===- HloModuleGenerator.h - Large dump-style HLO modules, by seed -------===//
//
// Writes an HLO module in XLA's dump style (long syntax: operand shapes with
// layouts, `metadata={...}` on every instruction, `/*index=N*/` markers) of a
// requested number of instructions, deterministic by seed. The module is a
// chain of while loops, one per layer, as a tensor-parallel model dumps it:
// the entry computation threads the activations and each layer's weight
// shards through a `while`; the body reads them with get-tuple-element,
// all-gathers every weight shard along dimension 0 and feeds it to a dot
// (the shape neuron_looped_einsum_replacer rewrites, MatchAllGatherInDotRhs
// with the weight reaching the body parameter), then runs elementwise,
// broadcast, reshape and transpose filler over the results. Names are
// unique across the module; the text is in the printer's canonical form, so
// parse + print without passes reproduces it byte for byte.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BENCH_HLOMODULEGENERATOR_H
#define LOOM_BENCH_HLOMODULEGENERATOR_H

#include "HloDumpStyleWriter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::hlo::bench {

struct HloGeneratorOptions {
  int64_t instructions = 100000;
  uint64_t seed = 1;
  /// Instructions of one while body (the layer); the last layer may be
  /// shorter so that the total matches `instructions`.
  int64_t body_instructions = 193;
  /// Weight shards all-gathered and multiplied in every body.
  int weights_per_layer = 4;
};

namespace detail {

class HloTextWriter : DumpStyleWriter {
public:
  explicit HloTextWriter(const HloGeneratorOptions &options)
      : DumpStyleWriter(options.seed), options_(options) {}

  std::string Write() {
    out_.reserve(static_cast<size_t>(options_.instructions) * 224 + 4096);
    out_ += "HloModule jit_train_step, is_scheduled=true, num_partitions=4, "
            "entry_computation_layout={(f32[128,256]{1,0})->f32[128,256]{1,0}}\n";
    // Entry: x, then per layer K weights, init tuple, while, result gte;
    // one final ROOT copy.
    const int64_t k = options_.weights_per_layer;
    const int64_t per_layer_entry = k + 3;
    const int64_t cond_size = 4;
    int64_t budget = options_.instructions - 2; // x parameter and ROOT copy
    std::vector<int64_t> bodies;
    const int64_t min_body = 2 + k + 1 + 4 * k + 3;
    while (budget >= per_layer_entry + cond_size + min_body) {
      int64_t body = options_.body_instructions;
      int64_t rest = budget - per_layer_entry - cond_size;
      if (rest - body < per_layer_entry + cond_size + min_body)
        body = rest; // the last layer takes what is left
      bodies.push_back(body);
      budget -= per_layer_entry + cond_size + body;
    }
    std::string entry;
    std::string signature = "x: f32[128,256]";
    std::string x = "x";
    int64_t param = 0;
    EntryLine(entry, "x", kAct, "parameter(0)", Metadata("params"));
    std::string tuple_shape = TupleShape();
    for (size_t layer = 0; layer < bodies.size(); ++layer) {
      layer_ = static_cast<int64_t>(layer);
      std::string cond = "cond." + std::to_string(layer);
      std::string body = "body." + std::to_string(layer);
      WriteCondition(cond, tuple_shape);
      WriteBody(body, tuple_shape, bodies[layer]);
      // Entry side of the layer.
      std::vector<std::string> weights;
      for (int64_t j = 0; j < k; ++j) {
        std::string w = "w." + std::to_string(layer) + "." + std::to_string(j);
        signature += ", " + w + ": bf16[256,4,16]";
        EntryLine(entry, w, kShard, "parameter(" + std::to_string(++param) + ")", Metadata("params"));
        weights.push_back(w);
      }
      std::string zero = Name("constant");
      EntryLine(entry, zero, "s32[]", "constant(0)", Metadata("loop_counter"));
      std::string init = Name("tuple");
      std::string operands = "s32[] %" + zero + ", f32[128,256]{1,0} %" + x;
      for (int64_t j = 0; j < k; ++j)
        operands += OperandSeparator(2 + j) + "bf16[256,4,16]{2,1,0} %" + weights[j];
      EntryLine(entry, init, tuple_shape, "tuple(" + operands + ")", Metadata("pjit"));
      std::string loop = Name("while");
      EntryLine(entry, loop, tuple_shape, "while(" + tuple_shape + " %" + init + ")",
                ", condition=%" + cond + ", body=%" + body + Metadata("while"));
      std::string out = Name("get-tuple-element");
      EntryLine(entry, out, kAct, "get-tuple-element(" + tuple_shape + " %" + loop + ")",
                ", index=1" + Metadata("while"));
      x = out;
    }
    std::string result = Name("copy");
    entry += "  ROOT %" + result + " = f32[128,256]{1,0} copy(f32[128,256]{1,0} %" + x +
             ")" + Metadata("copy") + "\n";
    out_ += "\nENTRY %main.0 (" + signature + ") -> f32[128,256] {\n";
    out_ += entry;
    out_ += "}\n";
    return std::move(out_);
  }

private:
  static constexpr const char *kAct = "f32[128,256]{1,0}";
  static constexpr const char *kActBf = "bf16[128,256]{1,0}";
  static constexpr const char *kShard = "bf16[256,4,16]{2,1,0}";
  static constexpr const char *kFull = "bf16[256,16,16]{2,1,0}";
  static constexpr const char *kCube = "f32[128,16,16]{2,1,0}";
  static constexpr const char *kCubeBf = "bf16[128,16,16]{2,1,0}";

  static std::string OperandSeparator(int64_t i) {
    if (i == 0)
      return "";
    if (i % 5 == 0)
      return ", /*index=" + std::to_string(i) + "*/";
    return ", ";
  }
  std::string TupleShape() const {
    std::string s = "(s32[], f32[128,256]{1,0}";
    for (int64_t j = 0; j < options_.weights_per_layer; ++j)
      s += OperandSeparator(2 + j) + "bf16[256,4,16]{2,1,0}";
    return s + ")";
  }
  void EntryLine(std::string &to, const std::string &name, const std::string &shape,
                 const std::string &rhs, const std::string &attributes) {
    to += "  %" + name + " = " + shape + " " + rhs + attributes + "\n";
  }
  void Line(const std::string &name, const std::string &shape, const std::string &rhs,
            const std::string &attributes) {
    out_ += "  %" + name + " = " + shape + " " + rhs + attributes + "\n";
    ++written_;
  }

  void WriteCondition(const std::string &name, const std::string &tuple_shape) {
    std::string no_layout = "(s32[], f32[128,256]";
    for (int64_t j = 0; j < options_.weights_per_layer; ++j)
      no_layout += OperandSeparator(2 + j) + "bf16[256,4,16]";
    no_layout += ")";
    std::string cp = Name("cp");
    out_ += "\n%" + name + " (" + cp + ": " + no_layout + ") -> pred[] {\n";
    Line(cp, tuple_shape, "parameter(0)", Metadata("while/cond"));
    std::string ci = Name("get-tuple-element");
    Line(ci, "s32[]", "get-tuple-element(" + tuple_shape + " %" + cp + ")",
         ", index=0" + Metadata("while/cond"));
    std::string trip = Name("constant");
    Line(trip, "s32[]", "constant(" + std::to_string(2 + Next() % 6) + ")",
         Metadata("while/cond"));
    std::string lt = Name("compare");
    out_ += "  ROOT %" + lt + " = pred[] compare(s32[] %" + ci + ", s32[] %" + trip +
            "), direction=LT" + Metadata("while/cond") + "\n}\n";
  }

  void Act(const std::string &name) {
    recent_.push_back(name);
    if (recent_.size() > 12)
      recent_.erase(recent_.begin());
  }
  const std::string &Recent() { return recent_[recent_.size() - 1 - Next() % recent_.size()]; }
  static std::string Op(const char *shape, const std::string &name) {
    return std::string(shape) + " %" + name;
  }

  void WriteBody(const std::string &name, const std::string &tuple_shape, int64_t size) {
    const int64_t k = options_.weights_per_layer;
    std::string no_layout = "(s32[], f32[128,256]";
    for (int64_t j = 0; j < k; ++j)
      no_layout += OperandSeparator(2 + j) + "bf16[256,4,16]";
    no_layout += ")";
    std::string bp = Name("bp");
    out_ += "\n%" + name + " (" + bp + ": " + no_layout + ") -> " + no_layout + " {\n";
    int64_t start = written_;
    Line(bp, tuple_shape, "parameter(0)", Metadata("while/body"));
    auto gte = [&](const char *shape, int64_t index) {
      std::string n = Name("get-tuple-element");
      Line(n, shape, "get-tuple-element(" + tuple_shape + " %" + bp + ")",
           ", index=" + std::to_string(index) + Metadata("while/body"));
      return n;
    };
    std::string i = gte("s32[]", 0);
    std::string x = gte(kAct, 1);
    std::vector<std::string> weights;
    for (int64_t j = 0; j < k; ++j)
      weights.push_back(gte(kShard, 2 + j));
    std::string xbf = Name("convert");
    Line(xbf, kActBf, "convert(" + Op(kAct, x) + ")", Metadata("convert_element_type"));
    recent_ = {x};
    for (int64_t j = 0; j < k; ++j) {
      std::string ag = Name("all-gather");
      Line(ag, kFull, "all-gather(" + Op(kShard, weights[j]) + ")",
           ", channel_id=" + std::to_string(++channel_) +
               ", replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true" +
               Metadata("all_gather"));
      std::string dot = Name("dot");
      Line(dot, kCubeBf, "dot(" + Op(kActBf, xbf) + ", " + Op(kFull, ag) + ")",
           ", lhs_contracting_dims={1}, rhs_contracting_dims={0}" + Metadata("dot_general"));
      std::string f = Name("convert");
      Line(f, kCube, "convert(" + Op(kCubeBf, dot) + ")", Metadata("convert_element_type"));
      std::string flat = Name("reshape");
      Line(flat, kAct, "reshape(" + Op(kCube, f) + ")", Metadata("reshape"));
      Act(flat);
    }
    // Filler up to the body's size, keeping 3 for the counter and the root.
    static const char *kBinary[] = {"add", "multiply", "subtract", "maximum"};
    static const char *kUnary[] = {"exponential", "tanh", "negate"};
    while (written_ - start < size - 3) {
      int64_t left = size - 3 - (written_ - start);
      uint64_t pick = Next() % 10;
      if (pick < 5 || left < 3) {
        const char *op = kBinary[Next() % 4];
        std::string n = Name(op);
        Line(n, kAct, std::string(op) + "(" + Op(kAct, Recent()) + ", " + Op(kAct, Recent()) + ")",
             Metadata(op));
        Act(n);
      } else if (pick < 7) {
        const char *op = kUnary[Next() % 3];
        std::string n = Name(op);
        Line(n, kAct, std::string(op) + "(" + Op(kAct, Recent()) + ")", Metadata(op));
        Act(n);
      } else if (pick < 8) {
        std::string c = Name("constant");
        Line(c, "f32[]", "constant(" + std::to_string(Next() % 7) + ")", Metadata("mul"));
        std::string b = Name("broadcast");
        Line(b, kAct, "broadcast(" + Op("f32[]", c) + ")", ", dimensions={}" + Metadata("broadcast_in_dim"));
        std::string n = Name("multiply");
        Line(n, kAct, "multiply(" + Op(kAct, Recent()) + ", " + Op(kAct, b) + ")", Metadata("mul"));
        Act(n);
      } else if (pick < 9) {
        std::string cube = Name("reshape");
        Line(cube, kCube, "reshape(" + Op(kAct, Recent()) + ")", Metadata("reshape"));
        std::string back = Name("reshape");
        Line(back, kAct, "reshape(" + Op(kCube, cube) + ")", Metadata("reshape"));
        Act(back);
      } else {
        std::string r = Name("reduce-precision");
        Line(r, kAct, "reduce-precision(" + Op(kAct, Recent()) + ")",
             ", exponent_bits=8, mantissa_bits=7" + Metadata("reduce_precision"));
        Act(r);
      }
    }
    std::string one = Name("constant");
    Line(one, "s32[]", "constant(1)", Metadata("while/body"));
    std::string next = Name("add");
    Line(next, "s32[]", "add(s32[] %" + i + ", s32[] %" + one + ")", Metadata("while/body"));
    std::string root = Name("tuple");
    std::string operands = "s32[] %" + next + ", f32[128,256]{1,0} %" + recent_.back();
    for (int64_t j = 0; j < k; ++j)
      operands += OperandSeparator(2 + j) + "bf16[256,4,16]{2,1,0} %" + weights[j];
    out_ += "  ROOT %" + root + " = " + tuple_shape + " tuple(" + operands + ")" +
            Metadata("while/body") + "\n}\n";
    ++written_;
  }

  HloGeneratorOptions options_;
  std::string out_;
  std::vector<std::string> recent_;
  int64_t written_ = 0;
};

} // namespace detail

/// The module text; exactly `options.instructions` instructions when that is
/// at least one layer's worth (about 210), deterministic by `options.seed`.
inline std::string GenerateDumpStyleHloModule(const HloGeneratorOptions &options) {
  return detail::HloTextWriter(options).Write();
}

} // namespace loom::hlo::bench

#endif
