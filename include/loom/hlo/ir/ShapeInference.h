//===- ShapeInference.h - The result shape of an instruction, per opcode --===//
//
// One rule per opcode, from the operand shapes and the attributes, as XLA's
// ShapeInference computes them. Three users: the parser fills in the shape
// of an instruction written without one, the verifier infers and compares
// with the written shape, and the interpreter derives the geometry of a dot
// (and of the collective-matmul custom-call) from the same rule.
//
// A rule that fails returns an llvm::Error whose message is the verifier's
// message for that problem, without the computation / instruction prefix.
// Element types the rule cannot know (dot's preferred_element_type, the
// reducer's output of a reduce) are taken from `result_type` when given.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_SHAPEINFERENCE_H
#define LOOM_HLO_IR_SHAPEINFERENCE_H

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace loom::hlo {

class HloComputation;

class ShapeInference {
public:
  /// Elementwise unary ops except convert and bitcast-convert, whose result
  /// type is not implied: same dimensions; pred for is-finite; the component
  /// type for abs/real/imag of a complex operand.
  static llvm::Expected<Shape> InferUnaryOpShape(HloOpcode opcode, const Shape &operand);
  /// The element type of InferUnaryOpShape for an array operand of element
  /// type `type` (convert and bitcast-convert excluded): the rule without
  /// building the shape.
  static PrimitiveType UnaryOpElementType(HloOpcode opcode, PrimitiveType type);
  /// Elementwise binary ops: equal dimensions (no implicit broadcast), equal
  /// element types; pred for compare, c64/c128 for complex.
  static llvm::Expected<Shape> InferBinaryOpShape(HloOpcode opcode, const Shape &lhs,
                                                  const Shape &rhs);
  /// The element type of InferBinaryOpShape for array operands of equal
  /// dimensions and both of element type `type` (stochastic-convert
  /// excluded).
  static PrimitiveType BinaryOpElementType(HloOpcode opcode, PrimitiveType type);
  /// dot: batch, then lhs free, then rhs free dimensions; the element type is
  /// `result_type` (preferred_element_type), lhs's when absent.
  static llvm::Expected<Shape> InferDotShape(const Shape &lhs, const Shape &rhs,
                                             const DotDimensionNumbers &dnums,
                                             std::optional<PrimitiveType> result_type);
  static llvm::Expected<Shape> InferTransposeShape(const Shape &operand,
                                                   llvm::ArrayRef<int64_t> permutation);
  static llvm::Expected<Shape> InferSliceShape(const Shape &operand, const SliceConfig &slice);
  static llvm::Expected<Shape> InferConcatenateShape(llvm::ArrayRef<const Shape *> operands,
                                                     int64_t dimension);
  /// reduce of N inputs and N initial values: the input dimensions without
  /// the reduced ones; element types from `reducer`'s root when given (a
  /// tuple of N for N > 1), the inputs' otherwise.
  static llvm::Expected<Shape> InferReduceShape(llvm::ArrayRef<const Shape *> operands,
                                                llvm::ArrayRef<int64_t> dimensions,
                                                const HloComputation *reducer);
  /// gather (XLA's InferGatherShape): the batch dimensions are the indices'
  /// dimensions without index_vector_dim (an index_vector_dim equal to the
  /// indices' rank is an implicit trailing 1), in order; the offset
  /// dimensions are slice_sizes without collapsed_slice_dims and
  /// operand_batching_dims, in order, at the positions offset_dims lists;
  /// the element type is the operand's.
  static llvm::Expected<Shape> InferGatherShape(const Shape &operand, const Shape &start_indices,
                                                const GatherDimensionNumbers &dnums);
  static Shape InferTupleShape(llvm::ArrayRef<const Shape *> operands);
  static llvm::Expected<Shape> InferGetTupleElementShape(const Shape &tuple, int64_t index);
  /// InferGetTupleElementShape without the copy: the element within `tuple`.
  static llvm::Expected<const Shape *> GetTupleElementShape(const Shape &tuple, int64_t index);
  /// all-reduce and all-reduce-start: each operand's shape (a tuple for
  /// several).
  static llvm::Expected<Shape> InferAllReduceShape(llvm::ArrayRef<const Shape *> operands);
  /// collective-permute-start: (operand, result, u32[], u32[]).
  static Shape InferCollectivePermuteStartShape(const Shape &operand);

  /// The rule for `inst`'s opcode applied to its operands and attributes
  /// (called computations must be resolved). Opcodes without a rule, and
  /// forms a rule does not cover, are an error saying so.
  static llvm::Expected<Shape> InferInstructionShape(const HloInstruction &inst);
  /// Whether InferInstructionShape has a rule for this opcode.
  static bool HasRule(HloOpcode opcode);
};

} // namespace loom::hlo

#endif
