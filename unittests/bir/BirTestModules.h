//===- BirTestModules.h - Small BIR modules built in code -------*- C++ -*-===//
//
// The IR, JSON and pass tests share one small two-block module so that each
// test states only what it changes.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_UNITTESTS_BIR_BIRTESTMODULES_H
#define LOOM_UNITTESTS_BIR_BIRTESTMODULES_H

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Module.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace loom::bir::test {

/// The message of E, or "" on success.
inline std::string errorText(llvm::Error E) {
  return E ? llvm::toString(std::move(E)) : "";
}

/// NumElements elements in each of the 128 partitions, from byte 0.
inline AccessPattern tile(MemoryLocation *L, uint64_t NumElements) {
  return AccessPattern(L, 0, 128, 0, {{1, NumElements}}, L->getType());
}

/// entry: copy a -> b; double = b + b into a; jump to exit.
/// exit:  a core barrier over cores 0 and 1 after double; return.
struct SmallModule {
  std::unique_ptr<Module> M;
  MemoryLocation *A, *B;
  BasicBlock *Entry, *Exit;
  Instruction *Copy, *Double, *Jump, *Barrier, *Ret;
};

inline MemoryLocation *addLocation(Module &M, std::string Name,
                                   uint64_t TensorId, MemoryKind Kind,
                                   DataType T, unsigned Partitions,
                                   uint64_t Bytes) {
  return llvm::cantFail(
      M.getMemoryLocations().add(std::make_unique<MemoryLocation>(
          std::move(Name), TensorId, Kind, T, Partitions, Bytes)));
}

inline SmallModule buildSmallModule() {
  SmallModule S;
  S.M = std::make_unique<Module>("m", 0, 0, TargetOptions{2, Target::Trn2});
  S.A = addLocation(*S.M, "a", 0, MemoryKind::SB, DataType::FP32, 128, 1024);
  S.B = addLocation(*S.M, "b", 1, MemoryKind::SB, DataType::FP32, 128, 1024);
  S.Entry = S.M->createBlock("entry");
  S.Exit = S.M->createBlock("exit");
  S.Entry->addSuccessor(S.Exit);

  S.Copy =
      S.Entry->append(std::make_unique<InstTensorCopy>("copy", Engine::DVE));
  S.Copy->addInput(tile(S.A, 256));
  S.Copy->addOutput(tile(S.B, 256));
  S.Double = S.Entry->append(
      std::make_unique<InstTensorTensor>("double", Engine::DVE, ArithOp::Add));
  S.Double->addInput(tile(S.B, 256));
  S.Double->addInput(tile(S.B, 256));
  S.Double->addOutput(tile(S.A, 256));
  S.Double->addDependency(S.Copy);
  S.Jump = S.Entry->append(
      std::make_unique<InstBranch>("jump", Engine::SP, BranchKind::Jump));

  S.Barrier = S.Exit->append(std::make_unique<InstCoreBarrier>(
      "cb", Engine::POOL, 0, std::vector<unsigned>{0, 1}));
  S.Barrier->addDependency(S.Double);
  S.Ret = S.Exit->append(
      std::make_unique<InstBranch>("ret", Engine::SP, BranchKind::Return));
  return S;
}

/// A one-block module that only returns.
inline std::unique_ptr<Module> returnOnlyModule(TargetOptions O,
                                                unsigned Core = 0) {
  auto M = std::make_unique<Module>("t", Core, 0, O);
  M->createBlock("b")->append(
      std::make_unique<InstBranch>("ret", Engine::SP, BranchKind::Return));
  return M;
}

} // namespace loom::bir::test

#endif
