//===- EvalReduce.cpp - reduce with any to_apply, and Combiner ------------===//
//
// A reduce folds the init value first, then the reduced elements in
// row-major order (XLA's HloEvaluator order): one pass over the operand in
// row-major order visits the elements of every output position in exactly
// that order. A to_apply that is a single elementwise op of its two
// parameters runs as a typed loop; any other computation is called per
// element through the runner.
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"
#include "ElementTypes.h"
#include "ElementwiseOps.h"

#include <cstring>

namespace loom::hlo {

Combiner::Combiner(const HloComputation &computation, ComputationRunner runner)
    : computation_(computation), runner_(std::move(runner)) {
  const HloInstruction *root = computation.root_instruction();
  if (!root || computation.num_parameters() != 2 || root->operand_count() != 2 ||
      !IsEvalBinaryOpcode(root->opcode()))
    return;
  const HloInstruction *p0 = computation.parameter_instruction(0);
  const HloInstruction *p1 = computation.parameter_instruction(1);
  if (!p0 || !p1)
    return;
  const Shape &shape = root->shape();
  if (!shape.IsArray() || shape.rank() != 0 || !p0->shape().Compatible(shape) ||
      !p1->shape().Compatible(shape))
    return;
  if (root->operand(0) == p0 && root->operand(1) == p1) {
    fast_opcode_ = root->opcode();
  } else if (root->operand(0) == p1 && root->operand(1) == p0) {
    fast_opcode_ = root->opcode();
    swapped_ = true;
  }
}

llvm::Expected<Literal> Combiner::Call(std::vector<Literal> args) const {
  return runner_(computation_, std::move(args));
}

namespace {

/// Writes every result of one combiner step back into the accumulators.
llvm::Error StoreStep(const HloInstruction &inst, llvm::Expected<Literal> step,
                      std::vector<Literal *> accs, int64_t i) {
  if (!step)
    return step.takeError();
  const size_t n = accs.size();
  if (n == 1 && !step->IsTuple()) {
    if (step->element_type() != accs[0]->element_type() || step->element_count() != 1)
      return EvalError(inst, "to_apply returned " + step->shape().ToString());
    StoreScalar(*accs[0], i, *step);
    return llvm::Error::success();
  }
  if (!step->IsTuple() || step->tuple_elements().size() != n)
    return EvalError(inst, "to_apply returned " + step->shape().ToString() + ", expected " +
                               llvm::Twine(n) + " values");
  for (size_t j = 0; j < n; ++j) {
    const Literal &v = step->tuple_elements()[j];
    if (!v.shape().IsArray() || v.element_type() != accs[j]->element_type() ||
        v.element_count() != 1)
      return EvalError(inst, "to_apply returned " + step->shape().ToString());
    StoreScalar(*accs[j], i, v);
  }
  return llvm::Error::success();
}

/// For each element of the operand in row-major order, the position of
/// the output element it folds into.
class OutputIndexer {
public:
  OutputIndexer(const Shape &in, llvm::ArrayRef<int64_t> reduced) {
    std::vector<bool> is_reduced(in.rank(), false);
    for (int64_t d : reduced)
      is_reduced[d] = true;
    std::vector<int64_t> out_dims;
    for (int64_t d = 0; d < in.rank(); ++d)
      if (!is_reduced[d])
        out_dims.push_back(in.dimensions(d));
    std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
    dims_.assign(in.dimensions().begin(), in.dimensions().end());
    strides_.assign(in.rank(), 0);
    for (int64_t d = 0, k = 0; d < in.rank(); ++d)
      if (!is_reduced[d])
        strides_[d] = out_strides[k++];
    index_.assign(in.rank(), 0);
  }
  int64_t current() const { return offset_; }
  void Next() {
    for (int64_t d = static_cast<int64_t>(dims_.size()) - 1; d >= 0; --d) {
      offset_ += strides_[d];
      if (++index_[d] < dims_[d])
        return;
      offset_ -= strides_[d] * dims_[d];
      index_[d] = 0;
    }
  }

private:
  std::vector<int64_t> dims_, strides_, index_;
  int64_t offset_ = 0;
};

template <typename Op, typename T>
void FastReduceLoop(const Literal &in, Literal &out, llvm::ArrayRef<int64_t> reduced,
                    bool swapped) {
  using S = typename T::Storage;
  const S *src = in.data<S>();
  S *dst = out.data<S>();
  OutputIndexer indexer(in.shape(), reduced);
  const int64_t n = in.element_count();
  for (int64_t i = 0; i < n; ++i, indexer.Next()) {
    S &acc = dst[indexer.current()];
    auto a = T::Load(acc), x = T::Load(src[i]);
    // The accumulator is rounded to the element type after every step,
    // exactly as a to_apply returning that type does.
    acc = T::Store(swapped ? Op::template Apply<T>(x, a) : Op::template Apply<T>(a, x));
  }
}

bool TryFastReduce(const Literal &in, Literal &out, llvm::ArrayRef<int64_t> reduced,
                   const Combiner &combiner) {
  if (!combiner.is_fast() || combiner.computation().root_instruction()->shape().element_type() !=
                                 in.element_type())
    return false;
  bool done = false;
  ops::DispatchBinaryOp(*combiner.fast_opcode(), [&](auto op) {
    using Op = decltype(op);
    done = DispatchElementType(
        in.element_type(),
        [&](auto traits) {
          using T = decltype(traits);
          if constexpr (T::kKind == ElementKind::kComplex) {
            return false;
          } else if constexpr (Op::template Supports<T>()) {
            FastReduceLoop<Op, T>(in, out, reduced, combiner.swapped());
            return true;
          } else {
            return false;
          }
        },
        [] { return false; });
  });
  return done;
}

} // namespace

llvm::Error Combiner::Accumulate(const HloInstruction &inst, Literal &acc,
                                 const Literal &x) const {
  if (fast_opcode_ &&
      computation_.root_instruction()->shape().element_type() == acc.element_type())
    return ApplyBinaryInPlace(inst, *fast_opcode_, acc, x, swapped_);
  if (acc.element_count() != x.element_count() || acc.element_type() != x.element_type())
    return EvalError(inst, "operands of the reduction differ in shape");
  for (int64_t i = 0; i < acc.element_count(); ++i) {
    std::vector<Literal> args;
    args.push_back(ScalarAt(acc, i));
    args.push_back(ScalarAt(x, i));
    if (llvm::Error err = StoreStep(inst, Call(std::move(args)), {&acc}, i))
      return err;
  }
  return llvm::Error::success();
}

llvm::Expected<Literal> EvalReduce(const HloInstruction &inst,
                                   llvm::ArrayRef<const Literal *> operands,
                                   const Combiner &combiner) {
  if (operands.size() % 2 != 0 || operands.empty())
    return EvalError(inst, "reduce needs as many init values as operands");
  const size_t n = operands.size() / 2;
  llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
  if (!dims)
    return dims.takeError();
  const Shape &in_shape = operands[0]->shape();
  std::vector<bool> seen(in_shape.rank(), false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= in_shape.rank() || seen[d])
      return EvalError(inst, "reduce dimension " + llvm::Twine(d) + " is out of range");
    seen[d] = true;
  }
  std::vector<Shape> out_shapes;
  if (n == 1) {
    out_shapes.push_back(inst.shape());
  } else {
    if (!inst.shape().IsTuple() || inst.shape().tuple_shapes_size() != static_cast<int64_t>(n))
      return EvalError(inst, "variadic reduce needs a tuple result");
    out_shapes.assign(inst.shape().tuple_shapes().begin(), inst.shape().tuple_shapes().end());
  }
  std::vector<int64_t> expected_dims;
  for (int64_t d = 0; d < in_shape.rank(); ++d)
    if (!seen[d])
      expected_dims.push_back(in_shape.dimensions(d));
  // Every output starts as its init value broadcast.
  std::vector<Literal> outs;
  for (size_t j = 0; j < n; ++j) {
    const Literal &in = *operands[j], &init = *operands[n + j];
    const Shape &out_shape = out_shapes[j];
    if (!in.shape().IsArray() || in.shape().dimensions() != in_shape.dimensions() ||
        !init.shape().IsArray() || init.element_count() != 1 ||
        init.element_type() != out_shape.element_type() || !out_shape.IsArray() ||
        out_shape.dimensions() != llvm::ArrayRef<int64_t>(expected_dims))
      return EvalError(inst, "operand, init value and result shapes do not agree");
    Literal out(out_shape);
    const int64_t bytes = ByteSizeOfPrimitiveType(out.element_type());
    for (int64_t i = 0; i < out.element_count(); ++i)
      std::memcpy(out.raw_data() + i * bytes, init.raw_data(), bytes);
    outs.push_back(std::move(out));
  }
  if (n == 1 && operands[0]->element_type() == outs[0].element_type() &&
      TryFastReduce(*operands[0], outs[0], *dims, combiner))
    return std::move(outs[0]);
  OutputIndexer indexer(in_shape, *dims);
  std::vector<Literal *> accs;
  for (Literal &out : outs)
    accs.push_back(&out);
  const int64_t count = operands[0]->element_count();
  for (int64_t i = 0; i < count; ++i, indexer.Next()) {
    const int64_t o = indexer.current();
    std::vector<Literal> args;
    for (size_t j = 0; j < n; ++j)
      args.push_back(ScalarAt(outs[j], o));
    for (size_t j = 0; j < n; ++j)
      args.push_back(ScalarAt(*operands[j], i));
    if (llvm::Error err = StoreStep(inst, combiner.Call(std::move(args)), accs, o))
      return err;
  }
  if (n == 1)
    return std::move(outs[0]);
  Literal tuple = Literal::MakeTuple(std::move(outs));
  tuple.Reshape(inst.shape());
  return tuple;
}

} // namespace loom::hlo
