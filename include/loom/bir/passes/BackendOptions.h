//===- BackendOptions.h - Settings of the backend passes --------*- C++ -*-===//
//
// The options neuronx-cc exposes as cl::opts of its backend passes, gathered
// in one struct that the tools fill from their command lines and hand to
// createPass. The flag spellings are the production compiler's.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_BACKENDOPTIONS_H
#define LOOM_BIR_PASSES_BACKENDOPTIONS_H

#include "loom/bir/analysis/CostModel.h"

#include <cstdint>

namespace loom::bir {

/// How lower_local_collectives picks the engine of a SendRecv swap.
enum class SendRecvEngineChoice {
  /// neuronx-cc's rule: GPSIMD when compatible and within the byte budget.
  Budget,
  /// The faster engine under loom's cost model (docs/local-collectives.md).
  CostModel,
};

struct BackendOptions {
  /// --sendrecv-to-gpsimd-max-bpp: "Bytes/partition under which local
  /// swapping SendRecvs will be mapped to GPSIMDSB2SB".
  uint64_t SendRecvToGpsimdMaxBpp = 1024;
  /// --enable-remote-semaphore-dma: a swap's copy signals the peer's
  /// semaphore, and the peer waits on it, instead of a per-peer barrier.
  bool EnableRemoteSemaphoreDMA = false;
  /// --enable-ptcom: the pipeline runs insert_ptcom_flat.
  bool EnablePTCOM = false;
  /// --run-shared-allocation-before-post-sched: "Run lower_local_collectives
  /// and coloring_allocator_dram_shared before post_sched. Only relevant for
  /// trn2."
  bool RunSharedAllocationBeforePostSched = false;
  /// --sendrecv-engine=budget|cost-model.
  SendRecvEngineChoice SendRecvEngine = SendRecvEngineChoice::Budget;
  /// The parameters --sendrecv-engine=cost-model times the copies with
  /// (--cost NAME=VALUE, as bir-sim's), so that both tools agree.
  analysis::CostModelParams Cost;
};

} // namespace loom::bir

#endif
