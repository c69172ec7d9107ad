//===- MlpModule.h - The tensor-parallel MLP module of the benchmarks -----===//
//
// The MLP block of examples/hlo/tp_mlp_while.hlo at a real layer size: a
// while loop over `layers` layers sharing one weight set, each device
// holding 1/devices of both weights in f32; every iteration casts the
// shards to bf16, all-gathers them and multiplies
//   h = relu(x @ W_up)     W_up   bf16[hidden, devices, ffn/devices], gathered on dimension 1
//   y = h @ W_down         W_down bf16[devices, ffn/devices, hidden], gathered on dimension 0
//   x = x + y
// which neuron_looped_einsum_replacer fuses into two AwsNeuronCollectiveMatmul
// custom-calls (MatchAllGatherInDotRhs and MatchAllGatherInDotRhsRS).
// HloMlpBench (the interpreter) and HloToBirBench (hlo-to-bir and the
// launch simulator) run it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BENCH_MLPMODULE_H
#define LOOM_BENCH_MLPMODULE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace loom::bench {

/// Default: hidden 4096, ffn 14336, 8 devices, 32 tokens, 2 layers.
struct MlpSize {
  int64_t hidden = 4096;
  int64_t ffn = 14336;
  int64_t devices = 8;
  int64_t tokens = 32;
  int64_t layers = 2;
};

inline std::string MlpDims(std::initializer_list<int64_t> dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

/// The module text (HloModule tp_mlp, num_partitions = devices).
inline std::string MlpModule(const MlpSize &m) {
  const int64_t shard = m.ffn / m.devices;
  const std::string x = "f32[" + MlpDims({m.tokens, m.hidden}) + "]{1,0}";
  const std::string up_shard = "f32[" + MlpDims({m.hidden, 1, shard}) + "]{2,1,0}";
  const std::string down_shard = "f32[" + MlpDims({1, shard, m.hidden}) + "]{2,1,0}";
  const std::string state = "(s32[], " + x + ", " + up_shard + ", " + down_shard + ")";
  std::string group;
  for (int64_t d = 0; d < m.devices; ++d)
    group += (d ? "," : "") + std::to_string(d);
  std::string t = "HloModule tp_mlp, num_partitions=" + std::to_string(m.devices) + "\n\n";
  t += "%layer_cond (cp: " + state + ") -> pred[] {\n";
  t += "  %cp = " + state + " parameter(0)\n";
  t += "  %cond.layer = s32[] get-tuple-element(%cp), index=0\n";
  t += "  %layer.count = s32[] constant(" + std::to_string(m.layers) + ")\n";
  t += "  ROOT %more = pred[] compare(%cond.layer, %layer.count), direction=LT\n}\n\n";
  t += "%mlp_layer (bp: " + state + ") -> " + state + " {\n";
  t += "  %bp = " + state + " parameter(0)\n";
  t += "  %layer = s32[] get-tuple-element(%bp), index=0\n";
  t += "  %x = " + x + " get-tuple-element(%bp), index=1\n";
  t += "  %w_up.shard = " + up_shard + " get-tuple-element(%bp), index=2\n";
  t += "  %w_down.shard = " + down_shard + " get-tuple-element(%bp), index=3\n";
  t += "  %x.bf16 = bf16[" + MlpDims({m.tokens, m.hidden}) + "]{1,0} convert(%x)\n";
  t += "  %w_up.bf16 = bf16[" + MlpDims({m.hidden, 1, shard}) + "]{2,1,0} convert(%w_up.shard)\n";
  t += "  %w_up = bf16[" + MlpDims({m.hidden, m.devices, shard}) +
       "]{2,1,0} all-gather(%w_up.bf16), channel_id=1, replica_groups={{" + group +
       "}}, dimensions={1}, use_global_device_ids=true\n";
  t += "  %up = bf16[" + MlpDims({m.tokens, m.devices, shard}) +
       "]{2,1,0} dot(%x.bf16, %w_up), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  t += "  %zero = bf16[] constant(0)\n";
  t += "  %zeros = bf16[" + MlpDims({m.tokens, m.devices, shard}) +
       "]{2,1,0} broadcast(%zero), dimensions={}\n";
  t += "  %relu = bf16[" + MlpDims({m.tokens, m.devices, shard}) + "]{2,1,0} maximum(%up, %zeros)\n";
  t += "  %h = bf16[" + MlpDims({m.tokens, m.devices * shard}) + "]{1,0} reshape(%relu)\n";
  t += "  %w_down.bf16 = bf16[" + MlpDims({1, shard, m.hidden}) +
       "]{2,1,0} convert(%w_down.shard)\n";
  t += "  %w_down.gathered = bf16[" + MlpDims({m.devices, shard, m.hidden}) +
       "]{2,1,0} all-gather(%w_down.bf16), channel_id=2, replica_groups={{" + group +
       "}}, dimensions={0}, use_global_device_ids=true\n";
  t += "  %w_down = bf16[" + MlpDims({m.devices * shard, m.hidden}) +
       "]{1,0} reshape(%w_down.gathered)\n";
  t += "  %down = bf16[" + MlpDims({m.tokens, m.hidden}) +
       "]{1,0} dot(%h, %w_down), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  t += "  %y = " + x + " convert(%down)\n";
  t += "  %x.next = " + x + " add(%x, %y)\n";
  t += "  %one = s32[] constant(1)\n";
  t += "  %layer.next = s32[] add(%layer, %one)\n";
  t += "  ROOT %state = " + state + " tuple(%layer.next, %x.next, %w_up.shard, %w_down.shard)\n";
  t += "}\n\n";
  t += "ENTRY %main (x.in: " + x + ", w_up.in: " + up_shard + ", w_down.in: " + down_shard +
       ") -> " + x + " {\n";
  t += "  %x.in = " + x + " parameter(0)\n";
  t += "  %w_up.in = " + up_shard + " parameter(1)\n";
  t += "  %w_down.in = " + down_shard + " parameter(2)\n";
  t += "  %layer.first = s32[] constant(0)\n";
  t += "  %state.in = " + state + " tuple(%layer.first, %x.in, %w_up.in, %w_down.in)\n";
  t += "  %loop = " + state + " while(%state.in), condition=%layer_cond, body=%mlp_layer\n";
  t += "  ROOT %x.out = " + x + " get-tuple-element(%loop), index=1\n}\n";
  return t;
}

/// Reads one of --hidden=N --ffn=N --devices=N --tokens=N --layers=N into
/// Size: none when Arg is not one of them, false when its value is bad.
inline std::optional<bool> ParseMlpSizeFlag(llvm::StringRef Arg, MlpSize &Size) {
  static const std::pair<const char *, int64_t MlpSize::*> kFlags[] = {
      {"--hidden=", &MlpSize::hidden}, {"--ffn=", &MlpSize::ffn},
      {"--devices=", &MlpSize::devices}, {"--tokens=", &MlpSize::tokens},
      {"--layers=", &MlpSize::layers}};
  for (const auto &[Flag, Field] : kFlags)
    if (Arg.consume_front(Flag))
      return !Arg.getAsInteger(10, Size.*Field) && Size.*Field > 0;
  return std::nullopt;
}

} // namespace loom::bench

#endif
