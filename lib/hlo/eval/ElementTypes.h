//===- ElementTypes.h - Storage and compute types of HLO element types ----===//
//
// Internal to lib/hlo/eval. Every array element type has a storage type (its
// bytes in a Literal) and a value type that arithmetic runs in: bf16, f16
// and the f8 types compute in float and round on store, sub-byte integers
// compute in 8 bits and wrap to their width on store. Kernels dispatch on
// the element type once per op (DispatchElementType) and then run a typed
// loop, never a per-element switch.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_EVAL_ELEMENTTYPES_H
#define LOOM_LIB_HLO_EVAL_ELEMENTTYPES_H

#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/ir/Shape.h"

#include <cmath>
#include <complex>
#include <limits>
#include <cstdint>
#include <type_traits>

namespace loom::hlo {

/// f8 / f4 element (bits in a byte) to float, exactly; table driven.
float SmallFloatToF32(PrimitiveType type, uint8_t bits);
/// float to an f8 / f4 element, round to nearest even.
uint8_t F32ToSmallFloat(PrimitiveType type, float f);
/// Significant decimal digits that round-trip any value of a float type.
int MaxDigits10(PrimitiveType type);

template <typename T> inline constexpr bool kIsComplex = false;
template <typename T> inline constexpr bool kIsComplex<std::complex<T>> = true;

enum class ElementKind : uint8_t { kPred, kSigned, kUnsigned, kFloat, kComplex };

/// Traits of one element type. Storage: bytes in memory; Value: what
/// arithmetic computes in. Store() rounds / wraps a Value into Storage.
template <PrimitiveType kType, typename StorageT, typename ValueT, ElementKind kKindV,
          int kBitsV>
struct ElementTraitsBase {
  static constexpr PrimitiveType kPrimitiveType = kType;
  using Storage = StorageT;
  using Value = ValueT;
  static constexpr ElementKind kKind = kKindV;
  /// Width of the element in bits (4 for s4); integer ops wrap to it.
  static constexpr int kBits = kBitsV;
};

template <PrimitiveType kType> struct ElementTraits;

#define LOOM_NATIVE_TRAITS(E, T, KIND, BITS)                                   \
  template <>                                                                  \
  struct ElementTraits<PrimitiveType::E>                                       \
      : ElementTraitsBase<PrimitiveType::E, T, T, ElementKind::KIND, BITS> {   \
    static T Load(T s) { return s; }                                           \
    static T Store(T v) { return v; }                                          \
  };
LOOM_NATIVE_TRAITS(S8, int8_t, kSigned, 8)
LOOM_NATIVE_TRAITS(S16, int16_t, kSigned, 16)
LOOM_NATIVE_TRAITS(S32, int32_t, kSigned, 32)
LOOM_NATIVE_TRAITS(S64, int64_t, kSigned, 64)
LOOM_NATIVE_TRAITS(U8, uint8_t, kUnsigned, 8)
LOOM_NATIVE_TRAITS(U16, uint16_t, kUnsigned, 16)
LOOM_NATIVE_TRAITS(U32, uint32_t, kUnsigned, 32)
LOOM_NATIVE_TRAITS(U64, uint64_t, kUnsigned, 64)
LOOM_NATIVE_TRAITS(F32, float, kFloat, 32)
LOOM_NATIVE_TRAITS(F64, double, kFloat, 64)
LOOM_NATIVE_TRAITS(C64, std::complex<float>, kComplex, 64)
LOOM_NATIVE_TRAITS(C128, std::complex<double>, kComplex, 128)
#undef LOOM_NATIVE_TRAITS

template <>
struct ElementTraits<PrimitiveType::PRED>
    : ElementTraitsBase<PrimitiveType::PRED, uint8_t, bool, ElementKind::kPred, 8> {
  static bool Load(uint8_t s) { return s != 0; }
  static uint8_t Store(bool v) { return v ? 1 : 0; }
};

/// Sub-byte signed integers: one byte per element, sign-extended.
template <PrimitiveType kType, int kWidth>
struct SubByteSignedTraits
    : ElementTraitsBase<kType, int8_t, int8_t, ElementKind::kSigned, kWidth> {
  static int8_t Load(int8_t s) { return Store(s); }
  static int8_t Store(int8_t v) {
    uint8_t low = static_cast<uint8_t>(v) & ((1u << kWidth) - 1);
    uint8_t sign = 1u << (kWidth - 1);
    return static_cast<int8_t>(static_cast<int>(low ^ sign) - static_cast<int>(sign));
  }
};
/// Sub-byte unsigned integers: one byte per element, zero-extended.
template <PrimitiveType kType, int kWidth>
struct SubByteUnsignedTraits
    : ElementTraitsBase<kType, uint8_t, uint8_t, ElementKind::kUnsigned, kWidth> {
  static uint8_t Load(uint8_t s) { return Store(s); }
  static uint8_t Store(uint8_t v) { return v & ((1u << kWidth) - 1); }
};
template <> struct ElementTraits<PrimitiveType::S1> : SubByteSignedTraits<PrimitiveType::S1, 1> {};
template <> struct ElementTraits<PrimitiveType::S2> : SubByteSignedTraits<PrimitiveType::S2, 2> {};
template <> struct ElementTraits<PrimitiveType::S4> : SubByteSignedTraits<PrimitiveType::S4, 4> {};
template <> struct ElementTraits<PrimitiveType::U1> : SubByteUnsignedTraits<PrimitiveType::U1, 1> {};
template <> struct ElementTraits<PrimitiveType::U2> : SubByteUnsignedTraits<PrimitiveType::U2, 2> {};
template <> struct ElementTraits<PrimitiveType::U4> : SubByteUnsignedTraits<PrimitiveType::U4, 4> {};

template <>
struct ElementTraits<PrimitiveType::BF16>
    : ElementTraitsBase<PrimitiveType::BF16, uint16_t, float, ElementKind::kFloat, 16> {
  static float Load(uint16_t s) { return BF16ToF32(s); }
  static uint16_t Store(float v) { return F32ToBF16(v); }
};
template <>
struct ElementTraits<PrimitiveType::F16>
    : ElementTraitsBase<PrimitiveType::F16, uint16_t, float, ElementKind::kFloat, 16> {
  static float Load(uint16_t s) { return F16ToF32(s); }
  static uint16_t Store(float v) { return F32ToF16(v); }
};

/// f8 and f4 types: compute in float, round on store.
template <PrimitiveType kType, int kWidth>
struct SmallFloatTraits
    : ElementTraitsBase<kType, uint8_t, float, ElementKind::kFloat, kWidth> {
  static float Load(uint8_t s) { return SmallFloatToF32(kType, s); }
  static uint8_t Store(float v) { return F32ToSmallFloat(kType, v); }
};
#define LOOM_SMALL_FLOAT(E, W)                                                 \
  template <> struct ElementTraits<PrimitiveType::E> : SmallFloatTraits<PrimitiveType::E, W> {};
LOOM_SMALL_FLOAT(F8E3M4, 8)
LOOM_SMALL_FLOAT(F8E4M3, 8)
LOOM_SMALL_FLOAT(F8E4M3FN, 8)
LOOM_SMALL_FLOAT(F8E4M3B11FNUZ, 8)
LOOM_SMALL_FLOAT(F8E4M3FNUZ, 8)
LOOM_SMALL_FLOAT(F8E5M2, 8)
LOOM_SMALL_FLOAT(F8E5M2FNUZ, 8)
LOOM_SMALL_FLOAT(F8E8M0FNU, 8)
LOOM_SMALL_FLOAT(F4E2M1FN, 4)
#undef LOOM_SMALL_FLOAT

/// Calls fn(ElementTraits<T>{}) for the array element type `type`; returns
/// `otherwise()` for token, tuple and opaque.
template <typename Fn, typename Otherwise>
auto DispatchElementType(PrimitiveType type, Fn &&fn, Otherwise &&otherwise)
    -> decltype(otherwise()) {
  switch (type) {
#define LOOM_CASE(E)                                                           \
  case PrimitiveType::E:                                                       \
    return fn(ElementTraits<PrimitiveType::E>{});
    LOOM_CASE(PRED)
    LOOM_CASE(S1) LOOM_CASE(S2) LOOM_CASE(S4) LOOM_CASE(S8) LOOM_CASE(S16)
    LOOM_CASE(S32) LOOM_CASE(S64)
    LOOM_CASE(U1) LOOM_CASE(U2) LOOM_CASE(U4) LOOM_CASE(U8) LOOM_CASE(U16)
    LOOM_CASE(U32) LOOM_CASE(U64)
    LOOM_CASE(F16) LOOM_CASE(BF16) LOOM_CASE(F32) LOOM_CASE(F64)
    LOOM_CASE(F4E2M1FN) LOOM_CASE(F8E3M4) LOOM_CASE(F8E4M3) LOOM_CASE(F8E4M3FN)
    LOOM_CASE(F8E4M3B11FNUZ) LOOM_CASE(F8E4M3FNUZ) LOOM_CASE(F8E5M2)
    LOOM_CASE(F8E5M2FNUZ) LOOM_CASE(F8E8M0FNU)
    LOOM_CASE(C64) LOOM_CASE(C128)
#undef LOOM_CASE
  default:
    return otherwise();
  }
}

// ---- Element conversions (XLA's convert) --------------------------------------

/// Float to integer of `kBits` bits: truncate toward zero, saturate to the
/// width's range, NaN -> 0.
template <typename IntT, int kBits, typename FloatT> IntT SaturatingFloatToInt(FloatT v) {
  if (v != v)
    return IntT{0};
  constexpr bool kSigned = std::is_signed_v<IntT>;
  constexpr int kValueBits = kSigned ? kBits - 1 : kBits;
  // Limits of the element width as double; exact for every width <= 64.
  const double hi = kValueBits >= 64 ? 18446744073709551616.0
                                     : static_cast<double>(uint64_t{1} << kValueBits);
  const double lo = kSigned ? -hi : 0.0;
  const double d = static_cast<double>(v);
  if (d >= hi)
    return kSigned ? static_cast<IntT>((uint64_t{1} << (kBits - 1)) - 1)
                   : std::numeric_limits<IntT>::max() >> (sizeof(IntT) * 8 - kBits);
  if (d <= lo)
    return kSigned ? static_cast<IntT>(~((uint64_t{1} << (kBits - 1)) - 1)) : IntT{0};
  return static_cast<IntT>(v);
}

/// An integer as a double that rounds correctly to any narrower float:
/// exact below 2^53, otherwise rounded to odd (the dropped bits kept as a
/// sticky bit), which makes the second rounding land where one rounding would.
template <typename IntT> double IntToDoubleForRounding(IntT v) {
  if constexpr (sizeof(IntT) < 8) {
    return static_cast<double>(v);
  } else {
    bool negative = false;
    uint64_t m;
    if constexpr (std::is_signed_v<IntT>) {
      negative = v < 0;
      m = negative ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    } else {
      m = v;
    }
    if (m < (uint64_t{1} << 53))
      return negative ? -static_cast<double>(m) : static_cast<double>(m);
    int shift = 64 - __builtin_clzll(m) - 53;
    uint64_t high = m >> shift;
    if (m & ((uint64_t{1} << shift) - 1))
      high |= 1;
    double d = std::ldexp(static_cast<double>(high), shift);
    return negative ? -d : d;
  }
}

/// Converts one stored element of type From to a stored element of type To
/// exactly like XLA's convert, with a single rounding for every float
/// destination. Complex to real is rejected by the callers (as XLA does).
template <typename From, typename To> typename To::Storage ConvertElement(typename From::Storage s) {
  using TV = typename To::Value;
  constexpr ElementKind fk = From::kKind, tk = To::kKind;
  const typename From::Value v = From::Load(s);
  if constexpr (tk == ElementKind::kPred) {
    return To::Store(v != typename From::Value{});
  } else if constexpr (tk == ElementKind::kComplex) {
    if constexpr (fk == ElementKind::kComplex)
      return TV(v);
    else
      return TV(static_cast<typename TV::value_type>(v), 0);
  } else if constexpr (fk == ElementKind::kComplex) {
    return ConvertElement<ElementTraits<PrimitiveType::F64>, To>(static_cast<double>(v.real()));
  } else if constexpr (tk == ElementKind::kFloat) {
    constexpr PrimitiveType tt = To::kPrimitiveType;
    if constexpr (tt == PrimitiveType::F32 || tt == PrimitiveType::F64) {
      return static_cast<TV>(v); // hardware conversions round once
    } else if constexpr (fk == ElementKind::kFloat &&
                         std::is_same_v<typename From::Value, float>) {
      return To::Store(v); // exact float in, one rounding out
    } else if constexpr (fk == ElementKind::kFloat || fk == ElementKind::kPred) {
      return static_cast<typename To::Storage>(DoubleToFloatBits(tt, static_cast<double>(v)));
    } else {
      return static_cast<typename To::Storage>(DoubleToFloatBits(tt, IntToDoubleForRounding(v)));
    }
  } else if constexpr (fk == ElementKind::kFloat) {
    return To::Store(SaturatingFloatToInt<TV, To::kBits>(v));
  } else {
    return To::Store(static_cast<TV>(v)); // integers and pred wrap
  }
}

} // namespace loom::hlo

#endif
