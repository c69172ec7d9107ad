//===- EvalShapeOps.cpp - Data movement: transpose, slice, pad, ... -------===//
//
// Every data-movement op is a strided copy of a box of elements between two
// row-major buffers; the copy only knows the element's byte size, so one
// implementation serves every element type.
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"
#include "ElementTypes.h"

#include <algorithm>
#include <cstring>

namespace loom::hlo {

std::vector<int64_t> RowMajorStrides(llvm::ArrayRef<int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

int64_t IndexAt(const Literal &indices, int64_t i) {
  // Unsigned 64-bit indices above INT64_MAX are simply very large: saturate
  // instead of wrapping to a negative index.
  if (indices.element_type() == PrimitiveType::U64) {
    uint64_t v = indices.GetAsUint64(i);
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
  }
  return indices.GetAsInt64(i);
}

int64_t ScalarToInt64(const Literal &scalar) { return IndexAt(scalar, 0); }

namespace {

template <int kBytes>
void InnerCopy(const uint8_t *src, int64_t src_stride, uint8_t *dst, int64_t dst_stride,
               int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(dst + i * dst_stride * kBytes, src + i * src_stride * kBytes, kBytes);
}

/// dst[dst_base + Σ idx·dst_strides] = src[src_base + Σ idx·src_strides]
/// for every multi-index idx of `dims`; offsets and strides in elements.
void StridedCopy(const uint8_t *src, int64_t src_base, llvm::ArrayRef<int64_t> src_strides,
                 uint8_t *dst, int64_t dst_base, llvm::ArrayRef<int64_t> dst_strides,
                 llvm::ArrayRef<int64_t> dims, int64_t bytes) {
  for (int64_t d : dims)
    if (d <= 0)
      return;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) {
    std::memcpy(dst + dst_base * bytes, src + src_base * bytes, bytes);
    return;
  }
  const int64_t inner = dims[rank - 1];
  const int64_t s_in = src_strides[rank - 1], d_in = dst_strides[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  int64_t s_off = src_base, d_off = dst_base;
  while (true) {
    const uint8_t *s = src + s_off * bytes;
    uint8_t *d = dst + d_off * bytes;
    switch (bytes) {
    case 1: InnerCopy<1>(s, s_in, d, d_in, inner); break;
    case 2: InnerCopy<2>(s, s_in, d, d_in, inner); break;
    case 4: InnerCopy<4>(s, s_in, d, d_in, inner); break;
    case 8: InnerCopy<8>(s, s_in, d, d_in, inner); break;
    case 16: InnerCopy<16>(s, s_in, d, d_in, inner); break;
    default:
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(d + i * d_in * bytes, s + i * s_in * bytes, bytes);
    }
    // Odometer over the outer dimensions.
    int64_t k = rank - 2;
    for (; k >= 0; --k) {
      ++index[k];
      s_off += src_strides[k];
      d_off += dst_strides[k];
      if (index[k] < dims[k])
        break;
      s_off -= src_strides[k] * dims[k];
      d_off -= dst_strides[k] * dims[k];
      index[k] = 0;
    }
    if (k < 0)
      return;
  }
}

int64_t ElementBytes(const Literal &lit) { return ByteSizeOfPrimitiveType(lit.element_type()); }

llvm::Error CheckArray(const HloInstruction &inst, const Literal &lit) {
  if (!lit.shape().IsArray())
    return EvalError(inst, "expected an array operand, got " + lit.shape().ToString());
  return llvm::Error::success();
}

/// An array operand whose element type the array result keeps.
llvm::Error CheckArrayAndResultType(const HloInstruction &inst, const Literal &operand) {
  if (llvm::Error err = CheckArray(inst, operand))
    return err;
  if (!inst.shape().IsArray() || inst.shape().element_type() != operand.element_type())
    return EvalError(inst, "result type " + inst.shape().ToString() +
                               " differs from the operand's element type");
  return llvm::Error::success();
}

/// Start indices of dynamic-slice / dynamic-update-slice: one scalar
/// operand per dimension, or (old form) one rank-1 operand.
llvm::Expected<std::vector<int64_t>> StartIndices(const HloInstruction &inst,
                                                  llvm::ArrayRef<const Literal *> index_operands,
                                                  int64_t rank) {
  std::vector<int64_t> starts;
  if (index_operands.size() == 1 && index_operands[0]->shape().rank() == 1) {
    const Literal &v = *index_operands[0];
    for (int64_t i = 0; i < v.element_count(); ++i)
      starts.push_back(IndexAt(v, i));
  } else {
    for (const Literal *s : index_operands) {
      if (!s->shape().IsArray() || s->shape().rank() != 0 ||
          !IsIntegralType(s->element_type()))
        return EvalError(inst, "start indices must be integer scalars");
      starts.push_back(ScalarToInt64(*s));
    }
  }
  if (static_cast<int64_t>(starts.size()) != rank)
    return EvalError(inst, "expected " + llvm::Twine(rank) + " start indices, got " +
                               llvm::Twine(starts.size()));
  return starts;
}

} // namespace

Literal TransposeLiteral(const Literal &operand, llvm::ArrayRef<int64_t> permutation,
                         const Shape &result_shape) {
  Literal out(result_shape);
  std::vector<int64_t> op_strides = RowMajorStrides(operand.shape().dimensions());
  std::vector<int64_t> src_strides(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i)
    src_strides[i] = op_strides[permutation[i]];
  StridedCopy(operand.raw_data(), 0, src_strides, out.raw_data(), 0,
              RowMajorStrides(result_shape.dimensions()), result_shape.dimensions(),
              ElementBytes(operand));
  return out;
}

llvm::Expected<Literal> EvalTranspose(const HloInstruction &inst, const Literal &operand) {
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  llvm::Expected<std::vector<int64_t>> perm = GetDimensions(inst);
  if (!perm)
    return perm.takeError();
  const int64_t rank = operand.shape().rank();
  std::vector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm->size()) != rank || inst.shape().rank() != rank)
    return EvalError(inst, "permutation does not match the rank");
  for (int64_t i = 0; i < rank; ++i) {
    int64_t p = (*perm)[i];
    if (p < 0 || p >= rank || seen[p] ||
        operand.shape().dimensions(p) != inst.shape().dimensions(i))
      return EvalError(inst, "invalid permutation");
    seen[p] = true;
  }
  return TransposeLiteral(operand, *perm, inst.shape());
}

llvm::Expected<Literal> EvalBroadcast(const HloInstruction &inst, const Literal &operand) {
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
  if (!dims)
    return dims.takeError();
  const Shape &shape = inst.shape();
  if (static_cast<int64_t>(dims->size()) != operand.shape().rank())
    return EvalError(inst, "broadcast dimensions do not match the operand rank");
  std::vector<int64_t> op_strides = RowMajorStrides(operand.shape().dimensions());
  std::vector<int64_t> src_strides(shape.rank(), 0);
  for (size_t j = 0; j < dims->size(); ++j) {
    int64_t d = (*dims)[j];
    if (d < 0 || d >= shape.rank() || shape.dimensions(d) != operand.shape().dimensions(j))
      return EvalError(inst, "broadcast dimension " + llvm::Twine(d) + " does not fit");
    src_strides[d] = op_strides[j];
  }
  Literal out(shape);
  StridedCopy(operand.raw_data(), 0, src_strides, out.raw_data(), 0,
              RowMajorStrides(shape.dimensions()), shape.dimensions(), ElementBytes(operand));
  return out;
}

Literal SliceLiteral(const Literal &operand, llvm::ArrayRef<int64_t> starts,
                     llvm::ArrayRef<int64_t> sizes, const Shape &result_shape) {
  Literal out(result_shape);
  std::vector<int64_t> strides = RowMajorStrides(operand.shape().dimensions());
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d)
    base += starts[d] * strides[d];
  StridedCopy(operand.raw_data(), base, strides, out.raw_data(), 0,
              RowMajorStrides(sizes), sizes, ElementBytes(operand));
  return out;
}

llvm::Expected<Literal> EvalSlice(const HloInstruction &inst, const Literal &operand) {
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  llvm::Expected<SliceConfig> config = GetSliceConfig(inst);
  if (!config)
    return config.takeError();
  const int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(config->starts.size()) != rank || inst.shape().rank() != rank)
    return EvalError(inst, "slice config does not match the rank");
  std::vector<int64_t> strides = RowMajorStrides(operand.shape().dimensions());
  std::vector<int64_t> src_strides(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t start = config->starts[d], limit = config->limits[d], step = config->strides[d];
    if (start < 0 || limit > operand.shape().dimensions(d) || start > limit || step <= 0 ||
        (limit - start + step - 1) / step != inst.shape().dimensions(d))
      return EvalError(inst, "slice [" + llvm::Twine(start) + ":" + llvm::Twine(limit) + ":" +
                                 llvm::Twine(step) + "] does not fit dimension " +
                                 llvm::Twine(d));
    base += start * strides[d];
    src_strides[d] = strides[d] * step;
  }
  Literal out(inst.shape());
  StridedCopy(operand.raw_data(), base, src_strides, out.raw_data(), 0,
              RowMajorStrides(inst.shape().dimensions()), inst.shape().dimensions(),
              ElementBytes(operand));
  return out;
}

llvm::Expected<Literal> EvalDynamicSlice(const HloInstruction &inst,
                                         llvm::ArrayRef<const Literal *> operands) {
  const Literal &operand = *operands[0];
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  const int64_t rank = operand.shape().rank();
  llvm::Expected<std::vector<int64_t>> starts = StartIndices(inst, operands.drop_front(), rank);
  if (!starts)
    return starts.takeError();
  const Shape &shape = inst.shape();
  if (shape.rank() != rank)
    return EvalError(inst, "result rank differs from the operand rank");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = shape.dimensions(d), dim = operand.shape().dimensions(d);
    if (size > dim)
      return EvalError(inst, "slice size exceeds dimension " + llvm::Twine(d));
    // XLA clamps the start so the whole slice stays in bounds.
    (*starts)[d] = std::clamp<int64_t>((*starts)[d], 0, dim - size);
  }
  return SliceLiteral(operand, *starts, shape.dimensions(), shape);
}

void UpdateSliceInPlace(Literal &target, const Literal &update, llvm::ArrayRef<int64_t> starts) {
  std::vector<int64_t> strides = RowMajorStrides(target.shape().dimensions());
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d)
    base += starts[d] * strides[d];
  StridedCopy(update.raw_data(), 0, RowMajorStrides(update.shape().dimensions()),
              target.raw_data(), base, strides, update.shape().dimensions(),
              ElementBytes(target));
}

llvm::Expected<Literal> EvalDynamicUpdateSlice(const HloInstruction &inst, Literal operand,
                                               llvm::ArrayRef<const Literal *> rest) {
  const Literal &update = *rest[0];
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  const int64_t rank = operand.shape().rank();
  if (!update.shape().IsArray() || update.shape().rank() != rank ||
      update.element_type() != operand.element_type())
    return EvalError(inst, "update shape does not match the operand");
  llvm::Expected<std::vector<int64_t>> starts = StartIndices(inst, rest.drop_front(), rank);
  if (!starts)
    return starts.takeError();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = update.shape().dimensions(d), dim = operand.shape().dimensions(d);
    if (size > dim)
      return EvalError(inst, "update exceeds dimension " + llvm::Twine(d));
    (*starts)[d] = std::clamp<int64_t>((*starts)[d], 0, dim - size);
  }
  UpdateSliceInPlace(operand, update, *starts);
  operand.Reshape(inst.shape());
  return operand;
}

Literal ConcatenateLiterals(llvm::ArrayRef<const Literal *> operands, int64_t dim,
                            const Shape &result_shape) {
  Literal out(result_shape);
  std::vector<int64_t> out_strides = RowMajorStrides(result_shape.dimensions());
  int64_t offset = 0;
  for (const Literal *op : operands) {
    StridedCopy(op->raw_data(), 0, RowMajorStrides(op->shape().dimensions()), out.raw_data(),
                offset * out_strides[dim], out_strides, op->shape().dimensions(),
                ElementBytes(*op));
    offset += op->shape().dimensions(dim);
  }
  return out;
}

llvm::Expected<Literal> EvalConcatenate(const HloInstruction &inst,
                                        llvm::ArrayRef<const Literal *> operands) {
  llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
  if (!dims)
    return dims.takeError();
  const Shape &shape = inst.shape();
  if (dims->size() != 1 || (*dims)[0] < 0 || (*dims)[0] >= shape.rank())
    return EvalError(inst, "concatenate needs one dimension within the rank");
  const int64_t dim = (*dims)[0];
  int64_t total = 0;
  for (const Literal *op : operands) {
    if (!op->shape().IsArray() || op->shape().rank() != shape.rank() ||
        op->element_type() != shape.element_type())
      return EvalError(inst, "operand " + op->shape().ToString() + " does not fit");
    for (int64_t d = 0; d < shape.rank(); ++d)
      if (d != dim && op->shape().dimensions(d) != shape.dimensions(d))
        return EvalError(inst, "operand " + op->shape().ToString() + " does not fit");
    total += op->shape().dimensions(dim);
  }
  if (total != shape.dimensions(dim))
    return EvalError(inst, "operands do not add up to the result dimension");
  return ConcatenateLiterals(operands, dim, shape);
}

llvm::Expected<Literal> EvalPad(const HloInstruction &inst, const Literal &operand,
                                const Literal &pad_value) {
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  llvm::Expected<std::vector<PaddingDimension>> config = GetPaddingConfig(inst);
  if (!config)
    return config.takeError();
  const Shape &shape = inst.shape();
  const int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(config->size()) != rank || shape.rank() != rank ||
      pad_value.element_type() != operand.element_type() || pad_value.element_count() != 1)
    return EvalError(inst, "padding config or pad value does not match the operand");
  Literal out(shape);
  const int64_t bytes = ElementBytes(operand);
  for (int64_t i = 0; i < out.element_count(); ++i)
    std::memcpy(out.raw_data() + i * bytes, pad_value.raw_data(), bytes);
  std::vector<int64_t> op_strides = RowMajorStrides(operand.shape().dimensions());
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dimensions());
  std::vector<int64_t> src_strides(rank), dst_strides(rank), box(rank);
  int64_t src_base = 0, dst_base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const PaddingDimension &p = (*config)[d];
    const int64_t in_dim = operand.shape().dimensions(d), out_dim = shape.dimensions(d);
    if (p.interior < 0)
      return EvalError(inst, "negative interior padding");
    const int64_t expected =
        p.low + p.high + in_dim + std::max<int64_t>(in_dim - 1, 0) * p.interior;
    if (expected != out_dim)
      return EvalError(inst, "padding does not produce the result dimension " +
                                 llvm::Twine(d));
    // Operand element i lands at low + i * step; negative low padding cuts
    // elements off the front, negative high padding off the back.
    const int64_t step = p.interior + 1;
    int64_t first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
    int64_t end = out_dim - p.low <= 0 ? 0 : std::min(in_dim, (out_dim - p.low + step - 1) / step);
    box[d] = std::max<int64_t>(end - first, 0);
    src_base += first * op_strides[d];
    dst_base += (p.low + first * step) * out_strides[d];
    src_strides[d] = op_strides[d];
    dst_strides[d] = out_strides[d] * step;
  }
  StridedCopy(operand.raw_data(), src_base, src_strides, out.raw_data(), dst_base,
              dst_strides, box, bytes);
  return out;
}

llvm::Expected<Literal> EvalReverse(const HloInstruction &inst, const Literal &operand) {
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
  if (!dims)
    return dims.takeError();
  const Shape &shape = operand.shape();
  std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  std::vector<int64_t> src_strides = strides;
  int64_t base = 0;
  for (int64_t d : *dims) {
    if (d < 0 || d >= shape.rank())
      return EvalError(inst, "reverse dimension out of range");
    if (shape.dimensions(d) == 0)
      continue;
    base += (shape.dimensions(d) - 1) * strides[d];
    src_strides[d] = -strides[d];
  }
  Literal out(inst.shape());
  if (out.element_count() != operand.element_count())
    return EvalError(inst, "result shape differs from the operand");
  StridedCopy(operand.raw_data(), base, src_strides, out.raw_data(), 0, strides,
              shape.dimensions(), ElementBytes(operand));
  return out;
}

llvm::Expected<Literal> EvalIota(const HloInstruction &inst) {
  llvm::Expected<int64_t> dim = GetIotaDimension(inst);
  if (!dim)
    return dim.takeError();
  const Shape &shape = inst.shape();
  if (!shape.IsArray() || *dim < 0 || *dim >= shape.rank())
    return EvalError(inst, "iota_dimension out of range");
  Literal out(shape);
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  const int64_t stride = strides[*dim], size = shape.dimensions(*dim);
  bool ok = DispatchElementType(
      shape.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        using S64 = ElementTraits<PrimitiveType::S64>;
        auto *dst = out.data<typename T::Storage>();
        for (int64_t i = 0; i < out.element_count(); ++i)
          dst[i] = ConvertElement<S64, T>((i / stride) % size);
        return true;
      },
      [] { return false; });
  if (!ok)
    return UnsupportedError(inst, "element type");
  return out;
}

Literal ReshapeLiteral(Literal lit, const Shape &shape) {
  lit.Reshape(shape);
  return lit;
}

llvm::Expected<Literal> EvalReshape(const HloInstruction &inst, Literal operand) {
  if (llvm::Error err = CheckArrayAndResultType(inst, operand))
    return err;
  if (inst.shape().ElementsIn() != operand.element_count())
    return EvalError(inst, "reshape changes the element count");
  return ReshapeLiteral(std::move(operand), inst.shape());
}

namespace {

std::vector<int64_t> MajorToMinor(const Shape &shape) {
  Layout layout = shape.has_layout() && !shape.layout()->minor_to_major.empty()
                      ? *shape.layout()
                      : Shape::DefaultLayout(shape.rank());
  std::vector<int64_t> order(layout.minor_to_major.rbegin(), layout.minor_to_major.rend());
  return order;
}

bool IsPermutation(llvm::ArrayRef<int64_t> perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : perm) {
    if (d < 0 || d >= rank || seen[d])
      return false;
    seen[d] = true;
  }
  return true;
}

bool IsIdentity(llvm::ArrayRef<int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

} // namespace

llvm::Expected<Literal> EvalBitcast(const HloInstruction &inst, Literal operand) {
  if (llvm::Error err = CheckArray(inst, operand))
    return err;
  const Shape &shape = inst.shape();
  if (!shape.IsArray() || shape.element_type() != operand.element_type())
    return UnsupportedError(inst, "bitcast that changes the element type");
  if (shape.ElementsIn() != operand.element_count())
    return EvalError(inst, "bitcast changes the element count");
  // A bitcast reinterprets the physical buffer: values are logical
  // row-major here, so go through the physical order of both layouts.
  std::vector<int64_t> from = MajorToMinor(operand.shape());
  std::vector<int64_t> to = MajorToMinor(shape);
  if (!IsPermutation(from, operand.shape().rank()) || !IsPermutation(to, shape.rank()))
    return EvalError(inst, "layout is not a permutation of the dimensions");
  Literal physical = std::move(operand);
  if (!IsIdentity(from)) {
    std::vector<int64_t> dims;
    for (int64_t d : from)
      dims.push_back(physical.shape().dimensions(d));
    physical = TransposeLiteral(physical, from, Shape(physical.element_type(), dims));
  }
  if (IsIdentity(to))
    return ReshapeLiteral(std::move(physical), shape);
  std::vector<int64_t> physical_dims;
  for (int64_t d : to)
    physical_dims.push_back(shape.dimensions(d));
  physical.Reshape(Shape(shape.element_type(), physical_dims));
  // Logical dimension j is physical dimension k where to[k] == j.
  std::vector<int64_t> inverse(to.size());
  for (size_t k = 0; k < to.size(); ++k)
    inverse[to[k]] = static_cast<int64_t>(k);
  return TransposeLiteral(physical, inverse, shape);
}

} // namespace loom::hlo
