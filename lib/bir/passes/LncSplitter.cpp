#include "loom/bir/passes/LncSplitter.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"

namespace loom::bir {

namespace {

llvm::Error checkSplittable(const Subgraph &S, unsigned Lnc) {
  if (S.size() == 1 && S.modules()[0]->getNeuronCoreId() == 0)
    return llvm::Error::success();
  return makeError("subgraph " + llvm::Twine(S.getId()) + " has " +
                   llvm::Twine(S.size()) +
                   " module(s); expected one for core 0, or one for each of "
                   "cores 0.." +
                   llvm::Twine(Lnc - 1));
}

/// The copies of core 0's module for cores 1..Lnc-1, deep copies in memory
/// (Module::clone) that share nothing with it. Core 0 keeps the module
/// itself (checkSplittable), so a split holds Lnc modules, not Lnc + 1.
Program cloneForOtherCores(const Module &M, unsigned Lnc) {
  Program Copies;
  for (unsigned Core = 1; Core < Lnc; ++Core) {
    std::unique_ptr<Module> Copy = M.clone();
    Copy->setNeuronCoreId(Core);
    Copies.push_back(std::move(Copy));
  }
  return Copies;
}

} // namespace

llvm::Expected<bool> LncSplitter::run(Program &Modules) {
  if (Modules.empty())
    return false;
  unsigned Lnc = Modules[0]->getTargetOptions().LncSize;
  for (unsigned I = 1; I < Modules.size(); ++I)
    if (Modules[I]->getTargetOptions().LncSize != Lnc)
      return makeError(getModulePath(I) + " has lnc_size " +
                       llvm::Twine(Modules[I]->getTargetOptions().LncSize) +
                       ", $.modules[0] " + llvm::Twine(Lnc));

  // Check every subgraph before touching the program, so that a failure
  // leaves it as it was.
  std::vector<Subgraph> Groups = Modules.subgraphs();
  std::vector<bool> Split(Groups.size());
  bool Changed = false;
  for (size_t G = 0; G < Groups.size(); ++G) {
    if (Groups[G].isSplit(Lnc))
      continue;
    if (llvm::Error E = checkSplittable(Groups[G], Lnc))
      return E;
    Split[G] = true;
    Changed = true;
  }
  if (!Changed)
    return false;

  // subgraphs() lists each subgraph's modules by core, so the result is
  // ordered by subgraph, then by core.
  Program Out;
  for (size_t G = 0; G < Groups.size(); ++G) {
    llvm::ArrayRef<unsigned> Indices = Groups[G].indices();
    Program Copies;
    if (Split[G])
      Copies = cloneForOtherCores(*Modules[Indices[0]], Lnc);
    for (unsigned I : Indices)
      Out.push_back(std::move(Modules[I]));
    for (std::unique_ptr<Module> &Copy : Copies)
      Out.push_back(std::move(Copy));
  }
  Modules = std::move(Out);
  return true;
}

} // namespace loom::bir
