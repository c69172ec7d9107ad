//===- FloatFormats.cpp - Round-to-nearest-even conversions of small floats ===//
//
// One generic encoder and decoder over FloatFormat. The encoder finds the
// value's binade, rounds the value divided by that binade's spacing to an
// integer (ties to even) and rebuilds the bits; every step is exact in
// double for formats of up to 52 mantissa bits, so there is one rounding.
//
//===----------------------------------------------------------------------===//

#include "loom/support/FloatFormats.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>

namespace loom {
namespace {

uint64_t nanBits(const FloatFormat &F, bool Negative) {
  uint64_t Sign = Negative && F.HasSign ? uint64_t{1} << (F.totalBits() - 1) : 0;
  uint64_t ExpAll = ((uint64_t{1} << F.ExponentBits) - 1) << F.MantissaBits;
  switch (F.Specials) {
  case FloatSpecials::Ieee:
    // Quiet NaN without payload, as Eigen and ml_dtypes produce.
    return Sign | ExpAll | (uint64_t{1} << (F.MantissaBits - 1));
  case FloatSpecials::Fn:
    return Sign | ExpAll | ((uint64_t{1} << F.MantissaBits) - 1);
  case FloatSpecials::Fnuz:
    return uint64_t{1} << (F.totalBits() - 1);
  case FloatSpecials::E8M0:
    return 0xFF;
  case FloatSpecials::None:
    return 0; // unreachable: callers saturate instead
  }
  return 0;
}

/// Largest finite magnitude's bits (without sign).
uint64_t maxFiniteBits(const FloatFormat &F) {
  uint64_t ExpMax = (uint64_t{1} << F.ExponentBits) - 1;
  uint64_t ManAll = (uint64_t{1} << F.MantissaBits) - 1;
  switch (F.Specials) {
  case FloatSpecials::Ieee:
    return ((ExpMax - 1) << F.MantissaBits) | ManAll;
  case FloatSpecials::Fn:
    return (ExpMax << F.MantissaBits) | (ManAll - 1);
  case FloatSpecials::Fnuz:
  case FloatSpecials::None:
    return (ExpMax << F.MantissaBits) | ManAll;
  case FloatSpecials::E8M0:
    return 0xFE;
  }
  return 0;
}

double decodeMagnitude(const FloatFormat &F, uint64_t MagnitudeBits) {
  uint64_t Man = MagnitudeBits & ((uint64_t{1} << F.MantissaBits) - 1);
  int64_t Exp = static_cast<int64_t>(MagnitudeBits >> F.MantissaBits);
  if (Exp == 0 && F.Specials != FloatSpecials::E8M0)
    return std::ldexp(static_cast<double>(Man), 1 - F.Bias - F.MantissaBits);
  double Significand = static_cast<double>((uint64_t{1} << F.MantissaBits) | Man);
  return std::ldexp(Significand, static_cast<int>(Exp - F.Bias - F.MantissaBits));
}

/// Rounds Q >= 0 to an integer, ties to even; exact for the magnitudes used.
double roundHalfEven(double Q) {
  double Fl = std::floor(Q);
  double Diff = Q - Fl;
  if (Diff > 0.5 || (Diff == 0.5 && std::fmod(Fl, 2.0) != 0.0))
    return Fl + 1.0;
  return Fl;
}

/// What an infinity or a finite value beyond the largest finite one becomes.
uint64_t overflowBits(const FloatFormat &F, bool Negative, uint64_t Sign,
                      FloatOverflow Overflow) {
  if (Overflow == FloatOverflow::Saturate || F.Specials == FloatSpecials::None)
    return Sign | maxFiniteBits(F);
  if (F.Specials == FloatSpecials::Ieee)
    return Sign | (((uint64_t{1} << F.ExponentBits) - 1) << F.MantissaBits);
  return nanBits(F, Negative);
}

// An 8-bit format's 256 values.
struct DecodeTable {
  std::array<double, 256> Values;
  explicit DecodeTable(const FloatFormat &F) {
    for (unsigned I = 0; I < 256; ++I)
      Values[I] = decodeFloat(F, I);
  }
};

} // namespace

uint64_t encodeFloat(const FloatFormat &F, double V, FloatOverflow Overflow) {
  const bool Negative = std::signbit(V);
  const uint64_t SignBit = F.HasSign ? uint64_t{1} << (F.totalBits() - 1) : 0;
  const uint64_t Sign = Negative ? SignBit : 0;
  const uint64_t MaxBits = maxFiniteBits(F);
  if (std::isnan(V))
    return F.Specials == FloatSpecials::None ? Sign | MaxBits : nanBits(F, Negative);
  if (!F.HasSign && Negative && V != 0)
    return nanBits(F, true);
  double A = std::fabs(V);
  const double MaxFinite = decodeMagnitude(F, MaxBits);
  if (std::isinf(A))
    return overflowBits(F, Negative, Sign, Overflow);
  const int MinExponent = F.Specials == FloatSpecials::E8M0 ? -F.Bias : 1 - F.Bias;
  if (A == 0) {
    if (F.Specials == FloatSpecials::E8M0)
      return 0; // no zero: the smallest value, 2^-127
    return F.Specials == FloatSpecials::Fnuz ? 0 : Sign;
  }
  int E2;
  std::frexp(A, &E2);
  int Exponent = std::max(E2 - 1, MinExponent);
  // Distance between neighbours at this exponent (subnormals share the
  // smallest normal exponent's spacing).
  double Quantum = std::ldexp(1.0, Exponent - F.MantissaBits);
  double R = roundHalfEven(A / Quantum) * Quantum;
  if (R > MaxFinite)
    return overflowBits(F, Negative, Sign, Overflow);
  if (R == 0)
    return F.Specials == FloatSpecials::Fnuz ? 0 : Sign;
  std::frexp(R, &E2);
  int RExponent = E2 - 1;
  if (F.Specials != FloatSpecials::E8M0 && RExponent < MinExponent) {
    uint64_t Man = static_cast<uint64_t>(std::ldexp(R, F.Bias - 1 + F.MantissaBits));
    return Sign | Man;
  }
  uint64_t Biased = static_cast<uint64_t>(RExponent + F.Bias);
  uint64_t Man = static_cast<uint64_t>(std::ldexp(R, F.MantissaBits - RExponent)) -
                 (uint64_t{1} << F.MantissaBits);
  return Sign | (Biased << F.MantissaBits) | Man;
}

double decodeFloat(const FloatFormat &F, uint64_t Bits) {
  const int Total = F.totalBits();
  Bits &= Total == 64 ? ~uint64_t{0} : (uint64_t{1} << Total) - 1;
  const uint64_t SignBit = F.HasSign ? uint64_t{1} << (Total - 1) : 0;
  const bool Negative = (Bits & SignBit) != 0;
  const uint64_t Magnitude = Bits & ~SignBit;
  const uint64_t ExpAll = (uint64_t{1} << F.ExponentBits) - 1;
  const double NaN = std::numeric_limits<double>::quiet_NaN();
  switch (F.Specials) {
  case FloatSpecials::Ieee:
    if ((Magnitude >> F.MantissaBits) == ExpAll) {
      if (Magnitude & ((uint64_t{1} << F.MantissaBits) - 1))
        return Negative ? -NaN : NaN;
      return Negative ? -HUGE_VAL : HUGE_VAL;
    }
    break;
  case FloatSpecials::Fn:
    if (Magnitude == ((ExpAll << F.MantissaBits) | ((uint64_t{1} << F.MantissaBits) - 1)))
      return Negative ? -NaN : NaN;
    break;
  case FloatSpecials::Fnuz:
    if (Bits == SignBit)
      return NaN;
    break;
  case FloatSpecials::E8M0:
    if (Bits == 0xFF)
      return NaN;
    break;
  case FloatSpecials::None:
    break;
  }
  double M = decodeMagnitude(F, Magnitude);
  return Negative ? -M : M;
}

double maxFiniteValue(const FloatFormat &F) { return decodeMagnitude(F, maxFiniteBits(F)); }

FloatFormat formatOf(SmallFloat F) {
  switch (F) {
  case SmallFloat::F16:
    return {5, 10, 15, FloatSpecials::Ieee};
  case SmallFloat::BF16:
    return {8, 7, 127, FloatSpecials::Ieee};
  case SmallFloat::F8E4M3:
    return {4, 3, 7, FloatSpecials::Fn};
  case SmallFloat::F8E5M2:
    return {5, 2, 15, FloatSpecials::Ieee};
  }
  assert(false && "unknown SmallFloat");
  return {8, 7, 127, FloatSpecials::Ieee};
}

double smallFloatToDouble(SmallFloat F, uint32_t Bits) {
  switch (F) {
  case SmallFloat::F16:
    return f16ToF32(static_cast<uint16_t>(Bits));
  case SmallFloat::BF16:
    return bf16ToF32(static_cast<uint16_t>(Bits));
  case SmallFloat::F8E4M3: {
    static const DecodeTable Table(formatOf(SmallFloat::F8E4M3));
    return Table.Values[Bits & 0xff];
  }
  case SmallFloat::F8E5M2: {
    static const DecodeTable Table(formatOf(SmallFloat::F8E5M2));
    return Table.Values[Bits & 0xff];
  }
  }
  return 0;
}

uint32_t doubleToSmallFloat(SmallFloat F, double V, bool SaturateE4M3) {
  FloatOverflow Overflow = F == SmallFloat::F8E4M3 && SaturateE4M3 ? FloatOverflow::Saturate
                                                                  : FloatOverflow::Native;
  return static_cast<uint32_t>(encodeFloat(formatOf(F), V, Overflow));
}

} // namespace loom
