//===- NumericsCheck.h - Run two modules on the same inputs and compare ---===//
//
// The check behind `hlo-run --compare` and `hlo-opt --check-numerics`: both
// modules run on every device of an SPMD launch with the same seeded inputs,
// and every output of every device is compared — exactly for integers and
// pred, within a relative+absolute tolerance for floating point.
//
// A float pair (candidate a, reference b) matches when
//   |a - b| <= atol + rtol * |b|,
// or when both are NaN, or both are the same infinity. The defaults depend
// on the element type (DefaultTolerance; docs/hlo-run.md has the table).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_EVAL_NUMERICSCHECK_H
#define LOOM_HLO_EVAL_NUMERICSCHECK_H

#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace loom::hlo {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

/// loom's tolerance for an element type: f64 1e-12/1e-12, f32 1e-5/1e-6,
/// f16 1e-3/1e-3, bf16 1e-2/1e-2, f8/f4 types 1.25e-1/1e-1, complex as
/// their component type; integers and pred 0/0 (exact).
Tolerance DefaultTolerance(PrimitiveType type);

struct NumericsCheckOptions {
  /// Seed of the random parameter values (MakeRandomArguments).
  uint64_t seed = 0;
  /// Overrides of the per-element-type defaults, for floats only: integers
  /// and pred are always compared exactly.
  std::optional<double> rtol;
  std::optional<double> atol;
  /// Limits and threads of both runs (EvalOptionsFromCommandLine() in tools).
  EvalOptions eval;
  /// What to call each module in an error, e.g. its file: "cannot run the
  /// candidate module (b.hlo): ..."; empty names leave the parenthesis out.
  std::string reference_name;
  std::string candidate_name;
};

/// What comparing values found. Merge() accumulates several comparisons
/// (every output of every device) into one summary.
struct ComparisonSummary {
  int64_t elements_compared = 0;
  int64_t elements_differing = 0;
  /// Largest |a - b| and |a - b| / |b| over every compared element (the
  /// relative error of an element whose reference is 0 counts only when the
  /// candidate is not 0, as infinity).
  double max_abs_error = 0;
  double max_rel_error = 0;
  /// The first mismatch, in device, output and element order; empty when
  /// everything matched. E.g. `device 1, output {0}, element 5 (index
  /// [1,1]): reference 0.5, candidate 0.75 (f32: rtol 1e-05, atol 1e-06)`.
  std::string first_mismatch;

  bool ok() const { return elements_differing == 0; }
  void Merge(const ComparisonSummary &other);
  /// `24 elements compared, 3 differ; largest absolute error 0.25, largest
  /// relative error 0.5`.
  std::string ToString() const;
};

/// Compares `candidate` with `reference` element by element, tuple leaves
/// recursively. `where` prefixes the mismatch description ("device 1");
/// each leaf adds its output path (`output {1,0}`, or `output` for a
/// non-tuple). Differing shapes are an error rather than a summary.
llvm::Expected<ComparisonSummary> CompareLiterals(const Literal &reference,
                                                  const Literal &candidate,
                                                  const NumericsCheckOptions &options,
                                                  llvm::StringRef where);

/// Compares every device's result of two runs (same device count).
llvm::Expected<ComparisonSummary> CompareDeviceResults(const std::vector<Literal> &reference,
                                                       const std::vector<Literal> &candidate,
                                                       const NumericsCheckOptions &options);

/// Runs both modules on `args` (args[device][param]) and compares every
/// device's result. The modules must take the same parameters and run on
/// the same replica_count and num_partitions. Errors: the modules do not
/// fit together, or one of them fails to run; a mismatch is a summary.
/// options.seed is not used: the values are `args`.
llvm::Expected<ComparisonSummary> CompareModules(const HloModule &reference,
                                                 const HloModule &candidate,
                                                 const std::vector<std::vector<Literal>> &args,
                                                 const NumericsCheckOptions &options);

/// Runs `reference` and `candidate` on identical inputs and compares every
/// output of every device. Success: outputs match. A mismatch or a failure to
/// run either module is an llvm::Error whose message names the device, the
/// output index, the first differing element and the largest absolute and
/// relative errors. Details of the comparison go to `log` (may be nulls()).
llvm::Error CheckNumerics(const HloModule &reference, const HloModule &candidate,
                          const NumericsCheckOptions &options, llvm::raw_ostream &log);

} // namespace loom::hlo

#endif
