//===- Simulator.cpp - Multi-core simulation of BIR programs --------------===//
//
// One SubgraphSim runs the modules of one subgraph, one per core, as a
// discrete-event simulation (docs/simulator.md):
//
//   * a dispatcher walks each core's control flow in sequential order and
//     appends every dynamic instruction to its engine's in-order queue,
//     recording which execution of each dependency it waits for (the most
//     recent one in sequential order, docs/bir.md "Execution model");
//   * an engine starts its queue's head once the engine is idle and those
//     executions have finished; the element effect of an ordinary
//     instruction happens when it starts (every read before any write), and
//     the engine stays busy for the cost model's duration;
//   * CoreBarrier and CollectiveCompute meet the k-th executions of the other
//     cores; TensorCompletion and SemaphoreWait hold their engine until what
//     they wait for has happened;
//   * every read and write goes to the race detector with the vector clock
//     of the execution, built along the happens-before edges.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/sim/Simulator.h"

#include "RaceDetector.h"
#include "Semantics.h"
#include "Storage.h"

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/passes/LncSplitter.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <deque>
#include <map>
#include <queue>
#include <random>

namespace loom::bir::sim {

char SimFailure::ID;

llvm::Error makeFailure(FailureKind Kind, const llvm::Twine &Msg) {
  return llvm::make_error<SimFailure>(Kind, Msg.str());
}

const LocationState *SimResult::find(unsigned Subgraph, unsigned Core,
                                     llvm::StringRef Name) const {
  for (const LocationState &L : Final)
    if (L.Subgraph == Subgraph && L.Name == Name &&
        (!L.Core || *L.Core == Core))
      return &L;
  return nullptr;
}

namespace {

constexpr uint32_t NoIndex = ~0u;

enum class SyncKind : uint8_t { None, Barrier, Collective, Completion, SemWait };

struct OperandInfo {
  Storage *S;
  const AccessPattern *AP;
  RunShape Shape;
  uint64_t Bytes;
};

/// The happens-before clock of one execution, kept until no dependent that
/// waits for that execution remains to start.
struct VCSlot {
  uint64_t Exec;
  uint32_t Refs = 0;
  uint32_t VC = NoIndex;
};

/// A FIFO of slots in a vector (std::deque allocates a chunk per
/// instruction even when empty).
class SlotQueue {
public:
  bool empty() const { return Head == V.size(); }
  size_t size() const { return V.size() - Head; }
  VCSlot &front() { return V[Head]; }
  VCSlot &back() { return V.back(); }
  const VCSlot &back() const { return V.back(); }
  VCSlot &operator[](size_t I) { return V[Head + I]; }
  void push_back(VCSlot S) { V.push_back(S); }
  void pop_front() {
    if (++Head >= 16 && 2 * Head >= V.size()) {
      V.erase(V.begin(), V.begin() + Head);
      Head = 0;
    }
  }

private:
  std::vector<VCSlot> V;
  size_t Head = 0;
};

struct StaticInst {
  const Instruction *I = nullptr;
  unsigned Eng = 0;
  unsigned Block = 0;
  double Dur = 0;
  /// Static ids whose most recent execution must have finished: the
  /// dependencies, and for a TensorCompletion the core's writers of its
  /// inputs' storages.
  llvm::SmallVector<uint32_t, 4> Needs;
  llvm::SmallVector<OperandInfo, 2> In, Out;
  uint64_t Total = 0, Dispatched = 0, Finished = 0;
  SyncKind Sync = SyncKind::None;
  uint32_t SyncKey = NoIndex;
  uint32_t ListMask = 0;
  llvm::SmallVector<std::pair<unsigned, uint32_t>, 2> Waits;
  int SignalCore = -1;
  uint32_t SignalSem = NoIndex;
  uint32_t SemIndex = NoIndex;
  unsigned SemCount = 0;
  int Collective = -1;
  bool Accumulate = false;
  uint64_t BytesOut = 0, BytesTo = 0, BytesFrom = 0;
  double LastStart = 0, LastEnd = 0;
  SlotQueue Slots;
};

struct Dyn {
  uint32_t S = 0;
  uint64_t Exec = 0;
  uint64_t Seq = 0;
  llvm::SmallVector<std::pair<uint32_t, uint64_t>, 4> Needs;
  /// Needs before this index are met (finished counts only grow), so an
  /// instruction waiting for N others is checked in O(N) over the whole
  /// run, not O(N) at every try.
  uint32_t NeedsMet = 0;
};

enum class EngState : uint8_t { Idle, Running, Waiting };

struct EngineState {
  std::deque<Dyn> Q;
  EngState St = EngState::Idle;
  Dyn Cur;
  double Start = 0;
  uint32_t VC = NoIndex; ///< the running execution's clock
  uint64_t Remaining = 0; ///< executions not dispatched yet
};

struct SemState {
  std::string Name;
  uint64_t Count = 0;
  /// The increments not consumed yet, in arrival order: the signalling
  /// copy's clock and the copy itself as core << 24 | static id.
  std::deque<std::pair<uint32_t, uint32_t>> Signals;
  llvm::SmallVector<std::pair<unsigned, uint32_t>, 2> Signallers;
};

struct CoreSim {
  const Module *M = nullptr;
  unsigned Core = 0;
  std::vector<StaticInst> Insts;
  llvm::DenseMap<const Instruction *, uint32_t> IdOf;
  llvm::StringMap<uint32_t> ByName;
  std::vector<std::vector<uint32_t>> BlockInsts;
  std::vector<uint32_t> LoopCounter;
  llvm::DenseMap<const BasicBlock *, unsigned> BlockIndex;
  unsigned CurBlock = 0;
  size_t CurPos = 0;
  bool SeqDone = false;
  uint64_t Seq = 0;
  std::array<EngineState, NumEngines> Eng;
  uint64_t InFlight = 0;
  uint64_t Cap = 1 << 16;
  std::vector<SemState> Sems;
  llvm::StringMap<uint32_t> SemIdx;
  llvm::DenseMap<const MemoryLocation *, Storage *> StorageOf;
  CoreReport Rep;

  uint32_t semIndex(llvm::StringRef Name) {
    auto It = SemIdx.find(Name);
    if (It != SemIdx.end())
      return It->second;
    SemIdx[Name] = Sems.size();
    Sems.emplace_back();
    Sems.back().Name = Name.str();
    return Sems.size() - 1;
  }
  bool finished() const { return SeqDone && InFlight == 0; }
};

struct Arrival {
  unsigned Core;
  unsigned Eng;
  uint32_t S;
  double T;
  uint32_t VC;
  bool Released = false;
};

struct Round {
  uint32_t Mask = 0;
  uint32_t Wanted = 0;
  llvm::SmallVector<Arrival, 8> A;
};

struct Rendezvous {
  std::string Label; // for messages
  std::map<uint64_t, Round> Rounds;
};

struct Event {
  double T;
  uint64_t Seq;
  uint8_t Kind; // 0 finish, 1 semaphore signal
  uint16_t Core;
  uint16_t Eng;
  uint32_t Sem;
  uint32_t VC;
  uint32_t From;
  bool operator>(const Event &O) const {
    return T != O.T ? T > O.T : Seq > O.Seq;
  }
};

/// How messages name a storage: "x (core 1)", or the name of a SharedDRAM
/// location.
std::string storageLabel(const Storage &S) {
  return S.Owner ? (S.Name + " (core " + llvm::Twine(*S.Owner) + ")").str()
                 : S.Name;
}

/// splitmix64: the random inputs depend only on the seed, the storage's name
/// and (for private memories) its core.
uint64_t mix(uint64_t X) {
  X += 0x9e3779b97f4a7c15ull;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}

uint64_t hashName(uint64_t Seed, llvm::StringRef Name, int64_t Core) {
  uint64_t H = mix(Seed ^ 0x6c6f6f6d);
  for (char C : Name)
    H = mix(H ^ uint8_t(C));
  return mix(H ^ uint64_t(Core + 1));
}

void seedStorage(Storage &S, uint64_t Seed) {
  uint64_t H = hashName(Seed, S.Name, S.Owner ? int64_t(*S.Owner) : -1);
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
      case DataType::UINT32: V = double(R % 16); break;
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

class SubgraphSim {
public:
  SubgraphSim(llvm::ArrayRef<const Module *> Mods, const SimOptions &O,
              unsigned Schedule, bool RaceCheck, bool Trace,
              const llvm::StringMap<int> &CollIdx,
              llvm::ArrayRef<std::string> CollNames, uint64_t &MemUsed,
              std::vector<std::vector<uint8_t>> &SeedCache)
      : O(O), Schedule(Schedule), RaceCheck(RaceCheck), Trace(Trace),
        CollIdx(CollIdx), CollNames(CollNames), MemUsed(MemUsed),
        SeedCache(SeedCache),
        Rng(mix(O.Seed * 1000003 + Schedule)) {
    for (const Module *M : Mods) {
      Cores.emplace_back();
      Cores.back().M = M;
      Cores.back().Core = M->getNeuronCoreId();
    }
    Subgraph = Mods.front()->getSubgraphId();
  }

  llvm::Error setup();
  llvm::Error run();
  void finish(SimResult &R);

private:
  llvm::Error fail(FailureKind K, const llvm::Twine &Msg) {
    return makeFailure(K, O.FileName + ": " + Msg);
  }
  llvm::Error makeStorages();
  llvm::Error makeStatics(CoreSim &C);
  llvm::Error linkSync();
  llvm::Error prewalk(CoreSim &C);
  llvm::Error applyInputs();

  int nextBlock(CoreSim &C, unsigned Block, std::vector<uint32_t> &Counters);
  void refill(CoreSim &C);
  void dispatchOne(CoreSim &C);
  void scan(double Now);
  void tryStart(CoreSim &C, unsigned E, double Now);
  bool checkWaiting(CoreSim &C, unsigned E, double Now);
  void scheduleFinish(CoreSim &C, unsigned E, double At);
  void onFinish(const Event &Ev);
  void onSignal(const Event &Ev);
  void arrive(CoreSim &C, unsigned E, double Now);
  void releaseRound(Round &R, double Now, bool IsCollective);
  void executeCollective(Round &R);
  void execute(CoreSim &C, StaticInst &S, uint64_t Exec, uint32_t VC);
  void raceAccess(CoreSim &C, StaticInst &S, uint64_t Exec,
                  const OperandInfo &Op, bool Write, uint32_t VC);
  bool gatherChecked(CoreSim &C, const StaticInst &S, const OperandInfo &Op,
                     std::vector<uint8_t> &Buf);
  void reportUninit(const CoreSim &C, const StaticInst &S,
                    const OperandInfo &Op, uint64_t Byte);
  llvm::Error deadlock();
  std::string position(const CoreSim &C) const;
  std::string explainWait(const CoreSim &C, unsigned E) const;
  double duration(const StaticInst &S) {
    if (Schedule == 0)
      return S.Dur;
    std::uniform_real_distribution<double> U(0.5, 1.5);
    return S.Dur * U(Rng);
  }

  // Vector clock pool.
  uint32_t allocVC() {
    if (!FreeVC.empty()) {
      uint32_t I = FreeVC.back();
      FreeVC.pop_back();
      return I;
    }
    Pool.emplace_back(NumThreads);
    return Pool.size() - 1;
  }
  void freeVC(uint32_t I) {
    if (I != NoIndex)
      FreeVC.push_back(I);
  }
  VCSlot *slot(StaticInst &S, uint64_t Exec) {
    if (S.Slots.empty() || Exec < S.Slots.front().Exec)
      return nullptr;
    uint64_t Idx = Exec - S.Slots.front().Exec;
    return Idx < S.Slots.size() ? &S.Slots[Idx] : nullptr;
  }
  void trim(StaticInst &S) {
    while (S.Slots.size() > 1 && S.Slots.front().Refs == 0 &&
           S.Slots.front().Exec <= S.Finished) {
      freeVC(S.Slots.front().VC);
      S.Slots.pop_front();
    }
  }
  unsigned thread(const CoreSim &C, unsigned E) const {
    return C.Core * NumEngines + E;
  }

  const SimOptions &O;
  unsigned Schedule;
  bool RaceCheck;
  bool Trace;
  const llvm::StringMap<int> &CollIdx;
  llvm::ArrayRef<std::string> CollNames;
  uint64_t &MemUsed;
  /// The seeded contents of each storage, kept from the first schedule: they
  /// depend only on the program and the seed.
  std::vector<std::vector<uint8_t>> &SeedCache;
  std::mt19937_64 Rng;
  unsigned Subgraph = 0;
  unsigned NumThreads = 0;

  std::vector<CoreSim> Cores;
  std::vector<std::unique_ptr<Storage>> Storages;
  llvm::StringMap<Storage *> Shared;
  std::vector<Rendezvous> Rdv;
  llvm::StringMap<uint32_t> RdvIdx;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> Events;
  uint64_t EventSeq = 0;
  std::optional<std::pair<FailureKind, std::string>> Failed;

  std::vector<VectorClock> Pool;
  std::vector<uint32_t> FreeVC;
  std::vector<uint32_t> ThreadVC;
  std::unique_ptr<RaceDetector> Races;

  std::vector<std::pair<unsigned, unsigned>> ScanOrder;
  std::vector<uint8_t> Buf0, Buf1, Buf2;
  std::vector<std::pair<uint64_t, uint64_t>> RunScratch;
  std::vector<std::vector<uint8_t>> CollBufs;

public:
  std::vector<TimelineSlice> Slices;
  std::vector<TimelineFlow> Flows;
};

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

llvm::Error SubgraphSim::makeStorages() {
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
    S->Loc = &L;
    S->Kind = L.getKind();
    S->Type = L.getType();
    S->Partitions = L.getNumPartitions();
    S->BytesPerPartition = L.getBytesPerPartition();
    S->Data.assign(Bytes, 0);
    Storages.push_back(std::move(S));
    return Storages.back().get();
  };
  for (CoreSim &C : Cores) {
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
                            "' has a different type or shape on core " +
                            llvm::Twine(C.Core));
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
      const MemoryLocation *Peer =
          R.Core < Cores.size()
              ? Cores[R.Core].M->getMemoryLocations().getMemlocByName(R.MemLoc)
              : nullptr;
      if (!Peer || Peer->isRemote())
        return fail(FailureKind::Error,
                    "remote location '" + L->getName() + "' of core " +
                        llvm::Twine(C.Core) + " names '" + R.MemLoc +
                        "' of core " + llvm::Twine(R.Core) +
                        ", which has no such local location");
      C.StorageOf[L.get()] = Cores[R.Core].StorageOf[Peer];
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
        S.ListMask |= 1u << Core;
      break;
    case InstructionType::CollectiveCompute: {
      auto &CC = llvm::cast<InstCollectiveCompute>(I);
      if (!CC.isLocal())
        return fail(FailureKind::Error,
                    "collective '" + I.getName() + "' on core " +
                        llvm::Twine(C.Core) +
                        " is not local: its group lists ranks of a wider job, "
                        "which bir-sim does not simulate");
      if (CC.getKind() == CollectiveKind::AllToAllV)
        return fail(FailureKind::Error,
                    "collective '" + I.getName() + "' on core " +
                        llvm::Twine(C.Core) +
                        ": AllToAllV has no element semantics (its per-peer "
                        "sizes are not in BIR), so bir-sim cannot run it");
      S.Sync = SyncKind::Collective;
      for (unsigned Core : CC.getGroup()) {
        if (Core >= Cores.size())
          return fail(FailureKind::Error,
                      "collective '" + I.getName() + "' on core " +
                          llvm::Twine(C.Core) + " names core " +
                          llvm::Twine(Core) + ", which does not exist");
        S.ListMask |= 1u << Core;
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
        std::vector<unsigned> Members(Cores.begin(), Cores.end());
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
          if (W.Core < Cores.size()) {
            auto It = Cores[W.Core].ByName.find(W.Instruction);
            if (It != Cores[W.Core].ByName.end())
              Target = It->second;
          }
          if (Target == NoIndex)
            return fail(FailureKind::Error,
                        "completion '" + I.getName() + "' on core " +
                            llvm::Twine(C.Core) + " waits for '" +
                            W.Instruction + "' on core " + llvm::Twine(W.Core) +
                            ", which does not exist");
          S.Waits.push_back({W.Core, Target});
        }
      }
      if (auto *CB = llvm::dyn_cast<InstCopyBase>(&I)) {
        if (const auto &Sig = CB->getSignal()) {
          if (Sig->Core >= Cores.size())
            return fail(FailureKind::Error,
                        "copy '" + I.getName() + "' on core " +
                            llvm::Twine(C.Core) + " signals core " +
                            llvm::Twine(Sig->Core) + ", which does not exist");
          S.SignalCore = Sig->Core;
          S.SignalSem = Cores[Sig->Core].semIndex(Sig->Semaphore);
          Cores[Sig->Core].Sems[S.SignalSem].Signallers.push_back({C.Core, Id});
        }
      }
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
                  llvm::formatv("core {0} runs more than --max-steps={1} "
                                "instruction executions (still running block "
                                "'{2}')",
                                C.Core, O.MaxSteps,
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
                  llvm::formatv("core {0} does more than --max-work={1} "
                                "units of work (bytes read and written, "
                                "matmul multiply-adds; still running block "
                                "'{2}')",
                                C.Core, O.MaxWork, C.M->getBlock(B)->getName())
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
      if (In.Core && *In.Core != C.Core)
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
      static const char *Native[] = {"<f4", "<u2", "<f2", "|u1", "|u1", "|i1",
                                     "<i2", "<i4", "|u1", "<u2", "<u4"};
      bool IsNative = In.Array.Descr == Native[unsigned(S.Type)];
      bool IsF4 = In.Array.Descr == "<f4" && isFloatType(S.Type);
      bool IsF8 = In.Array.Descr == "<f8";
      if (!IsNative && !IsF4 && !IsF8)
        return fail(FailureKind::Error,
                    "--input '" + In.Name + "': dtype '" + In.Array.Descr +
                        "' does not fit " + enumName(S.Type) + " (use '" +
                        Native[unsigned(S.Type)] + "'" +
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
  unsigned Lnc = Cores.front().M->getPassOptions().LncSize;
  if (Cores.size() != Lnc)
    return fail(FailureKind::Error,
                llvm::formatv("subgraph {0} has {1} module(s) for lnc_size "
                              "{2}; split it first (lnc_splitter)",
                              Subgraph, Cores.size(), Lnc)
                    .str());
  for (unsigned I = 0; I < Cores.size(); ++I)
    if (Cores[I].Core != I)
      return fail(FailureKind::Error,
                  "subgraph " + llvm::Twine(Subgraph) +
                      " has no module for core " + llvm::Twine(I));
  if (Cores.size() > 32)
    return fail(FailureKind::Error, "more than 32 cores");
  NumThreads = Cores.size() * NumEngines;
  if (llvm::Error E = makeStorages())
    return E;
  for (CoreSim &C : Cores)
    if (llvm::Error E = makeStatics(C))
      return E;
  if (llvm::Error E = linkSync())
    return E;
  for (CoreSim &C : Cores)
    if (llvm::Error E = prewalk(C))
      return E;
  SeedCache.resize(Storages.size());
  for (auto &S : Storages) {
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

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

void SubgraphSim::dispatchOne(CoreSim &C) {
  uint32_t Id = C.BlockInsts[C.CurBlock][C.CurPos];
  StaticInst &S = C.Insts[Id];
  Dyn D;
  D.S = Id;
  D.Seq = C.Seq++;
  for (uint32_t N : S.Needs) {
    StaticInst &Dep = C.Insts[N];
    if (Dep.Dispatched == 0)
      continue; // has not run yet: no wait
    D.Needs.push_back({N, Dep.Dispatched});
    if (RaceCheck)
      if (VCSlot *Sl = slot(Dep, Dep.Dispatched))
        ++Sl->Refs;
  }
  D.Exec = ++S.Dispatched;
  if (RaceCheck)
    S.Slots.push_back(VCSlot{D.Exec});
  EngineState &E = C.Eng[S.Eng];
  --E.Remaining;
  E.Q.push_back(std::move(D));
  ++C.InFlight;
  if (++C.CurPos == C.BlockInsts[C.CurBlock].size()) {
    int Next = nextBlock(C, C.CurBlock, C.LoopCounter);
    if (Next < 0)
      C.SeqDone = true;
    else {
      C.CurBlock = Next;
      C.CurPos = 0;
    }
  }
}

void SubgraphSim::refill(CoreSim &C) {
  while (!C.SeqDone && C.InFlight < C.Cap) {
    bool Starving = false;
    for (const EngineState &E : C.Eng)
      if (E.Q.empty() && E.Remaining) {
        Starving = true;
        break;
      }
    if (!Starving)
      return;
    dispatchOne(C);
  }
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

void SubgraphSim::raceAccess(CoreSim &C, StaticInst &S, uint64_t Exec,
                             const OperandInfo &Op, bool Write, uint32_t VC) {
  if (!Races)
    return;
  AccessSite Site{C.Core, S.I->getEngine(), S.I, Exec};
  Races->access(Op.S->Id, storageLabel(*Op.S), *Op.AP, Write, Site,
                thread(C, S.Eng), Pool[VC]);
}

bool SubgraphSim::gatherChecked(CoreSim &C, const StaticInst &S,
                                const OperandInfo &Op,
                                std::vector<uint8_t> &Buf) {
  std::optional<uint64_t> Bad = gather(*Op.S, Op.Shape, Buf);
  if (!Bad)
    return true;
  reportUninit(C, S, Op, *Bad);
  return false;
}

void SubgraphSim::reportUninit(const CoreSim &C, const StaticInst &S,
                               const OperandInfo &Op, uint64_t Byte) {
  if (!Failed) {
    uint64_t P = Byte / Op.S->BytesPerPartition;
    uint64_t B = Byte % Op.S->BytesPerPartition;
    Failed = {FailureKind::Error,
              llvm::formatv("{0}: uninitialized read: '{1}' on core {2} "
                            "reads '{3}' partition {4} byte {5}, which "
                            "nothing wrote and which is not an input",
                            O.FileName, S.I->getName(), C.Core,
                            storageLabel(*Op.S), P, B)
                  .str()};
  }
}

void SubgraphSim::execute(CoreSim &C, StaticInst &S, uint64_t Exec,
                          uint32_t VC) {
  const Instruction &I = *S.I;
  if (RaceCheck && I.getType() != InstructionType::TensorCompletion) {
    for (const OperandInfo &Op : S.In)
      raceAccess(C, S, Exec, Op, false, VC);
    // An accumulating write also reads its bytes; the write alone already
    // conflicts with everything the read would.
    for (const OperandInfo &Op : S.Out)
      raceAccess(C, S, Exec, Op, true, VC);
  }
  switch (I.getType()) {
  case InstructionType::DMACopy:
  case InstructionType::GPSIMDSB2SB: {
    const OperandInfo &In = S.In[0], &Out = S.Out[0];
    if (!S.Accumulate && In.S != Out.S) {
      // Different buffers: nothing read can be overwritten first.
      if (std::optional<uint64_t> Bad =
              copyRuns(*In.S, In.Shape, *Out.S, Out.Shape, RunScratch))
        reportUninit(C, S, In, *Bad);
      return;
    }
    if (!gatherChecked(C, S, In, Buf0))
      return;
    if (S.Accumulate) {
      if (!gatherChecked(C, S, Out, Buf1))
        return;
      accumulate(Out.AP->getType(), Buf0.data(), Buf1.data(),
                 Out.AP->getNumElements());
      scatter(*Out.S, Out.Shape, Buf1.data());
      return;
    }
    scatter(*Out.S, Out.Shape, Buf0.data());
    return;
  }
  case InstructionType::TensorCopy: {
    const OperandInfo &In = S.In[0], &Out = S.Out[0];
    if (In.AP->getType() == Out.AP->getType() && In.S != Out.S) {
      if (std::optional<uint64_t> Bad =
              copyRuns(*In.S, In.Shape, *Out.S, Out.Shape, RunScratch))
        reportUninit(C, S, In, *Bad);
      return;
    }
    if (!gatherChecked(C, S, In, Buf0))
      return;
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    convertElements(In.AP->getType(), Buf0.data(), Out.AP->getType(),
                    Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::Memset: {
    const OperandInfo &Out = S.Out[0];
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    memsetElements(llvm::cast<InstMemset>(I).getValue(), Out.AP->getType(),
                   Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::Activation: {
    auto &A = llvm::cast<InstActivation>(I);
    const OperandInfo &In = S.In[0], &Out = S.Out[0];
    if (!gatherChecked(C, S, In, Buf0))
      return;
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    activation(A.getFunc(), A.getScale(), In.AP->getType(), Buf0.data(),
               Out.AP->getType(), Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::TensorTensor: {
    auto &T = llvm::cast<InstTensorTensor>(I);
    const OperandInfo &In0 = S.In[0], &In1 = S.In[1], &Out = S.Out[0];
    if (!gatherChecked(C, S, In0, Buf0) || !gatherChecked(C, S, In1, Buf2))
      return;
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    tensorTensor(T.getOp(), In0.AP->getType(), Buf0.data(), In1.AP->getType(),
                 Buf2.data(), Out.AP->getType(), Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::Matmul: {
    const OperandInfo &In0 = S.In[0], &In1 = S.In[1], &Out = S.Out[0];
    if (!gatherChecked(C, S, In0, Buf0) || !gatherChecked(C, S, In1, Buf2))
      return;
    uint64_t K = In0.AP->getNumPartitions();
    uint64_t M = In0.AP->getNumElementsPerPartition();
    uint64_t N = In1.AP->getNumElementsPerPartition();
    if (S.Accumulate) {
      if (!gatherChecked(C, S, Out, Buf1))
        return;
    } else {
      Buf1.assign(M * N * 4, 0);
    }
    matmul(In0.AP->getType(), Buf0.data(), In1.AP->getType(), Buf2.data(), K,
           M, N, S.Accumulate, reinterpret_cast<float *>(Buf1.data()));
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  default:
    return;
  }
}

void SubgraphSim::scheduleFinish(CoreSim &C, unsigned E, double At) {
  Events.push(Event{At, EventSeq++, 0, uint16_t(C.Core), uint16_t(E), 0,
                    NoIndex, 0});
}

void SubgraphSim::tryStart(CoreSim &C, unsigned E, double Now) {
  EngineState &ES = C.Eng[E];
  if (ES.St == EngState::Waiting) {
    checkWaiting(C, E, Now);
    return;
  }
  if (ES.St != EngState::Idle || ES.Q.empty())
    return;
  Dyn &D = ES.Q.front();
  for (; D.NeedsMet < D.Needs.size(); ++D.NeedsMet) {
    auto &[N, K] = D.Needs[D.NeedsMet];
    if (C.Insts[N].Finished < K)
      return;
  }
  ES.Cur = std::move(D);
  ES.Q.pop_front();
  ES.Start = Now;
  StaticInst &S = C.Insts[ES.Cur.S];
  S.LastStart = Now;
  uint32_t VC = NoIndex;
  if (RaceCheck) {
    unsigned T = thread(C, E);
    VC = allocVC();
    Pool[VC] = Pool[ThreadVC[T]];
    Pool[VC].tick(T);
    for (auto &[N, K] : ES.Cur.Needs) {
      StaticInst &Dep = C.Insts[N];
      if (VCSlot *Sl = slot(Dep, K)) {
        if (Sl->VC != NoIndex)
          Pool[VC].join(Pool[Sl->VC]);
        --Sl->Refs;
      }
      trim(Dep);
    }
    Pool[ThreadVC[T]] = Pool[VC];
  }
  ES.VC = VC;
  switch (S.Sync) {
  case SyncKind::None:
    ES.St = EngState::Running;
    execute(C, S, ES.Cur.Exec, VC);
    scheduleFinish(C, E, Now + duration(S));
    return;
  case SyncKind::Barrier:
  case SyncKind::Collective:
    ES.St = EngState::Waiting;
    arrive(C, E, Now);
    return;
  case SyncKind::Completion:
  case SyncKind::SemWait:
    ES.St = EngState::Waiting;
    checkWaiting(C, E, Now);
    return;
  }
}

bool SubgraphSim::checkWaiting(CoreSim &C, unsigned E, double Now) {
  EngineState &ES = C.Eng[E];
  StaticInst &S = C.Insts[ES.Cur.S];
  if (S.Sync == SyncKind::Completion) {
    for (auto &[Core, Id] : S.Waits) {
      const StaticInst &W = Cores[Core].Insts[Id];
      if (W.Total == 0 || W.Finished < W.Total)
        return false;
    }
    for (auto &[Core, Id] : S.Waits) {
      StaticInst &W = Cores[Core].Insts[Id];
      if (RaceCheck && !W.Slots.empty() && W.Slots.back().VC != NoIndex)
        Pool[ES.VC].join(Pool[W.Slots.back().VC]);
      if (Trace && Core != C.Core)
        Flows.push_back({Core, W.I->getEngine(),
                         (W.LastStart + W.LastEnd) / 2, C.Core,
                         S.I->getEngine(), Now, S.I->getName().str()});
    }
  } else if (S.Sync == SyncKind::SemWait) {
    SemState &Sem = C.Sems[S.SemIndex];
    if (Sem.Count < S.SemCount)
      return false;
    Sem.Count -= S.SemCount;
    for (unsigned K = 0; K < S.SemCount; ++K) {
      auto [VC, From] = Sem.Signals.front();
      Sem.Signals.pop_front();
      if (RaceCheck && VC != NoIndex) {
        Pool[ES.VC].join(Pool[VC]);
        freeVC(VC);
      }
      if (Trace) {
        const StaticInst &Sig = Cores[From >> 24].Insts[From & 0xffffff];
        Flows.push_back({From >> 24, Sig.I->getEngine(),
                         (Sig.LastStart + Sig.LastEnd) / 2, C.Core,
                         S.I->getEngine(), Now, Sem.Name});
      }
    }
  } else {
    return false; // barriers and collectives are released by their round
  }
  if (RaceCheck)
    Pool[ThreadVC[thread(C, E)]] = Pool[ES.VC];
  ES.St = EngState::Running;
  scheduleFinish(C, E, Now + duration(S));
  return true;
}

void SubgraphSim::arrive(CoreSim &C, unsigned E, double Now) {
  EngineState &ES = C.Eng[E];
  StaticInst &S = C.Insts[ES.Cur.S];
  Rendezvous &RV = Rdv[S.SyncKey];
  Round &R = RV.Rounds[ES.Cur.Exec];
  R.Mask |= 1u << C.Core;
  R.Wanted |= S.ListMask;
  R.A.push_back(Arrival{C.Core, E, ES.Cur.S, Now, ES.VC});
  if (S.Sync == SyncKind::Collective) {
    if ((R.Mask & R.Wanted) != R.Wanted)
      return;
    executeCollective(R);
    releaseRound(R, Now, true);
  } else {
    releaseRound(R, Now, false);
  }
  bool AllReleased = llvm::all_of(R.A, [](const Arrival &A) { return A.Released; });
  if (AllReleased && (R.Mask & R.Wanted) == R.Wanted)
    RV.Rounds.erase(ES.Cur.Exec);
}

void SubgraphSim::releaseRound(Round &R, double Now, bool IsCollective) {
  uint32_t Joined = NoIndex;
  for (Arrival &W : R.A) {
    if (W.Released)
      continue;
    CoreSim &WC = Cores[W.Core];
    StaticInst &WS = WC.Insts[W.S];
    if (!IsCollective && (R.Mask & WS.ListMask) != WS.ListMask)
      continue;
    W.Released = true;
    if (RaceCheck) {
      if (Joined == NoIndex) {
        Joined = allocVC();
        Pool[Joined] = Pool[R.A.front().VC];
        for (const Arrival &A : R.A)
          Pool[Joined].join(Pool[A.VC]);
      }
      Pool[W.VC].join(Pool[Joined]);
      Pool[ThreadVC[thread(WC, W.Eng)]] = Pool[W.VC];
    }
    if (Trace)
      for (const Arrival &A : R.A)
        if (A.Core != W.Core)
          Flows.push_back({A.Core, static_cast<Engine>(A.Eng), A.T, W.Core,
                           static_cast<Engine>(W.Eng), Now,
                           WS.I->getName().str()});
    WC.Eng[W.Eng].St = EngState::Running;
    scheduleFinish(WC, W.Eng, Now + duration(WS));
  }
  freeVC(Joined);
}

void SubgraphSim::executeCollective(Round &R) {
  // The members in rank order of the first arrival's group.
  const auto &CC0 =
      llvm::cast<InstCollectiveCompute>(*Cores[R.A[0].Core].Insts[R.A[0].S].I);
  llvm::ArrayRef<unsigned> Group = CC0.getGroup();
  unsigned N = Group.size();
  llvm::SmallVector<const Arrival *, 8> Member(N, nullptr);
  for (const Arrival &A : R.A)
    for (unsigned Rk = 0; Rk < N; ++Rk)
      if (Group[Rk] == A.Core)
        Member[Rk] = &A;
  auto Fail = [&](const llvm::Twine &Why) {
    if (!Failed)
      Failed = {FailureKind::Error, (O.FileName + ": collective '" +
                                     CC0.getName() + "': " + Why)
                                        .str()};
  };
  for (unsigned Rk = 0; Rk < N; ++Rk) {
    const auto &CC = llvm::cast<InstCollectiveCompute>(
        *Cores[Member[Rk]->Core].Insts[Member[Rk]->S].I);
    if (CC.getKind() != CC0.getKind() || CC.getGroup() != Group ||
        CC.getReduceOp() != CC0.getReduceOp())
      return Fail("core " + llvm::Twine(Group[Rk]) + " and core " +
                  llvm::Twine(Group[0]) +
                  " disagree on its kind, group or reduce op");
  }
  auto StaticOf = [&](unsigned Rk) -> StaticInst & {
    return Cores[Member[Rk]->Core].Insts[Member[Rk]->S];
  };
  DataType T = StaticOf(0).In[0].AP->getType();
  unsigned Size = getDataTypeSize(T);
  uint64_t NIn = StaticOf(0).In[0].AP->getNumElements();
  uint64_t NOut = StaticOf(0).Out[0].AP->getNumElements();
  for (unsigned Rk = 0; Rk < N; ++Rk) {
    StaticInst &S = StaticOf(Rk);
    if (S.In[0].AP->getType() != T || S.In[0].AP->getNumElements() != NIn ||
        S.Out[0].AP->getNumElements() != NOut)
      return Fail("core " + llvm::Twine(Group[Rk]) +
                  " has other operand types or sizes than core " +
                  llvm::Twine(Group[0]));
  }
  CollectiveKind K = CC0.getKind();
  ReduceOp Op = CC0.getReduceOp();
  bool ReadsOut =
      K == CollectiveKind::PermuteReduce || K == CollectiveKind::PermuteReduceImplicit;
  uint64_t Expected = NIn;
  switch (K) {
  case CollectiveKind::AllGather: Expected = NIn * N; break;
  case CollectiveKind::ReduceScatter:
    if (NIn % N)
      return Fail("its input does not split into the group");
    Expected = NIn / N;
    break;
  case CollectiveKind::AllToAll:
    if (NIn % N)
      return Fail("its input does not split into the group");
    break;
  case CollectiveKind::SendRecv:
  case CollectiveKind::SendRecvCCE:
    if (N != 2)
      return Fail("SendRecv needs a group of 2");
    break;
  default: break;
  }
  if (NOut != Expected)
    return Fail(llvm::formatv("its output has {0} elements, {1} expected",
                              NOut, Expected)
                    .str());
  // Race accesses: every member reads its input (and its output when
  // reducing into it) and writes its output, after every member arrived.
  if (RaceCheck) {
    uint32_t Joined = allocVC();
    Pool[Joined] = Pool[R.A.front().VC];
    for (const Arrival &A : R.A)
      Pool[Joined].join(Pool[A.VC]);
    for (unsigned Rk = 0; Rk < N; ++Rk) {
      CoreSim &C = Cores[Member[Rk]->Core];
      StaticInst &S = StaticOf(Rk);
      uint64_t Exec = S.Finished + 1;
      raceAccess(C, S, Exec, S.In[0], false, Joined);
      raceAccess(C, S, Exec, S.Out[0], true, Joined);
    }
    freeVC(Joined);
  }
  CollBufs.resize(2 * N);
  for (unsigned Rk = 0; Rk < N; ++Rk) {
    if (!gatherChecked(Cores[Member[Rk]->Core], StaticOf(Rk), StaticOf(Rk).In[0],
                       CollBufs[Rk]))
      return;
    if (ReadsOut) {
      if (!gatherChecked(Cores[Member[Rk]->Core], StaticOf(Rk),
                         StaticOf(Rk).Out[0], CollBufs[N + Rk]))
        return;
    } else {
      CollBufs[N + Rk].resize(NOut * Size);
    }
  }
  auto In = [&](unsigned Rk) { return CollBufs[Rk].data(); };
  auto Out = [&](unsigned Rk) { return CollBufs[N + Rk].data(); };
  switch (K) {
  case CollectiveKind::SendRecv:
  case CollectiveKind::SendRecvCCE:
    std::memcpy(Out(0), In(1), NIn * Size);
    std::memcpy(Out(1), In(0), NIn * Size);
    break;
  case CollectiveKind::AllReduce:
    std::memcpy(Out(0), In(0), NIn * Size);
    for (unsigned J = 1; J < N; ++J)
      reduceInto(Op, T, In(J), Out(0), NIn);
    for (unsigned Rk = 1; Rk < N; ++Rk)
      std::memcpy(Out(Rk), Out(0), NIn * Size);
    break;
  case CollectiveKind::ReduceScatter: {
    uint64_t M = NIn / N;
    for (unsigned Rk = 0; Rk < N; ++Rk) {
      std::memcpy(Out(Rk), In(0) + Rk * M * Size, M * Size);
      for (unsigned J = 1; J < N; ++J)
        reduceInto(Op, T, In(J) + Rk * M * Size, Out(Rk), M);
    }
    break;
  }
  case CollectiveKind::AllGather:
    for (unsigned Rk = 0; Rk < N; ++Rk)
      for (unsigned J = 0; J < N; ++J)
        std::memcpy(Out(Rk) + J * NIn * Size, In(J), NIn * Size);
    break;
  case CollectiveKind::AllToAll: {
    uint64_t M = NIn / N;
    for (unsigned Rk = 0; Rk < N; ++Rk)
      for (unsigned J = 0; J < N; ++J)
        std::memcpy(Out(Rk) + J * M * Size, In(J) + Rk * M * Size, M * Size);
    break;
  }
  case CollectiveKind::Permute:
  case CollectiveKind::PermuteImplicit:
    for (unsigned Rk = 0; Rk < N; ++Rk)
      std::memcpy(Out((Rk + 1) % N), In(Rk), NIn * Size);
    break;
  case CollectiveKind::PermuteReduce:
  case CollectiveKind::PermuteReduceImplicit:
    for (unsigned Rk = 0; Rk < N; ++Rk)
      reduceInto(Op, T, In(Rk), Out((Rk + 1) % N), NIn);
    break;
  case CollectiveKind::AllToAllV:
    break;
  }
  for (unsigned Rk = 0; Rk < N; ++Rk)
    scatter(*StaticOf(Rk).Out[0].S, StaticOf(Rk).Out[0].Shape, Out(Rk));
}

void SubgraphSim::onFinish(const Event &Ev) {
  CoreSim &C = Cores[Ev.Core];
  EngineState &ES = C.Eng[Ev.Eng];
  StaticInst &S = C.Insts[ES.Cur.S];
  ++S.Finished;
  S.LastEnd = Ev.T;
  if (RaceCheck) {
    if (VCSlot *Sl = slot(S, ES.Cur.Exec))
      Sl->VC = ES.VC;
    else
      freeVC(ES.VC);
    trim(S);
  }
  EngineStats &St = C.Rep.Engines[Ev.Eng];
  St.BusyNs += Ev.T - ES.Start;
  St.Bytes += S.BytesOut;
  ++St.Executions;
  ++C.Rep.Executions;
  C.Rep.BytesToOtherCores += S.BytesTo;
  C.Rep.BytesFromOtherCores += S.BytesFrom;
  if (S.Collective >= 0)
    C.Rep.CollectiveBytes[S.Collective].second += S.BytesOut;
  C.Rep.MakespanNs = std::max(C.Rep.MakespanNs, Ev.T);
  if (Trace)
    Slices.push_back({C.Core, S.I->getEngine(), S.I->getName().str(), ES.Start,
                      Ev.T - ES.Start});
  if (S.SignalCore >= 0) {
    uint32_t VC = NoIndex;
    if (RaceCheck) {
      VC = allocVC();
      Pool[VC] = Pool[ES.VC];
    }
    analysis::CostModel Cost(O.Cost);
    Events.push(Event{Ev.T + Cost.params().SemaphoreSignalNs, EventSeq++, 1,
                      uint16_t(S.SignalCore), 0, S.SignalSem, VC,
                      (uint32_t(C.Core) << 24) | ES.Cur.S});
  }
  ES.St = EngState::Idle;
  ES.VC = NoIndex;
  --C.InFlight;
}

void SubgraphSim::onSignal(const Event &Ev) {
  SemState &Sem = Cores[Ev.Core].Sems[Ev.Sem];
  ++Sem.Count;
  Sem.Signals.push_back({Ev.VC, Ev.From});
}

void SubgraphSim::scan(double Now) {
  if (Schedule != 0)
    std::shuffle(ScanOrder.begin(), ScanOrder.end(), Rng);
  for (auto [C, E] : ScanOrder) {
    tryStart(Cores[C], E, Now);
    if (Failed)
      return;
  }
}

llvm::Error SubgraphSim::run() {
  double Now = 0;
  while (true) {
    for (CoreSim &C : Cores)
      refill(C);
    scan(Now);
    if (Failed)
      return makeFailure(Failed->first, Failed->second);
    if (Events.empty()) {
      if (llvm::all_of(Cores, [](const CoreSim &C) { return C.finished(); }))
        break;
      bool Grew = false;
      for (CoreSim &C : Cores)
        if (!C.SeqDone && C.InFlight >= C.Cap) {
          C.Cap *= 2;
          Grew = true;
        }
      if (Grew)
        continue;
      llvm::Error E = deadlock();
      if (Races && Races->hasRaces())
        break; // the races explain more than the deadlock
      return E;
    }
    Now = Events.top().T;
    while (!Events.empty() && Events.top().T == Now) {
      Event Ev = Events.top();
      Events.pop();
      if (Ev.Kind == 0)
        onFinish(Ev);
      else
        onSignal(Ev);
    }
  }
  if (Races && Races->hasRaces()) {
    std::string Msg;
    for (const RaceReport &R : Races->races())
      Msg += (Msg.empty() ? "" : "\n") + O.FileName + ": " + R.describe();
    if (Races->numRaces() > Races->races().size())
      Msg += llvm::formatv("\n{0}: ... and {1} more", O.FileName,
                           Races->numRaces() - Races->races().size())
                 .str();
    return makeFailure(FailureKind::Race, Msg);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Deadlocks
//===----------------------------------------------------------------------===//

std::string SubgraphSim::position(const CoreSim &C) const {
  const Dyn *First = nullptr;
  for (const EngineState &E : C.Eng) {
    const Dyn *D = E.St != EngState::Idle ? &E.Cur
                   : E.Q.empty()          ? nullptr
                                          : &E.Q.front();
    if (D && (!First || D->Seq < First->Seq))
      First = D;
  }
  if (!First) {
    if (C.SeqDone)
      return "finished";
    uint32_t Id = C.BlockInsts[C.CurBlock][C.CurPos];
    return ("at block '" + C.M->getBlock(C.CurBlock)->getName() +
            "', instruction '" + C.Insts[Id].I->getName() + "'")
        .str();
  }
  const StaticInst &S = C.Insts[First->S];
  return ("at block '" + C.M->getBlock(S.Block)->getName() +
          "', instruction '" + S.I->getName() + "'")
      .str();
}

std::string SubgraphSim::explainWait(const CoreSim &C, unsigned E) const {
  const EngineState &ES = C.Eng[E];
  const StaticInst &S = C.Insts[ES.Cur.S];
  std::string Head = ("'" + S.I->getName() + "' on " +
                      enumName(S.I->getEngine()) + " (execution " +
                      llvm::Twine(ES.Cur.Exec) + ")")
                         .str();
  switch (S.Sync) {
  case SyncKind::Barrier:
  case SyncKind::Collective: {
    const Rendezvous &RV = Rdv[S.SyncKey];
    auto It = RV.Rounds.find(ES.Cur.Exec);
    uint32_t Mask = It == RV.Rounds.end() ? 0 : It->second.Mask;
    std::string Msg = Head + " waits at " + RV.Label;
    for (unsigned M = 0; M < Cores.size(); ++M) {
      if (!(S.ListMask & (1u << M)) || (Mask & (1u << M)))
        continue;
      const CoreSim &MC = Cores[M];
      // Is the peer blocked at another barrier or collective that lists us?
      std::string Other;
      for (unsigned PE = 0; PE < NumEngines; ++PE) {
        const EngineState &P = MC.Eng[PE];
        if (P.St != EngState::Waiting)
          continue;
        const StaticInst &PS = MC.Insts[P.Cur.S];
        if (PS.Sync == S.Sync && PS.SyncKey != S.SyncKey &&
            (PS.ListMask & (1u << C.Core)))
          Other = Rdv[PS.SyncKey].Label;
      }
      if (!Other.empty()) {
        Msg += ("; core " + llvm::Twine(M) + " waits at " + Other +
                (S.Sync == SyncKind::Barrier
                     ? ": barrier ids or names that do not match"
                     : ": the cores reach different collectives"))
                   .str();
        continue;
      }
      uint64_t Total = 0;
      bool Has = false;
      std::string Near;
      for (const StaticInst &PS : MC.Insts) {
        if (PS.SyncKey == S.SyncKey && PS.Sync == S.Sync) {
          Has = true;
          Total += PS.Total;
        }
        // A barrier of the peer that lists this core and shares the name or
        // the id is the one that was meant.
        if (S.Sync == SyncKind::Barrier && PS.Sync == SyncKind::Barrier &&
            PS.SyncKey != S.SyncKey && (PS.ListMask & (1u << C.Core)) &&
            (PS.I->getName() == S.I->getName() ||
             llvm::cast<InstCoreBarrier>(PS.I)->getId() ==
                 llvm::cast<InstCoreBarrier>(S.I)->getId()))
          Near = Rdv[PS.SyncKey].Label;
      }
      if (!Has)
        Msg += ("; core " + llvm::Twine(M) + " never reaches it: it has no " +
                RV.Label +
                (Near.empty() ? ""
                              : " but " + Near +
                                    ": barrier ids or names that do not match"))
                   .str();
      else if (Total < ES.Cur.Exec)
        Msg += ("; core " + llvm::Twine(M) +
                " never reaches it (it runs it " + llvm::Twine(Total) +
                " time(s))")
                   .str();
      else
        Msg += ("; core " + llvm::Twine(M) + " has not reached it (" +
                position(MC) + ")")
                   .str();
    }
    return Msg;
  }
  case SyncKind::Completion: {
    std::string Msg = Head + " waits for";
    for (auto &[Core, Id] : S.Waits) {
      const StaticInst &W = Cores[Core].Insts[Id];
      if (W.Total == 0)
        Msg += (" '" + W.I->getName() + "' on core " + llvm::Twine(Core) +
                ": a write that never runs;")
                   .str();
      else if (W.Finished < W.Total)
        Msg += llvm::formatv(" '{0}' on core {1}: {2} of {3} executions "
                             "finished;",
                             W.I->getName(), Core, W.Finished, W.Total)
                   .str();
    }
    if (!Msg.empty() && Msg.back() == ';')
      Msg.pop_back();
    return Msg;
  }
  case SyncKind::SemWait: {
    const SemState &Sem = C.Sems[S.SemIndex];
    uint64_t Pending = 0;
    for (auto &[Core, Id] : Sem.Signallers) {
      const StaticInst &W = Cores[Core].Insts[Id];
      Pending += W.Total - W.Finished;
    }
    std::string Msg = llvm::formatv("{0} waits for semaphore '{1}' to reach "
                                    "{2} (it holds {3}); ",
                                    Head, Sem.Name, S.SemCount, Sem.Count)
                          .str();
    if (Pending == 0)
      Msg += "nothing signals it any more";
    else
      Msg += llvm::formatv("{0} signal(s) still to come are blocked", Pending)
                 .str();
    return Msg;
  }
  case SyncKind::None:
    break;
  }
  return Head;
}

llvm::Error SubgraphSim::deadlock() {
  std::string Msg = (O.FileName + ": subgraph " + llvm::Twine(Subgraph) +
                     ": no core can make progress")
                        .str();
  for (const CoreSim &C : Cores) {
    Msg += ("\n  core " + llvm::Twine(C.Core) + ": " + position(C)).str();
    for (unsigned E = 0; E < NumEngines; ++E)
      if (C.Eng[E].St == EngState::Waiting)
        Msg += "\n    " + explainWait(C, E);
  }
  return makeFailure(FailureKind::Deadlock, Msg);
}

void SubgraphSim::finish(SimResult &R) {
  for (CoreSim &C : Cores)
    R.Cores.push_back(C.Rep);
  for (auto &S : Storages) {
    LocationState L;
    L.Subgraph = Subgraph;
    L.Core = S->Owner;
    L.Name = S->Name;
    L.Kind = S->Kind;
    L.Type = S->Type;
    L.Partitions = S->Partitions;
    L.BytesPerPartition = S->BytesPerPartition;
    L.Data = std::move(S->Data);
    L.Init = std::move(S->Init);
    L.AllInit = S->AllInit;
    R.Final.push_back(std::move(L));
  }
  if (R.NumCores < Cores.size())
    R.NumCores = Cores.size();
  for (TimelineSlice &S : Slices)
    R.Slices.push_back(std::move(S));
  for (TimelineFlow &F : Flows)
    R.Flows.push_back(std::move(F));
}

/// The modules of each subgraph, in order of first appearance, by core.
std::vector<std::vector<const Module *>> groupSubgraphs(const Program &P) {
  std::vector<std::vector<const Module *>> Groups;
  for (const Subgraph &S : P.subgraphs())
    Groups.emplace_back(S.modules().begin(), S.modules().end());
  return Groups;
}

std::string describeDifference(const LocationState &A, const LocationState &B,
                               uint64_t Byte) {
  unsigned Size = getDataTypeSize(A.Type);
  uint64_t P = Byte / A.BytesPerPartition;
  uint64_t InP = (Byte % A.BytesPerPartition) / Size;
  uint64_t Flat = P * (A.BytesPerPartition / Size) + InP;
  uint64_t Base = P * A.BytesPerPartition + InP * Size;
  auto Val = [&](const LocationState &L) -> std::string {
    if (Base + Size > L.Data.size())
      return "?";
    if (!L.isInit(Base))
      return "uninitialized";
    return formatElement(L.Type, L.Data.data() + Base);
  };
  std::string Where = A.Core ? ("core " + llvm::Twine(*A.Core)).str()
                             : std::string("SharedDRAM");
  return llvm::formatv("location '{0}' on {1}, element {2} (partition {3}, "
                       "element {4}): {5} vs {6}",
                       A.Name, Where, Flat, P, InP, Val(A), Val(B))
      .str();
}

} // namespace

llvm::Error splitIfNeeded(Program &P) {
  // The program was verified when it was loaded, and the split keeps that.
  PassManagerOptions O;
  O.VerifyAtEnd = false;
  PassManager PM(O);
  PM.addPass(std::make_unique<LncSplitter>());
  if (llvm::Expected<bool> Changed = PM.run(P); !Changed)
    return Changed.takeError();
  return llvm::Error::success();
}

using SeedCaches = std::vector<std::vector<std::vector<uint8_t>>>;

static llvm::Expected<SimResult> runOnce(const Program &P,
                                         const SimOptions &Opts,
                                         unsigned Schedule, SeedCaches &Seeds,
                                         SimResult *Partial) {
  SimResult R;
  llvm::StringMap<int> CollIdx;
  std::vector<std::string> CollNames;
  auto AddName = [&](llvm::StringRef N) {
    if (CollIdx.insert({N, int(CollNames.size())}).second)
      CollNames.push_back(N.str());
  };
  for (const std::string &N : Opts.CollectiveNames)
    AddName(N);
  for (const auto &M : P)
    for (const auto &B : M->blocks())
      for (const auto &I : *B)
        if (llvm::isa<InstCollectiveCompute>(I.get()))
          AddName(I->getName());
  uint64_t MemUsed = 0;
  auto Groups = groupSubgraphs(P);
  Seeds.resize(Groups.size());
  for (size_t G = 0; G < Groups.size(); ++G) {
    SubgraphSim Sim(Groups[G], Opts, Schedule,
                    Opts.RaceCheck && Schedule == 0,
                    Opts.RecordTrace && Schedule == 0, CollIdx, CollNames,
                    MemUsed, Seeds[G]);
    if (llvm::Error E = Sim.setup())
      return E;
    if (llvm::Error E = Sim.run()) {
      if (Partial) {
        Sim.finish(R);
        *Partial = std::move(R);
      }
      return E;
    }
    Sim.finish(R);
  }
  return R;
}

llvm::Expected<SimResult> simulate(const Program &P, const SimOptions &Opts,
                                   SimResult *Partial) {
  if (P.empty())
    return makeFailure(FailureKind::Error, Opts.FileName + ": no modules");
  for (const InputValue &In : Opts.Inputs) {
    bool Found = false;
    for (const auto &M : P)
      if (!In.Core || *In.Core == M->getNeuronCoreId())
        if (const MemoryLocation *L =
                M->getMemoryLocations().getMemlocByName(In.Name))
          Found |= !L->isRemote();
    if (!Found)
      return makeFailure(FailureKind::Error,
                         Opts.FileName + ": --input '" + In.Name + "': " +
                             (In.Core ? "core " + std::to_string(*In.Core) +
                                            " has no location of that name"
                                      : std::string("no core has a location "
                                                    "of that name")));
  }
  SeedCaches Seeds;
  llvm::Expected<SimResult> First = runOnce(P, Opts, 0, Seeds, Partial);
  if (!First)
    return First.takeError();
  for (unsigned K = 1; K <= Opts.Schedules; ++K) {
    SimOptions Quiet = Opts;
    Quiet.RecordTrace = false;
    llvm::Expected<SimResult> Other = runOnce(P, Quiet, K, Seeds, nullptr);
    if (!Other) {
      // A schedule that fails where the deterministic one passed is a
      // schedule dependence too.
      std::string Msg = llvm::toString(Other.takeError());
      return makeFailure(FailureKind::Nondeterminism,
                         llvm::formatv("{0}: random schedule {1} (seed {2}) "
                                       "fails where the deterministic one "
                                       "passes: {3}",
                                       Opts.FileName, K, Opts.Seed, Msg)
                             .str());
    }
    for (size_t L = 0; L < First->Final.size(); ++L) {
      const LocationState &A = First->Final[L], &B = Other->Final[L];
      if (A.Data == B.Data &&
          ((A.AllInit && B.AllInit) || (!A.AllInit && !B.AllInit &&
                                        A.Init == B.Init)))
        continue;
      for (uint64_t I = 0; I < A.Data.size(); ++I) {
        if (A.Data[I] == B.Data[I] && A.isInit(I) == B.isInit(I))
          continue;
        return makeFailure(
            FailureKind::Nondeterminism,
            llvm::formatv("{0}: random schedule {1} (seed {2}) leaves a "
                          "different result than the deterministic one: {3}",
                          Opts.FileName, K, Opts.Seed,
                          describeDifference(A, B, I))
                .str());
      }
    }
  }
  return First;
}

} // namespace loom::bir::sim
