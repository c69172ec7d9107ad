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
// The pass is in three files: this one runs it over every subgraph; the
// grouping and planning are in LowerLocalCollectivesPlan.cpp, the rewriting
// in LowerLocalCollectivesEmit.cpp, their shared declarations in
// LowerLocalCollectivesInternal.h.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/passes/LowerLocalCollectives.h"

#include "LowerLocalCollectivesInternal.h"

namespace loom::bir {

using namespace local_collectives;

namespace {

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
