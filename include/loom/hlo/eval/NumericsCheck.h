//===- NumericsCheck.h - Run two modules on the same inputs and compare ---===//
//
// The check behind `hlo-run --compare` and `hlo-opt --check-numerics`: both
// modules run on every device of an SPMD launch with the same seeded inputs,
// and every output of every device is compared — exactly for integers and
// pred, within a relative+absolute tolerance for floating point.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_EVAL_NUMERICSCHECK_H
#define LOOM_HLO_EVAL_NUMERICSCHECK_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace loom::hlo {

struct NumericsCheckOptions {
  /// Seed of the random parameter values.
  uint64_t seed = 0;
  /// A float pair (a, b) matches when |a - b| <= atol + rtol * |b|.
  double rtol = 1e-5;
  double atol = 1e-6;
};

/// Runs `reference` and `candidate` on identical inputs and compares every
/// output of every device. Success: outputs match. A mismatch or a failure to
/// run either module is an llvm::Error whose message names the device, the
/// output index, the first differing element and the largest absolute and
/// relative errors. Details of the comparison go to `log` (may be nulls()).
llvm::Error CheckNumerics(const HloModule &reference, const HloModule &candidate,
                          const NumericsCheckOptions &options, llvm::raw_ostream &log);

} // namespace loom::hlo

#endif
