//===- HloOptBench.cpp - hlo-opt end to end against `wc -l` --------------===//
//
// HloOptBench [--shapes=loops,unrolled] [--sizes=N,...] [--full] [--seed=S]
//             [--runs=R] [--threads=T,...]
//
// For each module shape and size, HloModuleGenerator writes the module to a
// file in $TMPDIR:
//   loops     HloModuleGenerator.h, a chain of while loops, one computation
//             per layer;
//   unrolled  HloUnrolledGenerator.h, one ENTRY computation holding every
//             layer (what JAX dumps for an unrolled model);
// and measures in the same run, as child processes (wall clock, best of R
// runs, peak RSS from wait4), for every thread count T (0, the tools'
// default, is the machine's cores):
//
//   hlo-opt --threads=T --passes=neuron_looped_einsum_replacer,neuron_looped_einsum_token_replacer F -o OUT
//   wc -l F                                                  (the baseline)
//
// then, in this process, the phases of that run as hlo-opt does them, on
// the same T threads: read, parse, verify, each pass, verify again, print
// streamed into the output file, and freeing the module (wall and CPU time,
// each the best of R). It prints, per shape, size and thread count,
// hlo-opt's time (wall and CPU) next to wc -l's and their ratios,
// microseconds per instruction, the parse phase over wc -l's time,
// hlo-opt's peak RSS over the input size, neuron_looped_einsum_replacer's
// share of hlo-opt's wall time, and hlo-opt's wall time over its time on
// the first thread count listed that is 1 (two threads must never be
// slower than one). wc -l runs once before the first measurement so that
// every program finds the file in the page cache; the programs then
// alternate.
//
// The default is a quick run (100,000 instructions, both shapes, T = 0 and
// 1); --full adds 1,000,000, the size the targets of docs/performance.md
// are stated at.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

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
  Phase read, parse, verify, replacer, token_replacer, verify_again, print_write, teardown;
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
  // One pipeline per pass, so that each is timed on its own; a pipeline
  // is what hlo-opt runs each pass in.
  loom::hlo::HloPassPipeline replacer("bench"), token_replacer("bench");
  replacer.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_replacer")));
  token_replacer.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_token_replacer")));
  bool changed;
  {
    PhaseTimer timer(best.replacer);
    changed = Check(replacer.Run(*module));
  }
  {
    PhaseTimer timer(best.token_replacer);
    changed |= Check(token_replacer.Run(*module));
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

bool ParseList(llvm::StringRef arg, std::vector<int64_t> &out) {
  out.clear();
  llvm::SmallVector<llvm::StringRef, 4> parts;
  arg.split(parts, ',');
  for (llvm::StringRef p : parts) {
    int64_t n;
    if (p.getAsInteger(10, n) || n < 0)
      return false;
    out.push_back(n);
  }
  return !out.empty();
}

struct Row {
  std::string shape;
  int64_t instructions;
  unsigned threads;
  Phases phases;
};

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {100000};
  std::vector<int64_t> thread_counts = {0, 1};
  std::vector<std::string> shapes = {"loops", "unrolled"};
  uint64_t seed = 1;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg.consume_front("--sizes=")) {
      if (!ParseList(arg, sizes))
        return std::fprintf(stderr, "bad --sizes\n"), 2;
    } else if (arg == "--full") {
      sizes = {100000, 1000000};
    } else if (arg.consume_front("--shapes=")) {
      shapes.clear();
      llvm::SmallVector<llvm::StringRef, 2> parts;
      arg.split(parts, ',');
      for (llvm::StringRef p : parts) {
        if (p != "loops" && p != "unrolled")
          return std::fprintf(stderr, "bad --shapes (loops, unrolled)\n"), 2;
        shapes.push_back(p.str());
      }
    } else if (arg.consume_front("--seed=")) {
      if (arg.getAsInteger(10, seed))
        return std::fprintf(stderr, "bad --seed\n"), 2;
    } else if (arg.consume_front("--runs=")) {
      if (arg.getAsInteger(10, runs) || runs < 1)
        return std::fprintf(stderr, "bad --runs\n"), 2;
    } else if (arg.consume_front("--threads=")) {
      if (!ParseList(arg, thread_counts))
        return std::fprintf(stderr, "bad --threads\n"), 2;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--shapes=loops,unrolled] [--sizes=N,...] [--full] [--seed=S] "
                   "[--runs=R] [--threads=T,...]\n",
                   argv[0]);
      return 2;
    }
  }
  loom::hlo::RegisterAllHloPasses();
  std::printf("threads 0 = %u cores\n", loom::resolveThreadCount(0));
  llvm::SmallString<256> self(argv[0]);
  llvm::sys::fs::make_absolute(self);
  llvm::sys::path::remove_filename(self);
  llvm::sys::path::append(self, "hlo-opt");
  std::string hlo_opt(self);
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);

  // The parse columns: the parse phase (in this process, on the same
  // threads) over wc -l's wall and CPU time. "vs 1T": wall time over the
  // wall time at --threads=1 (when 1 is one of the counts).
  std::printf("%8s %8s %3s %6s | %8s %7s %6s %7s | %7s %7s %6s | %6s %6s | %7s %5s | %6s %5s\n",
              "shape", "instrs", "T", "MB", "opt wall", "wc wall", "ratio", "us/inst", "opt cpu",
              "wc cpu", "ratio", "parse", "ratio", "RSS MiB", "/in", "repl%", "vs 1T");
  // A child's peak RSS (wait4) includes the peak of this process at the
  // spawn (the child starts in its address space), so the modules are
  // written by HloModuleGenerator and every child runs before any phase
  // is measured in this process.
  struct Measured {
    std::string shape, file;
    int64_t n;
    uint64_t bytes;
    ChildRun wc;
    std::vector<ChildRun> opt;
  };
  std::vector<Measured> measured;
  llvm::SmallString<256> generator(hlo_opt);
  llvm::sys::path::remove_filename(generator);
  llvm::sys::path::append(generator, "HloModuleGenerator");
  llvm::SmallString<128> out = dir;
  llvm::sys::path::append(out, "loom-hlo-bench-out.hlo");
  for (const std::string &shape : shapes) {
    for (int64_t n : sizes) {
      llvm::SmallString<128> file = dir;
      llvm::sys::path::append(file, "loom-hlo-bench-" + shape + "-" + std::to_string(n) + "-" +
                                        std::to_string(seed) + ".hlo");
      ChildRun generated;
      if (!RunChild({std::string(generator), "--shape=" + shape,
                     "--instructions=" + std::to_string(n), "--seed=" + std::to_string(seed),
                     "-o", std::string(file)},
                    generated)) {
        std::fprintf(stderr, "%s failed\n", generator.c_str());
        return 1;
      }
      uint64_t bytes = 0;
      llvm::sys::fs::file_size(file, bytes);
      ChildRun wc;
      std::vector<ChildRun> opt(thread_counts.size());
      // Warm the page cache, then alternate the programs.
      RunChild({"wc", "-l", std::string(file)}, wc);
      wc = ChildRun();
      for (int r = 0; r < runs; ++r) {
        if (!RunChild({"wc", "-l", std::string(file)}, wc)) {
          std::fprintf(stderr, "wc -l failed\n");
          return 1;
        }
        for (size_t t = 0; t < thread_counts.size(); ++t)
          if (!RunChild({hlo_opt, "--threads=" + std::to_string(thread_counts[t]),
                         "--passes=neuron_looped_einsum_replacer,"
                         "neuron_looped_einsum_token_replacer",
                         std::string(file), "-o", std::string(out)},
                        opt[t])) {
            std::fprintf(stderr, "hlo-opt failed\n");
            return 1;
          }
      }
      measured.push_back({shape, std::string(file), n, bytes, wc, opt});
    }
  }
  std::vector<Row> rows;
  for (const Measured &m : measured) {
    {
      const std::string &shape = m.shape, &file = m.file;
      const int64_t n = m.n;
      const uint64_t bytes = m.bytes;
      const ChildRun &wc = m.wc;
      const std::vector<ChildRun> &opt = m.opt;
      const ChildRun *one_thread = nullptr;
      for (size_t t = 0; t < thread_counts.size(); ++t)
        if (thread_counts[t] == 1)
          one_thread = &opt[t];
      double mib_in = bytes / (1024.0 * 1024.0);
      for (size_t t = 0; t < thread_counts.size(); ++t) {
        unsigned threads = static_cast<unsigned>(thread_counts[t]);
        Phases phases;
        for (int r = 0; r < runs; ++r)
          MeasurePhases(std::string(file), std::string(out), loom::resolveThreadCount(threads),
                        phases);
        const ChildRun &o = opt[t];
        std::printf("%8s %8lld %3u %6.1f | %8.3f %7.4f %6.1f %7.3f | %7.3f %7.4f %6.1f | %6.3f "
                    "%6.1f | %7.1f %5.2f | %6.1f %5.2f\n",
                    shape.c_str(), static_cast<long long>(n), threads, bytes / 1e6, o.wall_s,
                    wc.wall_s, o.wall_s / wc.wall_s, o.wall_s * 1e6 / n, o.cpu_s, wc.cpu_s,
                    o.cpu_s / wc.cpu_s, phases.parse.wall, phases.parse.wall / wc.wall_s,
                    o.max_rss_mib, o.max_rss_mib / mib_in,
                    100 * phases.replacer.wall / o.wall_s,
                    one_thread ? o.wall_s / one_thread->wall_s : 0.0);
        std::fflush(stdout);
        rows.push_back({shape, n, threads, phases});
      }
    }
  }
  std::printf("\nphases in this process (best of %d), wall / CPU seconds:\n"
              "%8s %8s %3s  %13s %13s %13s %13s %13s %13s %13s %13s\n",
              runs, "shape", "instrs", "T", "read", "parse", "verify", "replacer", "token",
              "verify again", "print+write", "teardown");
  for (const Row &row : rows) {
    std::printf("%8s %8lld %3u ", row.shape.c_str(), static_cast<long long>(row.instructions),
                row.threads);
    const Phases &p = row.phases;
    for (const Phase *phase : {&p.read, &p.parse, &p.verify, &p.replacer, &p.token_replacer,
                               &p.verify_again, &p.print_write, &p.teardown})
      std::printf(" %6.3f/%6.3f", phase->wall, phase->cpu);
    std::printf("\n");
  }
  return 0;
}
