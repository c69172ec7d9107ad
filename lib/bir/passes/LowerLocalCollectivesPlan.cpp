//===- LowerLocalCollectivesPlan.cpp - Group and plan each collective -----===//
//
// The first half of lower_local_collectives (LowerLocalCollectivesInternal.h):
// the copies of each collective found and grouped across the cores, and every
// decision about its lowering taken before the program is touched, so that a
// collective the pass refuses leaves the program unchanged.
//
//===----------------------------------------------------------------------===//

#include "LowerLocalCollectivesInternal.h"

namespace loom::bir::local_collectives {

std::string coreList(llvm::ArrayRef<unsigned> Cores) {
  std::string S = "[";
  for (size_t I = 0; I < Cores.size(); ++I)
    S += (I ? "," : "") + std::to_string(Cores[I]);
  return S + "]";
}

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

Engine syncEngine(const Instruction &CC) {
  return isDMAQueue(CC.getEngine()) ? Engine::POOL : CC.getEngine();
}

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

namespace {

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

} // namespace

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


} // namespace loom::bir::local_collectives
