//===- FloatFormats.cpp - Round-to-nearest-even conversions of small floats ===//
//
// Every narrow float type is described by its exponent and mantissa widths,
// bias and special-value rules; one generic encoder rounds a double into
// any of them, once (no double rounding through f32). f32 -> bf16/f16 have
// bit-level fast paths because the interpreter runs them per element.
//
//===----------------------------------------------------------------------===//

#include "ElementTypes.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace loom::hlo {
namespace {

/// How a format spells NaN and infinity.
enum class Specials : uint8_t {
  kIeee,     // inf = max exponent, zero mantissa; NaN = max exponent, mantissa != 0
  kFn,       // no inf; NaN = all exponent and mantissa bits set (either sign)
  kFnuz,     // no inf, no -0; NaN = sign bit alone (0x80)
  kNone,     // no inf, no NaN (f4e2m1fn): out-of-range values saturate
  kE8M0,     // no sign, no mantissa, no zero; 0xFF is NaN
};

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
  bool has_sign = true;
  int total_bits() const { return (has_sign ? 1 : 0) + exponent_bits + mantissa_bits; }
};

std::optional<FloatFormat> FormatOf(PrimitiveType type) {
  switch (type) {
  case PrimitiveType::F16: return FloatFormat{5, 10, 15, Specials::kIeee};
  case PrimitiveType::BF16: return FloatFormat{8, 7, 127, Specials::kIeee};
  case PrimitiveType::F32: return FloatFormat{8, 23, 127, Specials::kIeee};
  case PrimitiveType::F64: return FloatFormat{11, 52, 1023, Specials::kIeee};
  case PrimitiveType::F8E5M2: return FloatFormat{5, 2, 15, Specials::kIeee};
  case PrimitiveType::F8E4M3: return FloatFormat{4, 3, 7, Specials::kIeee};
  case PrimitiveType::F8E3M4: return FloatFormat{3, 4, 3, Specials::kIeee};
  case PrimitiveType::F8E4M3FN: return FloatFormat{4, 3, 7, Specials::kFn};
  case PrimitiveType::F8E4M3FNUZ: return FloatFormat{4, 3, 8, Specials::kFnuz};
  case PrimitiveType::F8E5M2FNUZ: return FloatFormat{5, 2, 16, Specials::kFnuz};
  case PrimitiveType::F8E4M3B11FNUZ: return FloatFormat{4, 3, 11, Specials::kFnuz};
  case PrimitiveType::F4E2M1FN: return FloatFormat{2, 1, 1, Specials::kNone};
  case PrimitiveType::F8E8M0FNU: return FloatFormat{8, 0, 127, Specials::kE8M0, false};
  default: return std::nullopt;
  }
}

uint64_t NanBits(const FloatFormat &f, bool negative) {
  uint64_t sign = negative && f.has_sign ? uint64_t{1} << (f.total_bits() - 1) : 0;
  uint64_t exp_all = ((uint64_t{1} << f.exponent_bits) - 1) << f.mantissa_bits;
  switch (f.specials) {
  case Specials::kIeee:
    // Quiet NaN without payload, as Eigen and ml_dtypes produce.
    return sign | exp_all | (uint64_t{1} << (f.mantissa_bits - 1));
  case Specials::kFn:
    return sign | exp_all | ((uint64_t{1} << f.mantissa_bits) - 1);
  case Specials::kFnuz:
    return uint64_t{1} << (f.total_bits() - 1);
  case Specials::kE8M0:
    return 0xFF;
  case Specials::kNone:
    return 0; // unreachable: callers saturate instead
  }
  return 0;
}

/// Largest finite magnitude's bits (without sign).
uint64_t MaxFiniteBits(const FloatFormat &f) {
  uint64_t exp_max = (uint64_t{1} << f.exponent_bits) - 1;
  uint64_t man_all = (uint64_t{1} << f.mantissa_bits) - 1;
  switch (f.specials) {
  case Specials::kIeee:
    return ((exp_max - 1) << f.mantissa_bits) | man_all;
  case Specials::kFn:
    return (exp_max << f.mantissa_bits) | (man_all - 1);
  case Specials::kFnuz:
  case Specials::kNone:
    return (exp_max << f.mantissa_bits) | man_all;
  case Specials::kE8M0:
    return 0xFE;
  }
  return 0;
}

double DecodeMagnitude(const FloatFormat &f, uint64_t magnitude_bits) {
  uint64_t man = magnitude_bits & ((uint64_t{1} << f.mantissa_bits) - 1);
  int64_t exp = static_cast<int64_t>(magnitude_bits >> f.mantissa_bits);
  if (exp == 0 && f.specials != Specials::kE8M0)
    return std::ldexp(static_cast<double>(man), 1 - f.bias - f.mantissa_bits);
  double significand = static_cast<double>((uint64_t{1} << f.mantissa_bits) | man);
  return std::ldexp(significand, static_cast<int>(exp - f.bias - f.mantissa_bits));
}

/// Rounds q >= 0 to an integer, ties to even; exact for the magnitudes used.
double RoundHalfEven(double q) {
  double fl = std::floor(q);
  double diff = q - fl;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(fl, 2.0) != 0.0))
    return fl + 1.0;
  return fl;
}

uint64_t Encode(const FloatFormat &f, double v) {
  const bool negative = std::signbit(v);
  const uint64_t sign_bit =
      f.has_sign ? uint64_t{1} << (f.total_bits() - 1) : 0;
  const uint64_t sign = negative ? sign_bit : 0;
  const uint64_t max_bits = MaxFiniteBits(f);
  if (std::isnan(v))
    return f.specials == Specials::kNone ? sign | max_bits : NanBits(f, negative);
  if (!f.has_sign && negative && v != 0)
    return NanBits(f, true);
  double a = std::fabs(v);
  const double max_finite = DecodeMagnitude(f, max_bits);
  if (std::isinf(a)) {
    if (f.specials == Specials::kIeee)
      return sign | (((uint64_t{1} << f.exponent_bits) - 1) << f.mantissa_bits);
    return f.specials == Specials::kNone ? sign | max_bits : NanBits(f, negative);
  }
  const int min_exponent = f.specials == Specials::kE8M0 ? -f.bias : 1 - f.bias;
  if (a == 0) {
    if (f.specials == Specials::kE8M0)
      return 0; // no zero: the smallest value, 2^-127
    return f.specials == Specials::kFnuz ? 0 : sign;
  }
  int e2;
  std::frexp(a, &e2);
  int exponent = std::max(e2 - 1, min_exponent);
  // Distance between neighbours at this exponent (subnormals share the
  // smallest normal exponent's spacing).
  double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
  double r = RoundHalfEven(a / quantum) * quantum;
  if (r > max_finite) {
    if (f.specials == Specials::kIeee)
      return sign | (((uint64_t{1} << f.exponent_bits) - 1) << f.mantissa_bits);
    return f.specials == Specials::kNone ? sign | max_bits : NanBits(f, negative);
  }
  if (r == 0)
    return f.specials == Specials::kFnuz ? 0 : sign;
  std::frexp(r, &e2);
  int r_exponent = e2 - 1;
  if (f.specials != Specials::kE8M0 && r_exponent < min_exponent) {
    uint64_t man = static_cast<uint64_t>(std::ldexp(r, f.bias - 1 + f.mantissa_bits));
    return sign | man;
  }
  uint64_t biased = static_cast<uint64_t>(r_exponent + f.bias);
  uint64_t man = static_cast<uint64_t>(std::ldexp(r, f.mantissa_bits - r_exponent)) -
                 (uint64_t{1} << f.mantissa_bits);
  return sign | (biased << f.mantissa_bits) | man;
}

double Decode(const FloatFormat &f, uint64_t bits) {
  const int total = f.total_bits();
  bits &= total == 64 ? ~uint64_t{0} : (uint64_t{1} << total) - 1;
  const uint64_t sign_bit = f.has_sign ? uint64_t{1} << (total - 1) : 0;
  const bool negative = (bits & sign_bit) != 0;
  const uint64_t magnitude = bits & ~sign_bit;
  const uint64_t exp_all = (uint64_t{1} << f.exponent_bits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.specials) {
  case Specials::kIeee:
    if ((magnitude >> f.mantissa_bits) == exp_all) {
      if (magnitude & ((uint64_t{1} << f.mantissa_bits) - 1))
        return negative ? -nan : nan;
      return negative ? -HUGE_VAL : HUGE_VAL;
    }
    break;
  case Specials::kFn:
    if (magnitude == ((exp_all << f.mantissa_bits) | ((uint64_t{1} << f.mantissa_bits) - 1)))
      return negative ? -nan : nan;
    break;
  case Specials::kFnuz:
    if (bits == sign_bit)
      return nan;
    break;
  case Specials::kE8M0:
    if (bits == 0xFF)
      return nan;
    break;
  case Specials::kNone:
    break;
  }
  double m = DecodeMagnitude(f, magnitude);
  return negative ? -m : m;
}

struct DecodeTable {
  std::array<float, 256> values;
  explicit DecodeTable(PrimitiveType type) {
    FloatFormat f = *FormatOf(type);
    for (int i = 0; i < 256; ++i)
      values[i] = static_cast<float>(Decode(f, static_cast<uint64_t>(i)));
  }
};

} // namespace

uint16_t F32ToBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even;
  // a carry into the exponent is the correct next binade (or inf).
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float BF16ToF32(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t F32ToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u)
    return sign | 0x7e00u;
  // 65520 is halfway between the largest half (65504) and 65536: a tie that
  // rounds to the even neighbour, which is infinity.
  if (x >= 0x477ff000u)
    return sign | 0x7c00u;
  const uint32_t exp = x >> 23;
  if (exp < 113) { // below 2^-14: subnormal half
    if (x <= 0x33000000u) // at most 2^-25: rounds to zero (2^-25 is a tie)
      return sign;
    uint32_t man = (x & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;
    uint32_t r = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u)))
      ++r;
    return sign | static_cast<uint16_t>(r);
  }
  uint32_t man = x & 0x7fffffu;
  uint32_t r = ((exp - 112) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u)))
    ++r;
  return sign | static_cast<uint16_t>(r);
}

float F16ToF32(uint16_t bits) {
  static const FloatFormat kHalf = *FormatOf(PrimitiveType::F16);
  // Exact: every half is a float.
  uint32_t exp = (bits >> 10) & 0x1fu;
  if (exp != 0 && exp != 0x1f) {
    uint32_t u = (static_cast<uint32_t>(bits & 0x8000u) << 16) |
                 ((exp + 112) << 23) | (static_cast<uint32_t>(bits & 0x3ffu) << 13);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  return static_cast<float>(Decode(kHalf, bits));
}

uint16_t F64ToF16(double d) {
  return static_cast<uint16_t>(Encode(*FormatOf(PrimitiveType::F16), d));
}

uint16_t F64ToBF16(double d) {
  return static_cast<uint16_t>(Encode(*FormatOf(PrimitiveType::BF16), d));
}

double FloatBitsToDouble(PrimitiveType type, uint64_t bits) {
  switch (type) {
  case PrimitiveType::F32: {
    uint32_t u = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  case PrimitiveType::F64: {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  default:
    break;
  }
  std::optional<FloatFormat> f = FormatOf(type);
  return f ? Decode(*f, bits) : 0.0;
}

uint64_t DoubleToFloatBits(PrimitiveType type, double v) {
  switch (type) {
  case PrimitiveType::F32: {
    float f = static_cast<float>(v); // hardware conversion: RNE
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  case PrimitiveType::F64: {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    return u;
  }
  default:
    break;
  }
  std::optional<FloatFormat> f = FormatOf(type);
  return f ? Encode(*f, v) : 0;
}

float SmallFloatToF32(PrimitiveType type, uint8_t bits) {
#define LOOM_TABLE(E)                                                          \
  case PrimitiveType::E: {                                                     \
    static const DecodeTable table(PrimitiveType::E);                       \
    return table.values[bits];                                                 \
  }
  switch (type) {
    LOOM_TABLE(F8E3M4)
    LOOM_TABLE(F8E4M3)
    LOOM_TABLE(F8E4M3FN)
    LOOM_TABLE(F8E4M3B11FNUZ)
    LOOM_TABLE(F8E4M3FNUZ)
    LOOM_TABLE(F8E5M2)
    LOOM_TABLE(F8E5M2FNUZ)
    LOOM_TABLE(F8E8M0FNU)
    LOOM_TABLE(F4E2M1FN)
  default:
    return 0.0f;
  }
#undef LOOM_TABLE
}

uint8_t F32ToSmallFloat(PrimitiveType type, float f) {
  return static_cast<uint8_t>(DoubleToFloatBits(type, f));
}

int MaxDigits10(PrimitiveType type) {
  std::optional<FloatFormat> f = FormatOf(type);
  if (!f)
    return 17;
  // ceil(1 + digits * log10(2)), digits counting the implicit bit.
  return static_cast<int>(std::ceil(1.0 + (f->mantissa_bits + 1) * 0.30102999566398120));
}

} // namespace loom::hlo
