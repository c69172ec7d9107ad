//===- LncVerifier.cpp - Do the cores of a split program agree? -----------===//
//
// No rewrite: the program before is the program after. The checks are
// analysis::checkLncConsistency (lib/bir/analysis/LncConsistency.cpp); this
// file turns its findings into the pass's result. A barrier renamed on core
// 1 of a lowered swap, for example:
//
//   %swap_cb_end = CoreBarrier[POOL] id=2 cores=[0,1]      (core 0)
//   %swap_cb_fin = CoreBarrier[POOL] id=2 cores=[0,1]      (core 1)
//
// fails the pass with
//
//   module 'swap', subgraph 0, core 1, block 'entry', instruction
//   'swap_cb_fin': expected core barrier 'swap_cb_end' (id 2, cores [0,1])
//   as on core 0 at the 3rd meeting point of cores 0 and 1 in this block,
//   but core 1 has core barrier 'swap_cb_fin' (id 2, cores [0,1])
//
// on one line.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/passes/LncVerifier.h"

#include "loom/bir/analysis/LncConsistency.h"
#include "loom/support/Error.h"

#include "llvm/Support/raw_ostream.h"

namespace loom::bir {

namespace {

/// Beyond this many problems the message ends with a count of the rest, so
/// that a program broken everywhere still gives a readable error.
constexpr size_t MaxProblemsShown = 100;

} // namespace

LncVerifier::LncVerifier()
    : Warn([](llvm::StringRef Line) {
        llvm::errs() << "lnc_verifier: warning: " << Line << "\n";
      }) {}

llvm::Expected<bool> LncVerifier::run(Program &Modules) {
  analysis::LncFindings F = analysis::checkLncConsistency(Modules);
  for (const std::string &W : F.Warnings)
    Warn(W);
  if (F.Problems.empty())
    return false;
  std::string Msg;
  for (size_t I = 0; I < F.Problems.size() && I < MaxProblemsShown; ++I)
    Msg += (I ? "\n" : "") + F.Problems[I];
  if (F.Problems.size() > MaxProblemsShown)
    Msg += "\n... and " + std::to_string(F.Problems.size() - MaxProblemsShown) +
           " more problem(s)";
  return makeError(Msg);
}

} // namespace loom::bir
