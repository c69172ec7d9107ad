#include "loom/hlo/passes/HloDCE.h"

namespace loom::hlo {

llvm::Expected<bool> HloDCE::Run(HloModule &module) {
  bool changed = false;
  for (HloComputation *comp : module.computations())
    changed |= comp->RemoveDeadInstructions();
  return changed;
}

} // namespace loom::hlo
