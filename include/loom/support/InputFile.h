//===- InputFile.h - Whole input files for the command-line tools ---------===//
//
// The tools read their inputs whole: a file, or stdin for "-". A read
// error is a value naming the path, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_INPUTFILE_H
#define LOOM_SUPPORT_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace loom {

/// Reads a whole file ("-" is stdin).
llvm::Expected<std::string> readInput(llvm::StringRef Path);
/// The same without a copy: a large file is mapped, not read.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readInputBuffer(llvm::StringRef Path);

} // namespace loom

#endif
