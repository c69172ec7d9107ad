//===- ElementwiseOps.h - Scalar semantics of HLO's elementwise ops -------===//
//
// Internal to lib/hlo/eval. One functor per op, templated on the element
// traits; loops are instantiated per (op, type) so the per-element work is a
// direct call. Semantics follow XLA's HloEvaluator: integers wrap, integer
// division by zero gives -1 (all ones for unsigned) and x % 0 gives x,
// INT_MIN / -1 gives INT_MIN and INT_MIN % -1 gives 0, out-of-range shifts
// give 0 (or -1 for arithmetic right shifts of negatives), max/min
// propagate NaN, float arithmetic runs in the traits' Value type.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_EVAL_ELEMENTWISEOPS_H
#define LOOM_LIB_HLO_EVAL_ELEMENTWISEOPS_H

#include "ElementTypes.h"

#include "loom/hlo/ir/HloOpcode.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace loom::hlo::ops {

template <typename V> inline constexpr bool kIsInt = std::is_integral_v<V> && !std::is_same_v<V, bool>;
template <typename V> inline constexpr bool kIsFloat = std::is_floating_point_v<V>;
template <typename V> inline constexpr bool kIsBool = std::is_same_v<V, bool>;

/// Unsigned type at least 32 bits wide, so products of narrow types cannot
/// overflow a promoted int.
template <typename V>
using WideUnsigned = std::conditional_t<(sizeof(V) < 4), uint32_t, std::make_unsigned_t<V>>;

template <typename T> constexpr uint64_t WidthMask() {
  return T::kBits >= 64 ? ~uint64_t{0} : (uint64_t{1} << T::kBits) - 1;
}

// ---- Binary ------------------------------------------------------------------

struct Add {
  template <typename T> static constexpr bool Supports() { return true; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) return a || b;
    else if constexpr (kIsInt<V>) return static_cast<V>(WideUnsigned<V>(a) + WideUnsigned<V>(b));
    else return a + b;
  }
};
struct Subtract {
  template <typename T> static constexpr bool Supports() { return true; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) return a != b;
    else if constexpr (kIsInt<V>) return static_cast<V>(WideUnsigned<V>(a) - WideUnsigned<V>(b));
    else return a - b;
  }
};
struct Multiply {
  template <typename T> static constexpr bool Supports() { return true; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) return a && b;
    else if constexpr (kIsInt<V>) return static_cast<V>(WideUnsigned<V>(a) * WideUnsigned<V>(b));
    else return a * b;
  }
};
struct Divide {
  template <typename T> static constexpr bool Supports() { return true; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) {
      return b ? a : true;
    } else if constexpr (kIsInt<V>) {
      if (b == 0)
        return static_cast<V>(-1); // all ones: XLA's x / 0
      if constexpr (std::is_signed_v<V>) {
        // Sub-byte values live in int8: INT_MIN of the width is what wraps.
        if (b == -1)
          return T::Store(static_cast<V>(WideUnsigned<V>(0) - WideUnsigned<V>(a)));
      }
      return static_cast<V>(a / b);
    } else {
      return a / b;
    }
  }
};
struct Remainder {
  template <typename T> static constexpr bool Supports() { return T::kKind != ElementKind::kComplex; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) {
      return b ? false : a;
    } else if constexpr (kIsInt<V>) {
      if (b == 0)
        return a;
      if constexpr (std::is_signed_v<V>)
        if (b == -1)
          return 0;
      return static_cast<V>(a % b);
    } else if constexpr (kIsFloat<V>) {
      return std::fmod(a, b);
    } else {
      return a;
    }
  }
};
struct Maximum {
  template <typename T> static constexpr bool Supports() { return T::kKind != ElementKind::kComplex; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsFloat<V>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    if constexpr (kIsBool<V> || kIsInt<V> || kIsFloat<V>)
      return std::max(a, b);
    else
      return a;
  }
};
struct Minimum {
  template <typename T> static constexpr bool Supports() { return T::kKind != ElementKind::kComplex; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsFloat<V>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    if constexpr (kIsBool<V> || kIsInt<V> || kIsFloat<V>)
      return std::min(a, b);
    else
      return a;
  }
};

/// Integer power by squaring, wrapping.
template <typename V> V IntPow(V base, V exponent) {
  using U = WideUnsigned<V>;
  U result = 1, b = static_cast<U>(base);
  auto e = static_cast<std::make_unsigned_t<V>>(exponent);
  while (e) {
    if (e & 1)
      result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    e >>= 1;
  }
  return static_cast<V>(result);
}

struct Power {
  template <typename T> static constexpr bool Supports() { return true; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) {
      return a || !b;
    } else if constexpr (kIsInt<V>) {
      if (a == 1 || b == 0)
        return 1;
      if constexpr (std::is_signed_v<V>)
        if (b < 0)
          return 0;
      return IntPow(a, b);
    } else {
      if (a == V(1) || b == V(0))
        return V(1);
      return std::pow(a, b);
    }
  }
};
struct Atan2 {
  template <typename T> static constexpr bool Supports() { return T::kKind == ElementKind::kFloat; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsFloat<V>) return std::atan2(a, b);
    else return a;
  }
};

template <typename T> constexpr bool kIsIntOrPred =
    T::kKind == ElementKind::kPred || T::kKind == ElementKind::kSigned ||
    T::kKind == ElementKind::kUnsigned;
template <typename T> constexpr bool kIsIntKind =
    T::kKind == ElementKind::kSigned || T::kKind == ElementKind::kUnsigned;

struct And {
  template <typename T> static constexpr bool Supports() { return kIsIntOrPred<T>; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) return a && b;
    else if constexpr (kIsInt<V>) return static_cast<V>(a & b);
    else return a;
  }
};
struct Or {
  template <typename T> static constexpr bool Supports() { return kIsIntOrPred<T>; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) return a || b;
    else if constexpr (kIsInt<V>) return static_cast<V>(a | b);
    else return a;
  }
};
struct Xor {
  template <typename T> static constexpr bool Supports() { return kIsIntOrPred<T>; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsBool<V>) return a != b;
    else if constexpr (kIsInt<V>) return static_cast<V>(a ^ b);
    else return a;
  }
};

/// Shift amounts are read as unsigned: negative ones are out of range.
template <typename T, typename V> bool ShiftOutOfRange(V amount) {
  return static_cast<uint64_t>(static_cast<std::make_unsigned_t<V>>(amount)) >=
         static_cast<uint64_t>(T::kBits);
}
/// The element's bits sign-extended from its width.
template <typename T, typename V> int64_t SignExtend(V v) {
  uint64_t bits = static_cast<uint64_t>(v) & WidthMask<T>();
  if constexpr (T::kBits < 64) {
    uint64_t sign = uint64_t{1} << (T::kBits - 1);
    return static_cast<int64_t>((bits ^ sign) - sign);
  } else {
    return static_cast<int64_t>(bits);
  }
}

struct ShiftLeft {
  template <typename T> static constexpr bool Supports() { return kIsIntKind<T>; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsInt<V>) {
      if (ShiftOutOfRange<T>(b)) return 0;
      return static_cast<V>(static_cast<uint64_t>(a) << static_cast<uint64_t>(b));
    } else {
      return a;
    }
  }
};
struct ShiftRightArithmetic {
  template <typename T> static constexpr bool Supports() { return kIsIntKind<T>; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsInt<V>) {
      int64_t s = SignExtend<T>(a);
      if (ShiftOutOfRange<T>(b)) return static_cast<V>(s < 0 ? -1 : 0);
      return static_cast<V>(s >> static_cast<int64_t>(b));
    } else {
      return a;
    }
  }
};
struct ShiftRightLogical {
  template <typename T> static constexpr bool Supports() { return kIsIntKind<T>; }
  template <typename T, typename V> static V Apply(V a, V b) {
    if constexpr (kIsInt<V>) {
      if (ShiftOutOfRange<T>(b)) return 0;
      return static_cast<V>((static_cast<uint64_t>(a) & WidthMask<T>()) >> static_cast<uint64_t>(b));
    } else {
      return a;
    }
  }
};

/// Calls fn(Op{}) for a binary arithmetic opcode; returns false if the
/// opcode is not one.
template <typename Fn> bool DispatchBinaryOp(HloOpcode opcode, Fn &&fn) {
  switch (opcode) {
  case HloOpcode::kAdd: fn(Add{}); return true;
  case HloOpcode::kSubtract: fn(Subtract{}); return true;
  case HloOpcode::kMultiply: fn(Multiply{}); return true;
  case HloOpcode::kDivide: fn(Divide{}); return true;
  case HloOpcode::kRemainder: fn(Remainder{}); return true;
  case HloOpcode::kMaximum: fn(Maximum{}); return true;
  case HloOpcode::kMinimum: fn(Minimum{}); return true;
  case HloOpcode::kPower: fn(Power{}); return true;
  case HloOpcode::kAtan2: fn(Atan2{}); return true;
  case HloOpcode::kAnd: fn(And{}); return true;
  case HloOpcode::kOr: fn(Or{}); return true;
  case HloOpcode::kXor: fn(Xor{}); return true;
  case HloOpcode::kShiftLeft: fn(ShiftLeft{}); return true;
  case HloOpcode::kShiftRightArithmetic: fn(ShiftRightArithmetic{}); return true;
  case HloOpcode::kShiftRightLogical: fn(ShiftRightLogical{}); return true;
  default: return false;
  }
}

} // namespace loom::hlo::ops

#endif
