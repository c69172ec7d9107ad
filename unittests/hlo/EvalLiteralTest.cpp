// Unit tests of Literal: round-to-nearest-even conversions into every small
// float type (ties, NaN, infinity, overflow, subnormals), XLA's convert rules
// for integers, printing in XLA's literal syntax and parsing it back.
#include "EvalTestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace loom::hlo;
using namespace loom::hlo::evaltest;

namespace {

float Bits32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(EvalLiteralTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(F32ToBF16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even 1.
  EXPECT_EQ(F32ToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between odd 0x3f81 and even 0x3f82.
  EXPECT_EQ(F32ToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(F32ToBF16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(F32ToBF16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(F32ToBF16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(F32ToBF16(std::numeric_limits<float>::max()), 0x7f80); // overflows to inf
  EXPECT_EQ(F32ToBF16(std::nanf("")), 0x7fc0);
  EXPECT_EQ(F32ToBF16(-std::nanf("")), 0xffc0);
  // A NaN whose payload sits in the dropped bits stays a NaN.
  EXPECT_EQ(F32ToBF16(Bits32(0x7f800001)), 0x7fc0);
  // Subnormals round like normals.
  EXPECT_EQ(F32ToBF16(Bits32(0x00008000)), 0x0000); // tie to even zero
  EXPECT_EQ(F32ToBF16(Bits32(0x00018000)), 0x0002); // tie to even 2
  EXPECT_EQ(BF16ToF32(0x3f81), 1.0f + std::ldexp(1.0f, -7));
}

TEST(EvalLiteralTest, F16RoundsToNearestEven) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65519.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00); // tie above the largest half: inf
  EXPECT_EQ(F32ToF16(1e10f), 0x7c00);
  EXPECT_EQ(F32ToF16(-1e10f), 0xfc00);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);     // tie to even zero
  EXPECT_EQ(F32ToF16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -25)), 0x0002);     // 1.5 ulp: tie to even 2
  EXPECT_EQ(F32ToF16(-std::ldexp(1.0f, -30)), 0x8000);    // -0
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(F32ToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(F32ToF16(std::ldexp(1023.0f, -24) + std::ldexp(1.0f, -25)), 0x0400); // to normal
  EXPECT_EQ(F32ToF16(std::nanf("")) & 0x7e00, 0x7e00);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F16ToF32(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(F16ToF32(0xfc00)));
  EXPECT_TRUE(std::isnan(F16ToF32(0x7e01)));
}

TEST(EvalLiteralTest, DoubleToHalfRoundsOnce) {
  // Through f32 this would lose the 2^-40 and become a tie that rounds
  // down; rounding once from the double rounds up.
  double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(F64ToF16(d), 0x3c01);
  EXPECT_EQ(F64ToBF16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 0x3f81);
  Literal lit(Shape(PrimitiveType::F16, {1}));
  lit.SetFromDouble(0, d);
  EXPECT_EQ(lit.data<uint16_t>()[0], 0x3c01);
}

TEST(EvalLiteralTest, Float8Formats) {
  auto e4m3fn = [](double v) { return DoubleToFloatBits(PrimitiveType::F8E4M3FN, v); };
  EXPECT_EQ(e4m3fn(448), 0x7eu);
  EXPECT_EQ(e4m3fn(464), 0x7eu); // tie between 448 and (NaN) 480: even 448
  EXPECT_EQ(e4m3fn(470), 0x7fu); // rounds past the largest value: NaN (no inf)
  EXPECT_EQ(e4m3fn(HUGE_VAL), 0x7fu);
  EXPECT_EQ(e4m3fn(-HUGE_VAL), 0xffu);
  EXPECT_EQ(e4m3fn(std::nan("")), 0x7fu);
  EXPECT_EQ(e4m3fn(std::ldexp(1.0, -9)), 0x01u); // smallest subnormal
  EXPECT_EQ(e4m3fn(std::ldexp(1.0, -10)), 0x00u); // tie to even zero
  EXPECT_EQ(e4m3fn(1.0), 0x38u);
  EXPECT_TRUE(std::isnan(FloatBitsToDouble(PrimitiveType::F8E4M3FN, 0x7f)));
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::F8E4M3FN, 0x7e), 448.0);

  auto e5m2 = [](double v) { return DoubleToFloatBits(PrimitiveType::F8E5M2, v); };
  EXPECT_EQ(e5m2(57344), 0x7bu);
  EXPECT_EQ(e5m2(61440), 0x7cu); // tie above the largest value: inf
  EXPECT_EQ(e5m2(-HUGE_VAL), 0xfcu);
  EXPECT_EQ(e5m2(std::ldexp(1.0, -16)), 0x01u);
  EXPECT_TRUE(std::isinf(FloatBitsToDouble(PrimitiveType::F8E5M2, 0x7c)));

  auto fnuz = [](double v) { return DoubleToFloatBits(PrimitiveType::F8E4M3FNUZ, v); };
  EXPECT_EQ(fnuz(-0.0), 0x00u); // no negative zero
  EXPECT_EQ(fnuz(std::nan("")), 0x80u);
  EXPECT_EQ(fnuz(1e9), 0x80u);
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::F8E4M3FNUZ, 0x7f), 240.0);
}

TEST(EvalLiteralTest, IntegerConversionsFollowXlaConvert) {
  Literal s32(Shape(PrimitiveType::S32, {6}));
  s32.SetFromDouble(0, 1e20);
  s32.SetFromDouble(1, -1e20);
  s32.SetFromDouble(2, std::nan(""));
  s32.SetFromDouble(3, 2.9);
  s32.SetFromDouble(4, -2.9);
  s32.SetFromDouble(5, HUGE_VAL);
  EXPECT_EQ(s32.ToString(), "s32[6]{0} {2147483647, -2147483648, 0, 2, -2, 2147483647}");

  Literal s8(Shape(PrimitiveType::S8, {2}));
  s8.SetFromInt64(0, 300); // wraps
  s8.SetFromInt64(1, -129);
  EXPECT_EQ(s8.ToString(), "s8[2]{0} {44, 127}");
  Literal u8(Shape(PrimitiveType::U8, {1}));
  u8.SetFromInt64(0, -1);
  EXPECT_EQ(u8.GetAsInt64(0), 255);
  Literal s4(Shape(PrimitiveType::S4, {3}));
  s4.SetFromInt64(0, 9);
  s4.SetFromDouble(1, 100.0); // saturates to the 4-bit range
  s4.SetFromDouble(2, -100.0);
  EXPECT_EQ(s4.ToString(), "s4[3]{0} {-7, 7, -8}");
  Literal u64(Shape(PrimitiveType::U64, {1}));
  u64.SetFromUint64(0, ~uint64_t{0});
  EXPECT_EQ(u64.ToString(), "u64[1]{0} {18446744073709551615}");

  // int64 -> bf16 rounds once: 2^60 + 2^52 + 1 is just above the halfway
  // point between 2^60 and 2^60 + 2^53.
  Literal bf16(Shape(PrimitiveType::BF16, {}));
  bf16.SetFromInt64(0, (int64_t{1} << 60) + (int64_t{1} << 52) + 1);
  EXPECT_EQ(bf16.GetAsDouble(0), std::ldexp(1.0, 60) + std::ldexp(1.0, 53));

  Literal pred(Shape(PrimitiveType::PRED, {2}));
  pred.SetFromDouble(0, std::nan(""));
  pred.SetFromDouble(1, 0.0);
  EXPECT_EQ(pred.ToString(), "pred[2]{0} {1, 0}");
}

TEST(EvalLiteralTest, PrintsLikeXla) {
  EXPECT_EQ(Array(PrimitiveType::F32, {2, 2}, {1, 2, 3, 4}).ToString(),
            "f32[2,2]{1,0} { { 1, 2 }, { 3, 4 } }");
  EXPECT_EQ(Array(PrimitiveType::F32, {2, 1}, {1, 2}).ToString(), "f32[2,1]{1,0} { {1}, {2} }");
  EXPECT_EQ(Literal::CreateR0Bool(true).ToString(), "pred[] true");
  EXPECT_EQ(Literal::CreateR0FromDouble(PrimitiveType::F32, 1e-5).ToString(), "f32[] 1e-05");
  EXPECT_EQ(Literal::CreateR0FromDouble(PrimitiveType::F32, 0.1).ToString(), "f32[] 0.1");
  EXPECT_EQ(Literal::CreateR0FromDouble(PrimitiveType::F32, 1.0 / 3).ToString(),
            "f32[] 0.333333343");
  EXPECT_EQ(Literal::CreateR0FromDouble(PrimitiveType::BF16, 0.1).ToString(), "bf16[] 0.1001");
  EXPECT_EQ(Literal::CreateR0FromDouble(PrimitiveType::F64, 0.1).ToString(), "f64[] 0.1");
  EXPECT_EQ(Vec(PrimitiveType::F32, {std::nan(""), -HUGE_VAL, -0.0}).ToString(),
            "f32[3]{0} {nan, -inf, -0}");
  Literal tuple = Literal::MakeTuple(
      {Vec(PrimitiveType::F32, {1, 2}), Literal::CreateR0FromInt64(PrimitiveType::S32, 3)});
  EXPECT_EQ(tuple.ToString(), "(f32[2]{0}, s32[]) ({1, 2}, 3)");
  EXPECT_EQ(Literal().ToString(), "() ()");
  // Rank > 3 marks the outer indices like XLA.
  Literal r4 = Array(PrimitiveType::F32, {2, 1, 1, 2}, {1, 2, 3, 4});
  EXPECT_EQ(r4.ToString(), "f32[2,1,1,2]{3,2,1,0} { { /*i0=0*/ { /*i1=0*/ { 1, 2 } } }, "
                           "{ /*i0=1*/ { /*i1=0*/ { 3, 4 } } } }");
  // A shape's own layout is printed.
  Literal col(Shape(PrimitiveType::S32, {2, 2}));
  Shape with_layout = col.shape();
  with_layout.set_layout(Layout{{0, 1}, ""});
  col.Reshape(with_layout);
  EXPECT_EQ(col.ToString(), "s32[2,2]{0,1} { { 0, 0 }, { 0, 0 } }");
}

TEST(EvalLiteralTest, ElidesLongArrays) {
  std::vector<double> values(100);
  for (int i = 0; i < 100; ++i)
    values[i] = i;
  EXPECT_EQ(Vec(PrimitiveType::S32, values).ToString(8),
            "s32[100]{0} {0, 1, 2, 3, ..., 96, 97, 98, 99}");
  EXPECT_NE(Vec(PrimitiveType::S32, values).ToString().find(", ..., "), std::string::npos);
  EXPECT_EQ(Vec(PrimitiveType::S32, values).ToString(-1).find("..."), std::string::npos);
}

TEST(EvalLiteralTest, NanPayloadsRoundTrip) {
  Literal f(Shape(PrimitiveType::F32, {}));
  uint32_t bits = 0x7f800001;
  std::memcpy(f.raw_data(), &bits, 4);
  EXPECT_EQ(f.ToString(), "f32[] nan(0x1)");
  auto parsed = ParseLiteral(f.shape(), "nan(0x1)");
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(*parsed, f);
  auto negative = ParseLiteral(f.shape(), "-nan");
  ASSERT_TRUE(static_cast<bool>(negative));
  EXPECT_EQ(negative->data<uint32_t>()[0], 0xffc00000u);
}

void ExpectRoundTrip(const std::string &shape_text, const std::string &text,
                     const std::string &printed) {
  auto shape = ParseShape(shape_text);
  ASSERT_TRUE(static_cast<bool>(shape)) << llvm::toString(shape.takeError());
  auto lit = ParseLiteral(*shape, text);
  ASSERT_TRUE(static_cast<bool>(lit)) << text << ": " << llvm::toString(lit.takeError());
  EXPECT_EQ(lit->ToString(), printed);
  auto again = ParseLiteral(*shape, lit->ValuesToString(/*max_elements=*/-1));
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(*again, *lit);
}

TEST(EvalLiteralTest, ParsesWhatXlaPrints) {
  ExpectRoundTrip("f32[]", "-2.5", "f32[] -2.5");
  ExpectRoundTrip("f32[]", "1e-05", "f32[] 1e-05");
  ExpectRoundTrip("f32[]", "-inf", "f32[] -inf");
  ExpectRoundTrip("bf16[]", "-2.366e+38", "bf16[] -2.366e+38");
  ExpectRoundTrip("f32[]", "0.", "f32[] 0");
  ExpectRoundTrip("pred[]", "true", "pred[] true");
  ExpectRoundTrip("pred[2,3]{1,0}", "{ { 0, 1, 0 }, { 1, 0, 1 } }",
                  "pred[2,3]{1,0} { { 0, 1, 0 }, { 1, 0, 1 } }");
  ExpectRoundTrip("pred[2]", "{true, false}", "pred[2]{0} {1, 0}");
  ExpectRoundTrip("s32[3]", "{-1, 0, 2147483647}", "s32[3]{0} {-1, 0, 2147483647}");
  ExpectRoundTrip("u64[1]", "{18446744073709551615}", "u64[1]{0} {18446744073709551615}");
  ExpectRoundTrip("f16[6]", "{nan, 7, nan, -1, inf, -inf}",
                  "f16[6]{0} {nan, 7, nan, -1, inf, -inf}");
  ExpectRoundTrip("f32[0]{0}", "{}", "f32[0]{0} {}");
  ExpectRoundTrip("f32[2,0,4,3]{3,2,1,0}", "{ { /*i0=0*/ }, { /*i0=1*/ } }",
                  "f32[2,0,4,3]{3,2,1,0} { { /*i0=0*/ }, { /*i0=1*/ } }");
  ExpectRoundTrip("f32[2,2,1,1]{3,2,1,0}", "{{{{1.0}},{{2.0}}},{{{3.0}},{{4.0}}}}",
                  "f32[2,2,1,1]{3,2,1,0} { { /*i0=0*/ { /*i1=0*/ {1} }, { /*i1=1*/ {2} } }, "
                  "{ /*i0=1*/ { /*i1=0*/ {3} }, { /*i1=1*/ {4} } } }");
  ExpectRoundTrip("(f32[2,1]{1,0}, f32[2]{0})", "( { {1}, {2} }, {2, 42} )",
                  "(f32[2,1]{1,0}, f32[2]{0}) ({ {1}, {2} }, {2, 42})");
  ExpectRoundTrip("(f32[2], s32[])", "(f32[2]{0} {1, 2}, s32[] 3)",
                  "(f32[2]{0}, s32[]) ({1, 2}, 3)");
  ExpectRoundTrip("((f32[], s32[]), pred[])", "((f32[], s32[]) (1, 2), true)",
                  "((f32[], s32[]), pred[]) ((1, 2), true)");
  ExpectRoundTrip("c64[]", "(1, -2.5)", "c64[] (1, -2.5)");
  ExpectRoundTrip("bf16[512,128]", "0.", "bf16[512,128]{1,0} {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
                  "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ..., 0, 0, 0, 0, "
                  "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
                  "0, 0}");
}

std::string ParseError(const std::string &shape_text, const std::string &text) {
  auto shape = ParseShape(shape_text);
  if (!shape)
    return "<bad shape>";
  auto lit = ParseLiteral(*shape, text);
  if (lit)
    return "";
  return llvm::toString(lit.takeError());
}

TEST(EvalLiteralTest, ParseErrorsSayWhatIsWrong) {
  EXPECT_NE(ParseError("f32[2]", "{1, 2, 3}").find("expected 2 elements in dimension 0"),
            std::string::npos);
  EXPECT_NE(ParseError("f32[3]", "{1, 2}").find("expected 3 elements"), std::string::npos);
  EXPECT_NE(ParseError("f32[200]", "{...}").find("elided"), std::string::npos);
  EXPECT_NE(ParseError("s8[]", "300").find("out of range for s8"), std::string::npos);
  EXPECT_NE(ParseError("u8[]", "-1").find("out of range"), std::string::npos);
  EXPECT_NE(ParseError("f32[]", "abc").find("expected a number"), std::string::npos);
  EXPECT_NE(ParseError("s32[]", "1.5").find("expected an integer"), std::string::npos);
  EXPECT_NE(ParseError("pred[]", "maybe").find("expected true or false"), std::string::npos);
  EXPECT_NE(ParseError("(f32[], f32[])", "(1)").find("expected ','"), std::string::npos);
  EXPECT_NE(ParseError("f32[]", "1 2").find("unexpected text"), std::string::npos);
  EXPECT_NE(ParseError("(f32[2], s32[])", "(s32[2] {1, 2}, 3)").find("does not match"),
            std::string::npos);
}

TEST(EvalLiteralTest, IntegerAndRangeRulesFollowXlasParser) {
  // Leading zeros are decimal, not octal.
  auto shape = ParseShape("s32[2]");
  ASSERT_TRUE(static_cast<bool>(shape));
  auto lz = ParseLiteral(*shape, "{010, -007}");
  ASSERT_TRUE(static_cast<bool>(lz)) << llvm::toString(lz.takeError());
  EXPECT_EQ(lz->ToString(), "s32[2]{0} {10, -7}");
  // A negative u64 wraps (XLA reads an s64 and checks it as unsigned).
  auto u64 = ParseShape("u64[]");
  ASSERT_TRUE(static_cast<bool>(u64));
  auto m1 = ParseLiteral(*u64, "-1");
  ASSERT_TRUE(static_cast<bool>(m1)) << llvm::toString(m1.takeError());
  EXPECT_EQ(m1->ToString(), "u64[] 18446744073709551615");
  EXPECT_NE(ParseError("u32[]", "-1").find("out of range for u32"), std::string::npos);
  // A finite value that rounds to inf is out of range; one that rounds to
  // the largest finite value is not.
  EXPECT_NE(ParseError("f16[]", "65520").find("out of range for f16"), std::string::npos);
  EXPECT_NE(ParseError("bf16[]", "1e100").find("out of range for bf16"), std::string::npos);
  EXPECT_NE(ParseError("f32[]", "-1e39").find("out of range for f32"), std::string::npos);
  EXPECT_EQ(ParseError("f16[]", "65519.99"), "");
  EXPECT_EQ(ParseError("bf16[]", "3.39e+38"), "");
  EXPECT_EQ(ParseError("f16[]", "-inf"), "");
}

TEST(EvalLiteralTest, EqualityIgnoresLayout) {
  Literal a = Array(PrimitiveType::F32, {2, 2}, {1, 2, 3, 4});
  Literal b = a;
  Shape s = b.shape();
  s.set_layout(Layout{{0, 1}, ""});
  b.Reshape(s);
  EXPECT_EQ(a, b);
  b.SetFromDouble(3, 5);
  EXPECT_NE(a, b);
  EXPECT_NE(Vec(PrimitiveType::F32, {0.0}), Vec(PrimitiveType::F32, {-0.0})); // bitwise
  EXPECT_NE(Vec(PrimitiveType::F32, {1}), Vec(PrimitiveType::S32, {1}));
}

TEST(EvalLiteralTest, ZeroLiteralsOfEveryShape) {
  auto shape = ParseShape("(f32[2], (s8[], token[]), c64[1])");
  ASSERT_TRUE(static_cast<bool>(shape));
  Literal lit(*shape);
  EXPECT_TRUE(lit.IsTuple());
  EXPECT_EQ(lit.tuple_elements()[1].tuple_elements()[1].IsToken(), true);
  EXPECT_EQ(lit.ToString(), "(f32[2]{0}, (s8[], token[]), c64[1]{0}) ({0, 0}, (0, token), {(0, 0)})");
  EXPECT_EQ(lit.TotalBytes(), 8 + 1 + 8);
  EXPECT_TRUE(IsSupportedElementType(PrimitiveType::F8E4M3FN));
  EXPECT_FALSE(IsSupportedElementType(PrimitiveType::OPAQUE_TYPE));
}

} // namespace
