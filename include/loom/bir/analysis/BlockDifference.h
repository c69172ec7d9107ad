//===- BlockDifference.h - Do two cores take the same control flow? -*- C++ -*-===//
//
// The cores of a split program run their own modules, and whatever must
// line up between them block by block (lnc_verifier's meeting points,
// insert_ptcom_flat's completions placed in the same block on every core)
// needs the blocks to correspond: the same name, the same successors by
// name, the same branch kind and trip count. This is that comparison, once.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_ANALYSIS_BLOCKDIFFERENCE_H
#define LOOM_BIR_ANALYSIS_BLOCKDIFFERENCE_H

#include "loom/bir/ir/BasicBlock.h"
#include "loom/bir/ir/Instructions.h"

#include <optional>
#include <string>

namespace loom::bir::analysis {

/// The Branch that ends BB, or null when BB is empty or ends otherwise (the
/// verifier refuses both; the checks here run on unverified input too).
const InstBranch *getTerminator(const BasicBlock &BB);

/// Why block X of one core cannot stand for block Y of another (its name,
/// its successors' names, its branch kind or trip count differ), or none
/// when the two take the same control flow.
std::optional<std::string> describeBlockDifference(const BasicBlock &X,
                                                   const BasicBlock &Y);

} // namespace loom::bir::analysis

#endif
