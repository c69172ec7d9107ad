//===- SimulatorScheduling.cpp - The event loop of a subgraph ---------------===//
//
// The discrete-event part of docs/simulator.md, "Execution": the
// dispatcher that fills each engine's in-order queue, engine starts once the
// awaited executions have finished, the waits of completions and
// semaphores, the rendezvous rounds of barriers and collectives, finish and
// signal events, the deterministic or shuffled scan of the engines, and the
// run loop that ends in success, a deadlock or races. The happens-before
// clocks of docs/race-detection.md are built here along the same edges.
//
//===----------------------------------------------------------------------===//

#include "SimulatorImpl.h"

#include <algorithm>

namespace loom::bir::sim::detail {

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
// Starting, waiting and meeting
//===----------------------------------------------------------------------===//

void SubgraphSim::scheduleFinish(CoreSim &C, unsigned E, double At) {
  Events.push(Event{At, EventSeq++, 0, uint16_t(C.Index), uint16_t(E), 0,
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
      if (Trace && Core != C.Index)
        Flows.push_back({Core, W.I->getEngine(),
                         (W.LastStart + W.LastEnd) / 2, C.Index,
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
                         (Sig.LastStart + Sig.LastEnd) / 2, C.Index,
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
  R.Mask |= uint64_t(1) << C.Index;
  R.Wanted |= S.ListMask;
  R.A.push_back(Arrival{C.Index, E, ES.Cur.S, Now, ES.VC});
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

SliceDetails SubgraphSim::sliceDetails(const CoreSim &C, const StaticInst &S) const {
  SliceDetails D;
  D.Opcode = getInstructionTypeName(S.I->getType()).str();
  // The bytes as the report counts them (a completion moves none).
  D.BytesWritten = S.BytesOut;
  if (S.I->getType() != InstructionType::TensorCompletion)
    for (const OperandInfo &Op : S.In)
      D.BytesRead += Op.Bytes;
  auto Name = [&](const OperandInfo &Op) {
    if (Op.S->Owner && *Op.S->Owner != C.Core)
      return Op.S->Name + " (core " + std::to_string(*Op.S->Owner) + ")";
    return Op.S->Name;
  };
  for (const OperandInfo &Op : S.In)
    D.Reads.push_back(Name(Op));
  for (const OperandInfo &Op : S.Out)
    D.Writes.push_back(Name(Op));
  if (S.Collective >= 0)
    D.Collective = CollNames[S.Collective];
  return D;
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
    Slices.push_back({C.Index, S.I->getEngine(), S.I->getName().str(), ES.Start,
                      Ev.T - ES.Start, 0, sliceDetails(C, S)});
  if (S.SignalCore >= 0) {
    uint32_t VC = NoIndex;
    if (RaceCheck) {
      VC = allocVC();
      Pool[VC] = Pool[ES.VC];
    }
    analysis::CostModel Cost(O.Cost);
    Events.push(Event{Ev.T + Cost.params().SemaphoreSignalNs, EventSeq++, 1,
                      uint16_t(S.SignalCore), 0, S.SignalSem, VC,
                      (uint32_t(C.Index) << 24) | ES.Cur.S});
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
      // (Twine rather than formatv: gcc 12 warns inside LLVM 14's integer
      // formatter when it is inlined here.)
      Msg += ("\n" + O.FileName + ": ... and " +
              llvm::Twine(uint64_t(Races->numRaces() - Races->races().size())) +
              " more")
                 .str();
    return makeFailure(FailureKind::Race, Msg);
  }
  return llvm::Error::success();
}

} // namespace loom::bir::sim::detail
