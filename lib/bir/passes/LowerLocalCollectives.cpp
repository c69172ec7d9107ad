#include "loom/bir/passes/LowerLocalCollectives.h"

#include "loom/support/Error.h"

namespace loom::bir {

llvm::Expected<bool> LowerLocalCollectives::run(Program &Modules) {
  return makeError("lower_local_collectives is not implemented yet");
}

} // namespace loom::bir
