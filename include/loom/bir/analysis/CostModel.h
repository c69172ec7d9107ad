//===- CostModel.h - How long a BIR instruction takes on its engine -------===//
//
// The simulator's clock and the engine choice of lower_local_collectives
// (--sendrecv-engine=cost-model) both ask this model how long one execution
// of an instruction occupies its engine. Every parameter, its value, its unit
// and its public source (or the fact that it is loom's assumption) is listed
// in docs/cost-model.md; tools expose them as `--cost NAME=VALUE`.
//
// The model is deliberately simple and linear: a fixed cost per instruction
// plus bytes or elements over a throughput. Waiting (for dependencies, a
// barrier's other cores, a semaphore) is not part of an instruction's
// duration; the simulator adds it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_ANALYSIS_COSTMODEL_H
#define LOOM_BIR_ANALYSIS_COSTMODEL_H

#include "loom/bir/ir/Instructions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace loom::bir::analysis {

/// Times in nanoseconds, throughputs per nanosecond. docs/cost-model.md
/// gives the source of each default.
struct CostModelParams {
  // -- DMA (nki-dma-bandwidth-guide) --
  /// DMA queues per core; a DMACopy runs on one of them.
  unsigned DmaEnginesPerCore = 16;
  /// Bytes per ns of one DMA queue.
  double DmaBytesPerNs = 23;
  /// From the semaphore that triggers a DMA to its first byte.
  double DmaFixedNs = 1300;
  /// Overhead of one descriptor (one contiguous chunk, at least one per
  /// partition row), in bytes at the queue's rate: transfers under 256 B per
  /// partition are overhead-bound.
  double DmaDescriptorBytes = 256;
  /// Throughput of an accumulating DMACopy relative to a plain copy.
  double DmaAccumulateFactor = 0.5;

  // -- GPSIMD SBUF-to-SBUF copy --
  /// Bytes per ns of one core's GPSIMD DMA in one direction, counting the
  /// 4-byte lane of every element (effective bytes).
  double Sb2sbBytesPerNs = 19.2;
  /// Fixed cost of one GPSIMDSB2SB.
  double Sb2sbStartNs = 600;

  // -- Synchronization --
  /// A CoreBarrier from the last core's arrival to its release.
  double BarrierNs = 1200;
  /// From a copy's completion to the increment of the semaphore it signals.
  double SemaphoreSignalNs = 600;

  // -- Compute engines (loom's assumptions where not public) --
  /// Fixed issue cost of every compute / sync-engine instruction.
  double EngineFixedNs = 64;
  /// Tensor engine, dense FLOP per ns by input type.
  double PeBf16FlopsPerNs = 79000;
  double PeFp8FlopsPerNs = 158000;
  double PeFp32FlopsPerNs = 22625;
  /// Elements per ns in each partition (the partitions run in parallel).
  double ActElemsPerNs = 1.4;
  double DveElemsPerNs = 1.4;
  double PoolElemsPerNs = 1.2;

  // -- Chip-to-chip links (collectives that are not local) --
  /// Bytes per ns one core's collective instance drives over the chip's
  /// NeuronLink-v3 links: 1.28 TB/s per Trn2 chip over its 8 cores.
  double RemoteBytesPerNs = 160;
  /// Latency of one step of the ring algorithm (a DMA triggered by a
  /// semaphore, then the remote semaphore write that signals the peer).
  double RemoteStepNs = 1900;
};

/// One parameter as tools expose it: `--cost NAME=VALUE`.
struct CostModelParamInfo {
  llvm::StringRef Name;        ///< e.g. "dma-bytes-per-ns"
  llvm::StringRef Unit;        ///< e.g. "B/ns"
  llvm::StringRef Description; ///< one line, for --help
};

/// Every parameter, in the order of CostModelParams.
llvm::ArrayRef<CostModelParamInfo> getCostModelParamInfos();

/// Sets parameter Name. Errors name the parameter and say why the value is
/// refused (unknown name, not finite, out of range).
llvm::Error setCostModelParam(CostModelParams &P, llvm::StringRef Name,
                              double Value);

/// Applies one `NAME=VALUE` assignment (the text of a `--cost` option).
llvm::Error parseCostModelAssignment(CostModelParams &P,
                                     llvm::StringRef Assignment);

/// The value of parameter Name; none for an unknown name.
std::optional<double> getCostModelParam(const CostModelParams &P,
                                        llvm::StringRef Name);

class CostModel {
public:
  explicit CostModel(CostModelParams P = {}) : P(P) {}

  const CostModelParams &params() const { return P; }

  /// Duration of one execution of I on its engine, in ns (never negative;
  /// waiting is not included). Defined for every opcode.
  double instructionNs(const Instruction &I) const;

  /// One DMACopy on one queue moving Bytes in Chunks contiguous chunks
  /// (descriptors; at least the number of partition rows):
  ///   DmaFixedNs + (Bytes + Chunks * DmaDescriptorBytes) / rate,
  /// rate = DmaBytesPerNs, times DmaAccumulateFactor when accumulating.
  double dmaCopyNs(uint64_t Bytes, uint64_t Chunks, bool Accumulate) const;

  /// One GPSIMDSB2SB: Sb2sbStartNs + EffectiveBytesPerPartition * Partitions
  /// / Sb2sbBytesPerNs (effective bytes: 4 per element whatever the type).
  double sb2sbNs(uint64_t EffectiveBytesPerPartition,
                 unsigned Partitions) const;

  /// The reference cost of a collective of Kind over GroupSize cores on a
  /// tensor of Bytes per core (NCCL's bus-bandwidth model over all of the
  /// core's DMA queues): BarrierNs + DmaFixedNs + the bus bytes over
  /// DmaEnginesPerCore * DmaBytesPerNs, the reduced part at the accumulate
  /// rate. Bus bytes: AllReduce 2(n-1)/n * Bytes (half reduced);
  /// ReduceScatter (n-1)/n * Bytes (reduced); AllGather (n-1) * Bytes;
  /// AllToAll (n-1)/n * Bytes; SendRecv, Permute: Bytes; PermuteReduce:
  /// Bytes, reduced.
  double collectiveNs(CollectiveKind Kind, unsigned GroupSize,
                      uint64_t Bytes) const;
  /// A collective across GroupSize devices (not local) on Bytes of input per
  /// member, by the ring algorithm NCCL's bandwidth model describes:
  ///   steps * RemoteStepNs + bus bytes / RemoteBytesPerNs
  /// with, for n devices, AllReduce 2(n-1) steps and 2(n-1)/n * Bytes;
  /// ReduceScatter n-1 steps and (n-1)/n * Bytes; AllGather n-1 steps and
  /// (n-1) * Bytes ((n-1)/n of the output); AllToAll n-1 steps and
  /// (n-1)/n * Bytes; the permutes and SendRecv one step and Bytes. A group
  /// of one moves nothing and costs one step.
  double remoteCollectiveNs(CollectiveKind Kind, unsigned GroupSize,
                            uint64_t Bytes) const;

  /// Number of contiguous chunks a DMA needs for AP: its partitions times
  /// the runs of adjacent elements in each partition.
  static uint64_t getDmaChunks(const AccessPattern &AP);

private:
  CostModelParams P;
};

} // namespace loom::bir::analysis

#endif
