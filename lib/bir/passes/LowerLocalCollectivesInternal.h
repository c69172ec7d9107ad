//===- LowerLocalCollectivesInternal.h - lower_local_collectives' parts ---===//
//
// lower_local_collectives is one pass in three files, sharing what is
// declared here: LowerLocalCollectives.cpp runs the pass over every
// subgraph (and says what each rewrite looks like), LowerLocalCollectivesPlan.cpp
// groups the copies of each collective and decides everything about its
// lowering before the program is touched (engines, staging, the AllReduce
// split, the fences), and LowerLocalCollectivesEmit.cpp inserts the copies,
// barriers and waits the plan says.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_PASSES_LOWERLOCALCOLLECTIVESINTERNAL_H
#define LOOM_LIB_BIR_PASSES_LOWERLOCALCOLLECTIVESINTERNAL_H

#include "loom/bir/passes/LowerLocalCollectives.h"

#include "loom/bir/analysis/CostModel.h"
#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/passes/CoreBarriers.h"
#include "loom/bir/passes/PartialAccessPatterns.h"
#include "loom/bir/passes/RemoteLocations.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

namespace loom::bir::local_collectives {

/// "[0,1]".
std::string coreList(llvm::ArrayRef<unsigned> Cores);

/// One copy of a collective: the core running it and the instruction.
struct Member {
  unsigned Core;
  Module *M;
  InstCollectiveCompute *CC;
};

/// Names that are unique across the modules of a subgraph, so that the
/// same name can be used on every core.
class NamePool {
public:
  void add(llvm::StringRef N) { Used.insert(N); }
  bool contains(llvm::StringRef N) const { return Used.contains(N); }
  /// Base, or Base.1, Base.2, ..., the first for which Free holds.
  template <typename Pred> std::string fresh(const std::string &Base, Pred Free) {
    std::string N = Base;
    for (unsigned K = 1; !Free(N); ++K)
      N = Base + "." + std::to_string(K);
    Used.insert(N);
    return N;
  }
  std::string fresh(const std::string &Base) {
    return fresh(Base, [&](const std::string &N) { return !contains(N); });
  }

private:
  llvm::StringSet<> Used;
};

struct SubgraphInfo {
  unsigned Id;
  std::map<unsigned, Module *> ByCore;
  NamePool InstNames, LocNames, Semaphores;
};

enum class Lowering { Swap, SwapCCE, AllReduce, Fence };

/// Everything decided about one logical collective before the program is
/// touched.
struct GroupPlan {
  std::string Name;
  Lowering How = Lowering::Fence;
  std::vector<Member> Members; // by rank
  // Swaps: per rank, GPSIMD or DMA and why; per rank, whether the input is
  // staged.
  std::vector<bool> UseGPSIMD;
  std::vector<std::string> EngineWhy;
  std::vector<bool> Stage;
  // AllReduce.
  TensorSplit Split;
  bool Accumulate = true;
  bool Gather = true;
  bool SharedOut = false;
  /// The barrier before is left out where the region is already fenced on
  /// every core (precededByLocalCC); a kept collective already followed by
  /// a barrier on every core gets none after.
  bool SkipBegin = false;
  bool SkipEnd = false;
  /// The cores of the fences: the group, or every core for a non-local
  /// collective (getFenceCores).
  std::vector<unsigned> FenceCores;
};


bool sameShape(const AccessPattern &A, const AccessPattern &B);
/// "[128 x 4 x 64] fp32 -> [128 x 256] fp32": partitions and counts.
std::string shapeText(const InstCollectiveCompute &CC);
bool sameCounts(const AccessPattern &A, const AccessPattern &B);
bool dmaCanAdd(DataType T);
Engine dmaQueue(unsigned K);
unsigned baseQueue(const Instruction &CC);
/// Barriers and waits cannot run on a DMA queue; they go on the
/// collective's engine otherwise, which keeps the engine order the
/// collective had with its neighbours.
Engine syncEngine(const Instruction &CC);
/// What the lowering's first instructions wait for: the collective's
/// dependencies and, for a collective on a DMA queue, the instruction
/// before it on that queue, which it followed in engine order.
std::vector<Instruction *> entryDeps(InstCollectiveCompute &CC);
/// The users of CC and, for CC on a DMA queue, the next instruction of that
/// queue in the block, which followed CC in engine order: the lowering's
/// end barrier runs on POOL and does not keep that order by itself.
std::vector<Instruction *> usersInOrder(InstCollectiveCompute &CC);

class Lowerer {
public:
  Lowerer(const BackendOptions &Opts, unsigned Lnc) : Opts(Opts), Lnc(Lnc) {}

  llvm::Expected<std::vector<GroupPlan>>
  extractAndGroupCCOps(SubgraphInfo &S);
  llvm::Error plan(SubgraphInfo &S, GroupPlan &G);
  void lower(SubgraphInfo &S, GroupPlan &G);

private:
  llvm::Error planSwap(SubgraphInfo &S, GroupPlan &G);
  llvm::Error planAllReduce(SubgraphInfo &S, GroupPlan &G);
  llvm::Error checkRemotes(SubgraphInfo &S, GroupPlan &G,
                           bool Inputs, bool Outputs);
  bool chooseGPSIMD(const AccessPattern &Src, const AccessPattern &Dst,
                    std::string &Why) const;

  /// Kind 0: the swap with the engine chosen per direction and the
  /// per-remote-core barrier (or the semaphore signal and wait).
  void lowerSendRecv(SubgraphInfo &S, GroupPlan &G, unsigned Rank) {
    lowerSwap(S, G, Rank);
  }
  /// Kind 1: the swap, always by DMA, with no per-remote-core barrier.
  void lowerSendRecvCCE(SubgraphInfo &S, GroupPlan &G, unsigned Rank) {
    lowerSwap(S, G, Rank);
  }
  /// The swap of both kinds; G.How and G.UseGPSIMD tell them apart.
  void lowerSwap(SubgraphInfo &S, GroupPlan &G, unsigned Rank);
  void lowerAllReduce(SubgraphInfo &S, GroupPlan &G, unsigned Rank);
  void insertFences(SubgraphInfo &S, GroupPlan &G, unsigned Rank);

  /// The name of a lowering instruction, the same on every core.
  const std::string &instName(SubgraphInfo &S, GroupPlan &G,
                              const std::string &Suffix);
  const std::string &locName(SubgraphInfo &S, GroupPlan &G,
                             const std::string &Suffix);

  template <typename T, typename... Args>
  T *insertBefore(Instruction &At, std::string Name, Args &&...A) {
    auto I = std::make_unique<T>(std::move(Name), std::forward<Args>(A)...);
    T *New = llvm::cast<T>(
        At.getBasicBlock()->insert(At.getIterator(), std::move(I)));
    Created.push_back(New);
    return New;
  }
  InstCoreBarrier *newBarrier(BasicBlock &BB, BasicBlock::iterator Pos,
                              std::string Name, std::vector<unsigned> Cores,
                              Engine Eng) {
    InstCoreBarrier *CB =
        insertCoreBarrier(BB, Pos, std::move(Name), std::move(Cores), Eng);
    Created.push_back(CB);
    return CB;
  }

public:
  /// Every instruction the lowering created, for the statistics.
  std::vector<const Instruction *> Created;

private:
  /// A scratch location of M, dense for AP's shape.
  AccessPattern createScratch(SubgraphInfo &S, GroupPlan &G, Module &M,
                              const std::string &Suffix,
                              const AccessPattern &Like, MemoryKind Kind);
  /// The copy of the input into a scratch tile, when it overlaps the output.
  Instruction *stageInput(SubgraphInfo &S, GroupPlan &G, Member &Mb,
                          llvm::ArrayRef<Instruction *> Deps,
                          AccessPattern &Src);
  /// The barrier before CC over its group, waiting for Deps; or, where the
  /// region is already fenced, nothing: then Deps themselves. What the
  /// lowering's first instructions wait for.
  std::vector<Instruction *> beginBarrier(SubgraphInfo &S, GroupPlan &G,
                                          InstCollectiveCompute &CC,
                                          llvm::ArrayRef<Instruction *> Deps);
  /// The start of a lowering on rank Rank: the begin barrier and, when some
  /// core of the group stages its input, the stage (on the cores that
  /// stage) and the barrier after it on every core. Sources[Rank] becomes
  /// the tile the peers read. Returns what the next instructions wait for.
  std::vector<Instruction *> openRegion(SubgraphInfo &S, GroupPlan &G,
                                        unsigned Rank);
  /// Every user of CC now also waits for Last (lower() then removes CC).
  static void updateDeps(InstCollectiveCompute &CC, Instruction &Last);

  const BackendOptions &Opts;
  unsigned Lnc;
  RemoteLocations Remotes;
  /// Per group: suffix -> name chosen for it.
  std::map<std::string, std::string> InstNames, LocNames;
  std::string Semaphore;
  /// Per group and rank: the tile the peers read (the input or its stage),
  /// an access pattern of that rank's module.
  std::vector<AccessPattern> Sources;
  /// Per rank of an AllReduce: what its first copies wait for.
  std::vector<std::vector<Instruction *>> Starts;
};

} // namespace loom::bir::local_collectives

#endif
