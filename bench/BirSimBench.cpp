//===- BirSimBench.cpp - Throughput of the BIR simulator ------------------===//
//
// Two generated LNC=2 programs, built in memory and simulated with
// loom::bir::sim::simulate, with and without race checking:
//
//   * mixed: 100,000 instructions per core in one block: four independent
//     chains (TensorTensor on DVE, Activation on ACT, TensorCopy on POOL,
//     DMACopy over the 16 queues) on small 128 x 16 fp32 tiles, each
//     instruction depending on its chain's previous one, and a CoreBarrier
//     every 1000 instructions. The figure is simulated instructions per
//     second.
//   * copy: plain DMACopy chains over full-SBUF tiles (two 128-partition x
//     96 KiB locations, 24 MiB, plus a DRAM tile), each copy moving 12 MiB.
//     The figure is simulated bytes per second, reported next to memcpy's
//     bandwidth on buffers of the same size measured in the same run
//     (counters memcpy_bytes_per_second and vs_memcpy).
//
// docs/performance.md ("BIR simulator") records the figures and the command.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Module.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <ctime>
#include <map>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace loom::bir;

namespace {

constexpr unsigned Cores = 2;

Engine dmaQueue(unsigned K) {
  return static_cast<Engine>(static_cast<unsigned>(Engine::DMA0) + K % 16);
}

[[noreturn]] void fail(llvm::Error E) {
  llvm::errs() << "BirSimBench: " << llvm::toString(std::move(E)) << "\n";
  std::exit(1);
}

/// Appends instructions to one core's module.
class ModuleBuilder {
public:
  ModuleBuilder(Program &P, unsigned Core) {
    P.push_back(std::make_unique<Module>("bench", Core, 0, TargetOptions{Cores, Target::Trn2}));
    M = P.back().get();
    BB = M->createBlock("entry");
  }

  MemoryLocation *location(const std::string &Name, MemoryKind Kind, unsigned Partitions,
                           uint64_t BytesPerPartition) {
    auto L = M->getMemoryLocations().add(std::make_unique<MemoryLocation>(
        Name, NextTensor++, Kind, DataType::FP32, Partitions, BytesPerPartition));
    if (!L)
      fail(L.takeError());
    return *L;
  }

  static AccessPattern whole(MemoryLocation *L) {
    return AccessPattern(L, 0, L->getNumPartitions(), 0,
                         {{1, L->getBytesPerPartition() / 4}}, DataType::FP32);
  }

  template <typename InstT, typename... Args> InstT *add(Args &&...A) {
    auto I = std::make_unique<InstT>(std::forward<Args>(A)...);
    InstT *Raw = I.get();
    BB->append(std::move(I));
    ++Count;
    return Raw;
  }

  std::string name(const char *Prefix) { return Prefix + std::to_string(Count); }
  unsigned count() const { return Count; }

private:
  Module *M;
  BasicBlock *BB;
  uint64_t NextTensor = 0;
  unsigned Count = 0;
};

/// Elements per partition of the mixed program's tiles: small, so that the
/// figure is the simulator's cost per instruction more than per element.
constexpr unsigned MixedTileElems = 16;

/// The mixed program: NumInsts instructions per core.
Program makeMixedProgram(unsigned NumInsts) {
  Program P;
  constexpr unsigned Tiles = 4, Chains = 4;
  for (unsigned Core = 0; Core < Cores; ++Core) {
    ModuleBuilder B(P, Core);
    MemoryLocation *Tile[Chains][Tiles];
    for (unsigned C = 0; C < Chains; ++C)
      for (unsigned T = 0; T < Tiles; ++T)
        Tile[C][T] = B.location("t" + std::to_string(C) + "_" + std::to_string(T),
                                MemoryKind::SB, 128, 4 * MixedTileElems);
    Instruction *Last[Chains] = {};
    unsigned Step[Chains] = {};
    unsigned Barriers = 0;
    while (B.count() + 1 < NumInsts) {
      if (B.count() % 1000 == 999) {
        B.add<InstCoreBarrier>("cb" + std::to_string(Barriers), Engine::SP, Barriers,
                               std::vector<unsigned>{0, 1});
        ++Barriers;
        continue;
      }
      unsigned C = B.count() % Chains;
      unsigned J = Step[C]++;
      MemoryLocation *In = Tile[C][(J + Tiles - 1) % Tiles], *Out = Tile[C][J % Tiles];
      Instruction *I = nullptr;
      switch (C) {
      case 0: {
        auto *TT = B.add<InstTensorTensor>(B.name("tt"), Engine::DVE, ArithOp::Add);
        TT->addInput(ModuleBuilder::whole(In));
        TT->addInput(ModuleBuilder::whole(Tile[C][(J + Tiles - 2) % Tiles]));
        I = TT;
        break;
      }
      case 1:
        I = B.add<InstActivation>(B.name("act"), Engine::ACT, ActivationFunc::Relu, 0.5);
        I->addInput(ModuleBuilder::whole(In));
        break;
      case 2:
        I = B.add<InstTensorCopy>(B.name("tc"), Engine::POOL);
        I->addInput(ModuleBuilder::whole(In));
        break;
      default:
        I = B.add<InstDMACopy>(B.name("dma"), dmaQueue(J), false);
        I->addInput(ModuleBuilder::whole(In));
        break;
      }
      I->addOutput(ModuleBuilder::whole(Out));
      if (Last[C])
        I->addDependency(Last[C]);
      Last[C] = I;
    }
    B.add<InstBranch>("ret", Engine::SP, BranchKind::Return);
  }
  if (llvm::Error E = verifyProgram(P))
    fail(std::move(E));
  return P;
}

constexpr uint64_t FullTileBpp = 96 * 1024; // two of them fill 192 of 224 KiB
constexpr uint64_t FullTileBytes = 128 * FullTileBpp;
constexpr unsigned CopiesPerCore = 32;

/// The copy program: a DRAM -> SBUF load, then NumCopies SBUF -> SBUF
/// copies back and forth between two full-SBUF tiles, per core.
Program makeCopyProgram(unsigned NumCopies) {
  Program P;
  for (unsigned Core = 0; Core < Cores; ++Core) {
    ModuleBuilder B(P, Core);
    MemoryLocation *D = B.location("d", MemoryKind::DRAM, 128, FullTileBpp);
    MemoryLocation *T[2] = {B.location("a", MemoryKind::SB, 128, FullTileBpp),
                            B.location("b", MemoryKind::SB, 128, FullTileBpp)};
    Instruction *Last = B.add<InstDMACopy>("load", Engine::DMA0, false);
    Last->addInput(ModuleBuilder::whole(D));
    Last->addOutput(ModuleBuilder::whole(T[0]));
    for (unsigned K = 0; K < NumCopies; ++K) {
      Instruction *I = B.add<InstDMACopy>(B.name("copy"), dmaQueue(K + 1), false);
      I->addInput(ModuleBuilder::whole(T[K % 2]));
      I->addOutput(ModuleBuilder::whole(T[(K + 1) % 2]));
      I->addDependency(Last);
      Last = I;
    }
    B.add<InstBranch>("ret", Engine::SP, BranchKind::Return);
  }
  if (llvm::Error E = verifyProgram(P))
    fail(std::move(E));
  return P;
}

/// CPU time of the calling thread: the machine that runs the benchmarks is
/// shared, and wall-clock time would count the waits for a core.
double threadSeconds() {
  timespec T;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return static_cast<double>(T.tv_sec) + 1e-9 * static_cast<double>(T.tv_nsec);
}

sim::SimResult run(const Program &P, bool RaceCheck) {
  sim::SimOptions Opts;
  Opts.RaceCheck = RaceCheck;
  Opts.FileName = "bench";
  auto R = sim::simulate(P, Opts);
  if (!R)
    fail(R.takeError());
  return std::move(*R);
}

uint64_t executions(const sim::SimResult &R) {
  uint64_t N = 0;
  for (const sim::CoreReport &C : R.Cores)
    N += C.Executions;
  return N;
}

uint64_t dmaBytes(const sim::SimResult &R) {
  uint64_t N = 0;
  for (const sim::CoreReport &C : R.Cores)
    for (unsigned E = static_cast<unsigned>(Engine::DMA0); E < sim::NumEngines; ++E)
      N += C.Engines[E].Bytes;
  return N;
}

/// memcpy's bandwidth (per CPU second) on two buffers of one full-SBUF
/// tile: the average over as many copies as the copy program makes.
double memcpyBytesPerSecond() {
  static const double BytesPerSecond = [] {
    std::vector<char> Src(FullTileBytes, 1), Dst(FullTileBytes, 0);
    std::memcpy(Dst.data(), Src.data(), FullTileBytes); // fault the pages in
    double T0 = threadSeconds();
    for (unsigned Rep = 0; Rep < Cores * CopiesPerCore; ++Rep) {
      std::memcpy(Rep % 2 ? Src.data() : Dst.data(), Rep % 2 ? Dst.data() : Src.data(),
                  FullTileBytes);
      benchmark::ClobberMemory();
    }
    double S = threadSeconds() - T0;
    return S > 0 ? Cores * CopiesPerCore * static_cast<double>(FullTileBytes) / S : 0.0;
  }();
  return BytesPerSecond;
}

void BM_SimMixed(benchmark::State &State) {
  // Programs by size, built once.
  static std::map<int64_t, Program> Programs;
  auto [It, New] = Programs.try_emplace(State.range(0));
  if (New)
    It->second = makeMixedProgram(static_cast<unsigned>(State.range(0)));
  const Program &P = It->second;
  bool RaceCheck = State.range(1);
  uint64_t Execs = 0;
  for (auto _ : State) {
    sim::SimResult R = run(P, RaceCheck);
    Execs = executions(R);
    benchmark::DoNotOptimize(R.Cores.data());
  }
  State.counters["insts_per_second"] =
      benchmark::Counter(static_cast<double>(Execs), benchmark::Counter::kIsIterationInvariantRate);
  State.counters["insts_per_run"] = static_cast<double>(Execs);
  // Elements written: one tile per instruction (the 0.1% of barriers count
  // as if they wrote one too).
  State.counters["elems_per_second"] = benchmark::Counter(
      static_cast<double>(Execs) * 128 * MixedTileElems, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SimMixed)
    ->ArgNames({"insts", "race_check"})
    ->Args({10000, 0})
    ->Args({100000, 0})
    ->Args({100000, 1})
    ->Unit(benchmark::kMillisecond);

void BM_SimCopy(benchmark::State &State) {
  static const Program P = makeCopyProgram(CopiesPerCore);
  bool RaceCheck = State.range(0);
  uint64_t Bytes = 0;
  double Seconds = 0;
  for (auto _ : State) {
    double T0 = threadSeconds();
    sim::SimResult R = run(P, RaceCheck);
    Seconds += threadSeconds() - T0;
    Bytes = dmaBytes(R);
    benchmark::DoNotOptimize(R.Cores.data());
  }
  State.SetBytesProcessed(static_cast<int64_t>(State.iterations() * Bytes));
  double Memcpy = memcpyBytesPerSecond();
  // In GiB/s like Google Benchmark's bytes_per_second.
  State.counters["memcpy_bytes_per_second"] =
      benchmark::Counter(Memcpy, benchmark::Counter::kDefaults, benchmark::Counter::OneK::kIs1024);
  // Simulated bytes per CPU second over memcpy's, as a fraction.
  State.counters["vs_memcpy"] = Seconds > 0 ? State.iterations() * Bytes / Seconds / Memcpy : 0;
}
BENCHMARK(BM_SimCopy)->ArgName("race_check")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

/// memcpy of the same buffer size through Google Benchmark's own timing.
void BM_MemcpyFullTile(benchmark::State &State) {
  std::vector<char> Src(FullTileBytes, 1), Dst(FullTileBytes, 0);
  for (auto _ : State) {
    std::memcpy(Dst.data(), Src.data(), FullTileBytes);
    benchmark::ClobberMemory();
  }
  State.SetBytesProcessed(static_cast<int64_t>(State.iterations() * FullTileBytes));
}
BENCHMARK(BM_MemcpyFullTile)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
