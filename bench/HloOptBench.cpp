//===- HloOptBench.cpp - hlo-opt end to end against `wc -l` --------------===//
//
// HloOptBench [--sizes=10000,100000,1000000] [--seed=S] [--runs=R] [--threads=N]
//
// For each size, writes the dump-style module of HloModuleGenerator.h to a
// file in $TMPDIR and measures in the same run, as child processes (wall
// clock, best of R runs, peak RSS from wait4):
//
//   hlo-opt --threads=N --passes=neuron_looped_einsum_replacer,neuron_looped_einsum_token_replacer F -o OUT
//   wc -l F                                                  (the baseline)
//
// then, in this process, the phases of that run as hlo-opt does them, on
// the same N threads (0, the default, is the machine's cores): read, parse,
// verify, both passes, verify again, print streamed into the output file,
// and freeing the module (wall and CPU time, each the best of R). It prints
// one table: hlo-opt's time (wall and CPU) next to wc -l's and their
// ratios, microseconds per instruction, the parse phase over wc -l's time,
// and hlo-opt's peak RSS over the input size. wc -l runs once before the
// first measurement so that both programs find the file in the page cache;
// the two programs then alternate.
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
#include "loom/support/OutputFile.h"
#include "loom/support/Parallel.h"

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


/// Wall and CPU seconds of one phase, each the best over the runs.
struct Phase {
  double wall = 1e30, cpu = 1e30;
};

struct Phases {
  Phase read, parse, verify, passes, verify_again, print_write, teardown;
};

class PhaseTimer {
public:
  explicit PhaseTimer(Phase &phase) : phase_(phase) {}
  ~PhaseTimer() {
    phase_.wall = std::min(phase_.wall, Seconds(wall_));
    phase_.cpu = std::min(phase_.cpu, CpuSeconds() - cpu_);
  }

private:
  Phase &phase_;
  Clock::time_point wall_ = Clock::now();
  double cpu_ = CpuSeconds();
};

void MeasurePhases(const std::string &file, const std::string &out, unsigned threads,
                   Phases &best) {
  std::unique_ptr<llvm::MemoryBuffer> text;
  {
    PhaseTimer timer(best.read);
    text = Check(loom::readInputBuffer(file));
  }
  std::unique_ptr<loom::hlo::HloModule> module;
  {
    PhaseTimer timer(best.parse);
    loom::hlo::HloParseOptions options;
    options.threads = threads;
    module = Check(loom::hlo::ParseHloModuleOwned(std::move(text), file, options));
  }
  {
    PhaseTimer timer(best.verify);
    Check(loom::hlo::VerifyHloModule(*module, threads));
  }
  loom::hlo::HloPassPipeline pipeline("bench");
  pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_replacer")));
  pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_token_replacer")));
  bool changed;
  {
    PhaseTimer timer(best.passes);
    changed = Check(pipeline.Run(*module));
  }
  if (!changed) {
    llvm::errs() << "the passes changed nothing\n";
    std::exit(1);
  }
  {
    PhaseTimer timer(best.verify_again);
    Check(loom::hlo::VerifyHloModule(*module, threads));
  }
  {
    PhaseTimer timer(best.print_write);
    Check(loom::writeOutputAtomically(
        out, [&](llvm::raw_ostream &os) { module->Print(os, threads); }));
  }
  {
    PhaseTimer timer(best.teardown);
    module.reset();
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {10000, 100000, 1000000};
  uint64_t seed = 1;
  int runs = 3;
  unsigned threads = 0;
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
    } else if (arg.consume_front("--threads=")) {
      if (arg.getAsInteger(10, threads))
        return std::fprintf(stderr, "bad --threads\n"), 2;
    } else {
      std::fprintf(stderr, "usage: %s [--sizes=N,...] [--seed=S] [--runs=R] [--threads=N]\n",
                   argv[0]);
      return 2;
    }
  }
  loom::hlo::RegisterAllHloPasses();
  threads = loom::resolveThreadCount(threads);
  std::printf("threads: %u\n", threads);
  llvm::SmallString<256> self(argv[0]);
  llvm::sys::fs::make_absolute(self);
  llvm::sys::path::remove_filename(self);
  llvm::sys::path::append(self, "hlo-opt");
  std::string hlo_opt(self);
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);

  // The parse columns: the parse phase (in this process, on the same
  // threads) over wc -l's wall and CPU time.
  std::printf("%9s %7s | %9s %8s %7s %8s | %8s %8s %7s %8s | %10s %6s %9s %6s | %8s %6s\n",
              "instrs", "MB", "opt wall", "wc wall", "ratio", "us/inst", "opt cpu", "wc cpu",
              "ratio", "us/inst", "parse wall", "ratio", "parse cpu", "ratio", "RSS MiB",
              "RSS/in");
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
          !RunChild({hlo_opt, "--threads=" + std::to_string(threads),
                     "--passes=neuron_looped_einsum_replacer,neuron_looped_einsum_token_replacer",
                     std::string(file), "-o", std::string(out)},
                    opt)) {
        std::fprintf(stderr, "a child process failed\n");
        return 1;
      }
    }
    Phases phases;
    for (int r = 0; r < runs; ++r)
      MeasurePhases(std::string(file), std::string(out), threads, phases);
    all_phases.push_back({n, phases});
    double mib_in = bytes / (1024.0 * 1024.0);
    std::printf("%9lld %7.1f | %9.3f %8.4f %7.1f %8.3f | %8.3f %8.4f %7.1f %8.3f | %10.3f %6.1f "
                "%9.3f %6.1f | %8.1f %6.2f\n",
                static_cast<long long>(n), bytes / 1e6, opt.wall_s, wc.wall_s,
                opt.wall_s / wc.wall_s, opt.wall_s * 1e6 / n, opt.cpu_s, wc.cpu_s,
                opt.cpu_s / wc.cpu_s, opt.cpu_s * 1e6 / n, phases.parse.wall,
                phases.parse.wall / wc.wall_s, phases.parse.cpu, phases.parse.cpu / wc.cpu_s,
                opt.max_rss_mib, opt.max_rss_mib / mib_in);
    std::fflush(stdout);
  }
  std::printf("\nphases in this process on %u threads (best of %d), wall / CPU seconds:\n"
              "%9s  %13s %13s %13s %13s %13s %13s %13s\n",
              threads, runs, "instrs", "read", "parse", "verify", "passes", "verify again",
              "print+write", "teardown");
  for (auto &[n, p] : all_phases) {
    std::printf("%9lld ", static_cast<long long>(n));
    for (const Phase *phase : {&p.read, &p.parse, &p.verify, &p.passes, &p.verify_again,
                               &p.print_write, &p.teardown})
      std::printf(" %6.3f/%6.3f", phase->wall, phase->cpu);
    std::printf("\n");
  }
  return 0;
}
