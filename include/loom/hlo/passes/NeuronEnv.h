//===- NeuronEnv.h - NEURON_* environment knobs and their hlo-opt flags ---===//
//
// The collective-matmul passes are tuned only by three environment
// variables, read the way Neuron reads them:
//   NEURON_COLLECTIVE_MATMUL_NXD                       "set to one"
//   NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE               "set to one"
//   NEURON_COLLECTIVE_MATMUL_SB_TO_SB_THRESHOLD_IN_MB  an integer
// "Set to one" means the value is exactly `1` (`true`, `yes`, ` 1` are not).
// Each variable has an hlo-opt flag that overrides it when given; see
// docs/collective-matmul.md for the table.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASSES_NEURONENV_H
#define LOOM_HLO_PASSES_NEURONENV_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::hlo {

inline constexpr const char kNeuronCollectiveMatmulNxdEnv[] = "NEURON_COLLECTIVE_MATMUL_NXD";
inline constexpr const char kNeuronCollectivePermuteAggressiveEnv[] =
    "NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE";
inline constexpr const char kNeuronSbToSbThresholdEnv[] =
    "NEURON_COLLECTIVE_MATMUL_SB_TO_SB_THRESHOLD_IN_MB";
/// loom's own opt-in matching mode (not a Neuron knob), "set to one".
inline constexpr const char kLoomCollectiveMatmulProvenanceEnv[] =
    "LOOM_COLLECTIVE_MATMUL_PROVENANCE";

/// The use_sb_to_sb threshold when neither the variable nor the flag gives
/// one. Neuron's constant is not public; 16 MiB is loom's choice.
inline constexpr int64_t kDefaultSbToSbThresholdInMb = 16;

/// True when the variable exists and its value is exactly "1".
bool EnvVarSetToOne(llvm::StringRef name);

/// True, with `*out` set, when the variable's whole value is a decimal
/// integer (optional leading '-') that fits in int64_t. Anything else
/// (unset, empty, "16MB", " 16", "0x10") reads as "not set".
bool ReadEnvVarAsInt(llvm::StringRef name, int64_t *out);

/// One line per variable above that is set to a value the passes cannot
/// take and no flag overrides: a "set to one" variable neither `0` nor `1`
/// (`true` reads as unset, as in Neuron), a threshold that is not an
/// integer. A tool prints them as warnings; empty when all is well.
std::vector<std::string> CollectiveMatmulEnvironmentWarnings();

/// Everything the two passes read from flags and the environment.
struct CollectiveMatmulOptions {
  /// NEURON_COLLECTIVE_MATMUL_NXD: refuse all-gathers with more than five
  /// operands; enables the token pass.
  bool nxd = false;
  /// NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE: fold an rhs all-gather whose
  /// weight side is not proven to be a parameter.
  bool permute_aggressive = false;
  /// NEURON_COLLECTIVE_MATMUL_SB_TO_SB_THRESHOLD_IN_MB.
  int64_t sb_to_sb_threshold_in_mb = kDefaultSbToSbThresholdInMb;
  /// --neuron-compat: follow Neuron's passes literally where loom decides
  /// otherwise (RhsRS weight side, non-contiguous replica groups, token
  /// operand index).
  bool compat = false;
  /// --collective-matmul-provenance / LOOM_COLLECTIVE_MATMUL_PROVENANCE:
  /// also prove weights by WeightProvenance and merge adjacent contracting
  /// dimensions (docs/collective-matmul.md, "Provenance mode").
  bool provenance = false;

  /// The flags when given on the command line, else the environment, else
  /// the defaults.
  static CollectiveMatmulOptions FromFlagsAndEnvironment();
};

} // namespace loom::hlo

#endif
