//===- EvalDotKernelTest.cpp - The packed dot kernel against a plain loop --===//
//
// ComputeDot (lib/hlo/eval/DotKernel.h) must give, bit for bit, what the
// documented summation order gives (docs/interpreter.md, "dot"): each result
// element starts from +0 in the accumulation type and adds its products one
// at a time in increasing contracting order, the product rounded before the
// add; when both factors are NaN the rhs's NaN propagates, when the
// accumulator and the product are both NaN the accumulator's. The reference
// below is that loop, written without the kernel's packing or tiling; every
// instruction set the CPU supports is checked on many shapes (tile tails,
// several k blocks, batch dimensions, permuted dimension orders) and types,
// with NaN, inf, subnormal and signed-zero inputs.
//
//===----------------------------------------------------------------------===//

#include "../../lib/hlo/eval/DotKernel.h"

#include "EvalTestUtil.h"
#include "loom/support/FloatFormats.h"

#include <cmath>
#include <cstring>
#include <random>

namespace loom::hlo {
namespace {

using evaltest::RunModule;

struct DotCase {
  std::vector<int64_t> lhs_dims, rhs_dims;
  DotDimensionNumbers dnums;
};

/// Free dimensions of an operand: the ones neither batch nor contracting.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t> &batch,
                              const std::vector<int64_t> &contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end())
      free.push_back(d);
  return free;
}

int64_t Product(const std::vector<int64_t> &dims, const std::vector<int64_t> &which) {
  int64_t p = 1;
  for (int64_t d : which)
    p *= dims[d];
  return p;
}

/// Writes the row-major decomposition of `flat` over `which` dimensions
/// into `index`.
void Decompose(int64_t flat, const std::vector<int64_t> &dims, const std::vector<int64_t> &which,
               std::vector<int64_t> &index) {
  for (size_t w = which.size(); w-- > 0;) {
    index[which[w]] = flat % dims[which[w]];
    flat /= dims[which[w]];
  }
}

int64_t Linear(const std::vector<int64_t> &dims, const std::vector<int64_t> &index) {
  int64_t l = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    l = l * dims[d] + index[d];
  return l;
}

template <typename F> F QuietNaN(F x) {
  if constexpr (sizeof(F) == 4) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u |= 0x00400000u;
    std::memcpy(&x, &u, 4);
  } else {
    uint64_t u;
    std::memcpy(&u, &x, 8);
    u |= uint64_t{1} << 51;
    std::memcpy(&x, &u, 8);
  }
  return x;
}

/// One step of the documented order with its NaN rule spelled out.
template <typename F> F Step(F acc, F lhs, F rhs) {
  volatile F product; // rounded on its own: never fused with the add
  if (std::isnan(rhs))
    product = QuietNaN(rhs);
  else if (std::isnan(lhs))
    product = QuietNaN(lhs);
  else
    product = rhs * lhs;
  const F t = product;
  if (std::isnan(acc))
    return QuietNaN(acc);
  if (std::isnan(t))
    return QuietNaN(t);
  return acc + t;
}

/// An element as the accumulation type: floats exactly, integers as their
/// 64-bit two's-complement value.
template <typename Acc> Acc ElementAs(const Literal &lit, int64_t i) {
  if constexpr (std::is_integral_v<Acc>) {
    return IsUnsignedIntegralType(lit.element_type()) ? static_cast<Acc>(lit.GetAsUint64(i))
                                                      : static_cast<Acc>(lit.GetAsInt64(i));
  } else {
    switch (lit.element_type()) {
    case PrimitiveType::F32: return static_cast<Acc>(lit.data<float>()[i]);
    case PrimitiveType::BF16: return static_cast<Acc>(bf16ToF32(lit.data<uint16_t>()[i]));
    case PrimitiveType::F16: return static_cast<Acc>(f16ToF32(lit.data<uint16_t>()[i]));
    case PrimitiveType::F64: return static_cast<Acc>(lit.data<double>()[i]);
    default: ADD_FAILURE() << "type not covered"; return Acc{};
    }
  }
}

template <typename Acc> void StoreAs(Literal &out, int64_t i, Acc acc) {
  switch (out.element_type()) {
  case PrimitiveType::F32: out.data<float>()[i] = static_cast<float>(acc); return;
  case PrimitiveType::F64: out.data<double>()[i] = static_cast<double>(acc); return;
  case PrimitiveType::BF16: out.data<uint16_t>()[i] = f32ToBF16(static_cast<float>(acc)); return;
  case PrimitiveType::F16: out.data<uint16_t>()[i] = f32ToF16(static_cast<float>(acc)); return;
  default:
    if constexpr (std::is_integral_v<Acc>)
      out.SetFromInt64(i, static_cast<int64_t>(acc)); // wraps to the width
    return;
  }
}

Shape ResultShape(const DotCase &c, PrimitiveType type) {
  const auto &dn = c.dnums;
  std::vector<int64_t> dims;
  for (int64_t d : dn.lhs_batch_dimensions)
    dims.push_back(c.lhs_dims[d]);
  for (int64_t d : FreeDims(c.lhs_dims.size(), dn.lhs_batch_dimensions,
                            dn.lhs_contracting_dimensions))
    dims.push_back(c.lhs_dims[d]);
  for (int64_t d : FreeDims(c.rhs_dims.size(), dn.rhs_batch_dimensions,
                            dn.rhs_contracting_dimensions))
    dims.push_back(c.rhs_dims[d]);
  return Shape(type, dims);
}

template <typename Acc>
Literal ReferenceDot(const Literal &lhs, const Literal &rhs, const DotCase &c, const Shape &shape) {
  const auto &dn = c.dnums;
  const auto lfree = FreeDims(c.lhs_dims.size(), dn.lhs_batch_dimensions,
                              dn.lhs_contracting_dimensions);
  const auto rfree = FreeDims(c.rhs_dims.size(), dn.rhs_batch_dimensions,
                              dn.rhs_contracting_dimensions);
  const int64_t batch = Product(c.lhs_dims, dn.lhs_batch_dimensions);
  const int64_t m = Product(c.lhs_dims, lfree), n = Product(c.rhs_dims, rfree);
  const int64_t k = Product(c.lhs_dims, dn.lhs_contracting_dimensions);
  Literal out(shape);
  std::vector<int64_t> li(c.lhs_dims.size()), ri(c.rhs_dims.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Decompose(b, c.lhs_dims, dn.lhs_batch_dimensions, li);
        Decompose(b, c.rhs_dims, dn.rhs_batch_dimensions, ri);
        Decompose(i, c.lhs_dims, lfree, li);
        Decompose(j, c.rhs_dims, rfree, ri);
        Acc acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          Decompose(p, c.lhs_dims, dn.lhs_contracting_dimensions, li);
          Decompose(p, c.rhs_dims, dn.rhs_contracting_dimensions, ri);
          const Acc x = ElementAs<Acc>(lhs, Linear(c.lhs_dims, li));
          const Acc y = ElementAs<Acc>(rhs, Linear(c.rhs_dims, ri));
          if constexpr (std::is_integral_v<Acc>)
            acc = acc + y * x; // uint64_t: wraps
          else
            acc = Step(acc, x, y);
        }
        StoreAs(out, (b * m + i) * n + j, acc);
      }
  return out;
}

/// Random values with a share of specials: NaNs of both signs and several
/// payloads, infinities, subnormals, signed zeros and huge values.
float RandomFloat(std::mt19937_64 &rng, bool specials) {
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  if (!specials || rng() % 8 != 0)
    return uniform(rng);
  uint32_t bits = 0;
  switch (rng() % 7) {
  case 0: bits = 0x7fc00000u | static_cast<uint32_t>(rng() % 0x400000u); break; // quiet NaN
  case 1: bits = 0x7f800001u + static_cast<uint32_t>(rng() % 0x3fffffu); break; // signalling
  case 2: bits = 0x7f800000u; break;                                           // inf
  case 3: bits = static_cast<uint32_t>(rng() % 0x800000u); break;              // subnormal
  case 4: bits = 0; break;
  case 5: bits = 0x7e000000u + static_cast<uint32_t>(rng() % 0x800000u); break; // ~2^125
  default: bits = 0x00800000u + static_cast<uint32_t>(rng() % 0x800000u); break; // tiny normal
  }
  bits |= static_cast<uint32_t>(rng() & 1) << 31;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Literal RandomLiteral(PrimitiveType type, const std::vector<int64_t> &dims, std::mt19937_64 &rng,
                      bool specials) {
  Literal lit{Shape(type, dims)};
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    const float f = RandomFloat(rng, specials);
    switch (type) {
    case PrimitiveType::F32: lit.data<float>()[i] = f; break;
    case PrimitiveType::BF16: lit.data<uint16_t>()[i] = f32ToBF16(f); break;
    case PrimitiveType::F16: lit.data<uint16_t>()[i] = f32ToF16(f); break;
    case PrimitiveType::F64:
      // Doubles of their own (not widened floats), specials included.
      lit.data<double>()[i] =
          std::isfinite(f) ? static_cast<double>(f) * (1.0 + std::ldexp(double(rng() % 997), -40))
                           : static_cast<double>(f);
      break;
    default: lit.SetFromInt64(i, static_cast<int64_t>(rng())); break; // wraps to the width
    }
  }
  return lit;
}

std::string ScalarString(const Literal &lit, int64_t i) {
  Literal one{Shape(lit.element_type(), {1})};
  const int64_t width = lit.size_bytes() / lit.element_count();
  std::memcpy(one.raw_data(), lit.raw_data() + i * width, width);
  return one.ValuesToString();
}

void ExpectBitEqual(const Literal &got, const Literal &want, const std::string &what) {
  ASSERT_EQ(got.shape().dimensions(), want.shape().dimensions()) << what;
  ASSERT_EQ(got.size_bytes(), want.size_bytes()) << what;
  const int64_t width = got.element_count() ? got.size_bytes() / got.element_count() : 1;
  for (int64_t i = 0; i < got.element_count(); ++i)
    if (std::memcmp(got.raw_data() + i * width, want.raw_data() + i * width, width) != 0) {
      ADD_FAILURE() << what << ": element " << i << " is " << ScalarString(got, i)
                    << ", the summation order gives " << ScalarString(want, i);
      return;
    }
}

/// `[m,k] x [k,n]`, contracting lhs 1 with rhs 0.
DotCase MatMul(int64_t m, int64_t k, int64_t n) {
  DotCase c{{m, k}, {k, n}, {}};
  c.dnums.lhs_contracting_dimensions = {1};
  c.dnums.rhs_contracting_dimensions = {0};
  return c;
}

void CheckCase(const DotCase &c, PrimitiveType lhs_type, PrimitiveType rhs_type,
               PrimitiveType out_type, bool specials, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Literal lhs = RandomLiteral(lhs_type, c.lhs_dims, rng, specials);
  const Literal rhs = RandomLiteral(rhs_type, c.rhs_dims, rng, specials);
  const Shape shape = ResultShape(c, out_type);
  const bool f64 = lhs_type == PrimitiveType::F64 || rhs_type == PrimitiveType::F64 ||
                   out_type == PrimitiveType::F64;
  Literal want = !IsFloatingPointType(out_type) ? ReferenceDot<uint64_t>(lhs, rhs, c, shape)
                 : f64                          ? ReferenceDot<double>(lhs, rhs, c, shape)
                                                : ReferenceDot<float>(lhs, rhs, c, shape);
  for (DotIsa isa : SupportedDotIsas()) {
    const Literal got = ComputeDot(lhs, rhs, c.dnums, shape, isa);
    ExpectBitEqual(got, want,
                   std::string(DotIsaName(isa)) + " " + lhs.shape().ToString() + " x " +
                       rhs.shape().ToString() + " -> " + shape.ToString());
  }
}

TEST(EvalDotKernel, MatMulShapesF32) {
  // Tile tails (MR 4/6, NR 8/16/64), several lhs blocks (96 rows) and k
  // blocks (256), vectors and k = 0.
  const int64_t sizes[][3] = {{1, 1, 1},    {1, 7, 1},    {1, 300, 65},  {70, 300, 1},
                              {2, 3, 4},    {7, 9, 17},   {6, 16, 64},   {9, 17, 33},
                              {15, 1, 31},  {33, 64, 47}, {129, 5, 100}, {31, 513, 35},
                              {4, 0, 5},    {0, 3, 4},    {3, 4, 0},     {130, 257, 66},
                              {97, 40, 63}, {193, 3, 129}, {12, 260, 128}, {5, 20, 200},
                              {2, 5000, 3}};
  uint64_t seed = 1;
  for (const auto &s : sizes) {
    CheckCase(MatMul(s[0], s[1], s[2]), PrimitiveType::F32, PrimitiveType::F32,
              PrimitiveType::F32, false, seed++);
    CheckCase(MatMul(s[0], s[1], s[2]), PrimitiveType::F32, PrimitiveType::F32,
              PrimitiveType::F32, true, seed++);
  }
}

TEST(EvalDotKernel, SpecialsDecideWhichNaN) {
  // Mostly specials: NaN meets NaN in products and in sums, inf * 0 and
  // inf - inf give the default NaN, subnormal products.
  for (uint64_t seed = 100; seed < 110; ++seed) {
    CheckCase(MatMul(9, 40, 37), PrimitiveType::F32, PrimitiveType::F32, PrimitiveType::F32,
              true, seed);
    CheckCase(MatMul(9, 40, 37), PrimitiveType::F64, PrimitiveType::F64, PrimitiveType::F64,
              true, seed);
  }
  // Both factors NaN: the rhs's payload; accumulator NaN: it stays.
  Literal lhs{Shape(PrimitiveType::F32, {1, 2})}, rhs{Shape(PrimitiveType::F32, {2, 1})};
  const uint32_t l[2] = {0x7fc00001u, 0x7fc00005u}, r[2] = {0x7fc00002u, 0xffc00006u};
  std::memcpy(lhs.raw_data(), l, 8);
  std::memcpy(rhs.raw_data(), r, 8);
  const DotCase c = MatMul(1, 2, 1);
  for (DotIsa isa : SupportedDotIsas()) {
    Literal got = ComputeDot(lhs, rhs, c.dnums, Shape(PrimitiveType::F32, {1, 1}), isa);
    uint32_t bits;
    std::memcpy(&bits, got.raw_data(), 4);
    EXPECT_EQ(bits, 0x7fc00002u) << DotIsaName(isa);
  }
}

TEST(EvalDotKernel, NarrowFloatTypes) {
  // bf16 / f16 operands accumulate in f32 and round once into the result.
  const PrimitiveType types[] = {PrimitiveType::BF16, PrimitiveType::F16};
  uint64_t seed = 200;
  for (PrimitiveType t : types)
    for (const DotCase &c : {MatMul(17, 300, 40), MatMul(1, 5, 33), MatMul(8, 1, 32)}) {
      CheckCase(c, t, t, t, false, seed++);
      CheckCase(c, t, t, t, true, seed++);
      CheckCase(c, t, t, PrimitiveType::F32, false, seed++);
    }
  CheckCase(MatMul(11, 70, 19), PrimitiveType::BF16, PrimitiveType::F32, PrimitiveType::F32,
            true, seed++);
  CheckCase(MatMul(11, 70, 19), PrimitiveType::F16, PrimitiveType::BF16, PrimitiveType::BF16,
            false, seed++);
}

TEST(EvalDotKernel, F64Accumulation) {
  // Any f64 operand or result accumulates in f64.
  CheckCase(MatMul(13, 280, 21), PrimitiveType::F64, PrimitiveType::F64, PrimitiveType::F64,
            false, 300);
  CheckCase(MatMul(13, 28, 21), PrimitiveType::F32, PrimitiveType::F64, PrimitiveType::F64,
            true, 301);
  CheckCase(MatMul(13, 28, 21), PrimitiveType::F64, PrimitiveType::F64, PrimitiveType::F32,
            false, 302);
}

TEST(EvalDotKernel, Integers) {
  // 64-bit wrapping accumulation, wrapped again into the result's width.
  CheckCase(MatMul(9, 33, 10), PrimitiveType::S8, PrimitiveType::S8, PrimitiveType::S32, false,
            400);
  CheckCase(MatMul(9, 33, 10), PrimitiveType::S32, PrimitiveType::S32, PrimitiveType::S32, false,
            401);
  CheckCase(MatMul(5, 300, 7), PrimitiveType::S64, PrimitiveType::S64, PrimitiveType::S64, false,
            402);
  CheckCase(MatMul(5, 30, 7), PrimitiveType::U8, PrimitiveType::U8, PrimitiveType::U32, false,
            403);
  CheckCase(MatMul(5, 30, 7), PrimitiveType::U64, PrimitiveType::U64, PrimitiveType::U64, false,
            404);
  CheckCase(MatMul(3, 0, 7), PrimitiveType::S16, PrimitiveType::S16, PrimitiveType::S16, false,
            405);
}

TEST(EvalDotKernel, BatchAndPermutedDimensions) {
  uint64_t seed = 500;
  // [b, m, k] x [b, k, n].
  DotCase a{{3, 10, 20}, {3, 20, 9}, {}};
  a.dnums = {{0}, {0}, {2}, {1}};
  // Batch in the middle, contracting first: [k, b, m] x [n, b, k].
  DotCase b{{33, 2, 17}, {40, 2, 33}, {}};
  b.dnums = {{1}, {1}, {0}, {2}};
  // Two contracting dimensions in opposite orders and two free ones:
  // lhs [m1, k1, m2, k2], rhs [k2, n, k1]; pairs (1,2) and (3,0).
  DotCase c{{3, 5, 4, 7}, {7, 19, 5}, {}};
  c.dnums = {{}, {}, {1, 3}, {2, 0}};
  // Two batch dimensions listed out of order: lhs [b1, m, b0, k],
  // rhs [b0, k, b1, n] with batch pairs (2,0) and (0,2).
  DotCase d{{2, 6, 3, 11}, {3, 11, 2, 13}, {}};
  d.dnums = {{2, 0}, {0, 2}, {3}, {1}};
  // No free dimensions (a batched inner product) and no contracting ones
  // (an outer product).
  DotCase e{{4, 50}, {4, 50}, {}};
  e.dnums = {{0}, {0}, {1}, {1}};
  DotCase f{{9}, {35}, {}};
  for (const DotCase *dc : {&a, &b, &c, &d, &e, &f})
    for (PrimitiveType t : {PrimitiveType::F32, PrimitiveType::BF16, PrimitiveType::F64,
                            PrimitiveType::S32}) {
      CheckCase(*dc, t, t, t, t != PrimitiveType::S32, seed++);
    }
}

TEST(EvalDotKernel, RandomShapes) {
  std::mt19937_64 rng(600);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t m = 1 + rng() % 45, k = rng() % 300, n = 1 + rng() % 70;
    const PrimitiveType t = trial % 3 == 0 ? PrimitiveType::BF16 : PrimitiveType::F32;
    CheckCase(MatMul(m, k, n), t, t, t, trial % 2 == 0, 700 + trial);
  }
}

TEST(EvalDotKernel, ThroughTheInterpreter) {
  // The evaluator's dot is ComputeDot with the CPU's widest kernel; bf16
  // operands, permuted dimensions and a batch dimension.
  const std::string text = R"(
HloModule m
ENTRY e {
  a = bf16[40,3,70] parameter(0)
  b = bf16[3,33,40] parameter(1)
  ROOT d = f32[3,70,33] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_contracting_dims={2}
})";
  std::mt19937_64 rng(800);
  Literal a = RandomLiteral(PrimitiveType::BF16, {40, 3, 70}, rng, true);
  Literal b = RandomLiteral(PrimitiveType::BF16, {3, 33, 40}, rng, true);
  DotCase c{{40, 3, 70}, {3, 33, 40}, {}};
  c.dnums = {{1}, {0}, {0}, {2}};
  const Literal want =
      ReferenceDot<float>(a, b, c, Shape(PrimitiveType::F32, {3, 70, 33}));
  std::vector<Literal> results = RunModule(text, {{std::move(a), std::move(b)}});
  ASSERT_EQ(results.size(), 1u);
  ExpectBitEqual(results[0], want, "hlo dot");
}

} // namespace
} // namespace loom::hlo
