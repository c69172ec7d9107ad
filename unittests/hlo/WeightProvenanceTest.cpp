// Unit tests of WeightProvenance: what is a weight (entry parameters and
// loop-invariant loop state through the data-movement ops, dynamic-slices at
// the loop counter or constants, through the while and its init tuple) and
// what is not (a dynamic-slice indexed by an activation, loop state the body
// updates, an init that is not a weight, computed values, constants,
// parameters of called computations), with the reasons and the memo.
#include "HloTestUtil.h"
#include "loom/hlo/passes/WeightProvenance.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <memory>
#include <string>

using namespace loom::hlo;

namespace {

using testutil::Parse;

using testutil::Find;

// A scan loop over stacked weights: element 1 is passed through (a weight),
// element 2 is updated, element 3 is passed through but starts as a
// computed value, element 0 is the counter (and element 4 a second counter
// that counts down through subtract).
const char kLoop[] = R"(
HloModule loop

%cond (c: (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[])) -> pred[] {
  %c = (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[]) parameter(0)
  %ci = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%ci, %n), direction=LT
}

%body (p: (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[])) -> (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[]) {
  %p = (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %w = f32[3,4,2] get-tuple-element(%p), index=1
  %acc = f32[3,4,2] get-tuple-element(%p), index=2
  %act = f32[3,4,2] get-tuple-element(%p), index=3
  %down = s32[] get-tuple-element(%p), index=4
  %zero = s32[] constant(0)
  %two = s32[] constant(2)
  %last = s32[] subtract(%two, %i)
  %w.ds = f32[1,4,2] dynamic-slice(%w, %i, %zero, %zero), dynamic_slice_sizes={1,4,2}
  %w.cv = bf16[1,4,2] convert(%w.ds)
  %w.rs = bf16[4,2] reshape(%w.cv)
  %w.last = f32[1,4,2] dynamic-slice(%w, %last, %zero, %zero), dynamic_slice_sizes={1,4,2}
  %w.down = f32[1,4,2] dynamic-slice(%w, %down, %zero, %zero), dynamic_slice_sizes={1,4,2}
  %w.t = f32[2,4,3] transpose(%w), dimensions={2,1,0}
  %w.b = f32[5,3,4,2] broadcast(%w), dimensions={1,2,3}
  %w.s = f32[1,4,2] slice(%w), slice={[1:2], [0:4], [0:2]}
  %w.c = f32[3,4,2] copy(%w)
  %w.bc = f32[3,4,2] bitcast(%w.c)
  %a.s = f32[1,1,1] slice(%act), slice={[0:1], [0:1], [0:1]}
  %a.r = f32[] reshape(%a.s)
  %a.i = s32[] convert(%a.r)
  %w.byact = f32[1,4,2] dynamic-slice(%w, %a.i, %zero, %zero), dynamic_slice_sizes={1,4,2}
  %acc.ds = f32[1,4,2] dynamic-slice(%acc, %i, %zero, %zero), dynamic_slice_sizes={1,4,2}
  %act.ds = f32[1,4,2] dynamic-slice(%act, %i, %zero, %zero), dynamic_slice_sizes={1,4,2}
  %w.neg = f32[3,4,2] negate(%w)
  %acc.next = f32[3,4,2] add(%acc, %w)
  %one = s32[] constant(1)
  %i.next = s32[] add(%i, %one)
  %down.next = s32[] subtract(%down, %one)
  ROOT %out = (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[]) tuple(%i.next, %w, %acc.next, %act, %down.next)
}

ENTRY %main (x: f32[3,4,2], wp: f32[4,3,2]) -> f32[3,4,2] {
  %x = f32[3,4,2] parameter(0)
  %wp = f32[4,3,2] parameter(1)
  %wt = f32[3,4,2] transpose(%wp), dimensions={1,0,2}
  %x2 = f32[3,4,2] multiply(%x, %x)
  %zero = s32[] constant(0)
  %three = s32[] constant(2)
  %init = (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[]) tuple(%zero, %wt, %x, %x2, %three)
  %loop = (s32[], f32[3,4,2], f32[3,4,2], f32[3,4,2], s32[]) while(%init), condition=%cond, body=%body
  %w.after = f32[3,4,2] get-tuple-element(%loop), index=1
  %w.after.c = f32[3,4,2] convert(%w.after)
  %acc.after = f32[3,4,2] get-tuple-element(%loop), index=2
  ROOT %r = f32[3,4,2] add(%w.after.c, %acc.after)
}
)";

TEST(WeightProvenance, StackedWeightSlicedAtTheCounter) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  WeightProof proof = provenance.Prove(Find(*module, "w.rs"));
  ASSERT_TRUE(proof.IsWeight()) << proof.Reason();
  EXPECT_EQ(proof.kind, WeightProof::kLoopInvariant);
  EXPECT_EQ(proof.source, Find(*module, "w"));
  EXPECT_EQ(proof.dynamic_slice, Find(*module, "w.ds"));
  EXPECT_EQ(proof.Describe(), "dynamic-slice of loop-invariant %w");
  // The same answer from the memo, for an instruction on the path.
  WeightProof inner = provenance.Prove(Find(*module, "w.cv"));
  EXPECT_TRUE(inner.IsWeight());
  EXPECT_EQ(inner.dynamic_slice, Find(*module, "w.ds"));
}

TEST(WeightProvenance, EveryDataMovementOpAndCounterForm) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  for (const char *name : {"w.last", "w.down", "w.t", "w.b", "w.s", "w.bc", "w"}) {
    WeightProof proof = provenance.Prove(Find(*module, name));
    EXPECT_TRUE(proof.IsWeight()) << name << ": " << proof.Reason();
  }
  EXPECT_EQ(provenance.Prove(Find(*module, "w.t")).Describe(), "loop-invariant %w");
  EXPECT_TRUE(provenance.DerivesFromLoopCounter(Find(*module, "last")));
  EXPECT_TRUE(provenance.DerivesFromLoopCounter(Find(*module, "down")));
  EXPECT_FALSE(provenance.DerivesFromLoopCounter(Find(*module, "a.i")));
}

TEST(WeightProvenance, DynamicSliceIndexedByAnActivationIsNotAWeight) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  WeightProof proof = provenance.Prove(Find(*module, "w.byact"));
  EXPECT_FALSE(proof.IsWeight());
  EXPECT_EQ(proof.why, WeightProof::kIndexNotDerived);
  EXPECT_EQ(proof.blocker, Find(*module, "w.byact"));
  EXPECT_EQ(proof.Reason(), "start index 0 of dynamic-slice %w.byact (%a.i) derives from "
                            "neither the loop counter nor constants");
}

TEST(WeightProvenance, UpdatedLoopStateIsNotLoopInvariant) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  WeightProof proof = provenance.Prove(Find(*module, "acc.ds"));
  EXPECT_FALSE(proof.IsWeight());
  EXPECT_EQ(proof.why, WeightProof::kLoopStateUpdated);
  EXPECT_EQ(proof.blocker, Find(*module, "acc"));
  EXPECT_EQ(proof.Reason(), "%acc is element 2 of the loop state, which the body's root does "
                            "not pass through unchanged");
  // The while's result element the body updates is no weight either.
  EXPECT_FALSE(provenance.Prove(Find(*module, "acc.after")).IsWeight());
}

TEST(WeightProvenance, PassedThroughButInitializedByAnActivation) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  WeightProof proof = provenance.Prove(Find(*module, "act.ds"));
  EXPECT_FALSE(proof.IsWeight());
  EXPECT_EQ(proof.why, WeightProof::kNotDataMovement);
  EXPECT_EQ(proof.blocker, Find(*module, "x2"));
}

TEST(WeightProvenance, ThroughTheWhileResult) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  WeightProof proof = provenance.Prove(Find(*module, "w.after.c"));
  ASSERT_TRUE(proof.IsWeight()) << proof.Reason();
  EXPECT_EQ(proof.kind, WeightProof::kEntryParameter);
  EXPECT_EQ(proof.source, Find(*module, "wp"));
  EXPECT_EQ(proof.Describe(), "entry parameter %wp");
}

TEST(WeightProvenance, ComputedValuesAndCounterAreNotWeights) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  WeightProof neg = provenance.Prove(Find(*module, "w.neg"));
  EXPECT_FALSE(neg.IsWeight());
  EXPECT_EQ(neg.blocker, Find(*module, "w.neg"));
  EXPECT_FALSE(provenance.Prove(Find(*module, "i")).IsWeight());
  EXPECT_FALSE(provenance.Prove(Find(*module, "zero")).IsWeight());
}

const char kCalled[] = R"(
HloModule called

%callee (a: f32[4,2]) -> f32[4,2] {
  %a = f32[4,2] parameter(0)
  ROOT %a.t = f32[4,2] copy(%a)
}

%cond (c: (s32[], f32[4,2])) -> pred[] {
  %c = (s32[], f32[4,2]) parameter(0)
  ROOT %t = pred[] constant(false)
}

ENTRY %main (w: f32[4,2], t: (s32[], f32[4,2])) -> f32[4,2] {
  %w = f32[4,2] parameter(0)
  %t = (s32[], f32[4,2]) parameter(1)
  %called = f32[4,2] call(%w), to_apply=%callee
  %loop = (s32[], f32[4,2]) while(%t), condition=%cond, body=%cond.body
  %tw = f32[4,2] get-tuple-element(%t), index=1
  ROOT %sum = f32[4,2] add(%called, %tw)
}

%cond.body (b: (s32[], f32[4,2])) -> (s32[], f32[4,2]) {
  %b = (s32[], f32[4,2]) parameter(0)
  %bw = f32[4,2] get-tuple-element(%b), index=1
  %bw.r = f32[8] reshape(%bw)
  %bi = s32[] get-tuple-element(%b), index=0
  ROOT %bo = (s32[], f32[4,2]) tuple(%bi, %bw)
}
)";

TEST(WeightProvenance, ParametersOfCalledComputationsAndTupleParameters) {
  auto module = Parse(kCalled);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  WeightProof callee = provenance.Prove(Find(*module, "a.t"));
  EXPECT_FALSE(callee.IsWeight());
  EXPECT_EQ(callee.why, WeightProof::kNotLoopState);
  EXPECT_EQ(callee.Reason(), "%a is a parameter of callee, which is neither the entry "
                             "computation nor only a while body");
  // An element of a tuple-shaped entry parameter is a weight.
  EXPECT_TRUE(provenance.Prove(Find(*module, "tw")).IsWeight());
  // Loop state whose init is a tuple-shaped entry parameter.
  WeightProof state = provenance.Prove(Find(*module, "bw.r"));
  EXPECT_TRUE(state.IsWeight()) << state.Reason();
  EXPECT_EQ(state.kind, WeightProof::kLoopInvariant);
}

TEST(WeightProvenance, ResetForgetsAnswers) {
  auto module = Parse(kLoop);
  ASSERT_TRUE(module);
  WeightProvenance provenance(*module);
  EXPECT_TRUE(provenance.Prove(Find(*module, "w.rs")).IsWeight());
  provenance.Reset();
  EXPECT_TRUE(provenance.Prove(Find(*module, "w.rs")).IsWeight());
  EXPECT_FALSE(provenance.Prove(Find(*module, "w.byact")).IsWeight());
}

} // namespace
