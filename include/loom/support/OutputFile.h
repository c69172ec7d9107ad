//===- OutputFile.h - Atomic output for the command-line tools ------------===//
//
// A failed run must never leave a half-written or clobbered output: the tools
// write to a temporary file beside the target and rename it into place only
// once everything succeeded.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_OUTPUTFILE_H
#define LOOM_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/Error.h"

#include <string>

namespace loom {

/// Writes Contents to Path ("-" is stdout) atomically: temporary file in the
/// same folder, then rename. On error Path is untouched. A symbolic link is
/// followed (its target is replaced); a device or a pipe (/dev/null) is
/// written in place, as renaming would replace it with a regular file.
llvm::Error writeOutputAtomically(llvm::StringRef Path, llvm::StringRef Contents);

/// Same, with the contents streamed by Write into the (temporary) file, so a
/// large output is never held in memory as one string.
llvm::Error writeOutputAtomically(llvm::StringRef Path,
                                  llvm::function_ref<void(llvm::raw_ostream &)> Write);

} // namespace loom

#endif
