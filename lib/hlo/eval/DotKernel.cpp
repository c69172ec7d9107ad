//===- DotKernel.cpp - The interpreter's dot: packed, register-tiled ------===//
//
// Per batch index and block of kBlockK contracting indices, the rhs is
// packed once into panels of NR result columns ([kc][NR], converted to the
// accumulation type), the lhs in blocks of kBlockM rows into panels of MR
// rows ([kc][MR]). A micro-kernel keeps an MR x NR tile of the result in
// registers and runs over the block's contracting indices in increasing
// order, then stores the tile (in the accumulation type) and picks it up
// again for the next block. The order of every element's sum is therefore
// the scalar loop's; only independent result columns share a vector.
//
// Each step is `acc = acc + (rhs * lhs)`: the product rounded, then the
// sum, never fused. The x86 kernels spell the instructions out (inline
// assembly), so neither the compiler's FMA contraction nor its operand
// commutation applies: when both factors are NaN the rhs's NaN propagates
// (quieted), when the accumulator and the product are both NaN the
// accumulator's, as in the scalar code (docs/interpreter.md, "dot").
//
//===----------------------------------------------------------------------===//

#include "DotKernel.h"
#include "ElementTypes.h"

#include "loom/support/FloatFormats.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

#if defined(__GNUC__) && defined(__x86_64__)
#define LOOM_DOT_X86 1
#include <immintrin.h>
#endif

namespace loom::hlo {
namespace {

/// Contracting indices a result tile accumulates before it is stored.
constexpr int64_t kBlockK = 256;
/// Lhs rows packed at once (a multiple of every MR below).
constexpr int64_t kBlockM = 96;

/// c[r * ldc + j] (r < MR, j < NR) = (load_c ? c : +0) + the products of
/// a[p * MR + r] and b[p * NR + j] for p = 0, 1, ..., kc - 1, in that order.
template <typename Acc>
using MicroKernel = void (*)(int64_t kc, const Acc *a, const Acc *b, Acc *c, int64_t ldc,
                             bool load_c);

// ---- Portable micro-kernel (every type, every target) ------------------------

#if defined(__GNUC__) && !defined(__clang__)
// GCC contracts a * b + c into an FMA by default where the target has one.
#define LOOM_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define LOOM_NO_FP_CONTRACT
#endif

template <typename Acc, int MR, int NR>
LOOM_NO_FP_CONTRACT void MicroPortable(int64_t kc, const Acc *a, const Acc *b, Acc *c,
                                       int64_t ldc, bool load_c) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  Acc acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j)
      acc[r][j] = load_c ? c[r * ldc + j] : Acc{};
  for (int64_t p = 0; p < kc; ++p) {
    const Acc *ap = a + p * MR;
    const Acc *bp = b + p * NR;
    for (int r = 0; r < MR; ++r) {
      const Acc x = ap[r];
      for (int j = 0; j < NR; ++j) {
        const Acc t = bp[j] * x; // integers: uint64_t, wrapping
        acc[r][j] = acc[r][j] + t;
      }
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j)
      c[r * ldc + j] = acc[r][j];
}

// ---- x86 micro-kernels ---------------------------------------------------------

#ifdef LOOM_DOT_X86
// The tile must live in registers: every loop over it is unrolled.
#define LOOM_UNROLL _Pragma("GCC unroll 16")
#define LOOM_DOT_TARGET_KERNELS(NS, TARGET, MULADD_PS, MULADD_PD, VEC_F, VEC_D,              \
                                LOADU_PS, LOADU_PD, STOREU_PS, STOREU_PD, SET1_PS,       \
                                SET1_PD)                                                 \
  namespace NS {                                                                         \
  __attribute__((target(TARGET), always_inline)) inline VEC_F Load(const float *p) {    \
    return LOADU_PS(p);                                                                  \
  }                                                                                      \
  __attribute__((target(TARGET), always_inline)) inline VEC_D Load(const double *p) {   \
    return LOADU_PD(p);                                                                  \
  }                                                                                      \
  __attribute__((target(TARGET), always_inline)) inline void Store(float *p, VEC_F v) { \
    STOREU_PS(p, v);                                                                     \
  }                                                                                      \
  __attribute__((target(TARGET), always_inline)) inline void Store(double *p, VEC_D v) {\
    STOREU_PD(p, v);                                                                     \
  }                                                                                      \
  __attribute__((target(TARGET), always_inline)) inline VEC_F Splat(float x) {          \
    return SET1_PS(x);                                                                   \
  }                                                                                      \
  __attribute__((target(TARGET), always_inline)) inline VEC_D Splat(double x) {         \
    return SET1_PD(x);                                                                   \
  }                                                                                      \
  /* acc = acc + (b * a), rounded twice; b and acc are the first operands. */           \
  __attribute__((target(TARGET), always_inline)) inline void MulAdd(VEC_F &acc, VEC_F b, \
                                                                    VEC_F a) {           \
    VEC_F t;                                                                             \
    asm(MULADD_PS                                                                       \
        : [acc] "+v"(acc), [t] "=&v"(t)                                                  \
        : [a] "v"(a), [b] "v"(b));                                                       \
  }                                                                                      \
  __attribute__((target(TARGET), always_inline)) inline void MulAdd(VEC_D &acc, VEC_D b, \
                                                                    VEC_D a) {           \
    VEC_D t;                                                                             \
    asm(MULADD_PD                                                                       \
        : [acc] "+v"(acc), [t] "=&v"(t)                                                  \
        : [a] "v"(a), [b] "v"(b));                                                       \
  }                                                                                      \
  template <typename S, int MR, int NV>                                                  \
  __attribute__((target(TARGET))) void Micro(int64_t kc, const S *a, const S *b, S *c,  \
                                             int64_t ldc, bool load_c) {                 \
    using V = decltype(Load(b));                                                         \
    constexpr int kWidth = static_cast<int>(sizeof(V) / sizeof(S));                      \
    constexpr int kNR = NV * kWidth;                                                     \
    V acc[MR][NV];                                                                       \
    LOOM_UNROLL for (int r = 0; r < MR; ++r)                                             \
      LOOM_UNROLL for (int v = 0; v < NV; ++v)                                           \
        acc[r][v] = load_c ? Load(c + r * ldc + v * kWidth) : Splat(S(0));               \
    for (int64_t p = 0; p < kc; ++p) {                                                   \
      V bv[NV];                                                                          \
      LOOM_UNROLL for (int v = 0; v < NV; ++v)                                           \
        bv[v] = Load(b + p * kNR + v * kWidth);                                          \
      LOOM_UNROLL for (int r = 0; r < MR; ++r) {                                         \
        const V x = Splat(a[p * MR + r]);                                                \
        LOOM_UNROLL for (int v = 0; v < NV; ++v)                                         \
          MulAdd(acc[r][v], bv[v], x);                                                   \
      }                                                                                  \
    }                                                                                    \
    LOOM_UNROLL for (int r = 0; r < MR; ++r)                                             \
      LOOM_UNROLL for (int v = 0; v < NV; ++v)                                           \
        Store(c + r * ldc + v * kWidth, acc[r][v]);                                      \
  }                                                                                      \
  }

// Three-operand VEX / EVEX forms: t = b * a, acc = acc + t (AT&T order is
// src2, src1, dst; the first source is the NaN that propagates).
#define LOOM_VEX_MULADD(MUL, ADD)                                                        \
  MUL " {%[a], %[b], %[t]|%[t], %[b], %[a]}\n\t" ADD                                     \
      " {%[t], %[acc], %[acc]|%[acc], %[acc], %[t]}"
// SSE2 two-operand forms: t = b; t = t * a; acc = acc + t.
#define LOOM_SSE_MULADD(MOV, MUL, ADD)                                                   \
  MOV " {%[b], %[t]|%[t], %[b]}\n\t" MUL " {%[a], %[t]|%[t], %[a]}\n\t" ADD                \
      " {%[t], %[acc]|%[acc], %[t]}"
LOOM_DOT_TARGET_KERNELS(avx512, "avx512f", LOOM_VEX_MULADD("vmulps", "vaddps"),
                        LOOM_VEX_MULADD("vmulpd", "vaddpd"), __m512, __m512d, _mm512_loadu_ps,
                        _mm512_loadu_pd, _mm512_storeu_ps, _mm512_storeu_pd, _mm512_set1_ps,
                        _mm512_set1_pd)
LOOM_DOT_TARGET_KERNELS(avx2, "avx2", LOOM_VEX_MULADD("vmulps", "vaddps"),
                        LOOM_VEX_MULADD("vmulpd", "vaddpd"), __m256, __m256d, _mm256_loadu_ps,
                        _mm256_loadu_pd, _mm256_storeu_ps, _mm256_storeu_pd, _mm256_set1_ps,
                        _mm256_set1_pd)
LOOM_DOT_TARGET_KERNELS(sse2, "sse2", LOOM_SSE_MULADD("movaps", "mulps", "addps"),
                        LOOM_SSE_MULADD("movapd", "mulpd", "addpd"), __m128, __m128d,
                        _mm_loadu_ps, _mm_loadu_pd, _mm_storeu_ps, _mm_storeu_pd, _mm_set1_ps,
                        _mm_set1_pd)
#undef LOOM_VEX_MULADD
#undef LOOM_SSE_MULADD
#undef LOOM_DOT_TARGET_KERNELS
#undef LOOM_UNROLL
#endif

// ---- Operand layout and packing ------------------------------------------------

/// Element offsets into one operand of every batch, free and contracting
/// index (each group row-major over its dimensions in order).
struct OperandLayout {
  std::vector<int64_t> batch, free, contracting;
};

/// Offsets of the row-major walk over `dims` of `shape` (strides of its
/// row-major storage).
std::vector<int64_t> IndexOffsets(const Shape &shape, llvm::ArrayRef<int64_t> dims) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int64_t d = shape.rank() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape.dimensions(d + 1);
  std::vector<int64_t> offsets{0};
  for (int64_t d : dims) {
    const int64_t size = shape.dimensions(d);
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(std::max<int64_t>(size, 0)));
    for (int64_t o : offsets)
      for (int64_t x = 0; x < size; ++x)
        next.push_back(o + x * strides[d]);
    offsets = std::move(next);
  }
  return offsets;
}

OperandLayout LayoutOf(const Shape &shape, const std::vector<int64_t> &batch_dims,
                       const std::vector<int64_t> &contracting_dims) {
  std::vector<bool> used(shape.rank(), false);
  for (int64_t d : batch_dims)
    used[d] = true;
  for (int64_t d : contracting_dims)
    used[d] = true;
  std::vector<int64_t> free_dims;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (!used[d])
      free_dims.push_back(d);
  return {IndexOffsets(shape, batch_dims), IndexOffsets(shape, free_dims),
          IndexOffsets(shape, contracting_dims)};
}

/// Packs `rows` free indices of an operand (offsets `row_offsets`, batch
/// offset `base`) over the contracting indices `k_offsets` into panels of R
/// rows, converted to the accumulation type: element (q * R + r, p) goes to
/// dst[q * R * k + p * R + r] (k = k_offsets.size()). Rows past `rows` are
/// zero.
template <typename AccTraits, typename Acc>
void PackPanels(const Literal &lit, int64_t base, const int64_t *row_offsets, int64_t rows,
                llvm::ArrayRef<int64_t> k_offsets, int R, Acc *dst) {
  const int64_t k = static_cast<int64_t>(k_offsets.size());
  DispatchElementType(
      lit.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        if constexpr (T::kKind != ElementKind::kComplex) {
          const auto *src = lit.data<typename T::Storage>() + base;
          auto load = [&](int64_t offset) {
            // bf16 / f16 widen exactly; the inline conversions are the ones
            // ElementTraits calls (include/loom/support/FloatFormats.h).
            constexpr bool kFloatAcc = AccTraits::kKind == ElementKind::kFloat;
            if constexpr (kFloatAcc && T::kPrimitiveType == PrimitiveType::BF16)
              return static_cast<Acc>(loom::bf16ToF32(src[offset]));
            else if constexpr (kFloatAcc && T::kPrimitiveType == PrimitiveType::F16)
              return static_cast<Acc>(loom::f16ToF32(src[offset]));
            else
              return static_cast<Acc>(ConvertElement<T, AccTraits>(src[offset]));
          };
          // Read along whichever of the two index groups is contiguous.
          const bool k_contiguous = k > 1 && k_offsets[1] - k_offsets[0] == 1;
          for (int64_t q = 0; q * R < rows; ++q) {
            Acc *panel = dst + q * R * k;
            const int live = static_cast<int>(std::min<int64_t>(R, rows - q * R));
            const int64_t *offsets = row_offsets + q * R;
            if (k_contiguous) {
              for (int r = 0; r < live; ++r)
                for (int64_t p = 0; p < k; ++p)
                  panel[p * R + r] = load(offsets[r] + k_offsets[p]);
            } else {
              for (int64_t p = 0; p < k; ++p)
                for (int r = 0; r < live; ++r)
                  panel[p * R + r] = load(offsets[r] + k_offsets[p]);
            }
            for (int r = live; r < R; ++r)
              for (int64_t p = 0; p < k; ++p)
                panel[p * R + r] = Acc{};
          }
        }
      },
      [] {});
}

/// Rounds / wraps `rows` x `n` accumulators into the result (row-major from
/// element `first`).
template <typename AccTraits, typename Acc>
void StoreResult(const Acc *acc, int64_t count, Literal &out, int64_t first) {
  DispatchElementType(
      out.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        if constexpr (T::kKind != ElementKind::kComplex) {
          auto *dst = out.data<typename T::Storage>() + first;
          for (int64_t i = 0; i < count; ++i)
            dst[i] = ConvertElement<AccTraits, T>(static_cast<typename AccTraits::Storage>(acc[i]));
        }
      },
      [] {});
}

template <typename AccTraits, typename Acc, int MR, int NR>
void RunBlocked(const Literal &lhs, const OperandLayout &ll, const Literal &rhs,
                const OperandLayout &rl, Literal &out, MicroKernel<Acc> micro) {
  static_assert(kBlockM % MR == 0, "lhs blocks are whole panels");
  const int64_t batch = static_cast<int64_t>(ll.batch.size());
  const int64_t m = static_cast<int64_t>(ll.free.size());
  const int64_t n = static_cast<int64_t>(rl.free.size());
  const int64_t k = static_cast<int64_t>(ll.contracting.size());
  if (batch == 0 || m == 0 || n == 0)
    return;
  const int64_t n_panels = (n + NR - 1) / NR;
  const int64_t block_m = std::min(kBlockM, (m + MR - 1) / MR * MR);
  const int64_t block_k = std::max<int64_t>(1, std::min(kBlockK, k));
  // The result is accumulated in place when its storage is the
  // accumulation type; otherwise in `scratch`, rounded once at the end.
  // The packed operands hold one block of contracting indices, so their
  // padding to whole panels stays bounded for any k.
  const bool direct = out.element_type() == AccTraits::kPrimitiveType;
  std::vector<Acc> packed_b(static_cast<size_t>(n_panels * NR * block_k));
  std::vector<Acc> packed_a(static_cast<size_t>(block_m * block_k));
  std::vector<Acc> scratch(direct ? 0 : static_cast<size_t>(m * n));
  Acc tile[MR * NR];
  const llvm::ArrayRef<int64_t> lhs_k(ll.contracting), rhs_k(rl.contracting);
  for (int64_t b = 0; b < batch; ++b) {
    Acc *cbatch =
        direct ? reinterpret_cast<Acc *>(out.raw_data()) + b * m * n : scratch.data();
    if (k == 0)
      std::fill(cbatch, cbatch + m * n, Acc{});
    for (int64_t p0 = 0; p0 < k; p0 += kBlockK) {
      const int64_t kc = std::min(kBlockK, k - p0);
      const bool load_c = p0 > 0;
      PackPanels<AccTraits>(rhs, rl.batch[b], rl.free.data(), n, rhs_k.slice(p0, kc), NR,
                            packed_b.data());
      for (int64_t i0 = 0; i0 < m; i0 += block_m) {
        const int64_t mc = std::min(block_m, m - i0);
        PackPanels<AccTraits>(lhs, ll.batch[b], ll.free.data() + i0, mc, lhs_k.slice(p0, kc),
                              MR, packed_a.data());
        for (int64_t jp = 0; jp < n_panels; ++jp) {
          const Acc *bp = packed_b.data() + jp * NR * kc;
          const int64_t cols = std::min<int64_t>(NR, n - jp * NR);
          for (int64_t i = 0; i < mc; i += MR) {
            const Acc *ap = packed_a.data() + i * kc;
            const int64_t rows = std::min<int64_t>(MR, mc - i);
            Acc *c = cbatch + (i0 + i) * n + jp * NR;
            if (rows == MR && cols == NR) {
              micro(kc, ap, bp, c, n, load_c);
              continue;
            }
            // A partial tile goes through `tile`; its padding is dropped.
            if (load_c)
              for (int64_t r = 0; r < rows; ++r)
                std::copy(c + r * n, c + r * n + cols, tile + r * NR);
            micro(kc, ap, bp, tile, NR, load_c);
            for (int64_t r = 0; r < rows; ++r)
              std::copy(tile + r * NR, tile + r * NR + cols, c + r * n);
          }
        }
      }
    }
    if (!direct)
      StoreResult<AccTraits>(cbatch, m * n, out, b * m * n);
  }
}

template <typename Acc>
void RunFloat(const Literal &lhs, const OperandLayout &ll, const Literal &rhs,
              const OperandLayout &rl, Literal &out, DotIsa isa) {
  constexpr bool kF64 = std::is_same_v<Acc, double>;
  using AccTraits = std::conditional_t<kF64, ElementTraits<PrimitiveType::F64>,
                                       ElementTraits<PrimitiveType::F32>>;
  switch (isa) {
#ifdef LOOM_DOT_X86
  case DotIsa::kAvx512:
    // 6 x 4 vectors: 24 accumulators of 32 registers. On a Zen 4 EPYC this
    // tile ran the f32 1024^3 dot at 68 GFLOPS against 57 for 8 x 2 and
    // 66-68 for 4 x 6 and 5 x 4 (docs/performance.md, "Interpreter dot").
    return RunBlocked<AccTraits, Acc, 6, 4 * 64 / sizeof(Acc)>(
        lhs, ll, rhs, rl, out, &avx512::Micro<Acc, 6, 4>);
  case DotIsa::kAvx2:
    // 6 x 2 vectors: 12 accumulators of 16 registers (64 GFLOPS there
    // against 56 for 4 x 2).
    return RunBlocked<AccTraits, Acc, 6, 2 * 32 / sizeof(Acc)>(
        lhs, ll, rhs, rl, out, &avx2::Micro<Acc, 6, 2>);
  case DotIsa::kBaseline:
    return RunBlocked<AccTraits, Acc, 4, 2 * 16 / sizeof(Acc)>(lhs, ll, rhs, rl, out,
                                                               &sse2::Micro<Acc, 4, 2>);
#else
  case DotIsa::kBaseline:
    return RunBlocked<AccTraits, Acc, 4, 8>(lhs, ll, rhs, rl, out, &MicroPortable<Acc, 4, 8>);
#endif
  default:
    assert(false && "instruction set not supported by this build");
    return RunBlocked<AccTraits, Acc, 4, 8>(lhs, ll, rhs, rl, out, &MicroPortable<Acc, 4, 8>);
  }
}

} // namespace

const char *DotIsaName(DotIsa isa) {
  switch (isa) {
  case DotIsa::kBaseline: return "baseline";
  case DotIsa::kAvx2: return "avx2";
  case DotIsa::kAvx512: return "avx512";
  }
  return "?";
}

std::vector<DotIsa> SupportedDotIsas() {
  std::vector<DotIsa> isas{DotIsa::kBaseline};
#ifdef LOOM_DOT_X86
  if (__builtin_cpu_supports("avx2"))
    isas.push_back(DotIsa::kAvx2);
  if (__builtin_cpu_supports("avx512f"))
    isas.push_back(DotIsa::kAvx512);
#endif
  return isas;
}

DotIsa BestDotIsa() {
#ifdef LOOM_DOT_X86
  if (__builtin_cpu_supports("avx512f"))
    return DotIsa::kAvx512;
  if (__builtin_cpu_supports("avx2"))
    return DotIsa::kAvx2;
#endif
  return DotIsa::kBaseline;
}

Literal ComputeDot(const Literal &lhs, const Literal &rhs, const DotDimensionNumbers &dnums,
                   const Shape &result_shape, DotIsa isa) {
  const OperandLayout ll =
      LayoutOf(lhs.shape(), dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions);
  const OperandLayout rl =
      LayoutOf(rhs.shape(), dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions);
  assert(ll.batch.size() == rl.batch.size() && ll.contracting.size() == rl.contracting.size());
  Literal out(result_shape);
  const PrimitiveType out_type = result_shape.element_type();
  const bool any_f64 = lhs.element_type() == PrimitiveType::F64 ||
                       rhs.element_type() == PrimitiveType::F64 || out_type == PrimitiveType::F64;
  if (IsFloatingPointType(out_type)) {
    if (any_f64)
      RunFloat<double>(lhs, ll, rhs, rl, out, isa);
    else
      RunFloat<float>(lhs, ll, rhs, rl, out, isa);
  } else if (IsUnsignedIntegralType(out_type)) {
    RunBlocked<ElementTraits<PrimitiveType::U64>, uint64_t, 4, 8>(
        lhs, ll, rhs, rl, out, &MicroPortable<uint64_t, 4, 8>);
  } else {
    // Signed results wrap the same bits; the accumulator is read as s64.
    RunBlocked<ElementTraits<PrimitiveType::S64>, uint64_t, 4, 8>(
        lhs, ll, rhs, rl, out, &MicroPortable<uint64_t, 4, 8>);
  }
  return out;
}

} // namespace loom::hlo
