//===- LaunchSimTest.cpp - Simulating every device of a launch together ---===//
//
// simulateLaunch on programs built in memory: collectives across devices by
// their reference semantics (rank = position in the group, not device id),
// core c meeting core c at lnc_size 2, SharedDRAM per device, the check of
// the members' groups before the run, races and deadlocks naming the device,
// the ring cost of remote collectives, and the per-device report and trace.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/analysis/CostModel.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace loom;
using namespace loom::bir;
using namespace loom::bir::sim;

namespace {

// (Numbers go into formatv as strings: gcc 12 warns inside LLVM 14's integer
// formatter.)

/// A device's program: lnc_size Lnc, locations `in` (N fp32) and `out`
/// (OutN fp32) in SharedDRAM, and the instructions Insts (a JSON list).
std::string deviceProgram(unsigned Lnc, unsigned N, unsigned OutN,
                          const std::string &Insts,
                          const char *Kind = "SharedDRAM") {
  return llvm::formatv(R"({{"version": 1, "modules": [{{
    "name": "d", "neuron_core_id": 0, "subgraph_id": 0,
    "pass_options": {{"lnc_size": {0}, "target": "generic"},
    "memory_locations": [
      {{"name": "in", "tensor_id": 0, "kind": "{4}", "dtype": "fp32", "partitions": 1, "bytes_per_partition": {1}},
      {{"name": "out", "tensor_id": 1, "kind": "{4}", "dtype": "fp32", "partitions": 1, "bytes_per_partition": {2}}],
    "blocks": [{{"name": "entry", "instructions": [{3},
      {{"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})",
                       std::to_string(Lnc), std::to_string(4 * N),
                       std::to_string(4 * OutN), Insts, Kind)
      .str();
}

/// A remote collective over devices Group: `in` -> `out`.
std::string collective(const char *Kind, const std::string &Group,
                       unsigned N, unsigned OutN, const char *Name = "cc",
                       const char *Reduce = "None") {
  return llvm::formatv(
             R"({{"name": "{5}", "type": "CollectiveCompute", "engine": "POOL",
        "kind": "{0}", "group": [{1}], "reduce": "{4}",
        "inputs": [{{"memloc": "in", "partitions": 1, "pattern": [[1, {2}]]}],
        "outputs": [{{"memloc": "out", "partitions": 1, "pattern": [[1, {3}]]}]})",
             Kind, Group, std::to_string(N), std::to_string(OutN), Reduce,
             Name)
      .str();
}

Program load(const std::string &Text) {
  llvm::Expected<Program> P = parseProgram(Text, "launch.json");
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  if (llvm::Error E = splitIfNeeded(*P))
    ADD_FAILURE() << llvm::toString(std::move(E));
  return std::move(*P);
}

/// Device D's `in` holds 100 * D + i (and, on core C of a private memory,
/// plus 1000 * C).
InputValue inputOf(unsigned D, unsigned N, std::optional<unsigned> Core = {}) {
  InputValue In;
  In.Device = D;
  In.Core = Core;
  In.Name = "in";
  In.Array.Descr = "<f4";
  In.Array.Shape = {1, int64_t(N)};
  for (unsigned I = 0; I < N; ++I) {
    float V = float(100 * D + I + 1000 * Core.value_or(0));
    In.Array.Data.append(reinterpret_cast<const char *>(&V), 4);
  }
  return In;
}

std::vector<float> values(const LocationState &L) {
  std::vector<float> V(L.Data.size() / 4);
  std::memcpy(V.data(), L.Data.data(), L.Data.size());
  return V;
}

struct Launch {
  std::vector<Program> Devices;
  std::vector<const Program *> Ptrs() const {
    std::vector<const Program *> P;
    for (const Program &D : Devices)
      P.push_back(&D);
    return P;
  }
};

/// A launch of NumDevices devices running the same program text.
Launch uniform(unsigned NumDevices, const std::string &Text) {
  Launch L;
  for (unsigned D = 0; D < NumDevices; ++D)
    L.Devices.push_back(load(Text));
  return L;
}

std::string messageOf(llvm::Error E, FailureKind *Kind = nullptr) {
  std::string Msg;
  llvm::handleAllErrors(std::move(E), [&](const SimFailure &F) {
    Msg = F.getMessage();
    if (Kind)
      *Kind = F.getKind();
  });
  return Msg;
}

SimOptions withInputs(unsigned NumDevices, unsigned N) {
  SimOptions O;
  O.FileName = "launch.json";
  for (unsigned D = 0; D < NumDevices; ++D)
    O.Inputs.push_back(inputOf(D, N));
  return O;
}

TEST(LaunchSimTest, AllReduceSumsEveryDeviceOfTheGroup) {
  Launch L = uniform(4, deviceProgram(1, 4, 4,
                                      collective("AllReduce", "0, 1, 2, 3", 4,
                                                 4, "cc", "Add")));
  llvm::Expected<SimResult> R = simulateLaunch(L.Ptrs(), withInputs(4, 4));
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(R->NumDevices, 4u);
  for (unsigned D = 0; D < 4; ++D) {
    const LocationState *Out = R->find(D, 0, 0, "out");
    ASSERT_NE(Out, nullptr);
    EXPECT_EQ(Out->Device, D);
    // sum over d of 100 d + i = 600 + 4 i
    EXPECT_EQ(values(*Out), (std::vector<float>{600, 604, 608, 612}));
  }
}

TEST(LaunchSimTest, RanksAreGroupPositionsNotDeviceIds) {
  // Group [2, 0, 3, 1]: rank 0 is device 2. AllGather concatenates in rank
  // order, Permute sends rank r's input to rank r + 1.
  Launch G = uniform(4, deviceProgram(1, 2, 8,
                                      collective("AllGather", "2, 0, 3, 1", 2,
                                                 8)));
  llvm::Expected<SimResult> R = simulateLaunch(G.Ptrs(), withInputs(4, 2));
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(values(*R->find(1, 0, 0, "out")),
            (std::vector<float>{200, 201, 0, 1, 300, 301, 100, 101}));

  Launch P = uniform(4, deviceProgram(1, 2, 2,
                                      collective("Permute", "2, 0, 3, 1", 2,
                                                 2)));
  R = simulateLaunch(P.Ptrs(), withInputs(4, 2));
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  // Device 0 is rank 1: it receives rank 0's (device 2's) input.
  EXPECT_EQ(values(*R->find(0, 0, 0, "out")), (std::vector<float>{200, 201}));
  // Device 2 is rank 0: it receives rank 3's (device 1's).
  EXPECT_EQ(values(*R->find(2, 0, 0, "out")), (std::vector<float>{100, 101}));
}

TEST(LaunchSimTest, ReduceScatterAndAllToAllSplitByRank) {
  Launch RS = uniform(2, deviceProgram(1, 4, 2,
                                       collective("ReduceScatter", "1, 0", 4,
                                                  2, "cc", "Max")));
  llvm::Expected<SimResult> R = simulateLaunch(RS.Ptrs(), withInputs(2, 4));
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  // Device 1 is rank 0 (first half of the max), device 0 rank 1.
  EXPECT_EQ(values(*R->find(1, 0, 0, "out")), (std::vector<float>{100, 101}));
  EXPECT_EQ(values(*R->find(0, 0, 0, "out")), (std::vector<float>{102, 103}));

  Launch A2A = uniform(2, deviceProgram(1, 4, 4,
                                        collective("AllToAll", "0, 1", 4, 4)));
  R = simulateLaunch(A2A.Ptrs(), withInputs(2, 4));
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(values(*R->find(0, 0, 0, "out")),
            (std::vector<float>{0, 1, 100, 101}));
  EXPECT_EQ(values(*R->find(1, 0, 0, "out")),
            (std::vector<float>{2, 3, 102, 103}));
}

TEST(LaunchSimTest, CoreMeetsTheSameCoreOfTheOtherDevices) {
  // lnc_size 2, private DRAM: core c of every device exchanges its own data.
  Launch L = uniform(2, deviceProgram(2, 2, 4,
                                      collective("AllGather", "0, 1", 2, 4),
                                      "DRAM"));
  SimOptions O;
  for (unsigned D = 0; D < 2; ++D)
    for (unsigned C = 0; C < 2; ++C)
      O.Inputs.push_back(inputOf(D, 2, C));
  llvm::Expected<SimResult> R = simulateLaunch(L.Ptrs(), O);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(values(*R->find(0, 0, 1, "out")),
            (std::vector<float>{1000, 1001, 1100, 1101}));
  EXPECT_EQ(values(*R->find(1, 0, 0, "out")),
            (std::vector<float>{0, 1, 100, 101}));
  EXPECT_EQ(R->Cores.size(), 4u);
}

TEST(LaunchSimTest, SharedDramIsPerDevice) {
  // Every device copies its own `in` to `out`: the same names, other bytes.
  Launch L = uniform(3, deviceProgram(1, 2, 2, R"({"name": "c", "type": "DMACopy", "engine": "DMA0",
      "inputs": [{"memloc": "in", "partitions": 1, "pattern": [[1, 2]]}],
      "outputs": [{"memloc": "out", "partitions": 1, "pattern": [[1, 2]]}]})"));
  llvm::Expected<SimResult> R = simulateLaunch(L.Ptrs(), withInputs(3, 2));
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  for (unsigned D = 0; D < 3; ++D)
    EXPECT_EQ(values(*R->find(D, 0, 0, "out")),
              (std::vector<float>{float(100 * D), float(100 * D + 1)}));
}

TEST(LaunchSimTest, MismatchedGroupsFailBeforeTheRun) {
  Launch L;
  L.Devices.push_back(load(deviceProgram(
      1, 2, 2, collective("AllReduce", "0, 1", 2, 2, "cc", "Add"))));
  L.Devices.push_back(load(deviceProgram(
      1, 2, 2, collective("AllReduce", "1, 0", 2, 2, "cc", "Add"))));
  FailureKind K = FailureKind::Race;
  std::string Msg = messageOf(
      simulateLaunch(L.Ptrs(), withInputs(2, 2)).takeError(), &K);
  EXPECT_EQ(K, FailureKind::Error);
  EXPECT_EQ(Msg, "launch.json: collective 'cc' on device 0 core 0 has the "
                 "group of devices [0, 1], but device 1 core 0 has [1, 0]");

  Launch M;
  M.Devices.push_back(load(deviceProgram(
      1, 2, 2, collective("AllReduce", "0, 1", 2, 2, "cc", "Add"))));
  M.Devices.push_back(load(deviceProgram(
      1, 2, 2, collective("AllReduce", "0, 1", 2, 2, "other", "Add"))));
  Msg = messageOf(simulateLaunch(M.Ptrs(), withInputs(2, 2)).takeError());
  EXPECT_EQ(Msg, "launch.json: collective 'cc' on device 0 core 0 has the "
                 "group of devices [0, 1], but device 1 core 0 has no "
                 "collective of that name");

  Launch N = uniform(2, deviceProgram(1, 2, 2,
                                      collective("AllReduce", "0, 1, 2", 2, 2,
                                                 "cc", "Add")));
  Msg = messageOf(simulateLaunch(N.Ptrs(), withInputs(2, 2)).takeError());
  EXPECT_EQ(Msg, "launch.json: collective 'cc' on device 0 core 0 names "
                 "device 2, which does not exist: the launch has 2 devices");
}

TEST(LaunchSimTest, SingleProgramsStillRefuseRemoteCollectives) {
  Program P = load(deviceProgram(
      1, 2, 2, collective("AllReduce", "0, 1", 2, 2, "cc", "Add")));
  SimOptions O;
  O.FileName = "p.json";
  std::string Msg = messageOf(simulate(P, O).takeError());
  EXPECT_NE(Msg.find("is not local"), std::string::npos) << Msg;
}

TEST(LaunchSimTest, DeadlockNamesTheDevice) {
  // Device 1 runs the collective twice (a loop of 2), device 0 once.
  std::string Once = deviceProgram(
      1, 2, 2, collective("AllReduce", "0, 1", 2, 2, "cc", "Add"));
  std::string Twice = llvm::formatv(R"({{"version": 1, "modules": [{{
    "name": "d", "neuron_core_id": 0, "subgraph_id": 0,
    "pass_options": {{"lnc_size": 1, "target": "generic"},
    "memory_locations": [
      {{"name": "in", "tensor_id": 0, "kind": "SharedDRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 8},
      {{"name": "out", "tensor_id": 1, "kind": "SharedDRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 8}],
    "blocks": [
      {{"name": "entry", "successors": ["body"], "instructions": [
        {{"name": "j", "type": "Branch", "engine": "SP", "kind": "Jump"}]},
      {{"name": "body", "successors": ["body", "exit"], "instructions": [{0},
        {{"name": "back", "type": "Branch", "engine": "SP", "kind": "Loop", "trip_count": 2}]},
      {{"name": "exit", "instructions": [
        {{"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})",
                                    collective("AllReduce", "0, 1", 2, 2,
                                               "cc", "Add"))
                          .str();
  Launch L;
  L.Devices.push_back(load(Once));
  L.Devices.push_back(load(Twice));
  FailureKind K = FailureKind::Error;
  std::string Msg =
      messageOf(simulateLaunch(L.Ptrs(), withInputs(2, 2)).takeError(), &K);
  EXPECT_EQ(K, FailureKind::Deadlock);
  EXPECT_NE(Msg.find("device 0 core 0: finished"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("device 1 core 0: at block 'body', instruction 'cc'"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("waits at collective 'cc'; device 0 core 0 never reaches "
                     "it (it runs it 1 time(s))"),
            std::string::npos)
      << Msg;
}

TEST(LaunchSimTest, RacesNameTheDevice) {
  // Both cores of each device store to the same SharedDRAM bytes unordered.
  Launch L = uniform(2, deviceProgram(2, 2, 2, R"({"name": "st", "type": "DMACopy", "engine": "DMA0",
      "inputs": [{"memloc": "in", "partitions": 1, "pattern": [[1, 2]]}],
      "outputs": [{"memloc": "out", "partitions": 1, "pattern": [[1, 2]]}]})"));
  FailureKind K = FailureKind::Error;
  std::string Msg =
      messageOf(simulateLaunch(L.Ptrs(), withInputs(2, 2)).takeError(), &K);
  EXPECT_EQ(K, FailureKind::Race);
  EXPECT_NE(Msg.find("write-write race on 'out (device 0)' partition 0 bytes "
                     "[0, 8): 'st' (device 0 core 0, DMA0, execution 1, "
                     "write) and 'st' (device 0 core 1, DMA0, execution 1, "
                     "write) are not ordered"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("'out (device 1)'"), std::string::npos) << Msg;
}

TEST(LaunchSimTest, RemoteCollectivesTakeTheRingCost) {
  Launch L = uniform(4, deviceProgram(1, 1024, 1024,
                                      collective("AllReduce", "0, 1, 2, 3",
                                                 1024, 1024, "cc", "Add")));
  llvm::Expected<SimResult> R = simulateLaunch(L.Ptrs(), withInputs(4, 1024));
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  analysis::CostModel M;
  double Expected = M.remoteCollectiveNs(CollectiveKind::AllReduce, 4, 4096);
  // 2(n-1) = 6 ring steps and 2(n-1)/n of 4096 bytes over the link share.
  EXPECT_DOUBLE_EQ(Expected, 6 * 1900 + 1.5 * 4096 / 160);
  for (const CoreReport &C : R->Cores)
    EXPECT_DOUBLE_EQ(C.Engines[unsigned(Engine::POOL)].BusyNs, Expected);
  // A local collective keeps the on-chip formula.
  EXPECT_NE(M.collectiveNs(CollectiveKind::AllReduce, 4, 4096), Expected);
}

TEST(LaunchSimTest, ReportAndTraceCoverEveryDevice) {
  Launch L = uniform(2, deviceProgram(2, 2, 4,
                                      collective("AllGather", "0, 1", 2, 4),
                                      "DRAM"));
  SimOptions O = withInputs(2, 2);
  O.RecordTrace = true;
  llvm::Expected<SimResult> R = simulateLaunch(L.Ptrs(), O);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printReport(OS, *R, false);
  EXPECT_NE(Text.find("launch: 2 device(s) of 2 core(s), makespan"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("device 1 subgraph 0 core 1: makespan"),
            std::string::npos)
      << Text;
  std::string Trace;
  llvm::raw_string_ostream TS(Trace);
  writeTrace(TS, *R);
  EXPECT_NE(Trace.find(R"("name":"device 1")"), std::string::npos);
  EXPECT_NE(Trace.find(R"("name":"core 1 POOL")"), std::string::npos);
  EXPECT_EQ(Trace.find(R"("name":"core 2")"), std::string::npos);
  // Slice of device 1 core 1's collective: pid 1, tid 21 + POOL.
  EXPECT_NE(Trace.find(R"("pid":1,"tid":)" +
                       std::to_string(21 + unsigned(Engine::POOL))),
            std::string::npos);
}

} // namespace
