//===- FloatFormats.h - Narrow floating-point formats, bit exact ----------===//
//
// Every narrow float format is described by its exponent and mantissa
// widths, its bias and how it spells infinity and NaN (FloatFormat). One
// generic encoder rounds a double into any of them, once (round to nearest,
// ties to even; no double rounding through f32), and one decoder is exact.
// HLO's element types (lib/hlo/eval) and BIR's (docs/bir.md "Data types")
// are both built on it.
//
// The f32 <-> bf16 / f16 conversions have bit-level fast paths, inline,
// because the interpreters run them per element.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_FLOATFORMATS_H
#define LOOM_SUPPORT_FLOATFORMATS_H

#include <cstdint>
#include <cstring>

namespace loom {

/// How a format spells NaN and infinity.
enum class FloatSpecials : uint8_t {
  Ieee, ///< inf = max exponent, zero mantissa; NaN = max exponent, mantissa != 0
  Fn,   ///< no inf; NaN = all exponent and mantissa bits set (either sign)
  Fnuz, ///< no inf, no -0; NaN = the sign bit alone (0x80)
  None, ///< no inf, no NaN (f4e2m1fn): out-of-range values and NaN saturate
  E8M0, ///< no sign, no mantissa, no zero; 0xFF is NaN
};

/// A binary floating-point format of at most 64 bits.
struct FloatFormat {
  int ExponentBits;
  int MantissaBits;
  int Bias;
  FloatSpecials Specials;
  bool HasSign = true;
  int totalBits() const { return (HasSign ? 1 : 0) + ExponentBits + MantissaBits; }
};

/// What a finite value beyond the largest finite one (and an infinity, in a
/// format without one) becomes.
enum class FloatOverflow : uint8_t {
  /// The format's own rule: infinity if it has one, else NaN if it has one,
  /// else the largest finite value (IEEE / OCP / ml_dtypes behaviour).
  Native,
  /// The largest finite value of the same sign, also for +-inf. NaN stays NaN.
  Saturate,
};

/// Rounds V into F (nearest, ties to even) and returns its bit pattern in
/// the low F.totalBits() bits.
uint64_t encodeFloat(const FloatFormat &F, double V,
                     FloatOverflow Overflow = FloatOverflow::Native);

/// The exact value of bit pattern Bits of F (bits above totalBits ignored).
double decodeFloat(const FloatFormat &F, uint64_t Bits);

/// The largest finite magnitude of F.
double maxFiniteValue(const FloatFormat &F);

/// The narrow float types of BIR (docs/bir.md "Data types").
enum class SmallFloat { F16, BF16, F8E4M3, F8E5M2 };

/// F16: IEEE binary16. BF16: bfloat16. F8E4M3: 4 exponent bits, bias 7, no
/// infinities, NaN = 0x7f / 0xff, largest finite 448 (OCP "E4M3", ml_dtypes
/// float8_e4m3fn). F8E5M2: 5 exponent bits, bias 15, IEEE specials.
FloatFormat formatOf(SmallFloat F);

/// The exact value of a bit pattern (table driven for the 8-bit formats).
double smallFloatToDouble(SmallFloat F, uint32_t Bits);

/// Rounds V to nearest, ties to even. A finite value beyond the largest
/// finite one becomes infinity in F16, BF16 and F8E5M2. F8E4M3 has no
/// infinity: with SaturateE4M3 (BIR's rule, docs/bir.md "Conversion") such
/// values and +-inf saturate to +-448; without it they become NaN (the OCP /
/// ml_dtypes float8_e4m3fn rule that HLO's f8e4m3fn follows). NaN stays NaN.
uint32_t doubleToSmallFloat(SmallFloat F, double V, bool SaturateE4M3 = true);

/// f32 -> bf16, round to nearest even; NaN -> quiet NaN of the same sign.
inline uint16_t f32ToBF16(float F) {
  uint32_t U;
  std::memcpy(&U, &F, 4);
  if ((U & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>(((U >> 16) & 0x8000u) | 0x7fc0u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even;
  // a carry into the exponent is the correct next binade (or inf).
  U += 0x7fffu + ((U >> 16) & 1u);
  return static_cast<uint16_t>(U >> 16);
}

/// bf16 -> f32, exact.
inline float bf16ToF32(uint16_t Bits) {
  uint32_t U = static_cast<uint32_t>(Bits) << 16;
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

/// f32 -> f16, round to nearest even; overflow -> inf; NaN -> quiet NaN.
inline uint16_t f32ToF16(float F) {
  uint32_t X;
  std::memcpy(&X, &F, 4);
  const uint16_t Sign = static_cast<uint16_t>((X >> 16) & 0x8000u);
  X &= 0x7fffffffu;
  if (X > 0x7f800000u)
    return Sign | 0x7e00u;
  // 65520 is halfway between the largest half (65504) and 65536: a tie that
  // rounds to the even neighbour, which is infinity.
  if (X >= 0x477ff000u)
    return Sign | 0x7c00u;
  const uint32_t Exp = X >> 23;
  if (Exp < 113) {          // below 2^-14: subnormal half
    if (X <= 0x33000000u)   // at most 2^-25: rounds to zero (2^-25 is a tie)
      return Sign;
    uint32_t Man = (X & 0x7fffffu) | 0x800000u;
    uint32_t Shift = 126 - Exp;
    uint32_t R = Man >> Shift;
    uint32_t Rem = Man & ((1u << Shift) - 1);
    uint32_t Half = 1u << (Shift - 1);
    if (Rem > Half || (Rem == Half && (R & 1u)))
      ++R;
    return Sign | static_cast<uint16_t>(R);
  }
  uint32_t Man = X & 0x7fffffu;
  uint32_t R = ((Exp - 112) << 10) | (Man >> 13);
  uint32_t Rem = Man & 0x1fffu;
  if (Rem > 0x1000u || (Rem == 0x1000u && (R & 1u)))
    ++R;
  return Sign | static_cast<uint16_t>(R);
}

/// f16 -> f32, exact (every half is a float); NaN -> quiet NaN of the same
/// sign, without payload.
inline float f16ToF32(uint16_t Bits) {
  const uint32_t Sign = static_cast<uint32_t>(Bits & 0x8000u) << 16;
  const uint32_t Exp = (Bits >> 10) & 0x1fu;
  const uint32_t Man = Bits & 0x3ffu;
  uint32_t U;
  if (Exp == 0x1f) {
    U = Sign | (Man ? 0x7fc00000u : 0x7f800000u);
  } else if (Exp != 0) {
    U = Sign | ((Exp + 112) << 23) | (Man << 13);
  } else if (Man == 0) {
    U = Sign;
  } else {
    // Subnormal half: Man * 2^-24; normalize into a float.
    int Shift = __builtin_clz(Man) - 21; // moves the leading 1 to bit 10
    uint32_t M = (Man << Shift) & 0x3ffu;
    U = Sign | (static_cast<uint32_t>(113 - Shift) << 23) | (M << 13);
  }
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

} // namespace loom

#endif
