//===- Pipeline.h - The backend pipeline and its order numbers --*- C++ -*-===//
//
// neuronx-cc registers each backend pass at a static order number and runs
// them in that order. loom's default pipeline is the same table restricted to
// the passes loom implements; the production passes between them that loom
// has no counterpart for appear as named markers, so the order numbers and
// the relative placement stay visible. docs/backend-pipeline.md explains the
// table and the evidence for each number.
//
// lower_local_collectives and insert_ptcom_flat each have two slots (80/95
// and 111/112); --run-shared-allocation-before-post-sched picks the second
// pair on trn2 (elsewhere it is ignored), and the other pair is then
// skipped. insert_ptcom_flat is in the table only with --enable-ptcom.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_PIPELINE_H
#define LOOM_BIR_PASSES_PIPELINE_H

#include "loom/bir/passes/Pass.h"

#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace loom::bir {

struct PipelineEntry {
  enum class Kind { Pass, Marker };
  unsigned Order;
  std::string Name;
  Kind EntryKind;
  /// False for the slot of a two-slot pass that the options do not use: it
  /// is listed, and skipped.
  bool Active;
  /// Why a slot is skipped, or what a marker stands for.
  std::string Note;
};

/// The default pipeline for these options and target, ordered by order
/// number. --run-shared-allocation-before-post-sched picks the late slots on
/// trn2 and is ignored on the other targets.
llvm::Expected<std::vector<PipelineEntry>>
buildDefaultPipeline(const BackendOptions &Opts, Target T);

/// The passes of the active pass entries, in order.
llvm::Expected<std::vector<std::unique_ptr<BirPass>>>
createPipelinePasses(llvm::ArrayRef<PipelineEntry> Pipeline,
                     const BackendOptions &Opts);

/// One line per entry: order number, name, and "marker" or "skipped: why".
void printPipeline(llvm::raw_ostream &OS,
                   llvm::ArrayRef<PipelineEntry> Pipeline);

} // namespace loom::bir

#endif
