//===- LowerLocalCollectives.cpp - On-chip collectives to copies ----------===//
//
// The rewrites, on each core c of a collective's group (names are the
// collective's name plus a suffix, the same on every core; `R(x, p)` is x
// reached on core p through the remote location x_remote_p):
//
// SendRecv on cores {c, p}:
//   %s = CollectiveCompute kind=SendRecv out=o in=i deps=(D)
// ->
//   %s_cb_begin = CoreBarrier cores=[c,p] deps=(D)
//   %s_copy = GPSIMDSB2SB[POOL] lowered out=R(o, p) in=i deps=(%s_cb_begin)
//             (or DMACopy[DMAk])
//   %s_cb_<lo>_<hi> = CoreBarrier cores=[lo,hi] deps=(%s_copy)
//   %s_cb_end = CoreBarrier cores=[c,p] deps=(%s_cb_<lo>_<hi>)
// With --enable-remote-semaphore-dma the middle barrier becomes a signal on
// the copy (signal=p:%s_sem) and `%s_wait = SemaphoreWait semaphore=%s_sem`.
// SendRecvCCE has no middle barrier and always a DMACopy. Where i overlaps
// o, i is first repacked into a scratch tile after %s_cb_begin
// (%s_stage = TensorCopy, then %s_cb_staged = CoreBarrier), so that the
// peer's write cannot clobber what the copy still reads.
//
// AllReduce over n cores, c of rank r, slice r of the split:
//   %a = CollectiveCompute kind=AllReduce reduce=Add out=o in=i deps=(D)
// ->
//   %a_cb_begin = CoreBarrier deps=(D)
//   %a_rs_0 = DMACopy out=o[r] in=R(i[r], rank 0)          (seed copy)
//   %a_rs_j = DMACopy accumulate out=o[r] in=R(i[r], rank j)   j = 1..n-1
//   %a_cb_mid = CoreBarrier deps=(%a_rs_<n-1>)
//   %a_ag_<p> = DMACopy out=R(o[r], p) in=o[r]      for every peer p
//   %a_cb_end = CoreBarrier deps=(%a_ag_...)
// Max, Min and types the DMA cannot add fetch the peers' slices into scratch
// tiles and fold them with TensorTensor on DVE. An input overlapping the
// output is staged as for SendRecv.
//
// Other kinds:
//   %x = CollectiveCompute kind=AllGather deps=(D)
// ->
//   %x_cb_begin = CoreBarrier deps=(D)
//   %x = CollectiveCompute kind=AllGather deps=(D, %x_cb_begin)
//   %x_cb_end = CoreBarrier deps=(%x)
//
// A non-local collective of kind >= 3 is fenced the same way, with
// cores=[0..lnc-1]: its group lists ranks of a wider job, not cores.
//
// In every case the users of the collective also wait for %_cb_end, and no
// %_cb_begin is added where the instruction directly before already fences
// the collective on every core (precededByLocalCC).
//
//===----------------------------------------------------------------------===//

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

namespace loom::bir {

namespace {

std::string coreList(llvm::ArrayRef<unsigned> Cores) {
  std::string S = "[";
  for (size_t I = 0; I < Cores.size(); ++I)
    S += (I ? "," : "") + std::to_string(Cores[I]);
  return S + "]";
}

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

bool sameShape(const AccessPattern &A, const AccessPattern &B) {
  if (A.getType() != B.getType() ||
      A.getNumPartitions() != B.getNumPartitions() ||
      A.getPattern().size() != B.getPattern().size())
    return false;
  for (size_t K = 0; K < A.getPattern().size(); ++K)
    if (A.getPattern()[K].Count != B.getPattern()[K].Count)
      return false;
  return true;
}

/// "[128 x 4 x 64] fp32 -> [128 x 256] fp32": partitions and counts.
std::string shapeText(const InstCollectiveCompute &CC) {
  auto One = [](const AccessPattern &AP) {
    std::string S = "[" + std::to_string(AP.getNumPartitions());
    for (const PatternDim &D : AP.getPattern())
      S += " x " + std::to_string(D.Count);
    return S + "] " + enumName(AP.getType()).str();
  };
  return One(CC.inputs()[0]) + " -> " + One(CC.outputs()[0]);
}

bool sameCounts(const AccessPattern &A, const AccessPattern &B) {
  return A.getNumPartitions() == B.getNumPartitions() &&
         A.getNumElementsPerPartition() == B.getNumElementsPerPartition();
}

bool dmaCanAdd(DataType T) {
  return T == DataType::FP32 || T == DataType::BF16 || T == DataType::FP16;
}

Engine dmaQueue(unsigned K) {
  return static_cast<Engine>(static_cast<unsigned>(Engine::DMA0) + K % 16);
}

unsigned baseQueue(const Instruction &CC) {
  return isDMAQueue(CC.getEngine()) ? static_cast<unsigned>(CC.getEngine()) -
                                          static_cast<unsigned>(Engine::DMA0)
                                    : 0;
}

/// Barriers and waits cannot run on a DMA queue; they go on the
/// collective's engine otherwise, which keeps the engine order the
/// collective had with its neighbours.
Engine syncEngine(const Instruction &CC) {
  return isDMAQueue(CC.getEngine()) ? Engine::POOL : CC.getEngine();
}

/// What the lowering's first instructions wait for: the collective's
/// dependencies and, for a collective on a DMA queue, the instruction
/// before it on that queue, which it followed in engine order.
std::vector<Instruction *> entryDeps(InstCollectiveCompute &CC) {
  std::vector<Instruction *> D(CC.dependencies().begin(),
                               CC.dependencies().end());
  if (!isDMAQueue(CC.getEngine()))
    return D;
  BasicBlock &BB = *CC.getBasicBlock();
  for (auto It = CC.getIterator(); It != BB.begin();) {
    --It;
    if ((*It)->getEngine() == CC.getEngine()) {
      if (!llvm::is_contained(D, It->get()))
        D.push_back(It->get());
      break;
    }
  }
  return D;
}

/// The users of CC and, for CC on a DMA queue, the next instruction of that
/// queue in the block, which followed CC in engine order: the lowering's
/// end barrier runs on POOL and does not keep that order by itself.
std::vector<Instruction *> usersInOrder(InstCollectiveCompute &CC) {
  std::vector<Instruction *> Users(CC.users().begin(), CC.users().end());
  if (!isDMAQueue(CC.getEngine()))
    return Users;
  BasicBlock &BB = *CC.getBasicBlock();
  for (auto It = std::next(CC.getIterator()); It != BB.end(); ++It)
    if ((*It)->getEngine() == CC.getEngine()) {
      if (!llvm::is_contained(Users, It->get()))
        Users.push_back(It->get());
      break;
    }
  return Users;
}

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

const std::string &Lowerer::instName(SubgraphInfo &S, GroupPlan &G,
                                     const std::string &Suffix) {
  auto [It, New] = InstNames.try_emplace(Suffix);
  if (New)
    It->second = S.InstNames.fresh(G.Name + "_" + Suffix);
  return It->second;
}

const std::string &Lowerer::locName(SubgraphInfo &S, GroupPlan &G,
                                    const std::string &Suffix) {
  auto [It, New] = LocNames.try_emplace(Suffix);
  if (New)
    // A scratch location is reached from the peers too: its remote names
    // must be free as well.
    It->second = S.LocNames.fresh(G.Name + "_" + Suffix,
                                  [&](const std::string &N) {
                                    if (S.LocNames.contains(N))
                                      return false;
                                    for (unsigned C = 0; C < Lnc; ++C)
                                      if (S.LocNames.contains(
                                              getRemoteLocationName(N, C)))
                                        return false;
                                    return true;
                                  });
  return It->second;
}

llvm::Expected<std::vector<GroupPlan>>
Lowerer::extractAndGroupCCOps(SubgraphInfo &S) {
  // Per core: local collectives by name, and in program order.
  std::map<unsigned, llvm::StringMap<InstCollectiveCompute *>> ByName;
  std::vector<std::pair<unsigned, InstCollectiveCompute *>> Order;
  for (auto [Core, M] : S.ByCore)
    M->walk([&, Core = Core](Instruction &I) {
      auto *CC = llvm::dyn_cast<InstCollectiveCompute>(&I);
      if (!CC || !isHandledByLowering(*CC))
        return;
      ByName[Core][CC->getName()] = CC;
      Order.push_back({Core, CC});
    });
  std::vector<GroupPlan> Groups;
  llvm::DenseSet<const InstCollectiveCompute *> Seen;
  for (auto [Core, CC] : Order) {
    if (Seen.count(CC))
      continue;
    GroupPlan G;
    G.Name = CC->getName().str();
    llvm::ArrayRef<unsigned> Group = CC->getGroup();
    // A local collective meets the copies on the cores of its group; a
    // non-local one (fenced only) the copies on every core, which
    // lnc_splitter made from one module.
    G.FenceCores = getFenceCores(*CC);
    std::string Where = "collective '" + G.Name + "' (group " +
                        coreList(Group) + ")";
    // A non-local collective that is not the same collective on every core
    // (a code generator gives each core its own part of a cross-device
    // exchange) has nothing to fence jointly: it is left untouched.
    if (!CC->isLocal() &&
        llvm::any_of(G.FenceCores, [&, CC = CC](unsigned Peer) {
          InstCollectiveCompute *Copy = ByName[Peer].lookup(G.Name);
          return !Copy || Copy->getKind() != CC->getKind() ||
                 Copy->getGroup() != Group ||
                 Copy->getReduceOp() != CC->getReduceOp() ||
                 !sameShape(Copy->inputs()[0], CC->inputs()[0]) ||
                 !sameShape(Copy->outputs()[0], CC->outputs()[0]);
        })) {
      Seen.insert(CC);
      continue;
    }
    for (unsigned Peer : G.FenceCores) {
      auto MIt = S.ByCore.find(Peer);
      InstCollectiveCompute *Copy =
          MIt == S.ByCore.end() ? nullptr : ByName[Peer].lookup(G.Name);
      if (!Copy)
        return makeError(Where + " is on core " + llvm::Twine(Core) +
                         " but missing on core " + llvm::Twine(Peer));
      auto Disagree = [&, Core = Core](llvm::StringRef What, llvm::StringRef A,
                          llvm::StringRef B) {
        return makeError(Where + ": the copies disagree in " + What + ": " +
                         A + " on core " + llvm::Twine(Core) + ", " + B +
                         " on core " + llvm::Twine(Peer));
      };
      if (Copy->getKind() != CC->getKind())
        return Disagree("kind", enumName(CC->getKind()),
                        enumName(Copy->getKind()));
      if (Copy->getGroup() != Group)
        return Disagree("group", coreList(Group), coreList(Copy->getGroup()));
      if (Copy->getReduceOp() != CC->getReduceOp())
        return Disagree("reduce op", enumName(CC->getReduceOp()),
                        enumName(Copy->getReduceOp()));
      if (!sameShape(Copy->inputs()[0], CC->inputs()[0]) ||
          !sameShape(Copy->outputs()[0], CC->outputs()[0]))
        return Disagree("shapes", shapeText(*CC), shapeText(*Copy));
      Seen.insert(Copy);
      G.Members.push_back({Peer, MIt->second, Copy});
    }
    Groups.push_back(std::move(G));
  }
  return Groups;
}

llvm::Error Lowerer::checkRemotes(SubgraphInfo &S, GroupPlan &G, bool Inputs,
                                  bool Outputs) {
  for (Member &User : G.Members)
    for (Member &Owner : G.Members) {
      llvm::SmallVector<const AccessPattern *, 2> Targets;
      if (Inputs)
        Targets.push_back(&Owner.CC->inputs()[0]);
      if (Outputs)
        Targets.push_back(&Owner.CC->outputs()[0]);
      for (const AccessPattern *AP : Targets)
        if (llvm::Error E =
                checkRemoteNameFree(*User.M, *Owner.M, *AP->getLocation()))
          return makeError("collective '" + G.Name + "' on core " +
                           llvm::Twine(User.Core) + ": " +
                           llvm::toString(std::move(E)));
    }
  return llvm::Error::success();
}

/// Why InstGPSIMDSB2SB::isCompatible refuses Src -> Dst, in its order of
/// checks; empty when it accepts them.
std::string whyNotCompatible(unsigned Lnc, const AccessPattern &Src,
                             const AccessPattern &Dst) {
  if (InstGPSIMDSB2SB::isCompatible(Lnc, Src, Dst))
    return "";
  if (Lnc != 2)
    return "lnc_size is " + std::to_string(Lnc) + ", not 2";
  if (Src.getLocation()->getKind() != MemoryKind::SB ||
      Dst.getLocation()->getKind() != MemoryKind::SB)
    return ("the tiles are in " + enumName(Src.getLocation()->getKind()) +
            " and " + enumName(Dst.getLocation()->getKind()) + ", not both SB")
        .str();
  if (Src.getType() != Dst.getType() ||
      Src.getNumPartitions() != Dst.getNumPartitions() ||
      Src.getNumElementsPerPartition() != Dst.getNumElementsPerPartition())
    return "the tiles differ in data type, partitions or elements per "
           "partition";
  return "the tiles differ in layout";
}

bool Lowerer::chooseGPSIMD(const AccessPattern &Src, const AccessPattern &Dst,
                           std::string &Why) const {
  if (std::string No = whyNotCompatible(Lnc, Src, Dst); !No.empty()) {
    Why = "not GPSIMD-compatible: " + No;
    return false;
  }
  uint64_t Bytes =
      Src.getNumElementsPerPartition() * getDataTypeSize(Src.getType());
  uint64_t Effective =
      InstGPSIMDSB2SB::getEffectiveBytesPerPartition(Bytes, Src.getType());
  uint64_t Budget = std::min<uint64_t>(InstGPSIMDSB2SB::MaxBytesPerPartition,
                                       Opts.SendRecvToGpsimdMaxBpp);
  bool InBudget = Effective <= Budget;
  std::string Eff = std::to_string(Effective) +
                    " effective bytes per partition";
  if (Opts.SendRecvEngine == SendRecvEngineChoice::Budget) {
    Why = Eff + (InBudget ? " within " : " above ") + "the budget of " +
          std::to_string(Budget);
    return InBudget;
  }
  // The cost model picks the faster of the two copies the lowering could
  // emit, timed as the simulator times them; GPSIMD only within the
  // hardware ceiling.
  if (Effective > InstGPSIMDSB2SB::MaxBytesPerPartition) {
    Why = Eff + " above the GPSIMD ceiling of " +
          std::to_string(InstGPSIMDSB2SB::MaxBytesPerPartition);
    return false;
  }
  analysis::CostModel Model(Opts.Cost);
  InstGPSIMDSB2SB ViaPool("probe", Engine::POOL, true);
  InstDMACopy ViaDMA("probe", Engine::DMA0, false);
  for (Instruction *I : {static_cast<Instruction *>(&ViaPool),
                         static_cast<Instruction *>(&ViaDMA)}) {
    I->addInput(Src);
    I->addOutput(Dst);
  }
  double Pool = Model.instructionNs(ViaPool), DMA = Model.instructionNs(ViaDMA);
  Why = llvm::formatv("cost model: GPSIMD {0:f1} ns, DMA {1:f1} ns", Pool, DMA)
            .str();
  return Pool <= DMA;
}

llvm::Error Lowerer::plan(SubgraphInfo &S, GroupPlan &G) {
  for (Member &Mb : G.Members)
    for (const AccessPattern *AP :
         {&Mb.CC->inputs()[0], &Mb.CC->outputs()[0]}) {
      const MemoryLocation *L = AP->getLocation();
      if (!L->isRemote())
        continue;
      std::string Where = "collective '" + G.Name + "' on core " +
                          std::to_string(Mb.Core) + ": ";
      auto Peer = S.ByCore.find(L->getRemote()->Core);
      if (llvm::Error E = verifyRemoteTarget(
              *L, Peer == S.ByCore.end() ? nullptr : Peer->second))
        return makeError(Where + llvm::toString(std::move(E)));
      return makeError(Where + "operand '" + L->getName() +
                       "' is a remote location; a collective names the "
                       "memory of its own core");
    }
  switch (G.Members[0].CC->getKind()) {
  case CollectiveKind::SendRecv:
    G.How = Lowering::Swap;
    return planSwap(S, G);
  case CollectiveKind::SendRecvCCE:
    G.How = Lowering::SwapCCE;
    return planSwap(S, G);
  case CollectiveKind::AllReduce:
    G.How = Lowering::AllReduce;
    return planAllReduce(S, G);
  default:
    G.How = Lowering::Fence;
    return llvm::Error::success();
  }
}

llvm::Error Lowerer::planSwap(SubgraphInfo &S, GroupPlan &G) {
  const InstCollectiveCompute &CC0 = *G.Members[0].CC;
  std::string Where = enumName(CC0.getKind()).str() + " '" + G.Name +
                      "' on core " + std::to_string(G.Members[0].Core);
  if (G.Members.size() != 2)
    return makeError(Where + ": a swap needs a group of 2 cores, not " +
                     llvm::Twine(G.Members.size()) + " " +
                     coreList(CC0.getGroup()));
  for (Member &Mb : G.Members)
    if (Mb.CC->outputs()[0].getLocation()->getKind() == MemoryKind::SharedDRAM)
      return makeError(Where + ": the output '" +
                       Mb.CC->outputs()[0].getLocation()->getName() +
                       "' is SharedDRAM, the same bytes on both cores, which "
                       "a swap would write twice");
  if (llvm::Error E = checkRemotes(S, G, false, true))
    return E;
  G.UseGPSIMD.assign(2, false);
  G.EngineWhy.assign(2, "SendRecvCCE always copies by DMA");
  G.Stage.assign(2, false);
  for (unsigned R = 0; R < 2; ++R) {
    const AccessPattern &In = G.Members[R].CC->inputs()[0];
    const AccessPattern &PeerOut = G.Members[1 - R].CC->outputs()[0];
    G.Stage[R] = mayOverlap(In, G.Members[R].CC->outputs()[0]);
    if (G.How != Lowering::Swap)
      continue;
    if (!G.Stage[R]) {
      G.UseGPSIMD[R] = chooseGPSIMD(In, PeerOut, G.EngineWhy[R]);
      continue;
    }
    // The stage is a dense SB tile with the input's counts.
    MemoryLocation Probe("", 0, isOnChip(In.getLocation()->getKind())
                                    ? MemoryKind::SB
                                    : MemoryKind::DRAM,
                         In.getType(), In.getNumPartitions(), 1);
    AccessPattern Staged(&Probe, 0, In.getNumPartitions(), 0,
                         densePattern(In), In.getType());
    G.UseGPSIMD[R] = chooseGPSIMD(Staged, PeerOut, G.EngineWhy[R]);
    G.EngineWhy[R] += " (of the staged input, which overlaps the output)";
  }
  return llvm::Error::success();
}

llvm::Error Lowerer::planAllReduce(SubgraphInfo &S, GroupPlan &G) {
  const InstCollectiveCompute &CC0 = *G.Members[0].CC;
  std::string Where = "AllReduce '" + G.Name + "' on core " +
                      std::to_string(G.Members[0].Core);
  ReduceOp Op = CC0.getReduceOp();
  if (Op == ReduceOp::None)
    return makeError(Where + ": an AllReduce needs a reduce op");
  unsigned N = G.Members.size();
  const AccessPattern &In = CC0.inputs()[0], &Out = CC0.outputs()[0];
  DataType T = Out.getType();
  G.Accumulate = N == 1 || (Op == ReduceOp::Add && dmaCanAdd(T));
  if (!G.Accumulate) {
    // TensorTensor computes in fp32, which holds every value of the 8- and
    // 16-bit types exactly but not of the 32-bit integers.
    if (T == DataType::INT32 || T == DataType::UINT32)
      return makeError(Where + ": " + enumName(Op) + " over " + enumName(T) +
                       " cannot be lowered exactly: DMA compute adds floats "
                       "only and the vector engine computes in fp32");
  }
  // SharedDRAM is one buffer for all cores: its copies must name the same
  // bytes everywhere.
  for (const AccessPattern *AP : {&In, &Out}) {
    if (AP->getLocation()->getKind() != MemoryKind::SharedDRAM)
      continue;
    bool IsOut = AP == &Out;
    if (IsOut)
      G.SharedOut = true;
    for (Member &Mb : G.Members) {
      const AccessPattern &Other =
          IsOut ? Mb.CC->outputs()[0] : Mb.CC->inputs()[0];
      if (Other.getLocation()->getName() != AP->getLocation()->getName() ||
          Other.getOffset() != AP->getOffset() ||
          Other.getStartPartition() != AP->getStartPartition() ||
          Other.getPattern() != AP->getPattern())
        return makeError(Where + ": the SharedDRAM " +
                         (IsOut ? "output" : "input") +
                         " differs between the copies (core " +
                         llvm::Twine(Mb.Core) + ")");
    }
  }
  if (llvm::Error E = checkRemotes(S, G, true, true))
    return E;
  // The split: the first splittable free dimension when the input and the
  // output have the same counts; else the partitions; else none.
  G.Split = TensorSplit{};
  if (N > 1) {
    std::optional<unsigned> Dim;
    if (sameShape(In, Out))
      Dim = getScatterDimension(In, N);
    if (Dim)
      G.Split = {TensorSplit::Kind::FreeDim, *Dim, N};
    else if (sameCounts(In, Out) && In.getNumPartitions() % N == 0)
      G.Split = {TensorSplit::Kind::Partitions, 0, N};
  }
  if (!G.Accumulate) {
    // The fold works on SB tiles shaped like one output slice.
    AccessPattern Slice = createPartialAP(Out, G.Split, 0);
    uint64_t Bytes =
        Slice.getNumElementsPerPartition() * getDataTypeSize(T);
    std::optional<uint64_t> Cap = getPartitionCapacity(
        G.Members[0].M->getTargetOptions().Arch, MemoryKind::SB);
    if (Slice.getNumPartitions() > MaxOnChipPartitions ||
        (Cap && Bytes > *Cap))
      return makeError(Where + ": " + enumName(Op) + " over " + enumName(T) +
                       " folds slices of " +
                       llvm::Twine(Slice.getNumPartitions()) + " x " +
                       llvm::Twine(Bytes) +
                       " bytes on the vector engine, which do not fit an SB "
                       "tile (DMA compute adds fp32, bf16 and fp16 only)");
  }
  G.Gather = G.Split.How != TensorSplit::Kind::Whole && !G.SharedOut;
  G.Stage.clear();
  for (Member &Mb : G.Members)
    G.Stage.push_back(mayOverlap(Mb.CC->inputs()[0], Mb.CC->outputs()[0]));
  return llvm::Error::success();
}

AccessPattern Lowerer::createScratch(SubgraphInfo &S, GroupPlan &G, Module &M,
                                     const std::string &Suffix,
                                     const AccessPattern &Like,
                                     MemoryKind Kind) {
  unsigned Size = getDataTypeSize(Like.getType());
  auto L = std::make_unique<MemoryLocation>(
      locName(S, G, Suffix), Remotes.takeTensorId(M), Kind, Like.getType(),
      Like.getNumPartitions(), Like.getNumElementsPerPartition() * Size);
  llvm::Expected<MemoryLocation *> Added =
      M.getMemoryLocations().add(std::move(L));
  // The name is fresh in the subgraph and the id in the module.
  assert(Added && "scratch location could not be added");
  return AccessPattern(*Added, 0, Like.getNumPartitions(), 0,
                       densePattern(Like), Like.getType());
}

Instruction *Lowerer::stageInput(SubgraphInfo &S, GroupPlan &G, Member &Mb,
                                 llvm::ArrayRef<Instruction *> Deps,
                                 AccessPattern &Src) {
  bool OnChip = isOnChip(Src.getLocation()->getKind());
  AccessPattern Stage = createScratch(S, G, *Mb.M, "stage", Src,
                                      OnChip ? MemoryKind::SB : MemoryKind::DRAM);
  Instruction *I;
  if (OnChip)
    I = insertBefore<InstTensorCopy>(*Mb.CC, instName(S, G, "stage"),
                                     Engine::DVE);
  else
    I = insertBefore<InstDMACopy>(*Mb.CC, instName(S, G, "stage"),
                                  dmaQueue(baseQueue(*Mb.CC)), false);
  I->addInput(Src);
  I->addOutput(Stage);
  legalizeAPs(*I);
  for (Instruction *D : Deps)
    I->addDependency(D);
  Src = Stage;
  return I;
}

std::vector<Instruction *>
Lowerer::beginBarrier(SubgraphInfo &S, GroupPlan &G, InstCollectiveCompute &CC,
                      llvm::ArrayRef<Instruction *> Deps) {
  if (G.SkipBegin)
    return Deps.vec();
  InstCoreBarrier *Begin = newBarrier(
      *CC.getBasicBlock(), CC.getIterator(), instName(S, G, "cb_begin"),
      G.FenceCores, syncEngine(CC));
  for (Instruction *D : Deps)
    Begin->addDependency(D);
  return {Begin};
}

std::vector<Instruction *> Lowerer::openRegion(SubgraphInfo &S, GroupPlan &G,
                                               unsigned Rank) {
  Member &Mb = G.Members[Rank];
  InstCollectiveCompute &CC = *Mb.CC;
  std::vector<Instruction *> Start = beginBarrier(S, G, CC, entryDeps(CC));
  if (!llvm::is_contained(G.Stage, true))
    return Start;
  // The stage reads the input after the begin barrier, so after everything
  // the cores did to it before (also in an earlier iteration of a loop),
  // and before the barrier after it, so before any peer writes the output
  // it overlaps or reads the stage.
  if (G.Stage[Rank])
    Start = {stageInput(S, G, Mb, Start, Sources[Rank])};
  InstCoreBarrier *Staged = newBarrier(
      *CC.getBasicBlock(), CC.getIterator(), instName(S, G, "cb_staged"),
      CC.getGroup().vec(), syncEngine(CC));
  for (Instruction *D : Start)
    Staged->addDependency(D);
  return {Staged};
}

void Lowerer::updateDeps(InstCollectiveCompute &CC, Instruction &Last) {
  for (Instruction *U : usersInOrder(CC))
    U->addDependency(&Last);
}

void Lowerer::lowerSwap(SubgraphInfo &S, GroupPlan &G, unsigned Rank) {
  Member &Mb = G.Members[Rank];
  Member &Peer = G.Members[1 - Rank];
  InstCollectiveCompute &CC = *Mb.CC;
  Engine Sync = syncEngine(CC);
  std::vector<Instruction *> Start = openRegion(S, G, Rank);
  const AccessPattern &Src = Sources[Rank];

  AccessPattern Dst = Remotes.createRemoteAP(Peer.CC->outputs()[0], *Mb.M,
                                             *Peer.M, /*IsWrite=*/true);
  InstCopyBase *Copy;
  if (G.UseGPSIMD[Rank])
    Copy = insertBefore<InstGPSIMDSB2SB>(CC, instName(S, G, "copy"),
                                         Engine::POOL, /*Lowered=*/true);
  else
    Copy = insertBefore<InstDMACopy>(CC, instName(S, G, "copy"),
                                     dmaQueue(baseQueue(CC)), false);
  Copy->addInput(Src);
  Copy->addOutput(Dst);
  legalizeAPs(*Copy);
  for (Instruction *D : Start)
    Copy->addDependency(D);

  std::vector<Instruction *> Done{Copy};
  if (G.How == Lowering::Swap) {
    if (Opts.EnableRemoteSemaphoreDMA) {
      // One semaphore name for the group: each core waits on its own
      // semaphore of that name, which the peer's copy raises.
      if (Semaphore.empty())
        Semaphore = S.Semaphores.fresh(G.Name + "_sem");
      Copy->setSignal(Peer.Core, Semaphore);
      auto *Wait = insertBefore<InstSemaphoreWait>(
          CC, instName(S, G, "wait"), Sync, Semaphore, 1u);
      for (Instruction *D : Start)
        Wait->addDependency(D);
      Done.push_back(Wait);
    } else {
      unsigned Lo = std::min(Mb.Core, Peer.Core);
      unsigned Hi = std::max(Mb.Core, Peer.Core);
      InstCoreBarrier *Pair = newBarrier(
          *CC.getBasicBlock(), CC.getIterator(),
          instName(S, G,
                   "cb_" + std::to_string(Lo) + "_" + std::to_string(Hi)),
          {Lo, Hi}, Sync);
      Pair->addDependency(Copy);
      Done = {Pair};
    }
  }
  InstCoreBarrier *End =
      newBarrier(*CC.getBasicBlock(), CC.getIterator(),
                        instName(S, G, "cb_end"), CC.getGroup().vec(), Sync);
  for (Instruction *D : Done)
    End->addDependency(D);
  updateDeps(CC, *End);
}

void Lowerer::lowerAllReduce(SubgraphInfo &S, GroupPlan &G, unsigned Rank) {
  Member &Mb = G.Members[Rank];
  InstCollectiveCompute &CC = *Mb.CC;
  unsigned N = G.Members.size();
  Engine Sync = syncEngine(CC);
  unsigned Queue = baseQueue(CC);
  BasicBlock &BB = *CC.getBasicBlock();
  std::vector<Instruction *> Start = Starts[Rank];

  // The slice this core owns: all of it when nothing splits.
  const AccessPattern &Out = CC.outputs()[0];
  AccessPattern OutSlice = createPartialAP(Out, G.Split, Rank);
  bool Owns = !(G.Split.How == TensorSplit::Kind::Whole && G.SharedOut &&
                Rank != 0);
  std::vector<Instruction *> Prev = Start;
  auto After = [&](Instruction *I) {
    for (Instruction *D : Prev)
      I->addDependency(D);
    Prev = {I};
  };
  if (Owns) {
    auto SourceSlice = [&](unsigned J) {
      AccessPattern Slice = createPartialAP(Sources[J], G.Split, Rank);
      return Remotes.createRemoteAP(Slice, *Mb.M, *G.Members[J].M,
                                    /*IsWrite=*/false);
    };
    if (G.Accumulate) {
      // The seed copy then one accumulation per further rank, in rank
      // order, all on this core: the owner's slice is only ever written by
      // its owner, in the order the reduction folds.
      for (unsigned J = 0; J < N; ++J) {
        auto *Copy = insertBefore<InstDMACopy>(
            CC, instName(S, G, "rs_" + std::to_string(J)), dmaQueue(Queue),
            /*Accumulate=*/J != 0);
        Copy->addInput(SourceSlice(J));
        Copy->addOutput(OutSlice);
        legalizeAPs(*Copy);
        After(Copy);
      }
    } else {
      // Max, Min and the types DMA compute cannot add: bring each rank's
      // slice next to the output and fold with the vector engine.
      std::vector<AccessPattern> Operands;
      std::vector<Instruction *> Fetches; // null: no fetch
      for (unsigned J = 0; J < N; ++J) {
        AccessPattern Src = SourceSlice(J);
        if (J == Rank && isOnChip(Src.getLocation()->getKind()) &&
            sameCounts(Src, OutSlice)) {
          Operands.push_back(Src);
          Fetches.push_back(nullptr);
          continue;
        }
        std::string Tag = std::to_string(G.Members[J].Core);
        AccessPattern Tile = createScratch(S, G, *Mb.M, "from_" + Tag,
                                           OutSlice, MemoryKind::SB);
        auto *Fetch = insertBefore<InstDMACopy>(
            CC, instName(S, G, "fetch_" + Tag), dmaQueue(Queue + J), false);
        Fetch->addInput(Src);
        Fetch->addOutput(Tile);
        legalizeAPs(*Fetch);
        for (Instruction *D : Start)
          Fetch->addDependency(D);
        Operands.push_back(Fetch->outputs()[0]);
        Fetches.push_back(Fetch);
      }
      ArithOp Op = CC.getReduceOp() == ReduceOp::Max   ? ArithOp::Max
                   : CC.getReduceOp() == ReduceOp::Min ? ArithOp::Min
                                                       : ArithOp::Add;
      // The vector engine writes on-chip memory only: an output in DRAM is
      // folded in an SB tile first and then stored by DMA.
      bool OnChipOut = isOnChip(OutSlice.getLocation()->getKind());
      AccessPattern Acc =
          OnChipOut ? OutSlice
                    : createScratch(S, G, *Mb.M, "acc", OutSlice,
                                    MemoryKind::SB);
      for (unsigned J = 1; J < N; ++J) {
        auto *Fold = insertBefore<InstTensorTensor>(
            CC, instName(S, G, "rs_" + std::to_string(J)), Engine::DVE, Op);
        Fold->addInput(J == 1 ? Operands[0] : Acc);
        Fold->addInput(Operands[J]);
        Fold->addOutput(Acc);
        legalizeAPs(*Fold);
        for (unsigned K : {J == 1 ? 0u : J, J})
          if (Fetches[K])
            Fold->addDependency(Fetches[K]);
        After(Fold);
      }
      if (!OnChipOut) {
        auto *Store = insertBefore<InstDMACopy>(
            CC, instName(S, G, "rs_store"), dmaQueue(Queue), false);
        Store->addInput(Acc);
        Store->addOutput(OutSlice);
        legalizeAPs(*Store);
        After(Store);
      }
    }
  }

  std::vector<Instruction *> Done = Prev;
  if (G.Gather) {
    InstCoreBarrier *Mid =
        newBarrier(BB, CC.getIterator(), instName(S, G, "cb_mid"),
                          CC.getGroup().vec(), Sync);
    for (Instruction *D : Prev)
      Mid->addDependency(D);
    Done.clear();
    unsigned K = 0;
    for (unsigned PeerCore : getRemoteCores(CC.getGroup(), Mb.Core)) {
      Member &Peer = *llvm::find_if(
          G.Members, [&](const Member &X) { return X.Core == PeerCore; });
      AccessPattern PeerSlice =
          createPartialAP(Peer.CC->outputs()[0], G.Split, Rank);
      auto *Push = insertBefore<InstDMACopy>(
          CC, instName(S, G, "ag_" + std::to_string(Peer.Core)),
          dmaQueue(Queue + 1 + K++), false);
      Push->addInput(OutSlice);
      Push->addOutput(
          Remotes.createRemoteAP(PeerSlice, *Mb.M, *Peer.M, /*IsWrite=*/true));
      legalizeAPs(*Push);
      Push->addDependency(Mid);
      Done.push_back(Push);
    }
    if (Done.empty())
      Done.push_back(Mid);
  }
  InstCoreBarrier *End = newBarrier(
      BB, CC.getIterator(), instName(S, G, "cb_end"), CC.getGroup().vec(),
      Sync);
  for (Instruction *D : Done)
    End->addDependency(D);
  updateDeps(CC, *End);
}

void Lowerer::insertFences(SubgraphInfo &S, GroupPlan &G, unsigned Rank) {
  InstCollectiveCompute &CC = *G.Members[Rank].CC;
  std::vector<Instruction *> Deps = entryDeps(CC);
  std::vector<Instruction *> Users = usersInOrder(CC);
  BasicBlock &BB = *CC.getBasicBlock();
  if (!G.SkipBegin)
    CC.addDependency(beginBarrier(S, G, CC, Deps).back());
  if (G.SkipEnd)
    return;
  InstCoreBarrier *End = newBarrier(
      BB, std::next(CC.getIterator()), instName(S, G, "cb_end"), G.FenceCores,
      syncEngine(CC));
  End->addDependency(&CC);
  for (Instruction *U : Users)
    U->addDependency(End);
}

void Lowerer::lower(SubgraphInfo &S, GroupPlan &G) {
  InstNames.clear();
  LocNames.clear();
  Semaphore.clear();
  unsigned N = G.Members.size();
  Sources.clear();
  for (Member &Mb : G.Members)
    Sources.push_back(Mb.CC->inputs()[0]);
  switch (G.How) {
  case Lowering::Swap:
    for (unsigned R = 0; R < N; ++R)
      lowerSendRecv(S, G, R);
    break;
  case Lowering::SwapCCE:
    for (unsigned R = 0; R < N; ++R)
      lowerSendRecvCCE(S, G, R);
    break;
  case Lowering::AllReduce:
    // Every core opens the region (and stages) before any core reads a
    // peer's source.
    Starts.clear();
    for (unsigned R = 0; R < N; ++R)
      Starts.push_back(openRegion(S, G, R));
    for (unsigned R = 0; R < N; ++R)
      lowerAllReduce(S, G, R);
    break;
  case Lowering::Fence:
    for (unsigned R = 0; R < N; ++R)
      insertFences(S, G, R);
    return;
  }
  for (Member &Mb : G.Members)
    Mb.CC->getBasicBlock()->removeInstruction(Mb.CC);
}

/// The subgraphs in order of first appearance, with their modules by core.
std::vector<SubgraphInfo> collectSubgraphs(const Program &P) {
  std::vector<SubgraphInfo> Out;
  for (const Subgraph &G : P.subgraphs()) {
    SubgraphInfo &S = Out.emplace_back();
    S.Id = G.getId();
    for (Module *M : G.modules())
      S.ByCore[M->getNeuronCoreId()] = M;
  }
  return Out;
}

bool hasHandledCollective(const Module &M) {
  bool Found = false;
  M.walk([&](Instruction &I) {
    if (const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(&I))
      Found |= isHandledByLowering(*CC);
  });
  return Found;
}

void collectNames(SubgraphInfo &S) {
  for (auto [Core, M] : S.ByCore) {
    for (const auto &L : M->getMemoryLocations().locations())
      S.LocNames.add(L->getName());
    M->walk([&](Instruction &I) {
      S.InstNames.add(I.getName());
      if (const auto *W = llvm::dyn_cast<InstSemaphoreWait>(&I))
        S.Semaphores.add(W->getSemaphore());
      if (const auto *C = llvm::dyn_cast<InstCopyBase>(&I))
        if (C->getSignal())
          S.Semaphores.add(C->getSignal()->Semaphore);
    });
  }
}

/// What one lowering does, for --remarks.
std::string describePlan(const GroupPlan &G, unsigned Rank) {
  const Member &Mb = G.Members[Rank];
  std::string Kind = enumName(Mb.CC->getKind()).str();
  switch (G.How) {
  case Lowering::Swap:
  case Lowering::SwapCCE:
    return Kind + " with core " + std::to_string(G.Members[1 - Rank].Core) +
           ": " + (G.UseGPSIMD[Rank] ? "GPSIMDSB2SB" : "DMACopy") + ", " +
           G.EngineWhy[Rank];
  case Lowering::AllReduce: {
    std::string Split =
        G.Split.How == TensorSplit::Kind::FreeDim
            ? "slices of dimension " + std::to_string(G.Split.Dim)
        : G.Split.How == TensorSplit::Kind::Partitions
            ? std::string("slices of the partitions")
            : std::string("no split: every core reduces the whole tensor");
    return Kind + " over " + std::to_string(G.Members.size()) + " cores: " +
           (G.Accumulate ? "accumulating DMA copies"
                         : "fetches folded by TensorTensor on DVE (DMA "
                           "compute adds fp32, bf16 and fp16 only)") +
           ", " + Split;
  }
  case Lowering::Fence:
    if (!Mb.CC->isLocal())
      return Kind + " (not local: group " + coreList(Mb.CC->getGroup()) +
             ") kept and fenced by barriers over every core of the logical "
             "core: kinds >= 3 are fenced, not decomposed";
    return Kind + " kept and fenced by barriers over its group: kinds >= 3 "
                  "are fenced, not decomposed";
  }
  return Kind;
}

} // namespace

llvm::Expected<bool> LowerLocalCollectives::run(Program &Modules) {
  if (Modules.empty())
    return false;
  Target Arch = Modules[0]->getTargetOptions().Arch;
  if (Opts.RunSharedAllocationBeforePostSched && Arch != Target::Trn2)
    remark("--run-shared-allocation-before-post-sched ignored: it is only "
           "relevant for trn2, and the target is " +
           enumName(Arch));
  if (wantsRemarks())
    Modules.walk([&](Instruction &I) {
      if (const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(&I))
        if (!isHandledByLowering(*CC))
          remark(I, enumName(CC->getKind()) + " not local (group " +
                        coreList(CC->getGroup()) +
                        " lists ranks of a wider job): left untouched, "
                        "kinds 0 to 2 are lowered only when local");
    });
  unsigned Lnc = Modules[0]->getTargetOptions().LncSize;
  if (Lnc == 1)
    return false;
  Lowerer L(Opts, Lnc);
  std::vector<SubgraphInfo> Subgraphs = collectSubgraphs(Modules);
  // Every subgraph is grouped and planned before anything changes, so an
  // error leaves the whole program as it was.
  std::vector<std::vector<GroupPlan>> Plans(Subgraphs.size());
  // The remarks are written once everything is planned: a failing run
  // explains nothing.
  std::vector<std::pair<const Instruction *, std::string>> Remarks;
  uint64_t Skipped = 0;
  for (size_t I = 0; I < Subgraphs.size(); ++I) {
    SubgraphInfo &S = Subgraphs[I];
    if (llvm::none_of(S.ByCore, [](const auto &E) {
          return hasHandledCollective(*E.second);
        }))
      continue;
    if (S.ByCore.size() != Lnc)
      return makeError("subgraph " + llvm::Twine(S.Id) + " has " +
                       llvm::Twine(S.ByCore.size()) +
                       " module(s) for lnc_size " + llvm::Twine(Lnc) +
                       "; local collectives are lowered on a split program "
                       "(run lnc_splitter first)");
    collectNames(S);
    llvm::Expected<std::vector<GroupPlan>> Groups = L.extractAndGroupCCOps(S);
    if (!Groups)
      return Groups.takeError();
    std::map<unsigned, PrecedingMap> Preceding;
    for (auto [Core, M] : S.ByCore)
      Preceding[Core] = getPrecedingCoreBarrierOrLocalCCMap(*M);
    for (GroupPlan &G : *Groups) {
      if (llvm::Error E = L.plan(S, G))
        return E;
      G.SkipBegin = llvm::all_of(G.Members, [&](const Member &Mb) {
        return precededByLocalCC(*Mb.CC, Preceding[Mb.Core]);
      });
      G.SkipEnd = G.How == Lowering::Fence &&
                  llvm::all_of(G.Members, [](const Member &Mb) {
                    return followedByCoreBarrier(*Mb.CC);
                  });
      Skipped += G.Members.size() * (unsigned(G.SkipBegin) + G.SkipEnd);
      for (unsigned R = 0; R < G.Members.size() && wantsRemarks(); ++R) {
        const InstCollectiveCompute &CC = *G.Members[R].CC;
        if (G.How == Lowering::Fence && G.SkipBegin && G.SkipEnd) {
          Remarks.push_back({&CC, "already fenced on both sides: left as it "
                                  "is"});
          continue;
        }
        Remarks.push_back({&CC, describePlan(G, R)});
        if (G.SkipBegin)
          Remarks.push_back(
              {&CC, "no begin barrier: '" +
                        Preceding[G.Members[R].Core].lookup(&CC)->getName().str() +
                        "' directly before it fences its group and "
                        "precedes everything it waits for"});
        if (G.SkipEnd)
          Remarks.push_back({&CC, "no end barrier: a barrier over its group "
                                  "already follows it for every user"});
      }
      // A collective that stays and is fenced on both sides on every core
      // (by an earlier run, say) is left as it is.
      if (G.How == Lowering::Fence && G.SkipBegin && G.SkipEnd)
        continue;
      Plans[I].push_back(std::move(G));
    }
  }
  for (const auto &[I, Text] : Remarks)
    remark(*I, Text);
  bool Changed = false;
  uint64_t GPSIMDCopies = 0, DMACopies = 0;
  for (size_t I = 0; I < Subgraphs.size(); ++I) {
    if (Plans[I].empty())
      continue;
    for (GroupPlan &G : Plans[I]) {
      for (bool G1 : G.UseGPSIMD)
        (G1 ? GPSIMDCopies : DMACopies) += 1;
      L.lower(Subgraphs[I], G);
    }
    renumberCoreBarriers(Modules, Subgraphs[I].Id);
    Changed = true;
  }
  // Statistics: what was created, by kind and by engine.
  std::map<std::string, uint64_t> BytesByEngine;
  uint64_t Barriers = 0;
  for (const Instruction *I : L.Created) {
    if (llvm::isa<InstCoreBarrier>(I)) {
      ++Barriers;
      continue;
    }
    for (const AccessPattern &AP : I->outputs())
      BytesByEngine[isDMAQueue(I->getEngine())
                        ? "DMA"
                        : enumName(I->getEngine()).str()] +=
          AP.getNumElements() * getDataTypeSize(AP.getType());
  }
  if (Barriers)
    addStatistic("barriers inserted", Barriers);
  if (Skipped)
    addStatistic("barriers skipped (region already fenced)", Skipped);
  if (GPSIMDCopies)
    addStatistic("SendRecv copies on GPSIMD", GPSIMDCopies);
  if (DMACopies)
    addStatistic("SendRecv copies by DMA", DMACopies);
  for (const auto &[Engine, Bytes] : BytesByEngine)
    addStatistic("bytes written by created " + Engine + " instructions",
                 Bytes);
  return Changed;
}

} // namespace loom::bir
