//===- EvalDot.cpp - dot with general dimension numbers -------------------===//
//
// Checks a dot's operands and result shape and runs it with ComputeDot
// (DotKernel.h): each result element accumulates its products in increasing
// order of the contracting index, in f32 for every float result narrower
// than f64 (bf16/f16/f8 inputs accumulate in f32 and round once at the end),
// in f64 when the result or an operand is f64, in 64-bit wrapping integers
// for integer results (docs/interpreter.md, "dot").
//
//===----------------------------------------------------------------------===//

#include "DotKernel.h"
#include "EvalInternal.h"

#include "loom/hlo/ir/ShapeInference.h"

namespace loom::hlo {

llvm::Expected<Literal> DotLiterals(const HloInstruction &inst, const Literal &lhs,
                                    const Literal &rhs, const DotDimensionNumbers &dnums,
                                    const Shape &result_shape) {
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !result_shape.IsArray())
    return EvalError(inst, "dot needs array operands and result");
  const PrimitiveType out_type = result_shape.element_type();
  for (PrimitiveType t : {lhs.element_type(), rhs.element_type(), out_type})
    if (IsComplexType(t) || t == PrimitiveType::PRED || !IsSupportedElementType(t))
      return UnsupportedError(inst, "dot element type " + PrimitiveTypeName(t));
  llvm::Expected<Shape> inferred =
      ShapeInference::InferDotShape(lhs.shape(), rhs.shape(), dnums, out_type);
  if (!inferred)
    return EvalError(inst, llvm::toString(inferred.takeError()));
  if (inferred->dimensions() != result_shape.dimensions())
    return EvalError(inst, "dot result shape " + result_shape.ToString() +
                               " does not match its operands");
  return ComputeDot(lhs, rhs, dnums, result_shape);
}

llvm::Expected<Literal> EvalDot(const HloInstruction &inst, const Literal &lhs,
                                const Literal &rhs) {
  llvm::Expected<DotDimensionNumbers> dnums = GetDotDimensionNumbers(inst);
  if (!dnums)
    return dnums.takeError();
  return DotLiterals(inst, lhs, rhs, *dnums, inst.shape());
}

} // namespace loom::hlo
