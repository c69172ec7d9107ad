// Unit tests of the cost model (docs/cost-model.md): the exact values of its
// formulas with the default parameters, the shapes the public DMA guidance
// describes (time grows with bytes, small transfers are dominated by the
// fixed cost, accumulating is slower, descriptors cost), the collectives'
// bus-bandwidth factors, a duration for every opcode, and the `--cost
// NAME=VALUE` plumbing with its errors.
#include "loom/bir/analysis/CostModel.h"

#include "loom/bir/ir/Instructions.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <set>

using namespace loom::bir;
using namespace loom::bir::analysis;

namespace {

std::string errorOf(llvm::Error E) { return E ? llvm::toString(std::move(E)) : "<no error>"; }

// The cost model reads only shapes and types, never the location.
AccessPattern tile(unsigned Partitions, std::vector<PatternDim> Pattern, DataType T) {
  return AccessPattern(nullptr, 0, Partitions, 0, std::move(Pattern), T);
}

TEST(CostModelTest, DmaFormulaWithDefaults) {
  CostModel M;
  // 1300 ns + (bytes + 256 per chunk) / 23 B/ns.
  EXPECT_DOUBLE_EQ(M.dmaCopyNs(4096, 1, false), 1300 + (4096.0 + 256) / 23);
  EXPECT_DOUBLE_EQ(M.dmaCopyNs(4096, 1, true), 1300 + (4096.0 + 256) / 11.5);
  EXPECT_DOUBLE_EQ(M.dmaCopyNs(0, 0, false), 1300);
}

TEST(CostModelTest, DmaTimeGrowsWithBytesAndAccumulateIsSlower) {
  CostModel M;
  double Prev = 0;
  for (uint64_t Bytes = 1; Bytes <= (1u << 24); Bytes *= 2) {
    double T = M.dmaCopyNs(Bytes, 128, false);
    EXPECT_GT(T, Prev) << Bytes;
    Prev = T;
    double Acc = M.dmaCopyNs(Bytes, 128, true);
    EXPECT_GT(Acc, T);
    // Half the throughput: the transfer part doubles, the fixed part stays.
    EXPECT_DOUBLE_EQ(Acc - 1300, 2 * (T - 1300));
  }
}

TEST(CostModelTest, SmallTransfersAreOverheadBound) {
  CostModel M;
  // One partition of 128 B: the fixed cost is over 95% of the time.
  EXPECT_GT(1300 / M.dmaCopyNs(128, 1, false), 0.95);
  // Per descriptor, 256 B is the break-even: half the transfer time is
  // overhead at 256 B per chunk, about 11% at 2 KiB, 6% at 4 KiB.
  auto OverheadShare = [&](uint64_t BytesPerChunk) {
    double T = M.dmaCopyNs(BytesPerChunk * 128, 128, false) - 1300;
    return (128 * 256 / 23.0) / T;
  };
  EXPECT_DOUBLE_EQ(OverheadShare(256), 0.5);
  EXPECT_NEAR(OverheadShare(2048), 0.111, 0.001);
  EXPECT_NEAR(OverheadShare(4096), 0.059, 0.001);
}

TEST(CostModelTest, ChunksCountContiguousRuns) {
  // Contiguous rows: one chunk per partition.
  EXPECT_EQ(CostModel::getDmaChunks(tile(128, {{1, 256}}, DataType::FP32)), 128u);
  // A row of 4 x 64 contiguous elements is still one run.
  EXPECT_EQ(CostModel::getDmaChunks(tile(2, {{64, 4}, {1, 64}}, DataType::FP32)), 2u);
  // Strided rows: 4 runs of 64 in each partition.
  EXPECT_EQ(CostModel::getDmaChunks(tile(2, {{256, 4}, {1, 64}}, DataType::FP32)), 8u);
  // Every element alone: reversed, broadcast, strided.
  EXPECT_EQ(CostModel::getDmaChunks(tile(1, {{-1, 8}}, DataType::FP32)), 8u);
  EXPECT_EQ(CostModel::getDmaChunks(tile(1, {{0, 8}}, DataType::FP32)), 8u);
  EXPECT_EQ(CostModel::getDmaChunks(tile(3, {{2, 8}}, DataType::INT8)), 24u);
  // Count-1 dimensions and an empty pattern change nothing.
  EXPECT_EQ(CostModel::getDmaChunks(tile(1, {{7, 1}, {1, 16}, {99, 1}}, DataType::FP16)), 1u);
  EXPECT_EQ(CostModel::getDmaChunks(tile(4, {}, DataType::FP16)), 4u);
}

TEST(CostModelTest, DmaCopyInstructionUsesItsOperands) {
  CostModel M;
  InstDMACopy Copy("c", static_cast<Engine>(static_cast<unsigned>(Engine::DMA0) + 3), false);
  Copy.addInput(tile(128, {{1, 256}}, DataType::BF16));
  Copy.addOutput(tile(1, {{1, 128 * 256}}, DataType::BF16));
  // 64 KiB; the SBUF side needs 128 descriptors, the DRAM side one.
  EXPECT_DOUBLE_EQ(M.instructionNs(Copy), M.dmaCopyNs(128 * 256 * 2, 128, false));
  InstDMACopy Acc("a", Engine::DMA0, true);
  Acc.addInput(tile(128, {{1, 256}}, DataType::FP32));
  Acc.addOutput(tile(128, {{1, 256}}, DataType::FP32));
  EXPECT_DOUBLE_EQ(M.instructionNs(Acc), M.dmaCopyNs(128 * 1024, 128, true));
}

TEST(CostModelTest, Sb2sbCountsFourByteLanes) {
  CostModel M;
  EXPECT_DOUBLE_EQ(M.sb2sbNs(1024, 128), 600 + 1024.0 * 128 / 19.2);
  // 256 elements per partition cost the same whatever their type.
  for (DataType T : {DataType::FP32, DataType::BF16, DataType::INT8}) {
    InstGPSIMDSB2SB S("s", Engine::POOL, true);
    S.addInput(tile(128, {{1, 256}}, T));
    S.addOutput(tile(128, {{1, 256}}, T));
    EXPECT_DOUBLE_EQ(M.instructionNs(S), M.sb2sbNs(1024, 128));
  }
  InstGPSIMDSB2SB Small("s", Engine::POOL, false);
  Small.addInput(tile(16, {{1, 10}}, DataType::FP16));
  Small.addOutput(tile(16, {{1, 10}}, DataType::FP16));
  EXPECT_DOUBLE_EQ(M.instructionNs(Small), 600 + 40.0 * 16 / 19.2);
}

TEST(CostModelTest, CollectivesFollowTheBusBandwidthModel) {
  CostModel M;
  const double Base = 1200 + 1300, Rate = 16 * 23.0;
  const uint64_t B = 1 << 20;
  for (unsigned N : {2u, 4u, 8u}) {
    SCOPED_TRACE(N);
    double Share = (N - 1.0) / N;
    EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::AllReduce, N, B),
                     Base + Share * B / Rate + Share * B / (Rate * 0.5));
    EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::ReduceScatter, N, B),
                     Base + Share * B / (Rate * 0.5));
    EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::AllGather, N, B), Base + (N - 1.0) * B / Rate);
    EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::AllToAll, N, B), Base + Share * B / Rate);
    EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::Permute, N, B), Base + B / Rate);
  }
  EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::SendRecv, 2, B), Base + B / Rate);
  EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::PermuteReduce, 2, B), Base + B / (Rate / 2));
  // A group of one moves nothing.
  EXPECT_DOUBLE_EQ(M.collectiveNs(CollectiveKind::AllReduce, 1, B), Base);

  InstCollectiveCompute C("ar", Engine::POOL, CollectiveKind::AllReduce, {0, 1}, ReduceOp::Add,
                          true);
  C.addInput(tile(128, {{1, 512}}, DataType::FP32));
  C.addOutput(tile(128, {{1, 512}}, DataType::FP32));
  EXPECT_DOUBLE_EQ(M.instructionNs(C), M.collectiveNs(CollectiveKind::AllReduce, 2, 128 * 2048));
}

TEST(CostModelTest, ComputeEngines) {
  CostModel M;
  InstMatmul MM("mm", Engine::PE, false);
  MM.addInput(tile(64, {{1, 32}}, DataType::BF16));
  MM.addInput(tile(64, {{1, 512}}, DataType::BF16));
  MM.addOutput(tile(32, {{1, 512}}, DataType::FP32));
  EXPECT_DOUBLE_EQ(M.instructionNs(MM), 64 + 2.0 * 128 * 128 * 512 / 79000);
  InstMatmul MM8("mm8", Engine::PE, false);
  MM8.addInput(tile(128, {{1, 128}}, DataType::FP8E4M3));
  MM8.addInput(tile(128, {{1, 100}}, DataType::FP8E4M3));
  EXPECT_DOUBLE_EQ(M.instructionNs(MM8), 64 + 2.0 * 128 * 128 * 100 / 158000);
  InstMatmul MM32("mm32", Engine::PE, true);
  MM32.addInput(tile(128, {{1, 128}}, DataType::FP32));
  MM32.addInput(tile(128, {{1, 100}}, DataType::FP32));
  EXPECT_DOUBLE_EQ(M.instructionNs(MM32), 64 + 2.0 * 128 * 128 * 100 / 22625);

  InstActivation Act("act", Engine::ACT, ActivationFunc::Exp, 1.0);
  Act.addInput(tile(128, {{1, 700}}, DataType::FP32));
  Act.addOutput(tile(128, {{1, 700}}, DataType::BF16));
  EXPECT_DOUBLE_EQ(M.instructionNs(Act), 64 + 700 / 1.4);
  // The same copy on each engine that can run it, at that engine's rate.
  for (auto [E, Rate] : {std::pair{Engine::ACT, 1.4}, {Engine::DVE, 1.4}, {Engine::POOL, 1.2}}) {
    InstTensorCopy TC("tc", E);
    TC.addInput(tile(128, {{1, 300}}, DataType::FP32));
    TC.addOutput(tile(128, {{1, 300}}, DataType::FP16));
    EXPECT_DOUBLE_EQ(M.instructionNs(TC), 64 + 300 / Rate);
  }
  InstTensorTensor TT("tt", Engine::DVE, ArithOp::Add);
  TT.addInput(tile(128, {{1, 64}}, DataType::FP32));
  TT.addInput(tile(128, {{1, 64}}, DataType::FP32));
  TT.addOutput(tile(128, {{1, 64}}, DataType::FP32));
  EXPECT_DOUBLE_EQ(M.instructionNs(TT), 64 + 64 / 1.4);
  InstMemset MS("ms", Engine::POOL, 0.0);
  MS.addOutput(tile(128, {{1, 120}}, DataType::INT32));
  EXPECT_DOUBLE_EQ(M.instructionNs(MS), 64 + 120 / 1.2);
}

TEST(CostModelTest, SynchronizationAndControl) {
  CostModel M;
  InstCoreBarrier B("cb", Engine::POOL, 0, {0, 1});
  EXPECT_DOUBLE_EQ(M.instructionNs(B), 1200);
  InstTensorCompletion TC("tc", Engine::SP);
  EXPECT_DOUBLE_EQ(M.instructionNs(TC), 64);
  InstSemaphoreWait W("w", Engine::POOL, "sem", 1);
  EXPECT_DOUBLE_EQ(M.instructionNs(W), 64);
  InstBranch Br("br", Engine::SP, BranchKind::Return);
  EXPECT_DOUBLE_EQ(M.instructionNs(Br), 64);
}

TEST(CostModelTest, ParametersAreSettableByName) {
  // Every parameter has a unique name, a unit and a description, and
  // setting it is visible through getCostModelParam and in the durations.
  std::set<std::string> Names;
  for (const CostModelParamInfo &Info : getCostModelParamInfos()) {
    EXPECT_TRUE(Names.insert(Info.Name.str()).second) << Info.Name.str();
    EXPECT_FALSE(Info.Unit.empty());
    EXPECT_FALSE(Info.Description.empty());
    CostModelParams P;
    ASSERT_FALSE(setCostModelParam(P, Info.Name, 7)) << Info.Name.str();
    EXPECT_EQ(getCostModelParam(P, Info.Name), 7.0);
  }
  EXPECT_EQ(Names.size(), 18u);

  CostModelParams P;
  ASSERT_FALSE(parseCostModelAssignment(P, "dma-fixed-ns=600"));
  ASSERT_FALSE(parseCostModelAssignment(P, " dma-bytes-per-ns = 46 "));
  EXPECT_DOUBLE_EQ(CostModel(P).dmaCopyNs(4096, 1, false), 600 + (4096.0 + 256) / 46);
  ASSERT_FALSE(setCostModelParam(P, "dma-engines-per-core", 8));
  EXPECT_EQ(P.DmaEnginesPerCore, 8u);
  ASSERT_FALSE(setCostModelParam(P, "barrier-ns", 0)); // a latency may be 0
  EXPECT_EQ(getCostModelParam(P, "no-such"), std::nullopt);
}

TEST(CostModelTest, BadParametersAreRefusedWithAReason) {
  CostModelParams P;
  EXPECT_NE(errorOf(setCostModelParam(P, "dma-speed", 1)).find("unknown cost model parameter 'dma-speed'"),
            std::string::npos);
  EXPECT_NE(errorOf(setCostModelParam(P, "dma-bytes-per-ns", 0)).find("greater than 0"),
            std::string::npos);
  EXPECT_NE(errorOf(setCostModelParam(P, "dma-fixed-ns", -1)).find("at least 0"),
            std::string::npos);
  EXPECT_NE(errorOf(setCostModelParam(P, "dma-fixed-ns", std::nan(""))).find("finite"),
            std::string::npos);
  EXPECT_NE(errorOf(setCostModelParam(P, "dma-engines-per-core", 2.5)).find("whole number"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostModelAssignment(P, "dma-fixed-ns")).find("expected NAME=VALUE"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCostModelAssignment(P, "dma-fixed-ns=fast")).find("is not a number"),
            std::string::npos);
  // Nothing was changed by the refused assignments.
  EXPECT_EQ(P.DmaFixedNs, 1300);
  EXPECT_EQ(P.DmaBytesPerNs, 23);
  EXPECT_EQ(P.DmaEnginesPerCore, 16u);
}

} // namespace
