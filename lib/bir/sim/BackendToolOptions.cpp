#include "loom/bir/sim/BackendToolOptions.h"

namespace cl = llvm::cl;

namespace loom::bir::sim {

BackendToolOptions::BackendToolOptions(cl::OptionCategory &Cat)
    : SendRecvToGpsimdMaxBpp(
          "sendrecv-to-gpsimd-max-bpp",
          cl::desc("Bytes/partition under which local swapping SendRecvs "
                   "will be mapped to GPSIMDSB2SB (default 1024)"),
          cl::init(BackendOptions().SendRecvToGpsimdMaxBpp),
          cl::value_desc("N"), cl::cat(Cat)),
      EnableRemoteSemaphoreDMA(
          "enable-remote-semaphore-dma",
          cl::desc("Lower a SendRecv swap with a copy that signals the "
                   "peer's semaphore instead of a per-peer barrier"),
          cl::cat(Cat)),
      EnablePTCOM("enable-ptcom",
                  cl::desc("Run insert_ptcom_flat in the pipeline "
                           "(point-to-point completion tokens)"),
                  cl::cat(Cat)),
      RunSharedAllocationBeforePostSched(
          "run-shared-allocation-before-post-sched",
          cl::desc("Run lower_local_collectives and "
                   "coloring_allocator_dram_shared before post_sched. Only "
                   "relevant for trn2."),
          cl::cat(Cat)),
      SendRecvEngine(
          "sendrecv-engine", cl::desc("How a SendRecv swap picks its engine"),
          cl::init(SendRecvEngineChoice::Budget),
          cl::values(clEnumValN(SendRecvEngineChoice::Budget, "budget",
                                "GPSIMD when compatible and within "
                                "--sendrecv-to-gpsimd-max-bpp (default)"),
                     clEnumValN(SendRecvEngineChoice::CostModel, "cost-model",
                                "the faster engine under the cost model")),
          cl::cat(Cat)) {}

BackendOptions BackendToolOptions::getBackendOptions() const {
  BackendOptions Opts;
  Opts.SendRecvToGpsimdMaxBpp = SendRecvToGpsimdMaxBpp;
  Opts.EnableRemoteSemaphoreDMA = EnableRemoteSemaphoreDMA;
  Opts.EnablePTCOM = EnablePTCOM;
  Opts.RunSharedAllocationBeforePostSched = RunSharedAllocationBeforePostSched;
  Opts.SendRecvEngine = SendRecvEngine;
  return Opts;
}

} // namespace loom::bir::sim
