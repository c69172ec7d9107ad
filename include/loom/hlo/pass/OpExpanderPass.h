//===- OpExpanderPass.h - Match one instruction, replace it, drop the rest ===//
//
// The shared driver of passes that rewrite single instructions. Run() visits
// every computation (callees before callers) except the bodies of fusion
// instructions, as XLA's driver does, and, in each, the instructions in post
// order. It collects the matches first (InstructionMatchesPattern),
// then for each one that still belongs to the computation and still matches:
//   1. ExpandInstruction(inst) returns the replacement;
//   2. if that is `inst` itself, nothing changes;
//   3. else control dependencies move to the replacement, every use of `inst`
//      (the computation's root included) is rewired to it, and `inst` is
//      removed with every operand that became dead (the dot, its reshape,
//      the all-gather...). An operand that still has users stays.
// Run() reports "changed" only when at least one instruction was replaced
// (or an expansion that kept its instruction added some anyway).
//
// The instructions the expansions add are appended to the computation; once
// a computation's matches are expanded, those instructions move, in one pass
// over the text order, to where the printer's post order would print them
// (before the first instruction that reads them), so a computation whose
// text order was a post order stays one: the verifier and the printer skip
// their depth-first walks, and the printed module is the same. A control
// edge on a replaced instruction, or a replacement that exists already and
// comes after a user it takes over, leaves them at the end.
//
// IsCandidate() is a cheap filter in front of InstructionMatchesPattern: the
// driver finds the candidates of the whole module in one walk and offers
// only those, in post order, to InstructionMatchesPattern; a computation
// without candidates costs nothing more. The order in which computations and
// matches are seen is the same as without the filter.
//
// As in XLA, ExpandInstruction returns an HloInstruction* already in the
// computation: one it just added (computation->AddInstruction adopts a
// unique_ptr and returns the raw pointer) or one that existed before (an
// operand, as neuron_looped_einsum_token_replacer returns). XLA's driver reads
// nullptr as "no replacement"; here the instruction itself says that, and an
// error is an llvm::Error. The replacement must have a shape compatible with
// `inst`. ExpandInstruction may add instructions but must not remove any;
// the driver does all removal.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASS_OPEXPANDERPASS_H
#define LOOM_HLO_PASS_OPEXPANDERPASS_H

#include "loom/hlo/pass/HloPassInterface.h"

namespace loom::hlo {

class OpExpanderPass : public HloPassInterface {
public:
  llvm::Expected<bool> Run(HloModule &module) override;

protected:
  /// False only for instructions InstructionMatchesPattern would neither
  /// match nor remark on; it reads `instruction` and its operand chains, no
  /// state. The default offers every instruction.
  virtual bool IsCandidate(const HloInstruction *instruction) const { return true; }
  /// Whether `instruction` is one this pass rewrites.
  virtual bool InstructionMatchesPattern(HloInstruction *instruction) = 0;
  /// The instruction that takes over every use of `instruction` (see above).
  virtual llvm::Expected<HloInstruction *> ExpandInstruction(HloInstruction *instruction) = 0;

private:
  llvm::Expected<bool> RunOnComputations(HloModule &module);
  llvm::Expected<bool> ExpandMatches(HloComputation *computation,
                                     llvm::ArrayRef<HloInstruction *> candidates);
};

} // namespace loom::hlo

#endif
