//===- RandomInputs.h - Seeded parameter values for every device ---------===//
//
// hlo-run, `hlo-run --compare` and `hlo-opt --check-numerics` feed modules
// with values drawn from a seed, so a run can be repeated anywhere: the
// generator is loom's own (splitmix64), never a std:: distribution, whose
// output differs between standard libraries.
//
// Every (seed, device, parameter) triple has its own stream, so devices get
// different values and adding a parameter does not shift the others:
//   floating point  uniform in [-1, 1), rounded to the element type
//   signed ints     uniform in [-8, 8)
//   unsigned ints   uniform in [0, 16)
//   pred            true or false with equal odds
//   complex         both parts uniform in [-1, 1)
//   tuples          filled leaf by leaf; tokens carry no data
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_EVAL_RANDOMINPUTS_H
#define LOOM_HLO_EVAL_RANDOMINPUTS_H

#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace loom::hlo {

/// splitmix64: tiny, fast, and every 64-bit seed gives a good stream. Also
/// what the property tests draw their random modules from.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1), 53 random bits.
  double NextSymmetric() { return static_cast<double>(Next() >> 11) * 0x1p-52 - 1.0; }
  /// Uniform in [lo, hi] (inclusive; hi - lo small, so the modulo bias is
  /// negligible).
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  /// True with probability `p`.
  bool Chance(double p) { return static_cast<double>(Next() >> 11) * 0x1p-53 < p; }

private:
  uint64_t state_;
};

/// A literal of `shape` filled from the stream of (seed, device, param).
Literal MakeRandomLiteral(const Shape &shape, uint64_t seed, int64_t device, int64_t param);


/// result[device][param] for every device of the module's SPMD launch
/// (replica_count * num_partitions) and every entry parameter. A replicated
/// parameter (IsReplicatedParameter), and every parameter when
/// `same_on_every_device`, takes device 0's values on every device: an SPMD
/// program relies on replicated values (loop counters, replicated
/// activations) being equal everywhere. Parameters larger than the
/// interpreter would accept (`limits`: elements per value, bytes over all
/// devices) are an error before anything is allocated.
llvm::Expected<std::vector<std::vector<Literal>>>
MakeRandomArguments(const HloModule &module, uint64_t seed, const EvalOptions &limits = {},
                    bool same_on_every_device = false);

} // namespace loom::hlo

#endif
