//===- HloVerifier.cpp - The HLO verifier's driver and report -------------===//
//
// VerifyHloModule: the module's own checks and the computation names on the
// caller, the walks over the computations, a large one in pieces of its
// text order (HloVerifierStructure.cpp, with the shape rules of
// HloVerifierShapes.cpp and HloVerifierCollectives.cpp), on up to `threads`
// threads, then each computation's root, parameter numbers and cycle
// search, the instruction names in as many parts (HloVerifierNames.cpp),
// and the report, assembled on the caller in the order of Kind whatever
// the thread count and the pieces (docs/hlo-verifier.md).
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/pass/HloVerifier.h"

#include "HloVerifierInternal.h"
#include "HloVerifierPieces.h"

#include "loom/support/Error.h"
#include "loom/support/Parallel.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

namespace loom::hlo {
namespace hlo_verifier {

std::string AccessorMessage(const HloInstruction &inst, llvm::Error error) {
  std::string msg = llvm::toString(std::move(error));
  std::string prefix = ("'" + inst.name() + "': ").str();
  if (llvm::StringRef(msg).startswith(prefix))
    msg.erase(0, prefix.size());
  return msg;
}

std::string FormatProblem(const HloComputation *comp, const HloInstruction *inst,
                          const llvm::Twine &msg) {
  std::string line;
  if (comp)
    line += "computation '" + comp->name() + "'";
  if (inst)
    line += ((line.empty() ? "" : ", ") + llvm::Twine("instruction '") + inst->name() + "'").str();
  if (!line.empty())
    line += ": ";
  return line + msg.str();
}

void ComputationVerifier::Report(const HloComputation *comp, const HloInstruction *inst,
                                 const llvm::Twine &msg) {
  size_t k = static_cast<size_t>(kind_) - kFirstWalkKind;
  if (++result_->counts[k] > kMaxProblems)
    return;
  result_->lines[k].push_back(FormatProblem(comp, inst, msg));
}

namespace {

/// The walks' pieces: computation o's are [begin[o], begin[o + 1]), each a
/// range of its text-order slots, in module order.
struct PiecePlan {
  struct Piece {
    uint32_t computation;
    size_t from, to;
  };
  std::vector<Piece> pieces;
  std::vector<size_t> begin;
};

PiecePlan CutPieces(llvm::ArrayRef<const HloComputation *> comps, size_t piece_slots) {
  PiecePlan plan;
  plan.begin.reserve(comps.size() + 1);
  for (size_t o = 0; o < comps.size(); ++o) {
    plan.begin.push_back(plan.pieces.size());
    size_t slots = comps[o]->slot_count();
    size_t size = piece_slots && slots > piece_slots ? piece_slots : std::max<size_t>(slots, 1);
    // A computation without instructions is one empty piece: it still has
    // a head to check.
    size_t from = 0;
    do {
      plan.pieces.push_back({static_cast<uint32_t>(o), from, std::min(slots, from + size)});
      from += size;
    } while (from < slots);
  }
  plan.begin.push_back(plan.pieces.size());
  return plan;
}

/// Names per part of the name rule, at most about: a part's table is then
/// 2^19 slots, 4 MiB, rather than 16 MiB for a module of a million names
/// in one part, which the second verify of hlo-opt adds to the process's
/// peak (the module is largest after the passes).
constexpr size_t kNamesPerPart = size_t(1) << 18;

/// The rule that instruction names are unique, in parts of the names by
/// hash (at least one per thread, and enough that none holds much more than
/// kNamesPerPart), each taken by the next free thread and its table freed
/// before the thread takes the next; the duplicates of all parts in module
/// order are what one table would have found.
std::vector<NameProblem> FindDuplicateNamesOnThreads(llvm::ArrayRef<WalkResult> walks,
                                                     unsigned threads) {
  std::vector<uint32_t> starts(walks.size() + 1, 0);
  for (size_t p = 0; p < walks.size(); ++p)
    starts[p + 1] = starts[p] + static_cast<uint32_t>(walks[p].size());
  unsigned parts = static_cast<unsigned>(
      std::max<size_t>(threads, (starts.back() + kNamesPerPart - 1) / kNamesPerPart));
  std::vector<std::vector<NameProblem>> found(parts);
  loom::parallelFor(threads, parts, [&](size_t part) {
    found[part] = FindDuplicateNames(walks, starts, static_cast<unsigned>(part), parts);
  });
  std::vector<NameProblem> duplicates = std::move(found[0]);
  for (unsigned part = 1; part < parts; ++part)
    llvm::append_range(duplicates, found[part]);
  if (parts > 1)
    llvm::sort(duplicates, [](const NameProblem &a, const NameProblem &b) {
      return std::make_pair(a.ordinal, a.position) < std::make_pair(b.ordinal, b.position);
    });
  return duplicates;
}

/// The first kMaxProblems problems found and the count of all of them.
struct ProblemList {
  std::vector<std::string> shown;
  size_t total = 0;
  void Add(std::string line) {
    ++total;
    if (shown.size() < kMaxProblems)
      shown.push_back(std::move(line));
  }
  /// Lines kept by a walk that found `count` problems of their kind.
  void Add(llvm::ArrayRef<std::string> lines, size_t count) {
    total += count;
    for (const std::string &line : lines) {
      if (shown.size() == kMaxProblems)
        return;
      shown.push_back(line);
    }
  }
  llvm::Error Finish() const {
    if (total == 0)
      return llvm::Error::success();
    std::string msg;
    for (size_t i = 0; i < shown.size(); ++i) {
      if (i)
        msg += '\n';
      msg += shown[i];
    }
    if (total > shown.size())
      msg += "\n... and " + std::to_string(total - shown.size()) + " more problems";
    return makeError(msg);
  }
};

/// The walks: each of up to `threads` threads takes the next piece not yet
/// taken (one computation may hold most of a module, and is then cut into
/// pieces).
std::vector<WalkResult> WalkPieces(const HloModule &module,
                                   const llvm::DenseSet<const HloComputation *> &computations,
                                   llvm::ArrayRef<const HloComputation *> comps,
                                   const PiecePlan &plan, unsigned threads) {
  const size_t pieces = plan.pieces.size();
  std::vector<WalkResult> walks(pieces);
  std::atomic<size_t> next{0};
  size_t workers = std::min<size_t>(threads, pieces);
  loom::parallelFor(static_cast<unsigned>(workers), workers, [&](size_t) {
    ComputationVerifier verifier(module, computations);
    for (size_t p = next.fetch_add(1, std::memory_order_relaxed); p < pieces;
         p = next.fetch_add(1, std::memory_order_relaxed)) {
      const PiecePlan::Piece &piece = plan.pieces[p];
      verifier.CheckPiece(*comps[piece.computation], piece.from, piece.to, walks[p]);
    }
  });
  return walks;
}

/// What needs a whole computation, once its pieces are walked: its root and
/// parameter numbers (a few instructions each) on the caller, the cycle
/// search, rarely needed and as long as the computation, on the threads.
/// One result per computation.
std::vector<WalkResult> CheckWholeComputations(
    const HloModule &module, const llvm::DenseSet<const HloComputation *> &computations,
    llvm::ArrayRef<const HloComputation *> comps, const PiecePlan &plan,
    llvm::ArrayRef<WalkResult> walks, unsigned threads) {
  std::vector<WalkResult> heads(comps.size());
  std::vector<size_t> cyclic;
  ComputationVerifier verifier(module, computations);
  for (size_t o = 0; o < comps.size(); ++o) {
    llvm::ArrayRef<WalkResult> own = walks.slice(plan.begin[o], plan.begin[o + 1] - plan.begin[o]);
    verifier.CheckHead(*comps[o], own, heads[o]);
    if (llvm::all_of(own, [](const WalkResult &w) { return w.operands_local; }) &&
        !llvm::all_of(own, [](const WalkResult &w) { return w.in_text_order; }))
      cyclic.push_back(o);
  }
  loom::parallelFor(threads, cyclic.size(), [&](size_t c) {
    ComputationVerifier(module, computations).CheckCycles(*comps[cyclic[c]], heads[cyclic[c]]);
  });
  return heads;
}

/// The name problems into `report`, computation by computation, each
/// computation's own name before its instructions'.
void ReportNames(ProblemList &report, llvm::ArrayRef<const HloComputation *> comps,
                 llvm::ArrayRef<char> name_taken, const PiecePlan &plan,
                 llvm::ArrayRef<WalkResult> walks, llvm::ArrayRef<NameProblem> duplicates) {
  size_t d = 0;
  for (size_t o = 0; o < comps.size(); ++o) {
    if (name_taken[o])
      report.Add(FormatProblem(comps[o], nullptr, "another computation has the same name"));
    for (; d < duplicates.size() && duplicates[d].ordinal < plan.begin[o + 1]; ++d) {
      const NameProblem &p = duplicates[d];
      const HloInstruction *inst = walks[p.ordinal].Instruction(p.position);
      const HloComputation *first = comps[plan.pieces[p.first].computation];
      // Counted only, once the report is full: no message to build.
      if (report.shown.size() == kMaxProblems)
        ++report.total;
      else if (first == comps[o])
        report.Add(
            FormatProblem(comps[o], inst, "name used by two instructions of this computation"));
      else
        report.Add(FormatProblem(comps[o], inst,
                                 "name already used by an instruction of computation '" +
                                     first->name() +
                                     "'; instruction names must be unique across the "
                                     "module"));
    }
  }
}

/// The walks' problems into `report`: computation references, then
/// computation by computation the kinds from kHead on, each the
/// computation's head, then its pieces in text order.
void ReportWalks(ProblemList &report, const PiecePlan &plan, llvm::ArrayRef<WalkResult> walks,
                 llvm::ArrayRef<WalkResult> heads) {
  bool callees_ok = llvm::all_of(walks, [](const WalkResult &w) { return w.callees_ok; });
  constexpr size_t kCallee = static_cast<size_t>(Kind::kCallee) - kFirstWalkKind;
  for (const WalkResult &w : walks)
    report.Add(w.lines[kCallee], w.counts[kCallee]);
  for (size_t o = 0; o < heads.size(); ++o) {
    for (size_t k = kCallee + 1; k < kWalkKinds; ++k) {
      // Every shape rule's problem is left out after a dangling reference.
      if (k + kFirstWalkKind == static_cast<size_t>(Kind::kRule) && !callees_ok)
        continue;
      report.Add(heads[o].lines[k], heads[o].counts[k]);
      for (size_t p = plan.begin[o]; p < plan.begin[o + 1]; ++p)
        report.Add(walks[p].lines[k], walks[p].counts[k]);
    }
  }
}

/// The whole module: its own checks and the computation names on the
/// caller, the walks over the computations (those of more than
/// `piece_slots` slots in pieces) on up to `threads` threads, each
/// computation's root and parameter numbers on the caller and its cycle
/// search on the threads, the instruction names in parts on the threads,
/// then the report, assembled on the caller in the order of Kind whatever
/// the thread count and the pieces: the first kMaxProblems problems, then
/// the count of the rest.
llvm::Error VerifyModule(const HloModule &module, unsigned threads, size_t piece_slots) {
  threads = std::min(threads, 64u);
  std::vector<const HloComputation *> comps;
  comps.reserve(static_cast<size_t>(module.computation_count()));
  for (const HloComputation *comp : module.computations())
    comps.push_back(comp);
  llvm::DenseSet<const HloComputation *> computations;
  computations.reserve(static_cast<unsigned>(comps.size()));
  for (const HloComputation *comp : comps)
    computations.insert(comp);

  ProblemList report;
  if (!module.entry_computation())
    report.Add(FormatProblem(nullptr, nullptr,
                             "module '" + module.name() + "' has no entry computation"));
  else if (!computations.contains(module.entry_computation()))
    report.Add(FormatProblem(nullptr, nullptr,
                             "the entry computation of module '" + module.name() +
                                 "' is not one of its computations"));
  std::vector<char> name_taken = FindDuplicateComputationNames(comps);

  PiecePlan plan = CutPieces(comps, piece_slots);
  std::vector<WalkResult> walks = WalkPieces(module, computations, comps, plan, threads);
  std::vector<WalkResult> heads =
      CheckWholeComputations(module, computations, comps, plan, walks, threads);
  std::vector<NameProblem> duplicates = FindDuplicateNamesOnThreads(walks, threads);

  ReportNames(report, comps, name_taken, plan, walks, duplicates);
  ReportWalks(report, plan, walks, heads);
  return report.Finish();
}

} // namespace

llvm::Error VerifyModuleInPieces(const HloModule &module, unsigned threads, size_t piece_slots) {
  return VerifyModule(module, loom::resolveThreadCount(threads), piece_slots);
}

} // namespace hlo_verifier

llvm::Error VerifyHloModule(const HloModule &module) { return VerifyHloModule(module, 1); }

llvm::Error VerifyHloModule(const HloModule &module, unsigned threads) {
  // On one thread pieces would only add work: every computation is walked
  // whole.
  threads = loom::resolveThreadCount(threads);
  return hlo_verifier::VerifyModuleInPieces(module, threads,
                                            threads > 1 ? hlo_verifier::kPieceSlots : 0);
}

llvm::Expected<bool> HloVerifier::Run(HloModule &module) {
  if (llvm::Error err = VerifyHloModule(module))
    return err;
  return false;
}

} // namespace loom::hlo
