//===- EvalGather.cpp - gather and scatter --------------------------------===//
//
// XLA's general gather/scatter, batching dimensions included. Gather clamps
// each start index so the slice stays in bounds; scatter skips an update
// window whose start would put it (partly) out of bounds, like XLA's
// HloEvaluator. Scatter applies updates in row-major order of the updates.
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"
#include "ElementTypes.h"

#include "loom/hlo/ir/ShapeInference.h"

#include <algorithm>
#include <cstring>

namespace loom::hlo {
namespace {

llvm::Expected<std::vector<int64_t>> IntListAttr(const HloInstruction &inst,
                                                 llvm::StringRef name, bool required) {
  const HloText *text = inst.FindAttribute(name);
  if (!text) {
    if (required)
      return EvalError(inst, "missing " + name);
    return std::vector<int64_t>();
  }
  llvm::Expected<std::vector<int64_t>> values = ParseIntList(*text);
  if (!values)
    return EvalError(inst, "malformed " + name + ": " + llvm::toString(values.takeError()));
  return values;
}

llvm::Expected<int64_t> IntAttr(const HloInstruction &inst, llvm::StringRef name) {
  const HloText *text = inst.FindAttribute(name);
  int64_t v;
  if (!text || llvm::StringRef(*text).getAsInteger(10, v))
    return EvalError(inst, "missing or malformed " + name);
  return v;
}

/// The first error among `values` (the others are dropped); success if
/// none failed. Every Expected is checked either way.
template <typename... Ts> llvm::Error FirstError(llvm::Expected<Ts> &...values) {
  llvm::Error result = llvm::Error::success();
  auto take = [&](auto &v) {
    llvm::Error e = v.takeError();
    if (!e)
      return;
    if (result)
      llvm::consumeError(std::move(e));
    else
      result = std::move(e);
  };
  (take(values), ...);
  return result;
}

bool AllInRange(llvm::ArrayRef<int64_t> dims, int64_t rank) {
  for (int64_t d : dims)
    if (d < 0 || d >= rank)
      return false;
  return true;
}

bool Contains(llvm::ArrayRef<int64_t> v, int64_t x) { return llvm::is_contained(v, x); }

/// Reads the start index vector for batch position `batch` (a multi-index
/// over the indices' dimensions other than index_vector_dim).
void ReadIndexVector(const Literal &indices, int64_t index_vector_dim,
                     llvm::ArrayRef<int64_t> batch, llvm::ArrayRef<int64_t> strides,
                     int64_t count, std::vector<int64_t> &out) {
  const int64_t rank = indices.shape().rank();
  int64_t base = 0;
  for (int64_t d = 0, b = 0; d < rank; ++d)
    if (d != index_vector_dim)
      base += batch[b++] * strides[d];
  out.resize(count);
  const int64_t step = index_vector_dim < rank ? strides[index_vector_dim] : 0;
  for (int64_t i = 0; i < count; ++i)
    out[i] = IndexAt(indices, base + i * step);
}

int64_t Linear(llvm::ArrayRef<int64_t> index, llvm::ArrayRef<int64_t> strides) {
  int64_t l = 0;
  for (size_t d = 0; d < index.size(); ++d)
    l += index[d] * strides[d];
  return l;
}

} // namespace

llvm::Expected<Literal> EvalGather(const HloInstruction &inst, const Literal &operand,
                                   const Literal &indices) {
  auto offset_dims = IntListAttr(inst, "offset_dims", true);
  auto collapsed = IntListAttr(inst, "collapsed_slice_dims", false);
  auto start_index_map = IntListAttr(inst, "start_index_map", true);
  auto slice_sizes = IntListAttr(inst, "slice_sizes", true);
  auto operand_batching = IntListAttr(inst, "operand_batching_dims", false);
  auto indices_batching = IntListAttr(inst, "start_indices_batching_dims", false);
  auto index_vector_dim = IntAttr(inst, "index_vector_dim");
  if (llvm::Error err = FirstError(offset_dims, collapsed, start_index_map, slice_sizes,
                                   operand_batching, indices_batching, index_vector_dim))
    return err;
  const Shape &in = operand.shape(), &idx = indices.shape(), &out = inst.shape();
  if (!idx.IsArray() || !IsIntegralType(idx.element_type()) || !out.IsArray() ||
      out.element_type() != in.element_type() || *index_vector_dim < 0 ||
      *index_vector_dim > idx.rank() ||
      static_cast<int64_t>(slice_sizes->size()) != in.rank() ||
      !AllInRange(*offset_dims, out.rank()) || !AllInRange(*collapsed, in.rank()) ||
      !AllInRange(*start_index_map, in.rank()) || !AllInRange(*operand_batching, in.rank()) ||
      !AllInRange(*indices_batching, idx.rank()) ||
      operand_batching->size() != indices_batching->size())
    return EvalError(inst, "gather dimension numbers do not fit the shapes");
  const int64_t vector_size = *index_vector_dim < idx.rank() ? idx.dimensions(*index_vector_dim) : 1;
  if (vector_size != static_cast<int64_t>(start_index_map->size()))
    return EvalError(inst, "start_index_map does not match the index vector");
  // Output batch dims (those not in offset_dims) walk the indices' dims
  // other than index_vector_dim, in order.
  std::vector<int64_t> batch_out_dims, window_operand_dims;
  for (int64_t d = 0; d < out.rank(); ++d)
    if (!Contains(*offset_dims, d))
      batch_out_dims.push_back(d);
  for (int64_t d = 0; d < in.rank(); ++d)
    if (!Contains(*collapsed, d) && !Contains(*operand_batching, d))
      window_operand_dims.push_back(d);
  if (window_operand_dims.size() != offset_dims->size() ||
      static_cast<int64_t>(batch_out_dims.size()) != idx.rank() - (*index_vector_dim < idx.rank()))
    return EvalError(inst, "gather output rank does not fit the dimension numbers");
  for (size_t k = 0; k < offset_dims->size(); ++k)
    if ((*slice_sizes)[window_operand_dims[k]] != out.dimensions((*offset_dims)[k]))
      return EvalError(inst, "slice_sizes do not match the output");
  for (int64_t d = 0; d < in.rank(); ++d)
    if ((*slice_sizes)[d] < 0 || (*slice_sizes)[d] > in.dimensions(d))
      return EvalError(inst, "slice_sizes exceed the operand");
  // The loop below walks the declared result and reads the index vector of
  // each of its batch positions: only XLA's result shape (the verifier's
  // rule, docs/hlo-verifier.md) keeps those reads inside the indices.
  GatherDimensionNumbers dnums{*offset_dims,      *collapsed,        *start_index_map,
                               *operand_batching, *indices_batching, *index_vector_dim,
                               *slice_sizes};
  llvm::Expected<Shape> expected = ShapeInference::InferGatherShape(in, idx, dnums);
  if (!expected)
    return EvalError(inst, llvm::toString(expected.takeError()));
  if (expected->dimensions() != out.dimensions())
    return EvalError(inst, "result " + out.ToString(false) + " must be " +
                               expected->ToString(false) + " for operand " +
                               in.ToString(false) + " and start indices " +
                               idx.ToString(false));
  Literal result(out);
  // A zero slice size leaves nothing to read, and the clamped start could
  // point one past the operand's end. Along an offset dimension the result
  // is empty; along a collapsed one (XLA's rule allows 0) the result still
  // has elements, whose values XLA does not define: refused, not made up.
  if (llvm::is_contained(*slice_sizes, 0)) {
    if (result.element_count() == 0)
      return result;
    return UnsupportedError(inst, "slice size 0 of a collapsed or batching dimension");
  }
  // Position of an indices dimension among the batch dims.
  std::vector<int64_t> batch_position(idx.rank(), -1);
  for (int64_t d = 0, b = 0; d < idx.rank(); ++d)
    if (d != *index_vector_dim)
      batch_position[d] = b++;
  const int64_t bytes = ByteSizeOfPrimitiveType(in.element_type());
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dimensions());
  const std::vector<int64_t> idx_strides = RowMajorStrides(idx.dimensions());
  std::vector<int64_t> batch(batch_out_dims.size()), vec, start(in.rank()), at(in.rank());
  int64_t o = 0;
  ForEachIndex(out.dimensions(), [&](llvm::ArrayRef<int64_t> index) {
    for (size_t b = 0; b < batch_out_dims.size(); ++b)
      batch[b] = index[batch_out_dims[b]];
    ReadIndexVector(indices, *index_vector_dim, batch, idx_strides,
                    static_cast<int64_t>(start_index_map->size()), vec);
    std::fill(start.begin(), start.end(), 0);
    for (size_t i = 0; i < start_index_map->size(); ++i)
      start[(*start_index_map)[i]] = vec[i];
    for (size_t k = 0; k < operand_batching->size(); ++k)
      start[(*operand_batching)[k]] = batch[batch_position[(*indices_batching)[k]]];
    for (int64_t d = 0; d < in.rank(); ++d)
      at[d] = std::clamp<int64_t>(start[d], 0, in.dimensions(d) - (*slice_sizes)[d]);
    for (size_t k = 0; k < offset_dims->size(); ++k)
      at[window_operand_dims[k]] += index[(*offset_dims)[k]];
    std::memcpy(result.raw_data() + o * bytes,
                operand.raw_data() + Linear(at, in_strides) * bytes, bytes);
    ++o;
    return true;
  });
  return result;
}

llvm::Expected<Literal> EvalScatter(const HloInstruction &inst,
                                    llvm::ArrayRef<const Literal *> operands,
                                    const ComputationRunner &runner) {
  if (operands.size() < 3 || operands.size() % 2 != 1)
    return EvalError(inst, "scatter needs operands, indices and as many updates");
  const size_t n = (operands.size() - 1) / 2;
  const Literal &indices = *operands[n];
  llvm::ArrayRef<HloComputation *> to_apply = inst.CalledComputations("to_apply");
  if (to_apply.size() != 1)
    return EvalError(inst, "scatter needs one to_apply computation");
  auto window_dims = IntListAttr(inst, "update_window_dims", true);
  auto inserted = IntListAttr(inst, "inserted_window_dims", false);
  auto to_operand = IntListAttr(inst, "scatter_dims_to_operand_dims", true);
  auto input_batching = IntListAttr(inst, "input_batching_dims", false);
  auto indices_batching = IntListAttr(inst, "scatter_indices_batching_dims", false);
  auto index_vector_dim = IntAttr(inst, "index_vector_dim");
  if (llvm::Error err = FirstError(window_dims, inserted, to_operand, input_batching,
                                   indices_batching, index_vector_dim))
    return err;
  const Shape &in = operands[0]->shape(), &idx = indices.shape(),
              &upd = operands[n + 1]->shape();
  for (size_t j = 0; j < n; ++j)
    if (!operands[j]->shape().IsArray() || operands[j]->shape().dimensions() != in.dimensions() ||
        !operands[n + 1 + j]->shape().IsArray() ||
        operands[n + 1 + j]->shape().dimensions() != upd.dimensions())
      return EvalError(inst, "operands or updates differ in shape");
  if (!idx.IsArray() || !IsIntegralType(idx.element_type()) || *index_vector_dim < 0 ||
      *index_vector_dim > idx.rank() || !AllInRange(*window_dims, upd.rank()) ||
      !AllInRange(*inserted, in.rank()) || !AllInRange(*to_operand, in.rank()) ||
      !AllInRange(*input_batching, in.rank()) || !AllInRange(*indices_batching, idx.rank()) ||
      input_batching->size() != indices_batching->size())
    return EvalError(inst, "scatter dimension numbers do not fit the shapes");
  const int64_t vector_size = *index_vector_dim < idx.rank() ? idx.dimensions(*index_vector_dim) : 1;
  if (vector_size != static_cast<int64_t>(to_operand->size()))
    return EvalError(inst, "scatter_dims_to_operand_dims does not match the index vector");
  std::vector<int64_t> scatter_upd_dims, window_operand_dims;
  for (int64_t d = 0; d < upd.rank(); ++d)
    if (!Contains(*window_dims, d))
      scatter_upd_dims.push_back(d);
  for (int64_t d = 0; d < in.rank(); ++d)
    if (!Contains(*inserted, d) && !Contains(*input_batching, d))
      window_operand_dims.push_back(d);
  if (window_operand_dims.size() != window_dims->size() ||
      static_cast<int64_t>(scatter_upd_dims.size()) != idx.rank() - (*index_vector_dim < idx.rank()))
    return EvalError(inst, "scatter update rank does not fit the dimension numbers");
  // Extent of the update window in every operand dimension.
  std::vector<int64_t> window_size(in.rank(), 1);
  for (size_t k = 0; k < window_dims->size(); ++k)
    window_size[window_operand_dims[k]] = upd.dimensions((*window_dims)[k]);
  std::vector<int64_t> batch_position(idx.rank(), -1);
  for (int64_t d = 0, b = 0; d < idx.rank(); ++d)
    if (d != *index_vector_dim)
      batch_position[d] = b++;
  std::vector<Literal> results;
  for (size_t j = 0; j < n; ++j)
    results.push_back(*operands[j]);
  Combiner combiner(*to_apply[0], runner);
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dimensions());
  const std::vector<int64_t> idx_strides = RowMajorStrides(idx.dimensions());
  std::vector<int64_t> batch(scatter_upd_dims.size()), vec, start(in.rank()), at(in.rank());
  ErrorSlot error;
  int64_t u = 0;
  ForEachIndex(upd.dimensions(), [&](llvm::ArrayRef<int64_t> index) {
    const int64_t update_linear = u++;
    for (size_t b = 0; b < scatter_upd_dims.size(); ++b)
      batch[b] = index[scatter_upd_dims[b]];
    ReadIndexVector(indices, *index_vector_dim, batch, idx_strides,
                    static_cast<int64_t>(to_operand->size()), vec);
    std::fill(start.begin(), start.end(), 0);
    for (size_t i = 0; i < to_operand->size(); ++i)
      start[(*to_operand)[i]] = vec[i];
    for (size_t k = 0; k < input_batching->size(); ++k)
      start[(*input_batching)[k]] = batch[batch_position[(*indices_batching)[k]]];
    for (int64_t d = 0; d < in.rank(); ++d)
      if (start[d] < 0 || start[d] > in.dimensions(d) - window_size[d])
        return true; // the window does not fit: XLA skips the update
    at = start;
    for (size_t k = 0; k < window_dims->size(); ++k)
      at[window_operand_dims[k]] += index[(*window_dims)[k]];
    const int64_t o = Linear(at, in_strides);
    std::vector<Literal> args;
    for (size_t j = 0; j < n; ++j) {
      Literal s(Shape(results[j].element_type(), {}));
      int64_t bytes = ByteSizeOfPrimitiveType(s.element_type());
      std::memcpy(s.raw_data(), results[j].raw_data() + o * bytes, bytes);
      args.push_back(std::move(s));
    }
    for (size_t j = 0; j < n; ++j) {
      const Literal &update = *operands[n + 1 + j];
      Literal s(Shape(update.element_type(), {}));
      int64_t bytes = ByteSizeOfPrimitiveType(s.element_type());
      std::memcpy(s.raw_data(), update.raw_data() + update_linear * bytes, bytes);
      args.push_back(std::move(s));
    }
    llvm::Expected<Literal> step = combiner.Call(std::move(args));
    if (!step) {
      error.Set(step.takeError());
      return false;
    }
    for (size_t j = 0; j < n; ++j) {
      const Literal &v = n == 1 ? *step : step->tuple_elements()[j];
      if ((n > 1 && (!step->IsTuple() || step->tuple_elements().size() != n)) ||
          !v.shape().IsArray() || v.element_type() != results[j].element_type() ||
          v.element_count() != 1) {
        error.Set(EvalError(inst, "to_apply returned " + step->shape().ToString()));
        return false;
      }
      int64_t bytes = ByteSizeOfPrimitiveType(v.element_type());
      std::memcpy(results[j].raw_data() + o * bytes, v.raw_data(), bytes);
    }
    return true;
  });
  if (error.failed())
    return error.Take();
  if (n == 1) {
    results[0].Reshape(inst.shape());
    return std::move(results[0]);
  }
  Literal tuple = Literal::MakeTuple(std::move(results));
  tuple.Reshape(inst.shape());
  return tuple;
}

} // namespace loom::hlo
