//===- InsertPTCOMFlat.h - Point-to-point completion tokens -----*- C++ -*-===//
//
// insert_ptcom_flat gives every shared memory location (one that another core
// writes, or a SharedDRAM location that some core writes) one
// TensorCompletion named "<location>-PTCOM" on every core, placed where all
// the writes of that location are over: before the terminator of the first
// common post-dominator of the blocks that write it, hoisted out of loops.
// Its waits name the last writes of the location on every core, so a reader
// can wait for one token instead of a whole barrier. "Flat": cores are
// matched by names, keyed on core 0. docs/ptcom.md gives every rule.
//
// Run explicitly (--passes=insert_ptcom_flat) it always runs; the pipeline
// adds it only with --enable-ptcom (BackendOptions::EnablePTCOM).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_INSERTPTCOMFLAT_H
#define LOOM_BIR_PASSES_INSERTPTCOMFLAT_H

#include "loom/bir/passes/Pass.h"

namespace loom::bir {

class InsertPTCOMFlat : public BirPass {
public:
  explicit InsertPTCOMFlat(const BackendOptions &Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "insert_ptcom_flat"; }

  /// Fails, leaving the program untouched, on an unsplit subgraph, cores whose
  /// control flow differs, or a completion name already taken.
  llvm::Expected<bool> run(Program &Modules) override;

private:
  BackendOptions Opts;
};

/// Where one shared location gets its completion (exposed for the tests).
struct PTCOMPlacement {
  std::string Location;              ///< the flat name (core 0's location)
  std::vector<unsigned> WriterBlocks; ///< ascending block indices
  /// Blocks that get a completion: the hoisted first common post-dominator,
  /// or, when that is the virtual exit, every exit the writers reach.
  std::vector<unsigned> Blocks;
  /// Why those blocks, for --remarks.
  std::string Why;
};

/// The placements of the subgraph whose per-core modules are Cores (index =
/// core), in the order of core 0's locations.
llvm::Expected<std::vector<PTCOMPlacement>>
identifyPTCOMBlocks(llvm::ArrayRef<const Module *> Cores);

} // namespace loom::bir

#endif
