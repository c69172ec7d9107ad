//===- SimulatorSetup.cpp - Building a subgraph's simulation state ----------===//
//
// Everything that happens before the first instruction runs
// (docs/simulator.md, "State", "Inputs", "Limits"): a storage per location
// (SharedDRAM once per logical core, remote locations resolved to the
// peer's), the static facts of every instruction (operands, duration,
// dependencies, collective attribution, byte counts), the rendezvous that
// match barriers and collectives across cores, completions' and signals'
// targets, the block walk that counts executions against --max-steps and
// --max-work and finds the inputs, and the seeded and given initial values.
//
//===----------------------------------------------------------------------===//

#include "SimulatorImpl.h"

#include "Semantics.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace loom::bir::sim::detail {

static uint64_t hashName(uint64_t Seed, llvm::StringRef Name, int64_t Core) {
  uint64_t H = mix(Seed ^ 0x6c6f6f6d);
  for (char C : Name)
    H = mix(H ^ uint8_t(C));
  return mix(H ^ uint64_t(Core + 1));
}

static void seedStorage(Storage &S, uint64_t Seed) {
  uint64_t H = hashName(Seed, S.Name, S.Owner ? int64_t(*S.Owner) : -1);
  // In a launch, each device's storages get their own values.
  if (S.Device)
    H = mix(H ^ (uint64_t(*S.Device + 1) << 32));
  unsigned Size = getDataTypeSize(S.Type);
  uint64_t Elems = S.BytesPerPartition / Size;
  uint8_t *D = S.Data.data();
  for (unsigned P = 0; P < S.Partitions; ++P) {
    uint8_t *Row = D + uint64_t(P) * S.BytesPerPartition;
    for (uint64_t E = 0; E < Elems; ++E) {
      uint64_t R = mix(H + uint64_t(P) * Elems + E);
      double V;
      switch (S.Type) {
      case DataType::FP8E5M2: V = double(int64_t(R % 16) - 8) / 4; break;
      case DataType::FP32:
      case DataType::BF16:
      case DataType::FP16:
      case DataType::FP8E4M3: V = double(int64_t(R % 32) - 16) / 8; break;
      case DataType::UINT8:
      case DataType::UINT16:
      case DataType::UINT32:
      case DataType::UINT64: V = double(R % 16); break;
      default: V = double(int64_t(R % 16) - 8); break;
      }
      storeF32(S.Type, float(V), Row + E * Size); // V is exact in float
    }
    for (uint64_t B = Elems * Size; B < S.BytesPerPartition; ++B)
      Row[B] = uint8_t(mix(H ^ B));
  }
  S.AllInit = true;
  S.Seeded = true;
}

llvm::Error SubgraphSim::makeStorages() {
  unsigned Dev = 0;
  auto Add = [&](const MemoryLocation &L,
                 std::optional<unsigned> Owner) -> llvm::Expected<Storage *> {
    uint64_t Bytes = uint64_t(L.getNumPartitions()) * L.getBytesPerPartition();
    if (MemUsed + Bytes > O.MaxMemory || MemUsed + Bytes < MemUsed)
      return fail(FailureKind::Error,
                  llvm::formatv("simulated storage exceeds --max-memory={0} "
                                "bytes at location '{1}' ({2} bytes)",
                                O.MaxMemory, L.getName(), Bytes)
                      .str());
    MemUsed += Bytes;
    auto S = std::make_unique<Storage>();
    S->Id = Storages.size();
    S->Name = L.getName().str();
    S->Owner = Owner;
    if (Launch)
      S->Device = Dev;
    S->Loc = &L;
    S->Kind = L.getKind();
    S->Type = L.getType();
    S->Partitions = L.getNumPartitions();
    S->BytesPerPartition = L.getBytesPerPartition();
    // A constant starts with its bytes (docs/bir.md "Memory locations").
    if (L.hasInitialData()) {
      S->Data.assign(L.getInitialData().begin(), L.getInitialData().end());
      S->AllInit = true;
    } else {
      S->Data.assign(Bytes, 0);
    }
    Storages.push_back(std::move(S));
    return Storages.back().get();
  };
  // SharedDRAM is per device (docs/simulator.md, "Launches").
  Shared.resize(NumDevices);
  for (CoreSim &C : Cores) {
    Dev = C.Device;
    llvm::StringMap<Storage *> &Shared = this->Shared[C.Device];
    for (const auto &L : C.M->getMemoryLocations().locations()) {
      if (L->isRemote())
        continue;
      if (L->getKind() == MemoryKind::SharedDRAM) {
        auto It = Shared.find(L->getName());
        if (It != Shared.end()) {
          Storage *S = It->second;
          if (S->Type != L->getType() || S->Partitions != L->getNumPartitions() ||
              S->BytesPerPartition != L->getBytesPerPartition())
            return fail(FailureKind::Error,
                        "SharedDRAM location '" + L->getName() +
                            "' has a different type or shape on " +
                            coreName(C));
          C.StorageOf[L.get()] = S;
          continue;
        }
        auto S = Add(*L, std::nullopt);
        if (!S)
          return S.takeError();
        Shared[L->getName()] = *S;
        C.StorageOf[L.get()] = *S;
        continue;
      }
      auto S = Add(*L, C.Core);
      if (!S)
        return S.takeError();
      C.StorageOf[L.get()] = *S;
    }
  }
  for (CoreSim &C : Cores)
    for (const auto &L : C.M->getMemoryLocations().locations()) {
      if (!L->isRemote())
        continue;
      const RemoteRef &R = *L->getRemote();
      std::optional<unsigned> PeerCore = peer(C, R.Core);
      const MemoryLocation *Peer =
          PeerCore ? Cores[*PeerCore].M->getMemoryLocations().getMemlocByName(
                         R.MemLoc)
                   : nullptr;
      if (!Peer || Peer->isRemote())
        return fail(FailureKind::Error,
                    "remote location '" + L->getName() + "' of " +
                        coreName(C) + " names '" + R.MemLoc + "' of core " +
                        llvm::Twine(R.Core) +
                        ", which has no such local location");
      C.StorageOf[L.get()] = Cores[*PeerCore].StorageOf[Peer];
    }
  return llvm::Error::success();
}

llvm::Error SubgraphSim::makeStatics(CoreSim &C) {
  analysis::CostModel Cost(O.Cost);
  const Module &M = *C.M;
  C.BlockInsts.resize(M.getNumBlocks());
  C.LoopCounter.assign(M.getNumBlocks(), 0);
  for (unsigned B = 0; B < M.getNumBlocks(); ++B)
    C.BlockIndex[M.getBlock(B)] = B;
  for (unsigned B = 0; B < M.getNumBlocks(); ++B) {
    for (const auto &IP : *M.getBlock(B)) {
      uint32_t Id = C.Insts.size();
      C.Insts.emplace_back();
      StaticInst &S = C.Insts.back();
      S.I = IP.get();
      S.Eng = static_cast<unsigned>(IP->getEngine());
      S.Block = B;
      S.Dur = Cost.instructionNs(*IP);
      C.IdOf[IP.get()] = Id;
      C.ByName[IP->getName()] = Id;
      C.BlockInsts[B].push_back(Id);
    }
  }
  // Storage id -> the core's instructions writing it (for completions).
  llvm::DenseMap<unsigned, llvm::SmallVector<uint32_t, 4>> Writers;
  for (uint32_t Id = 0; Id < C.Insts.size(); ++Id) {
    StaticInst &S = C.Insts[Id];
    const Instruction &I = *S.I;
    for (const Instruction *D : I.dependencies())
      S.Needs.push_back(C.IdOf.lookup(D));
    auto Operand = [&](const AccessPattern &AP) {
      Storage *St = C.StorageOf.lookup(AP.getLocation());
      uint64_t Bytes = AP.getNumElements() * getDataTypeSize(AP.getType());
      return OperandInfo{St, &AP, RunShape(AP, St->BytesPerPartition), Bytes};
    };
    for (const AccessPattern &AP : I.inputs())
      S.In.push_back(Operand(AP));
    for (const AccessPattern &AP : I.outputs()) {
      S.Out.push_back(Operand(AP));
      Writers[S.Out.back().S->Id].push_back(Id);
    }
    if (auto *D = llvm::dyn_cast<InstDMACopy>(&I))
      S.Accumulate = D->isAccumulate();
    if (auto *Mm = llvm::dyn_cast<InstMatmul>(&I))
      S.Accumulate = Mm->isAccumulate();
    if (auto *TR = llvm::dyn_cast<InstTensorReduce>(&I))
      S.Accumulate = TR->isAccumulate();
    if (I.getType() != InstructionType::TensorCompletion) {
      for (const OperandInfo &Op : S.Out) {
        S.BytesOut += Op.Bytes;
        if (Op.S->Owner && *Op.S->Owner != C.Core)
          S.BytesTo += Op.Bytes;
      }
      for (const OperandInfo &Op : S.In)
        if (Op.S->Owner && *Op.S->Owner != C.Core)
          S.BytesFrom += Op.Bytes;
    }
    // Attribute to a collective: its own name, or "<collective>_...".
    llvm::StringRef Name = I.getName();
    for (size_t P = Name.size() + 1; P-- > 0;) {
      if (P != Name.size() && Name[P] != '_')
        continue;
      auto It = CollIdx.find(Name.substr(0, P));
      if (It != CollIdx.end()) {
        S.Collective = It->second;
        break;
      }
    }
    switch (I.getType()) {
    case InstructionType::CoreBarrier:
      S.Sync = SyncKind::Barrier;
      for (unsigned Core : llvm::cast<InstCoreBarrier>(I).getCores())
        S.ListMask |= uint64_t(1) << (C.Base + Core);
      break;
    case InstructionType::CollectiveCompute: {
      auto &CC = llvm::cast<InstCollectiveCompute>(I);
      if (!CC.isLocal() && !Launch)
        return fail(FailureKind::Error,
                    "collective '" + I.getName() + "' on core " +
                        llvm::Twine(C.Core) +
                        " is not local: its group lists ranks of a wider job, "
                        "which bir-sim does not simulate");
      if (CC.getKind() == CollectiveKind::AllToAllV)
        return fail(FailureKind::Error,
                    "collective '" + I.getName() + "' on " + coreName(C) +
                        ": AllToAllV has no element semantics (its per-peer "
                        "sizes are not in BIR), so bir-sim cannot run it");
      S.Sync = SyncKind::Collective;
      if (!CC.isLocal()) {
        // Across devices: the group lists device ids, and the instance on
        // core c meets core c of every other device of the group.
        for (unsigned D : CC.getGroup()) {
          if (D >= NumDevices)
            return fail(FailureKind::Error,
                        "collective '" + I.getName() + "' on " + coreName(C) +
                            " names device " + llvm::Twine(D) +
                            ", which the launch does not have");
          if (S.ListMask & (uint64_t(1) << (DeviceBase[D] + C.Core)))
            return fail(FailureKind::Error,
                        "collective '" + I.getName() + "' on " + coreName(C) +
                            " lists device " + llvm::Twine(D) + " twice");
          S.ListMask |= uint64_t(1) << (DeviceBase[D] + C.Core);
        }
        if (!llvm::is_contained(CC.getGroup(), C.Device))
          return fail(FailureKind::Error,
                      "collective '" + I.getName() + "' on " + coreName(C) +
                          " has a group that does not list its own device");
        break;
      }
      for (unsigned Core : CC.getGroup()) {
        std::optional<unsigned> G = peer(C, Core);
        if (!G)
          return fail(FailureKind::Error,
                      "collective '" + I.getName() + "' on " + coreName(C) +
                          " names core " + llvm::Twine(Core) +
                          ", which does not exist");
        S.ListMask |= uint64_t(1) << *G;
      }
      break;
    }
    case InstructionType::TensorCompletion:
      S.Sync = SyncKind::Completion;
      break;
    case InstructionType::SemaphoreWait: {
      auto &W = llvm::cast<InstSemaphoreWait>(I);
      S.Sync = SyncKind::SemWait;
      S.SemIndex = C.semIndex(W.getSemaphore());
      S.SemCount = W.getCount();
      break;
    }
    default:
      break;
    }
  }
  for (uint32_t Id = 0; Id < C.Insts.size(); ++Id) {
    StaticInst &S = C.Insts[Id];
    if (S.Sync != SyncKind::Completion)
      continue;
    for (const OperandInfo &Op : S.In)
      for (uint32_t W : Writers.lookup(Op.S->Id))
        if (W != Id && !llvm::is_contained(S.Needs, W))
          S.Needs.push_back(W);
  }
  return llvm::Error::success();
}

llvm::Error SubgraphSim::linkSync() {
  for (CoreSim &C : Cores) {
    for (uint32_t Id = 0; Id < C.Insts.size(); ++Id) {
      StaticInst &S = C.Insts[Id];
      const Instruction &I = *S.I;
      if (S.Sync == SyncKind::Barrier || S.Sync == SyncKind::Collective) {
        // A barrier meets the same name and id, a collective the same name,
        // on the cores it lists: two collectives of one name over disjoint
        // groups (pairs 0-1 and 2-3) are two meetings.
        llvm::ArrayRef<unsigned> Cores =
            S.Sync == SyncKind::Barrier
                ? llvm::cast<InstCoreBarrier>(I).getCores()
                : llvm::cast<InstCollectiveCompute>(I).getGroup();
        std::string Key =
            S.Sync == SyncKind::Barrier
                ? (I.getName() + "\x1f" +
                   llvm::Twine(llvm::cast<InstCoreBarrier>(I).getId()))
                      .str()
                : ("\x1e" + I.getName()).str();
        // A barrier's cores are a set; a collective's group is in rank order.
        // Members are positions in this->Cores: in a launch, a local one's
        // are its device's cores, a remote one's core C of each device of
        // its group (docs/simulator.md, "Launches").
        bool Remote = S.Sync == SyncKind::Collective &&
                      !llvm::cast<InstCollectiveCompute>(I).isLocal();
        if (Remote)
          Key[0] = '\x1c';
        std::vector<unsigned> Members;
        for (unsigned M : Cores)
          Members.push_back(Remote ? DeviceBase[M] + C.Core
                                   : C.Base + M);
        if (S.Sync == SyncKind::Barrier)
          llvm::sort(Members);
        for (unsigned Core : Members)
          Key += "\x1d" + std::to_string(Core);
        auto It = RdvIdx.find(Key);
        if (It == RdvIdx.end()) {
          It = RdvIdx.insert({Key, uint32_t(Rdv.size())}).first;
          Rdv.emplace_back();
          Rdv.back().Label =
              S.Sync == SyncKind::Barrier
                  ? ("barrier '" + I.getName() + "' (id " +
                     llvm::Twine(llvm::cast<InstCoreBarrier>(I).getId()) + ")")
                        .str()
                  : ("collective '" + I.getName() + "'").str();
        }
        S.SyncKey = It->second;
      }
      if (auto *TC = llvm::dyn_cast<InstTensorCompletion>(&I)) {
        for (const CompletionWait &W : TC->getWaits()) {
          uint32_t Target = NoIndex;
          std::optional<unsigned> G = peer(C, W.Core);
          if (G) {
            auto It = Cores[*G].ByName.find(W.Instruction);
            if (It != Cores[*G].ByName.end())
              Target = It->second;
          }
          if (Target == NoIndex)
            return fail(FailureKind::Error,
                        "completion '" + I.getName() + "' on " + coreName(C) +
                            " waits for '" + W.Instruction + "' on core " +
                            llvm::Twine(W.Core) + ", which does not exist");
          S.Waits.push_back({*G, Target});
        }
      }
      if (auto *CB = llvm::dyn_cast<InstCopyBase>(&I)) {
        if (const auto &Sig = CB->getSignal()) {
          std::optional<unsigned> G = peer(C, Sig->Core);
          if (!G)
            return fail(FailureKind::Error,
                        "copy '" + I.getName() + "' on " + coreName(C) +
                            " signals core " + llvm::Twine(Sig->Core) +
                            ", which does not exist");
          S.SignalCore = *G;
          S.SignalSem = Cores[*G].semIndex(Sig->Semaphore);
          Cores[*G].Sems[S.SignalSem].Signallers.push_back({C.Index, Id});
        }
      }
    }
  }
  return llvm::Error::success();
}

/// Every member of a collective across devices must run the same
/// instruction: a collective of the same name on the same core, not local,
/// with the same group. Checked before the run, so that a launch whose
/// devices disagree fails with the disagreement, not with a deadlock.
llvm::Error SubgraphSim::checkRemoteGroups() {
  auto GroupText = [](llvm::ArrayRef<unsigned> G) {
    std::string T = "[";
    for (unsigned D : G)
      T += (T.size() > 1 ? ", " : "") + std::to_string(D);
    return T + "]";
  };
  for (const CoreSim &C : Cores)
    for (const StaticInst &S : C.Insts) {
      const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(S.I);
      if (!CC || CC->isLocal())
        continue;
      for (unsigned D : CC->getGroup()) {
        if (D == C.Device)
          continue;
        const CoreSim &P = Cores[DeviceBase[D] + C.Core];
        std::string Head = ("collective '" + CC->getName() + "' on " +
                            coreName(C) + " has the group of devices " +
                            GroupText(CC->getGroup()) + ", but " + coreName(P))
                               .str();
        auto It = P.ByName.find(CC->getName());
        const auto *PC =
            It == P.ByName.end()
                ? nullptr
                : llvm::dyn_cast<InstCollectiveCompute>(P.Insts[It->second].I);
        if (!PC)
          return fail(FailureKind::Error,
                      Head + " has no collective of that name");
        if (PC->isLocal())
          return fail(FailureKind::Error, Head + " has a local one");
        if (PC->getGroup() != CC->getGroup())
          return fail(FailureKind::Error,
                      Head + " has " + GroupText(PC->getGroup()));
      }
    }
  return llvm::Error::success();
}

int SubgraphSim::nextBlock(CoreSim &C, unsigned Block,
                           std::vector<uint32_t> &Counters) {
  const BasicBlock &BB = *C.M->getBlock(Block);
  const auto *Br = llvm::dyn_cast<InstBranch>(BB.empty() ? nullptr
                                                         : (--BB.end())->get());
  if (!Br || Br->getKind() == BranchKind::Return)
    return -1;
  llvm::ArrayRef<BasicBlock *> Succ = BB.successors();
  if (Br->getKind() == BranchKind::Jump)
    return C.BlockIndex.lookup(Succ[0]);
  uint32_t &Cnt = Counters[Block];
  if (++Cnt < Br->getTripCount())
    return C.BlockIndex.lookup(Succ[0]);
  Cnt = 0;
  return C.BlockIndex.lookup(Succ[1]);
}

llvm::Error SubgraphSim::prewalk(CoreSim &C) {
  std::vector<uint8_t> Touched(Storages.size(), 0);
  std::vector<uint64_t> Visits(C.BlockInsts.size(), 0);
  std::vector<uint32_t> Counters(C.BlockInsts.size(), 0);
  // The bytes one pass through each block reads and writes.
  std::vector<uint64_t> BlockWork(C.BlockInsts.size(), 0);
  uint64_t Steps = 0, Work = 0;
  int B = 0;
  while (B >= 0) {
    uint64_t N = C.BlockInsts[B].size();
    if (Steps + N > O.MaxSteps)
      return fail(FailureKind::Error,
                  llvm::formatv("{0} runs more than --max-steps={1} "
                                "instruction executions (still running block "
                                "'{2}')",
                                coreName(C), O.MaxSteps,
                                C.M->getBlock(B)->getName())
                      .str());
    Steps += N;
    if (Visits[B]++ == 0) {
      for (uint32_t Id : C.BlockInsts[B]) {
        StaticInst &S = C.Insts[Id];
        for (const OperandInfo &Op : S.In)
          BlockWork[B] = llvm::SaturatingAdd(BlockWork[B], Op.Bytes);
        for (const OperandInfo &Op : S.Out)
          BlockWork[B] = llvm::SaturatingAdd(BlockWork[B], Op.Bytes);
        // A matmul's multiply-adds, K for each of its M x N outputs, cost
        // more than its bytes (docs/simulator.md, "Limits").
        if (llvm::isa<InstMatmul>(S.I) && !S.In.empty() && !S.Out.empty())
          BlockWork[B] = llvm::SaturatingAdd(
              BlockWork[B], llvm::SaturatingMultiply<uint64_t>(
                                S.In[0].AP->getNumPartitions(),
                                S.Out[0].AP->getNumElements()));
        if (S.Sync == SyncKind::Completion)
          continue;
        // Read before written in this core's order: an input. (Also for
        // locations a peer writes: a lowering may reduce into a location
        // whose unlowered collective read it first, so both programs must
        // seed it alike.)
        auto Read = [&](const OperandInfo &Op) {
          if (!Touched[Op.S->Id]) {
            Touched[Op.S->Id] = 1;
            Op.S->Seeded = true;
          }
        };
        for (const OperandInfo &Op : S.In)
          Read(Op);
        bool ReadsOut = S.Accumulate;
        if (auto *CC = llvm::dyn_cast<InstCollectiveCompute>(S.I))
          ReadsOut = CC->getKind() == CollectiveKind::PermuteReduce ||
                     CC->getKind() == CollectiveKind::PermuteReduceImplicit;
        for (const OperandInfo &Op : S.Out) {
          if (ReadsOut)
            Read(Op);
          Touched[Op.S->Id] = 1;
        }
      }
    }
    Work = llvm::SaturatingAdd(Work, BlockWork[B]);
    if (Work > O.MaxWork)
      return fail(FailureKind::Error,
                  llvm::formatv("{0} does more than --max-work={1} "
                                "units of work (bytes read and written, "
                                "matmul multiply-adds; still running block "
                                "'{2}')",
                                coreName(C), O.MaxWork, C.M->getBlock(B)->getName())
                      .str());
    B = nextBlock(C, B, Counters);
  }
  for (unsigned Blk = 0; Blk < C.BlockInsts.size(); ++Blk)
    for (uint32_t Id : C.BlockInsts[Blk]) {
      C.Insts[Id].Total = Visits[Blk];
      C.Eng[C.Insts[Id].Eng].Remaining += Visits[Blk];
    }
  return llvm::Error::success();
}

llvm::Error SubgraphSim::applyInputs() {
  for (const InputValue &In : O.Inputs) {
    for (CoreSim &C : Cores) {
      if ((In.Core && *In.Core != C.Core) ||
          (In.Device && *In.Device != C.Device))
        continue;
      const MemoryLocation *L =
          C.M->getMemoryLocations().getMemlocByName(In.Name);
      if (!L)
        continue;
      if (L->isRemote())
        return fail(FailureKind::Error,
                    "--input '" + In.Name + "': a remote location has no "
                    "storage of its own");
      Storage &S = *C.StorageOf.lookup(L);
      unsigned Size = getDataTypeSize(S.Type);
      uint64_t Elems = uint64_t(S.Partitions) * (S.BytesPerPartition / Size);
      uint64_t Given = 1;
      for (int64_t D : In.Array.Shape)
        Given *= uint64_t(D);
      if (Given != Elems)
        return fail(FailureKind::Error,
                    llvm::formatv("--input '{0}': the array has {1} elements, "
                                  "the location {2}",
                                  In.Name, Given, Elems)
                        .str());
      int ItemSize = npyDescrItemSize(In.Array.Descr);
      const char *Native = getNativeNpyDescr(S.Type);
      bool IsNative = In.Array.Descr == Native;
      bool IsF4 = In.Array.Descr == "<f4" && isFloatType(S.Type);
      bool IsF8 = In.Array.Descr == "<f8";
      if (!IsNative && !IsF4 && !IsF8)
        return fail(FailureKind::Error,
                    "--input '" + In.Name + "': dtype '" + In.Array.Descr +
                        "' does not fit " + enumName(S.Type) + " (use '" +
                        Native + "'" +
                        (isFloatType(S.Type) && S.Type != DataType::FP32
                             ? " or '<f4'"
                             : "") +
                        ")");
      const uint8_t *Src =
          reinterpret_cast<const uint8_t *>(In.Array.Data.data());
      for (unsigned P = 0; P < S.Partitions; ++P)
        for (uint64_t E = 0; E < S.BytesPerPartition / Size; ++E) {
          uint64_t Flat = uint64_t(P) * (S.BytesPerPartition / Size) + E;
          uint8_t *Dst =
              S.Data.data() + uint64_t(P) * S.BytesPerPartition + E * Size;
          const uint8_t *From = Src + Flat * ItemSize;
          if (IsNative)
            std::memcpy(Dst, From, Size);
          else if (IsF8) {
            double V;
            std::memcpy(&V, From, 8);
            storeValue(S.Type, V, Dst);
          } else
            storeValue(S.Type, loadValue(DataType::FP32, From), Dst);
        }
      S.AllInit = true;
    }
  }
  return llvm::Error::success();
}

llvm::Error SubgraphSim::setup() {
  for (unsigned D = 0; D < NumDevices; ++D) {
    const CoreSim &First = Cores[DeviceBase[D]];
    std::string Where = Launch ? ("device " + llvm::Twine(D) + " subgraph " +
                                  llvm::Twine(Subgraph))
                                     .str()
                               : ("subgraph " + llvm::Twine(Subgraph)).str();
    unsigned Lnc = First.M->getTargetOptions().LncSize;
    if (DeviceSize[D] != Lnc)
      return fail(FailureKind::Error,
                  llvm::formatv("{0} has {1} module(s) for lnc_size "
                                "{2}; split it first (lnc_splitter)",
                                Where, DeviceSize[D], Lnc)
                      .str());
    if (DeviceSize[D] != DeviceSize.front())
      return fail(FailureKind::Error,
                  llvm::formatv("{0} has {1} core(s), device 0 {2}", Where,
                                DeviceSize[D], DeviceSize.front())
                      .str());
    for (unsigned I = 0; I < DeviceSize[D]; ++I)
      if (Cores[First.Base + I].Core != I)
        return fail(FailureKind::Error,
                    Where + " has no module for core " + llvm::Twine(I));
  }
  if (!Launch && Cores.size() > 32)
    return fail(FailureKind::Error, "more than 32 cores");
  // The rendezvous masks have a bit per core of the launch.
  if (Cores.size() > 64)
    return fail(FailureKind::Error,
                llvm::formatv("the launch has {0} cores (devices times "
                              "lnc_size); bir-sim simulates at most 64",
                              Cores.size())
                    .str());
  NumThreads = Cores.size() * NumEngines;
  if (llvm::Error E = makeStorages())
    return E;
  for (CoreSim &C : Cores)
    if (llvm::Error E = makeStatics(C))
      return E;
  if (llvm::Error E = checkRemoteGroups())
    return E;
  if (llvm::Error E = linkSync())
    return E;
  for (CoreSim &C : Cores)
    if (llvm::Error E = prewalk(C))
      return E;
  SeedCache.resize(Storages.size());
  for (auto &S : Storages) {
    // A location with initial data is a constant, not an input.
    if (S->Loc && S->Loc->hasInitialData())
      S->Seeded = false;
    if (!S->Seeded)
      continue;
    std::vector<uint8_t> &Cached = SeedCache[S->Id];
    if (Cached.size() == S->Data.size()) {
      S->Data = Cached;
      S->AllInit = true;
      continue;
    }
    seedStorage(*S, O.Seed);
    Cached = S->Data;
  }
  if (llvm::Error E = applyInputs())
    return E;
  for (CoreSim &C : Cores) {
    C.Rep.Subgraph = Subgraph;
    C.Rep.Core = C.Core;
    C.Rep.Device = C.Device;
    for (const std::string &N : CollNames)
      C.Rep.CollectiveBytes.push_back({N, 0});
  }
  if (RaceCheck) {
    Races = std::make_unique<RaceDetector>(NumThreads);
    for (unsigned T = 0; T < NumThreads; ++T)
      ThreadVC.push_back(allocVC());
  }
  for (unsigned C = 0; C < Cores.size(); ++C)
    for (unsigned E = 0; E < NumEngines; ++E)
      if (Cores[C].Eng[E].Remaining)
        ScanOrder.push_back({C, E});
  return llvm::Error::success();
}

} // namespace loom::bir::sim::detail
