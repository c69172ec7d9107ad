//===- MutationTest.cpp - Faults in lowered programs must be caught -------===//
//
// Proves that the simulator's checks are strong enough to prove a lowering:
// every lowering test input and bundled example is lowered in memory, then
// every fault of these kinds is injected into the lowered program, one at a
// time: drop a barrier (on one core), drop a completion or a semaphore wait,
// point a copy at the wrong core or at the wrong slice, swap two barrier ids
// on one core, remove a dependency, reorder two instructions of one engine.
//
// A mutant is caught when the verifier rejects it or the simulator reports
// it: a result that differs from the unlowered program, a race, a deadlock,
// nondeterminism over 20 random schedules, or another simulation error. A
// mutant that survives must be shown harmless: either a structural proof
// that no access and no ordering between accesses changed (a dependency
// implied by other dependencies and engine order in its block; a completion
// that nothing depends on and nothing follows on its engine), or the same
// observable state as the unlowered program, race- and deadlock-free, for
// two more input seeds under 4 schedules each. A survivor that fails that
// check is a fault the standard check missed and fails the test.
//
// RepresentativeLowerings runs with the unit tests; DISABLED_AllLowerings
// takes the whole corpus (docs/race-detection.md, "Mutation test", has the
// command and the figures). LOOM_MUTATION_ONLY=<text> keeps the inputs whose
// label contains the text; LOOM_MUTATION_VERBOSE=1 prints every verdict.
//
//===----------------------------------------------------------------------===//
#include "../../lib/bir/sim/RaceDetector.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/Pass.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

using namespace loom;
using namespace loom::bir;
using namespace loom::bir::sim;
namespace json = llvm::json;

namespace {

//===----------------------------------------------------------------------===//
// The corpus
//===----------------------------------------------------------------------===//

/// The repository root, from this file's path (unittests/bir-sim/...).
std::string sourceRoot() { return LOOM_SOURCE_DIR; }

std::vector<std::string> jsonFiles(const std::string &Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::StringRef(It->path()).endswith(".json"))
      Files.push_back(It->path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

/// Values for the placeholders of the templated lowering inputs (the lit
/// tests instantiate them the same way): each row is one instance.
using Substitution = std::vector<std::pair<std::string, std::string>>;
const std::vector<Substitution> &instancesOf(llvm::StringRef Stem) {
  static const std::map<std::string, std::vector<Substitution>> Table = {
      {"allreduce",
       {{{"@LNC@", "2"}, {"@GROUP@", "[0, 1]"}, {"@IK@", "SB"},
         {"@OK@", "SB"}, {"@OP@", "Add"}, {"@P@", "128"},
         {"@PAT@", "[[1, 64]]"}, {"@T@", "fp32"}},
        {{"@LNC@", "4"}, {"@GROUP@", "[0, 1, 2, 3]"}, {"@IK@", "SB"},
         {"@OK@", "SB"}, {"@OP@", "Add"}, {"@P@", "128"},
         {"@PAT@", "[[4, 3], [1, 4]]"}, {"@T@", "fp32"}},
        {{"@LNC@", "3"}, {"@GROUP@", "[0, 1, 2]"}, {"@IK@", "SB"},
         {"@OK@", "SB"}, {"@OP@", "Max"}, {"@P@", "128"},
         {"@PAT@", "[[1, 48]]"}, {"@T@", "bf16"}}}},
      {"swap-budget",
       {{{"@N@", "16"}, {"@T@", "bf16"}}, {{"@N@", "512"}, {"@T@", "fp32"}}}},
  };
  static const std::vector<Substitution> Plain = {{}};
  auto It = Table.find(Stem.str());
  return It == Table.end() ? Plain : It->second;
}

/// "@NAME@" left in a template: capitals, digits or '_' between two '@'.
bool hasPlaceholder(llvm::StringRef Text) {
  for (size_t Pos = Text.find('@'); Pos != llvm::StringRef::npos;
       Pos = Text.find('@', Pos + 1)) {
    size_t End = Pos + 1;
    while (End < Text.size() &&
           ((Text[End] >= 'A' && Text[End] <= 'Z') || llvm::isDigit(Text[End]) ||
            Text[End] == '_'))
      ++End;
    if (End > Pos + 1 && End < Text.size() && Text[End] == '@')
      return true;
  }
  return false;
}

std::string substitute(std::string Text, const Substitution &S) {
  for (const auto &[From, To] : S) {
    size_t Pos;
    while ((Pos = Text.find(From)) != std::string::npos)
      Text.replace(Pos, From.size(), To);
  }
  return Text;
}

/// The lowering pipelines whose output is mutated.
struct Pipeline {
  const char *Name;
  BackendOptions Opts;
  std::vector<const char *> Passes;
};

std::vector<Pipeline> pipelines() {
  std::vector<Pipeline> P;
  P.push_back({"default", {}, {"lnc_splitter", "lower_local_collectives"}});
  BackendOptions Sem;
  Sem.EnableRemoteSemaphoreDMA = true;
  P.push_back({"remote-semaphore", Sem,
               {"lnc_splitter", "lower_local_collectives"}});
  BackendOptions Ptcom;
  Ptcom.EnablePTCOM = true;
  P.push_back({"ptcom", Ptcom,
               {"lnc_splitter", "lower_local_collectives",
                "insert_ptcom_flat"}});
  return P;
}

//===----------------------------------------------------------------------===//
// Running the checks
//===----------------------------------------------------------------------===//

struct Verdict {
  bool Failed = false;
  std::string Category; // verifier | mismatch | race | deadlock | ...
  std::string Message;
};

Verdict verdictOf(llvm::Error E) {
  Verdict V;
  if (!E)
    return V;
  V.Failed = true;
  llvm::handleAllErrors(
      std::move(E),
      [&](const SimFailure &F) {
        switch (F.getKind()) {
        case FailureKind::Race: V.Category = "race"; break;
        case FailureKind::Deadlock: V.Category = "deadlock"; break;
        case FailureKind::Nondeterminism: V.Category = "nondeterminism"; break;
        case FailureKind::Mismatch: V.Category = "wrong result"; break;
        case FailureKind::Error: V.Category = "simulation error"; break;
        }
        V.Message = F.getMessage();
      },
      [&](const llvm::ErrorInfoBase &B) {
        V.Category = "simulation error";
        V.Message = B.message();
      });
  return V;
}

SimOptions simOptions(uint64_t Seed, unsigned Schedules,
                      const std::string &Name) {
  SimOptions O;
  O.Seed = Seed;
  O.Schedules = Schedules;
  O.FileName = Name;
  O.MaxSteps = 200000;
  return O;
}

/// Equivalence of After with Before under Seed and Schedules.
Verdict check(const Program &Before, const Program &After, uint64_t Seed,
              unsigned Schedules, const std::string &Name) {
  std::string Log;
  llvm::raw_string_ostream LogOS(Log);
  return verdictOf(checkEquivalence(
      Before, After, simOptions(Seed, Schedules, Name), LogOS));
}

/// The final state of the unmutated lowering for one seed, restricted to
/// the locations the unlowered program has (what equivalence compares).
struct Reference {
  std::map<std::string, LocationState> Final;
};

std::string stateKey(const LocationState &L) {
  return std::to_string(L.Subgraph) + ":" +
         (L.Core ? std::to_string(*L.Core) : std::string("shared")) + ":" +
         L.Name;
}

/// Keys of the locations of Before that equivalence compares.
std::set<std::string> observableKeys(const Program &Before) {
  std::set<std::string> Keys;
  for (const auto &M : Before)
    for (const auto &L : M->getMemoryLocations().locations()) {
      if (L->isRemote())
        continue;
      std::string Core = L->getKind() == MemoryKind::SharedDRAM
                             ? std::string("shared")
                             : std::to_string(M->getNeuronCoreId());
      Keys.insert(std::to_string(M->getSubgraphId()) + ":" + Core + ":" +
                  L->getName().str());
    }
  return Keys;
}

/// Runs the mutant once under Seed and Schedules: a failure of the run
/// itself (race, deadlock, nondeterminism, error), else whether its
/// observable state is bit-identical to Ref. A difference is confirmed by
/// the equivalence check against the unlowered program, which allows the
/// documented float tolerance.
Verdict runMutant(const Program &Before, const Program &Mutant,
                  const Reference &Ref, uint64_t Seed, unsigned Schedules,
                  const std::string &Name) {
  auto R = simulate(Mutant, simOptions(Seed, Schedules, Name));
  if (!R)
    return verdictOf(R.takeError());
  bool Same = true;
  for (const auto &[Key, Want] : Ref.Final) {
    const LocationState *Got = nullptr;
    for (const LocationState &L : R->Final)
      if (L.Subgraph == Want.Subgraph && L.Core == Want.Core &&
          L.Name == Want.Name)
        Got = &L;
    if (!Got || Got->Data.size() != Want.Data.size()) {
      Same = false;
      break;
    }
    for (size_t I = 0; I < Want.Data.size() && Same; ++I)
      if (Want.isInit(I) &&
          (!Got->isInit(I) || Got->Data[I] != Want.Data[I]))
        Same = false;
    if (!Same)
      break;
  }
  if (Same)
    return Verdict();
  return check(Before, Mutant, Seed, 0, Name);
}

std::string firstLine(llvm::StringRef S) {
  return S.split('\n').first.str();
}

//===----------------------------------------------------------------------===//
// Mutations, on the JSON form
//===----------------------------------------------------------------------===//

enum class Kind {
  DropBarrier,
  DropCompletion,
  DropSemaphoreWait,
  WrongCore,
  WrongSlice,
  SwapBarrierIds,
  RemoveDependency,
  Reorder,
};
constexpr unsigned NumKinds = 8;
const char *kindName(Kind K) {
  static const char *Names[] = {
      "drop a barrier",       "drop a completion",  "drop a semaphore wait",
      "copy to the wrong core", "copy the wrong slice", "swap barrier ids",
      "remove a dependency",  "reorder one engine"};
  return Names[unsigned(K)];
}

struct Mutant {
  Kind K;
  std::string What;
  std::function<bool(json::Value &)> Apply; // false: not applicable
  /// A structural reason for harmlessness, if one holds.
  std::string Structural;
  /// The reason proves that every access and every ordering between
  /// accesses is unchanged, so the mutant behaves as the unmutated lowering
  /// under every schedule and input.
  bool Proven = false;
};

json::Array &arr(json::Object &O, llvm::StringRef Key) {
  if (!O.getArray(Key))
    O[Key] = json::Array();
  return *O.getArray(Key);
}
json::Object &obj(json::Value &V) { return *V.getAsObject(); }
json::Array &modulesOf(json::Value &P) { return arr(obj(P), "modules"); }
std::string str(const json::Object &O, llvm::StringRef Key) {
  if (auto S = O.getString(Key))
    return S->str();
  return "";
}
int64_t num(const json::Object &O, llvm::StringRef Key, int64_t Default = 0) {
  if (auto N = O.getInteger(Key))
    return *N;
  return Default;
}

/// json::Array has no erase.
void eraseAt(json::Array &A, size_t K) {
  json::Array Rest;
  for (size_t I = 0; I < A.size(); ++I)
    if (I != K)
      Rest.push_back(std::move(A[I]));
  A = std::move(Rest);
}

json::Object &instAt(json::Value &P, size_t M, size_t B, size_t K) {
  json::Object &Mod = *modulesOf(P)[M].getAsObject();
  json::Object &Blk = *arr(Mod, "blocks")[B].getAsObject();
  return *arr(Blk, "instructions")[K].getAsObject();
}

/// Removes instruction K of block B of module M and every dependency on it.
void dropInst(json::Value &P, size_t M, size_t B, size_t K) {
  json::Object &Mod = *modulesOf(P)[M].getAsObject();
  json::Array &Insts = arr(*arr(Mod, "blocks")[B].getAsObject(), "instructions");
  std::string Name = str(*Insts[K].getAsObject(), "name");
  eraseAt(Insts, K);
  for (json::Value &BV : arr(Mod, "blocks"))
    for (json::Value &IV : arr(obj(BV), "instructions")) {
      json::Array &Deps = arr(obj(IV), "deps");
      for (size_t D = 0; D < Deps.size();)
        if (Deps[D].getAsString() && *Deps[D].getAsString() == Name)
          eraseAt(Deps, D);
        else
          ++D;
    }
}

json::Object *findLoc(json::Object &Mod, llvm::StringRef Name) {
  for (json::Value &L : arr(Mod, "memory_locations"))
    if (str(obj(L), "name") == Name)
      return L.getAsObject();
  return nullptr;
}

/// The module of (Subgraph, Core).
json::Object *moduleFor(json::Value &P, int64_t Subgraph, int64_t Core) {
  for (json::Value &M : modulesOf(P))
    if (num(obj(M), "subgraph_id") == Subgraph &&
        num(obj(M), "neuron_core_id") == Core)
      return M.getAsObject();
  return nullptr;
}

/// The name through which module Mod reaches location Name of core Target,
/// creating the remote location if needed; "" if impossible.
std::string locationOnCore(json::Value &P, json::Object &Mod,
                           llvm::StringRef Name, int64_t Target, bool Written) {
  int64_t Own = num(Mod, "neuron_core_id");
  int64_t Sg = num(Mod, "subgraph_id");
  json::Object *Peer = moduleFor(P, Sg, Target);
  if (!Peer)
    return "";
  json::Object *PeerLoc = findLoc(*Peer, Name);
  if (!PeerLoc || PeerLoc->get("remote"))
    return "";
  if (Target == Own)
    return Name.str();
  std::string Remote = getRemoteLocationName(Name, unsigned(Target));
  if (!findLoc(Mod, Remote)) {
    int64_t MaxId = 0;
    for (json::Value &L : arr(Mod, "memory_locations"))
      MaxId = std::max(MaxId, num(obj(L), "tensor_id"));
    json::Object L;
    L["name"] = Remote;
    L["tensor_id"] = MaxId + 1;
    for (const char *F : {"kind", "dtype", "partitions", "bytes_per_partition"})
      L[F] = *PeerLoc->get(F);
    L["remote"] = json::Object{{"core", Target}, {"memloc", Name.str()}};
    arr(Mod, "memory_locations").push_back(std::move(L));
  }
  if (Written)
    (*PeerLoc)["written_by_another_core"] = true;
  return Remote;
}

unsigned dtypeSize(llvm::StringRef T) {
  if (T == "fp32" || T == "int32" || T == "uint32")
    return 4;
  if (T == "bf16" || T == "fp16" || T == "int16" || T == "uint16")
    return 2;
  return 1;
}

/// Lowest and highest element offset of a JSON pattern.
std::pair<int64_t, int64_t> patternBounds(const json::Array &Pat) {
  int64_t Lo = 0, Hi = 0;
  for (const json::Value &D : Pat) {
    const json::Array &SC = *D.getAsArray();
    int64_t Step = *SC[0].getAsInteger(), Count = *SC[1].getAsInteger();
    if (Step < 0)
      Lo += Step * (Count - 1);
    else
      Hi += Step * (Count - 1);
  }
  return {Lo, Hi};
}

//===----------------------------------------------------------------------===//
// Structural explanations
//===----------------------------------------------------------------------===//

/// The IR of one lowered program, indexed like its JSON form.
struct IRIndex {
  // [module][block][position]
  std::vector<std::vector<std::vector<const Instruction *>>> Insts;

  explicit IRIndex(const Program &P) {
    for (const auto &M : P) {
      Insts.emplace_back();
      for (const auto &B : M->blocks()) {
        Insts.back().emplace_back();
        for (const auto &I : *B)
          Insts.back().back().push_back(I.get());
      }
    }
  }
};

/// Within one block: does From reach To through dependencies (except the
/// edge Skip) and engine order?
bool reachesInBlock(const std::vector<const Instruction *> &Block,
                    const Instruction *From, const Instruction *To,
                    const Instruction *SkipUser, const Instruction *SkipDep) {
  llvm::DenseMap<const Instruction *, size_t> Pos;
  for (size_t K = 0; K < Block.size(); ++K)
    Pos[Block[K]] = K;
  if (!Pos.count(From) || !Pos.count(To))
    return false;
  // Forward in block order: reached[K] if some earlier reached instruction
  // is a dependency of K or precedes it on its engine.
  std::vector<bool> Reached(Block.size(), false);
  Reached[Pos[From]] = true;
  llvm::DenseMap<unsigned, bool> EngineReached;
  for (size_t K = Pos[From]; K < Block.size(); ++K) {
    const Instruction *I = Block[K];
    unsigned E = unsigned(I->getEngine());
    if (!Reached[K]) {
      if (EngineReached.lookup(E))
        Reached[K] = true;
      for (const Instruction *D : I->dependencies()) {
        if (I == SkipUser && D == SkipDep)
          continue;
        auto It = Pos.find(D);
        if (It != Pos.end() && It->second < K && Reached[It->second])
          Reached[K] = true;
      }
    }
    if (Reached[K])
      EngineReached[E] = true;
  }
  return Reached[Pos[To]];
}

/// Instruction K of a block is a dependency of nothing and is followed on
/// its engine only by the block's branch, in a block that ends the module.
bool ordersNothing(const std::vector<const Instruction *> &Block, size_t K,
                   bool EndsModule) {
  const Instruction *I = Block[K];
  if (!EndsModule || !I->users().empty())
    return false;
  for (size_t J = K + 1; J < Block.size(); ++J)
    if (Block[J]->getEngine() == I->getEngine() && !Block[J]->isTerminator())
      return false;
  return true;
}

/// The bytes two instructions touch overlap with at least one write, within
/// one module (remote locations compared by the storage they name).
bool conflict(const Instruction *A, const Instruction *B, unsigned Core) {
  struct Acc {
    std::string Storage;
    unsigned P0, P1;
    std::vector<RaceDetector::Run> Runs;
    bool Write;
  };
  auto Collect = [&](const Instruction *I) {
    std::vector<Acc> Out;
    auto Add = [&](const AccessPattern &AP, bool W) {
      const MemoryLocation *L = AP.getLocation();
      Acc X;
      if (L->isRemote())
        X.Storage = std::to_string(L->getRemote()->Core) + ":" +
                    L->getRemote()->MemLoc;
      else if (L->getKind() == MemoryKind::SharedDRAM)
        X.Storage = "shared:" + L->getName().str();
      else
        X.Storage = std::to_string(Core) + ":" + L->getName().str();
      X.P0 = AP.getStartPartition();
      X.P1 = X.P0 + AP.getNumPartitions();
      decomposeAccessPattern(AP, X.Runs);
      X.Write = W;
      Out.push_back(std::move(X));
    };
    for (const AccessPattern &AP : I->inputs())
      Add(AP, false);
    for (const AccessPattern &AP : I->outputs()) {
      Add(AP, false);
      Add(AP, true);
    }
    return Out;
  };
  // Synchronizing instructions order other things: never independent.
  for (const Instruction *I : {A, B})
    if (I->getType() == InstructionType::CoreBarrier ||
        I->getType() == InstructionType::TensorCompletion ||
        I->getType() == InstructionType::SemaphoreWait ||
        I->getType() == InstructionType::CollectiveCompute)
      return true;
  for (const Acc &X : Collect(A))
    for (const Acc &Y : Collect(B)) {
      if (!X.Write && !Y.Write)
        continue;
      if (X.Storage != Y.Storage || X.P1 <= Y.P0 || Y.P1 <= X.P0)
        continue;
      size_t I = 0, J = 0;
      while (I < X.Runs.size() && J < Y.Runs.size()) {
        if (X.Runs[I].End <= Y.Runs[J].Begin)
          ++I;
        else if (Y.Runs[J].End <= X.Runs[I].Begin)
          ++J;
        else
          return true;
      }
    }
  return false;
}

//===----------------------------------------------------------------------===//
// Enumerating the mutants of one lowered program
//===----------------------------------------------------------------------===//

std::vector<Mutant> enumerate(const json::Value &Lowered, const Program &IR) {
  std::vector<Mutant> Out;
  json::Value P = Lowered; // read-only walk over a copy
  IRIndex Idx(IR);
  json::Array &Mods = modulesOf(P);
  for (size_t M = 0; M < Mods.size(); ++M) {
    json::Object &Mod = obj(Mods[M]);
    int64_t Core = num(Mod, "neuron_core_id");
    int64_t Lnc = num(*Mod.getObject("pass_options"), "lnc_size", 1);
    int64_t Subgraph = num(Mod, "subgraph_id");
    std::string Where = "core " + std::to_string(Core) +
                        (Subgraph ? ", subgraph " + std::to_string(Subgraph)
                                  : std::string());
    json::Array &Blocks = arr(Mod, "blocks");
    std::vector<std::tuple<size_t, size_t, int64_t, std::string>> Barriers;
    for (size_t B = 0; B < Blocks.size(); ++B) {
      json::Array &Insts = arr(obj(Blocks[B]), "instructions");
      for (size_t K = 0; K < Insts.size(); ++K) {
        json::Object &I = obj(Insts[K]);
        std::string Name = str(I, "name"), Type = str(I, "type");
        std::string At = "'" + Name + "' (" + Where + ")";
        auto Drop = [M, B, K](json::Value &V) {
          dropInst(V, M, B, K);
          return true;
        };
        if (Type == "CoreBarrier") {
          Out.push_back({Kind::DropBarrier, "drop barrier " + At, Drop, ""});
          Barriers.push_back({B, K, num(I, "id"), Name});
        } else if (Type == "TensorCompletion") {
          Mutant Mu{Kind::DropCompletion, "drop completion " + At, Drop, ""};
          if (ordersNothing(Idx.Insts[M][B], K,
                            obj(Blocks[B]).getArray("successors") == nullptr ||
                                obj(Blocks[B]).getArray("successors")->empty())) {
            Mu.Structural = "nothing depends on the completion and nothing "
                            "follows it on its engine, so it orders no access";
            Mu.Proven = true;
          }
          Out.push_back(std::move(Mu));
        } else if (Type == "SemaphoreWait") {
          // Alone (the verifier then finds signals that nothing waits for)
          // and together with every signal of its semaphore, which leaves a
          // well-formed program without that synchronization.
          Out.push_back(
              {Kind::DropSemaphoreWait, "drop semaphore wait " + At, Drop, ""});
          std::string Sem = str(I, "semaphore");
          Out.push_back(
              {Kind::DropSemaphoreWait,
               "drop semaphore wait " + At + " and the signals of '" + Sem +
                   "'",
               [M, B, K, Sem, Core, Subgraph](json::Value &V) {
                 dropInst(V, M, B, K);
                 // Other waits on the semaphore keep their signals.
                 for (json::Value &BV : arr(obj(modulesOf(V)[M]), "blocks"))
                   for (json::Value &IV : arr(obj(BV), "instructions"))
                     if (str(obj(IV), "type") == "SemaphoreWait" &&
                         str(obj(IV), "semaphore") == Sem)
                       return false;
                 for (json::Value &MV : modulesOf(V)) {
                   if (num(obj(MV), "subgraph_id") != Subgraph)
                     continue;
                   for (json::Value &BV : arr(obj(MV), "blocks"))
                     for (json::Value &IV : arr(obj(BV), "instructions")) {
                       json::Object *Sig = obj(IV).getObject("signal");
                       if (Sig && num(*Sig, "core") == Core &&
                           str(*Sig, "semaphore") == Sem)
                         obj(IV).erase("signal");
                     }
                 }
                 return true;
               },
               ""});
        }
        // Dependencies.
        json::Array &Deps = arr(I, "deps");
        for (size_t D = 0; D < Deps.size(); ++D) {
          std::string Dep = Deps[D].getAsString()->str();
          Mutant Mu{Kind::RemoveDependency,
                    "remove dependency " + At + " -> '" + Dep + "'",
                    [M, B, K, D](json::Value &V) {
                      json::Array &Ds = arr(instAt(V, M, B, K), "deps");
                      eraseAt(Ds, D);
                      return true;
                    },
                    ""};
          const Instruction *User = Idx.Insts[M][B][K];
          const Instruction *DepI = nullptr;
          for (const Instruction *X : User->dependencies())
            if (X->getName() == Dep)
              DepI = X;
          if (DepI &&
              reachesInBlock(Idx.Insts[M][B], DepI, User, User, DepI))
          {
            Mu.Structural = "implied through other dependencies and engine "
                            "order in the block";
            Mu.Proven = true;
          }
          Out.push_back(std::move(Mu));
        }
        // Copies: wrong core, wrong slice.
        if (Type != "DMACopy" && Type != "GPSIMDSB2SB")
          continue;
        for (const char *Side : {"inputs", "outputs"}) {
          json::Array &Ops = arr(I, Side);
          bool Written = llvm::StringRef(Side) == "outputs";
          for (size_t O = 0; O < Ops.size(); ++O) {
            json::Object &AP = obj(Ops[O]);
            std::string Loc = str(AP, "memloc");
            json::Object *L = findLoc(Mod, Loc);
            if (!L)
              continue;
            std::string OpName = std::string(Written ? "output " : "input ") +
                                 std::to_string(O) + " ('" + Loc + "')";
            // Wrong core.
            std::string Target = Loc;
            int64_t Current = Core;
            if (json::Object *R = L->getObject("remote")) {
              Target = str(*R, "memloc");
              Current = num(*R, "core");
            } else if (str(*L, "kind") == "SharedDRAM") {
              Current = -1;
            }
            if (Current >= 0)
              for (int64_t C = 0; C < Lnc; ++C) {
                if (C == Current)
                  continue;
                Out.push_back(
                    {Kind::WrongCore,
                     "point " + OpName + " of " + At + " at core " +
                         std::to_string(C),
                     [M, B, K, Side, O, Target, C, Written](json::Value &V) {
                       json::Object &Mod = obj(modulesOf(V)[M]);
                       std::string N =
                           locationOnCore(V, Mod, Target, C, Written);
                       if (N.empty())
                         return false;
                       obj(arr(instAt(V, M, B, K), Side)[O])["memloc"] = N;
                       return true;
                     },
                     ""});
              }
            // Wrong slice: the neighbouring slice of the same shape, along
            // the bytes and along the partitions.
            unsigned Size = dtypeSize(str(*L, "dtype"));
            int64_t Bpp = num(*L, "bytes_per_partition");
            int64_t Parts = num(*L, "partitions");
            int64_t Off = num(AP, "offset");
            int64_t P0 = num(AP, "start_partition");
            int64_t NP = num(AP, "partitions");
            auto [Lo, Hi] = patternBounds(*AP.getArray("pattern"));
            int64_t Begin = Off + Lo * Size, Span = (Hi - Lo + 1) * Size;
            int64_t NewOff = Begin + 2 * Span <= Bpp ? Off + Span
                             : Begin - Span >= 0     ? Off - Span
                                                     : -1;
            if (NewOff >= 0)
              Out.push_back({Kind::WrongSlice,
                             "shift " + OpName + " of " + At + " to offset " +
                                 std::to_string(NewOff),
                             [M, B, K, Side, O, NewOff](json::Value &V) {
                               obj(arr(instAt(V, M, B, K), Side)[O])["offset"] =
                                   NewOff;
                               return true;
                             },
                             ""});
            int64_t NewP0 = P0 + 2 * NP <= Parts ? P0 + NP
                            : P0 - NP >= 0       ? P0 - NP
                                                 : -1;
            if (NewP0 >= 0)
              Out.push_back(
                  {Kind::WrongSlice,
                   "shift " + OpName + " of " + At + " to partition " +
                       std::to_string(NewP0),
                   [M, B, K, Side, O, NewP0](json::Value &V) {
                     obj(arr(instAt(V, M, B, K), Side)[O])["start_partition"] =
                         NewP0;
                     return true;
                   },
                   ""});
          }
        }
      }
      // Reorder two consecutive instructions of one engine in this block.
      std::map<std::string, size_t> LastOnEngine;
      for (size_t K = 0; K < Insts.size(); ++K) {
        json::Object &I = obj(Insts[K]);
        if (str(I, "type") == "Branch")
          continue;
        std::string E = str(I, "engine");
        auto It = LastOnEngine.find(E);
        if (It != LastOnEngine.end()) {
          size_t K0 = It->second;
          std::string N0 = str(obj(Insts[K0]), "name"), N1 = str(I, "name");
          Mutant Mu{Kind::Reorder,
                    "swap '" + N0 + "' and '" + N1 + "' on " + E + " (" +
                        Where + ")",
                    [M, B, K0, K](json::Value &V) {
                      json::Object &Mod = obj(modulesOf(V)[M]);
                      json::Array &Is =
                          arr(obj(arr(Mod, "blocks")[B]), "instructions");
                      std::swap(Is[K0], Is[K]);
                      return true;
                    },
                    ""};
          const Instruction *A = Idx.Insts[M][B][K0];
          const Instruction *C = Idx.Insts[M][B][K];
          bool Linked = llvm::is_contained(C->dependencies(), A) ||
                        llvm::is_contained(A->dependencies(), C);
          if (!Linked && !conflict(A, C, unsigned(Core)))
            Mu.Structural = "the two instructions touch no common byte that "
                            "either writes, and neither depends on the other";
          Out.push_back(std::move(Mu));
        }
        LastOnEngine[E] = K;
      }
    }
    // Swap the ids of two barriers on this core only.
    for (size_t X = 0; X < Barriers.size(); ++X)
      for (size_t Y = X + 1; Y < Barriers.size(); ++Y) {
        auto [B0, K0, Id0, N0] = Barriers[X];
        auto [B1, K1, Id1, N1] = Barriers[Y];
        if (Id0 == Id1)
          continue;
        Out.push_back({Kind::SwapBarrierIds,
                       "swap the ids of barriers '" + N0 + "' and '" + N1 +
                           "' on " + Where,
                       [M, B0 = B0, K0 = K0, B1 = B1, K1 = K1, Id0 = Id0,
                        Id1 = Id1](json::Value &V) {
                         instAt(V, M, B0, K0)["id"] = Id1;
                         instAt(V, M, B1, K1)["id"] = Id0;
                         return true;
                       },
                       ""});
      }
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// The test
//===----------------------------------------------------------------------===//

struct Tally {
  unsigned Mutants = 0, Caught = 0, Survived = 0;
  std::map<std::string, unsigned> By; // category -> count
};

/// Mutates the lowering of every input whose label Select accepts.
void runMutationTest(std::function<bool(const std::string &)> Select) {
  const std::string Root = sourceRoot();
  std::vector<std::string> Files =
      jsonFiles(Root + "/test/bir/lower/Inputs");
  for (const std::string &F : jsonFiles(Root + "/examples/bir"))
    Files.push_back(F);
  ASSERT_FALSE(Files.empty()) << "no inputs under " << Root;

  llvm::raw_ostream &OS = llvm::outs();
  std::array<Tally, NumKinds> ByKind;
  std::vector<std::string> Survivors, Missed, Notes;
  unsigned Programs = 0;
  std::set<std::string> SeenLowered;

  for (const std::string &File : Files) {
    auto Buf = llvm::MemoryBuffer::getFile(File);
    if (!Buf) {
      Notes.push_back(File + ": unreadable");
      continue;
    }
    llvm::StringRef Stem = llvm::sys::path::stem(File);
    std::string Short =
        llvm::sys::path::filename(llvm::sys::path::parent_path(
                                      llvm::sys::path::parent_path(File)))
            .str() +
        "/" + llvm::sys::path::filename(File).str();
    const auto &Instances = instancesOf(Stem);
    for (size_t Inst = 0; Inst < Instances.size(); ++Inst) {
      std::string Text = substitute((*Buf)->getBuffer().str(), Instances[Inst]);
      std::string Label = Short + (Instances.size() > 1
                                       ? "#" + std::to_string(Inst + 1)
                                       : std::string());
      if (!Select(Label))
        continue;
      if (const char *Only = std::getenv("LOOM_MUTATION_ONLY"))
        if (Label.find(Only) == std::string::npos)
          continue;
      if (hasPlaceholder(Text)) {
        Notes.push_back(Label + ": skipped, has placeholders this test does "
                                "not know");
        continue;
      }
      auto Original = parseProgram(Text, Label);
      if (!Original) {
        Notes.push_back(Label + ": skipped, does not load: " +
                        firstLine(llvm::toString(Original.takeError())));
        continue;
      }
      if (llvm::Error E = splitIfNeeded(*Original)) {
        Notes.push_back(Label + ": skipped, does not split: " +
                        firstLine(llvm::toString(std::move(E))));
        continue;
      }
      for (const Pipeline &Pl : pipelines()) {
        auto Lowered = parseProgram(Text, Label);
        ASSERT_TRUE(bool(Lowered)) << llvm::toString(Lowered.takeError());
        std::string Why;
        for (const char *PassName : Pl.Passes) {
          auto Pass = createPass(PassName, Pl.Opts);
          if (!Pass) {
            Why = llvm::toString(Pass.takeError());
            break;
          }
          auto Changed = (*Pass)->run(*Lowered);
          if (!Changed) {
            Why = llvm::toString(Changed.takeError());
            break;
          }
        }
        if (Why.empty())
          if (llvm::Error E = verifyProgram(*Lowered))
            Why = "the lowered program does not verify: " +
                  llvm::toString(std::move(E));
        std::string Case = Label + " [" + Pl.Name + "]";
        if (!Why.empty()) {
          Notes.push_back(Case + ": skipped, lowering fails: " +
                          firstLine(Why));
          continue;
        }
        std::string LoweredText = formatProgram(*Lowered);
        if (!SeenLowered.insert(LoweredText).second)
          continue; // the same lowering as an earlier pipeline
        Verdict Base = check(*Original, *Lowered, 0, 20, Case);
        if (Base.Failed) {
          Notes.push_back(Case + ": skipped, the unmutated lowering fails (" +
                          Base.Category + "): " + firstLine(Base.Message));
          continue;
        }
        ++Programs;
        // The reference states for the seeds the mutants run with.
        const uint64_t Seeds[] = {0, 1, 2};
        std::set<std::string> Keys = observableKeys(*Original);
        std::vector<Reference> Refs;
        for (uint64_t Seed : Seeds) {
          auto R = simulate(*Lowered, simOptions(Seed, 0, Case));
          ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
          Reference Ref;
          for (LocationState &L : R->Final)
            if (Keys.count(stateKey(L)))
              Ref.Final.emplace(stateKey(L), std::move(L));
          Refs.push_back(std::move(Ref));
        }
        auto LoweredJson = json::parse(LoweredText);
        ASSERT_TRUE(bool(LoweredJson));
        std::vector<Mutant> Mutants = enumerate(*LoweredJson, *Lowered);
        for (Mutant &Mu : Mutants) {
          json::Value V = *LoweredJson;
          if (!Mu.Apply(V))
            continue;
          Tally &T = ByKind[unsigned(Mu.K)];
          ++T.Mutants;
          std::string MText;
          llvm::raw_string_ostream MOS(MText);
          MOS << V;
          MOS.flush();
          std::string Name = Case + ": " + Mu.What;
          auto MP = parseProgram(MText, Name);
          Verdict Vd;
          if (!MP) {
            Vd.Failed = true;
            Vd.Category = "verifier";
            Vd.Message = llvm::toString(MP.takeError());
          } else {
            // The deterministic schedule first (most faults show there),
            // then 20 random schedules.
            Vd = runMutant(*Original, *MP, Refs[0], 0, 0, Name);
            if (!Vd.Failed && !Mu.Proven)
              Vd = runMutant(*Original, *MP, Refs[0], 0, 20, Name);
          }
          if (std::getenv("LOOM_MUTATION_VERBOSE"))
            OS << (Vd.Failed ? "  caught (" + Vd.Category + "): " + Name +
                                   ": " + firstLine(Vd.Message)
                             : "  survives: " + Name)
               << "\n";
          if (Vd.Failed) {
            ++T.Caught;
            ++T.By[Vd.Category];
            continue;
          }
          // A survivor: prove it harmless on other inputs and schedules.
          ++T.Survived;
          Verdict Again;
          uint64_t BadSeed = 0;
          for (size_t S = 1; S < std::size(Seeds) && !Again.Failed &&
                             !Mu.Proven;
               ++S) {
            Again = runMutant(*Original, *MP, Refs[S], Seeds[S], 4, Name);
            BadSeed = Seeds[S];
          }
          if (Again.Failed) {
            Missed.push_back(Name + ": survives seed 0 but fails seed " +
                             std::to_string(BadSeed) + " (" + Again.Category +
                             "): " + firstLine(Again.Message));
            continue;
          }
          if (Mu.Proven)
            Survivors.push_back(Name + ": harmless: " + Mu.Structural +
                                " (and the same observable state, race- and "
                                "deadlock-free)");
          else
            Survivors.push_back(
                Name + ": harmless: " +
                (Mu.Structural.empty() ? std::string()
                                       : Mu.Structural + "; ") +
                "the same observable state as the unlowered program, race- "
                "and deadlock-free, for seed 0 under 20 schedules and seeds "
                "1-2 under 4");
        }
      }
    }
  }

  unsigned Total = 0, Caught = 0;
  OS << "mutation test: " << Programs << " lowered programs\n";
  for (unsigned K = 0; K < NumKinds; ++K) {
    const Tally &T = ByKind[K];
    Total += T.Mutants;
    Caught += T.Caught;
    OS << "  " << llvm::left_justify(kindName(Kind(K)), 24)
       << llvm::format_decimal(T.Mutants, 5) << " mutants"
       << llvm::format_decimal(T.Caught, 5) << " caught"
       << llvm::format_decimal(T.Survived, 5) << " survive";
    std::string Cats;
    for (const auto &[C, N] : T.By)
      Cats += (Cats.empty() ? "" : ", ") + C + " " + std::to_string(N);
    if (!Cats.empty())
      OS << "  (" << Cats << ")";
    OS << "\n";
  }
  OS << "  caught " << Caught << " of " << Total << " mutants ("
     << llvm::format("%.1f", Total ? 100.0 * Caught / Total : 0.0) << "%)\n";
  for (const std::string &S : Survivors)
    OS << "  survivor: " << S << "\n";
  for (const std::string &S : Missed)
    OS << "  MISSED: " << S << "\n";
  for (const std::string &N : Notes)
    OS << "  note: " << N << "\n";
  OS.flush();

  EXPECT_GT(Programs, 0u) << "no lowered program to mutate";
  // Every kind of fault was tried on something.
  for (unsigned K = 0; K < NumKinds; ++K)
    EXPECT_GT(ByKind[K].Mutants, 0u) << kindName(Kind(K));
  EXPECT_TRUE(Missed.empty()) << Missed.size() << " harmful mutants survived";
}

/// A representative part of the corpus, small enough for the unit tests:
/// the SendRecv example (barriers, semaphores, completions) and the
/// lowerings of AllReduce out of place and in place and of swaps over four
/// cores, through all three pipelines.
TEST(MutationTest, RepresentativeLowerings) {
  static const std::set<std::string> Quick = {
      "examples/sendrecv_swap.json", "lower/allreduce.json#1",
      "lower/allreduce-inplace.json", "lower/swap-lnc4-pairs.json"};
  runMutationTest([](const std::string &L) { return Quick.count(L) != 0; });
}

/// Every lowering test input and example (docs/race-detection.md gives the
/// figures): run with --gtest_also_run_disabled_tests.
TEST(MutationTest, DISABLED_AllLowerings) {
  runMutationTest([](const std::string &) { return true; });
}

} // namespace
