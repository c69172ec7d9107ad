//===- DotKernel.h - The interpreter's dot: packed, register-tiled --------===//
//
// Internal to lib/hlo/eval. Computes a dot whose dimension numbers were
// validated (ShapeInference::InferDotShape) with the numerics of
// docs/interpreter.md: every result element starts from +0 in the
// accumulation type and adds its products `lhs * rhs` one at a time in
// increasing order of the contracting index (row-major over the contracting
// dimensions), each product rounded before the add (never fused). The
// vector code runs across result columns only, so the sum of each element is
// the one a scalar loop computes, bit for bit.
//
// Thread-safe: no global mutable state; scratch buffers belong to the call.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_EVAL_DOTKERNEL_H
#define LOOM_LIB_HLO_EVAL_DOTKERNEL_H

#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/ir/HloAttributes.h"

#include <vector>

namespace loom::hlo {

/// The instruction sets the float kernels have code for. kBaseline is what
/// every CPU of the build's target runs: SSE2 on x86-64, plain C++
/// elsewhere. Integer dots always run plain C++.
enum class DotIsa { kBaseline, kAvx2, kAvx512 };

const char *DotIsaName(DotIsa isa);
/// The widest instruction set this CPU supports (a runtime check).
DotIsa BestDotIsa();
/// Every instruction set this CPU runs, kBaseline first.
std::vector<DotIsa> SupportedDotIsas();

/// The dot of `lhs` and `rhs` into a new literal of `result_shape`
/// (dimensions: batch, lhs free, rhs free). The caller has checked the
/// dimension numbers and shapes; complex and pred types are not accepted.
/// `isa` must be one of SupportedDotIsas().
Literal ComputeDot(const Literal &lhs, const Literal &rhs, const DotDimensionNumbers &dnums,
                   const Shape &result_shape, DotIsa isa = BestDotIsa());

} // namespace loom::hlo

#endif
