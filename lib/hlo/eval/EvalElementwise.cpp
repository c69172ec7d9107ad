//===- EvalElementwise.cpp - Unary, binary, compare, select, convert ------===//
//
// Each op dispatches on the element type once and runs a typed loop.
// bf16/f16/f8 compute in float and round the result on store (what XLA's
// CPU backend does); integers wrap.
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"
#include "ElementwiseOps.h"


#include <cstring>

namespace loom::hlo {

using namespace ops;

namespace {

std::string TypeName(PrimitiveType type) { return PrimitiveTypeName(type).str(); }

llvm::Error UnsupportedType(const HloInstruction &inst, PrimitiveType type) {
  return UnsupportedError(inst, "element type " + TypeName(type));
}

llvm::Error CheckSameDims(const HloInstruction &inst, const Literal &a, const Shape &result) {
  if (!a.shape().IsArray() || a.shape().dimensions() != result.dimensions())
    return EvalError(inst, "operand shape " + a.shape().ToString() +
                               " does not match the result shape " + result.ToString());
  return llvm::Error::success();
}

// ---- Unary functors ------------------------------------------------------------

template <typename F> struct FloatUnary {
  template <typename T> static constexpr bool Supports() { return T::kKind == ElementKind::kFloat; }
  template <typename T, typename V> static V Apply(V a) {
    if constexpr (kIsFloat<V>) return F::Eval(a);
    else return a;
  }
};
#define LOOM_FLOAT_UNARY(NAME, EXPR)                                           \
  struct NAME##Fn {                                                            \
    template <typename V> static V Eval(V a) { return EXPR; }                  \
  };                                                                           \
  using NAME = FloatUnary<NAME##Fn>;
LOOM_FLOAT_UNARY(Floor, std::floor(a))
LOOM_FLOAT_UNARY(Ceil, std::ceil(a))
LOOM_FLOAT_UNARY(RoundAfz, std::round(a))
LOOM_FLOAT_UNARY(RoundEven, std::nearbyint(a))
LOOM_FLOAT_UNARY(Sqrt, std::sqrt(a))
LOOM_FLOAT_UNARY(Rsqrt, V(1) / std::sqrt(a))
LOOM_FLOAT_UNARY(Cbrt, std::cbrt(a))
LOOM_FLOAT_UNARY(Exp, std::exp(a))
LOOM_FLOAT_UNARY(Expm1, std::expm1(a))
LOOM_FLOAT_UNARY(Log, std::log(a))
LOOM_FLOAT_UNARY(Log1p, std::log1p(a))
LOOM_FLOAT_UNARY(Logistic, V(1) / (V(1) + std::exp(-a)))
LOOM_FLOAT_UNARY(Sin, std::sin(a))
LOOM_FLOAT_UNARY(Cos, std::cos(a))
LOOM_FLOAT_UNARY(Tan, std::tan(a))
LOOM_FLOAT_UNARY(Tanh, std::tanh(a))
LOOM_FLOAT_UNARY(Atan, std::atan(a))
LOOM_FLOAT_UNARY(Sinh, std::sinh(a))
LOOM_FLOAT_UNARY(Cosh, std::cosh(a))
LOOM_FLOAT_UNARY(Asin, std::asin(a))
LOOM_FLOAT_UNARY(Acos, std::acos(a))
LOOM_FLOAT_UNARY(Asinh, std::asinh(a))
LOOM_FLOAT_UNARY(Acosh, std::acosh(a))
LOOM_FLOAT_UNARY(Atanh, std::atanh(a))
LOOM_FLOAT_UNARY(Erf, std::erf(a))
#undef LOOM_FLOAT_UNARY

struct Negate {
  template <typename T> static constexpr bool Supports() { return T::kKind != ElementKind::kPred; }
  template <typename T, typename V> static V Apply(V a) {
    if constexpr (kIsInt<V>) return static_cast<V>(WideUnsigned<V>(0) - WideUnsigned<V>(a));
    else if constexpr (kIsBool<V>) return a;
    else return -a;
  }
};
struct Abs {
  template <typename T> static constexpr bool Supports() {
    return T::kKind == ElementKind::kFloat || T::kKind == ElementKind::kSigned ||
           T::kKind == ElementKind::kUnsigned;
  }
  template <typename T, typename V> static V Apply(V a) {
    if constexpr (kIsFloat<V>) return std::fabs(a);
    else if constexpr (kIsInt<V> && std::is_signed_v<V>)
      return a < 0 ? static_cast<V>(WideUnsigned<V>(0) - WideUnsigned<V>(a)) : a;
    else return a;
  }
};
struct Sign {
  template <typename T> static constexpr bool Supports() {
    return T::kKind == ElementKind::kFloat || T::kKind == ElementKind::kSigned ||
           T::kKind == ElementKind::kUnsigned;
  }
  template <typename T, typename V> static V Apply(V a) {
    if constexpr (kIsFloat<V>) {
      if (std::isnan(a) || a == V(0)) return a; // NaN and signed zeros stay
      return a > V(0) ? V(1) : V(-1);
    } else if constexpr (kIsInt<V>) {
      return static_cast<V>((a > 0) - (a < 0));
    } else {
      return a;
    }
  }
};
struct Not {
  template <typename T> static constexpr bool Supports() { return kIsIntOrPred<T>; }
  template <typename T, typename V> static V Apply(V a) {
    if constexpr (kIsBool<V>) return !a;
    else if constexpr (kIsInt<V>) return static_cast<V>(~a);
    else return a;
  }
};
struct PopCount {
  template <typename T> static constexpr bool Supports() { return kIsIntKind<T>; }
  template <typename T, typename V> static V Apply(V a) {
    if constexpr (kIsInt<V>) return static_cast<V>(std::popcount(static_cast<uint64_t>(a) & WidthMask<T>()));
    else return a;
  }
};
struct CountLeadingZeros {
  template <typename T> static constexpr bool Supports() { return kIsIntKind<T>; }
  template <typename T, typename V> static V Apply(V a) {
    if constexpr (kIsInt<V>)
      return static_cast<V>(T::kBits - std::bit_width(static_cast<uint64_t>(a) & WidthMask<T>()));
    else return a;
  }
};

template <typename Op, typename T>
void UnaryLoop(const Literal &in, Literal &out) {
  using S = typename T::Storage;
  const S *src = in.data<S>();
  S *dst = out.data<S>();
  const int64_t n = in.element_count();
  for (int64_t i = 0; i < n; ++i)
    dst[i] = T::Store(Op::template Apply<T>(T::Load(src[i])));
}

template <typename Op>
llvm::Expected<Literal> RunUnary(const HloInstruction &inst, const Literal &operand) {
  Literal out(inst.shape());
  bool ok = DispatchElementType(
      operand.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        if constexpr (Op::template Supports<T>()) {
          UnaryLoop<Op, T>(operand, out);
          return true;
        } else {
          return false;
        }
      },
      [] { return false; });
  if (!ok)
    return UnsupportedType(inst, operand.element_type());
  return out;
}

/// Ops whose result type differs from the operand's: is-finite, and abs /
/// real / imag of complex numbers.
llvm::Expected<Literal> RunTypeChangingUnary(const HloInstruction &inst, const Literal &operand) {
  Literal out(inst.shape());
  const int64_t n = operand.element_count();
  const HloOpcode opcode = inst.opcode();
  PrimitiveType in_type = operand.element_type();
  if (opcode == HloOpcode::kIsFinite) {
    if (!IsFloatingPointType(in_type) || out.element_type() != PrimitiveType::PRED)
      return UnsupportedType(inst, in_type);
    DispatchElementType(
        in_type,
        [&](auto traits) {
          using T = decltype(traits);
          if constexpr (T::kKind == ElementKind::kFloat) {
            const auto *src = operand.data<typename T::Storage>();
            uint8_t *dst = out.data<uint8_t>();
            for (int64_t i = 0; i < n; ++i)
              dst[i] = std::isfinite(T::Load(src[i])) ? 1 : 0;
          }
        },
        [] {});
    return out;
  }
  // Complex -> real (abs, real, imag), or real -> real for real / imag.
  if (!IsComplexType(in_type)) {
    if (opcode == HloOpcode::kImag) {
      return out; // zeros
    }
    if (opcode == HloOpcode::kReal && in_type == out.element_type()) {
      std::memcpy(out.raw_data(), operand.raw_data(), operand.size_bytes());
      return out;
    }
    return UnsupportedType(inst, in_type);
  }
  for (int64_t i = 0; i < n; ++i) {
    std::complex<double> c = operand.GetAsComplex(i);
    double r = opcode == HloOpcode::kAbs ? std::abs(c)
               : opcode == HloOpcode::kReal ? c.real()
                                            : c.imag();
    if (in_type == PrimitiveType::C64 && opcode == HloOpcode::kAbs)
      r = std::abs(std::complex<float>(operand.data<std::complex<float>>()[i]));
    out.SetFromDouble(i, r);
  }
  return out;
}

template <typename Op, typename T>
void BinaryLoop(const Literal &lhs, const Literal &rhs, Literal &out) {
  using S = typename T::Storage;
  const S *a = lhs.data<S>();
  const S *b = rhs.data<S>();
  S *dst = out.data<S>();
  const int64_t n = out.element_count();
  for (int64_t i = 0; i < n; ++i)
    dst[i] = T::Store(Op::template Apply<T>(T::Load(a[i]), T::Load(b[i])));
}

template <typename Op>
constexpr bool kComplexBinaryOk = std::is_same_v<Op, Add> || std::is_same_v<Op, Subtract> ||
                                  std::is_same_v<Op, Multiply> || std::is_same_v<Op, Divide>;

template <typename Op, typename T> constexpr bool BinarySupported() {
  if constexpr (T::kKind == ElementKind::kComplex)
    return kComplexBinaryOk<Op>;
  else
    return Op::template Supports<T>();
}

} // namespace

bool IsEvalUnaryOpcode(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::kAbs: case HloOpcode::kNegate: case HloOpcode::kSign:
  case HloOpcode::kFloor: case HloOpcode::kCeil: case HloOpcode::kRoundNearestAfz:
  case HloOpcode::kRoundNearestEven: case HloOpcode::kSqrt: case HloOpcode::kRsqrt:
  case HloOpcode::kCbrt: case HloOpcode::kExp: case HloOpcode::kExpm1:
  case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic:
  case HloOpcode::kSin: case HloOpcode::kCos: case HloOpcode::kTan:
  case HloOpcode::kTanh: case HloOpcode::kAtan: case HloOpcode::kSinh:
  case HloOpcode::kCosh: case HloOpcode::kAsin: case HloOpcode::kAcos:
  case HloOpcode::kAsinh: case HloOpcode::kAcosh: case HloOpcode::kAtanh:
  case HloOpcode::kErf: case HloOpcode::kNot: case HloOpcode::kPopulationCount:
  case HloOpcode::kClz: case HloOpcode::kIsFinite: case HloOpcode::kReal:
  case HloOpcode::kImag:
    return true;
  default:
    return false;
  }
}

bool IsEvalBinaryOpcode(HloOpcode opcode) {
  return DispatchBinaryOp(opcode, [](auto) {});
}

llvm::Expected<Literal> EvalUnary(const HloInstruction &inst, const Literal &operand) {
  if (llvm::Error err = CheckSameDims(inst, operand, inst.shape()))
    return err;
  const HloOpcode opcode = inst.opcode();
  const bool type_changes = operand.element_type() != inst.shape().element_type();
  if (opcode == HloOpcode::kIsFinite || opcode == HloOpcode::kReal ||
      opcode == HloOpcode::kImag || (opcode == HloOpcode::kAbs && type_changes))
    return RunTypeChangingUnary(inst, operand);
  if (type_changes)
    return EvalError(inst, "operand type " + TypeName(operand.element_type()) +
                               " differs from the result type");
  if (IsComplexType(operand.element_type()) && opcode != HloOpcode::kNegate)
    return UnsupportedType(inst, operand.element_type());
  switch (opcode) {
#define LOOM_UNARY(OP, FN)                                                     \
  case HloOpcode::OP:                                                          \
    return RunUnary<FN>(inst, operand);
    LOOM_UNARY(kAbs, Abs)
    LOOM_UNARY(kNegate, Negate)
    LOOM_UNARY(kSign, Sign)
    LOOM_UNARY(kFloor, Floor)
    LOOM_UNARY(kCeil, Ceil)
    LOOM_UNARY(kRoundNearestAfz, RoundAfz)
    LOOM_UNARY(kRoundNearestEven, RoundEven)
    LOOM_UNARY(kSqrt, Sqrt)
    LOOM_UNARY(kRsqrt, Rsqrt)
    LOOM_UNARY(kCbrt, Cbrt)
    LOOM_UNARY(kExp, Exp)
    LOOM_UNARY(kExpm1, Expm1)
    LOOM_UNARY(kLog, Log)
    LOOM_UNARY(kLog1p, Log1p)
    LOOM_UNARY(kLogistic, Logistic)
    LOOM_UNARY(kSin, Sin)
    LOOM_UNARY(kCos, Cos)
    LOOM_UNARY(kTan, Tan)
    LOOM_UNARY(kTanh, Tanh)
    LOOM_UNARY(kAtan, Atan)
    LOOM_UNARY(kSinh, Sinh)
    LOOM_UNARY(kCosh, Cosh)
    LOOM_UNARY(kAsin, Asin)
    LOOM_UNARY(kAcos, Acos)
    LOOM_UNARY(kAsinh, Asinh)
    LOOM_UNARY(kAcosh, Acosh)
    LOOM_UNARY(kAtanh, Atanh)
    LOOM_UNARY(kErf, Erf)
    LOOM_UNARY(kNot, Not)
    LOOM_UNARY(kPopulationCount, PopCount)
    LOOM_UNARY(kClz, CountLeadingZeros)
#undef LOOM_UNARY
  default:
    return UnsupportedError(inst, "opcode");
  }
}

llvm::Error ApplyBinaryInPlace(const HloInstruction &inst, HloOpcode opcode, Literal &lhs,
                               const Literal &rhs, bool swapped) {
  if (lhs.element_type() != rhs.element_type() || lhs.element_count() != rhs.element_count())
    return EvalError(inst, "operands " + lhs.shape().ToString() + " and " +
                               rhs.shape().ToString() + " do not match");
  bool supported = false;
  DispatchBinaryOp(opcode, [&](auto op) {
    using Op = decltype(op);
    supported = DispatchElementType(
        lhs.element_type(),
        [&](auto traits) {
          using T = decltype(traits);
          if constexpr (BinarySupported<Op, T>()) {
            if (swapped)
              BinaryLoop<Op, T>(rhs, lhs, lhs);
            else
              BinaryLoop<Op, T>(lhs, rhs, lhs);
            return true;
          } else {
            return false;
          }
        },
        [] { return false; });
  });
  if (!supported)
    return UnsupportedType(inst, lhs.element_type());
  return llvm::Error::success();
}

llvm::Expected<Literal> EvalBinary(const HloInstruction &inst, const Literal &lhs,
                                   const Literal &rhs) {
  if (llvm::Error err = CheckSameDims(inst, lhs, inst.shape()))
    return err;
  if (llvm::Error err = CheckSameDims(inst, rhs, inst.shape()))
    return err;
  if (inst.opcode() == HloOpcode::kComplex) {
    Literal out(inst.shape());
    for (int64_t i = 0; i < out.element_count(); ++i)
      out.SetFromComplex(i, {lhs.GetAsDouble(i), rhs.GetAsDouble(i)});
    return out;
  }
  if (lhs.element_type() != inst.shape().element_type())
    return EvalError(inst, "operand type " + TypeName(lhs.element_type()) +
                               " differs from the result type");
  if (!IsEvalBinaryOpcode(inst.opcode()))
    return UnsupportedError(inst, "opcode");
  Literal out = lhs;
  out.Reshape(inst.shape());
  if (llvm::Error err = ApplyBinaryInPlace(inst, inst.opcode(), out, rhs, false))
    return err;
  return out;
}

// ---- Compare ------------------------------------------------------------------------

namespace {

/// TotalOrderKey (EvalInternal.h) of one stored element of type T.
template <typename T> int64_t TotalOrderKeyOf(typename T::Storage s) {
  uint64_t bits;
  if constexpr (std::is_same_v<typename T::Storage, float>) {
    uint32_t u;
    std::memcpy(&u, &s, 4);
    bits = u;
  } else if constexpr (std::is_same_v<typename T::Storage, double>) {
    std::memcpy(&bits, &s, 8);
  } else {
    bits = static_cast<uint64_t>(s);
  }
  return TotalOrderKey(bits, T::kBits);
}

template <typename T>
void CompareLoop(ComparisonDirection dir, bool total_order, const Literal &lhs,
                 const Literal &rhs, Literal &out) {
  using S = typename T::Storage;
  const S *a = lhs.data<S>();
  const S *b = rhs.data<S>();
  uint8_t *dst = out.data<uint8_t>();
  const int64_t n = out.element_count();
  if constexpr (T::kKind == ElementKind::kFloat) {
    if (total_order) {
      for (int64_t i = 0; i < n; ++i)
        dst[i] = CompareValues(dir, TotalOrderKeyOf<T>(a[i]), TotalOrderKeyOf<T>(b[i]));
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i)
    dst[i] = CompareValues(dir, T::Load(a[i]), T::Load(b[i]));
}

} // namespace

llvm::Expected<Literal> EvalCompare(const HloInstruction &inst, const Literal &lhs,
                                    const Literal &rhs) {
  if (llvm::Error err = CheckSameDims(inst, lhs, inst.shape()))
    return err;
  if (llvm::Error err = CheckSameDims(inst, rhs, inst.shape()))
    return err;
  if (lhs.element_type() != rhs.element_type() ||
      inst.shape().element_type() != PrimitiveType::PRED)
    return EvalError(inst, "compare needs operands of one type and a pred result");
  llvm::Expected<ComparisonDirection> dir = GetComparisonDirection(inst);
  if (!dir)
    return dir.takeError();
  const HloText *type_attr = inst.FindAttribute("type");
  const bool total_order = type_attr && *type_attr == "TOTALORDER";
  Literal out(inst.shape());
  bool ok = DispatchElementType(
      lhs.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        if constexpr (T::kKind == ElementKind::kComplex) {
          if (*dir != ComparisonDirection::kEq && *dir != ComparisonDirection::kNe)
            return false;
          const auto *a = lhs.data<typename T::Storage>();
          const auto *b = rhs.data<typename T::Storage>();
          for (int64_t i = 0; i < out.element_count(); ++i)
            out.data<uint8_t>()[i] = (a[i] == b[i]) == (*dir == ComparisonDirection::kEq);
        } else {
          CompareLoop<T>(*dir, total_order, lhs, rhs, out);
        }
        return true;
      },
      [] { return false; });
  if (!ok)
    return UnsupportedType(inst, lhs.element_type());
  return out;
}

// ---- Select, clamp ----------------------------------------------------------------

llvm::Expected<Literal> EvalSelect(const HloInstruction &inst, const Literal &pred,
                                   const Literal &on_true, const Literal &on_false) {
  if (on_true.IsTuple()) {
    // XLA's old tuple select: a scalar predicate picks a whole operand.
    if (pred.element_count() != 1 || !on_true.shape().Compatible(on_false.shape()))
      return EvalError(inst, "tuple select needs a scalar predicate");
    return pred.GetAsBool(0) ? on_true : on_false;
  }
  if (llvm::Error err = CheckSameDims(inst, on_true, inst.shape()))
    return err;
  if (llvm::Error err = CheckSameDims(inst, on_false, inst.shape()))
    return err;
  if (!pred.shape().IsArray())
    return EvalError(inst, "select needs an array predicate");
  const bool scalar_pred = pred.shape().rank() == 0;
  if (!scalar_pred)
    if (llvm::Error err = CheckSameDims(inst, pred, inst.shape()))
      return err;
  if (pred.element_type() != PrimitiveType::PRED ||
      on_true.element_type() != on_false.element_type())
    return EvalError(inst, "select needs a pred and two operands of one type");
  Literal out(inst.shape());
  const int64_t bytes = ByteSizeOfPrimitiveType(on_true.element_type());
  const int64_t n = out.element_count();
  const uint8_t *p = pred.raw_data();
  for (int64_t i = 0; i < n; ++i) {
    const Literal &src = p[scalar_pred ? 0 : i] ? on_true : on_false;
    std::memcpy(out.raw_data() + i * bytes, src.raw_data() + i * bytes, bytes);
  }
  return out;
}

llvm::Expected<Literal> EvalClamp(const HloInstruction &inst, const Literal &lo,
                                  const Literal &x, const Literal &hi) {
  if (llvm::Error err = CheckSameDims(inst, x, inst.shape()))
    return err;
  for (const Literal *bound : {&lo, &hi})
    if (!bound->shape().IsArray() || bound->shape().rank() != 0)
      if (llvm::Error err = CheckSameDims(inst, *bound, inst.shape()))
        return err;
  if (lo.element_type() != x.element_type() || hi.element_type() != x.element_type())
    return EvalError(inst, "clamp needs operands of one type");
  Literal out(inst.shape());
  bool ok = DispatchElementType(
      x.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        if constexpr (T::kKind == ElementKind::kComplex) {
          return false;
        } else {
          using S = typename T::Storage;
          const S *l = lo.data<S>(), *v = x.data<S>(), *h = hi.data<S>();
          const bool lo_scalar = lo.shape().rank() == 0, hi_scalar = hi.shape().rank() == 0;
          S *dst = out.data<S>();
          for (int64_t i = 0; i < out.element_count(); ++i) {
            auto lv = T::Load(l[lo_scalar ? 0 : i]);
            auto xv = T::Load(v[i]);
            auto hv = T::Load(h[hi_scalar ? 0 : i]);
            // XLA: NaN in any operand propagates (low first), else
            // min(high, max(x, low)).
            auto r = Minimum::template Apply<T>(hv, Maximum::template Apply<T>(xv, lv));
            if constexpr (T::kKind == ElementKind::kFloat) {
              if (std::isnan(lv)) r = lv;
              else if (std::isnan(xv)) r = xv;
              else if (std::isnan(hv)) r = hv;
              else r = std::min(hv, std::max(xv, lv));
            }
            dst[i] = T::Store(r);
          }
          return true;
        }
      },
      [] { return false; });
  if (!ok)
    return UnsupportedType(inst, x.element_type());
  return out;
}

// ---- Convert, bitcast-convert, reduce-precision -----------------------------------

namespace {

template <typename From, typename To> void ConvertLoop(const Literal &in, Literal &out) {
  const auto *src = in.data<typename From::Storage>();
  auto *dst = out.data<typename To::Storage>();
  const int64_t n = in.element_count();
  for (int64_t i = 0; i < n; ++i)
    dst[i] = ConvertElement<From, To>(src[i]);
}

} // namespace

llvm::Expected<Literal> ConvertLiteral(const HloInstruction &inst, const Literal &operand,
                                       const Shape &result_shape) {
  if (!operand.shape().IsArray() || operand.shape().dimensions() != result_shape.dimensions())
    return EvalError(inst, "convert between shapes of different dimensions");
  const PrimitiveType from = operand.element_type(), to = result_shape.element_type();
  if (IsComplexType(from) && !IsComplexType(to))
    return UnsupportedError(inst, "conversion from " + TypeName(from) + " to " + TypeName(to));
  Literal out(result_shape);
  bool ok = DispatchElementType(
      from,
      [&](auto from_traits) {
        return DispatchElementType(
            to,
            [&](auto to_traits) {
              ConvertLoop<decltype(from_traits), decltype(to_traits)>(operand, out);
              return true;
            },
            [] { return false; });
      },
      [] { return false; });
  if (!ok)
    return UnsupportedError(inst, "conversion from " + TypeName(from) + " to " + TypeName(to));
  return out;
}

llvm::Expected<Literal> EvalBitcastConvert(const HloInstruction &inst, const Literal &operand) {
  const Shape &shape = inst.shape();
  const PrimitiveType from = operand.element_type(), to = shape.element_type();
  const int from_bits = PrimitiveTypeBitWidth(from), to_bits = PrimitiveTypeBitWidth(to);
  if (!shape.IsArray() || !IsSupportedElementType(to) || !IsSupportedElementType(from))
    return UnsupportedError(inst, "bitcast-convert from " + TypeName(from) + " to " +
                                      TypeName(to));
  if ((from_bits < 8 || to_bits < 8) && from_bits != to_bits)
    return UnsupportedError(inst, "bitcast-convert between sub-byte types of different widths");
  Literal out(shape);
  if (out.size_bytes() != operand.size_bytes())
    return EvalError(inst, "bitcast-convert changes the size from " +
                               llvm::Twine(operand.size_bytes()) + " to " +
                               llvm::Twine(out.size_bytes()) + " bytes");
  std::memcpy(out.raw_data(), operand.raw_data(), operand.size_bytes());
  if (to_bits < 8) {
    // Re-normalize the low bits under the new type (s4 <-> u4).
    for (int64_t i = 0; i < out.element_count(); ++i) {
      uint8_t low = out.raw_data()[i] & ((1u << to_bits) - 1);
      if (IsSignedIntegralType(to) && (low >> (to_bits - 1)))
        low |= static_cast<uint8_t>(0xFFu << to_bits);
      out.raw_data()[i] = low;
    }
  }
  return out;
}

llvm::Expected<Literal> EvalReducePrecision(const HloInstruction &inst, const Literal &operand) {
  const HloText *exp_text = inst.FindAttribute("exponent_bits");
  const HloText *man_text = inst.FindAttribute("mantissa_bits");
  int exponent_bits, mantissa_bits;
  if (!exp_text || !man_text || llvm::StringRef(*exp_text).getAsInteger(10, exponent_bits) ||
      llvm::StringRef(*man_text).getAsInteger(10, mantissa_bits) || exponent_bits < 1 ||
      mantissa_bits < 0)
    return EvalError(inst, "missing or malformed exponent_bits / mantissa_bits");
  if (llvm::Error err = CheckSameDims(inst, operand, inst.shape()))
    return err;
  Literal out(inst.shape());
  const int64_t n = operand.element_count();
  for (int64_t i = 0; i < n; ++i) {
    double v = operand.GetAsDouble(i);
    if (!std::isnan(v) && !std::isinf(v) && v != 0) {
      // XLA's reduce-precision: round the significand to `mantissa_bits`
      // (ties to even), then overflow -> inf and values below the smallest
      // normal of the reduced format -> signed zero (it has no subnormals).
      int e;
      std::frexp(v, &e);
      const int max_exp = (1 << (exponent_bits - 1)) - 1;
      const int min_exp = 1 - max_exp;
      double quantum = std::ldexp(1.0, e - 1 - mantissa_bits);
      double q = std::fabs(v) / quantum;
      double fl = std::floor(q);
      double diff = q - fl;
      if (diff > 0.5 || (diff == 0.5 && std::fmod(fl, 2.0) != 0.0))
        fl += 1.0;
      double r = fl * quantum;
      double max_value = std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), max_exp);
      if (r > max_value)
        r = HUGE_VAL;
      else if (r < std::ldexp(1.0, min_exp))
        r = 0.0;
      v = std::copysign(r, v);
    }
    out.SetFromDouble(i, v);
  }
  return out;
}

llvm::Expected<Literal> EvalMulhi(const HloInstruction &inst, const Literal &lhs,
                                  const Literal &rhs) {
  if (llvm::Error err = CheckSameDims(inst, lhs, inst.shape()))
    return err;
  if (llvm::Error err = CheckSameDims(inst, rhs, inst.shape()))
    return err;
  const PrimitiveType type = inst.shape().element_type();
  if (lhs.element_type() != type || rhs.element_type() != type)
    return EvalError(inst, "operands must have the result type");
  Literal out(inst.shape());
  const int64_t n = out.element_count();
  switch (type) {
  case PrimitiveType::S32:
    for (int64_t i = 0; i < n; ++i)
      out.data<int32_t>()[i] = static_cast<int32_t>(
          (static_cast<int64_t>(lhs.data<int32_t>()[i]) * rhs.data<int32_t>()[i]) >> 32);
    break;
  case PrimitiveType::U32:
    for (int64_t i = 0; i < n; ++i)
      out.data<uint32_t>()[i] = static_cast<uint32_t>(
          (static_cast<uint64_t>(lhs.data<uint32_t>()[i]) * rhs.data<uint32_t>()[i]) >> 32);
    break;
  case PrimitiveType::S64:
    for (int64_t i = 0; i < n; ++i)
      out.data<int64_t>()[i] = static_cast<int64_t>(
          (static_cast<__int128>(lhs.data<int64_t>()[i]) * rhs.data<int64_t>()[i]) >> 64);
    break;
  case PrimitiveType::U64:
    for (int64_t i = 0; i < n; ++i)
      out.data<uint64_t>()[i] = static_cast<uint64_t>(
          (static_cast<unsigned __int128>(lhs.data<uint64_t>()[i]) * rhs.data<uint64_t>()[i]) >>
          64);
    break;
  default:
    return UnsupportedType(inst, type);
  }
  return out;
}

} // namespace loom::hlo
