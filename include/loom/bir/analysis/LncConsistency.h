//===- LncConsistency.h - Do the cores of a split program agree? -*- C++ -*-===//
//
// After lnc_splitter every core of a logical core runs its own module, and
// the cores meet only where their modules say so: at CoreBarriers (matched
// by id, named alike), at local collectives (matched by name), at the
// completions that wait for a peer's instruction, and through the remote
// locations that name a peer's memory. These checks read the modules of
// every subgraph together and say, without running anything, where the
// cores disagree: docs/lnc-verifier.md lists them. They are the body of the
// lnc_verifier pass (neuronx-cc's LncVerifier, behind the compile error
// NCC_IXLV002) and take only the IR, so any tool may run them.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_ANALYSIS_LNCCONSISTENCY_H
#define LOOM_BIR_ANALYSIS_LNCCONSISTENCY_H

#include "loom/bir/ir/Module.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::bir::analysis {

struct LncFindings {
  /// One line per disagreement, "module 'M', subgraph S, core C, block 'B',
  /// instruction 'I': what is wrong", in subgraph, then core order.
  std::vector<std::string> Problems;
  /// One line per CollectiveCompute without `local` whose group could be a
  /// group of this logical core (lnc_size above 1, every id below it, its
  /// own core included), at the first core's copy: nothing here checks such
  /// a collective's peers, and it may be a local one left unmarked.
  std::vector<std::string> Warnings;
};

/// Runs every check of docs/lnc-verifier.md on P; never changes it.
LncFindings checkLncConsistency(const Program &P);

} // namespace loom::bir::analysis

#endif
