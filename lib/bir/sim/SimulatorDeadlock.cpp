//===- SimulatorDeadlock.cpp - Explaining a deadlock ------------------------===//
//
// When no engine can start and no event is pending while some core has not
// finished, the run stops with one line per core (its position) and one per
// waiting instruction saying what it waits for and why that never comes
// (docs/simulator.md, "Deadlocks").
//
//===----------------------------------------------------------------------===//

#include "SimulatorImpl.h"

#include "llvm/Support/FormatVariadic.h"

namespace loom::bir::sim::detail {

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
    uint64_t Mask = It == RV.Rounds.end() ? 0 : It->second.Mask;
    std::string Msg = Head + " waits at " + RV.Label;
    for (unsigned M = 0; M < Cores.size(); ++M) {
      if (!(S.ListMask & (uint64_t(1) << M)) || (Mask & (uint64_t(1) << M)))
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
            (PS.ListMask & (uint64_t(1) << C.Index)))
          Other = Rdv[PS.SyncKey].Label;
      }
      if (!Other.empty()) {
        Msg += ("; " + llvm::Twine(coreName(MC)) + " waits at " + Other +
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
            PS.SyncKey != S.SyncKey && (PS.ListMask & (uint64_t(1) << C.Index)) &&
            (PS.I->getName() == S.I->getName() ||
             llvm::cast<InstCoreBarrier>(PS.I)->getId() ==
                 llvm::cast<InstCoreBarrier>(S.I)->getId()))
          Near = Rdv[PS.SyncKey].Label;
      }
      if (!Has)
        Msg += ("; " + llvm::Twine(coreName(MC)) + " never reaches it: it has no " +
                RV.Label +
                (Near.empty() ? ""
                              : " but " + Near +
                                    ": barrier ids or names that do not match"))
                   .str();
      else if (Total < ES.Cur.Exec)
        Msg += ("; " + llvm::Twine(coreName(MC)) +
                " never reaches it (it runs it " + llvm::Twine(Total) +
                " time(s))")
                   .str();
      else
        Msg += ("; " + llvm::Twine(coreName(MC)) + " has not reached it (" +
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
        Msg += (" '" + W.I->getName() + "' on core " +
                llvm::Twine(Cores[Core].Core) + ": a write that never runs;")
                   .str();
      else if (W.Finished < W.Total)
        Msg += llvm::formatv(" '{0}' on core {1}: {2} of {3} executions "
                             "finished;",
                             W.I->getName(), Cores[Core].Core, W.Finished,
                             W.Total)
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
    Msg += "\n  " + coreName(C) + ": " + position(C);
    for (unsigned E = 0; E < NumEngines; ++E)
      if (C.Eng[E].St == EngState::Waiting)
        Msg += "\n    " + explainWait(C, E);
  }
  return makeFailure(FailureKind::Deadlock, Msg);
}

} // namespace loom::bir::sim::detail
