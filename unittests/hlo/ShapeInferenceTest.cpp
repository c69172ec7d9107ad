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

TEST(ShapeInference, GatherIsBatchDimsThenOffsetDimsAtTheirPositions) {
  // XLA's InferGatherShape: the batch dimensions are the indices' without
  // index_vector_dim (here the rank: an implicit trailing 1), the offset
  // dimensions slice_sizes without collapsed_slice_dims, at offset_dims.
  GatherDimensionNumbers d;
  d.offset_dims = {1};
  d.collapsed_slice_dims = {0};
  d.start_index_map = {0};
  d.index_vector_dim = 2;
  d.slice_sizes = {1, 3};
  Shape s32_13(PrimitiveType::S32, {1, 3}), s32_74(PrimitiveType::S32, {7, 4});
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(s32_13, s32_74, d)), "ok: s32[7,3,4]");
  // index_vector_dim inside the indices: that dimension is the vector.
  d.index_vector_dim = 1;
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(F32({5, 3}), Shape(PrimitiveType::S32, {4, 1}),
                                                     d)),
            "ok: f32[4,3]");
  d.offset_dims = {0};
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(F32({5, 3}), Shape(PrimitiveType::S32, {4, 1}),
                                                     d)),
            "ok: f32[3,4]");
  // Batching dimensions (XLA's operand_batching_dims) drop out like
  // collapsed ones.
  GatherDimensionNumbers b;
  b.offset_dims = {2};
  b.collapsed_slice_dims = {1};
  b.start_index_map = {1};
  b.operand_batching_dims = {0};
  b.start_indices_batching_dims = {0};
  b.index_vector_dim = 2;
  b.slice_sizes = {1, 1, 6};
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(F32({2, 5, 6}),
                                                     Shape(PrimitiveType::S32, {2, 3, 1}), b)),
            "ok: f32[2,3,6]");
  // Failing rules.
  d.start_index_map = {0, 1};
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(F32({5, 3}), Shape(PrimitiveType::S32, {4, 1}),
                                                     d)),
            "gather start_index_map {0,1} must have one entry per element of the index vector (1)");
  d.start_index_map = {0};
  d.slice_sizes = {2, 3};
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(F32({5, 3}), Shape(PrimitiveType::S32, {4, 1}),
                                                     d)),
            "gather slice size 2 of collapsed or batching dimension 0 must be 0 or 1");
  d.slice_sizes = {1, 4};
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(F32({5, 3}), Shape(PrimitiveType::S32, {4, 1}),
                                                     d)),
            "gather slice_sizes {1,4}: size 4 of dimension 1 is out of range for operand f32[5,3]");
  d.slice_sizes = {1, 3};
  d.index_vector_dim = 3;
  EXPECT_EQ(Message(ShapeInference::InferGatherShape(F32({5, 3}), Shape(PrimitiveType::S32, {4, 1}),
                                                     d)),
            "gather index_vector_dim 3 is out of range for start indices of rank 2");
}

TEST(ShapeInference, DomainAndGatherOfAnInstruction) {
  auto module = ParseHloModule(
      "HloModule m\n"
      "ENTRY e {\n"
      "  a = f32[5,3] parameter(0)\n"
      "  i = s32[4] parameter(1)\n"
      "  g = f32[4,3] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"
      "  ROOT d = f32[4,3] domain(g), domain={kind=\"sharding\", entry={maximal device=0}, "
      "exit={maximal device=1}}\n"
      "}\n");
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  const HloInstruction *d = (*module)->entry_computation()->root_instruction();
  EXPECT_TRUE(ShapeInference::HasRule(HloOpcode::kGather));
  EXPECT_TRUE(ShapeInference::HasRule(HloOpcode::kDomain));
  EXPECT_EQ(Message(ShapeInference::InferInstructionShape(*d)), "ok: f32[4,3]");
  EXPECT_EQ(Message(ShapeInference::InferInstructionShape(*d->operand(0))), "ok: f32[4,3]");
}

} // namespace
} // namespace loom::hlo
