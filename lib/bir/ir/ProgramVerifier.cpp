//===- ProgramVerifier.cpp - What the modules of a program agree on -------===//
//
// verifyProgram (Verifier.h): every module verified alone, then each
// subgraph's modules together (remote locations, completions, semaphores),
// and the order of the modules (by subgraph, then core), which
// Program::subgraphs and the writer keep.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Verifier.h"

#include "VerifierInternal.h"

#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Casting.h"

#include <map>
#include <set>

namespace loom::bir {

using namespace verifier;

namespace {

/// What the modules of one subgraph must agree on: remote locations name
/// real memory of the peer, completions wait for real writes, and every
/// semaphore that is waited on is signalled (and the other way round).
class SubgraphVerifier {
public:
  SubgraphVerifier(const Program &P, const Subgraph &S) : P(P) {
    for (size_t K = 0; K < S.size(); ++K)
      ByCore[S.modules()[K]->getNeuronCoreId()] = S.indices()[K];
  }
  llvm::Error verify();

private:
  const Module *module(unsigned Core) const {
    auto It = ByCore.find(Core);
    return It == ByCore.end() ? nullptr : P[It->second].get();
  }
  std::string noModule(unsigned Core) const {
    return "there is no module for core " + std::to_string(Core) +
           " in this subgraph";
  }
  const Instruction *findInstruction(unsigned Core, llvm::StringRef Name);
  llvm::Error verifyRemote(unsigned Index, size_t LocIndex,
                           const MemoryLocation &L);
  llvm::Error verifyInstruction(unsigned Index, const Instruction &I,
                                const std::string &Path);
  llvm::Error verifyCopiesListTheirCore(unsigned Index, const Instruction &I,
                                        const std::string &Path);

  const Program &P;
  std::map<unsigned, unsigned> ByCore;
  std::map<unsigned, llvm::StringMap<const Instruction *>> Names;
  /// (core, semaphore) pairs that are waited on and that are signalled.
  std::set<std::pair<unsigned, std::string>> Waited, Signalled;
  /// Where each waited semaphore is first waited on, for the error message.
  std::map<std::pair<unsigned, std::string>, std::string> WaitPaths,
      SignalPaths;
};

const Instruction *SubgraphVerifier::findInstruction(unsigned Core,
                                                     llvm::StringRef Name) {
  const Module *Mod = module(Core);
  if (!Mod)
    return nullptr;
  auto [It, New] = Names.try_emplace(Core);
  llvm::StringMap<const Instruction *> &ByName = It->second;
  if (New)
    Mod->walk([&](Instruction &I) { ByName[I.getName()] = &I; });
  return ByName.lookup(Name);
}

llvm::Error SubgraphVerifier::verifyRemote(unsigned Index, size_t LocIndex,
                                           const MemoryLocation &L) {
  std::string Path =
      indexed(modulePath(Index), "memory_locations", LocIndex) + ".remote";
  if (llvm::Error E = verifyRemoteTarget(L, module(L.getRemote()->Core)))
    return failAt(Path, llvm::toString(std::move(E)));
  return llvm::Error::success();
}

/// Before lnc_splitter a subgraph has one module, for core 0, written for the
/// whole logical core: every core will run a copy of it, identical but for
/// its core id. A barrier or a local collective of that module must
/// therefore list every core, or some core's copy would not take part in
/// what it executes.
llvm::Error SubgraphVerifier::verifyCopiesListTheirCore(unsigned Index,
                                                        const Instruction &I,
                                                        const std::string &Path) {
  unsigned Lnc = P[Index]->getTargetOptions().LncSize;
  if (Lnc == 1 || ByCore.size() != 1 || P[Index]->getNeuronCoreId() != 0)
    return llvm::Error::success();
  llvm::ArrayRef<unsigned> Cores;
  std::string Field;
  if (const auto *CB = llvm::dyn_cast<InstCoreBarrier>(&I)) {
    Cores = CB->getCores();
    Field = ".cores";
  } else if (const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(&I)) {
    if (!CC->isLocal())
      return llvm::Error::success();
    Cores = CC->getGroup();
    Field = ".group";
  } else {
    return llvm::Error::success();
  }
  for (unsigned Core = 0; Core < Lnc; ++Core)
    if (!llvm::is_contained(Cores, Core))
      return failAt(Path + Field,
                    "core " + llvm::Twine(Core) +
                        " is not listed, but the module is not split yet: "
                        "every core 0.." +
                        llvm::Twine(Lnc - 1) +
                        " of the logical core runs a copy of it");
  return llvm::Error::success();
}

llvm::Error SubgraphVerifier::verifyInstruction(unsigned Index,
                                                const Instruction &I,
                                                const std::string &Path) {
  unsigned Self = P[Index]->getNeuronCoreId();
  if (llvm::Error E = verifyCopiesListTheirCore(Index, I, Path))
    return E;
  for (size_t K = 0; K < I.outputs().size(); ++K) {
    const MemoryLocation *L = I.outputs()[K].getLocation();
    if (!L->isRemote())
      continue;
    const RemoteRef &R = *L->getRemote();
    const MemoryLocation *T =
        module(R.Core)->getMemoryLocations().getMemlocByName(R.MemLoc);
    if (!T->isWrittenByAnotherCore())
      return failAt(indexed(Path, "outputs", K),
                    "writes '" + R.MemLoc + "' of core " + llvm::Twine(R.Core) +
                        " through '" + L->getName() + "', but core " +
                        llvm::Twine(R.Core) + "'s '" + R.MemLoc +
                        "' is not marked written_by_another_core");
  }
  if (const auto *TC = llvm::dyn_cast<InstTensorCompletion>(&I)) {
    for (size_t K = 0; K < TC->getWaits().size(); ++K) {
      const CompletionWait &W = TC->getWaits()[K];
      std::string WP = indexed(Path, "waits", K);
      if (!module(W.Core))
        return failAt(WP + ".core", noModule(W.Core));
      const Instruction *Target = findInstruction(W.Core, W.Instruction);
      if (!Target)
        return failAt(WP + ".instruction",
                      "core " + llvm::Twine(W.Core) +
                          " has no instruction named '" + W.Instruction + "'");
      if (Target->outputs().empty())
        return failAt(WP + ".instruction",
                      "'" + W.Instruction + "' of core " + llvm::Twine(W.Core) +
                          " writes nothing; a completion waits for writes");
    }
  }
  if (const auto *Copy = llvm::dyn_cast<InstCopyBase>(&I))
    if (const std::optional<SemaphoreSignal> &S = Copy->getSignal()) {
      if (!module(S->Core))
        return failAt(Path + ".signal.core", noModule(S->Core));
      Signalled.insert({S->Core, S->Semaphore});
      SignalPaths.try_emplace({S->Core, S->Semaphore}, Path);
    }
  if (const auto *SW = llvm::dyn_cast<InstSemaphoreWait>(&I)) {
    std::pair<unsigned, std::string> Key{Self, SW->getSemaphore().str()};
    Waited.insert(Key);
    WaitPaths.try_emplace(Key, Path);
  }
  return llvm::Error::success();
}

llvm::Error SubgraphVerifier::verify() {
  // A SharedDRAM name is one buffer for every core, so it starts with one
  // content: every core's copy has the same initial data, or none has any.
  llvm::StringMap<std::pair<const MemoryLocation *, unsigned>> SharedFirst;
  for (auto [Core, Index] : ByCore) {
    const Module &Mod = *P[Index];
    const MemoryLocationSet::Storage &Locs = Mod.getMemoryLocations().locations();
    for (size_t L = 0; L < Locs.size(); ++L) {
      if (Locs[L]->isRemote())
        if (llvm::Error E = verifyRemote(Index, L, *Locs[L]))
          return E;
      if (Locs[L]->getKind() != MemoryKind::SharedDRAM || Locs[L]->isRemote())
        continue;
      auto [It, New] =
          SharedFirst.try_emplace(Locs[L]->getName(), Locs[L].get(), Core);
      if (New)
        continue;
      const MemoryLocation &Other = *It->second.first;
      if (Other.getInitialData() != Locs[L]->getInitialData())
        return failAt(indexed(modulePath(Index), "memory_locations", L) +
                          ".initial_data",
                      "SharedDRAM location '" + Locs[L]->getName() +
                          "' starts with other initial data than on core " +
                          llvm::Twine(It->second.second) +
                          "; the cores share its bytes");
    }
  }
  for (auto [Core, Index] : ByCore) {
    const Module &Mod = *P[Index];
    for (unsigned B = 0; B < Mod.getNumBlocks(); ++B) {
      std::string BP = indexed(modulePath(Index), "blocks", B);
      size_t K = 0;
      for (const auto &I : *Mod.getBlock(B))
        if (llvm::Error E =
                verifyInstruction(Index, *I, indexed(BP, "instructions", K++)))
          return E;
    }
  }
  for (const auto &Key : Waited)
    if (!Signalled.count(Key))
      return failAt(WaitPaths[Key] + ".semaphore",
                    "no copy of this subgraph signals semaphore '" +
                        Key.second + "' of core " + llvm::Twine(Key.first));
  for (const auto &Key : Signalled)
    if (!Waited.count(Key))
      return failAt(SignalPaths[Key] + ".signal",
                    "signals semaphore '" + Key.second + "' of core " +
                        llvm::Twine(Key.first) +
                        ", which no SemaphoreWait of that core waits on");
  return llvm::Error::success();
}

} // namespace

llvm::Error verifyProgram(const Program &P) {
  if (P.empty())
    return makeError("$.modules: a program needs at least one module");
  std::set<std::pair<unsigned, unsigned>> Seen;
  std::set<unsigned> Finished;
  const TargetOptions &First = P[0]->getTargetOptions();
  for (unsigned I = 0; I < P.size(); ++I) {
    const Module &M = *P[I];
    std::string Path = modulePath(I);
    if (llvm::Error E = verifyModule(M, Path))
      return E;
    const TargetOptions &O = M.getTargetOptions();
    if (O.LncSize != First.LncSize || O.Arch != First.Arch)
      return failAt(Path + ".pass_options",
                    "lnc_size " + llvm::Twine(O.LncSize) + " and target " +
                        enumName(O.Arch) + " differ from $.modules[0]'s " +
                        llvm::Twine(First.LncSize) + " and " +
                        enumName(First.Arch));
    if (!Seen.insert({M.getSubgraphId(), M.getNeuronCoreId()}).second)
      return failAt(Path, "a second module for subgraph " +
                              llvm::Twine(M.getSubgraphId()) + ", core " +
                              llvm::Twine(M.getNeuronCoreId()));
    // The documented order: by subgraph, then by core. lnc_splitter and
    // the writer keep it, and subgraphs() relies on nothing else.
    if (I == 0)
      continue;
    const Module &Prev = *P[I - 1];
    if (M.getSubgraphId() == Prev.getSubgraphId()) {
      if (M.getNeuronCoreId() < Prev.getNeuronCoreId())
        return failAt(Path, "core " + llvm::Twine(M.getNeuronCoreId()) +
                                " of subgraph " +
                                llvm::Twine(M.getSubgraphId()) +
                                " comes after core " +
                                llvm::Twine(Prev.getNeuronCoreId()) +
                                "; a program lists its modules by subgraph, "
                                "then by core");
      continue;
    }
    Finished.insert(Prev.getSubgraphId());
    if (Finished.count(M.getSubgraphId()))
      return failAt(Path, "subgraph " + llvm::Twine(M.getSubgraphId()) +
                              " appears again after subgraph " +
                              llvm::Twine(Prev.getSubgraphId()) +
                              "; a program lists its modules by subgraph, "
                              "then by core");
  }
  for (const Subgraph &S : P.subgraphs())
    if (llvm::Error E = SubgraphVerifier(P, S).verify())
      return E;
  return llvm::Error::success();
}

} // namespace loom::bir
