#include "loom/hlo/parser/HloClone.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/support/Error.h"

namespace loom::hlo {

llvm::Expected<std::unique_ptr<HloModule>> CloneModule(const HloModule &module) {
  llvm::Expected<std::unique_ptr<HloModule>> clone =
      ParseHloModuleOwned(module.ToString(), "<clone of " + module.name() + ">");
  if (!clone)
    return makeError("module '" + module.name() +
                     "' does not parse back from its printed text: " +
                     llvm::toString(clone.takeError()));
  return clone;
}

} // namespace loom::hlo
