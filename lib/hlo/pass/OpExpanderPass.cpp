#include "loom/hlo/pass/OpExpanderPass.h"

#include "loom/support/Error.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <vector>

namespace loom::hlo {

namespace {

/// Gives `to` the control edges of `from`, so removing `from` keeps the
/// ordering constraints it took part in.
void MoveControlDependencies(HloInstruction *from, HloInstruction *to) {
  std::vector<HloInstruction *> preds(from->control_predecessors().begin(),
                                      from->control_predecessors().end());
  std::vector<HloInstruction *> succs(from->control_successors().begin(),
                                      from->control_successors().end());
  from->DropAllControlDeps();
  for (HloInstruction *pred : preds)
    if (pred != to)
      pred->AddControlDependencyTo(to);
  for (HloInstruction *succ : succs)
    if (succ != to)
      to->AddControlDependencyTo(succ);
}

} // namespace

llvm::Expected<bool> OpExpanderPass::Run(HloModule &module) {
  ResetRemarks();
  auto changed = RunOnComputations(module);
  ResetRemarks();
  return changed;
}

llvm::Expected<bool> OpExpanderPass::RunOnComputations(HloModule &module) {
  bool changed = false;
  for (HloComputation *comp : module.MakeNonfusionComputations()) {
    // Collect before mutating: expansions add instructions and remove dead
    // chains, which must not disturb the walk.
    std::vector<HloInstruction *> matches;
    for (HloInstruction *inst : comp->MakeInstructionPostOrder())
      if (InstructionMatchesPattern(inst))
        matches.push_back(inst);
    if (matches.empty())
      continue;
    // Matches not expanded yet. An instruction removed with an earlier
    // match's dead chain leaves this set before it is destroyed, so no
    // pointer to freed memory is ever followed.
    llvm::DenseSet<HloInstruction *> pending(matches.begin(), matches.end());
    for (HloInstruction *inst : matches) {
      if (!pending.erase(inst))
        continue;
      // An earlier expansion may have rewired its operands.
      if (!InstructionMatchesPattern(inst))
        continue;
      int64_t count_before = comp->instruction_count();
      llvm::Expected<HloInstruction *> replacement = ExpandInstruction(inst);
      if (!replacement)
        return replacement.takeError();
      HloInstruction *with = *replacement;
      if (!with)
        return makeError("pass '" + name() + "' expanded '" + inst->name() +
                         "' into nothing");
      // Keeping the instruction is no change, unless the expansion added
      // instructions anyway: "changed" must stay truthful.
      if (with == inst) {
        changed |= comp->instruction_count() != count_before;
        continue;
      }
      if (with->parent() != comp)
        return makeError("pass '" + name() + "' replaced '" + inst->name() + "' with '" +
                         with->name() + "', which is not in computation '" + comp->name() +
                         "'");
      // Rewiring the uses would make the replacement its own operand.
      if (llvm::is_contained(with->operands(), inst))
        return makeError("pass '" + name() + "' replaced '" + inst->name() + "' with '" +
                         with->name() + "', which uses it");
      MoveControlDependencies(inst, with);
      if (llvm::Error err = inst->ReplaceAllUsesWith(with))
        return makeError("pass '" + name() + "': " + llvm::toString(std::move(err)));
      comp->RemoveInstructionAndUnusedOperands(
          inst, [&](HloInstruction *removed) { pending.erase(removed); });
      changed = true;
    }
  }
  return changed;
}

} // namespace loom::hlo
