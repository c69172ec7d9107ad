//===- HloMlpBench.cpp - --check-numerics on a tensor-parallel MLP --------===//
//
// The module is the MLP block of examples/hlo/tp_mlp_while.hlo at a real
// layer size: a while loop over `layers` layers sharing one weight set, each
// device holding 1/devices of both weights in f32; every iteration casts
// the shards to bf16, all-gathers them and multiplies
//   h = relu(x @ W_up)     W_up   bf16[hidden, devices, ffn/devices], gathered on dimension 1
//   y = h @ W_down         W_down bf16[devices, ffn/devices, hidden], gathered on dimension 0
//   x = x + y
// which neuron_looped_einsum_replacer fuses into two AwsNeuronCollectiveMatmul
// custom-calls (MatchAllGatherInDotRhs and MatchAllGatherInDotRhsRS).
//
//   HloMlpBench --write-module=FILE [--hidden=N --ffn=N --devices=N --tokens=N --layers=N]
// writes the module (default: hidden 4096, ffn 14336, 8 devices, 32 tokens,
// 2 layers) for `hlo-opt --check-numerics`;
//   HloMlpBench [benchmark flags] [--hidden=N ...]
// runs the passes and the numerics check (both modules on every device)
// with one interpreter thread and with every core (threads=0), reporting
// each run's wall time and, on the second, the ratio to the first
// (vs_one_thread, measured in the same run).
//
// docs/performance.md ("Interpreter threads") records the figures.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/eval/NumericsCheck.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloClone.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"

#include "benchmark/benchmark.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace loom::hlo;

struct MlpSize {
  int64_t hidden = 4096;
  int64_t ffn = 14336;
  int64_t devices = 8;
  int64_t tokens = 32;
  int64_t layers = 2;
};

MlpSize size;

std::string Dims(std::initializer_list<int64_t> dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

std::string MlpModule(const MlpSize &m) {
  const int64_t shard = m.ffn / m.devices;
  const std::string x = "f32[" + Dims({m.tokens, m.hidden}) + "]{1,0}";
  const std::string up_shard = "f32[" + Dims({m.hidden, 1, shard}) + "]{2,1,0}";
  const std::string down_shard = "f32[" + Dims({1, shard, m.hidden}) + "]{2,1,0}";
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
  t += "  %x.bf16 = bf16[" + Dims({m.tokens, m.hidden}) + "]{1,0} convert(%x)\n";
  t += "  %w_up.bf16 = bf16[" + Dims({m.hidden, 1, shard}) + "]{2,1,0} convert(%w_up.shard)\n";
  t += "  %w_up = bf16[" + Dims({m.hidden, m.devices, shard}) +
       "]{2,1,0} all-gather(%w_up.bf16), channel_id=1, replica_groups={{" + group +
       "}}, dimensions={1}, use_global_device_ids=true\n";
  t += "  %up = bf16[" + Dims({m.tokens, m.devices, shard}) +
       "]{2,1,0} dot(%x.bf16, %w_up), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  t += "  %zero = bf16[] constant(0)\n";
  t += "  %zeros = bf16[" + Dims({m.tokens, m.devices, shard}) +
       "]{2,1,0} broadcast(%zero), dimensions={}\n";
  t += "  %relu = bf16[" + Dims({m.tokens, m.devices, shard}) + "]{2,1,0} maximum(%up, %zeros)\n";
  t += "  %h = bf16[" + Dims({m.tokens, m.devices * shard}) + "]{1,0} reshape(%relu)\n";
  t += "  %w_down.bf16 = bf16[" + Dims({1, shard, m.hidden}) +
       "]{2,1,0} convert(%w_down.shard)\n";
  t += "  %w_down.gathered = bf16[" + Dims({m.devices, shard, m.hidden}) +
       "]{2,1,0} all-gather(%w_down.bf16), channel_id=2, replica_groups={{" + group +
       "}}, dimensions={0}, use_global_device_ids=true\n";
  t += "  %w_down = bf16[" + Dims({m.devices * shard, m.hidden}) +
       "]{1,0} reshape(%w_down.gathered)\n";
  t += "  %down = bf16[" + Dims({m.tokens, m.hidden}) +
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

/// Parse, both Neuron passes, and the numerics check with `threads`.
void BM_CheckNumerics(benchmark::State &state) {
  const int threads = static_cast<int>(state.range(0));
  static double one_thread_seconds = 0;
  const std::string text = MlpModule(size);
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto module = ParseHloModule(text, "tp_mlp.hlo");
    if (!module) {
      state.SkipWithError(llvm::toString(module.takeError()).c_str());
      return;
    }
    std::unique_ptr<HloModule> before = llvm::cantFail(CloneModule(**module));
    HloPassPipeline pipeline("mlp", HloPassPipelineOptions());
    for (const char *name :
         {"neuron_looped_einsum_replacer", "neuron_looped_einsum_token_replacer"}) {
      auto pass = CreateHloPass(name);
      if (!pass) {
        state.SkipWithError(llvm::toString(pass.takeError()).c_str());
        return;
      }
      pipeline.AddPass(std::move(*pass));
    }
    auto changed = pipeline.Run(**module);
    if (!changed || !*changed) {
      state.SkipWithError(changed ? "the passes fused nothing"
                                  : llvm::toString(changed.takeError()).c_str());
      return;
    }
    NumericsCheckOptions options;
    options.eval.threads = threads;
    if (llvm::Error err = CheckNumerics(*before, **module, options, llvm::nulls())) {
      state.SkipWithError(llvm::toString(std::move(err)).c_str());
      return;
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds);
  }
  state.counters["seconds"] = seconds;
  if (threads == 1)
    one_thread_seconds = seconds;
  else if (one_thread_seconds > 0)
    state.counters["vs_one_thread"] = seconds / one_thread_seconds;
}
BENCHMARK(BM_CheckNumerics)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

bool ParseSize(llvm::StringRef arg) {
  static const std::pair<const char *, int64_t MlpSize::*> kFlags[] = {
      {"--hidden=", &MlpSize::hidden}, {"--ffn=", &MlpSize::ffn},
      {"--devices=", &MlpSize::devices}, {"--tokens=", &MlpSize::tokens},
      {"--layers=", &MlpSize::layers}};
  for (const auto &[flag, field] : kFlags)
    if (arg.consume_front(flag))
      return !arg.getAsInteger(10, size.*field) && size.*field > 0;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<char *> rest = {argv[0]};
  std::string write_module;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg.consume_front("--write-module=")) {
      write_module = arg.str();
      continue;
    }
    if (arg.startswith("--hidden=") || arg.startswith("--ffn=") ||
        arg.startswith("--devices=") || arg.startswith("--tokens=") ||
        arg.startswith("--layers=")) {
      if (!ParseSize(arg))
        return std::fprintf(stderr, "bad %s\n", argv[i]), 2;
      continue;
    }
    rest.push_back(argv[i]);
  }
  if (size.ffn % size.devices != 0)
    return std::fprintf(stderr, "--ffn must be a multiple of --devices\n"), 2;
  if (!write_module.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(write_module, ec);
    if (ec)
      return std::fprintf(stderr, "cannot write '%s': %s\n", write_module.c_str(),
                          ec.message().c_str()),
             1;
    os << MlpModule(size);
    return 0;
  }
  RegisterAllHloPasses();
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
