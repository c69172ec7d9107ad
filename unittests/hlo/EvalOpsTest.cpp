// Unit tests of the interpreter's per-device ops against hand-computed
// results: XLA's integer edge cases, float rounding of bf16 arithmetic,
// compare orders, conversions, data movement, dot and reduce.
#include "EvalTestUtil.h"

#include <cmath>
#include <limits>

using namespace loom::hlo;
using namespace loom::hlo::evaltest;

namespace {

std::string Binary(const std::string &op, const std::string &type, Literal a, Literal b) {
  std::string n = std::to_string(a.element_count());
  return Run1("HloModule m\nENTRY e {\n  a = " + type + "[" + n + "] parameter(0)\n  b = " +
                  type + "[" + n + "] parameter(1)\n  ROOT r = " + type + "[" + n + "] " + op +
                  "(a, b)\n}\n",
              {std::move(a), std::move(b)});
}

std::string Unary(const std::string &op, const std::string &type, const std::string &out_type,
                  Literal a) {
  std::string n = std::to_string(a.element_count());
  return Run1("HloModule m\nENTRY e {\n  a = " + type + "[" + n + "] parameter(0)\n  ROOT r = " +
                  out_type + "[" + n + "] " + op + "(a)\n}\n",
              {std::move(a)});
}

constexpr double kIntMin = -2147483648.0;

TEST(EvalOpsTest, IntegerDivisionEdgeCases) {
  Literal a = Vec(PrimitiveType::S32, {7, -7, 5, kIntMin, 3, kIntMin});
  Literal b = Vec(PrimitiveType::S32, {2, 2, 0, -1, -1, 0});
  EXPECT_EQ(Binary("divide", "s32", a, b), "s32[6]{0} {3, -3, -1, -2147483648, -3, -1}");
  EXPECT_EQ(Binary("remainder", "s32", a, b), "s32[6]{0} {1, -1, 5, 0, 0, -2147483648}");
  EXPECT_EQ(Binary("divide", "u32", Vec(PrimitiveType::U32, {7, 7}),
                   Vec(PrimitiveType::U32, {0, 2})),
            "u32[2]{0} {4294967295, 3}");
  EXPECT_EQ(Binary("divide", "s4", Vec(PrimitiveType::S4, {-8, 7}),
                   Vec(PrimitiveType::S4, {-1, 0})),
            "s4[2]{0} {-8, -1}");
}

TEST(EvalOpsTest, IntegerArithmeticWraps) {
  EXPECT_EQ(Binary("add", "s32", Vec(PrimitiveType::S32, {2147483647}),
                   Vec(PrimitiveType::S32, {1})),
            "s32[1]{0} {-2147483648}");
  EXPECT_EQ(Binary("multiply", "u16", Vec(PrimitiveType::U16, {65535}),
                   Vec(PrimitiveType::U16, {65535})),
            "u16[1]{0} {1}");
  EXPECT_EQ(Binary("multiply", "s64", Vec(PrimitiveType::S64, {4611686018427387904.0}),
                   Vec(PrimitiveType::S64, {4})),
            "s64[1]{0} {0}");
  EXPECT_EQ(Binary("subtract", "u8", Vec(PrimitiveType::U8, {0}), Vec(PrimitiveType::U8, {1})),
            "u8[1]{0} {255}");
  EXPECT_EQ(Unary("negate", "s32", "s32", Vec(PrimitiveType::S32, {kIntMin, 5})),
            "s32[2]{0} {-2147483648, -5}");
  EXPECT_EQ(Unary("abs", "s8", "s8", Vec(PrimitiveType::S8, {-128, -3})), "s8[2]{0} {-128, 3}");
  EXPECT_EQ(Binary("power", "s32", Vec(PrimitiveType::S32, {2, 3, 1, 2, -1}),
                   Vec(PrimitiveType::S32, {10, 0, -5, -1, 3})),
            "s32[5]{0} {1024, 1, 1, 0, -1}");
  EXPECT_EQ(Binary("add", "s4", Vec(PrimitiveType::S4, {7}), Vec(PrimitiveType::S4, {1})),
            "s4[1]{0} {-8}");
}

TEST(EvalOpsTest, ShiftsFollowXla) {
  Literal a = Vec(PrimitiveType::S32, {1, 1, -8, -8, -8, 5});
  Literal b = Vec(PrimitiveType::S32, {31, 32, 1, 40, -1, 0});
  EXPECT_EQ(Binary("shift-left", "s32", a, b),
            "s32[6]{0} {-2147483648, 0, -16, 0, 0, 5}");
  EXPECT_EQ(Binary("shift-right-arithmetic", "s32", a, b), "s32[6]{0} {0, 0, -4, -1, -1, 5}");
  EXPECT_EQ(Binary("shift-right-logical", "s32", a, b),
            "s32[6]{0} {0, 0, 2147483644, 0, 0, 5}");
  EXPECT_EQ(Binary("shift-right-logical", "s4", Vec(PrimitiveType::S4, {-8}),
                   Vec(PrimitiveType::S4, {1})),
            "s4[1]{0} {4}");
  EXPECT_EQ(Binary("shift-right-arithmetic", "u8", Vec(PrimitiveType::U8, {200}),
                   Vec(PrimitiveType::U8, {1})),
            "u8[1]{0} {228}");
  EXPECT_EQ(Unary("count-leading-zeros", "s32", "s32", Vec(PrimitiveType::S32, {0, 1, -1})),
            "s32[3]{0} {32, 31, 0}");
  EXPECT_EQ(Unary("popcnt", "u4", "u4", Vec(PrimitiveType::U4, {15, 5})), "u4[2]{0} {4, 2}");
  EXPECT_EQ(Unary("not", "u8", "u8", Vec(PrimitiveType::U8, {0, 255})), "u8[2]{0} {255, 0}");
  EXPECT_EQ(Unary("not", "pred", "pred", Vec(PrimitiveType::PRED, {0, 1})), "pred[2]{0} {1, 0}");
}

TEST(EvalOpsTest, SmallFloatsComputeInF32AndRound) {
  // 1 + 2^-8 in f32 is exact; rounded to bf16 it is a tie that goes to 1.
  EXPECT_EQ(Binary("add", "bf16", Vec(PrimitiveType::BF16, {1, 1}),
                   Vec(PrimitiveType::BF16, {std::ldexp(1.0, -8), 3 * std::ldexp(1.0, -8)})),
            "bf16[2]{0} {1, 1.016}");
  EXPECT_EQ(Binary("multiply", "f16", Vec(PrimitiveType::F16, {300}),
                   Vec(PrimitiveType::F16, {300})),
            "f16[1]{0} {inf}");
  EXPECT_EQ(Binary("divide", "f8e4m3fn", Vec(PrimitiveType::F8E4M3FN, {1}),
                   Vec(PrimitiveType::F8E4M3FN, {3})),
            "f8e4m3fn[1]{0} {0.344}");
  EXPECT_EQ(Unary("sqrt", "bf16", "bf16", Vec(PrimitiveType::BF16, {2})), "bf16[1]{0} {1.414}");
}

TEST(EvalOpsTest, FloatMaxMinPropagateNan) {
  double nan = std::nan("");
  Literal a = Vec(PrimitiveType::F32, {nan, 1, 2, -0.0});
  Literal b = Vec(PrimitiveType::F32, {1, nan, 3, 0.0});
  EXPECT_EQ(Binary("maximum", "f32", a, b), "f32[4]{0} {nan, nan, 3, -0}");
  EXPECT_EQ(Binary("minimum", "f32", a, b), "f32[4]{0} {nan, nan, 2, -0}");
  EXPECT_EQ(Binary("remainder", "f32", Vec(PrimitiveType::F32, {5.5, -5.5}),
                   Vec(PrimitiveType::F32, {2, 2})),
            "f32[2]{0} {1.5, -1.5}");
  EXPECT_EQ(Binary("power", "f32", Vec(PrimitiveType::F32, {1, nan, 2}),
                   Vec(PrimitiveType::F32, {nan, 0, 10})),
            "f32[3]{0} {1, 1, 1024}");
  EXPECT_EQ(Binary("atan2", "f64", Vec(PrimitiveType::F64, {1}), Vec(PrimitiveType::F64, {1})),
            "f64[1]{0} {0.78539816339744828}");
  EXPECT_EQ(Unary("sign", "f32", "f32", Vec(PrimitiveType::F32, {-3, 0, -0.0, 2, nan})),
            "f32[5]{0} {-1, 0, -0, 1, nan}");
  EXPECT_EQ(Unary("round-nearest-even", "f32", "f32", Vec(PrimitiveType::F32, {2.5, -0.5, 3.5})),
            "f32[3]{0} {2, -0, 4}");
  EXPECT_EQ(Unary("round-nearest-afz", "f32", "f32", Vec(PrimitiveType::F32, {2.5, -0.5})),
            "f32[2]{0} {3, -1}");
  EXPECT_EQ(Unary("is-finite", "f32", "pred", Vec(PrimitiveType::F32, {1, nan, HUGE_VAL})),
            "pred[3]{0} {1, 0, 0}");
  EXPECT_EQ(Unary("logistic", "f32", "f32", Vec(PrimitiveType::F32, {0})), "f32[1]{0} {0.5}");
}

TEST(EvalOpsTest, CompareDirectionsAndTotalOrder) {
  const char *text = R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  lt = pred[4] compare(a, b), direction=LT
  tlt = pred[4] compare(a, b), direction=LT, type=TOTALORDER
  ne = pred[4] compare(a, b), direction=NE
  ROOT t = (pred[4], pred[4], pred[4]) tuple(lt, tlt, ne)
})";
  double nan = std::nan("");
  EXPECT_EQ(Run1(text, {Vec(PrimitiveType::F32, {-0.0, 1, nan, -nan}),
                        Vec(PrimitiveType::F32, {0.0, 2, 1, -HUGE_VAL})}),
            "(pred[4]{0}, pred[4]{0}, pred[4]{0}) ({0, 1, 0, 0}, {1, 1, 0, 1}, {0, 1, 1, 1})");
}

TEST(EvalOpsTest, ConvertSaturatesAndRounds) {
  EXPECT_EQ(Unary("convert", "f32", "s8",
                  Vec(PrimitiveType::F32, {300.5, -1e10, std::nan(""), -3.9, 127.9})),
            "s8[5]{0} {127, -128, 0, -3, 127}");
  EXPECT_EQ(Unary("convert", "f32", "u8", Vec(PrimitiveType::F32, {-5, 256})),
            "u8[2]{0} {0, 255}");
  EXPECT_EQ(Unary("convert", "f32", "bf16",
                  Vec(PrimitiveType::F32, {1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8)})),
            "bf16[2]{0} {1, 1.016}");
  EXPECT_EQ(Unary("convert", "s32", "pred", Vec(PrimitiveType::S32, {0, -7})),
            "pred[2]{0} {0, 1}");
  EXPECT_EQ(Unary("convert", "s32", "s8", Vec(PrimitiveType::S32, {300, -129})),
            "s8[2]{0} {44, 127}");
  EXPECT_EQ(Unary("convert", "f64", "f16", Vec(PrimitiveType::F64, {1 + std::ldexp(1.0, -11) +
                                                                    std::ldexp(1.0, -40)})),
            "f16[1]{0} {1.001}");
  EXPECT_EQ(Unary("bitcast-convert", "f32", "u32", Vec(PrimitiveType::F32, {1, -2})),
            "u32[2]{0} {1065353216, 3221225472}");
  EXPECT_EQ(Run1(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT b = u8[2,4] bitcast-convert(a)
})",
                 {Vec(PrimitiveType::F32, {1, 0})}),
            "u8[2,4]{1,0} { { 0, 0, 128, 63 }, { 0, 0, 0, 0 } }");
}

TEST(EvalOpsTest, SelectClampIota) {
  EXPECT_EQ(Run1(R"(
HloModule m
ENTRY e {
  p = pred[3] parameter(0)
  a = s32[3] parameter(1)
  b = s32[3] parameter(2)
  s = s32[3] select(p, a, b)
  lo = s32[] constant(0)
  hi = s32[] constant(5)
  c = s32[3] clamp(lo, a, hi)
  i = s32[2,3] iota(), iota_dimension=1
  f = bf16[4] iota(), iota_dimension=0
  ROOT t = (s32[3], s32[3], s32[2,3], bf16[4]) tuple(s, c, i, f)
})",
                 {Vec(PrimitiveType::PRED, {1, 0, 1}), Vec(PrimitiveType::S32, {-4, 3, 9}),
                  Vec(PrimitiveType::S32, {7, 8, 9})}),
            "(s32[3]{0}, s32[3]{0}, s32[2,3]{1,0}, bf16[4]{0}) ({-4, 8, 9}, {0, 3, 5}, "
            "{ { 0, 1, 2 }, { 0, 1, 2 } }, {0, 1, 2, 3})");
}

TEST(EvalOpsTest, DataMovement) {
  const char *text = R"(
HloModule m
ENTRY e {
  a = s32[2,3] parameter(0)
  t = s32[3,2] transpose(a), dimensions={1,0}
  b = s32[2,2,3] broadcast(a), dimensions={1,2}
  s = s32[2,2] slice(a), slice={[0:2], [0:3:2]}
  r = s32[2,3] reverse(a), dimensions={1}
  rs = s32[6] reshape(a)
  c = s32[2,6] concatenate(a, a), dimensions={1}
  ROOT tup = (s32[3,2], s32[2,2,3], s32[2,2], s32[2,3], s32[6], s32[2,6]) tuple(t, b, s, r, rs, c)
})";
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::S32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
            "(s32[3,2]{1,0}, s32[2,2,3]{2,1,0}, s32[2,2]{1,0}, s32[2,3]{1,0}, s32[6]{0}, "
            "/*index=5*/s32[2,6]{1,0}) ({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, "
            "{ { { 1, 2, 3 }, { 4, 5, 6 } }, { { 1, 2, 3 }, { 4, 5, 6 } } }, "
            "{ { 1, 3 }, { 4, 6 } }, { { 3, 2, 1 }, { 6, 5, 4 } }, {1, 2, 3, 4, 5, 6}, "
            "{ { 1, 2, 3, 1, 2, 3 }, { 4, 5, 6, 4, 5, 6 } })");
}

TEST(EvalOpsTest, DynamicSlicesClampTheirStart) {
  const char *text = R"(
HloModule m
ENTRY e {
  a = s32[5] parameter(0)
  i = s32[] parameter(1)
  ds = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}
  u = s32[2] constant({70, 80})
  dus = s32[5] dynamic-update-slice(a, u, i)
  ROOT t = (s32[2], s32[5]) tuple(ds, dus)
})";
  auto run = [&](int64_t start) {
    return Run1(text, {Vec(PrimitiveType::S32, {1, 2, 3, 4, 5}),
                       Literal::CreateR0FromInt64(PrimitiveType::S32, start)});
  };
  EXPECT_EQ(run(1), "(s32[2]{0}, s32[5]{0}) ({2, 3}, {1, 70, 80, 4, 5})");
  EXPECT_EQ(run(9), "(s32[2]{0}, s32[5]{0}) ({4, 5}, {1, 2, 3, 70, 80})");
  EXPECT_EQ(run(-3), "(s32[2]{0}, s32[5]{0}) ({1, 2}, {70, 80, 3, 4, 5})");
}

TEST(EvalOpsTest, PadWithNegativeAndInteriorPadding) {
  const char *text = R"(
HloModule m
ENTRY e {
  a = s32[2,3] parameter(0)
  z = s32[] constant(0)
  p = s32[3,7] pad(a, z), padding=1_0x-1_1_2
  ROOT q = s32[2,3] pad(a, z), padding=0_0x-2_2
})";
  auto module = Parse(text);
  ASSERT_TRUE(module);
  std::vector<std::vector<Literal>> args(1);
  args[0].push_back(Array(PrimitiveType::S32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  // Make p the root to check it too.
  HloComputation *entry = module->entry_computation();
  entry->set_root_instruction(entry->GetInstructionWithName("p"));
  auto out = RunSpmd(*module, args);
  ASSERT_TRUE(static_cast<bool>(out)) << llvm::toString(out.takeError());
  // Dimension 1: drop the first element, interior 2, high 1: [0 0 2 0 0 3 0].
  EXPECT_EQ((*out)[0].ToString(), "s32[3,7]{1,0} { { 0, 0, 0, 0, 0, 0, 0 }, "
                                  "{ 0, 0, 2, 0, 0, 3, 0 }, { 0, 0, 5, 0, 0, 6, 0 } }");
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::S32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
            "s32[2,3]{1,0} { { 3, 0, 0 }, { 6, 0, 0 } }");
}

TEST(EvalOpsTest, BitcastFollowsLayouts) {
  // Same bytes, {0,1} layout: the logical value is the transpose.
  EXPECT_EQ(Run1(R"(
HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  ROOT b = f32[3,2]{0,1} bitcast(a)
})",
                 {Array(PrimitiveType::F32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
            "f32[3,2]{0,1} { { 1, 4 }, { 2, 5 }, { 3, 6 } }");
  EXPECT_EQ(Run1(R"(
HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  ROOT b = f32[3,2]{1,0} bitcast(a)
})",
                 {Array(PrimitiveType::F32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
            "f32[3,2]{1,0} { { 1, 2 }, { 3, 4 }, { 5, 6 } }");
}

TEST(EvalOpsTest, DotWithBatchDimensions) {
  const char *text = R"(
HloModule m
ENTRY e {
  a = f32[2,2,3] parameter(0)
  b = f32[3,2,2] parameter(1)
  ROOT d = f32[2,2,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={0}
})";
  std::vector<double> av(12), bv(12);
  for (int i = 0; i < 12; ++i) {
    av[i] = i + 1;
    bv[i] = (i % 5) - 2;
  }
  // Expected: out[b][m][n] = sum_k a[b][m][k] * b[k][b][n].
  std::vector<double> expected;
  for (int bb = 0; bb < 2; ++bb)
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 2; ++n) {
        double s = 0;
        for (int k = 0; k < 3; ++k)
          s += av[bb * 6 + m * 3 + k] * bv[k * 4 + bb * 2 + n];
        expected.push_back(s);
      }
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::F32, {2, 2, 3}, av),
                        Array(PrimitiveType::F32, {3, 2, 2}, bv)}),
            Array(PrimitiveType::F32, {2, 2, 2}, expected).ToString());
}

TEST(EvalOpsTest, DotAccumulatesBf16InF32) {
  // Rounded to bf16 after every step the sum would stay at 1.
  const char *text = R"(
HloModule m
ENTRY e {
  a = bf16[1,3] parameter(0)
  b = bf16[3] parameter(1)
  ROOT d = bf16[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  double eps = std::ldexp(1.0, -8);
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::BF16, {1, 3}, {1, eps, eps}),
                        Vec(PrimitiveType::BF16, {1, 1, 1})}),
            "bf16[1]{0} {1.008}");
  // Integer dots wrap; s8 operands accumulate into an s32 result.
  EXPECT_EQ(Run1(R"(
HloModule m
ENTRY e {
  a = s8[2] parameter(0)
  b = s8[2] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})",
                 {Vec(PrimitiveType::S8, {127, -128}), Vec(PrimitiveType::S8, {127, 127})}),
            "s32[] -127");
}

TEST(EvalOpsTest, ReduceWithCustomToApply) {
  // acc' = 2 * acc + x depends on the order: init first, then row-major.
  const char *text = R"(
HloModule m
f {
  acc = s32[] parameter(0)
  x = s32[] parameter(1)
  two = s32[] constant(2)
  m = s32[] multiply(acc, two)
  ROOT r = s32[] add(m, x)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = s32[2,3] parameter(0)
  init = s32[] constant(1)
  r0 = s32[3] reduce(a, init), dimensions={0}, to_apply=f
  r1 = s32[2] reduce(a, init), dimensions={1}, to_apply=f
  rall = s32[] reduce(a, init), dimensions={0,1}, to_apply=f
  fa = f32[2,3] convert(a)
  z = f32[] constant(0)
  fsum = f32[3] reduce(fa, z), dimensions={0}, to_apply=add
  ROOT t = (s32[3], s32[2], s32[], f32[3]) tuple(r0, r1, rall, fsum)
})";
  // r0[j] = 2*(2*1 + a0j) + a1j; r1[i] = ((2+ai0)*2+ai1)*2+ai2.
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::S32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
            "(s32[3]{0}, s32[2]{0}, s32[], f32[3]{0}) ({10, 13, 16}, {19, 40}, 184, {5, 7, 9})");
}

TEST(EvalOpsTest, VariadicReduceArgmax) {
  const char *text = R"(
HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  v = f32[] select(gt, v1, v0)
  i = s32[] select(gt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  a = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(a, idx, ninf, zero), dimensions={1}, to_apply=argmax
})";
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::F32, {2, 4}, {3, 9, 2, 9, -1, -5, -0.5, -7})}),
            "(f32[2]{0}, s32[2]{0}) ({9, -0.5}, {1, 2})");
}

TEST(EvalOpsTest, ReduceBf16RoundsEveryStep) {
  // to_apply returns bf16, so each partial sum is rounded: 1 + 2^-8 + 2^-8
  // stays 1 (ties to even twice) where an f32 accumulator would not.
  const char *text = R"(
HloModule m
add {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
ENTRY e {
  a = bf16[3] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(a, z), dimensions={0}, to_apply=add
})";
  double eps = std::ldexp(1.0, -8);
  EXPECT_EQ(Run1(text, {Vec(PrimitiveType::BF16, {1, eps, eps})}), "bf16[] 1");
}

TEST(EvalOpsTest, UnsupportedOpsAreErrorsNamingTheInstruction) {
  std::string err = RunError(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT f = c64[4] fft(a), fft_type=RFFT, fft_length={4}
})",
                             {{Vec(PrimitiveType::F32, {1, 2, 3, 4})}});
  EXPECT_NE(err.find("'f'"), std::string::npos) << err;
  EXPECT_NE(err.find("fft"), std::string::npos) << err;

  err = RunError(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="ShardingX"
})",
                 {{Vec(PrimitiveType::F32, {1, 2, 3, 4})}});
  EXPECT_EQ(err, "unsupported custom-call target 'ShardingX' in 'c'");

  // XLA's value-preserving markers run as identities, and only as identities.
  EXPECT_EQ(Run1(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = f32[4] custom-call(a), custom_call_target="Sharding", sharding={replicated}
  h = f32[4] custom-call(s), custom_call_target="MoveToHost"
  ROOT d = f32[4] custom-call(h), custom_call_target="MoveToDevice"
})",
                 {Vec(PrimitiveType::F32, {1, 2, 3, 4})}),
            "f32[4]{0} {1, 2, 3, 4}");
  err = RunError(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[2,2] custom-call(a), custom_call_target="SPMDFullToShardShape"
})",
                 {{Vec(PrimitiveType::F32, {1, 2, 3, 4})}});
  EXPECT_EQ(err, "custom-call 'c': custom-call target 'SPMDFullToShardShape' is a "
                 "value-preserving marker: it needs one operand of its result's shape");

  err = RunError(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT s = f32[4] shift-left(a, a)
})",
                 {{Vec(PrimitiveType::F32, {1, 2, 3, 4})}});
  EXPECT_EQ(err, "unsupported element type f32 in shift-left 's'");

  err = RunError(R"(
HloModule m
ENTRY e {
  ROOT c = f32[200] constant({...})
})");
  EXPECT_NE(err.find("elided"), std::string::npos) << err;
}

TEST(EvalOpsTest, ArgumentsAreChecked) {
  const char *text = "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n";
  EXPECT_EQ(RunError(text, {{Vec(PrimitiveType::F32, {1, 2, 3})}}),
            "device 0 parameter 0: expected f32[2], got f32[3]");
  EXPECT_EQ(RunError(text, {{}}), "device 0: expected 1 arguments, got 0");
}

TEST(EvalOpsTest, ValueSizeIsCapped) {
  EvalOptions options;
  options.max_elements_per_value = 100;
  std::string err = RunError(R"(
HloModule m
ENTRY e {
  z = f32[] constant(0)
  ROOT b = f32[1000] broadcast(z), dimensions={}
})",
                             {}, options);
  EXPECT_NE(err.find("exceeds the limit of 100 elements"), std::string::npos) << err;
}

TEST(EvalOpsTest, LongChainsFreeTheirValues) {
  // 200 chained adds of 4 KiB values: with values freed (or moved) after
  // their last use, only a handful are ever alive at once.
  std::string text = "HloModule m\nENTRY e {\n  v0 = f32[1024] parameter(0)\n";
  for (int i = 1; i <= 200; ++i)
    text += "  v" + std::to_string(i) + " = f32[1024] add(v" + std::to_string(i - 1) + ", v" +
            std::to_string(i - 1) + ")\n";
  text += "  ROOT r = f32[1024] negate(v200)\n}\n";
  std::vector<double> ones(1024, std::ldexp(1.0, -140));
  EvalStats stats;
  std::vector<std::vector<Literal>> args(1);
  args[0].push_back(Vec(PrimitiveType::F32, ones));
  std::vector<Literal> out = RunModule(text, std::move(args), &stats);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].GetAsDouble(1023), -std::ldexp(1.0, 60));
  EXPECT_EQ(stats.instructions_evaluated, 201);
  EXPECT_LE(stats.peak_live_bytes, 3 * 4096);
  EXPECT_EQ(stats.final_live_bytes, 0);
}

TEST(EvalOpsTest, GatherAndScatter) {
  const char *text = R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  a = s32[3,3] parameter(0)
  i = s32[3] parameter(1)
  g = s32[3,3] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  u = s32[3,3] constant({ {10, 20, 30}, {40, 50, 60}, {70, 80, 90} })
  s = s32[3,3] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (s32[3,3], s32[3,3]) tuple(g, s)
})";
  // Index 7 is clamped to the last row by gather and skipped by scatter;
  // the repeated index 1 accumulates both updates... here index 0 twice.
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::S32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                        Vec(PrimitiveType::S32, {2, 0, 7})}),
            "(s32[3,3]{1,0}, s32[3,3]{1,0}) ({ { 7, 8, 9 }, { 1, 2, 3 }, { 7, 8, 9 } }, "
            "{ { 41, 52, 63 }, { 4, 5, 6 }, { 17, 28, 39 } })");
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::S32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                        Vec(PrimitiveType::S32, {1, 1, -1})}),
            "(s32[3,3]{1,0}, s32[3,3]{1,0}) ({ { 4, 5, 6 }, { 4, 5, 6 }, { 1, 2, 3 } }, "
            "{ { 1, 2, 3 }, { 54, 75, 96 }, { 7, 8, 9 } })");
}

TEST(EvalOpsTest, SortIsStable) {
  const char *text = R"(
HloModule m
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
by_abs {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  x = s32[] abs(a)
  y = s32[] abs(b)
  ROOT r = pred[] compare(x, y), direction=GT
}
ENTRY e {
  k = s32[2,4] parameter(0)
  v = f32[2,4] parameter(1)
  s = (s32[2,4], f32[2,4]) sort(k, v), dimensions={1}, to_apply=lt
  a = s32[2,4] sort(k), dimensions={1}, to_apply=by_abs, is_stable=true
  ROOT t = ((s32[2,4], f32[2,4]), s32[2,4]) tuple(s, a)
})";
  EXPECT_EQ(Run1(text, {Array(PrimitiveType::S32, {2, 4}, {3, 1, 3, -2, 0, 5, -5, 0}),
                        Array(PrimitiveType::F32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})}),
            "((s32[2,4]{1,0}, f32[2,4]{1,0}), s32[2,4]{1,0}) (({ { -2, 1, 3, 3 }, { -5, 0, 0, 5 } }, "
            "{ { 3, 1, 0, 2 }, { 6, 4, 7, 5 } }), { { 3, 3, -2, 1 }, { 5, -5, 0, 0 } })");
}

TEST(EvalOpsTest, ReduceWindowAndSelectAndScatter) {
  const char *text = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[3] reduce-window(x, z), window={size=2}, to_apply=add
  p = f32[5] reduce-window(x, z), window={size=2 pad=1_1}, to_apply=add
  d = f32[2] reduce-window(x, z), window={size=2 stride=2 rhs_dilate=1}, to_apply=add
  src = f32[2] constant({10, 20})
  s = f32[4] select-and-scatter(x, src, z), window={size=2 stride=2}, select=ge, scatter=add
  ROOT t = (f32[3], f32[5], f32[2], f32[4]) tuple(r, p, d, s)
})";
  EXPECT_EQ(Run1(text, {Vec(PrimitiveType::F32, {1, 5, 2, 8})}),
            "(f32[3]{0}, f32[5]{0}, f32[2]{0}, f32[4]{0}) ({6, 7, 10}, {1, 6, 7, 10, 8}, "
            "{6, 10}, {0, 10, 0, 20})");
}

TEST(EvalOpsTest, MapMulhiCopyStartDimensionSize) {
  const char *text = R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  m = s32[] maximum(a, b)
  one = s32[] constant(1)
  ROOT r = s32[] add(m, one)
}
ENTRY e {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  mp = s32[3] map(a, b), dimensions={0}, to_apply=f
  mh = s32[3] mulhi(a, b)
  cs = (s32[3], s32[3], u32[]) copy-start(a)
  cd = s32[3] copy-done(cs)
  ds = s32[] get-dimension-size(a), dimensions={0}
  ROOT t = (s32[3], s32[3], s32[3], s32[]) tuple(mp, mh, cd, ds)
})";
  EXPECT_EQ(Run1(text, {Vec(PrimitiveType::S32, {1073741824, -1, 7}),
                        Vec(PrimitiveType::S32, {4, 1, -9})}),
            "(s32[3]{0}, s32[3]{0}, s32[3]{0}, s32[]) ({1073741825, 2, 8}, {1, -1, -1}, "
            "{1073741824, -1, 7}, 3)");
}

TEST(EvalOpsTest, UnverifiedResultShapesAreRefusedNotRead) {
  // HloEvalFuzzer findings 2 and 4 (docs/robustness.md), as hlo-run
  // --no-verify runs them: the interpreter refuses, naming the instruction,
  // instead of reading past a buffer.
  EXPECT_EQ(RunError(R"(
HloModule m
ENTRY e {
  v = f32[] parameter(0)
  ROOT dom = f64[] domain(v), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
})",
                     {{Literal::CreateR0FromDouble(PrimitiveType::F32, 1)}}),
            "domain 'dom': result f64[] must have the shape of operand 0 f32[], which it passes "
            "through");
  EXPECT_EQ(RunError(R"(
HloModule m
ENTRY e {
  v = f32[] parameter(0)
  t = token[] after-all()
  ROOT d = f64[] add-dependency(v, t)
})",
                     {{Literal::CreateR0FromDouble(PrimitiveType::F32, 1)}}),
            "add-dependency 'd': result f64[] must have the shape of operand 0 f32[], which it "
            "passes through");
  EXPECT_EQ(RunError(R"(
HloModule m
ENTRY e {
  a = s32[1,3] parameter(0)
  i = s32[7,4] parameter(1)
  ROOT g = s32[7,3,5] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,3}
})",
                     {{Literal(Shape(PrimitiveType::S32, {1, 3})),
                       Literal(Shape(PrimitiveType::S32, {7, 4}))}}),
            "gather 'g': result s32[7,3,5] must be s32[7,3,4] for operand s32[1,3] and start "
            "indices s32[7,4]");
  // The shape XLA gives runs.
  EXPECT_EQ(RunError(R"(
HloModule m
ENTRY e {
  a = s32[1,3] parameter(0)
  i = s32[7,4] parameter(1)
  ROOT g = s32[7,3,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,3}
})",
                     {{Literal(Shape(PrimitiveType::S32, {1, 3})),
                       Literal(Shape(PrimitiveType::S32, {7, 4}))}}),
            "");
}

} // namespace
