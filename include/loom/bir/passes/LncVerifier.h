//===- LncVerifier.h - Do the cores of a split program agree? ---*- C++ -*-===//
//
// lnc_verifier checks a split program statically, before anything runs:
// every pair of cores that meet passes the same CoreBarriers (names, ids,
// cores) and local collectives (kind, group, reduce op, types, shapes) in
// the same order, block by block; every completion waits for an instruction
// that exists, and runs, on the core it names; every remote location names
// a real location of its core. It is neuronx-cc's LncVerifier, whose public
// error is NCC_IXLV002 (core barrier names that diverged between cores).
// The checks are analysis::checkLncConsistency; docs/lnc-verifier.md lists
// them.
//
// It never changes the program. Problems fail the pass, one line each; a
// collective without `local` in a program of lnc_size above 1 is only a
// warning, handed to the warning handler (stderr by default).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_LNCVERIFIER_H
#define LOOM_BIR_PASSES_LNCVERIFIER_H

#include "loom/bir/passes/Pass.h"

#include <functional>

namespace loom::bir {

class LncVerifier : public BirPass {
public:
  /// Receives one warning line, without a trailing newline.
  using WarningHandler = std::function<void(llvm::StringRef)>;

  LncVerifier();
  llvm::StringRef name() const override { return "lnc_verifier"; }

  /// Returns false, or an error with one line per problem.
  llvm::Expected<bool> run(Program &Modules) override;

  /// Where warnings go instead of "lnc_verifier: warning: ..." on stderr.
  void setWarningHandler(WarningHandler H) { Warn = std::move(H); }

private:
  WarningHandler Warn;
};

} // namespace loom::bir

#endif
