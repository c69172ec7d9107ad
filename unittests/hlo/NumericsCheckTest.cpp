// Unit tests of the comparison behind `hlo-run --compare` and
// `hlo-opt --check-numerics`: exact integers, per-type float tolerances,
// NaN and infinity rules, tuple paths in the report, and CheckNumerics
// catching a hand-broken fusion (the custom-call reads the wrong weight)
// while accepting what neuron_looped_einsum_replacer produces.
#include "loom/hlo/eval/NumericsCheck.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"

#include "HloTestUtil.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace loom::hlo;

namespace {

Literal Vector(PrimitiveType type, std::vector<double> values) {
  Literal l(Shape(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i)
    l.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

ComparisonSummary Compare(const Literal &reference, const Literal &candidate,
                          NumericsCheckOptions options = {}) {
  auto summary = CompareLiterals(reference, candidate, options, "device 0");
  if (!summary) {
    ADD_FAILURE() << llvm::toString(summary.takeError());
    return {};
  }
  return *summary;
}

using testutil::Parse;

TEST(NumericsCheckTest, IntegersAreExact) {
  Literal a = Vector(PrimitiveType::S32, {1, 2, 3, 4});
  Literal b = Vector(PrimitiveType::S32, {1, 2, 5, 4});
  ComparisonSummary s = Compare(a, b);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.elements_compared, 4);
  EXPECT_EQ(s.elements_differing, 1);
  EXPECT_EQ(s.max_abs_error, 2);
  EXPECT_EQ(s.first_mismatch,
            "device 0, output, element 2 (index [2]): reference 3, candidate 5 (s32: exact)");
  // Tolerances never apply to integers.
  NumericsCheckOptions loose;
  loose.atol = 100;
  EXPECT_FALSE(Compare(a, b, loose).ok());
  EXPECT_TRUE(Compare(a, a).ok());
}

TEST(NumericsCheckTest, FloatTolerancesDependOnTheType) {
  // One bf16 ulp at 1.0 is 2^-7: inside bf16's tolerance, far outside f32's.
  EXPECT_TRUE(
      Compare(Vector(PrimitiveType::BF16, {1.0}), Vector(PrimitiveType::BF16, {1.0078125})).ok());
  ComparisonSummary f32 =
      Compare(Vector(PrimitiveType::F32, {1.0}), Vector(PrimitiveType::F32, {1.0078125}));
  EXPECT_FALSE(f32.ok());
  EXPECT_NE(f32.first_mismatch.find("(f32: rtol 1e-05, atol 1e-06)"), std::string::npos)
      << f32.first_mismatch;
  EXPECT_DOUBLE_EQ(f32.max_abs_error, 0.0078125);
  EXPECT_DOUBLE_EQ(f32.max_rel_error, 0.0078125);
  NumericsCheckOptions loose;
  loose.rtol = 1e-2;
  EXPECT_TRUE(
      Compare(Vector(PrimitiveType::F32, {1.0}), Vector(PrimitiveType::F32, {1.0078125}), loose)
          .ok());
  EXPECT_EQ(DefaultTolerance(PrimitiveType::BF16).rtol, 1e-2);
  EXPECT_EQ(DefaultTolerance(PrimitiveType::S8).rtol, 0);
}

TEST(NumericsCheckTest, NanAndInfinity) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(Compare(Vector(PrimitiveType::F32, {nan, inf, -inf}),
                      Vector(PrimitiveType::F32, {nan, inf, -inf}))
                  .ok());
  EXPECT_FALSE(Compare(Vector(PrimitiveType::F32, {nan}), Vector(PrimitiveType::F32, {0})).ok());
  EXPECT_FALSE(Compare(Vector(PrimitiveType::F32, {0}), Vector(PrimitiveType::F32, {nan})).ok());
  EXPECT_FALSE(Compare(Vector(PrimitiveType::F32, {inf}), Vector(PrimitiveType::F32, {-inf})).ok());
  EXPECT_FALSE(Compare(Vector(PrimitiveType::F32, {inf}), Vector(PrimitiveType::F32, {1e30})).ok());
  // A zero reference: any difference has an infinite relative error.
  ComparisonSummary zero =
      Compare(Vector(PrimitiveType::F32, {0}), Vector(PrimitiveType::F32, {1e-7}));
  EXPECT_TRUE(zero.ok()); // within atol
  EXPECT_TRUE(std::isinf(zero.max_rel_error));
}

TEST(NumericsCheckTest, TupleLeavesAreNamedByPath) {
  Literal a = Literal::MakeTuple(
      {Vector(PrimitiveType::F32, {1}), Literal::MakeTuple({Vector(PrimitiveType::PRED, {1, 0})})});
  Literal b = Literal::MakeTuple(
      {Vector(PrimitiveType::F32, {1}), Literal::MakeTuple({Vector(PrimitiveType::PRED, {1, 1})})});
  ComparisonSummary s = Compare(a, b);
  EXPECT_EQ(s.first_mismatch, "device 0, output {1,0}, element 1 (index [1]): reference false, "
                              "candidate true (pred: exact)");
  auto mismatch = CompareLiterals(a, Vector(PrimitiveType::F32, {1}), {}, "device 3");
  ASSERT_FALSE(!!mismatch);
  EXPECT_EQ(llvm::toString(mismatch.takeError()),
            "device 3, output: the shapes differ: reference (f32[1], (pred[2])), candidate f32[1]");
}

// Four devices gather two weights; `fused` holds the dot on w0 as the
// collective-matmul custom-call of docs/collective-matmul-contract.md, with
// operand 0 taken from `weight`.
std::string Gathered(const char *root) {
  return std::string(R"(
HloModule m, num_partitions=4

ENTRY %main {
  %w0 = f32[2,4,8] parameter(0)
  %w1 = f32[2,4,8] parameter(1)
  %x = f32[8,3] parameter(2)
  %ag0 = f32[2,16,8] all-gather(%w0), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  %ag1 = f32[2,16,8] all-gather(%w1), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  %other = f32[2,16,3] dot(%ag1, %x), lhs_contracting_dims={2}, rhs_contracting_dims={0}
)") + root +
         "\n}\n";
}

std::string Fused(const char *weight) {
  return Gathered((std::string("  %w2d = f32[8,8] reshape(%") + weight + R"()
  %cm = f32[2,16,3] custom-call(%w2d, %x), custom_call_target="AwsNeuronCollectiveMatmul", frontend_attributes={loom_weight_side="lhs",loom_lhs_batch_dims="{}",loom_rhs_batch_dims="{}",loom_lhs_contracting_dims="{2}",loom_rhs_contracting_dims="{0}",loom_all_gather_dimension="1",loom_replica_groups="{{0,1,2,3}}",loom_channel_id="1",loom_use_global_device_ids="true",loom_local_weight_shape="f32[2,4,8]",loom_gathered_weight_shape="f32[2,16,8]",loom_weight_operand_shape="f32[2,16,8]"}, backend_config="rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=1"
  ROOT %t = (f32[2,16,3], f32[2,16,3]) tuple(%cm, %other))")
                      .c_str());
}

const char *kReferenceRoot =
    R"(  %dot = f32[2,16,3] dot(%ag0, %x), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  ROOT %t = (f32[2,16,3], f32[2,16,3]) tuple(%dot, %other))";

TEST(NumericsCheckTest, CatchesAFusedCallThatReadsTheWrongWeight) {
  auto reference = Parse(Gathered(kReferenceRoot));
  auto right = Parse(Fused("w0"));
  auto wrong = Parse(Fused("w1"));
  ASSERT_TRUE(reference && right && wrong);
  std::string log;
  llvm::raw_string_ostream log_stream(log);
  EXPECT_FALSE(!!CheckNumerics(*reference, *right, {}, log_stream));
  EXPECT_NE(log_stream.str().find("differ"), std::string::npos);
  llvm::Error err = CheckNumerics(*reference, *wrong, {}, llvm::nulls());
  ASSERT_TRUE(!!err);
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("numerics differ: device 0, output {0}, element "), std::string::npos)
      << message;
  EXPECT_NE(message.find("largest absolute error"), std::string::npos) << message;
  EXPECT_NE(message.find("largest relative error"), std::string::npos) << message;
}

TEST(NumericsCheckTest, AcceptsWhatTheReplacerProduces) {
  auto reference = Parse(Gathered(kReferenceRoot));
  auto fused = Parse(Gathered(kReferenceRoot));
  ASSERT_TRUE(reference && fused);
  CollectiveMatmulOptions options;
  NeuronLoopedEinsumReplacer pass(options);
  auto changed = pass.Run(*fused);
  ASSERT_TRUE(!!changed) << llvm::toString(changed.takeError());
  ASSERT_TRUE(*changed);
  for (uint64_t seed : {0, 1, 2}) {
    NumericsCheckOptions numerics;
    numerics.seed = seed;
    EXPECT_FALSE(!!CheckNumerics(*reference, *fused, numerics, llvm::nulls()));
  }
}

TEST(NumericsCheckTest, ModulesMustTakeTheSameParametersOnTheSameDevices) {
  auto a = Parse("HloModule a, replica_count=2\nENTRY %e { ROOT %p = f32[2] parameter(0) }\n");
  auto b = Parse("HloModule b, replica_count=2\nENTRY %e { ROOT %p = f32[3] parameter(0) }\n");
  auto c = Parse("HloModule c, replica_count=4\nENTRY %e { ROOT %p = f32[2] parameter(0) }\n");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(llvm::toString(CheckNumerics(*a, *b, {}, llvm::nulls())),
            "cannot compare the modules: parameter 0 differs: f32[2] vs f32[3]");
  EXPECT_NE(llvm::toString(CheckNumerics(*a, *c, {}, llvm::nulls())).find("different devices"),
            std::string::npos);
  EXPECT_FALSE(!!CheckNumerics(*a, *a, {}, llvm::nulls()));
}

} // namespace
