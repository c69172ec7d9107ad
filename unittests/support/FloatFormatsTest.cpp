// Unit tests of loom/support/FloatFormats.h: the inline f32 <-> f16 / bf16
// fast paths agree bit for bit with the generic encoder and decoder, the
// 8-bit formats round to nearest even, and overflow follows docs/bir.md
// "Conversion" (inf for fp16 / bf16 / fp8e5m2, +-448 for fp8e4m3) or, without
// saturation, the OCP float8_e4m3fn rule (NaN).
#include "loom/support/FloatFormats.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace loom;

namespace {

float floatFromBits(uint32_t U) {
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

uint32_t bitsOfFloat(float F) {
  uint32_t U;
  std::memcpy(&U, &F, 4);
  return U;
}

// Same value, or both NaN of the same sign.
bool sameValue(double A, double B) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B) && std::signbit(A) == std::signbit(B);
  return A == B && std::signbit(A) == std::signbit(B);
}

TEST(SupportFloatTest, F16DecodeFastPathMatchesGenericForEveryPattern) {
  FloatFormat Half = formatOf(SmallFloat::F16);
  for (uint32_t B = 0; B < 0x10000; ++B) {
    float Fast = f16ToF32(static_cast<uint16_t>(B));
    ASSERT_TRUE(sameValue(Fast, decodeFloat(Half, B))) << std::hex << B;
    if (std::isnan(Fast)) { // quiet NaN without payload, as before
      EXPECT_EQ(bitsOfFloat(Fast) & 0x7fffffffu, 0x7fc00000u) << std::hex << B;
    }
  }
  EXPECT_EQ(f16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16ToF32(0x7bff), 65504.0f);
}

TEST(SupportFloatTest, BF16DecodeIsTheHighHalfOfAFloat) {
  FloatFormat BF = formatOf(SmallFloat::BF16);
  for (uint32_t B = 0; B < 0x10000; ++B)
    ASSERT_TRUE(sameValue(bf16ToF32(static_cast<uint16_t>(B)), decodeFloat(BF, B))) << B;
}

TEST(SupportFloatTest, EncodeFastPathsMatchGenericEncoder) {
  FloatFormat Half = formatOf(SmallFloat::F16), BF = formatOf(SmallFloat::BF16);
  // A deterministic walk over float bit patterns, dense near the interesting
  // exponents (f16 subnormals, its overflow threshold) and sparse elsewhere.
  uint32_t State = 12345;
  auto Check = [&](uint32_t U) {
    float F = floatFromBits(U);
    uint16_t H = f32ToF16(F), G = static_cast<uint16_t>(encodeFloat(Half, F));
    if (std::isnan(F))
      EXPECT_TRUE(std::isnan(f16ToF32(H)) && std::isnan(f16ToF32(G)));
    else
      ASSERT_EQ(H, G) << std::hex << U;
    uint16_t BFast = f32ToBF16(F), BGen = static_cast<uint16_t>(encodeFloat(BF, F));
    if (std::isnan(F))
      EXPECT_TRUE(std::isnan(bf16ToF32(BFast)) && std::isnan(bf16ToF32(BGen)));
    else
      ASSERT_EQ(BFast, BGen) << std::hex << U;
  };
  for (int I = 0; I < 200000; ++I) {
    State = State * 1664525u + 1013904223u;
    Check(State);
  }
  for (uint32_t U = 0x33000000u; U < 0x39000000u; U += 0x1001u) // f16 subnormals
    Check(U);
  for (uint32_t U = 0x477fe000u; U < 0x47800100u; ++U) // around 65504 .. 65536
    Check(U);
  // Ties: 65520 is halfway between 65504 and 65536 and rounds to even (inf).
  EXPECT_EQ(f32ToF16(65520.0f), 0x7c00);
  EXPECT_EQ(f32ToF16(65519.0f), 0x7bff);
  EXPECT_EQ(f32ToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);     // tie -> even
  EXPECT_EQ(f32ToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82); // tie -> even
  EXPECT_EQ(f32ToBF16(std::numeric_limits<float>::max()), 0x7f80);
}

TEST(SupportFloatTest, E4M3RoundsToNearestEven) {
  // 1.0 = 0x38; neighbours 1.125 (0x39), 1.25 (0x3a).
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, 1.0), 0x38u);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, 1.0625), 0x38u); // tie -> even
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, 1.1875), 0x3au); // tie -> even
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, 1.07), 0x39u);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, -1.0), 0xb8u);
  // Smallest subnormal 2^-9; half of it is a tie that goes to zero.
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, std::ldexp(1.0, -9)), 0x01u);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, std::ldexp(1.0, -10)), 0x00u);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, std::ldexp(1.5, -10)), 0x01u);
  EXPECT_EQ(smallFloatToDouble(SmallFloat::F8E4M3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(smallFloatToDouble(SmallFloat::F8E4M3, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(smallFloatToDouble(SmallFloat::F8E4M3, 0x7f)));
  EXPECT_TRUE(std::isnan(smallFloatToDouble(SmallFloat::F8E4M3, 0xff)));
}

TEST(SupportFloatTest, E4M3SaturatesByDefaultAndGivesNaNWithoutSaturation) {
  const double Inf = std::numeric_limits<double>::infinity();
  for (double V : {465.0, 480.0, 1e9, Inf}) {
    SCOPED_TRACE(V);
    EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, V), 0x7eu);  // +448
    EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, -V), 0xfeu); // -448
    EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, V, false), 0x7fu);
    EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, -V, false), 0xffu);
  }
  // Up to 464, the midpoint between 448 and the NaN slot's 480 (a tie that
  // goes to the even 448), values round to 448 in both modes.
  for (double V : {449.0, 456.0, 464.0}) {
    EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, V, false), 0x7eu) << V;
    EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, V), 0x7eu) << V;
  }
  // NaN stays NaN in both modes.
  double NaN = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, NaN) & 0x7fu, 0x7fu);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E4M3, NaN, false) & 0x7fu, 0x7fu);
}

TEST(SupportFloatTest, OtherFormatsOverflowToInfinity) {
  const double Inf = std::numeric_limits<double>::infinity();
  // fp8e5m2: largest finite 57344 (0x7b); 61440 is a tie that rounds to 65536,
  // which is beyond it: infinity (0x7c).
  EXPECT_EQ(smallFloatToDouble(SmallFloat::F8E5M2, 0x7b), 57344.0);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E5M2, 57344.0), 0x7bu);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E5M2, 61440.0), 0x7cu);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E5M2, -1e9), 0xfcu);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F8E5M2, Inf), 0x7cu);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F16, 1e6), 0x7c00u);
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::BF16, -1e300), 0xff80u);
  // SaturateE4M3 changes nothing for the formats that have infinities.
  EXPECT_EQ(doubleToSmallFloat(SmallFloat::F16, 1e6, false), 0x7c00u);
  EXPECT_TRUE(std::isinf(smallFloatToDouble(SmallFloat::F8E5M2, 0x7c)));
}

TEST(SupportFloatTest, EveryFinitePatternRoundTrips) {
  for (SmallFloat F : {SmallFloat::F8E4M3, SmallFloat::F8E5M2, SmallFloat::F16, SmallFloat::BF16}) {
    uint32_t Count = F == SmallFloat::F8E4M3 || F == SmallFloat::F8E5M2 ? 0x100 : 0x10000;
    for (uint32_t B = 0; B < Count; ++B) {
      double V = smallFloatToDouble(F, B);
      if (std::isnan(V))
        continue;
      ASSERT_EQ(doubleToSmallFloat(F, V), B) << static_cast<int>(F) << " " << B;
    }
  }
}

TEST(SupportFloatTest, GenericFormatsKeepTheirSpecials) {
  // Formats HLO uses beyond BIR's: fnuz (NaN = 0x80, no -0) and e2m1 (no NaN,
  // saturating).
  FloatFormat Fnuz{4, 3, 8, FloatSpecials::Fnuz};
  EXPECT_EQ(encodeFloat(Fnuz, -0.0), 0x00u);
  EXPECT_EQ(encodeFloat(Fnuz, 1e9), 0x80u);
  EXPECT_TRUE(std::isnan(decodeFloat(Fnuz, 0x80)));
  FloatFormat E2M1{2, 1, 1, FloatSpecials::None};
  EXPECT_EQ(maxFiniteValue(E2M1), 6.0);
  EXPECT_EQ(encodeFloat(E2M1, 100.0), 0x7u);
  EXPECT_EQ(encodeFloat(E2M1, -100.0), 0xfu);
  EXPECT_EQ(maxFiniteValue(formatOf(SmallFloat::F8E4M3)), 448.0);
}

} // namespace
