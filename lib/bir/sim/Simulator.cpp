//===- Simulator.cpp - Multi-core simulation of BIR programs --------------===//
//
// The public API of the simulator (docs/simulator.md): simulate() runs each
// subgraph of a program with a SubgraphSim (SimulatorImpl.h), then the random
// schedules, and compares their final states with the deterministic run's.
// SimulatorImpl.h says how a SubgraphSim runs one subgraph and which file
// holds which part of it.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/sim/Simulator.h"

#include "SimulatorImpl.h"
#include "Semantics.h"

#include "loom/bir/passes/LncSplitter.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/support/Error.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

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

const LocationState *SimResult::find(unsigned Device, unsigned Subgraph,
                                     unsigned Core,
                                     llvm::StringRef Name) const {
  for (const LocationState &L : Final)
    if (L.Device == Device && L.Subgraph == Subgraph && L.Name == Name &&
        (!L.Core || *L.Core == Core))
      return &L;
  return nullptr;
}

namespace detail {

void SubgraphSim::finish(SimResult &R) {
  for (CoreSim &C : Cores)
    R.Cores.push_back(C.Rep);
  for (auto &S : Storages) {
    LocationState L;
    L.Device = S->Device.value_or(0);
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
  if (R.NumCores < DeviceSize.front())
    R.NumCores = DeviceSize.front();
  if (Launch)
    R.NumDevices = NumDevices;
  // The timeline names cores by their position in Cores until here.
  for (TimelineSlice &S : Slices) {
    S.Device = Cores[S.Core].Device;
    S.Core = Cores[S.Core].Core;
    R.Slices.push_back(std::move(S));
  }
  for (TimelineFlow &F : Flows) {
    F.FromDevice = Cores[F.FromCore].Device;
    F.FromCore = Cores[F.FromCore].Core;
    F.ToDevice = Cores[F.ToCore].Device;
    F.ToCore = Cores[F.ToCore].Core;
    R.Flows.push_back(std::move(F));
  }
}

} // namespace detail

namespace {

using detail::SubgraphSim;

/// The modules of each subgraph, in order of first appearance, by core.
std::vector<std::vector<const Module *>> groupSubgraphs(const Program &P) {
  std::vector<std::vector<const Module *>> Groups;
  for (const Subgraph &S : P.subgraphs())
    Groups.emplace_back(S.modules().begin(), S.modules().end());
  return Groups;
}

std::string describeDifference(const LocationState &A, const LocationState &B,
                               uint64_t Byte, bool Launch) {
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
  if (Launch)
    Where = ("device " + llvm::Twine(A.Device) + " " + Where).str();
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

/// One run of every subgraph of the devices' programs (one device unless
/// Launch) under schedule Schedule (0: the deterministic one).
static llvm::Expected<SimResult> runOnce(llvm::ArrayRef<const Program *> Devs,
                                         bool Launch, const SimOptions &Opts,
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
  for (const Program *P : Devs)
    for (const auto &M : *P)
      for (const auto &B : M->blocks())
        for (const auto &I : *B)
          if (llvm::isa<InstCollectiveCompute>(I.get()))
            AddName(I->getName());
  uint64_t MemUsed = 0;
  // Groups[D][G]: the modules of device D's G-th subgraph.
  std::vector<std::vector<std::vector<const Module *>>> Groups;
  for (const Program *P : Devs)
    Groups.push_back(groupSubgraphs(*P));
  for (size_t D = 1; D < Groups.size(); ++D) {
    bool Same = Groups[D].size() == Groups[0].size();
    for (size_t G = 0; Same && G < Groups[D].size(); ++G)
      Same = Groups[D][G].front()->getSubgraphId() ==
             Groups[0][G].front()->getSubgraphId();
    if (!Same)
      return makeFailure(FailureKind::Error,
                         Opts.FileName + ": device " + llvm::Twine(D) +
                             " has other subgraphs than device 0");
  }
  Seeds.resize(Groups[0].size());
  for (size_t G = 0; G < Groups[0].size(); ++G) {
    std::vector<std::vector<const Module *>> Mods;
    for (auto &DeviceGroups : Groups)
      Mods.push_back(DeviceGroups[G]);
    SubgraphSim Sim(Mods, Launch, Opts, Schedule,
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

static llvm::Expected<SimResult> simulateImpl(
    llvm::ArrayRef<const Program *> Devs, bool Launch, const SimOptions &Opts,
    SimResult *Partial) {
  if (Devs.empty())
    return makeFailure(FailureKind::Error, Opts.FileName + ": no devices");
  for (size_t D = 0; D < Devs.size(); ++D)
    if (Devs[D]->empty())
      return makeFailure(FailureKind::Error,
                         Opts.FileName + ": " +
                             (Launch ? "device " + std::to_string(D) + " has "
                                     : std::string()) +
                             "no modules");
  for (const InputValue &In : Opts.Inputs) {
    bool Found = false;
    if (In.Device && *In.Device >= Devs.size())
      return makeFailure(FailureKind::Error,
                         Opts.FileName + ": --input '" + In.Name +
                             "': device " + std::to_string(*In.Device) +
                             " does not exist: the launch has " +
                             std::to_string(Devs.size()) + " devices");
    unsigned Cores = 0;
    for (size_t D = 0; D < Devs.size(); ++D)
      for (const auto &M : *Devs[D])
        Cores = std::max(Cores, M->getNeuronCoreId() + 1);
    if (In.Core && *In.Core >= Cores)
      return makeFailure(FailureKind::Error,
                         Opts.FileName + ": --input '" + In.Name + "': core " +
                             std::to_string(*In.Core) + " does not exist: the " +
                             (Launch ? "devices have " : "program has ") +
                             std::to_string(Cores) +
                             (Cores == 1 ? " core" : " cores"));
    for (size_t D = 0; D < Devs.size(); ++D)
      if (!In.Device || *In.Device == D)
        for (const auto &M : *Devs[D])
          if (!In.Core || *In.Core == M->getNeuronCoreId())
            if (const MemoryLocation *L =
                    M->getMemoryLocations().getMemlocByName(In.Name))
              Found |= !L->isRemote();
    if (!Found) {
      std::string Who =
          In.Core ? "core " + std::to_string(*In.Core) : std::string();
      if (Launch && In.Device)
        Who = "device " + std::to_string(*In.Device) +
              (Who.empty() ? "" : " " + Who);
      return makeFailure(FailureKind::Error,
                         Opts.FileName + ": --input '" + In.Name + "': " +
                             (!Who.empty() ? Who +
                                                 " has no location of that name"
                                           : std::string("no core has a location "
                                                         "of that name")));
    }
  }
  SeedCaches Seeds;
  llvm::Expected<SimResult> First =
      runOnce(Devs, Launch, Opts, 0, Seeds, Partial);
  if (!First)
    return First.takeError();
  for (unsigned K = 1; K <= Opts.Schedules; ++K) {
    SimOptions Quiet = Opts;
    Quiet.RecordTrace = false;
    llvm::Expected<SimResult> Other =
        runOnce(Devs, Launch, Quiet, K, Seeds, nullptr);
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
                          describeDifference(A, B, I, Launch))
                .str());
      }
    }
  }
  return First;
}

std::vector<std::string>
collectivesNamingNothing(llvm::ArrayRef<const Program *> Programs,
                         llvm::ArrayRef<std::string> Names) {
  // The rule of SimulatorSetup's attribution: the whole name, or a prefix
  // of it that ends before an underscore.
  llvm::StringSet<> Named;
  for (const Program *P : Programs)
    for (const auto &M : *P)
      for (const auto &B : M->blocks())
        for (const auto &I : *B) {
          llvm::StringRef N = I->getName();
          for (size_t Pos = N.size() + 1; Pos-- > 0;)
            if (Pos == N.size() || N[Pos] == '_')
              Named.insert(N.substr(0, Pos));
        }
  std::vector<std::string> Unused;
  for (const std::string &Name : Names)
    if (!Named.contains(Name))
      Unused.push_back(Name);
  return Unused;
}

llvm::Expected<SimResult> simulate(const Program &P, const SimOptions &Opts,
                                   SimResult *Partial) {
  if (P.empty())
    return makeFailure(FailureKind::Error, Opts.FileName + ": no modules");
  const Program *Devs[] = {&P};
  return simulateImpl(Devs, /*Launch=*/false, Opts, Partial);
}

llvm::Expected<SimResult> simulateLaunch(llvm::ArrayRef<const Program *> Devices,
                                         const SimOptions &Opts,
                                         SimResult *Partial) {
  return simulateImpl(Devices, /*Launch=*/true, Opts, Partial);
}

} // namespace loom::bir::sim
