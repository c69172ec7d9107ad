#include "loom/bir/passes/CoreBarriers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <iterator>

namespace loom::bir {

InstCoreBarrier *insertCoreBarrier(BasicBlock &BB, BasicBlock::iterator Pos,
                                   std::string Name,
                                   std::vector<unsigned> Cores, Engine Eng) {
  auto CB = std::make_unique<InstCoreBarrier>(std::move(Name), Eng, 0,
                                              std::move(Cores));
  return llvm::cast<InstCoreBarrier>(BB.insert(Pos, std::move(CB)));
}

bool renumberCoreBarriers(Program &P, unsigned Subgraph) {
  std::vector<Module *> Mods;
  for (auto &M : P)
    if (M->getSubgraphId() == Subgraph)
      Mods.push_back(M.get());
  llvm::sort(Mods, [](const Module *A, const Module *B) {
    return A->getNeuronCoreId() < B->getNeuronCoreId();
  });
  llvm::StringMap<unsigned> Ids;
  bool Changed = false;
  for (Module *M : Mods)
    for (const auto &BB : M->blocks())
      for (const auto &I : *BB) {
        auto *CB = llvm::dyn_cast<InstCoreBarrier>(I.get());
        if (!CB)
          continue;
        unsigned Id = Ids.try_emplace(CB->getName(), Ids.size()).first->second;
        if (CB->getId() != Id) {
          CB->setId(Id);
          Changed = true;
        }
      }
  return Changed;
}

PrecedingMap getPrecedingCoreBarrierOrLocalCCMap(const Module &M) {
  PrecedingMap Map;
  for (const auto &BB : M.blocks()) {
    const Instruction *Last = nullptr;
    for (const auto &I : *BB) {
      const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(I.get());
      if (CC && CC->isLocal()) {
        Map[CC] = Last;
        Last = CC;
      } else if (llvm::isa<InstCoreBarrier>(I.get())) {
        Last = I.get();
      }
    }
  }
  return Map;
}

static bool covers(llvm::ArrayRef<unsigned> Cores,
                   llvm::ArrayRef<unsigned> Group) {
  return llvm::all_of(
      Group, [&](unsigned Core) { return llvm::is_contained(Cores, Core); });
}

bool precededByLocalCC(const InstCollectiveCompute &CC,
                       const PrecedingMap &Map) {
  auto It = Map.find(&CC);
  if (It == Map.end() || !It->second)
    return false;
  const Instruction *Prev = It->second;
  // Only directly before: an instruction in between may be one that CC
  // follows in engine order without a dependency, which the fence would
  // no longer cover.
  if (CC.getIterator() == CC.getBasicBlock()->begin() ||
      std::prev(CC.getIterator())->get() != Prev)
    return false;
  if (!llvm::is_contained(CC.dependencies(), Prev))
    return false;
  if (const auto *CB = llvm::dyn_cast<InstCoreBarrier>(Prev)) {
    if (!covers(CB->getCores(), CC.getGroup()))
      return false;
  } else {
    // A local collective lowered or fenced in the same run ends with a
    // barrier over its group, which CC then waits on instead.
    const auto &P = llvm::cast<InstCollectiveCompute>(*Prev);
    if (!covers(P.getGroup(), CC.getGroup()))
      return false;
  }
  auto Covered = [&](const Instruction *D) {
    return D == Prev || llvm::is_contained(Prev->dependencies(), D);
  };
  if (!llvm::all_of(CC.dependencies(), Covered))
    return false;
  // On a DMA queue CC also follows the queue's previous instruction, which
  // the fence must cover too.
  if (isDMAQueue(CC.getEngine()))
    for (auto It = CC.getIterator(); It != CC.getBasicBlock()->begin();) {
      --It;
      if ((*It)->getEngine() == CC.getEngine())
        return Covered(It->get());
    }
  return true;
}

bool followedByCoreBarrier(const InstCollectiveCompute &CC) {
  for (const Instruction *U : CC.users()) {
    const auto *CB = llvm::dyn_cast<InstCoreBarrier>(U);
    if (!CB || !covers(CB->getCores(), CC.getGroup()))
      continue;
    if (llvm::all_of(CC.users(), [&](const Instruction *V) {
          return V == CB || llvm::is_contained(V->dependencies(), CB);
        }))
      return true;
  }
  return false;
}

} // namespace loom::bir
