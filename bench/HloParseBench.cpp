//===- HloParseBench.cpp - Parse and print throughput on large modules ----===//
//
// Generates one module of 100,000 instructions in XLA's dump style (long
// syntax: operand shapes, layouts, metadata on every instruction) with the
// mix of a transformer step: elementwise ops, broadcasts with dimensions=,
// dots with contracting dims, reshapes, tuples and get-tuple-elements. Every
// block of 1000 instructions reads its own bias and weight parameters, as
// the layers of a model do.
// Reports bytes of HLO text per second for ParseHloModule and
// HloModule::ToString, and the parse on 1 and 2 threads of a module of many
// computations as a ratio to a memchr line count of the same text.
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "loom/hlo/parser/HloParser.h"

#include "benchmark/benchmark.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sys/resource.h>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kInstructions = 100000;
constexpr char kMatrix[] = "f32[128,256]{1,0}";
constexpr char kVector[] = "f32[256]{0}";
constexpr char kWeight[] = "f32[256,256]{1,0}";
constexpr char kCube[] = "f32[128,16,16]{2,1,0}";

class ModuleWriter {
public:
  /// Instructions numbered from `first`, `count` of them, in a computation
  /// named `name`.
  ModuleWriter(int first = 0, int count = kInstructions, std::string name = "ENTRY %main.0")
      : count_(first), end_(first + count), name_(std::move(name)) {}

  /// The computation alone.
  std::string WriteComputation() {
    out_.reserve(static_cast<size_t>(end_ - count_) * 260);
    std::string x = count_ == 0 ? "x" : Name("x");
    signature_ = x + ": f32[128,256]";
    Line(x, kMatrix, "parameter(0)", "");
    recent_ = {x};
    while (count_ < end_ - 1) {
      if (count_ / 1000 != layer_)
        StartLayer();
      Step();
    }
    out_ += "  ROOT %" + Name("result") + " = f32[128,256]{1,0} copy(f32[128,256]{1,0} %" +
            recent_.back() + ")\n}\n";
    return name_ + " (" + signature_ + ") -> f32[128,256] {\n" + out_;
  }
  std::string Write() {
    return "HloModule jit_train_step, is_scheduled=true, num_partitions=1\n\n" +
           WriteComputation();
  }

private:
  /// A value of shape kMatrix made recently; short reuse distances keep the
  /// fan-out of each value realistic.
  const std::string &Recent(int back) {
    return recent_[recent_.size() - 1 - back % recent_.size()];
  }
  std::string Name(const char *prefix) {
    return std::string(prefix) + "." + std::to_string(count_);
  }
  std::string Metadata(const char *op) {
    return ", metadata={op_name=\"jit(train_step)/jit(main)/transformer/layer_" +
           std::to_string(count_ / 1000) + "/" + op +
           "\" source_file=\"/home/user/src/model/transformer.py\" source_line=" +
           std::to_string(100 + count_ % 900) + "}";
  }
  void Line(const std::string &name, const char *shape, const std::string &rhs,
            const std::string &attributes) {
    out_ += "  %" + name + " = " + shape + " " + rhs + attributes + "\n";
    ++count_;
  }
  std::string Operand(const char *shape, const std::string &name) {
    return std::string(shape) + " %" + name;
  }
  void Matrix(const std::string &name) {
    recent_.push_back(name);
    if (recent_.size() > 16)
      recent_.erase(recent_.begin());
  }

  void StartLayer() {
    layer_ = count_ / 1000;
    bias_ = "bias." + std::to_string(layer_);
    weight_ = "w." + std::to_string(layer_);
    Line(bias_, kVector, "parameter(" + std::to_string(++parameters_) + ")", "");
    Line(weight_, kWeight, "parameter(" + std::to_string(++parameters_) + ")", "");
    signature_ += ", " + bias_ + ": f32[256], " + weight_ + ": f32[256,256]";
  }

  void Step() {
    static const char *kBinary[] = {"add", "multiply", "subtract", "maximum"};
    static const char *kUnary[] = {"exponential", "tanh", "negate"};
    switch (count_ % 10) {
    case 0: case 1: case 2: case 3: {
      const char *op = kBinary[count_ % 4];
      std::string name = Name(op);
      Line(name, kMatrix,
           std::string(op) + "(" + Operand(kMatrix, Recent(0)) + ", " +
               Operand(kMatrix, Recent(3)) + ")",
           Metadata(op));
      Matrix(name);
      return;
    }
    case 4: {
      const char *op = kUnary[count_ % 3];
      std::string name = Name(op);
      Line(name, kMatrix, std::string(op) + "(" + Operand(kMatrix, Recent(1)) + ")",
           Metadata(op));
      Matrix(name);
      return;
    }
    case 5: {
      std::string name = Name("broadcast");
      Line(name, kMatrix, "broadcast(" + Operand(kVector, bias_) + ")",
           ", dimensions={1}" + Metadata("broadcast_in_dim"));
      Matrix(name);
      return;
    }
    case 6: {
      std::string name = Name("dot");
      Line(name, kMatrix,
           "dot(" + Operand(kMatrix, Recent(0)) + ", " + Operand(kWeight, weight_) + ")",
           ", lhs_contracting_dims={1}, rhs_contracting_dims={0}" + Metadata("dot_general"));
      Matrix(name);
      return;
    }
    case 7: {
      std::string cube = Name("reshape");
      Line(cube, kCube, "reshape(" + Operand(kMatrix, Recent(0)) + ")", Metadata("reshape"));
      std::string back = Name("reshape");
      Line(back, kMatrix, "reshape(" + Operand(kCube, cube) + ")", Metadata("reshape"));
      Matrix(back);
      return;
    }
    default: {
      std::string tuple = Name("tuple");
      Line(tuple, "(f32[128,256]{1,0}, f32[128,256]{1,0})",
           "tuple(" + Operand(kMatrix, Recent(0)) + ", " + Operand(kMatrix, Recent(2)) + ")",
           "");
      std::string gte = Name("get-tuple-element");
      Line(gte, kMatrix,
           "get-tuple-element((f32[128,256]{1,0}, f32[128,256]{1,0}) %" + tuple + ")",
           ", index=1" + Metadata("pjit"));
      Matrix(gte);
      return;
    }
    }
  }

  std::string out_;
  std::vector<std::string> recent_;
  int count_ = 0;
  int end_ = 0;
  std::string name_;
  int layer_ = -1;
  int parameters_ = 0;
  std::string bias_, weight_, signature_;
};

const std::string &ModuleText() {
  static const std::string text = ModuleWriter().Write();
  return text;
}

std::unique_ptr<loom::hlo::HloModule> ParseOrDie(const std::string &text) {
  auto module = loom::hlo::ParseHloModule(text, "<bench>");
  if (!module) {
    llvm::errs() << llvm::toString(module.takeError()) << "\n";
    std::abort();
  }
  return std::move(*module);
}

void BM_ParseHloModule(benchmark::State &state) {
  const std::string &text = ModuleText();
  for (auto _ : state) {
    auto module = ParseOrDie(text);
    benchmark::DoNotOptimize(module.get());
    // Freeing the IR is not parsing.
    state.PauseTiming();
    module.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["instructions"] =
      static_cast<double>(ParseOrDie(text)->instruction_count());
  state.counters["text_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseHloModule)->Unit(benchmark::kMillisecond);

void BM_PrintHloModule(benchmark::State &state) {
  auto module = ParseOrDie(ModuleText());
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = module->ToString();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes));
  state.counters["text_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_PrintHloModule)->Unit(benchmark::kMillisecond);

/// A module of many computations, as a dump of a training step is (while
/// bodies, conditions, fusions): 40 computations of 10,000 instructions
/// and a small entry. With LOOM_PARSE_BENCH_FILE set, that
/// file instead (e.g. a dump of a million instructions).
const std::string &ManyComputationText() {
  static const std::string text = [] {
    if (const char *path = std::getenv("LOOM_PARSE_BENCH_FILE")) {
      auto buffer = llvm::MemoryBuffer::getFile(path);
      if (!buffer) {
        llvm::errs() << path << ": cannot read\n";
        std::abort();
      }
      return (*buffer)->getBuffer().str();
    }
    std::string out = "HloModule many_layers, is_scheduled=true\n\n";
    constexpr int kLayers = 40;
    constexpr int kLayerInstructions = 10000;
    for (int i = 0; i < kLayers; ++i)
      out += ModuleWriter(i * kLayerInstructions, kLayerInstructions,
                          "%layer." + std::to_string(i))
                 .WriteComputation() +
             "\n";
    out += "ENTRY %main (x: f32[128,256]) -> f32[128,256] {\n"
           "  ROOT %x = f32[128,256]{1,0} parameter(0)\n}\n";
    return out;
  }();
  return text;
}

/// What reading the text once costs: a memchr line count of the buffer.
double LineCountSeconds(const std::string &text) {
  auto count_lines = [&] { return loom::bench::CountLines(text); };
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(count_lines());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

/// CPU seconds of the whole process so far (every thread).
double ProcessCpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

/// Parse wall time on state.range(0) threads and its ratio to a memchr
/// line count of the same buffer measured in the same run; `cpu_x_line_count`
/// is the CPU time of all threads in the same unit.
void BM_ParseThreads(benchmark::State &state) {
  const std::string &text = ManyComputationText();
  loom::hlo::HloParseOptions options;
  options.threads = static_cast<unsigned>(state.range(0));
  size_t pieces = 0;
  options.pieces_joined = &pieces;
  double baseline = LineCountSeconds(text);
  double total = 0;
  double cpu = 0;
  for (auto _ : state) {
    double cpu_start = ProcessCpuSeconds();
    auto start = std::chrono::steady_clock::now();
    // A view of the text: copying it is not parsing.
    auto module = loom::hlo::ParseHloModuleOwned(
        llvm::MemoryBuffer::getMemBuffer(text, "<bench>", false), "<bench>", options);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cpu += ProcessCpuSeconds() - cpu_start;
    if (!module) {
      llvm::errs() << llvm::toString(module.takeError()) << "\n";
      std::abort();
    }
    benchmark::DoNotOptimize(module->get());
    state.PauseTiming();
    module->reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  double iterations = static_cast<double>(state.iterations());
  state.counters["x_line_count"] = total / iterations / baseline;
  state.counters["cpu_x_line_count"] = cpu / iterations / baseline;
  state.counters["line_count_ms"] = baseline * 1e3;
  state.counters["pieces"] = static_cast<double>(pieces);
  state.counters["text_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseThreads)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
