// Unit tests of the collective-matmul matchers: each structural matcher on
// its own shape and on its neighbours' shapes, GetRootAllGather's depth, the
// weight-side proofs (entry and loop-body parameters, combined all-gathers),
// and robustness on instructions that are not what a matcher expects.
#include "HloTestUtil.h"
#include "loom/hlo/passes/CollectiveMatmulMatchers.h"

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <memory>
#include <string>

using namespace loom::hlo;

namespace {

using testutil::Parse;

using testutil::Find;

// Every shape the matchers know, one dot each, plus near misses.
const char kShapes[] = R"(
HloModule shapes, num_partitions=2

ENTRY %main (w: f32[2,4,8], x: f32[8,3], y: f32[3,8], t: f32[], p: (f32[2,4,8], f32[8,3])) -> f32[] {
  %w = f32[2,4,8] parameter(0)
  %x = f32[8,3] parameter(1)
  %y = f32[3,8] parameter(2)
  %t = f32[] parameter(3)
  %p = (f32[2,4,8], f32[8,3]) parameter(4)
  %ag = f32[4,4,8] all-gather(%w), replica_groups={{0,1}}, dimensions={0}
  %lhs = f32[4,4,3] dot(%ag, %x), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  %rs = f32[16,8] reshape(%ag)
  %lhs.rs = f32[16,3] dot(%rs, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %rhs = f32[3,4,4] dot(%y, %ag), lhs_contracting_dims={1}, rhs_contracting_dims={2}
  %rhs.rs = f32[3,16] dot(%y, %rs), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %agc = (f32[4,4,8], f32[]) all-gather(%w, %t), replica_groups={{0,1}}, dimensions={0}
  %g0 = f32[4,4,8] get-tuple-element(%agc), index=0
  %g0.rs = f32[16,8] reshape(%g0)
  %nxd = f32[16,3] dot(%g0.rs, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %gte.only = f32[4,4,3] dot(%g0, %x), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  %rhs.nxd = f32[3,16] dot(%y, %g0.rs), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %cvt = f32[4,4,8] convert(%ag)
  %via.convert = f32[4,4,3] dot(%cvt, %x), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  %rs2 = f32[16,8] reshape(%rs)
  %two.reshapes = f32[16,3] dot(%rs2, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %pw = f32[2,4,8] get-tuple-element(%p), index=0
  %pw.cvt = f32[2,4,8] convert(%pw)
  %n1 = f32[2,4,8] negate(%w)
  %n2 = f32[2,4,8] negate(%n1)
  %n3 = f32[2,4,8] negate(%n2)
  %n4 = f32[2,4,8] negate(%n3)
  %n5 = f32[2,4,8] negate(%n4)
  ROOT %r = f32[] constant(0)
}
)";

TEST(CollectiveMatmulMatchers, EachMatcherTakesItsOwnShapeOnly) {
  auto module = Parse(kShapes);
  ASSERT_TRUE(module);
  struct Row {
    const char *dot;
    bool lhs, lhs_rs, rhs, rhs_rs, lhs_nxd;
  } rows[] = {
      {"lhs", true, false, false, false, false},
      {"lhs.rs", false, true, false, false, false},
      {"rhs", false, false, true, false, false},
      {"rhs.rs", false, false, false, true, false},
      {"nxd", false, false, false, false, true},
      {"gte.only", false, false, false, false, false},
      {"rhs.nxd", false, false, false, false, false},
      {"via.convert", false, false, false, false, false},
      {"two.reshapes", false, false, false, false, false},
  };
  for (const Row &row : rows) {
    SCOPED_TRACE(row.dot);
    HloInstruction *dot = Find(*module, row.dot);
    ASSERT_TRUE(dot);
    EXPECT_EQ(MatchAllGatherInDotLhs(dot), row.lhs);
    EXPECT_EQ(MatchAllGatherInDotLhsRS(dot), row.lhs_rs);
    EXPECT_EQ(MatchAllGatherInDotRhs(dot), row.rhs);
    EXPECT_EQ(MatchAllGatherInDotRhsRS(dot), row.rhs_rs);
    EXPECT_EQ(MatchAllGatherInDotLhsNxD(dot), row.lhs_nxd);
  }
}

TEST(CollectiveMatmulMatchers, NonDotsAndNullNeverMatch) {
  auto module = Parse(kShapes);
  ASSERT_TRUE(module);
  for (const char *name : {"ag", "rs", "g0", "w", "r"}) {
    SCOPED_TRACE(name);
    HloInstruction *inst = Find(*module, name);
    EXPECT_FALSE(MatchAllGatherInDotLhs(inst));
    EXPECT_FALSE(MatchAllGatherInDotLhsRS(inst));
    EXPECT_FALSE(MatchAllGatherInDotRhs(inst));
    EXPECT_FALSE(MatchAllGatherInDotRhsRS(inst));
    EXPECT_FALSE(MatchAllGatherInDotLhsNxD(inst));
    EXPECT_FALSE(WeightInLHS(inst));
    EXPECT_FALSE(WeightInRHS(inst));
    EXPECT_EQ(FindAllGatherOnSide(inst, 0).ag, nullptr);
  }
  EXPECT_FALSE(MatchAllGatherInDotLhs(nullptr));
  EXPECT_FALSE(MatchAllGatherInDotLhsNxD(nullptr));
  EXPECT_FALSE(WeightInLHS(nullptr));
  EXPECT_EQ(GetRootAllGather(nullptr), nullptr);
  EXPECT_FALSE(IsConvertGetTupleElementParameter(nullptr));
  EXPECT_FALSE(ReachesParameter(nullptr));
}

TEST(CollectiveMatmulMatchers, GetRootAllGatherFollowsOperandZeroAtMostDepthTimes) {
  auto module = Parse(kShapes);
  ASSERT_TRUE(module);
  HloInstruction *ag = Find(*module, "ag");
  EXPECT_EQ(GetRootAllGather(ag), ag);
  EXPECT_EQ(GetRootAllGather(Find(*module, "rs")), ag);
  EXPECT_EQ(GetRootAllGather(Find(*module, "rs2")), ag);
  EXPECT_EQ(GetRootAllGather(Find(*module, "g0.rs")), Find(*module, "agc"));
  EXPECT_EQ(GetRootAllGather(Find(*module, "rs2"), 1), nullptr);
  EXPECT_EQ(GetRootAllGather(Find(*module, "rs2"), 2), ag);
  // No all-gather up the chain: parameters end it.
  EXPECT_EQ(GetRootAllGather(Find(*module, "n5")), nullptr);
  EXPECT_EQ(GetRootAllGather(Find(*module, "w")), nullptr);
}

TEST(CollectiveMatmulMatchers, DepthFourReachesFourHopsNotFive) {
  auto module = Parse(R"(
HloModule depth, num_partitions=2
ENTRY %main (w: f32[2,4,8]) -> f32[4,4,8] {
  %w = f32[2,4,8] parameter(0)
  %ag = f32[4,4,8] all-gather(%w), replica_groups={{0,1}}, dimensions={0}
  %n1 = f32[4,4,8] negate(%ag)
  %n2 = f32[4,4,8] negate(%n1)
  %n3 = f32[4,4,8] negate(%n2)
  %n4 = f32[4,4,8] negate(%n3)
  ROOT %n5 = f32[4,4,8] negate(%n4)
}
)");
  ASSERT_TRUE(module);
  HloInstruction *ag = Find(*module, "ag");
  EXPECT_EQ(GetRootAllGather(Find(*module, "n4")), ag);
  EXPECT_EQ(GetRootAllGather(Find(*module, "n5")), nullptr);
  EXPECT_EQ(GetRootAllGather(Find(*module, "n5"), 5), ag);
}

TEST(CollectiveMatmulMatchers, ConvertOfGetTupleElementOfParameter) {
  auto module = Parse(kShapes);
  ASSERT_TRUE(module);
  EXPECT_TRUE(IsConvertGetTupleElementParameter(Find(*module, "pw.cvt")));
  EXPECT_FALSE(IsConvertGetTupleElementParameter(Find(*module, "pw")));
  EXPECT_FALSE(IsConvertGetTupleElementParameter(Find(*module, "cvt")));
  EXPECT_FALSE(IsConvertGetTupleElementParameter(Find(*module, "g0")));
}

TEST(CollectiveMatmulMatchers, ReachesParameterThroughLayoutAndTupleChains) {
  auto module = Parse(kShapes);
  ASSERT_TRUE(module);
  EXPECT_TRUE(ReachesParameter(Find(*module, "w")));
  EXPECT_TRUE(ReachesParameter(Find(*module, "pw")));
  EXPECT_TRUE(ReachesParameter(Find(*module, "pw.cvt")));
  EXPECT_FALSE(ReachesParameter(Find(*module, "n1")));
  EXPECT_FALSE(ReachesParameter(Find(*module, "ag")));
  EXPECT_FALSE(ReachesParameter(Find(*module, "r")));
}

TEST(CollectiveMatmulMatchers, WeightSideProofs) {
  auto module = Parse(kShapes);
  ASSERT_TRUE(module);
  EXPECT_TRUE(WeightInLHS(Find(*module, "lhs")));
  EXPECT_FALSE(WeightInRHS(Find(*module, "lhs")));
  EXPECT_TRUE(WeightInLHS(Find(*module, "lhs.rs")));
  EXPECT_TRUE(WeightInRHS(Find(*module, "rhs")));
  EXPECT_FALSE(WeightInLHS(Find(*module, "rhs")));
  EXPECT_TRUE(WeightInRHS(Find(*module, "rhs.rs")));
  // Through the get-tuple-element of a combined all-gather, with or
  // without the reshape.
  EXPECT_TRUE(WeightInLHS(Find(*module, "nxd")));
  EXPECT_TRUE(WeightInLHS(Find(*module, "gte.only")));
  EXPECT_TRUE(WeightInRHS(Find(*module, "rhs.nxd")));
  // A convert or a second reshape between the dot and the all-gather is not
  // a weight side.
  EXPECT_FALSE(WeightInLHS(Find(*module, "via.convert")));
  EXPECT_FALSE(WeightInLHS(Find(*module, "two.reshapes")));
}

TEST(CollectiveMatmulMatchers, CombinedAllGatherUsesTheIndexedOperand) {
  auto module = Parse(R"(
HloModule combined, num_partitions=2
ENTRY %main (w0: f32[2,4,8], v: f32[2,8], x: f32[8,3]) -> (f32[16,3], f32[4,3]) {
  %w0 = f32[2,4,8] parameter(0)
  %v = f32[2,8] parameter(1)
  %x = f32[8,3] parameter(2)
  %w1 = f32[2,8] negate(%v)
  %ag = (f32[4,4,8], f32[4,8]) all-gather(%w0, %w1), replica_groups={{0,1}}, dimensions={0}
  %g0 = f32[4,4,8] get-tuple-element(%ag), index=0
  %r0 = f32[16,8] reshape(%g0)
  %d0 = f32[16,3] dot(%r0, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %g1 = f32[4,8] get-tuple-element(%ag), index=1
  %r1 = f32[4,8] reshape(%g1)
  %d1 = f32[4,3] dot(%r1, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[16,3], f32[4,3]) tuple(%d0, %d1)
}
)");
  ASSERT_TRUE(module);
  HloInstruction *ag = Find(*module, "ag");
  AllGatherOnSide s0 = FindAllGatherOnSide(Find(*module, "d0"), 0);
  EXPECT_EQ(s0.ag, ag);
  EXPECT_EQ(s0.operand_index, 0);
  EXPECT_EQ(s0.gte, Find(*module, "g0"));
  AllGatherOnSide s1 = FindAllGatherOnSide(Find(*module, "d1"), 0);
  EXPECT_EQ(s1.ag, ag);
  EXPECT_EQ(s1.operand_index, 1);
  EXPECT_EQ(FindAllGatherOnSide(Find(*module, "d1"), 1).ag, nullptr);
  // Operand 0 is a parameter, operand 1 is computed: the proof follows the
  // operand the dot actually reads.
  EXPECT_TRUE(WeightInLHS(Find(*module, "d0")));
  EXPECT_FALSE(WeightInLHS(Find(*module, "d1")));
}

TEST(CollectiveMatmulMatchers, LoopBodyParameterCounts) {
  auto module = Parse(R"(
HloModule loop, num_partitions=2
%body (bp: (f32[2,4,8], f32[3,8])) -> f32[3,4,4] {
  %bp = (f32[2,4,8], f32[3,8]) parameter(0)
  %w = f32[2,4,8] get-tuple-element(%bp), index=0
  %y = f32[3,8] get-tuple-element(%bp), index=1
  %w.bf = bf16[2,4,8] convert(%w)
  %w.f = f32[2,4,8] convert(%w.bf)
  %b = f32[2,4,8] bitcast(%w.f)
  %ag = f32[4,4,8] all-gather(%b), replica_groups={{0,1}}, dimensions={0}
  ROOT %d = f32[3,4,4] dot(%y, %ag), lhs_contracting_dims={1}, rhs_contracting_dims={2}
}
ENTRY %main (w: f32[2,4,8], y: f32[3,8]) -> f32[3,4,4] {
  %w.e = f32[2,4,8] parameter(0)
  %y.e = f32[3,8] parameter(1)
  %init = (f32[2,4,8], f32[3,8]) tuple(%w.e, %y.e)
  ROOT %c = f32[3,4,4] call(%init), to_apply=%body
}
)");
  ASSERT_TRUE(module);
  HloInstruction *dot = Find(*module, "d");
  EXPECT_TRUE(MatchAllGatherInDotRhs(dot));
  EXPECT_TRUE(WeightInRHS(dot));
  EXPECT_FALSE(WeightInLHS(dot));
  EXPECT_TRUE(IsConvertGetTupleElementParameter(Find(*module, "w.bf")));
}

} // namespace
