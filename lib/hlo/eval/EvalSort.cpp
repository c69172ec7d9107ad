//===- EvalSort.cpp - sort and map ----------------------------------------===//
//
// sort is always stable (a merge sort, which also stays in bounds whatever
// the comparator returns): XLA allows any order of equal keys without
// is_stable, and the stable one is a valid choice. A comparator that is one
// `compare` of parameters 0 and 1 runs typed; others are called per
// comparison.
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"
#include "ElementTypes.h"

#include <cstring>

namespace loom::hlo {
namespace {

/// Stable bottom-up merge sort of `order` with `less`; stops early (with
/// some order) once `failed` is set.
template <typename Less>
void MergeSort(std::vector<int64_t> &order, Less &&less, const bool &failed) {
  std::vector<int64_t> buffer(order.size());
  const size_t n = order.size();
  for (size_t width = 1; width < n && !failed; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        buffer[k++] = less(order[j], order[i]) ? order[j++] : order[i++];
      while (i < mid)
        buffer[k++] = order[i++];
      while (j < hi)
        buffer[k++] = order[j++];
    }
    order.swap(buffer);
  }
}

/// A typed `a < b` for a comparator `compare(p0, p1)` (or `(p1, p0)`).
struct FastComparator {
  ComparisonDirection direction;
  bool total_order = false;
  bool swapped = false;
};

std::optional<FastComparator> MatchFastComparator(const HloComputation &comparator,
                                                  PrimitiveType key_type) {
  const HloInstruction *root = comparator.root_instruction();
  if (!root || root->opcode() != HloOpcode::kCompare || root->operand_count() != 2 ||
      comparator.num_parameters() < 2)
    return std::nullopt;
  const HloInstruction *p0 = comparator.parameter_instruction(0);
  const HloInstruction *p1 = comparator.parameter_instruction(1);
  FastComparator fast;
  if (root->operand(0) == p0 && root->operand(1) == p1)
    fast.swapped = false;
  else if (root->operand(0) == p1 && root->operand(1) == p0)
    fast.swapped = true;
  else
    return std::nullopt;
  if (!p0 || p0->shape().element_type() != key_type || IsComplexType(key_type))
    return std::nullopt;
  llvm::Expected<ComparisonDirection> dir = GetComparisonDirection(*root);
  if (!dir) {
    llvm::consumeError(dir.takeError());
    return std::nullopt;
  }
  fast.direction = *dir;
  const HloText *type = root->FindAttribute("type");
  fast.total_order = type && *type == "TOTALORDER";
  if (fast.total_order && !IsFloatingPointType(key_type))
    fast.total_order = false;
  return fast;
}

} // namespace

llvm::Expected<Literal> EvalSort(const HloInstruction &inst,
                                 llvm::ArrayRef<const Literal *> operands,
                                 const ComputationRunner &runner) {
  llvm::ArrayRef<HloComputation *> to_apply = inst.CalledComputations("to_apply");
  if (to_apply.size() != 1)
    return EvalError(inst, "sort needs one comparator");
  llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
  if (!dims)
    return dims.takeError();
  const Shape &shape = operands[0]->shape();
  if (dims->size() != 1 || (*dims)[0] < 0 || (*dims)[0] >= shape.rank())
    return EvalError(inst, "sort needs one dimension within the rank");
  for (const Literal *op : operands)
    if (!op->shape().IsArray() || op->shape().dimensions() != shape.dimensions())
      return EvalError(inst, "sort operands differ in shape");
  if (to_apply[0]->num_parameters() != static_cast<int64_t>(2 * operands.size()))
    return EvalError(inst, "comparator takes " + llvm::Twine(to_apply[0]->num_parameters()) +
                               " parameters, expected " + llvm::Twine(2 * operands.size()));
  const int64_t dim = (*dims)[0];
  const int64_t len = shape.dimensions(dim);
  const int64_t stride = RowMajorStrides(shape.dimensions())[dim];
  std::optional<FastComparator> fast =
      MatchFastComparator(*to_apply[0], operands[0]->element_type());
  bool failed = false;
  ErrorSlot error;
  // less(i, j) on linear offsets of two elements.
  auto less = [&](int64_t i, int64_t j) -> bool {
    if (failed)
      return false;
    if (fast) {
      if (fast->swapped)
        std::swap(i, j);
      const Literal &key = *operands[0];
      if (fast->total_order)
        return CompareValues(fast->direction, TotalOrderKeyAt(key, i), TotalOrderKeyAt(key, j));
      if (IsFloatingPointType(key.element_type()))
        return CompareValues(fast->direction, key.GetAsDouble(i), key.GetAsDouble(j));
      if (IsUnsignedIntegralType(key.element_type()))
        return CompareValues(fast->direction, key.GetAsUint64(i), key.GetAsUint64(j));
      return CompareValues(fast->direction, key.GetAsInt64(i), key.GetAsInt64(j));
    }
    std::vector<Literal> args;
    for (const Literal *op : operands) {
      args.push_back(ScalarAt(*op, i));
      args.push_back(ScalarAt(*op, j));
    }
    llvm::Expected<Literal> r = runner(*to_apply[0], std::move(args));
    if (!r) {
      error.Set(r.takeError());
      failed = true;
      return false;
    }
    if (r->element_type() != PrimitiveType::PRED || r->element_count() != 1) {
      error.Set(EvalError(inst, "comparator must return pred[]"));
      failed = true;
      return false;
    }
    return r->GetAsBool(0);
  };
  std::vector<Literal> outs;
  for (const Literal *op : operands)
    outs.emplace_back(op->shape());
  std::vector<int64_t> outer_dims(shape.dimensions().begin(), shape.dimensions().end());
  outer_dims[dim] = 1;
  const int64_t rows = len == 0 ? 0 : shape.ElementsIn().value_or(0) / len;
  const std::vector<int64_t> outer_strides = RowMajorStrides(outer_dims);
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  std::vector<int64_t> order(len);
  for (int64_t r = 0; r < rows && !failed; ++r) {
    // Offset of the row's first element: r's multi-index over outer_dims.
    int64_t base = 0, rest = r;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      int64_t i = rest / outer_strides[d];
      rest %= outer_strides[d];
      base += i * strides[d];
    }
    for (int64_t k = 0; k < len; ++k)
      order[k] = base + k * stride;
    MergeSort(order, less, failed);
    for (size_t j = 0; j < operands.size(); ++j) {
      const int64_t bytes = ByteSizeOfPrimitiveType(operands[j]->element_type());
      for (int64_t k = 0; k < len; ++k)
        std::memcpy(outs[j].raw_data() + (base + k * stride) * bytes,
                    operands[j]->raw_data() + order[k] * bytes, bytes);
    }
  }
  if (error.failed())
    return error.Take();
  if (operands.size() == 1) {
    outs[0].Reshape(inst.shape());
    return std::move(outs[0]);
  }
  Literal tuple = Literal::MakeTuple(std::move(outs));
  tuple.Reshape(inst.shape());
  return tuple;
}

llvm::Expected<Literal> EvalMap(const HloInstruction &inst,
                                llvm::ArrayRef<const Literal *> operands,
                                const ComputationRunner &runner) {
  llvm::ArrayRef<HloComputation *> to_apply = inst.CalledComputations("to_apply");
  if (to_apply.size() != 1 || operands.empty())
    return EvalError(inst, "map needs operands and one to_apply computation");
  const Shape &shape = inst.shape();
  for (const Literal *op : operands)
    if (!op->shape().IsArray() || op->shape().dimensions() != shape.dimensions())
      return EvalError(inst, "map operands differ from the result shape");
  Literal out(shape);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::vector<Literal> args;
    for (const Literal *op : operands)
      args.push_back(ScalarAt(*op, i));
    llvm::Expected<Literal> r = runner(*to_apply[0], std::move(args));
    if (!r)
      return r.takeError();
    if (!r->shape().IsArray() || r->element_type() != out.element_type() ||
        r->element_count() != 1)
      return EvalError(inst, "to_apply returned " + r->shape().ToString());
    const int64_t bytes = ByteSizeOfPrimitiveType(out.element_type());
    std::memcpy(out.raw_data() + i * bytes, r->raw_data(), bytes);
  }
  return out;
}

} // namespace loom::hlo
