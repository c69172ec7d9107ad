//===- SimulatorImpl.h - The simulator's state, shared by its parts -*- C++ -*-===//
//
// Private to lib/bir/sim. One SubgraphSim runs the modules of one subgraph,
// one per core, as a discrete-event simulation (docs/simulator.md):
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
// The class is implemented in four parts:
//
//   SimulatorSetup.cpp       storages, per-instruction facts, the matching of
//                            barriers, collectives, completions and signals,
//                            the block walk that bounds the run and finds the
//                            inputs, seeded and given inputs;
//   SimulatorScheduling.cpp  the dispatcher, the event loop, engine starts,
//                            waits and the rendezvous of barriers and
//                            collectives;
//   SimulatorExecution.cpp   the element effect of every instruction and the
//                            reference semantics of the collectives, with
//                            their race-detector accesses;
//   SimulatorDeadlock.cpp    the explanation of a state where no core can
//                            progress.
//
// Simulator.cpp holds the public API on top: simulate, the random schedules
// and their comparison, and the result.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_SIM_SIMULATORIMPL_H
#define LOOM_LIB_BIR_SIM_SIMULATORIMPL_H

#include "loom/bir/sim/Simulator.h"

#include "RaceDetector.h"
#include "Storage.h"

#include "loom/bir/ir/Instructions.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace loom::bir::sim::detail {

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
  /// The members of a barrier or collective, as bits of indices into
  /// SubgraphSim::Cores.
  uint64_t ListMask = 0;
  llvm::SmallVector<std::pair<unsigned, uint32_t>, 2> Waits;
  int SignalCore = -1; ///< an index into SubgraphSim::Cores
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
  /// The core within its logical core (the module's neuron_core_id).
  unsigned Core = 0;
  /// The device of a launch (0 for a single program), this core's position
  /// in SubgraphSim::Cores, and the position of its device's core 0 there.
  unsigned Device = 0;
  unsigned Index = 0;
  unsigned Base = 0;
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
  unsigned Core; ///< an index into SubgraphSim::Cores
  unsigned Eng;
  uint32_t S;
  double T;
  uint32_t VC;
  bool Released = false;
};

struct Round {
  uint64_t Mask = 0;
  uint64_t Wanted = 0;
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
  uint16_t Core; ///< an index into SubgraphSim::Cores
  uint16_t Eng;
  uint32_t Sem;
  uint32_t VC;
  uint32_t From;
  bool operator>(const Event &O) const {
    return T != O.T ? T > O.T : Seq > O.Seq;
  }
};

/// How messages name a storage: "x (core 1)", or the name of a SharedDRAM
/// location; in a launch "x (device 2 core 1)" and "x (device 2)".
std::string storageLabel(const Storage &S);

/// splitmix64: the random inputs depend only on the seed, the storage's name
/// and (for private memories) its core; the random schedules' generators are
/// seeded through it too.
inline uint64_t mix(uint64_t X) {
  X += 0x9e3779b97f4a7c15ull;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ull;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebull;
  return X ^ (X >> 31);
}

class SubgraphSim {
public:
  /// Mods holds, per device, the modules of this subgraph in core order: one
  /// device for a single program (Launch false), every device of a launch
  /// otherwise (docs/simulator.md, "Launches").
  SubgraphSim(llvm::ArrayRef<std::vector<const Module *>> Mods, bool Launch,
              const SimOptions &O, unsigned Schedule, bool RaceCheck,
              bool Trace, const llvm::StringMap<int> &CollIdx,
              llvm::ArrayRef<std::string> CollNames, uint64_t &MemUsed,
              std::vector<std::vector<uint8_t>> &SeedCache)
      : O(O), Schedule(Schedule), RaceCheck(RaceCheck), Trace(Trace),
        Launch(Launch), CollIdx(CollIdx), CollNames(CollNames),
        MemUsed(MemUsed), SeedCache(SeedCache),
        Rng(mix(O.Seed * 1000003 + Schedule)) {
    NumDevices = Mods.size();
    for (unsigned D = 0; D < Mods.size(); ++D) {
      unsigned Base = Cores.size();
      for (const Module *M : Mods[D]) {
        Cores.emplace_back();
        CoreSim &C = Cores.back();
        C.M = M;
        C.Core = M->getNeuronCoreId();
        C.Device = D;
        C.Index = Cores.size() - 1;
        C.Base = Base;
      }
      DeviceSize.push_back(Mods[D].size());
      DeviceBase.push_back(Base);
    }
    Subgraph = Mods.front().front()->getSubgraphId();
  }

  llvm::Error setup();
  llvm::Error run();
  void finish(SimResult &R);

private:
  llvm::Error fail(FailureKind K, const llvm::Twine &Msg) {
    return makeFailure(K, O.FileName + ": " + Msg);
  }
  /// How messages name a core: "core 1", or in a launch "device 3 core 1".
  std::string coreName(const CoreSim &C) const {
    return Launch ? ("device " + llvm::Twine(C.Device) + " core " +
                     llvm::Twine(C.Core))
                        .str()
                  : ("core " + llvm::Twine(C.Core)).str();
  }
  /// The index into Cores of core Core of C's device, or none if the device
  /// has no such core.
  std::optional<unsigned> peer(const CoreSim &C, unsigned Core) const {
    if (Core >= DeviceSize[C.Device])
      return std::nullopt;
    return C.Base + Core;
  }
  llvm::Error checkRemoteGroups();
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
  /// The trace's details of an execution of S on C.
  SliceDetails sliceDetails(const CoreSim &C, const StaticInst &S) const;
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
    return C.Index * NumEngines + E;
  }

  const SimOptions &O;
  unsigned Schedule;
  bool RaceCheck;
  bool Trace;
  /// A launch of several devices: remote collectives run, messages name
  /// devices.
  bool Launch;
  const llvm::StringMap<int> &CollIdx;
  llvm::ArrayRef<std::string> CollNames;
  uint64_t &MemUsed;
  /// The seeded contents of each storage, kept from the first schedule: they
  /// depend only on the program and the seed.
  std::vector<std::vector<uint8_t>> &SeedCache;
  std::mt19937_64 Rng;
  unsigned Subgraph = 0;
  unsigned NumThreads = 0;
  unsigned NumDevices = 1;
  /// The number of cores of each device, and the position of its core 0 in
  /// Cores.
  std::vector<unsigned> DeviceSize, DeviceBase;

  std::vector<CoreSim> Cores;
  std::vector<std::unique_ptr<Storage>> Storages;
  /// The SharedDRAM storages of each device, by name.
  std::vector<llvm::StringMap<Storage *>> Shared;
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
  std::vector<uint8_t> Buf0, Buf1, Buf2, Buf3;
  std::vector<std::pair<uint64_t, uint64_t>> RunScratch;
  std::vector<std::vector<uint8_t>> CollBufs;

public:
  std::vector<TimelineSlice> Slices;
  std::vector<TimelineFlow> Flows;
};

} // namespace loom::bir::sim::detail

#endif
