//===- EvalWork.cpp - What one instruction costs against max_work ---------===//
//
// EvalOptions::max_work bounds the elements a run computes on one device.
// Each instruction is charged before it runs, from its shapes alone, so an
// instruction too big for the budget is refused before any of it is
// computed. The table is in docs/interpreter.md ("Bounded work").
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"

#include "loom/hlo/ir/CollectiveMatmulContract.h"

#include <limits>

namespace loom::hlo {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

int64_t SatMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

/// Elements of every array leaf of `shape` (saturating; 0 when any
/// dimension is 0 whatever the others).
int64_t LeafElements(const Shape &shape) {
  int64_t total = 0;
  std::vector<const Shape *> stack = {&shape};
  while (!stack.empty()) {
    const Shape *s = stack.back();
    stack.pop_back();
    if (s->IsTuple()) {
      for (const Shape &element : s->tuple_shapes())
        stack.push_back(&element);
      continue;
    }
    if (s->IsArray())
      total = SatAdd(total, ElementCountOf(*s));
  }
  return total;
}

/// Product of `shape`'s dimensions at `dims` (out-of-range ones ignored).
int64_t DimsProduct(const Shape &shape, llvm::ArrayRef<int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims)
    if (shape.IsArray() && d >= 0 && d < shape.rank())
      product = SatMul(product, shape.dimensions(d));
  return product;
}

int64_t OperandElements(const HloInstruction &inst) {
  int64_t total = 0;
  for (const HloInstruction *op : inst.operands())
    total = SatAdd(total, LeafElements(op->shape()));
  return total;
}

} // namespace

int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

int64_t ElementCountOf(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape.dimensions())
    if (d <= 0)
      return 0;
  for (int64_t d : shape.dimensions())
    n = SatMul(n, d);
  return n;
}

int64_t WorkOf(const HloInstruction &inst) {
  const Shape &shape = inst.shape();
  int64_t work = 0;
  switch (inst.opcode()) {
  // Values passed on, not computed: their operands were charged.
  case HloOpcode::kParameter:
  case HloOpcode::kTuple:
  case HloOpcode::kGetTupleElement:
  case HloOpcode::kBitcast:
  case HloOpcode::kOptimizationBarrier:
  case HloOpcode::kAddDependency:
  case HloOpcode::kDomain:
  case HloOpcode::kAfterAll:
  case HloOpcode::kWhile:
  case HloOpcode::kConditional:
  case HloOpcode::kCall:
  case HloOpcode::kFusion:
  case HloOpcode::kAsyncStart:
  case HloOpcode::kAsyncUpdate:
  case HloOpcode::kAsyncDone:
  case HloOpcode::kAllGatherDone:
  case HloOpcode::kAllReduceDone:
  case HloOpcode::kCollectivePermuteDone:
  case HloOpcode::kCopyDone:
    return 1;
  case HloOpcode::kDot: {
    llvm::Expected<DotDimensionNumbers> dnums = GetDotDimensionNumbers(inst);
    if (!dnums) {
      llvm::consumeError(dnums.takeError());
      return LeafElements(shape);
    }
    work = SatMul(LeafElements(shape),
                  DimsProduct(inst.operand(0)->shape(), dnums->lhs_contracting_dimensions));
    break;
  }
  case HloOpcode::kCustomCall: {
    if (!collective_matmul::IsCollectiveMatmul(inst) || inst.operand_count() != 2) {
      work = LeafElements(shape);
      break;
    }
    llvm::Expected<collective_matmul::Meaning> m = collective_matmul::Resolve(inst);
    if (!m) {
      llvm::consumeError(m.takeError());
      return LeafElements(shape);
    }
    // The all-gather's elements, then the dot's multiply-adds.
    const bool weight_is_lhs = m->weight_side == collective_matmul::WeightSide::kLhs;
    const llvm::ArrayRef<int64_t> contracting = weight_is_lhs
                                                    ? m->dnums.lhs_contracting_dimensions
                                                    : m->dnums.rhs_contracting_dimensions;
    work = SatAdd(ElementCountOf(m->gathered_weight_shape),
                  SatMul(ElementCountOf(m->dot_shape),
                         DimsProduct(m->weight_operand_shape, contracting)));
    break;
  }
  case HloOpcode::kReduce:
    // Every element of the inputs is folded once.
    work = SatAdd(OperandElements(inst), LeafElements(shape));
    break;
  case HloOpcode::kReduceWindow:
  case HloOpcode::kSelectAndScatter:
    work = SatMul(SatAdd(LeafElements(shape), OperandElements(inst)), WindowElements(inst));
    break;
  case HloOpcode::kSort: {
    // n log n comparisons along the sorted dimension.
    int64_t log = 1;
    for (const Shape *s = &inst.operand(0)->shape(); s->IsArray();) {
      int64_t longest = 1;
      for (int64_t d : s->dimensions())
        longest = std::max(longest, d);
      while ((int64_t{1} << log) < longest && log < 62)
        ++log;
      break;
    }
    work = SatMul(OperandElements(inst), log);
    break;
  }
  case HloOpcode::kScatter:
    work = SatAdd(LeafElements(shape), OperandElements(inst));
    break;
  default:
    // Elementwise ops, data movement, collectives, constants: the elements
    // of the result.
    work = LeafElements(shape);
    break;
  }
  return std::max<int64_t>(work, 1);
}

} // namespace loom::hlo
