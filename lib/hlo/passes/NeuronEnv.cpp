//===- NeuronEnv.cpp - NEURON_* environment knobs and their flags ---------===//
#include "loom/hlo/passes/NeuronEnv.h"

#include "llvm/Support/CommandLine.h"

#include <cstdlib>
#include <string>

namespace loom::hlo {
namespace {

namespace cl = llvm::cl;

cl::OptionCategory &NeuronCategory() {
  // Not every option overrides a variable (--neuron-compat has none), so
  // the title names the passes rather than the variables.
  static cl::OptionCategory category(
      "Collective-matmul pass options",
      "Tune neuron_looped_einsum_replacer and neuron_looped_einsum_token_replacer: a flag "
      "given overrides its environment variable (NEURON_*, LOOM_COLLECTIVE_MATMUL_PROVENANCE); "
      "--neuron-compat has none");
  return category;
}

cl::opt<cl::boolOrDefault> NxdFlag(
    "neuron-collective-matmul-nxd",
    cl::desc("Override NEURON_COLLECTIVE_MATMUL_NXD (true|false): refuse all-gathers with "
             "more than 5 operands and enable neuron_looped_einsum_token_replacer"),
    cl::cat(NeuronCategory()));

cl::opt<cl::boolOrDefault> AggressiveFlag(
    "neuron-collective-permute-aggressive",
    cl::desc("Override NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE (true|false): fold an rhs "
             "all-gather even when its weight side is not proven to be a parameter"),
    cl::cat(NeuronCategory()));

cl::opt<int64_t> ThresholdFlag(
    "neuron-collective-matmul-sb-to-sb-threshold-in-mb",
    cl::desc("Override NEURON_COLLECTIVE_MATMUL_SB_TO_SB_THRESHOLD_IN_MB: use_sb_to_sb=1 when "
             "2 * gathered weight bytes / 2^20 <= this (default 16)"),
    cl::value_desc("int"), cl::cat(NeuronCategory()));

cl::opt<bool> CompatFlag(
    "neuron-compat",
    cl::desc("Collective matmul: follow the Neuron passes literally where loom decides "
             "otherwise (RhsRS weight side, replica groups that tp_degree/num_groups cannot "
             "express, token operand)"),
    cl::init(false), cl::cat(NeuronCategory()));

cl::opt<cl::boolOrDefault> ProvenanceFlag(
    "collective-matmul-provenance",
    cl::desc("Override LOOM_COLLECTIVE_MATMUL_PROVENANCE (true|false): also fold dots whose "
             "weight is proven by weight provenance (stacked layer weights sliced at the loop "
             "counter) and merge adjacent contracting dimensions"),
    cl::cat(NeuronCategory()));

bool Resolve(const cl::opt<cl::boolOrDefault> &flag, llvm::StringRef env) {
  switch (flag.getValue()) {
  case cl::BOU_TRUE:
    return true;
  case cl::BOU_FALSE:
    return false;
  case cl::BOU_UNSET:
    break;
  }
  return EnvVarSetToOne(env);
}

} // namespace

bool EnvVarSetToOne(llvm::StringRef name) {
  const char *value = std::getenv(name.str().c_str());
  return value && llvm::StringRef(value) == "1";
}

bool ReadEnvVarAsInt(llvm::StringRef name, int64_t *out) {
  const char *value = std::getenv(name.str().c_str());
  if (!value)
    return false;
  llvm::StringRef text(value);
  // getAsInteger accepts a leading '-' and rejects spaces, suffixes and
  // overflow; a '+' sign is not part of the accepted form either.
  long long parsed;
  if (text.empty() || text.front() == '+' || text.getAsInteger(10, parsed))
    return false;
  *out = parsed;
  return true;
}

std::vector<std::string> CollectiveMatmulEnvironmentWarnings() {
  std::vector<std::string> warnings;
  auto check_set_to_one = [&](const cl::opt<cl::boolOrDefault> &flag, llvm::StringRef name) {
    const char *value = std::getenv(name.str().c_str());
    if (flag.getValue() != cl::BOU_UNSET || !value)
      return;
    llvm::StringRef text(value);
    if (text != "0" && text != "1")
      warnings.push_back((name + "='" + text + "' is neither 0 nor 1 and reads as 0 (only '1' " +
                          "turns it on); override it with --" + flag.ArgStr + "=true|false")
                             .str());
  };
  check_set_to_one(NxdFlag, kNeuronCollectiveMatmulNxdEnv);
  check_set_to_one(AggressiveFlag, kNeuronCollectivePermuteAggressiveEnv);
  check_set_to_one(ProvenanceFlag, kLoomCollectiveMatmulProvenanceEnv);
  int64_t threshold;
  const char *value = std::getenv(kNeuronSbToSbThresholdEnv);
  if (!ThresholdFlag.getNumOccurrences() && value &&
      !ReadEnvVarAsInt(kNeuronSbToSbThresholdEnv, &threshold))
    warnings.push_back((llvm::Twine(kNeuronSbToSbThresholdEnv) + "='" + value +
                        "' is not an integer and reads as unset (the threshold stays " +
                        llvm::Twine(kDefaultSbToSbThresholdInMb) + ")")
                           .str());
  return warnings;
}

CollectiveMatmulOptions CollectiveMatmulOptions::FromFlagsAndEnvironment() {
  CollectiveMatmulOptions options;
  options.nxd = Resolve(NxdFlag, kNeuronCollectiveMatmulNxdEnv);
  options.permute_aggressive = Resolve(AggressiveFlag, kNeuronCollectivePermuteAggressiveEnv);
  int64_t threshold;
  if (ThresholdFlag.getNumOccurrences() > 0)
    options.sb_to_sb_threshold_in_mb = ThresholdFlag;
  else if (ReadEnvVarAsInt(kNeuronSbToSbThresholdEnv, &threshold))
    options.sb_to_sb_threshold_in_mb = threshold;
  options.compat = CompatFlag;
  options.provenance = Resolve(ProvenanceFlag, kLoomCollectiveMatmulProvenanceEnv);
  return options;
}

} // namespace loom::hlo
