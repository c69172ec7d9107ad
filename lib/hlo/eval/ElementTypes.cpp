//===- ElementTypes.cpp - The float conversions of HLO's element types ---===//
//
// Every narrow HLO float type is described by its exponent and mantissa
// widths, bias and special-value rules (loom/support/FloatFormats.h); the
// generic encoder there rounds a double into any of them, once (no double
// rounding through f32). f32 -> bf16/f16 use its bit-level fast paths
// because the interpreter runs them per element.
//
//===----------------------------------------------------------------------===//

#include "ElementTypes.h"

#include "loom/support/FloatFormats.h"

#include <array>
#include <cmath>
#include <cstring>

namespace loom::hlo {
namespace {

std::optional<FloatFormat> FormatOf(PrimitiveType type) {
  using S = FloatSpecials;
  switch (type) {
  case PrimitiveType::F16: return FloatFormat{5, 10, 15, S::Ieee};
  case PrimitiveType::BF16: return FloatFormat{8, 7, 127, S::Ieee};
  case PrimitiveType::F32: return FloatFormat{8, 23, 127, S::Ieee};
  case PrimitiveType::F64: return FloatFormat{11, 52, 1023, S::Ieee};
  case PrimitiveType::F8E5M2: return FloatFormat{5, 2, 15, S::Ieee};
  case PrimitiveType::F8E4M3: return FloatFormat{4, 3, 7, S::Ieee};
  case PrimitiveType::F8E3M4: return FloatFormat{3, 4, 3, S::Ieee};
  case PrimitiveType::F8E4M3FN: return FloatFormat{4, 3, 7, S::Fn};
  case PrimitiveType::F8E4M3FNUZ: return FloatFormat{4, 3, 8, S::Fnuz};
  case PrimitiveType::F8E5M2FNUZ: return FloatFormat{5, 2, 16, S::Fnuz};
  case PrimitiveType::F8E4M3B11FNUZ: return FloatFormat{4, 3, 11, S::Fnuz};
  case PrimitiveType::F4E2M1FN: return FloatFormat{2, 1, 1, S::None};
  case PrimitiveType::F8E8M0FNU: return FloatFormat{8, 0, 127, S::E8M0, false};
  default: return std::nullopt;
  }
}

// XLA's converts use each format's own overflow rule (inf, else NaN, else
// saturation): FloatOverflow::Native, never BIR's e4m3 saturation.
uint64_t Encode(const FloatFormat &f, double v) {
  return encodeFloat(f, v, FloatOverflow::Native);
}

double Decode(const FloatFormat &f, uint64_t bits) { return decodeFloat(f, bits); }

struct DecodeTable {
  std::array<float, 256> values;
  explicit DecodeTable(PrimitiveType type) {
    FloatFormat f = *FormatOf(type);
    for (int i = 0; i < 256; ++i)
      values[i] = static_cast<float>(Decode(f, static_cast<uint64_t>(i)));
  }
};

} // namespace

uint16_t F32ToBF16(float f) { return f32ToBF16(f); }

float BF16ToF32(uint16_t bits) { return bf16ToF32(bits); }

uint16_t F32ToF16(float f) { return f32ToF16(f); }

float F16ToF32(uint16_t bits) { return f16ToF32(bits); }

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
  return static_cast<int>(std::ceil(1.0 + (f->MantissaBits + 1) * 0.30102999566398120));
}

} // namespace loom::hlo
