//===- SemanticsTest.cpp - Element semantics and access-pattern walks ----===//
//
// convert(v, T) of docs/bir.md "Data types" at its edges, the reductions of
// the collectives, and the run-based walk of access patterns (merged
// dimensions, negative and zero steps, whole partitions).
//
//===----------------------------------------------------------------------===//

#include "../../lib/bir/sim/Semantics.h"

#include "loom/bir/ir/MemoryLocation.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace loom::bir;
using namespace loom::bir::sim;

namespace {

double roundTrip(DataType T, double V) {
  uint8_t B[4] = {};
  storeValue(T, V, B);
  return loadValue(T, B);
}

TEST(SemanticsTest, ConvertToFloatTypes) {
  EXPECT_EQ(roundTrip(DataType::FP8E4M3, 1000.0), 448.0); // saturates
  EXPECT_EQ(roundTrip(DataType::FP8E4M3, -1e30), -448.0);
  EXPECT_TRUE(std::isinf(roundTrip(DataType::FP16, 70000.0)));
  EXPECT_TRUE(std::isinf(roundTrip(DataType::FP8E5M2, 1e6)));
  EXPECT_TRUE(std::isnan(roundTrip(DataType::BF16, NAN)));
  // Ties to even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 in bf16.
  EXPECT_EQ(roundTrip(DataType::BF16, 1.0 + 1.0 / 256), 1.0);
  EXPECT_EQ(roundTrip(DataType::BF16, 1.0 + 3.0 / 256), 1.0 + 4.0 / 256);
  // One rounding from a double, not two through fp32.
  double JustAboveTie = 1.0 + 1.0 / 256 + 1e-12;
  EXPECT_EQ(roundTrip(DataType::BF16, JustAboveTie), 1.0 + 2.0 / 256);
}

TEST(SemanticsTest, ConvertToIntegerTypes) {
  EXPECT_EQ(roundTrip(DataType::INT8, 2.5), 2.0); // ties to even
  EXPECT_EQ(roundTrip(DataType::INT8, 3.5), 4.0);
  EXPECT_EQ(roundTrip(DataType::INT8, -300.0), -128.0);
  EXPECT_EQ(roundTrip(DataType::UINT8, -3.0), 0.0);
  EXPECT_EQ(roundTrip(DataType::UINT16, 1e9), 65535.0);
  EXPECT_EQ(roundTrip(DataType::INT32, NAN), 0.0);
  EXPECT_EQ(roundTrip(DataType::INT32, 1e20), 2147483647.0);
  EXPECT_EQ(roundTrip(DataType::UINT32, 4294967295.0), 4294967295.0);
}

TEST(SemanticsTest, ReductionsWrapIntegersAndRoundFloats) {
  // Integers wrap, as XLA's all-reduce of s8 does.
  int8_t Acc[2] = {100, -100}, In[2] = {100, -100};
  reduceInto(ReduceOp::Add, DataType::INT8, reinterpret_cast<uint8_t *>(In),
             reinterpret_cast<uint8_t *>(Acc), 2);
  EXPECT_EQ(Acc[0], -56);
  EXPECT_EQ(Acc[1], 56);
  int8_t Mx[1] = {-5}, Other[1] = {3};
  reduceInto(ReduceOp::Max, DataType::INT8, reinterpret_cast<uint8_t *>(Other),
             reinterpret_cast<uint8_t *>(Mx), 1);
  EXPECT_EQ(Mx[0], 3);
  // bf16: each fold step is converted back to bf16.
  uint8_t A[2], B[2];
  storeValue(DataType::BF16, 256.0, A);
  storeValue(DataType::BF16, 1.0, B);
  reduceInto(ReduceOp::Add, DataType::BF16, B, A, 1);
  EXPECT_EQ(loadValue(DataType::BF16, A), 256.0); // 257 is not a bf16
}

TEST(SemanticsTest, MatmulSumsInFp32) {
  // s: K=2 x M=1, x: K=2 x N=2; o = s^T x.
  float S[2] = {1.0f, 2.0f}, X[4] = {3.0f, 4.0f, 5.0f, 6.0f}, O[2] = {1, 1};
  matmul(DataType::FP32, reinterpret_cast<uint8_t *>(S), DataType::FP32,
         reinterpret_cast<uint8_t *>(X), 2, 1, 2, /*Accumulate=*/true, O);
  EXPECT_EQ(O[0], 1 + 1 * 3 + 2 * 5);
  EXPECT_EQ(O[1], 1 + 1 * 4 + 2 * 6);
}

Storage makeStorage(unsigned Partitions, uint64_t Bpp) {
  Storage S;
  S.Partitions = Partitions;
  S.BytesPerPartition = Bpp;
  S.Data.resize(Partitions * Bpp);
  S.Init.assign(Partitions * Bpp, 0);
  for (size_t I = 0; I < S.Data.size(); ++I)
    S.Data[I] = uint8_t(I);
  return S;
}

TEST(SemanticsTest, RunsMergeDimensionsAndPartitions) {
  // [[8, 2], [1, 8]] over 16-byte uint8 rows is one run of 16 bytes; whole
  // adjacent partitions are one run.
  AccessPattern AP(nullptr, 0, 4, 0, {{8, 2}, {1, 8}}, DataType::UINT8);
  RunShape Shape(AP, 16);
  EXPECT_TRUE(Shape.WholePartitions);
  std::vector<std::pair<uint64_t, uint64_t>> Runs;
  Shape.forEachRun(16, [&](uint64_t O, uint64_t N) { Runs.push_back({O, N}); });
  ASSERT_EQ(Runs.size(), 1u);
  EXPECT_EQ(Runs[0], std::make_pair(uint64_t(0), uint64_t(64)));

  // A strided pattern on partitions 1..2: element runs of 2 bytes (uint16),
  // 3 of them 4 bytes apart, from offset 2.
  AccessPattern Strided(nullptr, 1, 2, 2, {{2, 3}}, DataType::UINT16);
  RunShape S2(Strided, 16);
  Runs.clear();
  S2.forEachRun(16, [&](uint64_t O, uint64_t N) { Runs.push_back({O, N}); });
  std::vector<std::pair<uint64_t, uint64_t>> Want = {
      {18, 2}, {22, 2}, {26, 2}, {34, 2}, {38, 2}, {42, 2}};
  EXPECT_EQ(Runs, Want);
}

TEST(SemanticsTest, RunsOfNestedDimensionsInElementOrder) {
  // Two outer dimensions (one negative) around a 2-byte run.
  AccessPattern AP(nullptr, 0, 1, 16, {{-16, 2}, {4, 2}, {1, 2}},
                   DataType::UINT8);
  RunShape Shape(AP, 64);
  std::vector<std::pair<uint64_t, uint64_t>> Runs;
  Shape.forEachRun(64, [&](uint64_t O, uint64_t N) { Runs.push_back({O, N}); });
  std::vector<std::pair<uint64_t, uint64_t>> Want = {
      {16, 2}, {20, 2}, {0, 2}, {4, 2}};
  EXPECT_EQ(Runs, Want);
  EXPECT_EQ(Shape.runsPerPartition(), 4u);
}

TEST(SemanticsTest, GatherScatterInElementOrder) {
  Storage S = makeStorage(2, 8);
  S.AllInit = true;
  // Reverse each partition: offset 7, step -1.
  AccessPattern Rev(nullptr, 0, 2, 7, {{-1, 8}}, DataType::UINT8);
  std::vector<uint8_t> Buf;
  EXPECT_FALSE(gather(S, RunShape(Rev, 8), Buf).has_value());
  std::vector<uint8_t> Want = {7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8};
  EXPECT_EQ(Buf, Want);

  // A zero step writes one element repeatedly: the last value wins.
  Storage D = makeStorage(1, 4);
  AccessPattern Same(nullptr, 0, 1, 1, {{0, 3}}, DataType::UINT8);
  uint8_t Vals[3] = {10, 20, 30};
  scatter(D, RunShape(Same, 4), Vals);
  EXPECT_EQ(D.Data[1], 30);
  EXPECT_EQ(D.Init[1], 1);
  EXPECT_EQ(D.Init[0], 0);

  // Reading the unwritten byte 0 reports it.
  AccessPattern Two(nullptr, 0, 1, 0, {{1, 2}}, DataType::UINT8);
  std::optional<uint64_t> Bad = gather(D, RunShape(Two, 4), Buf);
  ASSERT_TRUE(Bad.has_value());
  EXPECT_EQ(*Bad, 0u);
}

TEST(SemanticsTest, CopyRunsReshapesAcrossPartitions) {
  // Two partitions of 4 bytes into one partition of 8.
  Storage Src = makeStorage(2, 4), Dst = makeStorage(1, 8);
  Src.AllInit = true;
  std::fill(Dst.Data.begin(), Dst.Data.end(), 0);
  AccessPattern In(nullptr, 0, 2, 0, {{1, 4}}, DataType::UINT8);
  AccessPattern Out(nullptr, 0, 1, 0, {{1, 8}}, DataType::UINT8);
  std::vector<std::pair<uint64_t, uint64_t>> Scratch;
  EXPECT_FALSE(
      copyRuns(Src, RunShape(In, 4), Dst, RunShape(Out, 8), Scratch).has_value());
  for (unsigned I = 0; I < 8; ++I)
    EXPECT_EQ(Dst.Data[I], I);
  // A copy over the whole storage marks it initialized at once.
  EXPECT_TRUE(Dst.AllInit);
  for (unsigned I = 0; I < 8; ++I)
    EXPECT_TRUE(Dst.isInit(I));
}

TEST(SemanticsTest, PartialWritesKeepPerByteFlags) {
  // Storage without flags: nothing is initialized, a read says where.
  Storage S = makeStorage(1, 8);
  S.Init.clear();
  AccessPattern Half(nullptr, 0, 1, 4, {{1, 4}}, DataType::UINT8);
  std::vector<uint8_t> Out;
  std::optional<uint64_t> Bad = gather(S, RunShape(Half, 8), Out);
  ASSERT_TRUE(Bad.has_value());
  EXPECT_EQ(*Bad, 4u);
  // A partial write allocates the flags and marks only what it wrote.
  const uint8_t Src[4] = {1, 2, 3, 4};
  scatter(S, RunShape(Half, 8), Src);
  EXPECT_FALSE(S.AllInit);
  EXPECT_FALSE(S.isInit(3));
  EXPECT_TRUE(S.isInit(4));
  EXPECT_FALSE(gather(S, RunShape(Half, 8), Out).has_value());
  AccessPattern All(nullptr, 0, 1, 0, {{1, 8}}, DataType::UINT8);
  EXPECT_EQ(gather(S, RunShape(All, 8), Out), std::optional<uint64_t>(0));
}

} // namespace
