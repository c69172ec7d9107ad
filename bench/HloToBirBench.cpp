//===- HloToBirBench.cpp - hlo-to-bir --check on a tensor-parallel MLP ----===//
//
// The module is the tensor-parallel MLP of MlpModule.h (default hidden 4096,
// ffn 14336, 8 devices, 32 tokens, 2 layers), fused by both Neuron passes,
// compiled at lnc 2 (--lnc=N to change): what `hlo-to-bir --check` does.
//
//   HloToBirBench [--hidden=N --ffn=N --devices=N --tokens=N --layers=N]
//                 [--lnc=N] [benchmark flags]
//
// BM_EndToEnd: parse, verify, the two passes, lowering, the backend
//   pipeline on every device, the interpreter's reference run, the
//   simulation of every core of every device and the comparison, in one
//   process, once. Counters: `seconds` (wall), `peak_rss_gib` (the
//   process's peak, measured first so no other benchmark inflates it),
//   `reference_seconds` (the interpreter's run alone, the baseline measured
//   in the same run), `vs_reference` (seconds over it) and `differ` (the
//   elements that differ, 0 when the launch is right).
// BM_Compile/L: lowering plus pipeline only, for L layers; `instructions`
//   is the launch's instruction count and `ns_per_instruction` the compile
//   time over it: compilation is linear when it stays flat as L grows.
//
// Then a table per layer: the simulated time layer k adds (the makespan of
// k layers minus that of k - 1, the same module cut at k layers) beside the
// cost model's roofline for that layer on one device (both cores): its
// FLOPs over the tensor engine's peak, the bytes it must read from HBM
// over the DMA queues' bandwidth, the bytes it must receive over the chip's
// links. docs/performance.md ("hlo-to-bir end to end") records the figures.
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "MlpModule.h"

#include "loom/bir/analysis/CostModel.h"
#include "loom/bir/ir/Launch.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/bir/passes/Pipeline.h"
#include "loom/codegen/Codegen.h"
#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"
#include "loom/launch/LaunchRunner.h"

#include "benchmark/benchmark.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace loom;
using loom::bench::Check;
using loom::bench::MlpSize;

MlpSize size;
unsigned lnc = 2;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double PeakRssGiB() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / double(1 << 20); // ru_maxrss is in KiB
}

/// The MLP of `m`, parsed, verified and fused by both Neuron passes.
std::unique_ptr<hlo::HloModule> FusedModule(const MlpSize &m) {
  std::unique_ptr<hlo::HloModule> module =
      Check(hlo::ParseHloModuleOwned(loom::bench::MlpModule(m), "tp_mlp.hlo"));
  Check(hlo::VerifyHloModule(*module));
  hlo::HloPassPipeline pipeline("mlp", hlo::HloPassPipelineOptions());
  for (const char *name :
       {"neuron_looped_einsum_replacer", "neuron_looped_einsum_token_replacer"})
    pipeline.AddPass(Check(hlo::CreateHloPass(name)));
  if (!Check(pipeline.Run(*module))) {
    llvm::errs() << "the passes fused nothing\n";
    std::exit(1);
  }
  Check(hlo::VerifyHloModule(*module));
  return module;
}

/// Lowering and the default pipeline on every device, as hlo-to-bir does.
bir::Launch Compile(const hlo::HloModule &module) {
  codegen::CodegenOptions options;
  options.LncSize = lnc;
  bir::Launch launch = Check(codegen::lowerToLaunch(module, options));
  bir::BackendOptions backend;
  auto entries = Check(bir::buildDefaultPipeline(backend, launch.Arch));
  bir::PassManager passes = Check(bir::PassManager::fromPipeline(entries, backend));
  Check(passes.runOnLaunch(launch));
  Check(bir::verifyLaunch(launch));
  return launch;
}

size_t CountInstructions(const bir::Launch &launch) {
  size_t n = 0;
  for (const bir::LaunchDevice &device : launch.Devices)
    for (const auto &module : device.Modules)
      for (const auto &block : module->blocks())
        n += block->size();
  return n;
}

launch::LaunchOptions RunOptions() {
  launch::LaunchOptions options;
  // The full-size launch holds about 1 GiB per device: the limits of the
  // default bir-sim run would refuse it, the benchmark's target is 8 GiB.
  options.Sim.MaxMemory = uint64_t(7) << 30;
  options.Eval.max_live_bytes = int64_t(7) << 30;
  return options;
}

/// Parse to comparison, once.
void BM_EndToEnd(benchmark::State &state) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<hlo::HloModule> module = FusedModule(size);
    bir::Launch launch = Compile(*module);
    launch::LaunchOptions options = RunOptions();
    auto args = Check(launch::makeLaunchArguments(launch, module.get(), options));
    const auto reference_start = std::chrono::steady_clock::now();
    auto reference = Check(hlo::RunSpmd(*module, args, options.Eval, nullptr));
    const double reference_seconds = SecondsSince(reference_start);
    launch::LaunchRun run = Check(launch::runLaunch(launch, args, options));
    hlo::ComparisonSummary summary =
        Check(launch::compareWithReference(*module, launch, reference, run));
    const double seconds = SecondsSince(start);
    state.SetIterationTime(seconds);
    state.counters["seconds"] = seconds;
    state.counters["reference_seconds"] = reference_seconds;
    state.counters["vs_reference"] = seconds / reference_seconds;
    state.counters["differ"] = double(summary.elements_differing);
    state.counters["peak_rss_gib"] = PeakRssGiB();
  }
}
BENCHMARK(BM_EndToEnd)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

/// Lowering and pipeline for state.range(0) layers.
void BM_Compile(benchmark::State &state) {
  MlpSize m = size;
  m.layers = state.range(0);
  std::unique_ptr<hlo::HloModule> module = FusedModule(m);
  size_t instructions = 0;
  for (auto _ : state) {
    bir::Launch launch = Compile(*module);
    instructions = CountInstructions(launch);
  }
  state.counters["instructions"] = double(instructions);
  state.counters["ns_per_instruction"] = benchmark::Counter(
      double(instructions), benchmark::Counter::kIsIterationInvariantRate |
                                benchmark::Counter::kInvert);
}
BENCHMARK(BM_Compile)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);

/// The makespan of the launch of the module cut at `layers` layers.
double MakespanNs(int64_t layers) {
  MlpSize m = size;
  m.layers = layers;
  std::unique_ptr<hlo::HloModule> module = FusedModule(m);
  bir::Launch launch = Compile(*module);
  launch::LaunchOptions options = RunOptions();
  auto args = Check(launch::makeLaunchArguments(launch, module.get(), options));
  launch::LaunchRun run = Check(launch::runLaunch(launch, args, options));
  double makespan = 0;
  for (const bir::sim::CoreReport &core : run.Sim.Cores)
    makespan = std::max(makespan, core.MakespanNs);
  return makespan;
}

void PrintLayerTable() {
  const bir::analysis::CostModelParams cost;
  const double tokens = size.tokens, hidden = size.hidden, ffn = size.ffn,
               devices = size.devices;
  // One layer on one device: x[tokens, hidden] times the gathered
  // W_up[hidden, ffn], then h[tokens, ffn] times W_down[ffn, hidden].
  const double flops = 2 * (2 * tokens * hidden * ffn);
  // Both gathered bf16 weights read once from HBM.
  const double hbm_bytes = 2 * hidden * ffn * 2;
  // What the device receives of both all-gathers.
  const double link_bytes = 2 * (devices - 1) / devices * hidden * ffn * 2;
  const double pe_ns = flops / (lnc * cost.PeBf16FlopsPerNs);
  const double dma_ns = hbm_bytes / (lnc * cost.DmaEnginesPerCore * cost.DmaBytesPerNs);
  const double link_ns = link_bytes / (lnc * cost.RemoteBytesPerNs);
  const double roofline_ns = std::max({pe_ns, dma_ns, link_ns});
  llvm::outs() << "\nper layer (one device, " << lnc << " cores), in us:\n"
               << "layer  simulated  roofline   PE(FLOPs)  DMA(HBM)  links  "
                  "simulated/roofline\n";
  double previous = 0;
  for (int64_t layer = 1; layer <= size.layers; ++layer) {
    const double makespan = MakespanNs(layer);
    const double added = makespan - previous;
    previous = makespan;
    llvm::outs() << llvm::format("%5lld  %9.1f  %8.1f  %10.1f  %8.1f  %5.1f  %8.2f\n",
                                 (long long)layer, added / 1e3, roofline_ns / 1e3,
                                 pe_ns / 1e3, dma_ns / 1e3, link_ns / 1e3,
                                 added / roofline_ns);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<char *> rest = {argv[0]};
  bool table = true;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (std::optional<bool> ok = loom::bench::ParseMlpSizeFlag(arg, size)) {
      if (!*ok)
        return std::fprintf(stderr, "bad %s\n", argv[i]), 2;
      continue;
    }
    if (arg.consume_front("--lnc=")) {
      if (arg.getAsInteger(10, lnc) || lnc < 1 || lnc > 2)
        return std::fprintf(stderr, "bad %s (1 or 2)\n", argv[i]), 2;
      continue;
    }
    if (arg == "--no-layer-table") {
      table = false;
      continue;
    }
    rest.push_back(argv[i]);
  }
  if (size.ffn % size.devices != 0)
    return std::fprintf(stderr, "--ffn must be a multiple of --devices\n"), 2;
  hlo::RegisterAllHloPasses();
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (table)
    PrintLayerTable();
  return 0;
}
