//===- HloTestUtil.h - Helpers shared by the HLO unit tests ---------------===//
#ifndef LOOM_UNITTESTS_HLO_HLOTESTUTIL_H
#define LOOM_UNITTESTS_HLO_HLOTESTUTIL_H

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <memory>

namespace loom::hlo::testutil {

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
