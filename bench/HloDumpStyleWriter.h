//===- HloDumpStyleWriter.h - What both module generators write alike ----===//
//
// The part of HloModuleGenerator.h and HloUnrolledGenerator.h that must not
// differ between them: the seeded sequence both draw from, names unique
// across the module (`prefix.N`), and the `metadata={...}` of a layer's
// instruction as JAX writes it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BENCH_HLODUMPSTYLEWRITER_H
#define LOOM_BENCH_HLODUMPSTYLEWRITER_H

#include <cstdint>
#include <string>

namespace loom::hlo::bench::detail {

class DumpStyleWriter {
protected:
  explicit DumpStyleWriter(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}

  /// splitmix64.
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::string Name(const char *prefix) { return std::string(prefix) + "." + std::to_string(++id_); }
  /// The metadata of an instruction of layer `layer_` made by `op`.
  std::string Metadata(const char *op) {
    return ", metadata={op_name=\"jit(train_step)/layer_" + std::to_string(layer_) + "/" + op +
           "\" source_file=\"/src/model.py\" source_line=" + std::to_string(100 + Next() % 900) +
           "}";
  }

  uint64_t state_;
  int64_t id_ = 0;
  int64_t layer_ = 0;
  int64_t channel_ = 0;
};

} // namespace loom::hlo::bench::detail

#endif
