//===- HloDotBench.cpp - The interpreter's dot next to OpenBLAS sgemm -----===//
//
// A f32[1024,1024] x [1024,1024] dot (and the same with bf16 and f16
// operands, f32 result) through RunSpmd on a one-dot module with one
// thread, and through ComputeDot directly for every instruction set the CPU
// runs. Each reports GFLOPS (2 * 1024^3 multiply-adds counted as flops per
// CPU second of the process) next to OpenBLAS's cblas_sgemm on one thread
// measured in the same run (sgemm_GFLOPS) and the ratio (vs_sgemm). Built
// without OpenBLAS (bench/CMakeLists.txt finds it), the baseline and the
// ratio are left out.
//
// docs/performance.md ("Interpreter dot") records the figures.
//
//===----------------------------------------------------------------------===//

#include "../lib/hlo/eval/DotKernel.h"

#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/parser/HloParser.h"

#include "benchmark/benchmark.h"
#include "llvm/Support/Error.h"

#include <ctime>
#include <random>
#include <string>
#include <vector>

#ifdef LOOM_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using namespace loom::hlo;

constexpr int64_t kN = 1024;
constexpr double kFlops = 2.0 * kN * kN * kN;

double ProcessSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::vector<float> RandomFloats(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(kN * kN);
  for (float &x : v)
    x = uniform(rng);
  return v;
}

Literal Matrix(PrimitiveType type, uint64_t seed) {
  const std::vector<float> values = RandomFloats(seed);
  Literal lit{Shape(type, {kN, kN})};
  for (int64_t i = 0; i < kN * kN; ++i)
    lit.SetFromDouble(i, values[i]);
  return lit;
}

#ifdef LOOM_HAVE_OPENBLAS
/// cblas_sgemm of two random 1024x1024 matrices on one thread, repeated
/// for at least half a CPU second: GFLOPS per CPU second. Measured once.
double SgemmGflops() {
  static const double gflops = [] {
    openblas_set_num_threads(1);
    const std::vector<float> a = RandomFloats(1), b = RandomFloats(2);
    std::vector<float> c(kN * kN);
    auto run = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0f, a.data(), kN,
                  b.data(), kN, 0.0f, c.data(), kN);
    };
    run(); // warm up
    int reps = 0;
    const double start = ProcessSeconds();
    double seconds = 0;
    while (seconds < 0.5) {
      run();
      ++reps;
      seconds = ProcessSeconds() - start;
    }
    benchmark::DoNotOptimize(c.data());
    return kFlops * reps / seconds / 1e9;
  }();
  return gflops;
}

void BM_OpenBlasSgemm(benchmark::State &state) {
  openblas_set_num_threads(1);
  const std::vector<float> a = RandomFloats(1), b = RandomFloats(2);
  std::vector<float> c(kN * kN);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0f, a.data(), kN,
                b.data(), kN, 0.0f, c.data(), kN);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(kFlops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_OpenBlasSgemm)->Unit(benchmark::kMillisecond);
#endif

void Report(benchmark::State &state, double seconds) {
  const double gflops = seconds > 0 ? kFlops * state.iterations() / seconds / 1e9 : 0;
  state.counters["GFLOPS"] = gflops;
#ifdef LOOM_HAVE_OPENBLAS
  const double sgemm = SgemmGflops();
  state.counters["sgemm_GFLOPS"] = sgemm;
  state.counters["vs_sgemm"] = gflops / sgemm;
#endif
}

/// ComputeDot on `type` operands with an f32 result.
void BM_Kernel(benchmark::State &state, PrimitiveType type, DotIsa isa) {
  bool supported = false;
  for (DotIsa s : SupportedDotIsas())
    supported |= s == isa;
  if (!supported) {
    state.SkipWithError("instruction set not supported by this CPU");
    return;
  }
  const Literal lhs = Matrix(type, 1), rhs = Matrix(type, 2);
  DotDimensionNumbers dnums;
  dnums.lhs_contracting_dimensions = {1};
  dnums.rhs_contracting_dimensions = {0};
  const Shape shape(PrimitiveType::F32, {kN, kN});
  double seconds = 0;
  for (auto _ : state) {
    const double start = ProcessSeconds();
    Literal out = ComputeDot(lhs, rhs, dnums, shape, isa);
    seconds += ProcessSeconds() - start;
    benchmark::DoNotOptimize(out.raw_data());
  }
  Report(state, seconds);
}
BENCHMARK_CAPTURE(BM_Kernel, f32_avx512, PrimitiveType::F32, DotIsa::kAvx512)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Kernel, bf16_avx512, PrimitiveType::BF16, DotIsa::kAvx512)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Kernel, f16_avx512, PrimitiveType::F16, DotIsa::kAvx512)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Kernel, f32_avx2, PrimitiveType::F32, DotIsa::kAvx2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Kernel, f32_baseline, PrimitiveType::F32, DotIsa::kBaseline)
    ->Unit(benchmark::kMillisecond);

/// `hlo-run`'s path: RunSpmd on a module that is one dot, one thread.
void BM_RunSpmd(benchmark::State &state, const char *type, PrimitiveType element_type) {
  const std::string text = std::string("HloModule dot\nENTRY e {\n  a = ") + type +
                           "[1024,1024] parameter(0)\n  b = " + type +
                           "[1024,1024] parameter(1)\n  ROOT d = f32[1024,1024] dot(a, b), "
                           "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  auto module = ParseHloModule(text);
  if (!module) {
    state.SkipWithError(llvm::toString(module.takeError()).c_str());
    return;
  }
  std::vector<std::vector<Literal>> args(1);
  args[0].push_back(Matrix(element_type, 1));
  args[0].push_back(Matrix(element_type, 2));
  EvalOptions options;
  options.threads = 1;
  double seconds = 0;
  for (auto _ : state) {
    const double start = ProcessSeconds();
    auto result = RunSpmd(**module, args, options, nullptr);
    seconds += ProcessSeconds() - start;
    if (!result) {
      state.SkipWithError(llvm::toString(result.takeError()).c_str());
      return;
    }
    benchmark::DoNotOptimize((*result)[0].raw_data());
  }
  Report(state, seconds);
}
BENCHMARK_CAPTURE(BM_RunSpmd, f32, "f32", PrimitiveType::F32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RunSpmd, bf16, "bf16", PrimitiveType::BF16)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RunSpmd, f16, "f16", PrimitiveType::F16)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
