#include "loom/bir/passes/CoreBarriers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <iterator>

namespace loom::bir {

/// How many ancestors precededByLocalCC looks at, so that a collective
/// costs a bounded amount of work however long its dependency chains.
constexpr unsigned MaxAncestorSearch = 4096;

InstCoreBarrier *insertCoreBarrier(BasicBlock &BB, BasicBlock::iterator Pos,
                                   std::string Name,
                                   std::vector<unsigned> Cores, Engine Eng) {
  auto CB = std::make_unique<InstCoreBarrier>(std::move(Name), Eng, 0,
                                              std::move(Cores));
  return llvm::cast<InstCoreBarrier>(BB.insert(Pos, std::move(CB)));
}

bool renumberCoreBarriers(Program &P, unsigned Subgraph) {
  llvm::StringMap<unsigned> Ids;
  bool Changed = false;
  for (const bir::Subgraph &S : P.subgraphs()) {
    if (S.getId() != Subgraph)
      continue;
    for (Module *M : S.modules())
      M->walk([&](Instruction &I) {
        auto *CB = llvm::dyn_cast<InstCoreBarrier>(&I);
        if (!CB)
          return;
        unsigned Id = Ids.try_emplace(CB->getName(), Ids.size()).first->second;
        if (CB->getId() != Id) {
          CB->setId(Id);
          Changed = true;
        }
      });
  }
  return Changed;
}

bool isHandledByLowering(const InstCollectiveCompute &CC) {
  return CC.isLocal() || CC.getKind() >= CollectiveKind::ReduceScatter;
}

std::vector<unsigned> getFenceCores(const InstCollectiveCompute &CC) {
  if (CC.isLocal())
    return CC.getGroup().vec();
  std::vector<unsigned> All;
  const Module *M = CC.getModule();
  unsigned Lnc = M ? M->getTargetOptions().LncSize : 1;
  for (unsigned Core = 0; Core < Lnc; ++Core)
    All.push_back(Core);
  return All;
}

PrecedingMap getPrecedingCoreBarrierOrLocalCCMap(const Module &M) {
  PrecedingMap Map;
  for (const auto &BB : M.blocks()) {
    const Instruction *Last = nullptr;
    for (const auto &I : *BB) {
      const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(I.get());
      if (CC && isHandledByLowering(*CC)) {
        Map[CC] = Last;
        Last = CC;
      } else if (llvm::isa<InstCoreBarrier>(I.get())) {
        Last = I.get();
      }
    }
  }
  return Map;
}

/// The instructions I waits for, directly or through others, up to Limit of
/// them (beyond it, fewer: a dependency not found only makes the caller
/// insert a barrier it might have skipped).
static llvm::SmallPtrSet<const Instruction *, 32>
getAncestors(const Instruction &I, unsigned Limit) {
  llvm::SmallPtrSet<const Instruction *, 32> Seen;
  llvm::SmallVector<const Instruction *, 32> Work{&I};
  while (!Work.empty() && Seen.size() < Limit) {
    const Instruction *X = Work.pop_back_val();
    for (const Instruction *D : X->dependencies())
      if (Seen.insert(D).second)
        Work.push_back(D);
  }
  return Seen;
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
  std::vector<unsigned> Fence = getFenceCores(CC);
  if (const auto *CB = llvm::dyn_cast<InstCoreBarrier>(Prev)) {
    if (!covers(CB->getCores(), Fence))
      return false;
  } else {
    // A collective lowered or fenced in the same run ends with a barrier
    // over its fence cores, which CC then waits on instead.
    const auto &P = llvm::cast<InstCollectiveCompute>(*Prev);
    if (!covers(getFenceCores(P), Fence))
      return false;
  }
  // Every other dependency of CC must happen before the fence: Prev waits
  // for it, directly or through other dependencies. Transitively, because
  // a lowering keeps the order but not the edge: once the collective before
  // CC is lowered, what it waited for reaches its end barrier only through
  // the lowering's chain, and a second run must decide as the first did.
  llvm::SmallPtrSet<const Instruction *, 32> Before =
      getAncestors(*Prev, MaxAncestorSearch);
  auto Covered = [&](const Instruction *D) {
    return D == Prev || Before.count(D);
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
  std::vector<unsigned> Fence = getFenceCores(CC);
  for (const Instruction *U : CC.users()) {
    const auto *CB = llvm::dyn_cast<InstCoreBarrier>(U);
    if (!CB || !covers(CB->getCores(), Fence))
      continue;
    if (llvm::all_of(CC.users(), [&](const Instruction *V) {
          return V == CB || llvm::is_contained(V->dependencies(), CB);
        }))
      return true;
  }
  return false;
}

} // namespace loom::bir
