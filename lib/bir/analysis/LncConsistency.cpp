//===- LncConsistency.cpp - Do the cores of a split program agree? --------===//
//
// The checks, per subgraph (docs/lnc-verifier.md):
//
//  1. Meeting points. A core's *meeting points with peer c* in a block are
//     its CoreBarriers that list c and its local collectives whose group
//     holds c, in program order. For every pair of cores that meet anywhere,
//     both must have the same control flow (block names, successors, branch
//     kinds, trip counts), and in every block the two lists must be equal
//     element by element: the same opcode and name, and for a barrier the
//     same id and set of cores, for a collective the same kind, group (in
//     rank order), reduce op, data types and shapes. Comparing per block, over all blocks, covers
//     every path through the CFG, loops included.
//  2. Every wait (C, I) of a TensorCompletion names a module of core C and
//     an instruction I of it that lies in a block reachable from C's entry.
//  3. Every remote location names an existing local location of its core,
//     of the same kind, type and size (the IR verifier's rule, shared).
//  4. A barrier or local collective lists only cores that have a module.
//
// The lower core of a pair is the reference: a mismatch is reported at the
// higher core's instruction ("expected ... as on core 0"), except that an
// instruction already reported as wrong is not used as the reference again,
// so one renamed barrier on core 1 of four cores gives one line, not three.
// At two different names the point whose partner comes later on the other
// side is reported as unmatched and skipped, otherwise both are skipped as a
// substitution, so the rest of the block still lines up.
//
// Cost: linear in the program for the scans; the pairwise comparison looks
// at each meeting point of a core once per other core that core meets, and
// at each block once per such pair.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/analysis/LncConsistency.h"

#include "loom/bir/analysis/BlockDifference.h"

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Verifier.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace loom::bir::analysis {

namespace {

std::string listCores(llvm::ArrayRef<unsigned> Cores) {
  std::string S = "[";
  for (size_t K = 0; K < Cores.size(); ++K)
    S += (K ? "," : "") + std::to_string(Cores[K]);
  return S + "]";
}

/// "fp32 128 x (4,64)": what the members of a collective must agree on
/// about an operand, as lower_local_collectives compares them.
std::string describeShape(const AccessPattern &AP) {
  std::string S = enumName(AP.getType()).str() + " " +
                  std::to_string(AP.getNumPartitions()) + " x (";
  for (size_t K = 0; K < AP.getPattern().size(); ++K)
    S += (K ? "," : "") + std::to_string(AP.getPattern()[K].Count);
  return S + ")";
}

std::string ordinal(size_t N) {
  size_t Mod100 = N % 100;
  const char *Suffix = "th";
  if (Mod100 < 11 || Mod100 > 13) {
    if (N % 10 == 1)
      Suffix = "st";
    else if (N % 10 == 2)
      Suffix = "nd";
    else if (N % 10 == 3)
      Suffix = "rd";
  }
  return std::to_string(N) + Suffix;
}

/// A CoreBarrier, or a local collective: where cores meet.
bool isMeetingPoint(const Instruction &I) {
  if (llvm::isa<InstCoreBarrier>(I))
    return true;
  const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(&I);
  return CC && CC->isLocal();
}

llvm::ArrayRef<unsigned> meetingCores(const Instruction &I) {
  if (const auto *CB = llvm::dyn_cast<InstCoreBarrier>(&I))
    return CB->getCores();
  return llvm::cast<InstCollectiveCompute>(I).getGroup();
}

llvm::StringRef meetingKind(const Instruction &I) {
  return llvm::isa<InstCoreBarrier>(I) ? "core barrier" : "collective";
}

/// The attributes in which two copies of one meeting point differ, e.g.
/// "id 3 (core 0's: 0)"; empty when they agree.
std::vector<std::string> attributeDifferences(const Instruction &Ref,
                                              const Instruction &I,
                                              unsigned RefCore) {
  std::vector<std::string> D;
  std::string On = "core " + std::to_string(RefCore) + "'s: ";
  if (const auto *B = llvm::dyn_cast<InstCoreBarrier>(&I)) {
    const auto &R = llvm::cast<InstCoreBarrier>(Ref);
    if (B->getId() != R.getId())
      D.push_back("id " + std::to_string(B->getId()) + " (" + On +
                  std::to_string(R.getId()) + ")");
    // A barrier's cores are a set (docs/bir.md, CoreBarrier), unlike a
    // collective's group, whose order is the rank order.
    std::vector<unsigned> X(B->getCores().begin(), B->getCores().end()),
        Y(R.getCores().begin(), R.getCores().end());
    llvm::sort(X);
    llvm::sort(Y);
    if (X != Y)
      D.push_back("cores " + listCores(B->getCores()) + " (" + On +
                  listCores(R.getCores()) + ")");
    return D;
  }
  const auto &C = llvm::cast<InstCollectiveCompute>(I);
  const auto &R = llvm::cast<InstCollectiveCompute>(Ref);
  if (C.getKind() != R.getKind())
    D.push_back("kind " + enumName(C.getKind()).str() + " (" + On +
                enumName(R.getKind()).str() + ")");
  if (C.getGroup() != R.getGroup())
    D.push_back("group " + listCores(C.getGroup()) + " (" + On +
                listCores(R.getGroup()) + ")");
  if (C.getReduceOp() != R.getReduceOp())
    D.push_back("reduce " + enumName(C.getReduceOp()).str() + " (" + On +
                enumName(R.getReduceOp()).str() + ")");
  auto Operands = [&](llvm::StringRef What, llvm::ArrayRef<AccessPattern> X,
                      llvm::ArrayRef<AccessPattern> Y) {
    for (size_t K = 0; K < X.size() && K < Y.size(); ++K) {
      std::string SX = describeShape(X[K]), SY = describeShape(Y[K]);
      if (SX != SY)
        D.push_back(What.str() + " " + SX + " (" + On + SY + ")");
    }
  };
  Operands("input", C.inputs(), R.inputs());
  Operands("output", C.outputs(), R.outputs());
  return D;
}

class Checker {
public:
  explicit Checker(const Program &P) : P(P) {}
  LncFindings run();

private:
  /// The modules of one subgraph (Program::subgraphs), and their meeting
  /// points per block.
  struct SubgraphState {
    explicit SubgraphState(const Subgraph &G) : G(G) {}
    /// Core C's module, or null when the subgraph has none for it.
    const Module *core(unsigned C) const { return G.getModule(C); }
    const Subgraph &G;
    llvm::DenseMap<const Module *, std::vector<std::vector<const Instruction *>>>
        Meetings;
    /// The collectives already warned about, by name.
    llvm::StringSet<> Warned;
  };

  std::string where(const Module &M) const;
  std::string where(const Module &M, const BasicBlock &BB,
                    const Instruction *I = nullptr) const;
  void problem(const std::string &Where, const llvm::Twine &What) {
    Findings.Problems.push_back(Where + ": " + What.str());
  }

  void checkSubgraph(SubgraphState &S);
  void scanModule(SubgraphState &S, const Module &M);
  void checkRemoteLocations(const SubgraphState &S, const Module &M);
  void checkCompletion(const SubgraphState &S, const Module &M,
                       const BasicBlock &BB, const InstTensorCompletion &TC);
  void comparePair(const SubgraphState &S, unsigned A, unsigned C);
  void compareBlock(const Module &MA, const Module &MC, unsigned B,
                    llvm::ArrayRef<const Instruction *> SeqA,
                    llvm::ArrayRef<const Instruction *> SeqC);
  const Instruction *findInstruction(const Module &M, llvm::StringRef Name);
  bool isReachable(const Module &M, const BasicBlock &BB);

  const Program &P;
  LncFindings Findings;
  /// Instructions already reported as wrong: not a reference any more.
  llvm::DenseSet<const Instruction *> Reported;
  /// Pairs of cores (lower first) that meet somewhere in the subgraph.
  std::set<std::pair<unsigned, unsigned>> Pairs;
  llvm::DenseMap<const Module *, llvm::StringMap<const Instruction *>> Names;
  llvm::DenseMap<const Module *, llvm::DenseSet<const BasicBlock *>> Reachable;
};

std::string Checker::where(const Module &M) const {
  return "module '" + M.getName().str() + "', subgraph " +
         std::to_string(M.getSubgraphId()) + ", core " +
         std::to_string(M.getNeuronCoreId());
}

std::string Checker::where(const Module &M, const BasicBlock &BB,
                           const Instruction *I) const {
  std::string S = where(M) + ", block '" + BB.getName().str() + "'";
  if (I)
    S += ", instruction '" + I->getName().str() + "'";
  return S;
}

const Instruction *Checker::findInstruction(const Module &M,
                                            llvm::StringRef Name) {
  auto [It, New] = Names.try_emplace(&M);
  if (New)
    for (const auto &BB : M.blocks())
      for (const auto &I : *BB)
        It->second.try_emplace(I->getName(), I.get());
  return It->second.lookup(Name);
}

bool Checker::isReachable(const Module &M, const BasicBlock &BB) {
  auto [It, New] = Reachable.try_emplace(&M);
  if (New && M.getNumBlocks()) {
    std::vector<const BasicBlock *> Work{M.getBlock(0)};
    It->second.insert(M.getBlock(0));
    while (!Work.empty()) {
      const BasicBlock *X = Work.back();
      Work.pop_back();
      for (const BasicBlock *Succ : X->successors())
        if (It->second.insert(Succ).second)
          Work.push_back(Succ);
    }
  }
  return It->second.count(&BB);
}

LncFindings Checker::run() {
  for (const Subgraph &G : P.subgraphs()) {
    SubgraphState S(G);
    checkSubgraph(S);
  }
  return std::move(Findings);
}

void Checker::checkSubgraph(SubgraphState &S) {
  const Module &First = *S.G.modules().front();
  unsigned Lnc = First.getTargetOptions().LncSize;
  // Before lnc_splitter there is nothing to compare; every barrier would
  // name cores without a module.
  // Only core 0 has a module when the slots by core end there.
  if (Lnc > 1 && S.G.byCore().size() == 1) {
    problem(where(First), "the subgraph is not split: it has only core 0's "
                          "module of lnc_size " +
                              llvm::Twine(Lnc) +
                              " (run lnc_splitter first)");
    return;
  }
  Pairs.clear();
  for (const Module *M : S.G.byCore()) {
    if (!M)
      continue;
    checkRemoteLocations(S, *M);
    scanModule(S, *M);
  }
  for (const auto &[A, C] : Pairs)
    comparePair(S, A, C);
}

void Checker::checkRemoteLocations(const SubgraphState &S, const Module &M) {
  for (const auto &L : M.getMemoryLocations().locations()) {
    if (!L->isRemote())
      continue;
    unsigned Core = L->getRemote()->Core;
    auto At = [&] {
      return where(M) + ", memory location '" + L->getName().str() + "'";
    };
    if (Core == M.getNeuronCoreId()) {
      problem(At(), "a remote location names its own core " +
                        llvm::Twine(Core));
      continue;
    }
    if (llvm::Error E = verifyRemoteTarget(*L, S.core(Core)))
      problem(At(), llvm::toString(std::move(E)));
  }
}

void Checker::checkCompletion(const SubgraphState &S, const Module &M,
                              const BasicBlock &BB,
                              const InstTensorCompletion &TC) {
  for (const CompletionWait &W : TC.getWaits()) {
    auto Wait = [&] {
      return "waits for '" + W.Instruction + "' on core " +
             std::to_string(W.Core);
    };
    const Module *Peer = S.core(W.Core);
    if (!Peer) {
      problem(where(M, BB, &TC),
              Wait() + ", which has no module in this subgraph");
      continue;
    }
    const Instruction *Target = findInstruction(*Peer, W.Instruction);
    if (!Target) {
      problem(where(M, BB, &TC), Wait() + ", which has no instruction of "
                                          "that name: the completion would "
                                          "never finish");
      continue;
    }
    // Control flow never depends on data, so an instruction in a block
    // unreachable from the entry never runs, and a wait for it is never met
    // (docs/bir.md, TensorCompletion).
    if (!isReachable(*Peer, *Target->getBasicBlock()))
      problem(where(M, BB, &TC),
              Wait() + ", which lies in block '" +
                  Target->getBasicBlock()->getName() +
                  "', unreachable from that core's entry: it never runs and "
                  "the completion would never finish");
  }
}

void Checker::scanModule(SubgraphState &S, const Module &M) {
  unsigned Self = M.getNeuronCoreId();
  unsigned Lnc = M.getTargetOptions().LncSize;
  auto &PerBlock = S.Meetings[&M];
  PerBlock.resize(M.getNumBlocks());
  for (unsigned B = 0; B < M.getNumBlocks(); ++B) {
    const BasicBlock &BB = *M.getBlock(B);
    for (const auto &Ptr : BB) {
      const Instruction &I = *Ptr;
      if (const auto *TC = llvm::dyn_cast<InstTensorCompletion>(&I)) {
        checkCompletion(S, M, BB, *TC);
        continue;
      }
      // A non-local collective whose group could be a group of this
      // logical core is ambiguous: `local` defaults to false, so a local
      // collective left unmarked looks exactly like this. A group naming an
      // id at or above lnc_size lists devices or ranks of a wider job, as a
      // launch document's do, and says so itself. One warning per
      // instruction, at its first core's copy.
      if (const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(&I);
          CC && !CC->isLocal() && Lnc > 1 &&
          llvm::is_contained(CC->getGroup(), Self) &&
          llvm::all_of(CC->getGroup(), [&](unsigned C) { return C < Lnc; }) &&
          S.Warned.insert(I.getName()).second)
        Findings.Warnings.push_back(
            where(M, BB, &I) + ": CollectiveCompute (" +
            enumName(CC->getKind()).str() + ", group " +
            listCores(CC->getGroup()) +
            ") is not marked local, though every id of its group is a core "
            "of this logical core: lower_local_collectives leaves it "
            "unlowered and unfenced, and no check covers its peers (mark it "
            "local if it is)");
      if (!isMeetingPoint(I))
        continue;
      PerBlock[B].push_back(&I);
      std::vector<unsigned> Missing;
      for (unsigned C : meetingCores(I)) {
        if (C == Self)
          continue;
        if (!S.core(C)) {
          Missing.push_back(C);
          continue;
        }
        Pairs.insert({std::min(Self, C), std::max(Self, C)});
      }
      if (!Missing.empty()) {
        problem(where(M, BB, &I),
                meetingKind(I) + " over " + listCores(meetingCores(I)) +
                    " names core(s) " + listCores(Missing) +
                    ", which have no module in this subgraph");
        Reported.insert(&I);
      }
    }
  }
}

void Checker::comparePair(const SubgraphState &S, unsigned A, unsigned C) {
  const Module &MA = *S.core(A), &MC = *S.core(C);
  if (MA.getNumBlocks() != MC.getNumBlocks()) {
    problem(where(MC), "has " + llvm::Twine(MC.getNumBlocks()) +
                           " blocks, core " + llvm::Twine(A) + " has " +
                           llvm::Twine(MA.getNumBlocks()) +
                           "; the cores meet, so their control flow must "
                           "agree");
    return;
  }
  for (unsigned B = 0; B < MA.getNumBlocks(); ++B)
    if (std::optional<std::string> D =
            describeBlockDifference(*MC.getBlock(B), *MA.getBlock(B))) {
      problem(where(MC, *MC.getBlock(B)),
              *D + " (core " + llvm::Twine(A) + "'s block " + llvm::Twine(B) +
                  " '" + MA.getBlock(B)->getName() +
                  "'); the cores meet, so their control flow must agree");
      return;
    }
  const auto &BlocksA = S.Meetings.find(&MA)->second;
  const auto &BlocksC = S.Meetings.find(&MC)->second;
  std::vector<const Instruction *> SeqA, SeqC;
  for (unsigned B = 0; B < MA.getNumBlocks(); ++B) {
    SeqA.clear();
    SeqC.clear();
    for (const Instruction *I : BlocksA[B])
      if (llvm::is_contained(meetingCores(*I), C))
        SeqA.push_back(I);
    for (const Instruction *I : BlocksC[B])
      if (llvm::is_contained(meetingCores(*I), A))
        SeqC.push_back(I);
    compareBlock(MA, MC, B, SeqA, SeqC);
  }
}

void Checker::compareBlock(const Module &MA, const Module &MC, unsigned B,
                           llvm::ArrayRef<const Instruction *> SeqA,
                           llvm::ArrayRef<const Instruction *> SeqC) {
  unsigned A = MA.getNeuronCoreId(), C = MC.getNeuronCoreId();
  const BasicBlock &BA = *MA.getBlock(B), &BC = *MC.getBlock(B);
  // The position of every name in each list, built at the first
  // misalignment (names are unique in a module).
  llvm::StringMap<size_t> PosA, PosC;
  auto Later = [](llvm::StringMap<size_t> &Pos,
                  llvm::ArrayRef<const Instruction *> Seq,
                  llvm::StringRef Name, size_t After) {
    if (Pos.empty())
      for (size_t K = 0; K < Seq.size(); ++K)
        Pos.try_emplace(Seq[K]->getName(), K);
    auto It = Pos.find(Name);
    return It != Pos.end() && It->second > After;
  };
  // Where core Other has the instruction named Name instead, for a message.
  auto Elsewhere = [&](const Module &Other, llvm::StringRef Name) {
    const Instruction *I = findInstruction(Other, Name);
    if (!I)
      return "core " + std::to_string(Other.getNeuronCoreId()) +
             " has no instruction '" + Name.str() + "'";
    if (!isMeetingPoint(*I))
      return "core " + std::to_string(Other.getNeuronCoreId()) + "'s '" +
             Name.str() + "' is a " +
             getInstructionTypeName(I->getType()).str() +
             (llvm::isa<InstCollectiveCompute>(I) ? " not marked local" : "");
    if (I->getBasicBlock()->getName() != BA.getName())
      return "core " + std::to_string(Other.getNeuronCoreId()) + " has it in block '" +
             I->getBasicBlock()->getName().str() + "'";
    return "core " + std::to_string(Other.getNeuronCoreId()) +
           "'s copy does not list core " +
           std::to_string(&Other == &MA ? C : A);
  };
  auto Describe = [](const Instruction &I) {
    std::string S = meetingKind(I).str() + " '" + I.getName().str() + "' (";
    if (const auto *CB = llvm::dyn_cast<InstCoreBarrier>(&I))
      S += "id " + std::to_string(CB->getId()) + ", cores " +
           listCores(CB->getCores());
    else
      S += enumName(llvm::cast<InstCollectiveCompute>(I).getKind()).str() +
           ", group " + listCores(meetingCores(I));
    return S + ")";
  };
  auto Position = [&](size_t K) {
    return "the " + ordinal(K + 1) + " meeting point of cores " +
           std::to_string(A) + " and " + std::to_string(C) + " in this block";
  };
  auto Unmatched = [&](const Module &M, const BasicBlock &BB,
                       const Instruction &I, const Module &Other,
                       const std::string &Instead) {
    if (!Reported.insert(&I).second)
      return;
    problem(where(M, BB, &I), Describe(I) + " has no counterpart on core " +
                                  llvm::Twine(Other.getNeuronCoreId()) + Instead +
                                  "; " + Elsewhere(Other, I.getName()));
  };
  // Walk both lists together. A point present on one side only (its
  // partner's name comes later on the other side) is reported and skipped,
  // so that the rest of the block still lines up; two different points at
  // the same position are a substitution (a renamed barrier).
  size_t I = 0, J = 0;
  while (I < SeqA.size() && J < SeqC.size()) {
    const Instruction &X = *SeqA[I], &Y = *SeqC[J];
    if (X.getType() == Y.getType() && X.getName() == Y.getName()) {
      ++I, ++J;
      if (Reported.count(&X) || Reported.count(&Y))
        continue;
      std::vector<std::string> D = attributeDifferences(X, Y, A);
      if (D.empty())
        continue;
      std::string Msg = meetingKind(Y).str() + " '" + Y.getName().str() +
                        "' differs from its copy on core " +
                        std::to_string(A) + ": ";
      for (size_t K = 0; K < D.size(); ++K)
        Msg += (K ? ", " : "") + D[K];
      problem(where(MC, BC, &Y), Msg);
      Reported.insert(&Y);
      continue;
    }
    if (Later(PosA, SeqA, Y.getName(), I)) {
      Unmatched(MA, BA, X, MC,
                ", where " + Position(J) + " is '" + Y.getName().str() + "'");
      ++I;
      continue;
    }
    if (Later(PosC, SeqC, X.getName(), J)) {
      Unmatched(MC, BC, Y, MA,
                ", where " + Position(I) + " is '" + X.getName().str() + "'");
      ++J;
      continue;
    }
    // As neuronx-cc's NCC_IXLV002: "Expected core barriers to have name
    // ..., but core barrier ... on core 1 has ...". A reference already
    // reported as wrong on its own is not held against its peer.
    if (!Reported.count(&X) && Reported.insert(&Y).second)
      problem(where(MC, BC, &Y),
              "expected " + Describe(X) + " as on core " + llvm::Twine(A) +
                  " at " + Position(J) + ", but core " + llvm::Twine(C) +
                  " has " + Describe(Y));
    ++I, ++J;
  }
  // Whatever one list has beyond the other's end has no counterpart.
  for (; I < SeqA.size(); ++I)
    Unmatched(MA, BA, *SeqA[I], MC,
              ", which meets core " + std::to_string(A) + " only " +
                  std::to_string(J) + " time(s) in this block");
  for (; J < SeqC.size(); ++J)
    Unmatched(MC, BC, *SeqC[J], MA,
              ", which meets core " + std::to_string(C) + " only " +
                  std::to_string(I) + " time(s) in this block");
}

} // namespace

LncFindings checkLncConsistency(const Program &P) { return Checker(P).run(); }

} // namespace loom::bir::analysis
