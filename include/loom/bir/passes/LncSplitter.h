//===- LncSplitter.h - One module per core of a logical core ----*- C++ -*-===//
//
// A program starts with one module per subgraph, written for a logical core
// of lnc_size physical cores. lnc_splitter gives every core its own copy:
// module M of subgraph S becomes modules (S, core 0) .. (S, core lnc-1),
// identical except for their NeuronCoreId, so the later multi-core passes can
// rewrite each core's copy differently (who sends, who receives).
//
// Core 0 keeps the module; each other core's copy is a deep copy in memory
// (Module::clone), so the copies share no pointers and correspond only by
// names, which is how the multi-core passes match a collective on one core
// with its peer on another.
//
// A subgraph that already has modules for cores 0..lnc-1 is left alone, so
// running the pass twice is harmless; lnc_size 1 leaves the one module.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_LNCSPLITTER_H
#define LOOM_BIR_PASSES_LNCSPLITTER_H

#include "loom/bir/passes/Pass.h"

namespace loom::bir {

class LncSplitter : public BirPass {
public:
  llvm::StringRef name() const override { return "lnc_splitter"; }

  /// Fails, leaving the program untouched, if the modules disagree on
  /// lnc_size or a subgraph has neither one module for core 0 nor one for
  /// every core.
  llvm::Expected<bool> run(Program &Modules) override;
};

} // namespace loom::bir

#endif
