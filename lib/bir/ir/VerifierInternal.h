//===- VerifierInternal.h - The parts of the BIR verifier -------*- C++ -*-===//
//
// The verifier is in three files: Verifier.cpp checks one module's header,
// locations, blocks, operands, access patterns and dependencies (and that
// they form no cycle), VerifierInstructions.cpp what each kind of
// instruction requires of its operands and attributes, ProgramVerifier.cpp
// what the modules of a subgraph must agree on and the order of a
// program's modules. Every error names the JSON path of what is wrong.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_IR_VERIFIERINTERNAL_H
#define LOOM_LIB_BIR_IR_VERIFIERINTERNAL_H

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Module.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Error.h"

#include <string>

namespace loom::bir::verifier {

llvm::Error failAt(const llvm::Twine &Path, const llvm::Twine &Msg);

std::string at(const llvm::Twine &Path, size_t I);

std::string indexed(llvm::StringRef Path, llvm::StringRef Field, size_t I);

/// Module Index of the program's document.
std::string modulePath(unsigned Index);

std::string shapeOf(const AccessPattern &AP);

bool sameShape(const AccessPattern &A, const AccessPattern &B);

llvm::StringRef typeName(const Instruction &I);

class ModuleVerifier {
public:
  ModuleVerifier(const Module &M, llvm::StringRef Path)
      : M(M), Path(Path.str()) {}
  llvm::Error verify();

private:
  llvm::Error verifyHeader();
  llvm::Error verifyLocation(const MemoryLocation &L, const std::string &P);
  llvm::Error verifyBlock(const BasicBlock &BB, const std::string &P);
  llvm::Error verifyTerminator(const BasicBlock &BB, const std::string &P);
  llvm::Error verifyInstruction(const Instruction &I, const std::string &P);
  llvm::Error verifyOperands(const Instruction &I, const std::string &P);
  llvm::Error verifyAccessPattern(const AccessPattern &AP,
                                  const std::string &P);
  llvm::Error verifyDependencies(const Instruction &I, const std::string &P);
  llvm::Error verifyKind(const Instruction &I, const std::string &P);
  llvm::Error verifyMatmul(const Instruction &I, const std::string &P);
  llvm::Error verifyOnChipElementwise(const Instruction &I,
                                      const std::string &P);
  llvm::Error verifyActivation(const InstActivation &I, const std::string &P);
  llvm::Error verifyTensorTensor(const InstTensorTensor &I,
                                 const std::string &P);
  llvm::Error verifySelect(const Instruction &I, const std::string &P);
  llvm::Error verifyTensorReduce(const InstTensorReduce &I,
                                 const std::string &P);
  llvm::Error verifyIota(const InstIota &I, const std::string &P);
  llvm::Error verifyDMACopy(const InstDMACopy &I, const std::string &P);
  llvm::Error verifySB2SB(const Instruction &I, const std::string &P);
  llvm::Error verifyCollective(const InstCollectiveCompute &I,
                               const std::string &P);
  llvm::Error verifyBarrier(const InstCoreBarrier &I, const std::string &P);
  llvm::Error verifyCores(llvm::ArrayRef<unsigned> Cores, const std::string &P,
                          bool Local);
  llvm::Error verifyAcyclic();
  llvm::Error verifyCoreIndex(unsigned Core, const std::string &P);
  llvm::Error verifySignal(const InstCopyBase &I, const std::string &P);
  llvm::Error verifyCompletion(const InstTensorCompletion &I,
                               const std::string &P);

  /// The path of I, found again only for an error message: keeping every
  /// instruction's path would cost a string per instruction.
  std::string instructionPath(const Instruction &I) const;

  const Module &M;
  std::string Path;
  /// Views of the instructions' own names: a StringSet would copy each.
  llvm::DenseSet<llvm::StringRef> InstNames;
  llvm::DenseMap<unsigned, const Instruction *> BarrierIds;
};

} // namespace loom::bir::verifier

#endif
