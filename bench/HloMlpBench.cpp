//===- HloMlpBench.cpp - --check-numerics on a tensor-parallel MLP --------===//
//
// The module is the tensor-parallel MLP of MlpModule.h.
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

#include "MlpModule.h"

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
using loom::bench::MlpSize;

MlpSize size;

/// Parse, both Neuron passes, and the numerics check with `threads`.
void BM_CheckNumerics(benchmark::State &state) {
  const int threads = static_cast<int>(state.range(0));
  static double one_thread_seconds = 0;
  const std::string text = loom::bench::MlpModule(size);
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
    if (std::optional<bool> ok = loom::bench::ParseMlpSizeFlag(arg, size)) {
      if (!*ok)
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
    os << loom::bench::MlpModule(size);
    return 0;
  }
  RegisterAllHloPasses();
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
