//===- Error.h - Error values shared by every loom library ----------------===//
//
// loom reports every failure as an llvm::Error up to the tool boundary; the
// tools print the message and pick the exit code. These helpers keep the
// message formats uniform: "file:line:col: message" for located input errors.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_ERROR_H
#define LOOM_SUPPORT_ERROR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace loom {

/// A plain error carrying a message.
inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// A position in an input buffer, 1-based like compilers print it.
struct SourceLocation {
  llvm::StringRef File;
  unsigned Line = 0;
  unsigned Column = 0;
};

/// An error located in an input: "file:line:col: message".
llvm::Error makeLocatedError(const SourceLocation &Loc, const llvm::Twine &Msg);

/// Computes the 1-based line and column of Offset inside Buffer.
SourceLocation locate(llvm::StringRef File, llvm::StringRef Buffer, size_t Offset);

} // namespace loom

#endif
