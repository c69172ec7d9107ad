//===- NeuronLoopedEinsumTokenReplacer.h - Drop all-gathered tokens -------===//
//
// Neuron threads a rank-0 ordering value through the all-gathers of a
// tensor-parallel weight, `(T, bf16[]) all-gather(w, t)`. Once
// neuron_looped_einsum_replacer has folded the gather into a collective
// matmul, only the rank-0 `get-tuple-element` of that all-gather keeps it
// alive. This pass hands the get-tuple-element's users the pre-gather value
// directly (a rank-0 operand passes through an all-gather unchanged), so the
// all-gather dies. It runs only under NEURON_COLLECTIVE_MATMUL_NXD.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASSES_NEURONLOOPEDEINSUMTOKENREPLACER_H
#define LOOM_HLO_PASSES_NEURONLOOPEDEINSUMTOKENREPLACER_H

#include "loom/hlo/pass/OpExpanderPass.h"
#include "loom/hlo/passes/NeuronEnv.h"

namespace loom::hlo {

class NeuronLoopedEinsumTokenReplacer : public OpExpanderPass {
public:
  /// Options from the hlo-opt flags, else the NEURON_* environment.
  NeuronLoopedEinsumTokenReplacer()
      : NeuronLoopedEinsumTokenReplacer(CollectiveMatmulOptions::FromFlagsAndEnvironment()) {}
  explicit NeuronLoopedEinsumTokenReplacer(const CollectiveMatmulOptions &options)
      : options_(options) {}

  llvm::StringRef name() const override { return "neuron_looped_einsum_token_replacer"; }
  /// Without NEURON_COLLECTIVE_MATMUL_NXD every candidate is declined, so
  /// only a remark stream makes walking the module worth it.
  llvm::Expected<bool> Run(HloModule &module) override;

protected:
  /// A rank-0 get-tuple-element of an all-gather.
  bool IsCandidate(const HloInstruction *inst) const override;
  bool InstructionMatchesPattern(HloInstruction *inst) override;
  llvm::Expected<HloInstruction *> ExpandInstruction(HloInstruction *inst) override;

private:
  CollectiveMatmulOptions options_;
};

} // namespace loom::hlo

#endif
