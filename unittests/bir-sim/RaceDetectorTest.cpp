//===- RaceDetectorTest.cpp - The happens-before engine -------------------===//
//
// Vector clock laws, the decomposition of access patterns into byte runs
// (against a byte-by-byte enumeration), and the race detector on hand-made
// access sequences: known races are found with the right instructions and
// bytes, known safe orderings report nothing.
//
//===----------------------------------------------------------------------===//
#include "../../lib/bir/sim/RaceDetector.h"

#include "loom/bir/ir/Instructions.h"

#include "gtest/gtest.h"

#include <memory>
#include <random>
#include <set>

using namespace loom::bir;
using namespace loom::bir::sim;

namespace {

constexpr unsigned TPC = VectorClock::ThreadsPerCore;

Engine dma(unsigned K) { return static_cast<Engine>(unsigned(Engine::DMA0) + K); }

//===----------------------------------------------------------------------===//
// Vector clocks
//===----------------------------------------------------------------------===//

VectorClock randomClock(std::mt19937_64 &Rng, unsigned N) {
  VectorClock C(N);
  for (unsigned T = 0; T < N; ++T)
    C.set(T, Rng() % 4);
  return C;
}

VectorClock joined(VectorClock A, const VectorClock &B) {
  A.join(B);
  return A;
}

TEST(VectorClock, StartsAtZeroAndTicks) {
  VectorClock C(2 * TPC);
  EXPECT_EQ(C.size(), 2 * TPC);
  for (unsigned T = 0; T < C.size(); ++T)
    EXPECT_EQ(C.get(T), 0u);
  unsigned T = VectorClock::threadOf(1, dma(3));
  EXPECT_EQ(T, TPC + 5 + 3);
  C.tick(T);
  C.tick(T);
  EXPECT_EQ(C.get(T), 2u);
  C.set(0, 7);
  EXPECT_EQ(C.get(0), 7u);
  EXPECT_EQ(VectorClock::threadOf(0, Engine::DMALast), TPC - 1);
}

TEST(VectorClock, JoinIsALeastUpperBound) {
  std::mt19937_64 Rng(1);
  const unsigned N = 6;
  for (int Round = 0; Round < 500; ++Round) {
    VectorClock A = randomClock(Rng, N), B = randomClock(Rng, N),
                C = randomClock(Rng, N);
    // Commutative, associative, idempotent.
    EXPECT_EQ(joined(A, B), joined(B, A));
    EXPECT_EQ(joined(joined(A, B), C), joined(A, joined(B, C)));
    EXPECT_EQ(joined(A, A), A);
    // An upper bound, and the least one.
    VectorClock J = joined(A, B);
    EXPECT_TRUE(A.happensBefore(J));
    EXPECT_TRUE(B.happensBefore(J));
    if (A.happensBefore(C) && B.happensBefore(C)) {
      EXPECT_TRUE(J.happensBefore(C));
    }
    for (unsigned T = 0; T < N; ++T)
      EXPECT_EQ(J.get(T), std::max(A.get(T), B.get(T)));
  }
}

TEST(VectorClock, HappensBeforeIsAPartialOrder) {
  std::mt19937_64 Rng(2);
  const unsigned N = 4;
  unsigned Unordered = 0;
  for (int Round = 0; Round < 2000; ++Round) {
    VectorClock A = randomClock(Rng, N), B = randomClock(Rng, N),
                C = randomClock(Rng, N);
    EXPECT_TRUE(A.happensBefore(A));
    if (A.happensBefore(B) && B.happensBefore(A)) {
      EXPECT_EQ(A, B);
    }
    if (A.happensBefore(B) && B.happensBefore(C)) {
      EXPECT_TRUE(A.happensBefore(C));
    }
    // A tick makes a clock strictly later.
    VectorClock D = A;
    D.tick(Round % N);
    EXPECT_TRUE(A.happensBefore(D));
    EXPECT_FALSE(D.happensBefore(A));
    if (!A.happensBefore(B) && !B.happensBefore(A))
      ++Unordered;
  }
  // Concurrency exists: the order is partial, not total.
  EXPECT_GT(Unordered, 0u);
}

//===----------------------------------------------------------------------===//
// Decomposition into byte runs
//===----------------------------------------------------------------------===//

AccessPattern pattern(uint64_t Offset, std::vector<PatternDim> Dims,
                      DataType T = DataType::FP32, unsigned P0 = 0,
                      unsigned NP = 1) {
  return AccessPattern(nullptr, P0, NP, Offset, std::move(Dims), T);
}

using Runs = std::vector<RaceDetector::Run>;

Runs runsOf(const AccessPattern &AP, bool *Exact = nullptr,
            uint64_t MaxRuns = RaceDetector::MaxRunsPerAccess) {
  Runs R;
  bool E = decomposeAccessPattern(AP, R, MaxRuns);
  if (Exact)
    *Exact = E;
  return R;
}

std::string str(const Runs &R) {
  std::string S;
  for (const auto &X : R)
    S += "[" + std::to_string(X.Begin) + "," + std::to_string(X.End) + ")";
  return S;
}

TEST(ByteRuns, ContiguousPatternsAreOneRun) {
  EXPECT_EQ(str(runsOf(pattern(0, {{1, 256}}))), "[0,1024)");
  EXPECT_EQ(str(runsOf(pattern(64, {{1, 4}}, DataType::BF16))), "[64,72)");
  // An empty pattern is one element.
  EXPECT_EQ(str(runsOf(pattern(12, {}))), "[12,16)");
  // Rows of 16 elements back to back: the outer dimension merges too.
  EXPECT_EQ(str(runsOf(pattern(0, {{16, 4}, {1, 16}}))), "[0,256)");
  // Overlapping rows (step below the row length) are still one run.
  EXPECT_EQ(str(runsOf(pattern(0, {{8, 3}, {1, 16}}))), "[0,128)");
}

TEST(ByteRuns, StridedPatternsEnumerateOuterRuns) {
  // 4 rows of 16 fp32 every 64 elements.
  EXPECT_EQ(str(runsOf(pattern(0, {{64, 4}, {1, 16}}))),
            "[0,64)[256,320)[512,576)[768,832)");
  // Even elements.
  EXPECT_EQ(str(runsOf(pattern(0, {{2, 4}}))), "[0,4)[8,12)[16,20)[24,28)");
  // Odd elements: disjoint from the even ones.
  EXPECT_EQ(str(runsOf(pattern(4, {{2, 4}}))), "[4,8)[12,16)[20,24)[28,32)");
}

TEST(ByteRuns, ZeroAndNegativeStepsAndDuplicates) {
  // A zero step repeats the same element: one run.
  EXPECT_EQ(str(runsOf(pattern(8, {{0, 1000}}))), "[8,12)");
  EXPECT_EQ(str(runsOf(pattern(0, {{0, 5}, {1, 4}}))), "[0,16)");
  // A negative step walks down from the offset.
  EXPECT_EQ(str(runsOf(pattern(12, {{-1, 4}}))), "[0,16)");
  EXPECT_EQ(str(runsOf(pattern(24, {{-2, 4}}))), "[0,4)[8,12)[16,20)[24,28)");
  // Two dimensions of the same step fold: 2*{0..2} + 2*{0..2} = 2*{0..4}.
  Runs R = runsOf(pattern(0, {{2, 3}, {2, 3}}));
  EXPECT_EQ(R.size(), 5u);
  EXPECT_EQ(str(R), "[0,4)[8,12)[16,20)[24,28)[32,36)");
  // Outer order need not be sorted: step 1 outer of step 4 inner.
  EXPECT_EQ(str(runsOf(pattern(0, {{1, 2}, {4, 2}}, DataType::INT8))),
            "[0,2)[4,6)");
}

TEST(ByteRuns, HugeCountsStayCheap) {
  // 2^32 contiguous bytes are one run, not 2^32 of anything.
  bool Exact = false;
  Runs R = runsOf(pattern(0, {{1, uint64_t(1) << 32}}, DataType::INT8), &Exact);
  EXPECT_TRUE(Exact);
  EXPECT_EQ(str(R), "[0,4294967296)");
  // 2^32 repetitions of one element.
  EXPECT_EQ(str(runsOf(pattern(4, {{0, uint64_t(1) << 32}}))), "[4,8)");
  // 2^16 rows of 2^16 bytes that abut: one run.
  EXPECT_EQ(str(runsOf(pattern(0, {{65536, 65536}, {1, 65536}},
                               DataType::UINT8))),
            "[0,4294967296)");
}

TEST(ByteRuns, TooManyRunsFallBackToTheBoundingRange) {
  bool Exact = true;
  Runs R = runsOf(pattern(0, {{2, 1000}}), &Exact, /*MaxRuns=*/999);
  EXPECT_FALSE(Exact);
  EXPECT_EQ(str(R), "[0,7996)");
  R = runsOf(pattern(0, {{2, 1000}}), &Exact, /*MaxRuns=*/1000);
  EXPECT_TRUE(Exact);
  EXPECT_EQ(R.size(), 1000u);
}

/// Byte-by-byte truth for small patterns with random steps, signs, zero steps
/// and offsets: the runs are sorted, disjoint, not adjacent and cover exactly
/// the bytes the elements touch.
TEST(ByteRuns, MatchesElementEnumeration) {
  std::mt19937_64 Rng(3);
  const DataType Types[] = {DataType::INT8, DataType::BF16, DataType::FP32};
  for (int Round = 0; Round < 3000; ++Round) {
    DataType T = Types[Rng() % 3];
    int64_t Size = getDataTypeSize(T);
    unsigned NumDims = Rng() % 4;
    std::vector<PatternDim> Dims;
    int64_t Low = 0;
    for (unsigned D = 0; D < NumDims; ++D) {
      int64_t Step = int64_t(Rng() % 13) - 6;
      uint64_t Count = 1 + Rng() % 5;
      Dims.push_back({Step, Count});
      if (Step < 0)
        Low += Step * int64_t(Count - 1);
    }
    uint64_t Offset = uint64_t(-Low + int64_t(Rng() % 4)) * Size;
    AccessPattern AP = pattern(Offset, Dims, T);
    std::set<uint64_t> Bytes;
    std::vector<uint64_t> Idx(NumDims, 0);
    while (true) {
      int64_t E = 0;
      for (unsigned D = 0; D < NumDims; ++D)
        E += int64_t(Idx[D]) * Dims[D].Step;
      for (int64_t B = 0; B < Size; ++B)
        Bytes.insert(Offset + E * Size + B);
      unsigned D = 0;
      for (; D < NumDims; ++D) {
        if (++Idx[D] < Dims[D].Count)
          break;
        Idx[D] = 0;
      }
      if (D == NumDims)
        break;
    }
    bool Exact = false;
    Runs R = runsOf(AP, &Exact);
    ASSERT_TRUE(Exact);
    std::set<uint64_t> Covered;
    for (size_t I = 0; I < R.size(); ++I) {
      ASSERT_LT(R[I].Begin, R[I].End);
      if (I) {
        ASSERT_LT(R[I - 1].End, R[I].Begin) << "runs overlap or abut";
      }
      for (uint64_t B = R[I].Begin; B < R[I].End; ++B)
        Covered.insert(B);
    }
    ASSERT_EQ(Covered, Bytes) << "round " << Round << ": " << str(R);
  }
}

//===----------------------------------------------------------------------===//
// The detector
//===----------------------------------------------------------------------===//

/// Per-thread clocks as the simulator keeps them: an execution ticks its own
/// thread; an edge joins the source's clock into the destination's.
struct Clocks {
  explicit Clocks(unsigned Cores)
      : N(Cores * TPC), VC(N, VectorClock(Cores * TPC)) {}
  const VectorClock &exec(unsigned T) {
    VC[T].tick(T);
    return VC[T];
  }
  void edge(unsigned From, unsigned To) { VC[To].join(VC[From]); }
  unsigned N;
  std::vector<VectorClock> VC;
};

/// Named instructions for the sites; only names, cores and engines matter.
struct Insts {
  Instruction *get(const std::string &Name, Engine E = Engine::DVE) {
    Owned.push_back(std::make_unique<InstTensorCopy>(Name, E));
    return Owned.back().get();
  }
  std::vector<std::unique_ptr<Instruction>> Owned;
};

struct Harness {
  explicit Harness(unsigned Cores = 2, unsigned MaxReports = 100)
      : C(Cores), D(Cores * TPC, MaxReports) {}

  /// An execution of Inst on (Core, Eng) accessing AP of storage Id.
  void run(const Instruction *Inst, unsigned Core, Engine Eng, unsigned Id,
           const AccessPattern &AP, bool Write, uint64_t Execution = 1) {
    unsigned T = VectorClock::threadOf(Core, Eng);
    const VectorClock &V = C.exec(T);
    D.access(Id, "loc" + std::to_string(Id), AP, Write,
             AccessSite{Core, Eng, Inst, Execution}, T, V);
  }
  /// An instruction that reads and writes AP (an accumulating copy).
  void accumulate(const Instruction *Inst, unsigned Core, Engine Eng,
                  unsigned Id, const AccessPattern &AP) {
    unsigned T = VectorClock::threadOf(Core, Eng);
    const VectorClock &V = C.exec(T);
    AccessSite S{Core, Eng, Inst, 1};
    D.access(Id, "acc", AP, false, S, T, V);
    D.access(Id, "acc", AP, true, S, T, V);
  }
  void edge(unsigned CoreA, Engine A, unsigned CoreB, Engine B) {
    C.edge(VectorClock::threadOf(CoreA, A), VectorClock::threadOf(CoreB, B));
  }
  Clocks C;
  RaceDetector D;
  Insts I;
};

AccessPattern tile(unsigned Elements, unsigned P0 = 0, unsigned NP = 128,
                   uint64_t Offset = 0) {
  return pattern(Offset, {{1, Elements}}, DataType::FP32, P0, NP);
}

TEST(RaceDetector, EmptySelectionsHaveNoBytes) {
  // A zero count selects nothing (the verifier rejects it; the detector
  // must still not invent bytes).
  bool Exact = false;
  EXPECT_EQ(str(runsOf(pattern(0, {{1, 4}, {1, 0}}), &Exact)), "");
  EXPECT_TRUE(Exact);
  Harness H;
  Instruction *A = H.I.get("a"), *B = H.I.get("b");
  H.run(A, 0, Engine::DVE, 0, pattern(0, {{1, 0}}), true);
  H.run(B, 1, Engine::DVE, 0, tile(4), true);
  H.run(B, 1, Engine::DVE, 0, tile(4, 0, 0), true);
  EXPECT_FALSE(H.D.hasRaces());
  EXPECT_EQ(H.D.stats().Segments, 1u);
}

TEST(RaceDetector, WriteWriteRaceIsReportedWithBothSites) {
  Harness H;
  Instruction *St0 = H.I.get("st_out", dma(3));
  Instruction *St1 = H.I.get("st_out", dma(3));
  H.run(St0, 0, dma(3), 7, tile(128, 0, 1), true);
  H.run(St1, 1, dma(3), 7, tile(128, 0, 1), true, 4);
  ASSERT_EQ(H.D.numRaces(), 1u);
  ASSERT_EQ(H.D.races().size(), 1u);
  const RaceReport &R = H.D.races()[0];
  EXPECT_EQ(R.First.Inst, St0);
  EXPECT_EQ(R.Second.Inst, St1);
  EXPECT_EQ(R.First.Core, 0u);
  EXPECT_EQ(R.Second.Core, 1u);
  EXPECT_TRUE(R.FirstWrite);
  EXPECT_TRUE(R.SecondWrite);
  EXPECT_EQ(R.Storage, "loc7");
  EXPECT_EQ(R.Partition, 0u);
  EXPECT_EQ(R.BeginByte, 0u);
  EXPECT_EQ(R.EndByte, 512u);
  EXPECT_EQ(R.describe(),
            "write-write race on 'loc7' partition 0 bytes [0, 512): 'st_out' "
            "(core 0, DMA3, execution 1, write) and 'st_out' (core 1, DMA3, "
            "execution 4, write) are not ordered");
}

TEST(RaceDetector, ReadWriteAndWriteReadRaces) {
  Harness H;
  Instruction *Ld = H.I.get("load", Engine::DMA0);
  Instruction *Mm = H.I.get("matmul", Engine::PE);
  // Core 0 writes, core 0's PE reads without a dependency: write-read.
  H.run(Ld, 0, Engine::DMA0, 1, tile(64), true);
  H.run(Mm, 0, Engine::PE, 1, tile(64), false);
  // Core 0's ACT overwrites what the PE read, unordered with both.
  Instruction *Act = H.I.get("act", Engine::ACT);
  H.run(Act, 0, Engine::ACT, 1, tile(32, 0, 128, 128), true);
  ASSERT_EQ(H.D.numRaces(), 3u);
  auto R = H.D.races();
  EXPECT_EQ(R[0].describe().substr(0, 16), "write-read race ");
  EXPECT_EQ(R[0].First.Inst, Ld);
  EXPECT_EQ(R[0].Second.Inst, Mm);
  EXPECT_EQ(R[0].NumPartitions, 128u);
  // ACT's write meets the load's write and the matmul's read on [128, 256).
  EXPECT_EQ(R[1].First.Inst, Ld);
  EXPECT_TRUE(R[1].FirstWrite);
  EXPECT_EQ(R[2].First.Inst, Mm);
  EXPECT_FALSE(R[2].FirstWrite);
  EXPECT_TRUE(R[2].SecondWrite);
  EXPECT_EQ(R[2].BeginByte, 128u);
  EXPECT_EQ(R[2].EndByte, 256u);
  EXPECT_NE(R[2].describe().find("read-write race on 'loc1' partitions [0, "
                                 "128) bytes [128, 256): 'matmul' (core 0, "
                                 "PE, execution 1, read) and 'act' (core 0, "
                                 "ACT, execution 1, write)"),
            std::string::npos)
      << R[2].describe();
}

TEST(RaceDetector, DependenciesOrderAccesses) {
  Harness H;
  Instruction *Ld = H.I.get("load", Engine::DMA0);
  Instruction *Mm = H.I.get("matmul", Engine::PE);
  Instruction *St = H.I.get("store", dma(1));
  H.run(Ld, 0, Engine::DMA0, 1, tile(64), true);
  H.edge(0, Engine::DMA0, 0, Engine::PE); // matmul depends on load
  H.run(Mm, 0, Engine::PE, 1, tile(64), false);
  H.run(Mm, 0, Engine::PE, 2, tile(64), true);
  H.edge(0, Engine::PE, 0, dma(1)); // store depends on matmul
  H.run(St, 0, dma(1), 2, tile(64), false);
  H.edge(0, dma(1), 0, Engine::DMA0); // the next load waits for store
  H.run(Ld, 0, Engine::DMA0, 1, tile(64), true, 2);
  ASSERT_EQ(H.D.numRaces(), 0u) << H.D.races()[0].describe();
}

TEST(RaceDetector, OneEngineIsInOrder) {
  Harness H;
  Instruction *A = H.I.get("a"), *B = H.I.get("b");
  for (int K = 1; K <= 50; ++K) {
    H.run(A, 1, Engine::DVE, 0, tile(100), true, K);
    H.run(B, 1, Engine::DVE, 0, tile(100), false, K);
  }
  EXPECT_FALSE(H.D.hasRaces());
}

TEST(RaceDetector, TransitiveOrderThroughAReader) {
  // T1 reads; T2 reads after T1 (edge); T3 writes after T2 only. T1's read
  // happens before T3's write through T2: no race, although T3 never synced
  // with T1 directly.
  Harness H;
  Instruction *R1 = H.I.get("r1"), *R2 = H.I.get("r2"), *W = H.I.get("w");
  H.run(R1, 0, Engine::ACT, 0, tile(10), false);
  H.edge(0, Engine::ACT, 0, Engine::DVE);
  H.run(R2, 0, Engine::DVE, 0, tile(10), false);
  H.edge(0, Engine::DVE, 0, Engine::POOL);
  H.run(W, 0, Engine::POOL, 0, tile(10), true);
  EXPECT_FALSE(H.D.hasRaces());
}

TEST(RaceDetector, ConcurrentReadsAreFineButEachMustBeOrderedBeforeAWrite) {
  Harness H;
  Instruction *R0 = H.I.get("r0"), *R1 = H.I.get("r1"), *W = H.I.get("w");
  H.run(R0, 0, Engine::ACT, 0, tile(10), false);
  H.run(R1, 1, Engine::ACT, 0, tile(10), false);
  EXPECT_FALSE(H.D.hasRaces());
  // The writer synced with core 0's reader only.
  H.edge(0, Engine::ACT, 0, Engine::POOL);
  H.run(W, 0, Engine::POOL, 0, tile(10), true);
  ASSERT_EQ(H.D.numRaces(), 1u);
  EXPECT_EQ(H.D.races()[0].First.Inst, R1);
  EXPECT_EQ(H.D.races()[0].First.Core, 1u);

  // The writer synced with the later reader only: the earlier one races.
  Harness F;
  F.run(R0, 0, Engine::ACT, 0, tile(10), false);
  F.run(R1, 1, Engine::ACT, 0, tile(10), false);
  EXPECT_EQ(F.D.stats().Reads, 2u);
  F.edge(1, Engine::ACT, 0, Engine::POOL);
  F.run(W, 0, Engine::POOL, 0, tile(10), true);
  ASSERT_EQ(F.D.numRaces(), 1u);
  EXPECT_EQ(F.D.races()[0].First.Inst, R0);
  EXPECT_EQ(F.D.stats().Reads, 0u);

  // Ordered after both readers: safe.
  Harness G;
  G.run(R0, 0, Engine::ACT, 0, tile(10), false);
  G.run(R1, 1, Engine::ACT, 0, tile(10), false);
  G.edge(0, Engine::ACT, 0, Engine::POOL);
  G.edge(1, Engine::ACT, 0, Engine::POOL);
  G.run(W, 0, Engine::POOL, 0, tile(10), true);
  EXPECT_FALSE(G.D.hasRaces());
}

TEST(RaceDetector, OrderedReadsKeepOneReadEpoch) {
  // A chain of readers on alternating engines and cores, each ordered after
  // the previous: the cell keeps only the latest read.
  Harness H;
  Instruction *R = H.I.get("r");
  const Engine Engs[] = {Engine::ACT, Engine::DVE, Engine::POOL, dma(7)};
  unsigned PrevCore = 0;
  Engine Prev = Engine::ACT;
  for (unsigned K = 0; K < 200; ++K) {
    unsigned Core = K % 2;
    Engine E = Engs[K % 4];
    H.edge(PrevCore, Prev, Core, E);
    H.run(R, Core, E, 0, tile(32), false, K + 1);
    PrevCore = Core;
    Prev = E;
  }
  EXPECT_EQ(H.D.stats().Reads, 1u);
  EXPECT_EQ(H.D.stats().Cells, 1u);
  EXPECT_FALSE(H.D.hasRaces());
}

TEST(RaceDetector, UnorderedAccumulationsRace) {
  Harness H;
  Instruction *A0 = H.I.get("acc0", Engine::DMA0);
  Instruction *A1 = H.I.get("acc1", Engine::DMA0);
  H.accumulate(A0, 0, Engine::DMA0, 3, tile(16, 0, 1));
  H.accumulate(A1, 1, Engine::DMA0, 3, tile(16, 0, 1));
  // acc1's read meets acc0's write, and so does acc1's write (and acc0's
  // read): one distinct pair.
  ASSERT_EQ(H.D.numRaces(), 1u);
  EXPECT_TRUE(H.D.races()[0].FirstWrite);

  // Ordered accumulations (core 1 waits for core 0, e.g. a semaphore) are
  // safe.
  Harness G;
  G.accumulate(A0, 0, Engine::DMA0, 3, tile(16, 0, 1));
  G.edge(0, Engine::DMA0, 1, Engine::DMA0);
  G.accumulate(A1, 1, Engine::DMA0, 3, tile(16, 0, 1));
  EXPECT_FALSE(G.D.hasRaces());
}

TEST(RaceDetector, DisjointStridedInterleavingsAreSafe) {
  Harness H;
  Instruction *Even = H.I.get("even"), *Odd = H.I.get("odd");
  // Even and odd fp32 elements of 4096, written by two cores.
  H.run(Even, 0, Engine::DVE, 0, pattern(0, {{2, 2048}}, DataType::FP32, 0,
                                          128),
        true);
  H.run(Odd, 1, Engine::DVE, 0, pattern(4, {{2, 2048}}, DataType::FP32, 0,
                                         128),
        true);
  // Column blocks: core 0 columns 0..15 of every row of 32, core 1 16..31.
  H.run(Even, 0, Engine::DVE, 1, pattern(0, {{32, 64}, {1, 16}}), true);
  H.run(Odd, 1, Engine::DVE, 1, pattern(64, {{32, 64}, {1, 16}}), true);
  EXPECT_FALSE(H.D.hasRaces());
  // Cost follows runs, not bytes: 2048 + 2048 + 64 + 64 runs.
  EXPECT_EQ(H.D.stats().Runs, 4224u);
}

TEST(RaceDetector, IntersectingStridedPatternsRaceAtTheFirstCommonElement) {
  Harness H;
  Instruction *A = H.I.get("a"), *B = H.I.get("b");
  // Elements 0, 2, ..., 14 and 1, 4, 7, 10, 13: element 4 is in both.
  H.run(A, 0, Engine::DVE, 0, pattern(0, {{2, 8}}), true);
  H.run(B, 1, Engine::POOL, 0, pattern(4, {{3, 5}}), false);
  ASSERT_EQ(H.D.numRaces(), 1u);
  const RaceReport &R = H.D.races()[0];
  EXPECT_EQ(R.BeginByte, 16u);
  EXPECT_EQ(R.EndByte, 20u);
  EXPECT_FALSE(R.SecondWrite);
  // Same patterns, one step apart: 0, 2, .. and 1, 3, ...: disjoint.
  Harness G;
  G.run(A, 0, Engine::DVE, 0, pattern(0, {{2, 8}}), true);
  G.run(B, 1, Engine::POOL, 0, pattern(4, {{2, 8}}), false);
  EXPECT_FALSE(G.D.hasRaces());
}

TEST(RaceDetector, PartitionsAreASecondDimension) {
  Harness H;
  Instruction *A = H.I.get("top"), *B = H.I.get("bottom"), *C = H.I.get("mid");
  H.run(A, 0, Engine::DVE, 0, tile(256, 0, 64), true);
  H.run(B, 1, Engine::DVE, 0, tile(256, 64, 64), true);
  EXPECT_FALSE(H.D.hasRaces());
  // The two halves share byte segments: one segment, two partition cells.
  EXPECT_EQ(H.D.stats().Segments, 1u);
  EXPECT_EQ(H.D.stats().Cells, 2u);
  // Partitions 60..69 of bytes [16, 32) overlap both halves.
  H.run(C, 1, Engine::ACT, 0, pattern(16, {{1, 4}}, DataType::FP32, 60, 10),
        true);
  ASSERT_EQ(H.D.numRaces(), 2u);
  auto R = H.D.races();
  EXPECT_EQ(R[0].First.Inst, A);
  EXPECT_EQ(R[0].Partition, 60u);
  EXPECT_EQ(R[0].NumPartitions, 4u);
  EXPECT_EQ(R[0].BeginByte, 16u);
  EXPECT_EQ(R[0].EndByte, 32u);
  EXPECT_EQ(R[1].First.Inst, B);
  EXPECT_EQ(R[1].Partition, 64u);
  EXPECT_EQ(R[1].NumPartitions, 6u);
  EXPECT_NE(R[1].describe().find("partitions [64, 70) bytes [16, 32)"),
            std::string::npos);
  // The partitions outside a later, ordered write keep their history: core
  // 1's ACT rewrote [60, 70) after the races above, but partitions [0, 60)
  // still hold top's write, which core 1's POOL is not ordered after.
  Instruction *Late = H.I.get("late");
  H.run(Late, 1, Engine::POOL, 0, pattern(16, {{1, 4}}, DataType::FP32, 2, 3),
        false);
  ASSERT_EQ(H.D.numRaces(), 3u);
  EXPECT_EQ(H.D.races()[2].First.Inst, A);
  EXPECT_EQ(H.D.races()[2].Partition, 2u);
  EXPECT_EQ(H.D.races()[2].NumPartitions, 3u);
  // Likewise partitions [70, 128) still hold bottom's write.
  Instruction *Late0 = H.I.get("late0");
  H.run(Late0, 0, Engine::POOL, 0,
        pattern(16, {{1, 1}}, DataType::FP32, 100, 1), false);
  ASSERT_EQ(H.D.numRaces(), 4u);
  EXPECT_EQ(H.D.races()[3].First.Inst, B);
  EXPECT_EQ(H.D.races()[3].Partition, 100u);
  // An access below the partitions recorded so far is recorded too.
  Harness E;
  E.run(B, 1, Engine::DVE, 0, tile(8, 64, 64), true);
  E.run(A, 0, Engine::DVE, 0, tile(8, 0, 10), true);
  E.run(C, 1, Engine::ACT, 0, tile(8, 0, 10), false);
  ASSERT_EQ(E.D.numRaces(), 1u);
  EXPECT_EQ(E.D.races()[0].First.Inst, A);
  // A read of some partitions of a cell is not recorded on the others: no
  // false race there.
  Harness F;
  F.run(A, 0, Engine::DVE, 0, tile(8), true);
  F.run(B, 1, Engine::DVE, 0, tile(8, 64, 64), false);
  ASSERT_EQ(F.D.numRaces(), 1u);
  F.run(C, 0, Engine::DVE, 0, tile(8, 0, 64), true);
  EXPECT_EQ(F.D.numRaces(), 1u);
  // A single partition with a start offset.
  Harness G;
  G.run(A, 0, Engine::DVE, 0, tile(8, 5, 1), true);
  G.run(B, 1, Engine::DVE, 0, tile(8, 6, 1), true);
  EXPECT_FALSE(G.D.hasRaces());
  G.run(C, 1, Engine::DVE, 0, tile(8, 5, 1), true);
  ASSERT_EQ(G.D.numRaces(), 1u);
  EXPECT_NE(G.D.races()[0].describe().find("partition 5 bytes [0, 32)"),
            std::string::npos);
}

TEST(RaceDetector, StoragesAreIndependentAndSharedStorageIsOne) {
  Harness H;
  Instruction *A = H.I.get("a", Engine::DMA0), *B = H.I.get("b", Engine::DMA0);
  // Each core's private copy of "x": different storages.
  H.run(A, 0, Engine::DMA0, 10, tile(16), true);
  H.run(B, 1, Engine::DMA0, 11, tile(16), true);
  EXPECT_FALSE(H.D.hasRaces());
  // Core 1 writes core 0's "x" through a remote location: core 0's storage.
  H.run(B, 1, Engine::DMA0, 10, tile(16), true, 2);
  ASSERT_EQ(H.D.numRaces(), 1u);
  EXPECT_EQ(H.D.races()[0].Storage, "loc10");
  EXPECT_NE(H.D.races()[0].describe().find("execution 2"), std::string::npos);
}

TEST(RaceDetector, BarrierOrdersBothCores) {
  // A barrier joins the clocks of every participant.
  Harness H;
  Instruction *W0 = H.I.get("w0", Engine::DMA0), *R1 = H.I.get("r1", Engine::DMA0);
  Instruction *W1 = H.I.get("w1", dma(1));
  H.run(W0, 0, Engine::DMA0, 5, tile(64), true);
  // Core 0: DMA0 -> POOL barrier; core 1: POOL barrier -> DMA0.
  H.edge(0, Engine::DMA0, 0, Engine::POOL);
  H.C.exec(VectorClock::threadOf(0, Engine::POOL));
  H.C.exec(VectorClock::threadOf(1, Engine::POOL));
  VectorClock Joint = H.C.VC[VectorClock::threadOf(0, Engine::POOL)];
  Joint.join(H.C.VC[VectorClock::threadOf(1, Engine::POOL)]);
  H.C.VC[VectorClock::threadOf(0, Engine::POOL)] = Joint;
  H.C.VC[VectorClock::threadOf(1, Engine::POOL)] = Joint;
  H.edge(1, Engine::POOL, 1, Engine::DMA0);
  H.run(R1, 1, Engine::DMA0, 5, tile(64), false);
  EXPECT_FALSE(H.D.hasRaces());
  // Core 1's DMA1 did not wait for the barrier: it races with core 0's write.
  H.run(W1, 1, dma(1), 5, tile(64), true);
  ASSERT_EQ(H.D.numRaces(), 2u); // with w0's write and r1's read
}

TEST(RaceDetector, EachRaceOnceAndReportsAreCapped) {
  Harness H(2, /*MaxReports=*/3);
  std::vector<Instruction *> W;
  for (int K = 0; K < 10; ++K)
    W.push_back(H.I.get("w" + std::to_string(K), Engine::DMA0));
  Instruction *Other = H.I.get("other", Engine::DMA0);
  // The same unordered pair over 20 loop iterations: one race.
  for (int K = 1; K <= 20; ++K) {
    H.run(W[0], 0, Engine::DMA0, 0, tile(8), true, K);
    H.run(Other, 1, Engine::DMA0, 0, tile(8), true, K);
  }
  ASSERT_EQ(H.D.numRaces(), 2u); // w0 -> other, and other -> w0
  // Nine writers on one engine, then a read unordered with them: only the
  // last writer, w9, is still recorded, so one more race.
  for (int K = 1; K < 10; ++K)
    H.run(W[K], 0, Engine::DMA0, 1, tile(8), true);
  H.run(Other, 1, Engine::DMA0, 1, tile(8), false);
  EXPECT_EQ(H.D.races().size(), 3u);
  ASSERT_EQ(H.D.numRaces(), 3u); // only w9 is the last writer of storage 1
  H.D.reset();
  ASSERT_EQ(H.D.numRaces(), 0u);
  EXPECT_EQ(H.D.stats().Segments, 0u);
}

TEST(RaceDetector, ManyRacingPairsAreCountedBeyondTheCap) {
  Harness H(2, /*MaxReports=*/5);
  Insts I;
  for (int K = 0; K < 40; ++K) {
    Instruction *A = I.get("a" + std::to_string(K));
    Instruction *B = I.get("b" + std::to_string(K));
    H.run(A, 0, Engine::DVE, K, tile(4), true);
    H.run(B, 1, Engine::DVE, K, tile(4), true);
  }
  ASSERT_EQ(H.D.numRaces(), 40u);
  EXPECT_EQ(H.D.races().size(), 5u);
}

TEST(RaceDetector, WidenedAccessesSaySo) {
  Harness H;
  Instruction *A = H.I.get("a"), *B = H.I.get("b");
  // 2^21 even bytes: more runs than the bound, widened to the range.
  AccessPattern Even =
      pattern(0, {{2, uint64_t(1) << 21}}, DataType::INT8, 0, 1);
  AccessPattern Odd = pattern(1, {{2, 4}}, DataType::INT8, 0, 1);
  H.run(A, 0, Engine::DVE, 0, Even, true);
  H.run(B, 1, Engine::DVE, 0, Odd, true);
  EXPECT_EQ(H.D.stats().ApproximatedAccesses, 1u);
  ASSERT_EQ(H.D.numRaces(), 1u);
  EXPECT_TRUE(H.D.races()[0].Approximate);
  EXPECT_NE(H.D.races()[0].describe().find("widened"), std::string::npos);
}

TEST(RaceDetector, SegmentsMergeBack) {
  Harness H;
  Instruction *A = H.I.get("a"), *B = H.I.get("b"), *C = H.I.get("c");
  // Even and odd elements split the storage into 128 segments...
  H.run(A, 0, Engine::DVE, 0, pattern(0, {{2, 64}}), true);
  H.run(B, 0, Engine::DVE, 0, pattern(4, {{2, 64}}), true);
  EXPECT_EQ(H.D.stats().Segments, 128u);
  // ...and one write over all of it merges them again.
  H.run(C, 0, Engine::DVE, 0, tile(128, 0, 1), true);
  EXPECT_EQ(H.D.stats().Segments, 1u);
  EXPECT_EQ(H.D.stats().Cells, 1u);
  EXPECT_FALSE(H.D.hasRaces());
}

TEST(RaceDetector, AccessRangeMatchesThePattern) {
  Harness H;
  Instruction *A = H.I.get("a"), *B = H.I.get("b");
  H.run(A, 0, Engine::DVE, 0, tile(16, 0, 2), true);
  unsigned T = VectorClock::threadOf(1, Engine::POOL);
  H.D.accessRange(0, "loc0", 1, 1, 60, 100, false,
                  AccessSite{1, Engine::POOL, B, 1}, T, H.C.exec(T));
  ASSERT_EQ(H.D.numRaces(), 1u);
  EXPECT_NE(H.D.races()[0].describe().find("partition 1 bytes [60, 64)"),
            std::string::npos);
}

/// 10^5 accesses of a software pipeline over 16 DMA queues, 8 tile slots and
/// three engines, every hand-off ordered: no race, and the shadow state stays
/// as small as the set of slots, not the number of accesses.
TEST(RaceDetector, ManyAccessesStayBounded) {
  Harness H;
  Instruction *Ld = H.I.get("load", Engine::DMA0);
  Instruction *Mm = H.I.get("mm", Engine::PE);
  Instruction *St = H.I.get("store", dma(1));
  const unsigned Slots = 8;
  uint64_t MaxSegments = 0;
  for (unsigned K = 0; K < 25000; ++K) {
    unsigned Slot = K % Slots;
    Engine Q = static_cast<Engine>(unsigned(Engine::DMA0) + K % 16);
    AccessPattern In = tile(64, 0, 128, Slot * 256);
    AccessPattern Out = tile(64, 0, 128, Slot * 256 + 2048);
    // The slot is free again once the store that used it has run.
    H.edge(1, Engine::SP, 0, Q);
    H.run(Ld, 0, Q, 0, In, true, K + 1);
    H.edge(0, Q, 0, Engine::PE);
    H.run(Mm, 0, Engine::PE, 0, In, false, K + 1);
    H.run(Mm, 0, Engine::PE, 0, Out, true, K + 1);
    H.edge(0, Engine::PE, 1, dma(1));
    H.run(St, 1, dma(1), 0, Out, false, K + 1);
    H.edge(1, dma(1), 1, Engine::SP);
    H.C.exec(VectorClock::threadOf(1, Engine::SP));
    MaxSegments = std::max(MaxSegments, H.D.stats().Segments);
  }
  EXPECT_FALSE(H.D.hasRaces()) << H.D.races()[0].describe();
  EXPECT_EQ(H.D.stats().Accesses, 100000u);
  EXPECT_LE(MaxSegments, 2u * Slots);
  // Now drop the hand-off edges: every slot reuse races, reported once.
  Harness G;
  for (unsigned K = 0; K < 1000; ++K)
    G.run(K % 2 ? Ld : St, K % 2, Engine::DMA0, 0, tile(64, 0, 128, 0), true,
          K + 1);
  ASSERT_EQ(G.D.numRaces(), 2u);
  EXPECT_EQ(G.D.stats().Segments, 1u);
}

} // namespace
