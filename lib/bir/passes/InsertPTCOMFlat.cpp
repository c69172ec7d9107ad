//===- InsertPTCOMFlat.cpp - Point-to-point completion tokens ------------===//
//
// The rewrite, on a lowered SendRecv whose copies write each core's `out`
// through the peer's remote location inside a loop (core 0 shown; core 1
// gets the same completion, waiting for the same writes):
//
//   before                                  after
//   ^loop -> ^loop, ^done                   ^loop -> ^loop, ^done
//     %cp = DMACopy[DMA0] out=out_remote_1    %cp = DMACopy[DMA0] out=out_remote_1
//     %br = Branch[SP] kind=Loop              %br = Branch[SP] kind=Loop
//   ^done -> ^exit                          ^done -> ^exit
//     %j = Branch[SP] kind=Jump               %out-PTCOM = TensorCompletion[SP]
//                                                 waits=(0:%cp, 1:%cp)
//                                                 in=out[0:128, +0, (1,256), fp32]
//                                             %j = Branch[SP] kind=Jump
//
// The loop is the writers' first common post-dominator, but a completion
// there would fire every iteration, so it is hoisted to ^done.
//
// When the writes end at several exits, the first common post-dominator is
// the virtual exit and every exit the writers reach gets a copy (a Loop
// branch with trip count 1 takes ^b, so only %cb runs and is waited for):
//
//   ^a                                      ^a
//     %ca = DMACopy out=out_remote_1          %ca = DMACopy out=out_remote_1
//     %ra = Branch[SP] kind=Return            %out-PTCOM = TensorCompletion[SP]
//   ^b                                            waits=(0:%cb, 1:%cb) in=out[...]
//     %cb = DMACopy out=out_remote_1          %ra = Branch[SP] kind=Return
//     %rb = Branch[SP] kind=Return          ^b
//                                             %cb = DMACopy out=out_remote_1
//                                             %out-PTCOM-1 = TensorCompletion[SP]
//                                                 waits=(0:%cb, 1:%cb) in=out[...]
//                                             %rb = Branch[SP] kind=Return
//
// The steps follow neuronx-cc 2.24's InsertPTCOMFlat::run: identifyPTCOMBlocks,
// identifyLastWrites, extendLastWrites (with findNewLastWrite), insertPTCOMs.
// Everything is computed for every subgraph before the program is touched.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/passes/InsertPTCOMFlat.h"

#include "loom/bir/analysis/BlockDifference.h"
#include "loom/bir/analysis/CFGView.h"
#include "loom/bir/analysis/PostDominators.h"
#include "loom/bir/analysis/SCC.h"
#include "loom/bir/ir/Instructions.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <iterator>

namespace loom::bir {

using analysis::CFGView;
using analysis::describeBlockDifference;
using analysis::getTerminator;
using analysis::PostDominatorTree;
using analysis::PostDomNode;
using analysis::SCCInfo;

namespace {

/// neuronx-cc routes a completion away from the data-path engines
/// (bir::isDataPathEngine) to the sync engine; loom's sync engine is SP.
constexpr Engine CompletionEngine = Engine::SP;

/// How many block executions traceBlocks follows before it gives up and
/// assumes that every block reachable from the entry runs.
constexpr uint64_t MaxTracedBlocks = uint64_t(1) << 22;

/// The flat name of a location: its own, or for a remote location the name
/// of the location it stands for, which is the same on every core.
llvm::StringRef flatName(const MemoryLocation &L) {
  return L.isRemote() ? llvm::StringRef(L.getRemote()->MemLoc) : L.getName();
}

/// The location named Name on core 0, the key of the flat namespace; null if
/// core 0 has no local location of that name.
const MemoryLocation *findMemLocOnCore0(const Module &Core0,
                                        llvm::StringRef Name) {
  const MemoryLocation *L = Core0.getMemoryLocations().getMemlocByName(Name);
  return L && !L->isRemote() ? L : nullptr;
}

bool writesLocation(const Instruction &I, llvm::StringRef Name) {
  return llvm::any_of(I.outputs(), [&](const AccessPattern &AP) {
    return flatName(*AP.getLocation()) == Name;
  });
}

/// A completion must run once, after the producing region: never in a block
/// that lies on a cycle of the CFG.
bool meetsPTCOMRequirements(const SCCInfo &SCCs, unsigned Block) {
  return !SCCs.isInNonTrivialSCC(Block);
}

/// Blocks reachable from Starts (included).
std::vector<bool> reachableFrom(const CFGView &G,
                                llvm::ArrayRef<unsigned> Starts) {
  std::vector<bool> Seen(G.NumBlocks);
  std::vector<unsigned> Work;
  for (unsigned S : Starts)
    if (!Seen[S]) {
      Seen[S] = true;
      Work.push_back(S);
    }
  while (!Work.empty()) {
    unsigned B = Work.back();
    Work.pop_back();
    for (unsigned S : G.Succs[B])
      if (!Seen[S]) {
        Seen[S] = true;
        Work.push_back(S);
      }
  }
  return Seen;
}

/// What following the control flow tells about the blocks.
struct BlockTrace {
  /// Blocks that run at least once.
  std::vector<bool> Runs;
  /// Blocks that run exactly once: they run and lie on no cycle.
  std::vector<bool> Once;
  /// Rank of each block's first execution, for the blocks that run.
  std::vector<uint64_t> FirstRun;
  /// The blocks that run, in order of first execution (or, when !Exact, in
  /// index order).
  std::vector<unsigned> Order;
  /// False when the walk gave up: Runs is then every reachable block and
  /// FirstRun is unknown.
  bool Exact = false;
};

/// Follows the branches from the entry as a core would. Control flow never
/// depends on data (Loop branches count), so this is exactly what every core
/// does; it stops at a Return, or once every reachable block has run. A
/// completion must not wait for a write that never runs (the wait would
/// never be satisfied). Beyond MaxTracedBlocks executions every block
/// reachable from the entry counts as running: a wait too many shows up as
/// a deadlock in bir-sim, a wait too few would go unnoticed.
BlockTrace traceBlocks(const Module &M, const CFGView &G, const SCCInfo &SCCs) {
  std::vector<bool> Reachable = reachableFrom(G, {G.Entry});
  unsigned NumReachable = llvm::count(Reachable, true);
  BlockTrace T;
  T.Runs.assign(G.NumBlocks, false);
  T.FirstRun.assign(G.NumBlocks, 0);
  std::vector<uint64_t> Counter(G.NumBlocks);
  auto Finish = [&]() {
    T.Exact = true;
    T.Once.resize(G.NumBlocks);
    for (unsigned B = 0; B < G.NumBlocks; ++B)
      T.Once[B] = T.Runs[B] && !SCCs.isInNonTrivialSCC(B);
    return std::move(T);
  };
  unsigned B = G.Entry;
  for (uint64_t Step = 0; Step < MaxTracedBlocks; ++Step) {
    if (!T.Runs[B]) {
      T.Runs[B] = true;
      T.FirstRun[B] = T.Order.size();
      T.Order.push_back(B);
      if (T.Order.size() == NumReachable)
        return Finish();
    }
    const InstBranch *Br = getTerminator(*M.getBlock(B));
    if (!Br || Br->getKind() == BranchKind::Return || G.Succs[B].empty())
      return Finish();
    if (Br->getKind() == BranchKind::Jump) {
      B = G.Succs[B][0];
      continue;
    }
    // Loop: successor 0 while the counter stays below the trip count.
    if (++Counter[B] < Br->getTripCount() || G.Succs[B].size() < 2) {
      B = G.Succs[B][0];
      continue;
    }
    Counter[B] = 0;
    B = G.Succs[B][1];
  }
  BlockTrace Static;
  Static.Runs = std::move(Reachable);
  Static.Once.assign(G.NumBlocks, false);
  Static.FirstRun.assign(G.NumBlocks, 0);
  for (unsigned X = 0; X < G.NumBlocks; ++X)
    if (Static.Runs[X])
      Static.Order.push_back(X);
  return Static;
}

/// The per-core modules of one split subgraph; index = core.
struct SplitSubgraph {
  unsigned Id;
  std::vector<Module *> Cores;
};

llvm::Expected<std::vector<SplitSubgraph>> groupSubgraphs(const Program &P) {
  unsigned Lnc = P[0]->getTargetOptions().LncSize;
  std::vector<SplitSubgraph> Groups;
  for (const Subgraph &G : P.subgraphs()) {
    SplitSubgraph &S = Groups.emplace_back();
    S.Id = G.getId();
    S.Cores.assign(Lnc, nullptr);
    for (Module *M : G.modules()) {
      unsigned Core = M->getNeuronCoreId();
      if (Core >= Lnc)
        return makeError("subgraph " + llvm::Twine(S.Id) +
                         " has a module for core " + llvm::Twine(Core) +
                         ", outside lnc_size " + llvm::Twine(Lnc));
      if (S.Cores[Core])
        return makeError("subgraph " + llvm::Twine(S.Id) +
                         " has two modules for core " + llvm::Twine(Core));
      S.Cores[Core] = M;
    }
  }
  for (const SplitSubgraph &S : Groups)
    for (unsigned C = 0; C < Lnc; ++C)
      if (!S.Cores[C])
        return makeError("subgraph " + llvm::Twine(S.Id) +
                         " has no module for core " + llvm::Twine(C) +
                         " of lnc_size " + llvm::Twine(Lnc) +
                         "; insert_ptcom_flat needs one module per core "
                         "(run lnc_splitter first)");
  return Groups;
}

/// Flat placement puts the completion in the same block on every core, and
/// every core must take the same path through it, so the cores' CFGs must
/// agree: block names, successors, branch kinds and trip counts.
llvm::Error checkSameControlFlow(const SplitSubgraph &S) {
  const Module &M0 = *S.Cores[0];
  for (unsigned C = 1; C < S.Cores.size(); ++C) {
    const Module &M = *S.Cores[C];
    auto Differs = [&](const llvm::Twine &What) {
      return makeError("subgraph " + llvm::Twine(S.Id) + ": core " +
                       llvm::Twine(C) + " " + What +
                       "; insert_ptcom_flat needs the same control flow on "
                       "every core");
    };
    if (M.getNumBlocks() != M0.getNumBlocks())
      return Differs("has " + llvm::Twine(M.getNumBlocks()) +
                     " blocks, core 0 has " + llvm::Twine(M0.getNumBlocks()));
    for (unsigned B = 0; B < M.getNumBlocks(); ++B) {
      const BasicBlock &X = *M.getBlock(B), &Y = *M0.getBlock(B);
      if (describeBlockDifference(X, Y))
        return Differs("block " + llvm::Twine(B) + " '" + X.getName() +
                       "' differs from core 0's '" + Y.getName() +
                       "' in its name, successors, branch kind or trip count");
    }
  }
  return llvm::Error::success();
}

/// A write W that a later write W2 depends on (directly or through other
/// instructions) has finished, every time, once W2 has, provided W2 waits
/// for every execution of W: W is earlier in W2's block (the same pass
/// through the block), or W's and W2's blocks each run exactly once, W's
/// first. Such a W need not be waited for. Dependencies into loops, or from
/// one loop iteration to another, name only the most recent execution and
/// cover nothing.
bool coversAcrossBlocks(const BlockTrace &T, unsigned UserBlock,
                        unsigned DepBlock) {
  return T.Exact && T.Once[UserBlock] && T.Once[DepBlock] &&
         T.FirstRun[DepBlock] < T.FirstRun[UserBlock];
}

/// Scanning B backwards from It (which moves past what it returns), the
/// next write of Name that no later write of Name covers. Covered holds the
/// instructions that a later write depends on in a way that covers them.
const Instruction *
findNewLastWrite(const BasicBlock &B, unsigned BIndex, llvm::StringRef Name,
                 BasicBlock::const_iterator &It, const BlockTrace &T,
                 const llvm::DenseMap<const BasicBlock *, unsigned> &Index,
                 llvm::SmallPtrSetImpl<const Instruction *> &Covered) {
  while (It != B.begin()) {
    --It;
    const Instruction *I = It->get();
    bool Writes = writesLocation(*I, Name);
    bool IsCovered = Covered.count(I);
    if (Writes || IsCovered)
      for (const Instruction *Dep : I->dependencies()) {
        // A later dependency in B was scanned already: no effect.
        if (Dep->getBasicBlock() == &B) {
          Covered.insert(Dep);
          continue;
        }
        auto DI = Index.find(Dep->getBasicBlock());
        if (DI != Index.end() && coversAcrossBlocks(T, BIndex, DI->second))
          Covered.insert(Dep);
      }
    if (Writes && !IsCovered)
      return I;
  }
  return nullptr;
}

/// The last writes of Name on one core, in block order and then program
/// order: the blocks that run are scanned backwards in the order they first
/// run, from the last writer block to the first, so that a write is seen
/// after every write that could cover it.
std::vector<const Instruction *>
identifyLastWrites(const Module &M, llvm::StringRef Name,
                   llvm::ArrayRef<unsigned> WriterBlocks, const BlockTrace &T) {
  std::vector<bool> IsWriter(M.getNumBlocks());
  for (unsigned B : WriterBlocks)
    IsWriter[B] = true;
  size_t Lo = T.Order.size(), Hi = 0;
  for (size_t K = 0; K < T.Order.size(); ++K)
    if (IsWriter[T.Order[K]]) {
      Lo = std::min(Lo, K);
      Hi = K + 1;
    }
  llvm::DenseMap<const BasicBlock *, unsigned> Index;
  for (unsigned B = 0; B < M.getNumBlocks(); ++B)
    Index[M.getBlock(B)] = B;

  struct Found {
    unsigned Block;
    size_t Rank; // counts backwards within the block
    const Instruction *I;
  };
  std::vector<Found> Last;
  llvm::SmallPtrSet<const Instruction *, 16> Covered;
  for (size_t K = Hi; K > Lo; --K) {
    unsigned B = T.Order[K - 1];
    const BasicBlock &BB = *M.getBlock(B);
    BasicBlock::const_iterator It = BB.end();
    while (const Instruction *W =
               findNewLastWrite(BB, B, Name, It, T, Index, Covered))
      Last.push_back({B, Last.size(), W});
  }
  llvm::sort(Last, [](const Found &X, const Found &Y) {
    return X.Block != Y.Block ? X.Block < Y.Block : X.Rank > Y.Rank;
  });
  std::vector<const Instruction *> Result;
  for (const Found &F : Last)
    Result.push_back(F.I);
  return Result;
}

/// The waits of the completion of Name: the last writes of Name on every
/// core, in core order. The writes differ between cores after lowering (core
/// 0 writes core 1's copy and the other way round), so each core's are found
/// on that core rather than by core 0's instruction names.
std::vector<CompletionWait>
extendLastWrites(const SplitSubgraph &S, llvm::StringRef Name,
                 llvm::ArrayRef<unsigned> WriterBlocks, const BlockTrace &T) {
  std::vector<CompletionWait> Waits;
  for (unsigned C = 0; C < S.Cores.size(); ++C)
    for (const Instruction *W :
         identifyLastWrites(*S.Cores[C], Name, WriterBlocks, T))
      Waits.push_back({C, W->getName().str()});
  return Waits;
}

/// The input of a completion: every element of Loc.
void attachWholeTensorInputAP(Instruction &I, MemoryLocation &Loc) {
  uint64_t Count = Loc.getBytesPerPartition() / getDataTypeSize(Loc.getType());
  I.addInput(AccessPattern(&Loc, 0, Loc.getNumPartitions(), 0, {{1, Count}},
                           Loc.getType()));
}

/// One completion to insert on every core of a subgraph.
struct PendingPTCOM {
  std::string Name;
  std::string Location;
  unsigned Block;
  std::vector<CompletionWait> Waits;
  std::string Why;
};

/// The names of a completion's copies: "<location>-PTCOM" in the first
/// block, "<location>-PTCOM-<k>" in the k-th further one (several exits).
std::string getPTCOMName(llvm::StringRef Location, unsigned K) {
  std::string Name = (Location + "-PTCOM").str();
  if (K)
    Name += "-" + std::to_string(K);
  return Name;
}

llvm::StringMap<const Instruction *> indexInstructions(const Module &M) {
  llvm::StringMap<const Instruction *> Names;
  M.walk([&](Instruction &I) { Names[I.getName()] = &I; });
  return Names;
}

/// The completions of one subgraph, or nothing for a location whose
/// completion is already there (the pass has run before).
llvm::Expected<std::vector<PendingPTCOM>> planSubgraph(const SplitSubgraph &S) {
  if (llvm::Error E = checkSameControlFlow(S))
    return E;
  std::vector<const Module *> Cores(S.Cores.begin(), S.Cores.end());
  llvm::Expected<std::vector<PTCOMPlacement>> Placements =
      identifyPTCOMBlocks(Cores);
  if (!Placements)
    return Placements.takeError();
  if (Placements->empty())
    return std::vector<PendingPTCOM>();

  std::vector<llvm::StringMap<const Instruction *>> Names;
  for (const Module *M : Cores)
    Names.push_back(indexInstructions(*M));
  CFGView G = analysis::getCFGView(*Cores[0]);
  BlockTrace Trace = traceBlocks(*Cores[0], G, SCCInfo(G));

  std::vector<PendingPTCOM> Pending;
  for (const PTCOMPlacement &P : *Placements) {
    // Already inserted: a second run changes nothing.
    std::string First = getPTCOMName(P.Location, 0);
    if (auto It = Names[0].find(First);
        It != Names[0].end() && llvm::isa<InstTensorCompletion>(It->second))
      continue;
    for (unsigned C = 0; C < Cores.size(); ++C) {
      const MemoryLocation *L =
          Cores[C]->getMemoryLocations().getMemlocByName(P.Location);
      if (!L || L->isRemote())
        return makeError("subgraph " + llvm::Twine(S.Id) + ": core " +
                         llvm::Twine(C) + " has no location '" + P.Location +
                         "' of its own for the completion '" + First + "'");
      if (L->getBytesPerPartition() < getDataTypeSize(L->getType()))
        return makeError("subgraph " + llvm::Twine(S.Id) + ": location '" +
                         P.Location + "' of core " + llvm::Twine(C) +
                         " holds less than one element per partition");
      for (unsigned K = 0; K < P.Blocks.size(); ++K)
        if (Names[C].count(getPTCOMName(P.Location, K)))
          return makeError(
              "subgraph " + llvm::Twine(S.Id) + ": core " + llvm::Twine(C) +
              " already has an instruction '" + getPTCOMName(P.Location, K) +
              "' that is not the completion of '" + P.Location + "'");
    }
    std::vector<CompletionWait> Waits =
        extendLastWrites(S, P.Location, P.WriterBlocks, Trace);
    for (unsigned K = 0; K < P.Blocks.size(); ++K)
      Pending.push_back({getPTCOMName(P.Location, K), P.Location, P.Blocks[K],
                         Waits, P.Why});
  }
  return Pending;
}

/// Inserts each completion before the first terminator of its block, on
/// every core, reading the whole of that core's location.
void insertPTCOMs(const SplitSubgraph &S, llvm::ArrayRef<PendingPTCOM> Pending) {
  for (Module *M : S.Cores)
    for (const PendingPTCOM &P : Pending) {
      auto TC = std::make_unique<InstTensorCompletion>(P.Name, CompletionEngine);
      attachWholeTensorInputAP(
          *TC, *M->getMemoryLocations().getMemlocByName(P.Location));
      for (const CompletionWait &W : P.Waits)
        TC->addWait(W);
      BasicBlock *B = M->getBlock(P.Block);
      B->insert(B->getFirstTerminator(), std::move(TC));
    }
}

} // namespace

llvm::Expected<std::vector<PTCOMPlacement>>
identifyPTCOMBlocks(llvm::ArrayRef<const Module *> Cores) {
  const Module &Core0 = *Cores[0];
  CFGView G = analysis::getCFGView(Core0);
  PostDominatorTree PDT(G);
  SCCInfo SCCs(G);
  std::vector<bool> Reachable = reachableFrom(G, {G.Entry});

  // Per flat name: the blocks that write it on any core, and whether it is
  // shared. A write through a remote location makes the named location
  // shared; so does writing a location marked written_by_another_core, or a
  // SharedDRAM one.
  struct Writes {
    std::vector<unsigned> Blocks;
    bool Shared = false;
    unsigned FirstCore = 0;
  };
  llvm::StringMap<Writes> ByName;
  for (unsigned C = 0; C < Cores.size(); ++C)
    for (unsigned B = 0; B < Cores[C]->getNumBlocks(); ++B)
      for (const std::unique_ptr<Instruction> &I : *Cores[C]->getBlock(B))
        for (const AccessPattern &AP : I->outputs()) {
          const MemoryLocation &L = *AP.getLocation();
          auto [It, New] = ByName.try_emplace(flatName(L));
          Writes &W = It->second;
          if (New)
            W.FirstCore = C;
          if (W.Blocks.empty() || W.Blocks.back() != B)
            W.Blocks.push_back(B);
          W.Shared |= L.isRemote() || L.isWrittenByAnotherCore() ||
                      L.getKind() == MemoryKind::SharedDRAM;
        }

  // Shared locations are keyed on core 0: each must exist there.
  std::vector<llvm::StringRef> Missing;
  for (const auto &E : ByName)
    if (E.second.Shared && !findMemLocOnCore0(Core0, E.first()))
      Missing.push_back(E.first());
  if (!Missing.empty()) {
    llvm::sort(Missing);
    return makeError("subgraph " + llvm::Twine(Core0.getSubgraphId()) +
                     ": shared location '" + Missing[0] + "' written on core " +
                     llvm::Twine(ByName[Missing[0]].FirstCore) +
                     " has no location of that name on core 0");
  }

  std::vector<PTCOMPlacement> Result;
  for (const std::unique_ptr<MemoryLocation> &L :
       Core0.getMemoryLocations().locations()) {
    if (L->isRemote())
      continue;
    auto It = ByName.find(L->getName());
    if (It == ByName.end() || !It->second.Shared)
      continue;
    PTCOMPlacement P;
    P.Location = L->getName().str();
    for (unsigned B : It->second.Blocks)
      if (Reachable[B])
        P.WriterBlocks.push_back(B);
    llvm::sort(P.WriterBlocks);
    P.WriterBlocks.erase(std::unique(P.WriterBlocks.begin(), P.WriterBlocks.end()),
                        P.WriterBlocks.end());
    if (P.WriterBlocks.empty())
      continue;

    // The first common post-dominator, hoisted out of any loop it is in.
    PostDomNode N = PDT.getFirstCommonPostdominator(P.WriterBlocks);
    std::string Writers;
    for (unsigned B : P.WriterBlocks)
      Writers += (Writers.empty() ? "'" : ", '") +
                 Core0.getBlock(B)->getName().str() + "'";
    P.Why = "the first common post-dominator of the writer blocks " + Writers;
    bool Hoisted = false;
    while (!N.isVirtualExit() && !meetsPTCOMRequirements(SCCs, N.getBlock())) {
      N = PDT.getImmediatePostdominator(N.getBlock());
      Hoisted = true;
    }
    if (Hoisted)
      P.Why += ", hoisted out of the loop it is in";
    if (!N.isVirtualExit()) {
      P.Blocks.push_back(N.getBlock());
    } else {
      P.Why = "no block follows every write of the writer blocks " + Writers +
              ": one in each exit they reach";
      // No single block follows every write: the writes end at several
      // exits. Each run ends at exactly one exit, so one completion in every
      // exit the writers reach fires once after all of them. Roots that are
      // not exits lie in infinite loops and never get one.
      std::vector<bool> After = reachableFrom(G, P.WriterBlocks);
      for (unsigned B = 0; B < G.NumBlocks; ++B)
        if (After[B] && G.Succs[B].empty())
          P.Blocks.push_back(B);
    }
    if (!P.Blocks.empty())
      Result.push_back(std::move(P));
  }
  return Result;
}

llvm::Expected<bool> InsertPTCOMFlat::run(Program &Modules) {
  if (Modules.empty())
    return false;
  llvm::Expected<std::vector<SplitSubgraph>> Groups = groupSubgraphs(Modules);
  if (!Groups)
    return Groups.takeError();
  std::vector<std::vector<PendingPTCOM>> Pending;
  for (const SplitSubgraph &S : *Groups) {
    llvm::Expected<std::vector<PendingPTCOM>> P = planSubgraph(S);
    if (!P)
      return P.takeError();
    Pending.push_back(std::move(*P));
  }
  bool Changed = false;
  for (size_t G = 0; G < Groups->size(); ++G) {
    const SplitSubgraph &S = (*Groups)[G];
    insertPTCOMs(S, Pending[G]);
    Changed |= !Pending[G].empty();
    for (const PendingPTCOM &P : Pending[G]) {
      addStatistic("completions inserted", S.Cores.size());
      addStatistic("completion waits", S.Cores.size() * P.Waits.size());
      if (wantsRemarks())
        remark("subgraph " + llvm::Twine(S.Id) + ": '" + P.Name +
               "' in block '" + S.Cores[0]->getBlock(P.Block)->getName() +
               "' on every core, waiting for " + llvm::Twine(P.Waits.size()) +
               " write(s): " + P.Why);
    }
  }
  return Changed;
}

} // namespace loom::bir
