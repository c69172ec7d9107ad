//===- BirJsonBench.cpp - Load, split and save a large BIR program ------===//
//-===//
//
// BirJsonBench [--instructions=N] [--seed=S] [--file=F] [benchmark flags]
//
// Generates the LNC=2 program of BirProgramGenerator.h (default 100000
// instructions, seed 1) and saves it to a file in $TMPDIR, or with --file
// reads the program F instead (e.g. the same program in compact form), then
// measures, in the same run:
//
// - BM_BirOpt: `bir-opt --passes=lnc_splitter F -o OUT`, the bir-opt next to
//   this binary, as a child process: load, verify, split, verify, save,
//   write, exit;
// - BM_Python: `python3 -c 'json.load ...; json.dump(..., separators=(",",
//   ":"))'` of the same file to OUT, the baseline;
// - the phases in this process: BM_Load (parseProgram, which verifies),
//   BM_Split (lnc_splitter), BM_Save (formatProgram of the split program).
//
// The two child processes are timed by wall clock (manual time) and report
// their CPU time and peak RSS (getrusage of the child) as counters. At the
// end it prints each figure next to its baseline and the ratios the
// performance target is stated in: bir-opt time over Python time, and
// bir-opt peak RSS over the input size.
//
//===----------------------------------------------------------------------===//
#include "BirProgramGenerator.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/LncSplitter.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

extern char **environ;

using namespace loom::bir;

namespace {

std::string InputFile;
std::string OutputFile;
std::string BirOpt;
std::string Text;
uint64_t InputBytes = 0;

/// The best run of a child process.
struct ChildFigures {
  double WallS = std::numeric_limits<double>::infinity();
  double CpuS = std::numeric_limits<double>::infinity();
  double MaxRssMiB = 0;
};
ChildFigures BirOptBest, PythonBest;

/// Runs Argv to completion; false if it could not run or failed.
bool runChild(const std::vector<std::string> &Argv, double &WallS, double &CpuS,
              double &MaxRssMiB) {
  std::vector<char *> Args;
  for (const std::string &A : Argv)
    Args.push_back(const_cast<char *>(A.c_str()));
  Args.push_back(nullptr);
  auto Start = std::chrono::steady_clock::now();
  pid_t Pid;
  if (posix_spawnp(&Pid, Args[0], nullptr, nullptr, Args.data(), environ))
    return false;
  int Status;
  struct rusage Usage;
  if (wait4(Pid, &Status, 0, &Usage) != Pid)
    return false;
  WallS =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  CpuS = Usage.ru_utime.tv_sec + Usage.ru_utime.tv_usec * 1e-6 +
         Usage.ru_stime.tv_sec + Usage.ru_stime.tv_usec * 1e-6;
  MaxRssMiB = Usage.ru_maxrss / 1024.0; // ru_maxrss is in KiB on Linux.
  return WIFEXITED(Status) && WEXITSTATUS(Status) == 0;
}

void runChildBenchmark(benchmark::State &State,
                       const std::vector<std::string> &Argv,
                       ChildFigures &Best) {
  double Cpu = 0, Rss = 0;
  for (auto _ : State) {
    double WallS, CpuS, RssMiB;
    if (!runChild(Argv, WallS, CpuS, RssMiB)) {
      State.SkipWithError(("failed: " + Argv[0]).c_str());
      return;
    }
    State.SetIterationTime(WallS);
    Best.WallS = std::min(Best.WallS, WallS);
    Best.CpuS = std::min(Best.CpuS, CpuS);
    Best.MaxRssMiB = std::max(Best.MaxRssMiB, RssMiB);
    Cpu = CpuS;
    Rss = RssMiB;
  }
  State.counters["cpu_s"] = Cpu;
  State.counters["maxrss_MiB"] = Rss;
  State.SetBytesProcessed(State.iterations() * InputBytes);
}

void BM_BirOpt(benchmark::State &State) {
  runChildBenchmark(
      State, {BirOpt, "--passes=lnc_splitter", InputFile, "-o", OutputFile},
      BirOptBest);
}

void BM_Python(benchmark::State &State) {
  runChildBenchmark(State,
                    {"python3", "-c",
                     "import json, sys\n"
                     "with open(sys.argv[1]) as f: d = json.load(f)\n"
                     "with open(sys.argv[2], 'w') as f: json.dump(d, f, "
                     "separators=(',', ':'))\n",
                     InputFile, OutputFile},
                    PythonBest);
}

Program load() {
  llvm::Expected<Program> P = parseProgram(Text, InputFile);
  if (!P) {
    llvm::errs() << llvm::toString(P.takeError()) << "\n";
    std::exit(1);
  }
  return std::move(*P);
}

void BM_Load(benchmark::State &State) {
  for (auto _ : State) {
    Program P = load();
    benchmark::DoNotOptimize(&P);
    State.PauseTiming(); // Freeing the program is not loading.
    P.clear();
    State.ResumeTiming();
  }
  State.SetBytesProcessed(State.iterations() * InputBytes);
}

void BM_Split(benchmark::State &State) {
  for (auto _ : State) {
    State.PauseTiming();
    Program P = load();
    State.ResumeTiming();
    if (!llvm::cantFail(LncSplitter().run(P)))
      State.SkipWithError("lnc_splitter changed nothing");
    State.PauseTiming();
    P.clear();
    State.ResumeTiming();
  }
  State.SetBytesProcessed(State.iterations() * InputBytes);
}

void BM_Save(benchmark::State &State) {
  Program P = load();
  llvm::cantFail(LncSplitter().run(P));
  size_t Bytes = 0;
  for (auto _ : State) {
    std::string S = formatProgram(P);
    Bytes = S.size();
    benchmark::DoNotOptimize(S.data());
  }
  State.SetBytesProcessed(State.iterations() * Bytes);
}

} // namespace

int main(int argc, char **argv) {
  bench::BirGeneratorOptions Opts;
  std::vector<char *> Rest = {argv[0]};
  for (int I = 1; I < argc; ++I) {
    llvm::StringRef Arg = argv[I];
    if (Arg.consume_front("--instructions=")) {
      if (Arg.getAsInteger(10, Opts.Instructions))
        return std::fprintf(stderr, "bad --instructions\n"), 2;
    } else if (Arg.consume_front("--seed=")) {
      if (Arg.getAsInteger(10, Opts.Seed))
        return std::fprintf(stderr, "bad --seed\n"), 2;
    } else if (Arg.consume_front("--file=")) {
      InputFile = Arg.str();
    } else {
      Rest.push_back(argv[I]);
    }
  }
  int RestArgc = static_cast<int>(Rest.size());
  benchmark::Initialize(&RestArgc, Rest.data());

  llvm::SmallString<128> Dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Dir);
  bool Generate = InputFile.empty();
  if (Generate) {
    llvm::SmallString<128> F = Dir;
    llvm::sys::path::append(F, "loom-bir-bench-" +
                                   std::to_string(Opts.Instructions) + "-" +
                                   std::to_string(Opts.Seed) + ".json");
    InputFile = std::string(F);
  }
  llvm::SmallString<128> Out = Dir;
  llvm::sys::path::append(Out, "loom-bir-bench-out.json");
  OutputFile = std::string(Out);
  llvm::SmallString<256> Self(argv[0]);
  llvm::sys::fs::make_absolute(Self);
  llvm::sys::path::remove_filename(Self);
  llvm::sys::path::append(Self, "bir-opt");
  BirOpt = std::string(Self);

  if (Generate) {
    if (llvm::Error E = bench::writeGeneratedProgram(Opts, InputFile)) {
      llvm::errs() << llvm::toString(std::move(E)) << "\n";
      return 1;
    }
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf =
      llvm::MemoryBuffer::getFile(InputFile);
  if (!Buf) {
    llvm::errs() << InputFile << ": " << Buf.getError().message() << "\n";
    return 1;
  }
  Text = (*Buf)->getBuffer().str();
  InputBytes = Text.size();
  if (Generate)
    std::printf("input: %s, %llu instructions, seed %llu, %.1f MB\n",
                InputFile.c_str(),
                static_cast<unsigned long long>(Opts.Instructions),
                static_cast<unsigned long long>(Opts.Seed), InputBytes / 1e6);
  else
    std::printf("input: %s, %.1f MB\n", InputFile.c_str(), InputBytes / 1e6);

  benchmark::RegisterBenchmark("BM_BirOpt", BM_BirOpt)
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(3);
  benchmark::RegisterBenchmark("BM_Python", BM_Python)
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(3);
  benchmark::RegisterBenchmark("BM_Load", BM_Load)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(3);
  benchmark::RegisterBenchmark("BM_Split", BM_Split)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(3);
  benchmark::RegisterBenchmark("BM_Save", BM_Save)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(3);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  if (BirOptBest.WallS == std::numeric_limits<double>::infinity() ||
      PythonBest.WallS == std::numeric_limits<double>::infinity())
    return 0; // Filtered out.
  double InputMiB = InputBytes / (1024.0 * 1024.0);
  std::printf("\nbest of the runs        bir-opt    python3    ratio\n");
  std::printf("wall time (s)        %9.2f  %9.2f  %7.2f   (target <= 2)\n",
              BirOptBest.WallS, PythonBest.WallS,
              BirOptBest.WallS / PythonBest.WallS);
  std::printf("cpu time (s)         %9.2f  %9.2f  %7.2f\n", BirOptBest.CpuS,
              PythonBest.CpuS, BirOptBest.CpuS / PythonBest.CpuS);
  std::printf("peak RSS (MiB)       %9.1f  %9.1f\n", BirOptBest.MaxRssMiB,
              PythonBest.MaxRssMiB);
  std::printf("peak RSS / input     %9.2f  %9.2f            (target <= 10)\n",
              BirOptBest.MaxRssMiB / InputMiB, PythonBest.MaxRssMiB / InputMiB);
  return 0;
}
