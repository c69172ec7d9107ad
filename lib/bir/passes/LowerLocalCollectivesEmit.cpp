//===- LowerLocalCollectivesEmit.cpp - Insert what the plan says ----------===//
//
// The second half of lower_local_collectives (LowerLocalCollectivesInternal.h):
// the copies, barriers, semaphore waits and scratch tiles of each planned
// lowering, on every core of its group (the rewrites are shown in
// LowerLocalCollectives.cpp).
//
//===----------------------------------------------------------------------===//

#include "LowerLocalCollectivesInternal.h"

namespace loom::bir::local_collectives {

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


} // namespace loom::bir::local_collectives
