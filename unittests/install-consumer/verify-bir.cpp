// Loads a BIR JSON program (which verifies it) through the headers and
// libraries of an installed loom (loom::bir) and prints its modules' names.
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: verify-bir FILE.json\n";
    return 2;
  }
  auto Buffer = llvm::MemoryBuffer::getFile(argv[1]);
  if (!Buffer) {
    llvm::errs() << "verify-bir: " << argv[1] << ": " << Buffer.getError().message() << "\n";
    return 1;
  }
  auto P = loom::bir::parseProgram((*Buffer)->getBuffer(), argv[1]);
  if (!P) {
    llvm::errs() << "verify-bir: " << llvm::toString(P.takeError()) << "\n";
    return 1;
  }
  if (llvm::Error E = loom::bir::verifyProgram(*P)) {
    llvm::errs() << "verify-bir: " << llvm::toString(std::move(E)) << "\n";
    return 1;
  }
  llvm::outs() << "verified " << P->size() << " module(s):";
  for (const auto &M : *P)
    llvm::outs() << " " << M->getName();
  llvm::outs() << "\n";
  return 0;
}
