#include "loom/bir/passes/InsertPTCOMFlat.h"

#include "loom/support/Error.h"

namespace loom::bir {

llvm::Expected<bool> InsertPTCOMFlat::run(Program &Modules) {
  return makeError("insert_ptcom_flat is not implemented yet");
}

} // namespace loom::bir
