//===- SimulatorTest.cpp - The simulator's execution engine ---------------===//
//
// Timing of engines, dependencies and barriers; dependencies on the most
// recent execution inside loops (which decides whether a missing
// write-after-read dependency is seen as a race); seeded inputs; random
// schedules; failures by kind; the equivalence check as a library call.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/json/BirJson.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace loom;
using namespace loom::bir;
using namespace loom::bir::sim;

namespace {

/// A one-module program text; Locs and Blocks are JSON arrays' contents.
std::string program(unsigned Lnc, const std::string &Locs,
                    const std::string &Blocks) {
  return llvm::formatv(R"({{"version": 1, "modules": [{{
    "name": "t", "neuron_core_id": 0, "subgraph_id": 0,
    "pass_options": {{"lnc_size": {0}, "target": "trn2"},
    "memory_locations": [{1}], "blocks": [{2}]}]})",
                       std::to_string(Lnc), Locs, Blocks)
      .str();
}

Program load(const std::string &Text) {
  llvm::Expected<Program> P = parseProgram(Text, "test.json");
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  if (llvm::Error E = splitIfNeeded(*P))
    ADD_FAILURE() << llvm::toString(std::move(E));
  return std::move(*P);
}

/// The failure kind of E, consuming it; Error for a non-simulator error.
FailureKind kindOf(llvm::Error E, std::string *Msg = nullptr) {
  FailureKind K = FailureKind::Error;
  llvm::handleAllErrors(std::move(E), [&](const SimFailure &F) {
    K = F.getKind();
    if (Msg)
      *Msg = F.getMessage();
  });
  return K;
}

const char *Locs = R"(
  {"name": "src", "tensor_id": 0, "kind": "DRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64},
  {"name": "buf", "tensor_id": 1, "kind": "SB", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64},
  {"name": "out", "tensor_id": 2, "kind": "SB", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64})";

std::string ap(const char *Loc) {
  return llvm::formatv(R"({{"memloc": "{0}", "partitions": 1, "pattern": [[1, 16]]})",
                       Loc)
      .str();
}

std::string copy(const char *Name, const char *Type, const char *Eng,
                 const char *From, const char *To, const char *Deps = "") {
  return llvm::formatv(R"({{"name": "{0}", "type": "{1}", "engine": "{2}",
      "inputs": [{3}], "outputs": [{4}], "deps": [{5}]})",
                       Name, Type, Eng, ap(From), ap(To), Deps)
      .str();
}

const char *Ret = R"({"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"})";

std::string block(const std::string &Insts) {
  return R"({"name": "entry", "instructions": [)" + Insts + "," + Ret + "]}";
}

/// A loop of Trips iterations: load into buf, then read buf. With WarDep, a
/// store on the load's queue waits for the read, so engine order puts the
/// next iteration's load after it (the dependency graph has no cycles).
std::string loopProgram(unsigned Trips, bool WarDep) {
  std::string Body =
      copy("load", "DMACopy", "DMA0", "src", "buf") + "," +
      copy("use", "TensorCopy", "DVE", "buf", "out", R"("load")");
  if (WarDep)
    Body += "," + copy("drain", "DMACopy", "DMA0", "out", "res", R"("use")");
  std::string Blocks =
      std::string(R"({"name": "entry", "successors": ["body"], "instructions": [
        {"name": "j", "type": "Branch", "engine": "SP", "kind": "Jump"}]},
      {"name": "body", "successors": ["body", "exit"], "instructions": [)") +
      Body + llvm::formatv(R"(,
        {{"name": "back", "type": "Branch", "engine": "SP", "kind": "Loop", "trip_count": {0}}]},
      {{"name": "exit", "instructions": [)",
                           std::to_string(Trips))
          .str() +
      Ret + "]}";
  return program(1,
                 std::string(Locs) +
                     R"(, {"name": "res", "tensor_id": 8, "kind": "DRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64})",
                 Blocks);
}

TEST(SimulatorTest, EngineTimesAddUpAlongDependencies) {
  Program P = load(program(
      1, Locs,
      block(copy("a", "DMACopy", "DMA0", "src", "buf") + "," +
            copy("b", "TensorCopy", "DVE", "buf", "out", R"("a")"))));
  llvm::Expected<SimResult> R = simulate(P, SimOptions());
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  const CoreReport &C = R->Cores[0];
  double Dma = C.Engines[unsigned(Engine::DMA0)].BusyNs;
  double Dve = C.Engines[unsigned(Engine::DVE)].BusyNs;
  EXPECT_GT(Dma, 0);
  EXPECT_GT(Dve, 0);
  // The return runs on SP in parallel; the chain a -> b is the makespan.
  EXPECT_DOUBLE_EQ(C.MakespanNs, Dma + Dve);
  EXPECT_EQ(C.Executions, 3u);
  EXPECT_EQ(C.Engines[unsigned(Engine::DMA0)].Bytes, 64u);
}

TEST(SimulatorTest, IndependentEnginesOverlap) {
  Program P = load(program(
      1, Locs,
      block(copy("a", "DMACopy", "DMA0", "src", "buf") + "," +
            copy("b", "DMACopy", "DMA1", "src", "out"))));
  llvm::Expected<SimResult> R = simulate(P, SimOptions());
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  const CoreReport &C = R->Cores[0];
  EXPECT_DOUBLE_EQ(C.MakespanNs, C.Engines[unsigned(Engine::DMA0)].BusyNs);
  EXPECT_DOUBLE_EQ(C.Engines[unsigned(Engine::DMA0)].BusyNs,
                   C.Engines[unsigned(Engine::DMA0) + 1].BusyNs);
}

TEST(SimulatorTest, LoopDependencyIsOnTheMostRecentExecution) {
  // Without a dependency of the next load on the previous read, the load of
  // iteration 2 may overwrite buf while the read of iteration 1 runs: a
  // race, although the dispatcher has already queued iteration 2.
  Program Racy = load(loopProgram(4, false));
  std::string Msg;
  llvm::Expected<SimResult> R = simulate(Racy, SimOptions());
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(kindOf(R.takeError(), &Msg), FailureKind::Race);
  EXPECT_NE(Msg.find("'use' (core 0, DVE, execution 1, read)"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("'load' (core 0, DMA0, execution 2, write)"),
            std::string::npos)
      << Msg;

  Program Safe = load(loopProgram(4, true));
  llvm::Expected<SimResult> S = simulate(Safe, SimOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  // entry (1) + 4 x (load, use, drain, back) + exit (1).
  EXPECT_EQ(S->Cores[0].Executions, 18u);
  EXPECT_EQ(S->Cores[0].Engines[unsigned(Engine::DVE)].Executions, 4u);
}

TEST(SimulatorTest, SeededInputsDependOnSeedNameAndCore) {
  std::string Small = program(
      2, Locs, block(copy("a", "DMACopy", "DMA0", "src", "buf")));
  std::string Extra = program(
      2,
      std::string(Locs) +
          R"(, {"name": "scratch", "tensor_id": 9, "kind": "DRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64})",
      block(copy("z", "DMACopy", "DMA1", "scratch", "out") + "," +
            copy("a", "DMACopy", "DMA0", "src", "buf")));
  SimOptions O;
  O.Seed = 42;
  llvm::Expected<SimResult> A = simulate(load(Small), O);
  llvm::Expected<SimResult> B = simulate(load(Extra), O);
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  for (unsigned Core = 0; Core < 2; ++Core) {
    const LocationState *LA = A->find(0, Core, "buf"), *LB = B->find(0, Core, "buf");
    ASSERT_TRUE(LA && LB);
    EXPECT_EQ(LA->Data, LB->Data);
  }
  // Private memories differ between cores; another seed gives other values.
  EXPECT_NE(A->find(0, 0, "buf")->Data, A->find(0, 1, "buf")->Data);
  O.Seed = 43;
  llvm::Expected<SimResult> C = simulate(load(Small), O);
  ASSERT_TRUE(bool(C));
  EXPECT_NE(C->find(0, 0, "buf")->Data, A->find(0, 0, "buf")->Data);
  // Seeded floats are multiples of 1/8 in [-2, 2).
  const LocationState *L = A->find(0, 0, "src");
  for (unsigned I = 0; I < 16; ++I) {
    float F;
    std::memcpy(&F, L->Data.data() + 4 * I, 4);
    EXPECT_GE(F, -2.0f);
    EXPECT_LT(F, 2.0f);
    EXPECT_EQ(F * 8, float(int(F * 8)));
  }
}

TEST(SimulatorTest, InputValueForOneCore) {
  Program P = load(program(2, Locs,
                           block(copy("a", "DMACopy", "DMA0", "src", "buf"))));
  SimOptions O;
  NpyArray A;
  A.Descr = "<f4";
  A.Shape = {1, 16};
  A.Data.assign(64, '\0');
  for (unsigned I = 0; I < 16; ++I) {
    float F = float(I) + 0.5f;
    std::memcpy(&A.Data[4 * I], &F, 4);
  }
  O.Inputs.push_back({1u, "src", A});
  llvm::Expected<SimResult> R = simulate(P, O);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  const LocationState *B1 = R->find(0, 1, "buf");
  ASSERT_TRUE(B1);
  EXPECT_EQ(std::memcmp(B1->Data.data(), A.Data.data(), 64), 0);
  EXPECT_NE(std::memcmp(R->find(0, 0, "buf")->Data.data(), A.Data.data(), 64),
            0);
}

TEST(SimulatorTest, BarrierReleasesAtTheLastArrival) {
  // Core 0 reaches the barrier at once, core 1 after a DMA: both leave it
  // at the same time, after the DMA.
  const char *Shared = R"(
    {"name": "src", "tensor_id": 0, "kind": "DRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64},
    {"name": "buf", "tensor_id": 1, "kind": "SB", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64})";
  auto Module = [&](unsigned Core, const std::string &Insts) {
    return llvm::formatv(R"({{"name": "t", "neuron_core_id": {0}, "subgraph_id": 0,
      "pass_options": {{"lnc_size": 2, "target": "trn2"},
      "memory_locations": [{1}], "blocks": [{2}]})",
                         std::to_string(Core), Shared, block(Insts))
        .str();
  };
  const char *Barrier = R"({"name": "cb", "type": "CoreBarrier", "engine": "POOL", "id": 0, "cores": [0, 1], "deps": [%s]})";
  char B0[256], B1[256];
  std::snprintf(B0, sizeof B0, Barrier, "");
  std::snprintf(B1, sizeof B1, Barrier, "\"a\"");
  std::string Text = R"({"version": 1, "modules": [)" + Module(0, B0) + "," +
                     Module(1, copy("a", "DMACopy", "DMA0", "src", "buf") +
                                   "," + B1) +
                     "]}";
  SimOptions O;
  O.RecordTrace = true;
  llvm::Expected<SimResult> R = simulate(load(Text), O);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  double End0 = -1, End1 = -1, Dma = -1;
  for (const TimelineSlice &S : R->Slices) {
    if (S.Name == "cb")
      (S.Core == 0 ? End0 : End1) = S.StartNs + S.DurNs;
    if (S.Name == "a")
      Dma = S.StartNs + S.DurNs;
  }
  EXPECT_GT(Dma, 0);
  EXPECT_DOUBLE_EQ(End0, End1);
  EXPECT_GT(End0, Dma);
  // One flow each way between the two cores.
  EXPECT_EQ(R->Flows.size(), 2u);
}

TEST(SimulatorTest, RandomSchedulesOfARaceFreeProgramAgree) {
  SimOptions O;
  O.Schedules = 20;
  O.Seed = 5;
  llvm::Expected<SimResult> R = simulate(load(loopProgram(3, true)), O);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
}

TEST(SimulatorTest, UnsignalledWaitIsADeadlock) {
  std::string Text = program(
      2, Locs,
      block(R"({"name": "w", "type": "CoreBarrier", "engine": "POOL", "id": 0, "cores": [0, 1]})"));
  Program P = load(Text);
  // Give core 1 another barrier id.
  for (auto &M : P)
    if (M->getNeuronCoreId() == 1)
      for (auto &I : *M->getBlock(0))
        if (auto *B = llvm::dyn_cast<InstCoreBarrier>(I.get()))
          B->setId(7);
  std::string Msg;
  llvm::Expected<SimResult> R = simulate(P, SimOptions());
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(kindOf(R.takeError(), &Msg), FailureKind::Deadlock);
  EXPECT_NE(Msg.find("barrier ids or names that do not match"),
            std::string::npos)
      << Msg;
}

TEST(SimulatorTest, EquivalenceNamesTheFirstDifference) {
  std::string Before = program(
      1, Locs, block(copy("a", "DMACopy", "DMA0", "src", "buf")));
  // After writes the tile shifted by one element.
  std::string After = program(
      1, Locs,
      block(R"({"name": "a", "type": "DMACopy", "engine": "DMA0",
        "inputs": [{"memloc": "src", "partitions": 1, "pattern": [[1, 15]]}],
        "outputs": [{"memloc": "buf", "partitions": 1, "offset": 4, "pattern": [[1, 15]]}]},
        {"name": "b", "type": "DMACopy", "engine": "DMA0",
        "inputs": [{"memloc": "src", "partitions": 1, "offset": 60, "pattern": [[1, 1]]}],
        "outputs": [{"memloc": "buf", "partitions": 1, "pattern": [[1, 1]]}], "deps": ["a"]})"));
  std::string Log;
  llvm::raw_string_ostream OS(Log);
  SimOptions O;
  llvm::Error Same = checkEquivalence(load(Before), load(Before), O, OS);
  EXPECT_FALSE(bool(Same)) << llvm::toString(std::move(Same));
  EXPECT_NE(OS.str().find("bit-exact"), std::string::npos);
  std::string Msg;
  llvm::Error E = checkEquivalence(load(Before), load(After), O, OS);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(kindOf(std::move(E), &Msg), FailureKind::Mismatch);
  EXPECT_NE(Msg.find("mismatch in location 'buf' on core 0, element 0 "
                     "(partition 0, element 0)"),
            std::string::npos)
      << Msg;
}

TEST(SimulatorTest, SubgraphsRunOneAfterAnotherWithOwnState) {
  auto Module = [&](unsigned Subgraph, const std::string &Insts) {
    return llvm::formatv(R"({{"name": "t", "neuron_core_id": 0, "subgraph_id": {0},
      "pass_options": {{"lnc_size": 1, "target": "trn2"},
      "memory_locations": [{1}], "blocks": [{2}]})",
                         std::to_string(Subgraph), Locs, block(Insts))
        .str();
  };
  std::string Set = R"({"name": "set", "type": "Memset", "engine": "DVE", "value": 5,
      "outputs": [{"memloc": "buf", "partitions": 1, "pattern": [[1, 16]]}]})";
  std::string Text = R"({"version": 1, "modules": [)" + Module(0, Set) + "," +
                     Module(1, copy("c", "TensorCopy", "DVE", "buf", "out")) +
                     "]}";
  llvm::Expected<SimResult> R = simulate(load(Text), SimOptions());
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  ASSERT_EQ(R->Cores.size(), 2u);
  EXPECT_EQ(R->Cores[1].Subgraph, 1u);
  const LocationState *Buf0 = R->find(0, 0, "buf"), *Out1 = R->find(1, 0, "out");
  ASSERT_TRUE(Buf0 && Out1);
  float F0, F1;
  std::memcpy(&F0, Buf0->Data.data(), 4);
  std::memcpy(&F1, Out1->Data.data(), 4);
  EXPECT_EQ(F0, 5.0f);
  // Subgraph 1 reads its own buf, seeded, not subgraph 0's.
  EXPECT_NE(F1, 5.0f);
  EXPECT_LT(std::fabs(F1), 2.0f);
}

} // namespace
