//===- LaunchJsonTest.cpp - Loading and saving launch documents -----------===//

#include "BirTestModules.h"

#include "loom/bir/ir/Launch.h"
#include "loom/bir/json/LaunchJson.h"

#include "gtest/gtest.h"

using namespace loom::bir;
using namespace loom::bir::test;

namespace {

/// Device D of a launch of one replica and two partitions: it copies its
/// parameter "x" (f32[2,4], SharedDRAM) to its output "y".
std::unique_ptr<Module> copyModule(unsigned Lnc) {
  auto M = std::make_unique<Module>("copy", 0, 0, TargetOptions{Lnc, Target::Trn2});
  MemoryLocation *X =
      addLocation(*M, "x", 0, MemoryKind::SharedDRAM, DataType::FP32, 2, 16);
  MemoryLocation *Y =
      addLocation(*M, "y", 1, MemoryKind::SharedDRAM, DataType::FP32, 2, 16);
  BasicBlock *BB = M->createBlock("entry");
  Instruction *C =
      BB->append(std::make_unique<InstDMACopy>("c", Engine::DMA0, false));
  C->addInput(AccessPattern(X, 0, 2, 0, {{1, 4}}, DataType::FP32));
  C->addOutput(AccessPattern(Y, 0, 2, 0, {{1, 4}}, DataType::FP32));
  BB->append(std::make_unique<InstBranch>("ret", Engine::SP, BranchKind::Return));
  return M;
}

Launch twoDeviceLaunch() {
  Launch L;
  L.HloModule = "m";
  L.ReplicaCount = 1;
  L.NumPartitions = 2;
  L.LncSize = 1;
  for (unsigned D = 0; D < 2; ++D) {
    LaunchDevice Dev;
    Dev.Device = D;
    Dev.Replica = 0;
    Dev.Partition = D;
    Dev.Parameters.push_back({0, "p0", {}, "f32[2,4]", 0, "x"});
    Dev.Outputs.push_back({0, "", {0}, "f32[2,4]", 0, "y"});
    Dev.Modules.push_back(copyModule(1));
    L.Devices.push_back(std::move(Dev));
  }
  return L;
}

std::string loadError(const std::string &Text) {
  llvm::Expected<Launch> L = parseLaunch(Text, "l.json");
  return L ? "" : llvm::toString(L.takeError());
}

std::string replaceOnce(std::string Text, const std::string &From,
                        const std::string &To) {
  size_t At = Text.find(From);
  EXPECT_NE(At, std::string::npos) << From;
  return At == std::string::npos ? Text : Text.replace(At, From.size(), To);
}

TEST(LaunchJson, SavesLoadsAndSavesTheSameBytes) {
  Launch L = twoDeviceLaunch();
  ASSERT_EQ(errorText(verifyLaunch(L)), "");
  std::string Text = formatLaunch(L);
  llvm::Expected<Launch> Back = parseLaunch(Text, "l.json");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(formatLaunch(*Back), Text);
  EXPECT_EQ(Back->HloModule, "m");
  EXPECT_EQ(Back->NumPartitions, 2u);
  ASSERT_EQ(Back->Devices.size(), 2u);
  EXPECT_EQ(Back->Devices[1].Partition, 1u);
  EXPECT_EQ(Back->Devices[1].Parameters[0].Name, "p0");
  EXPECT_EQ(Back->Devices[1].Outputs[0].Index, std::vector<unsigned>{0});
  EXPECT_EQ(Back->Devices[1].Modules.size(), 1u);
  // The spelling docs/bir.md shows.
  EXPECT_NE(Text.find(R"("launch": {)"), std::string::npos) << Text;
  EXPECT_NE(Text.find(R"({"index":[],"memloc":"x","name":"p0","parameter":0,"shape":"f32[2,4]","subgraph":0})"),
            std::string::npos)
      << Text;
}

TEST(LaunchJson, TellsLaunchesFromPrograms) {
  EXPECT_EQ(getDocumentKind(formatLaunch(twoDeviceLaunch())),
            DocumentKind::Launch);
  Program P;
  P.push_back(copyModule(1));
  EXPECT_EQ(getDocumentKind(formatProgram(P)), DocumentKind::Program);
  EXPECT_EQ(getDocumentKind(R"( {"version": 1, "launch": {}})"),
            DocumentKind::Launch);
  // Keys of nested objects do not count.
  EXPECT_EQ(getDocumentKind(R"({"x": {"launch": 1}, "modules": []})"),
            DocumentKind::Program);
  EXPECT_EQ(getDocumentKind(R"({"x": "launch"})"), DocumentKind::Unknown);
  EXPECT_EQ(getDocumentKind("[1]"), DocumentKind::Unknown);
  EXPECT_EQ(getDocumentKind(R"({"a": "\"launch)"), DocumentKind::Unknown);
}

TEST(LaunchJson, LoadErrorsNameThePath) {
  std::string Good = formatLaunch(twoDeviceLaunch());
  EXPECT_EQ(loadError(Good), "");
  EXPECT_EQ(loadError(""), "l.json: empty document");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("version": 1)", R"("version": 2)")),
            "l.json: $.version: version 2 is not 1, the one loom reads");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("hlo_module": "m")",
                                  R"("hlo_module": "m", "extra": 1)")),
            "l.json: $.launch.extra: unknown field; expected one of devices, "
            "hlo_module, lnc_size, num_partitions, replica_count, target");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("num_partitions": 2)",
                                  R"("num_partitions": 3)")),
            "l.json: $.launch.devices: 2 devices; replica_count * "
            "num_partitions is 3");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("partition": 1)",
                                  R"("partition": 0)")),
            "l.json: $.launch.devices[1]: device 1, replica 0, partition 0; "
            "entry 1 must be device 1, replica 0, partition 1");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("memloc":"x","name")",
                                  R"("memloc":"z","name")")),
            "l.json: $.launch.devices[0].parameters[0].memloc: subgraph 0 has "
            "no location 'z'");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("shape":"f32[2,4]")",
                                  R"("shape":"f32[2,5]")")),
            "l.json: $.launch.devices[0].outputs[0].memloc: 'y' holds 8 "
            "elements, the shape f32[2,5] has 10");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("shape":"f32[2,4]")",
                                  R"("shape":"s32[2,4]")")),
            "l.json: $.launch.devices[0].outputs[0].memloc: 'y' holds "
            "fp32, the shape s32[2,4] needs int32");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("shape":"f32[2,4]")",
                                  R"("shape":"c64[2]")")),
            "l.json: $.launch.devices[0].outputs[0].shape: 'c64[2]' is not "
            "an array shape of a lowered element type");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("lnc_size":1,"target":"trn2"})",
                                  R"("lnc_size":2,"target":"trn2"})")),
            "l.json: $.launch.devices[0].modules[0].pass_options: lnc_size 2, "
            "target trn2; the launch has lnc_size 1, target trn2");
  // A module's own error carries its path inside the device.
  EXPECT_EQ(loadError(replaceOnce(Good, R"("engine": "DMA0")",
                                  R"("engine": "DMA99")")),
            "l.json: $.launch.devices[0].modules[0].blocks[0].instructions[0]."
            "engine: unknown value 'DMA99'; expected one of PE, ACT, DVE, "
            "POOL, SP, DMA0, DMA1, DMA2, DMA3, DMA4, DMA5, DMA6, DMA7, DMA8, "
            "DMA9, DMA10, DMA11, DMA12, DMA13, DMA14, DMA15");
  EXPECT_EQ(loadError(replaceOnce(Good, R"("version": 1)", R"("version": 1,)")),
            "l.json:150:2: not valid JSON: Expected object key");
}

TEST(LaunchJson, VerifierErrorsNameTheDevice) {
  Launch L = twoDeviceLaunch();
  // Two modules for one subgraph and core.
  L.Devices[1].Modules.push_back(copyModule(1));
  std::string E = errorText(verifyLaunch(L));
  EXPECT_EQ(E.rfind("$.launch.devices[1].modules[1]", 0), 0u) << E;
}

TEST(LaunchJson, LoadOptionsApplyToEveryModule) {
  std::string Text = formatLaunch(twoDeviceLaunch());
  LoadOptions O;
  O.Arch = Target::Generic;
  llvm::Expected<Launch> L = parseLaunch(Text, "l.json", O);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  EXPECT_EQ(L->Arch, Target::Generic);
  EXPECT_EQ(L->Devices[1].Modules[0]->getTargetOptions().Arch, Target::Generic);
}

TEST(LaunchJson, HloTypes) {
  EXPECT_EQ(getBirTypeOfHloType("pred"), DataType::UINT8);
  EXPECT_EQ(getBirTypeOfHloType("f8e4m3fn"), DataType::FP8E4M3);
  EXPECT_EQ(getBirTypeOfHloType("bf16"), DataType::BF16);
  EXPECT_EQ(getBirTypeOfHloType("s64"), DataType::INT64);
  EXPECT_EQ(getBirTypeOfHloType("u64"), DataType::UINT64);
  EXPECT_EQ(getBirTypeOfHloType("f64"), std::nullopt);
  EXPECT_EQ(getBirTypeOfHloType("f8e4m3"), std::nullopt);
}

} // namespace
