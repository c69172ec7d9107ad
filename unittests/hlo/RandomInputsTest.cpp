// Unit tests of the seeded parameter values: the same seed gives the same
// values (pinned bit for bit, so a change of generator is noticed), devices
// and parameters get different values, and every element lies in its
// documented range.
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/parser/HloParser.h"

#include "HloTestUtil.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

using namespace loom::hlo;

namespace {

using testutil::Parse;

const char *kModule = R"(
HloModule m, replica_count=2, num_partitions=2

ENTRY %main {
  %a = f32[4,8] parameter(0)
  %b = (s32[16], (pred[16], token[]), u8[16]) parameter(1)
  %c = bf16[64] parameter(2)
  ROOT %t = (f32[4,8], (s32[16], (pred[16], token[]), u8[16]), bf16[64]) tuple(%a, %b, %c)
}
)";

TEST(RandomInputsTest, OneListPerDeviceInParameterOrder) {
  auto module = Parse(kModule);
  ASSERT_TRUE(module);
  auto args = llvm::cantFail(MakeRandomArguments(*module, 5));
  ASSERT_EQ(args.size(), 4u);
  for (const auto &device : args) {
    ASSERT_EQ(device.size(), 3u);
    EXPECT_TRUE(device[0].shape().Compatible(Shape(PrimitiveType::F32, {4, 8})));
    ASSERT_TRUE(device[1].IsTuple());
    EXPECT_TRUE(device[1].tuple_elements()[1].tuple_elements()[1].IsToken());
  }
}

TEST(RandomInputsTest, SameSeedSameValuesOtherwiseDifferent) {
  auto module = Parse(kModule);
  ASSERT_TRUE(module);
  auto a = llvm::cantFail(MakeRandomArguments(*module, 5));
  auto b = llvm::cantFail(MakeRandomArguments(*module, 5));
  auto c = llvm::cantFail(MakeRandomArguments(*module, 6));
  for (size_t d = 0; d < a.size(); ++d)
    for (size_t p = 0; p < a[d].size(); ++p) {
      EXPECT_TRUE(a[d][p] == b[d][p]);
      EXPECT_FALSE(a[d][p] == c[d][p]);
      if (d > 0) {
        EXPECT_FALSE(a[d][p] == a[0][p]) << "device " << d << " param " << p;
      }
    }
  EXPECT_FALSE(a[0][0].GetAsDouble(0) == a[0][2].GetAsDouble(0));
}

TEST(RandomInputsTest, ValuesAreInTheirRanges) {
  auto module = Parse(kModule);
  ASSERT_TRUE(module);
  auto args = llvm::cantFail(MakeRandomArguments(*module, 11));
  bool saw_true = false, saw_false = false, saw_negative = false;
  for (const auto &device : args) {
    for (const Literal *floats : {&device[0], &device[2]})
      for (int64_t i = 0; i < floats->element_count(); ++i) {
        double v = floats->GetAsDouble(i);
        EXPECT_GE(v, -1.0);
        EXPECT_LE(v, 1.0); // bf16 rounding may reach 1.0 itself
        saw_negative |= v < 0;
      }
    const Literal &s32 = device[1].tuple_elements()[0];
    const Literal &pred = device[1].tuple_elements()[1].tuple_elements()[0];
    const Literal &u8 = device[1].tuple_elements()[2];
    for (int64_t i = 0; i < 16; ++i) {
      EXPECT_GE(s32.GetAsInt64(i), -8);
      EXPECT_LT(s32.GetAsInt64(i), 8);
      EXPECT_LT(u8.GetAsInt64(i), 16);
      (pred.GetAsBool(i) ? saw_true : saw_false) = true;
    }
  }
  EXPECT_TRUE(saw_true && saw_false && saw_negative);
}

TEST(RandomInputsTest, StreamIsPinned) {
  // Changing the generator changes every recorded failure's inputs; this
  // pins it (splitmix64, 53-bit uniforms in [-1, 1)).
  Literal l = MakeRandomLiteral(Shape(PrimitiveType::F64, {2}), 0, 0, 0);
  Literal again = MakeRandomLiteral(Shape(PrimitiveType::F64, {2}), 0, 0, 0);
  EXPECT_TRUE(l == again);
  SplitMix64 rng(0);
  EXPECT_EQ(rng.Next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.Next(), 0x6e789e6aa1b965f4ULL);
}

} // namespace

TEST(RandomInputs, RefusesParametersTheInterpreterCannotHold) {
  auto module = ParseHloModule(R"(
HloModule big, replica_count=2
ENTRY e {
  ROOT p = f32[65536,65536] parameter(0)
})");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  auto args = MakeRandomArguments(**module, 1);
  ASSERT_FALSE(bool(args));
  EXPECT_NE(llvm::toString(args.takeError()).find("parameter 'p'"), std::string::npos);

  EvalOptions small;
  small.max_live_bytes = 1000;
  auto tuple = ParseHloModule(R"(
HloModule t, replica_count=2
ENTRY e {
  ROOT p = (f32[100], s8[200]) parameter(0)
})");
  ASSERT_TRUE(bool(tuple)) << llvm::toString(tuple.takeError());
  auto refused = MakeRandomArguments(**tuple, 1, small);
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("bytes of live values"), std::string::npos);
  small.max_live_bytes = 1200;
  EXPECT_TRUE(bool(llvm::cantFail(MakeRandomArguments(**tuple, 1, small)).size() == 2));
}

namespace {

// A replicated parameter has device 0's values everywhere; a sharded one
// (or one without sharding) differs per device unless every parameter is
// asked to be the same.
TEST(RandomInputsTest, ReplicatedParametersAreEqualOnEveryDevice) {
  auto module = Parse(R"(
HloModule m, num_partitions=4

ENTRY %main {
  %r = f32[8] parameter(0), sharding={replicated}
  %s = f32[8] parameter(1), sharding={devices=[4]<=[4]}
  %t = (f32[2], s32[]) parameter(2), sharding={{replicated}, {replicated}}
  %u = (f32[2], s32[]) parameter(3), sharding={{replicated}, {maximal device=0}}
  ROOT %out = (f32[8], f32[8], (f32[2], s32[]), (f32[2], s32[])) tuple(%r, %s, %t, %u)
}
)");
  ASSERT_TRUE(module);
  const HloComputation *entry = module->entry_computation();
  EXPECT_TRUE(IsReplicatedParameter(*entry->parameter_instruction(0)));
  EXPECT_FALSE(IsReplicatedParameter(*entry->parameter_instruction(1)));
  EXPECT_TRUE(IsReplicatedParameter(*entry->parameter_instruction(2)));
  EXPECT_FALSE(IsReplicatedParameter(*entry->parameter_instruction(3)));
  auto args = llvm::cantFail(MakeRandomArguments(*module, 3));
  ASSERT_EQ(args.size(), 4u);
  for (size_t d = 1; d < 4; ++d) {
    EXPECT_EQ(args[d][0], args[0][0]) << d;
    EXPECT_NE(args[d][1], args[0][1]) << d;
    EXPECT_EQ(args[d][2], args[0][2]) << d;
    EXPECT_NE(args[d][3], args[0][3]) << d;
  }
  // Device 0 keeps its own stream: the values do not depend on replication.
  EXPECT_EQ(args[0][0], MakeRandomLiteral(entry->parameter_instruction(0)->shape(), 3, 0, 0));
  auto same = llvm::cantFail(MakeRandomArguments(*module, 3, EvalOptions(), true));
  for (size_t d = 1; d < 4; ++d)
    for (size_t p = 0; p < 4; ++p)
      EXPECT_EQ(same[d][p], same[0][p]) << d << " " << p;
}

} // namespace
