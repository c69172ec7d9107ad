//===- LaunchRunnerTest.cpp - A launch on hlo-run's inputs ----------------===//
//
// The launch runner on a launch built in memory (two devices, one all-reduce
// across them): its parameters are exactly MakeRandomArguments' values, with
// and without the module; the outputs come back as the interpreter's; a wrong
// program is caught with hlo-run's description of the first difference; an
// output the program never writes is an error; which outputs may take a
// tolerance; the files of --output-dir.
//
//===----------------------------------------------------------------------===//

#include "loom/launch/LaunchRunner.h"

#include "loom/bir/json/BirJson.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

using namespace loom;

namespace {

const char *ModuleText = R"(HloModule m, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,4] parameter(0)
  ROOT ar = f32[2,4] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
)";

/// Device D's program: the all-reduce of `x` into `out` over devices 0, 1
/// (Reduce is the BIR reduce op; Out the output location's name).
std::string program(const char *Reduce, bool Write = true) {
  std::string Insts =
      Write ? std::string(R"({"name": "ar", "type": "CollectiveCompute", "engine": "POOL",
        "kind": "AllReduce", "group": [0, 1], "reduce": ")") +
                  Reduce + R"(",
        "inputs": [{"memloc": "x", "partitions": 1, "pattern": [[1, 8]]}],
        "outputs": [{"memloc": "out", "partitions": 1, "pattern": [[1, 8]]}]},)"
            : std::string();
  return R"({"version": 1, "modules": [{
    "name": "m", "neuron_core_id": 0, "subgraph_id": 0,
    "pass_options": {"lnc_size": 1, "target": "trn2"},
    "memory_locations": [
      {"name": "x", "tensor_id": 0, "kind": "SharedDRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 32},
      {"name": "out", "tensor_id": 1, "kind": "SharedDRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 32}],
    "blocks": [{"name": "entry", "instructions": [)" +
         Insts + R"(
      {"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})";
}

bir::Launch makeLaunch(const char *Reduce = "Add", bool Write = true) {
  bir::Launch L;
  L.HloModule = "m";
  L.NumPartitions = 2;
  for (unsigned D = 0; D < 2; ++D) {
    bir::LaunchDevice Dev;
    Dev.Device = D;
    Dev.Partition = D;
    bir::LaunchBinding P;
    P.Parameter = 0;
    P.Name = "x";
    P.Shape = "f32[2,4]";
    P.Memloc = "x";
    Dev.Parameters.push_back(P);
    bir::LaunchBinding O;
    O.Shape = "f32[2,4]";
    O.Memloc = "out";
    Dev.Outputs.push_back(O);
    llvm::Expected<bir::Program> Prog =
        bir::parseProgram(program(Reduce, Write), "launch.json");
    if (!Prog)
      ADD_FAILURE() << llvm::toString(Prog.takeError());
    else
      Dev.Modules = std::move(*Prog);
    L.Devices.push_back(std::move(Dev));
  }
  return L;
}

std::unique_ptr<hlo::HloModule> parseModule(const char *Text) {
  auto M = hlo::ParseHloModuleOwned(std::string(Text), "m.hlo");
  if (!M) {
    ADD_FAILURE() << llvm::toString(M.takeError());
    return nullptr;
  }
  return std::move(*M);
}

TEST(LaunchRunnerTest, ArgumentsAreHloRunsWithAndWithoutTheModule) {
  auto M = parseModule(ModuleText);
  ASSERT_TRUE(M);
  bir::Launch L = makeLaunch();
  launch::LaunchOptions O;
  O.Seed = 5;
  auto Want = hlo::MakeRandomArguments(*M, 5);
  ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
  auto With = launch::makeLaunchArguments(L, M.get(), O);
  auto Without = launch::makeLaunchArguments(L, nullptr, O);
  ASSERT_TRUE(bool(With)) << llvm::toString(With.takeError());
  ASSERT_TRUE(bool(Without)) << llvm::toString(Without.takeError());
  EXPECT_TRUE(*With == *Want);
  EXPECT_TRUE(*Without == *Want);
  EXPECT_NE((*Want)[0][0], (*Want)[1][0]); // per-device streams
  O.SameInputs = true;
  auto Same = launch::makeLaunchArguments(L, nullptr, O);
  ASSERT_TRUE(bool(Same));
  EXPECT_EQ((*Same)[0][0], (*Same)[1][0]);
}

TEST(LaunchRunnerTest, TheCheckPassesAndCountsEveryElement) {
  auto M = parseModule(ModuleText);
  ASSERT_TRUE(M);
  bir::Launch L = makeLaunch();
  launch::CheckOptions O;
  O.Sim.FileName = "launch.json";
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  llvm::Expected<bool> Same = launch::checkAgainstHlo(*M, L, O, OS);
  ASSERT_TRUE(bool(Same)) << llvm::toString(Same.takeError());
  EXPECT_TRUE(*Same);
  EXPECT_EQ(OS.str(), "compared 16 elements on 2 devices: 0 differ\n");
}

TEST(LaunchRunnerTest, AWrongReductionIsCaught) {
  auto M = parseModule(ModuleText);
  ASSERT_TRUE(M);
  bir::Launch L = makeLaunch("Max");
  launch::CheckOptions O;
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  llvm::Expected<bool> Same = launch::checkAgainstHlo(*M, L, O, OS);
  ASSERT_TRUE(bool(Same)) << llvm::toString(Same.takeError());
  EXPECT_FALSE(*Same);
  EXPECT_NE(OS.str().find("compared 16 elements on 2 devices: "),
            std::string::npos);
  EXPECT_EQ(OS.str().find(": 0 differ"), std::string::npos) << OS.str();
  // The all-reduce sums across devices: hlo-run's f32 tolerance applies.
  EXPECT_NE(OS.str().find("first difference: device 0, output, element 0 "
                          "(index [0,0]): reference "),
            std::string::npos)
      << OS.str();
  EXPECT_NE(OS.str().find("(f32: rtol 1e-05, atol 1e-06)"), std::string::npos)
      << OS.str();
}

TEST(LaunchRunnerTest, AnOutputNeverWrittenIsAnError) {
  auto M = parseModule(ModuleText);
  ASSERT_TRUE(M);
  bir::Launch L = makeLaunch("Add", /*Write=*/false);
  launch::LaunchOptions O;
  O.Sim.FileName = "launch.json";
  auto Args = launch::makeLaunchArguments(L, M.get(), O);
  ASSERT_TRUE(bool(Args));
  auto Run = launch::runLaunch(L, *Args, O);
  ASSERT_FALSE(bool(Run));
  EXPECT_EQ(llvm::toString(Run.takeError()),
            "launch.json: device 0 output: byte 0 of location 'out' was never "
            "written");
}

TEST(LaunchRunnerTest, OnlySumsTakeATolerance) {
  auto M = parseModule(ModuleText);
  ASSERT_TRUE(M);
  EXPECT_TRUE(launch::isFedBySum(*M, -1, 1));
  auto E = parseModule(R"(HloModule e
ENTRY main {
  x = f32[2,4] parameter(0)
  y = f32[4,3] parameter(1)
  n = f32[2,4] negate(x)
  d = f32[2,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,4], f32[2,3]) tuple(n, d)
}
)");
  ASSERT_TRUE(E);
  EXPECT_FALSE(launch::isFedBySum(*E, 0, 2));
  // A dot sums k upwards on one core, as the interpreter; at lnc 2 the code
  // generator splits the contraction of a dot with fewer output tiles than
  // cores and at least two K tiles, and only that one.
  EXPECT_FALSE(launch::isFedBySum(*E, 1, 1));
  EXPECT_FALSE(launch::isFedBySum(*E, 1, 2));
  auto G = parseModule(R"(HloModule g
ENTRY main {
  x = f32[2,1024] parameter(0)
  y = f32[1024,3] parameter(1)
  d = f32[2,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,3]) tuple(d)
}
)");
  ASSERT_TRUE(G);
  EXPECT_FALSE(launch::isFedBySum(*G, 0, 1));
  EXPECT_TRUE(launch::isFedBySum(*G, 0, 2));
  EXPECT_TRUE(launch::isFedBySplitContraction(*G, 0, 2));
  EXPECT_FALSE(launch::isFedBySplitContraction(*M, -1, 2));
}

TEST(LaunchRunnerTest, OutputFilesAreHloRunsNames) {
  auto M = parseModule(ModuleText);
  ASSERT_TRUE(M);
  bir::Launch L = makeLaunch();
  L.Devices[1].Outputs[0].Index = {1, 0}; // as if leaf {1,0} of a tuple
  launch::LaunchOptions O;
  auto Args = launch::makeLaunchArguments(L, M.get(), O);
  ASSERT_TRUE(bool(Args));
  auto Run = launch::runLaunch(L, *Args, O);
  ASSERT_TRUE(bool(Run)) << llvm::toString(Run.takeError());
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("launch-out", Dir));
  ASSERT_FALSE(bool(launch::writeOutputs(Dir, *Run)));
  llvm::SmallString<128> A(Dir), B(Dir);
  llvm::sys::path::append(A, "device0.npy");
  llvm::sys::path::append(B, "device1_1_0.npy");
  EXPECT_TRUE(llvm::sys::fs::exists(A));
  EXPECT_TRUE(llvm::sys::fs::exists(B));
  llvm::sys::fs::remove_directories(Dir);
}

} // namespace
