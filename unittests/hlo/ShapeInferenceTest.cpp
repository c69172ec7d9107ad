//===- ShapeInferenceTest.cpp - One rule per opcode -----------------------===//
//
// The rules the parser, the verifier and the interpreter share: their
// results, and that a failing rule's message is the verifier's.
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/ir/ShapeInference.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/parser/HloParser.h"

#include "gtest/gtest.h"

namespace loom::hlo {
namespace {

Shape F32(std::vector<int64_t> dims) { return Shape(PrimitiveType::F32, dims); }

std::string Message(llvm::Expected<Shape> shape) {
  if (shape)
    return "ok: " + shape->ToString(false);
  return llvm::toString(shape.takeError());
}

TEST(ShapeInference, DotIsBatchThenLhsFreeThenRhsFree) {
  DotDimensionNumbers d;
  d.lhs_batch_dimensions = {0};
  d.rhs_batch_dimensions = {1};
  d.lhs_contracting_dimensions = {2};
  d.rhs_contracting_dimensions = {0};
  EXPECT_EQ(Message(ShapeInference::InferDotShape(F32({5, 2, 3}), F32({3, 5, 7}), d,
                                                  PrimitiveType::BF16)),
            "ok: bf16[5,2,7]");
  EXPECT_EQ(Message(ShapeInference::InferDotShape(F32({5, 2, 3}), F32({3, 5, 7}), d,
                                                  std::nullopt)),
            "ok: f32[5,2,7]");
  d.rhs_contracting_dimensions = {2};
  EXPECT_EQ(Message(ShapeInference::InferDotShape(F32({5, 2, 3}), F32({3, 5, 7}), d,
                                                  std::nullopt)),
            "dot lhs contracting dimension 2 has size 3 but rhs contracting dimension 2 has "
            "size 7");
  d.rhs_contracting_dimensions = {1};
  EXPECT_EQ(Message(ShapeInference::InferDotShape(F32({5, 2, 3}), F32({3, 5, 7}), d,
                                                  std::nullopt)),
            "dot rhs batch/contracting dimension 1 is listed twice");
  d.rhs_contracting_dimensions = {};
  EXPECT_EQ(Message(ShapeInference::InferDotShape(F32({5, 2, 3}), F32({3, 5, 7}), d,
                                                  std::nullopt)),
            "dot has 1 lhs contracting dimensions but 0 rhs contracting dimensions");
}

TEST(ShapeInference, DynamicDimensionsCarryOver) {
  Shape a = F32({4, 3});
  a.set_dynamic_dimension(0, true);
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  Shape out = llvm::cantFail(ShapeInference::InferDotShape(a, F32({3, 2}), d, std::nullopt));
  EXPECT_TRUE(out.is_dynamic_dimension(0));
  EXPECT_FALSE(out.is_dynamic_dimension(1));
  Shape t = llvm::cantFail(ShapeInference::InferTransposeShape(a, {1, 0}));
  EXPECT_TRUE(t.is_dynamic_dimension(1));
}

TEST(ShapeInference, ElementwiseRules) {
  EXPECT_EQ(Message(ShapeInference::InferBinaryOpShape(HloOpcode::kCompare, F32({2}), F32({2}))),
            "ok: pred[2]");
  EXPECT_EQ(Message(ShapeInference::InferBinaryOpShape(HloOpcode::kAdd, F32({2}), F32({3}))),
            "add operands f32[2] and f32[3] must have the same dimensions");
  EXPECT_EQ(Message(ShapeInference::InferBinaryOpShape(HloOpcode::kComplex, Shape(PrimitiveType::F64, {2}),
                                                       Shape(PrimitiveType::F64, {2}))),
            "ok: c128[2]");
  EXPECT_EQ(Message(ShapeInference::InferUnaryOpShape(HloOpcode::kAbs, Shape(PrimitiveType::C64, {3}))),
            "ok: f32[3]");
  EXPECT_EQ(Message(ShapeInference::InferUnaryOpShape(HloOpcode::kIsFinite, F32({3}))),
            "ok: pred[3]");
  EXPECT_EQ(Message(ShapeInference::InferUnaryOpShape(HloOpcode::kConvert, F32({3}))),
            "convert does not imply its result element type");
}

TEST(ShapeInference, SliceConcatenateReduceTuple) {
  SliceConfig s{{1, 0}, {2, 3}, {1, 2}};
  EXPECT_EQ(Message(ShapeInference::InferSliceShape(F32({2, 3}), s)), "ok: f32[1,2]");
  s.limits[1] = 4;
  EXPECT_EQ(Message(ShapeInference::InferSliceShape(F32({2, 3}), s)),
            "slice range [0:4:2] is out of bounds for dimension 1 of size 3");
  Shape a = F32({2, 3}), b = F32({5, 3}), c = F32({5, 4});
  EXPECT_EQ(Message(ShapeInference::InferConcatenateShape({&a, &b}, 0)), "ok: f32[7,3]");
  EXPECT_EQ(Message(ShapeInference::InferConcatenateShape({&a, &c}, 0)),
            "concatenate operand 1 f32[5,4] must match operand 0 f32[2,3] in type and in every "
            "dimension but 0");
  Shape init = F32({});
  EXPECT_EQ(Message(ShapeInference::InferReduceShape({&a, &init}, {1}, nullptr)), "ok: f32[2]");
  EXPECT_EQ(Message(ShapeInference::InferReduceShape({&a, &init}, {2}, nullptr)),
            "reduce dimension 2 is out of range for rank 2");
  EXPECT_EQ(ShapeInference::InferTupleShape({&a, &init}).ToString(false), "(f32[2,3], f32[])");
  EXPECT_EQ(Message(ShapeInference::InferGetTupleElementShape(a, 0)),
            "get-tuple-element operand must be a tuple, got f32[2,3]");
  EXPECT_EQ(ShapeInference::InferCollectivePermuteStartShape(a).ToString(false),
            "(f32[2,3], f32[2,3], u32[], u32[])");
}

TEST(ShapeInference, ReduceTakesTheReducersElementTypes) {
  auto module = llvm::cantFail(ParseHloModule(R"(
HloModule m
%max (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %m = s32[] maximum(%a, %b)
}
ENTRY %e {
  %x = bf16[4,2] parameter(0)
  %i = s32[] constant(0)
  %xi = s32[4,2] convert(%x)
  ROOT %r = reduce(%xi, %i), dimensions={0}, to_apply=%max
})"));
  const HloInstruction *r = module->entry_computation()->root_instruction();
  EXPECT_EQ(r->shape().ToString(false), "s32[2]");
  EXPECT_EQ(Message(ShapeInference::InferInstructionShape(*r)), "ok: s32[2]");
  // No rule: a clear error, not a guess.
  EXPECT_FALSE(ShapeInference::HasRule(HloOpcode::kBroadcast));
  const HloInstruction *x = module->entry_computation()->parameter_instruction(0);
  EXPECT_EQ(Message(ShapeInference::InferInstructionShape(*x)), "parameter has no inference rule");
}

} // namespace
} // namespace loom::hlo
