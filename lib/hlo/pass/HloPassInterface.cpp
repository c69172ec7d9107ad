//===- HloPassInterface.cpp - Remarks shared by every pass ----------------===//
#include "loom/hlo/pass/HloPassInterface.h"

#include "loom/hlo/ir/HloComputation.h"

namespace loom::hlo {

void HloPassInterface::Remark(const HloInstruction &instruction, const llvm::Twine &text) {
  if (!remark_stream_ || !remarked_.insert(&instruction).second)
    return;
  if (const HloComputation *computation = instruction.parent())
    *remark_stream_ << computation->name();
  *remark_stream_ << "/" << instruction.name() << ": " << text << "\n";
}

} // namespace loom::hlo
