//===- HloPrintBench.cpp - Printing and writing a module against memcpy/write -===//
//
// HloPrintBench [--instructions=N] [--seed=S] [--runs=R]
//
// Generates the dump-style module of HloModuleGenerator.h (default 1M
// instructions), parses it, runs both looped-einsum passes as hlo-opt does,
// then measures in this process (best of R, CPU time of the process, user +
// system, and wall time):
//
//   print          HloModule::ToString()
//   copy           the baseline of print: a copy of that text into a new
//                  string (the least a printer producing it can cost)
//   print tN       HloModule::Print(os, N) to a stream that drops the text:
//                  formatting alone, on N threads (docs/performance.md,
//                  "Threads")
//   write          writeOutputAtomically(F, text)
//   write(2)       the baseline of write: open, write(2) in 1 MiB pieces,
//                  close and rename the same text into place (what `cp`
//                  costs the kernel)
//   print+write tN writeOutputAtomically(F, HloModule::Print(os, N)), the
//                  streaming path of hlo-opt -o F --threads=N
//
// and prints each figure next to its baseline and the ratio. Every print
// is checked to give ToString()'s bytes. The output file lives in $TMPDIR
// and is removed at the end.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "HloModuleGenerator.h"

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"
#include "loom/support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <chrono>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>

namespace {

using loom::bench::Check;
using loom::bench::CpuSeconds;



double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// CPU and wall time of one call of `body`, best of the calls so far.
struct Timing {
  double cpu = 1e30;
  double wall = 1e30;
  void Measure(const std::function<void()> &body) {
    double c = CpuSeconds(), w = WallSeconds();
    body();
    cpu = std::min(cpu, CpuSeconds() - c);
    wall = std::min(wall, WallSeconds() - w);
  }
};

/// Best CPU time of `runs` calls of `body`.
double Best(int runs, const std::function<void()> &body) {
  Timing t;
  for (int r = 0; r < runs; ++r)
    t.Measure(body);
  return t.cpu;
}

/// Counts what it is given and drops it: formatting without writing.
class CountingStream : public llvm::raw_ostream {
public:
  CountingStream() { SetUnbuffered(); }
  uint64_t bytes = 0;

private:
  void write_impl(const char *, size_t size) override { bytes += size; }
  uint64_t current_pos() const override { return bytes; }
};

/// The baseline write: the text to a new file beside `path`, renamed over it.
void PlainWrite(const std::string &path, llvm::StringRef text) {
  std::string temp = path + ".plain";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror("open");
    std::exit(1);
  }
  constexpr size_t kPiece = 1 << 20;
  for (size_t at = 0; at < text.size();) {
    ssize_t n = ::write(fd, text.data() + at, std::min(kPiece, text.size() - at));
    if (n <= 0) {
      std::perror("write");
      std::exit(1);
    }
    at += static_cast<size_t>(n);
  }
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str())) {
    std::perror("rename");
    std::exit(1);
  }
}

void Row(const char *what, double seconds, const char *baseline_name, double baseline) {
  std::printf("%-14s %8.3f s | %-9s %8.3f s | ratio %6.2f\n", what, seconds, baseline_name,
              baseline, seconds / baseline);
}

void Row(const char *what, const Timing &t, const char *baseline_name, const Timing &baseline) {
  std::printf("%-14s CPU %7.3f s wall %7.3f s | %-9s CPU %7.3f s wall %7.3f s | ratio CPU %5.2f "
              "wall %5.2f\n",
              what, t.cpu, t.wall, baseline_name, baseline.cpu, baseline.wall, t.cpu / baseline.cpu,
              t.wall / baseline.wall);
}

/// Whether the file at `path` holds exactly `text`.
bool FileHolds(const std::string &path, llvm::StringRef text) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer && (*buffer)->getBuffer() == text;
}

} // namespace

int main(int argc, char **argv) {
  loom::hlo::bench::HloGeneratorOptions options;
  options.instructions = 1000000;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.consume_front("--instructions=")) {
      if (arg.getAsInteger(10, options.instructions) || options.instructions <= 0)
        return std::fprintf(stderr, "bad --instructions\n"), 2;
    } else if (arg.consume_front("--seed=")) {
      if (arg.getAsInteger(10, options.seed))
        return std::fprintf(stderr, "bad --seed\n"), 2;
    } else if (arg.consume_front("--runs=")) {
      if (arg.getAsInteger(10, runs) || runs <= 0)
        return std::fprintf(stderr, "bad --runs\n"), 2;
    } else {
      std::fprintf(stderr, "usage: %s [--instructions=N] [--seed=S] [--runs=R]\n", argv[0]);
      return 2;
    }
  }

  loom::hlo::RegisterAllHloPasses();
  std::unique_ptr<loom::hlo::HloModule> module;
  {
    std::string text = loom::hlo::bench::GenerateDumpStyleHloModule(options);
    module = Check(loom::hlo::ParseHloModule(text, "generated"));
    loom::hlo::HloPassPipeline pipeline("bench");
    pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_replacer")));
    pipeline.AddPass(Check(loom::hlo::CreateHloPass("neuron_looped_einsum_token_replacer")));
    (void)Check(pipeline.Run(*module));
  }
  llvm::SmallString<128> out;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, out);
  llvm::sys::path::append(out, "loom-hlo-print-bench-" + std::to_string(::getpid()) + ".hlo");
  const std::string path(out);

  std::string printed = module->ToString();
  constexpr unsigned kThreads[] = {1, 2};
  for (unsigned threads : kThreads) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->Print(os, threads);
    os.flush();
    if (text != printed) {
      std::fprintf(stderr, "Print(os, %u) differs from ToString()\n", threads);
      return 1;
    }
  }
  double print = Best(runs, [&] {
    std::string text = module->ToString();
    benchmark::DoNotOptimize(text.data());
  });
  Timing copy;
  for (int r = 0; r < runs; ++r)
    copy.Measure([&] {
      std::string text(printed);
      benchmark::DoNotOptimize(text.data());
    });
  Timing formatted[2];
  for (int r = 0; r < runs; ++r)
    for (int t = 0; t < 2; ++t)
      formatted[t].Measure([&] {
        CountingStream os;
        module->Print(os, kThreads[t]);
        benchmark::DoNotOptimize(os.bytes);
      });
  // Alternate the writes so that all find the file system in the same state.
  Timing plain, write, streamed[2];
  for (int r = 0; r < runs; ++r) {
    plain.Measure([&] { PlainWrite(path, printed); });
    write.Measure([&] { Check(loom::writeOutputAtomically(path, printed)); });
    for (int t = 0; t < 2; ++t) {
      streamed[t].Measure([&] {
        Check(loom::writeOutputAtomically(
            path, [&](llvm::raw_ostream &os) { module->Print(os, kThreads[t]); }));
      });
      if (r == 0 && !FileHolds(path, printed)) {
        std::fprintf(stderr, "the file written with %u threads differs from ToString()\n",
                     kThreads[t]);
        return 1;
      }
    }
  }
  llvm::sys::fs::remove(path);

  std::printf("%lld instructions, %.1f MB of text, best of %d\n",
              static_cast<long long>(options.instructions), printed.size() / 1e6, runs);
  Row("print", print, "copy", copy.cpu);
  Row("print t1", formatted[0], "copy", copy);
  Row("print t2", formatted[1], "copy", copy);
  Row("write", write, "write(2)", plain);
  Row("print+write t1", streamed[0], "write(2)", plain);
  Row("print+write t2", streamed[1], "write(2)", plain);
  std::fflush(stdout);
  return 0;
}
