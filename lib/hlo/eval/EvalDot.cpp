//===- EvalDot.cpp - dot with general dimension numbers -------------------===//
//
// Operands are transposed to [batch, free, contracting] and converted to
// the accumulation type once: f32 for every float result narrower than f64
// (bf16/f16/f8 inputs accumulate in f32 and round once at the end), f64 when
// the result or an operand is f64, 64-bit wrapping integers for integer
// results. The sum over the contracting dimensions runs in row-major order
// of those dimensions.
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"
#include "ElementTypes.h"

#include "loom/hlo/ir/ShapeInference.h"

#include <algorithm>

namespace loom::hlo {
namespace {

/// Converts every element of `lit` to the accumulation type Acc.
template <typename AccTraits>
std::vector<typename AccTraits::Storage> ToAccumulator(const Literal &lit) {
  std::vector<typename AccTraits::Storage> out(lit.element_count());
  DispatchElementType(
      lit.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        if constexpr (T::kKind != ElementKind::kComplex) {
          const auto *src = lit.data<typename T::Storage>();
          for (size_t i = 0; i < out.size(); ++i)
            out[i] = ConvertElement<T, AccTraits>(src[i]);
        }
      },
      [] {});
  return out;
}

template <typename V> V MulAdd(V acc, V a, V b) {
  if constexpr (std::is_integral_v<V>) {
    using U = std::make_unsigned_t<V>;
    return static_cast<V>(static_cast<U>(acc) + static_cast<U>(a) * static_cast<U>(b));
  } else {
    return acc + a * b;
  }
}

struct DotGeometry {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> lhs_perm, rhs_perm;
  std::vector<int64_t> lhs_perm_dims, rhs_perm_dims;
};

/// The transposes that bring both operands to [batch, free, contracting];
/// the dimension numbers were validated by ShapeInference::InferDotShape.
DotGeometry Analyze(const Shape &lhs, const Shape &rhs, const DotDimensionNumbers &dn) {
  DotGeometry g;
  std::vector<bool> lhs_used(lhs.rank(), false), rhs_used(rhs.rank(), false);
  for (auto [dims, used] : {std::pair(&dn.lhs_batch_dimensions, &lhs_used),
                            std::pair(&dn.lhs_contracting_dimensions, &lhs_used),
                            std::pair(&dn.rhs_batch_dimensions, &rhs_used),
                            std::pair(&dn.rhs_contracting_dimensions, &rhs_used)})
    for (int64_t d : *dims)
      (*used)[d] = true;
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    g.batch *= lhs.dimensions(dn.lhs_batch_dimensions[i]);
    g.lhs_perm.push_back(dn.lhs_batch_dimensions[i]);
    g.rhs_perm.push_back(dn.rhs_batch_dimensions[i]);
  }
  for (int64_t d = 0; d < lhs.rank(); ++d)
    if (!lhs_used[d]) {
      g.m *= lhs.dimensions(d);
      g.lhs_perm.push_back(d);
    }
  for (int64_t d = 0; d < rhs.rank(); ++d)
    if (!rhs_used[d]) {
      g.n *= rhs.dimensions(d);
      g.rhs_perm.push_back(d);
    }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    g.k *= lhs.dimensions(dn.lhs_contracting_dimensions[i]);
    g.lhs_perm.push_back(dn.lhs_contracting_dimensions[i]);
    g.rhs_perm.push_back(dn.rhs_contracting_dimensions[i]);
  }
  for (int64_t d : g.lhs_perm)
    g.lhs_perm_dims.push_back(lhs.dimensions(d));
  for (int64_t d : g.rhs_perm)
    g.rhs_perm_dims.push_back(rhs.dimensions(d));
  return g;
}

template <typename AccTraits>
void RunDot(const DotGeometry &g, const Literal &lhs_t, const Literal &rhs_t, Literal &out) {
  using Acc = typename AccTraits::Storage;
  std::vector<Acc> l = ToAccumulator<AccTraits>(lhs_t); // [batch][m][k]
  std::vector<Acc> r = ToAccumulator<AccTraits>(rhs_t); // [batch][n][k]
  DispatchElementType(
      out.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        auto *dst = out.data<typename T::Storage>();
        for (int64_t b = 0; b < g.batch; ++b)
          for (int64_t i = 0; i < g.m; ++i) {
            const Acc *lrow = l.data() + (b * g.m + i) * g.k;
            for (int64_t j = 0; j < g.n; ++j) {
              const Acc *rrow = r.data() + (b * g.n + j) * g.k;
              Acc acc = 0;
              for (int64_t p = 0; p < g.k; ++p)
                acc = MulAdd(acc, lrow[p], rrow[p]);
              dst[(b * g.m + i) * g.n + j] = ConvertElement<AccTraits, T>(acc);
            }
          }
      },
      [] {});
}

} // namespace

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
  const DotGeometry g = Analyze(lhs.shape(), rhs.shape(), dnums);
  Literal lhs_t = TransposeLiteral(lhs, g.lhs_perm, Shape(lhs.element_type(), g.lhs_perm_dims));
  Literal rhs_t = TransposeLiteral(rhs, g.rhs_perm, Shape(rhs.element_type(), g.rhs_perm_dims));
  Literal out(result_shape);
  const bool any_f64 = lhs.element_type() == PrimitiveType::F64 ||
                       rhs.element_type() == PrimitiveType::F64 ||
                       out_type == PrimitiveType::F64;
  if (IsFloatingPointType(out_type)) {
    if (any_f64)
      RunDot<ElementTraits<PrimitiveType::F64>>(g, lhs_t, rhs_t, out);
    else
      RunDot<ElementTraits<PrimitiveType::F32>>(g, lhs_t, rhs_t, out);
  } else if (IsUnsignedIntegralType(out_type)) {
    RunDot<ElementTraits<PrimitiveType::U64>>(g, lhs_t, rhs_t, out);
  } else {
    RunDot<ElementTraits<PrimitiveType::S64>>(g, lhs_t, rhs_t, out);
  }
  return out;
}

llvm::Expected<Literal> EvalDot(const HloInstruction &inst, const Literal &lhs,
                                const Literal &rhs) {
  llvm::Expected<DotDimensionNumbers> dnums = GetDotDimensionNumbers(inst);
  if (!dnums)
    return dnums.takeError();
  return DotLiterals(inst, lhs, rhs, *dnums, inst.shape());
}

} // namespace loom::hlo
