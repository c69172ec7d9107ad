//===- HloTestUtil.h - Helpers shared by the HLO unit tests ---------------===//
#ifndef LOOM_UNITTESTS_HLO_HLOTESTUTIL_H
#define LOOM_UNITTESTS_HLO_HLOTESTUTIL_H

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::hlo::testutil {

/// The source tree: this header is unittests/hlo/HloTestUtil.h in it. The
/// shared corpus, when present, is SourceRoot() + "/../shared/corpus/hlo".
inline std::string SourceRoot() {
  llvm::SmallString<256> root(__FILE__);
  llvm::sys::path::remove_filename(root); // unittests/hlo
  llvm::sys::path::remove_filename(root); // unittests
  llvm::sys::path::remove_filename(root); // the tree
  return std::string(root);
}

/// Every .hlo file under `dir`, sorted; empty when `dir` does not exist.
inline std::vector<std::string> HloFilesUnder(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".hlo")
      files.push_back(it->path());
  llvm::sort(files);
  return files;
}

/// The file's bytes; empty when it cannot be read.
inline std::string ReadFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// Parses `text`; a parse error is a test failure and nullptr.
inline std::unique_ptr<HloModule> Parse(llvm::StringRef text) {
  auto module = ParseHloModule(text);
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

/// The instruction named `name` in any computation; a test failure and
/// nullptr when there is none.
inline HloInstruction *Find(const HloModule &module, llvm::StringRef name) {
  for (HloComputation *comp : module.computations())
    if (HloInstruction *inst = comp->GetInstructionWithName(name))
      return inst;
  ADD_FAILURE() << "no instruction " << name.str();
  return nullptr;
}

} // namespace loom::hlo::testutil

#endif
