//===- HloOptBench.cpp - hlo-opt end to end against `wc -l` --------------===//
//
// HloOptBench [--sizes=10000,100000,1000000] [--seed=S] [--runs=R]
//
// For each size, writes the dump-style module of HloModuleGenerator.h to a
// file in $TMPDIR and measures in the same run, as child processes (wall
// clock, best of R runs, peak RSS from wait4):
//
//   hlo-opt --passes=neuron_looped_einsum_replacer,neuron_looped_einsum_token_replacer F -o OUT
//   wc -l F                                                  (the baseline)
//
// then, in this process, the phases of that run: read, parse, verify, both
// passes, verify again, print, write, and freeing the module (CPU time, best
// of R). It prints one table: hlo-opt's time (wall and CPU) next to wc -l's
// and their ratios, microseconds per instruction, the parse phase over
// wc -l's CPU time, and hlo-opt's peak RSS over the input size. wc -l runs
// once before the first measurement so that both programs find the file in
// the page cache; the two programs then alternate.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "HloModuleGenerator.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"
#include "loom/support/OutputFile.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <limits>

extern char **environ;

namespace {

using loom::bench::Check;
using loom::bench::CpuSeconds;

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}


struct ChildRun {
  double wall_s = std::numeric_limits<double>::infinity();
  double cpu_s = std::numeric_limits<double>::infinity();
  double max_rss_mib = 0;
};

/// Runs argv with stdout sent to /dev/null; false if it failed.
bool RunChild(const std::vector<std::string> &argv, ChildRun &best) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  auto start = Clock::now();
  pid_t pid;
  int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error)
    return false;
  int status;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid)
    return false;
  best.wall_s = std::min(best.wall_s, Seconds(start));
  best.cpu_s = std::min(best.cpu_s, usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
                                        usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6);
  best.max_rss_mib = std::max(best.max_rss_mib, usage.ru_maxrss / 1024.0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}


struct Phases {
  double read = 1e30, parse = 1e30, verify = 1e30, passes = 1e30, verify_again = 1e30,
         print = 1e30, write = 1e30, teardown = 1e30;
};

void MeasurePhases(const std::string &file, const std::string &out, Phases &best) {
  double t = CpuSeconds();
  auto Seconds = [](double since) { return CpuSeconds() - since; };
  std::string text = Check(loom::readInput(file));
  best.read = std::min(best.read, Seconds(t));
  t = CpuSeconds();
  std::unique_ptr<loom::hlo::HloModule> module =
      Check(loom::hlo::ParseHloModuleOwned(std::move(text), file));
  best.parse = std::min(best.parse, Seconds(t));
  t = CpuSeconds();
  Check(loom::hlo::VerifyHloModule(*module));
  best.verify = std::min(best.verify, Seconds(t));
  loom::hlo::HloPassPipeline pipeline("bench");
  pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_replacer")));
  pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_token_replacer")));
  t = CpuSeconds();
  bool changed = Check(pipeline.Run(*module));
  best.passes = std::min(best.passes, Seconds(t));
  if (!changed) {
    llvm::errs() << "the passes changed nothing\n";
    std::exit(1);
  }
  t = CpuSeconds();
  Check(loom::hlo::VerifyHloModule(*module));
  best.verify_again = std::min(best.verify_again, Seconds(t));
  t = CpuSeconds();
  std::string printed = module->ToString();
  best.print = std::min(best.print, Seconds(t));
  t = CpuSeconds();
  Check(loom::writeOutputAtomically(out, printed));
  best.write = std::min(best.write, Seconds(t));
  t = CpuSeconds();
  module.reset();
  best.teardown = std::min(best.teardown, Seconds(t));
  benchmark::DoNotOptimize(printed.data());
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {10000, 100000, 1000000};
  uint64_t seed = 1;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg.consume_front("--sizes=")) {
      sizes.clear();
      llvm::SmallVector<llvm::StringRef, 4> parts;
      arg.split(parts, ',');
      for (llvm::StringRef p : parts) {
        int64_t n;
        if (p.getAsInteger(10, n))
          return std::fprintf(stderr, "bad --sizes\n"), 2;
        sizes.push_back(n);
      }
    } else if (arg.consume_front("--seed=")) {
      if (arg.getAsInteger(10, seed))
        return std::fprintf(stderr, "bad --seed\n"), 2;
    } else if (arg.consume_front("--runs=")) {
      if (arg.getAsInteger(10, runs) || runs < 1)
        return std::fprintf(stderr, "bad --runs\n"), 2;
    } else {
      std::fprintf(stderr, "usage: %s [--sizes=N,...] [--seed=S] [--runs=R]\n", argv[0]);
      return 2;
    }
  }
  loom::hlo::RegisterAllHloPasses();
  llvm::SmallString<256> self(argv[0]);
  llvm::sys::fs::make_absolute(self);
  llvm::sys::path::remove_filename(self);
  llvm::sys::path::append(self, "hlo-opt");
  std::string hlo_opt(self);
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);

  std::printf("%9s %7s | %9s %8s %7s %8s | %8s %8s %7s %8s | %8s %8s | %8s %6s\n", "instrs",
              "MB", "opt wall", "wc wall", "ratio", "us/inst", "opt cpu", "wc cpu", "ratio",
              "us/inst", "parse", "parse/wc", "RSS MiB", "RSS/in");
  std::vector<std::pair<int64_t, Phases>> all_phases;
  for (int64_t n : sizes) {
    loom::hlo::bench::HloGeneratorOptions options;
    options.instructions = n;
    options.seed = seed;
    llvm::SmallString<128> file = dir, out = dir;
    llvm::sys::path::append(file, "loom-hlo-bench-" + std::to_string(n) + "-" +
                                      std::to_string(seed) + ".hlo");
    llvm::sys::path::append(out, "loom-hlo-bench-out.hlo");
    {
      std::string text = loom::hlo::bench::GenerateDumpStyleHloModule(options);
      Check(loom::writeOutputAtomically(file, text));
    }
    uint64_t bytes = 0;
    llvm::sys::fs::file_size(file, bytes);
    ChildRun wc, opt;
    // Warm the page cache, then alternate the two programs.
    RunChild({"wc", "-l", std::string(file)}, wc);
    wc = ChildRun();
    for (int r = 0; r < runs; ++r) {
      if (!RunChild({"wc", "-l", std::string(file)}, wc) ||
          !RunChild({hlo_opt,
                     "--passes=neuron_looped_einsum_replacer,neuron_looped_einsum_token_replacer",
                     std::string(file), "-o", std::string(out)},
                    opt)) {
        std::fprintf(stderr, "a child process failed\n");
        return 1;
      }
    }
    Phases phases;
    for (int r = 0; r < runs; ++r)
      MeasurePhases(std::string(file), std::string(out), phases);
    all_phases.push_back({n, phases});
    double mib_in = bytes / (1024.0 * 1024.0);
    std::printf("%9lld %7.1f | %9.3f %8.4f %7.1f %8.3f | %8.3f %8.4f %7.1f %8.3f | %8.3f %8.1f | "
                "%8.1f %6.2f\n",
                static_cast<long long>(n), bytes / 1e6, opt.wall_s, wc.wall_s,
                opt.wall_s / wc.wall_s, opt.wall_s * 1e6 / n, opt.cpu_s, wc.cpu_s,
                opt.cpu_s / wc.cpu_s, opt.cpu_s * 1e6 / n, phases.parse,
                phases.parse / wc.cpu_s, opt.max_rss_mib, opt.max_rss_mib / mib_in);
    std::fflush(stdout);
  }
  std::printf("\nphases in this process (CPU s, best of %d): read parse verify passes "
              "verify print write teardown\n",
              runs);
  for (auto &[n, p] : all_phases)
    std::printf("%9lld  %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", static_cast<long long>(n),
                p.read, p.parse, p.verify, p.passes, p.verify_again, p.print, p.write,
                p.teardown);
  return 0;
}
