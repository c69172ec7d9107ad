//===- NeuronLoopedEinsumReplacer.h - dot(all-gather(w), x) to one call ---===//
//
// Folds a dot whose gathered operand is an all-gather of a tensor-parallel
// weight (often loop-carried inside a while body) into one
// AwsNeuronCollectiveMatmul custom-call that gathers and multiplies together,
// so the gather overlaps the matmul instead of materialising the full weight.
// Matching follows Neuron's pass of the same name; the emitted custom-call is
// pinned by docs/collective-matmul-contract.md, and every decision the
// original leaves open is in docs/collective-matmul.md.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASSES_NEURONLOOPEDEINSUMREPLACER_H
#define LOOM_HLO_PASSES_NEURONLOOPEDEINSUMREPLACER_H

#include "loom/hlo/pass/OpExpanderPass.h"
#include "loom/hlo/passes/NeuronEnv.h"

#include <memory>

namespace loom::hlo {

class NeuronLoopedEinsumReplacer : public OpExpanderPass {
public:
  /// Options from the hlo-opt flags, else the NEURON_* environment.
  NeuronLoopedEinsumReplacer()
      : NeuronLoopedEinsumReplacer(CollectiveMatmulOptions::FromFlagsAndEnvironment()) {}
  explicit NeuronLoopedEinsumReplacer(const CollectiveMatmulOptions &options);
  ~NeuronLoopedEinsumReplacer() override;

  llvm::StringRef name() const override { return "neuron_looped_einsum_replacer"; }
  llvm::Expected<bool> Run(HloModule &module) override;

protected:
  /// A two-operand dot with an all-gather within GetRootAllGather's reach of
  /// either operand: the only instructions with a match or a remark.
  bool IsCandidate(const HloInstruction *inst) const override;
  bool InstructionMatchesPattern(HloInstruction *inst) override;
  llvm::Expected<HloInstruction *> ExpandInstruction(HloInstruction *inst) override;

private:
  CollectiveMatmulOptions options_;
  /// One Run's analyses: each match is analyzed once and its plan kept
  /// until it is expanded; the weight-provenance analysis in provenance mode.
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace loom::hlo

#endif
