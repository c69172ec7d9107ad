//===- HloVerifyBench.cpp - VerifyHloModule against a line count ----------===//
//
// HloVerifyBench [--file=F] [--runs=R] [--threads=1,2]
//
// Parses F (default /tmp/hg1000000.hlo, a module of bench/HloModuleGenerator.h;
// without it, the module is generated here with --instructions=N, default
// 1000000), then measures, best of R runs each:
//
//   baseline       counting the lines of F's text with memchr (in memory)
//   verify         VerifyHloModule(module, T) for each T of --threads
//   verify-again   the same after neuron_looped_einsum_replacer and
//                  neuron_looped_einsum_token_replacer have run on the module
//
// and prints CPU and wall seconds of each next to their ratio to the
// baseline's (CPU time of the whole process: with T threads it counts them
// all). Every verify must succeed: the generated modules are valid.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "HloModuleGenerator.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"
#include "loom/support/InputFile.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using loom::bench::Check;
using loom::bench::CountLines;
using loom::bench::CpuSeconds;
using Clock = std::chrono::steady_clock;

struct Time {
  double cpu = std::numeric_limits<double>::infinity();
  double wall = std::numeric_limits<double>::infinity();
};

/// Runs fn once and keeps the best CPU and wall time in `best`.
template <typename Fn> void Measure(Time &best, Fn fn) {
  double cpu = CpuSeconds();
  auto wall = Clock::now();
  fn();
  best.wall = std::min(best.wall, std::chrono::duration<double>(Clock::now() - wall).count());
  best.cpu = std::min(best.cpu, CpuSeconds() - cpu);
}

bool ParseList(llvm::StringRef arg, std::vector<unsigned> &out) {
  out.clear();
  llvm::SmallVector<llvm::StringRef, 4> parts;
  arg.split(parts, ',');
  for (llvm::StringRef p : parts) {
    unsigned n;
    if (p.getAsInteger(10, n))
      return false;
    out.push_back(n);
  }
  return !out.empty();
}

} // namespace

int main(int argc, char **argv) {
  std::string file = "/tmp/hg1000000.hlo";
  int64_t instructions = 1000000;
  int runs = 3;
  std::vector<unsigned> threads = {1, 2};
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg.consume_front("--file=")) {
      file = arg.str();
    } else if (arg.consume_front("--instructions=")) {
      if (arg.getAsInteger(10, instructions))
        return std::fprintf(stderr, "bad --instructions\n"), 2;
    } else if (arg.consume_front("--runs=")) {
      if (arg.getAsInteger(10, runs) || runs < 1)
        return std::fprintf(stderr, "bad --runs\n"), 2;
    } else if (arg.consume_front("--threads=")) {
      if (!ParseList(arg, threads))
        return std::fprintf(stderr, "bad --threads\n"), 2;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--file=F] [--instructions=N] [--runs=R] [--threads=T,...]\n",
                   argv[0]);
      return 2;
    }
  }
  loom::hlo::RegisterAllHloPasses();
  std::string text;
  if (llvm::sys::fs::exists(file)) {
    text = Check(loom::readInput(file));
  } else {
    loom::hlo::bench::HloGeneratorOptions options;
    options.instructions = instructions;
    text = loom::hlo::bench::GenerateDumpStyleHloModule(options);
    file = "<generated>";
  }
  Time baseline;
  size_t lines = 0;
  for (int r = 0; r < runs; ++r)
    Measure(baseline, [&] { lines = CountLines(text); });
  benchmark::DoNotOptimize(lines);
  std::unique_ptr<loom::hlo::HloModule> module =
      Check(loom::hlo::ParseHloModuleOwned(std::move(text), file));

  auto verify_all = [&](std::vector<Time> &times) {
    times.assign(threads.size(), Time());
    for (int r = 0; r < runs; ++r)
      for (size_t t = 0; t < threads.size(); ++t)
        Measure(times[t], [&] { Check(loom::hlo::VerifyHloModule(*module, threads[t])); });
  };
  std::vector<Time> verify, verify_again;
  verify_all(verify);
  loom::hlo::HloPassPipeline pipeline("bench");
  pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_replacer")));
  pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_token_replacer")));
  if (!Check(pipeline.Run(*module))) {
    std::fprintf(stderr, "the passes changed nothing\n");
    return 1;
  }
  verify_all(verify_again);

  std::printf("%s: %zu lines, %lld instructions; best of %d\n", file.c_str(), lines,
              static_cast<long long>(module->instruction_count()), runs);
  std::printf("%-13s %7s %9s %9s %9s %9s\n", "phase", "threads", "cpu s", "wall s", "cpu/base",
              "wall/base");
  std::printf("%-13s %7s %9.4f %9.4f %9.1f %9.1f\n", "baseline", "1", baseline.cpu,
              baseline.wall, 1.0, 1.0);
  auto row = [&](const char *phase, const std::vector<Time> &times) {
    for (size_t t = 0; t < threads.size(); ++t)
      std::printf("%-13s %7u %9.4f %9.4f %9.1f %9.1f\n", phase, threads[t], times[t].cpu,
                  times[t].wall, times[t].cpu / baseline.cpu, times[t].wall / baseline.wall);
  };
  row("verify", verify);
  row("verify-again", verify_again);
  for (size_t t = 0; t < threads.size(); ++t)
    std::printf("%-13s %7u %9.4f %9.4f %9.1f %9.1f\n", "both", threads[t],
                verify[t].cpu + verify_again[t].cpu, verify[t].wall + verify_again[t].wall,
                (verify[t].cpu + verify_again[t].cpu) / baseline.cpu,
                (verify[t].wall + verify_again[t].wall) / baseline.wall);
  return 0;
}
