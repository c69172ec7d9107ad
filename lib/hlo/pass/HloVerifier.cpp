//===- HloVerifier.cpp - The HLO verifier's driver and report -------------===//
//
// VerifyHloModule: the module's own checks and the computation names on the
// caller, the walks over the computations (HloVerifierStructure.cpp, with
// the shape rules of HloVerifierShapes.cpp and HloVerifierCollectives.cpp)
// on up to `threads` threads, the instruction names in as many parts
// (HloVerifierNames.cpp), then the report, assembled on the caller in the
// order of Kind whatever the thread count (docs/hlo-verifier.md).
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/pass/HloVerifier.h"

#include "HloVerifierInternal.h"

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

/// The whole module: its own checks and the computation names on the
/// caller, the walks over the computations on up to `threads` threads, the
/// instruction names in as many parts, then the report, assembled on the
/// caller in the order of Kind whatever the thread count.
llvm::Error VerifyModule(const HloModule &module, unsigned threads) {
  threads = std::min(loom::resolveThreadCount(threads), 64u);
  std::vector<const HloComputation *> comps;
  comps.reserve(static_cast<size_t>(module.computation_count()));
  for (const HloComputation *comp : module.computations())
    comps.push_back(comp);
  const size_t n = comps.size();
  llvm::DenseSet<const HloComputation *> computations;
  computations.reserve(static_cast<unsigned>(n));
  for (const HloComputation *comp : comps)
    computations.insert(comp);

  std::vector<std::string> module_lines;
  if (!module.entry_computation())
    module_lines.push_back(FormatProblem(
        nullptr, nullptr, "module '" + module.name() + "' has no entry computation"));
  else if (!computations.contains(module.entry_computation()))
    module_lines.push_back(FormatProblem(nullptr, nullptr,
                                         "the entry computation of module '" + module.name() +
                                             "' is not one of its computations"));
  std::vector<char> name_taken = FindDuplicateComputationNames(comps);

  // The walks: each thread takes the next computation not yet taken (one
  // computation may hold most of a module).
  std::vector<ComputationResult> results(n);
  std::atomic<size_t> next{0};
  size_t workers = std::min<size_t>(threads, n);
  loom::parallelFor(static_cast<unsigned>(workers), workers, [&](size_t) {
    ComputationVerifier verifier(module, computations);
    for (size_t o = next.fetch_add(1, std::memory_order_relaxed); o < n;
         o = next.fetch_add(1, std::memory_order_relaxed))
      verifier.Check(*comps[o], results[o]);
  });

  // The name rule, a part of the names on each thread; the duplicates of
  // all parts in module order are what one table would have found.
  std::vector<uint32_t> starts(n + 1, 0);
  for (size_t o = 0; o < n; ++o)
    starts[o + 1] = starts[o] + static_cast<uint32_t>(results[o].insts.size());
  std::vector<std::vector<NameProblem>> found(threads);
  loom::parallelFor(threads, threads, [&](size_t part) {
    found[part] = FindDuplicateNames(results, starts, static_cast<unsigned>(part), threads);
  });
  std::vector<NameProblem> duplicates = std::move(found[0]);
  for (unsigned part = 1; part < threads; ++part)
    llvm::append_range(duplicates, found[part]);
  if (threads > 1)
    llvm::sort(duplicates, [](const NameProblem &a, const NameProblem &b) {
      return std::make_pair(a.ordinal, a.position) < std::make_pair(b.ordinal, b.position);
    });

  // The report: the first kMaxProblems problems in the order of Kind,
  // computation by computation for the kinds from kHead on, then the count
  // of the rest.
  std::vector<std::string> shown;
  size_t total = 0;
  auto show = [&](llvm::ArrayRef<std::string> lines) {
    for (const std::string &line : lines) {
      if (shown.size() == kMaxProblems)
        return;
      shown.push_back(line);
    }
  };
  total += module_lines.size();
  show(module_lines);
  size_t d = 0;
  for (size_t o = 0; o < n; ++o) {
    // A computation's own name comes before its instructions' names.
    if (name_taken[o]) {
      ++total;
      if (shown.size() < kMaxProblems)
        shown.push_back(FormatProblem(comps[o], nullptr, "another computation has the same name"));
    }
    for (; d < duplicates.size() && duplicates[d].ordinal == o; ++d) {
      ++total;
      if (shown.size() == kMaxProblems)
        continue;
      const NameProblem &p = duplicates[d];
      const HloInstruction *inst = results[o].insts[p.position];
      if (p.first == o)
        shown.push_back(
            FormatProblem(comps[o], inst, "name used by two instructions of this computation"));
      else
        shown.push_back(FormatProblem(comps[o], inst,
                                      "name already used by an instruction of computation '" +
                                          comps[p.first]->name() +
                                          "'; instruction names must be unique across the "
                                          "module"));
    }
  }
  bool callees_ok = llvm::all_of(results, [](const ComputationResult &r) { return r.callees_ok; });
  constexpr size_t kCallee = static_cast<size_t>(Kind::kCallee) - kFirstWalkKind;
  for (const ComputationResult &r : results) {
    total += r.counts[kCallee];
    show(r.lines[kCallee]);
  }
  for (const ComputationResult &r : results) {
    for (size_t k = kCallee + 1; k < kWalkKinds; ++k) {
      // Every shape rule's problem is left out after a dangling reference.
      if (k + kFirstWalkKind == static_cast<size_t>(Kind::kRule) && !callees_ok)
        continue;
      total += r.counts[k];
      show(r.lines[k]);
    }
  }
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

} // namespace
} // namespace hlo_verifier

llvm::Error VerifyHloModule(const HloModule &module) {
  return hlo_verifier::VerifyModule(module, 1);
}

llvm::Error VerifyHloModule(const HloModule &module, unsigned threads) {
  return hlo_verifier::VerifyModule(module, threads);
}

llvm::Expected<bool> HloVerifier::Run(HloModule &module) {
  if (llvm::Error err = VerifyHloModule(module))
    return err;
  return false;
}

} // namespace loom::hlo
