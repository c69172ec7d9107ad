#include "loom/bir/passes/LncSplitter.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"

namespace loom::bir {

namespace {

/// The modules of one subgraph, as indices into the program.
struct Subgraph {
  unsigned Id;
  std::vector<unsigned> Modules;
};

/// Subgraphs in the order they first appear.
std::vector<Subgraph> groupBySubgraph(const Program &P) {
  std::vector<Subgraph> Groups;
  for (unsigned I = 0; I < P.size(); ++I) {
    unsigned Id = P[I]->getSubgraphId();
    auto It =
        llvm::find_if(Groups, [&](const Subgraph &S) { return S.Id == Id; });
    if (It == Groups.end())
      Groups.push_back({Id, {I}});
    else
      It->Modules.push_back(I);
  }
  return Groups;
}

/// True if the subgraph has exactly one module for each core 0..Lnc-1.
bool isSplit(const Program &P, const Subgraph &S, unsigned Lnc) {
  if (S.Modules.size() != Lnc)
    return false;
  std::vector<bool> Seen(Lnc);
  for (unsigned I : S.Modules) {
    unsigned Core = P[I]->getNeuronCoreId();
    if (Core >= Lnc || Seen[Core])
      return false;
    Seen[Core] = true;
  }
  return true;
}

llvm::Error checkSplittable(const Program &P, const Subgraph &S, unsigned Lnc) {
  if (S.Modules.size() == 1 && P[S.Modules[0]]->getNeuronCoreId() == 0)
    return llvm::Error::success();
  return makeError("subgraph " + llvm::Twine(S.Id) + " has " +
                   llvm::Twine(S.Modules.size()) +
                   " module(s); expected one for core 0, or one for each of "
                   "cores 0.." +
                   llvm::Twine(Lnc - 1));
}

/// The copies of module Index for cores 1..Lnc-1, made through JSON so that
/// they share nothing with it: the module is saved once, in compact form, and
/// loaded once per core. Core 0 keeps the module itself, which is already
/// core 0's (checkSplittable), so a split holds Lnc modules, not Lnc + 1.
llvm::Expected<Program> cloneForOtherCores(const Program &P, unsigned Index,
                                           unsigned Lnc) {
  Program Copies;
  if (Lnc < 2)
    return Copies;
  std::string Saved = formatModule(*P[Index]);
  for (unsigned Core = 1; Core < Lnc; ++Core) {
    llvm::Expected<std::unique_ptr<Module>> Copy =
        parseModule(Saved, getModulePath(Index));
    if (!Copy)
      return Copy.takeError();
    (*Copy)->setNeuronCoreId(Core);
    Copies.push_back(std::move(*Copy));
  }
  return Copies;
}

} // namespace

llvm::Expected<bool> LncSplitter::run(Program &Modules) {
  if (Modules.empty())
    return false;
  unsigned Lnc = Modules[0]->getPassOptions().LncSize;
  for (unsigned I = 1; I < Modules.size(); ++I)
    if (Modules[I]->getPassOptions().LncSize != Lnc)
      return makeError(getModulePath(I) + " has lnc_size " +
                       llvm::Twine(Modules[I]->getPassOptions().LncSize) +
                       ", $.modules[0] " + llvm::Twine(Lnc));

  // Copy every subgraph that needs it before touching the program, so that
  // a failure leaves it as it was.
  std::vector<Subgraph> Groups = groupBySubgraph(Modules);
  std::vector<Program> Copies(Groups.size());
  std::vector<bool> Split(Groups.size());
  bool Changed = false;
  for (size_t G = 0; G < Groups.size(); ++G) {
    if (isSplit(Modules, Groups[G], Lnc))
      continue;
    if (llvm::Error E = checkSplittable(Modules, Groups[G], Lnc))
      return E;
    llvm::Expected<Program> C =
        cloneForOtherCores(Modules, Groups[G].Modules[0], Lnc);
    if (!C)
      return C.takeError();
    Copies[G] = std::move(*C);
    Split[G] = true;
    Changed = true;
  }
  if (!Changed)
    return false;

  Program Out;
  for (size_t G = 0; G < Groups.size(); ++G) {
    if (!Split[G]) {
      llvm::sort(Groups[G].Modules, [&](unsigned A, unsigned B) {
        return Modules[A]->getNeuronCoreId() < Modules[B]->getNeuronCoreId();
      });
      for (unsigned I : Groups[G].Modules)
        Out.push_back(std::move(Modules[I]));
      continue;
    }
    Out.push_back(std::move(Modules[Groups[G].Modules[0]]));
    for (auto &Copy : Copies[G])
      Out.push_back(std::move(Copy));
  }
  Modules = std::move(Out);
  return true;
}

} // namespace loom::bir
