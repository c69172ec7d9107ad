//===- Storage.h - The simulator's memory and access-pattern walks -------===//
//
// A Storage is the bytes of one physical buffer: one core's location, or a
// SharedDRAM location of the logical core. Remote locations have none of
// their own; they resolve to the peer core's storage. Partition p occupies
// bytes [p * BytesPerPartition, (p + 1) * BytesPerPartition) of Data, and
// Init keeps one flag per byte (written, seeded or given as input), allocated
// only once a write covers part of the storage: a storage that is seeded,
// given as input or written whole is AllInit and needs no flags (InitFlags,
// shared with the LocationState a run returns).
//
// forEachRun walks the bytes an access pattern selects in element order
// (docs/bir.md, "Element order") as maximal contiguous runs, so copies move
// whole runs with memcpy and no element is visited one by one unless the
// pattern itself is strided.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_SIM_STORAGE_H
#define LOOM_LIB_BIR_SIM_STORAGE_H

#include "loom/bir/ir/AccessPattern.h"
#include "loom/bir/ir/MemoryLocation.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace loom::bir::sim {

struct Storage : InitFlags {
  unsigned Id = 0;
  std::string Name;
  /// The core that owns it; none for SharedDRAM.
  std::optional<unsigned> Owner;
  /// The device of a launch it belongs to; none outside launches.
  std::optional<unsigned> Device;
  const MemoryLocation *Loc = nullptr; ///< the owning module's location
  MemoryKind Kind = MemoryKind::SB;
  DataType Type = DataType::FP32;
  unsigned Partitions = 0;
  uint64_t BytesPerPartition = 0;
  std::vector<uint8_t> Data;
  /// The per-byte flags, allocated (all clear) on first use.
  uint8_t *initFlags() {
    if (Init.empty())
      Init.assign(Data.size(), 0);
    return Init.data();
  }
  /// Seeded because some core reads it before writing it.
  bool Seeded = false;
};

/// The normalized walk of one access pattern: runs of RunBytes bytes at
/// Base + sum(i_k * Dims[k].first) within each partition.
struct RunShape {
  llvm::SmallVector<std::pair<int64_t, uint64_t>, 6> Dims; // (step bytes, count)
  uint64_t RunBytes = 0;
  uint64_t Offset = 0;
  unsigned StartPartition = 0;
  unsigned NumPartitions = 0;
  /// The partitions are whole and adjacent: one run covers all of them.
  bool WholePartitions = false;

  RunShape(const AccessPattern &AP, uint64_t BytesPerPartition) {
    int64_t Size = getDataTypeSize(AP.getType());
    StartPartition = AP.getStartPartition();
    NumPartitions = AP.getNumPartitions();
    Offset = AP.getOffset();
    for (const PatternDim &D : AP.getPattern()) {
      if (D.Count == 1)
        continue;
      Dims.push_back({D.Step * Size, D.Count});
      // Merge an outer dimension whose step spans the inner one exactly.
      while (Dims.size() >= 2) {
        auto &Outer = Dims[Dims.size() - 2];
        auto &Inner = Dims.back();
        if (Outer.first != Inner.first * int64_t(Inner.second))
          break;
        Outer = {Inner.first, Outer.second * Inner.second};
        Dims.pop_back();
      }
    }
    RunBytes = Size;
    if (!Dims.empty() && Dims.back().first == Size) {
      RunBytes = Size * Dims.back().second;
      Dims.pop_back();
    }
    WholePartitions =
        Dims.empty() && Offset == 0 && RunBytes == BytesPerPartition;
  }

  uint64_t runsPerPartition() const {
    uint64_t N = 1;
    for (auto &D : Dims)
      N *= D.second;
    return N;
  }

  /// Calls Fn(ByteOffsetInStorage, Bytes) for every run, in element order.
  template <typename F> void forEachRun(uint64_t BytesPerPartition, F &&Fn) const {
    if (WholePartitions) {
      Fn(uint64_t(StartPartition) * BytesPerPartition,
         uint64_t(NumPartitions) * BytesPerPartition);
      return;
    }
    unsigned D = Dims.size();
    llvm::SmallVector<uint64_t, 6> Idx(D, 0);
    for (unsigned P = 0; P < NumPartitions; ++P) {
      uint64_t Base = uint64_t(StartPartition + P) * BytesPerPartition + Offset;
      if (D == 0) {
        Fn(Base, RunBytes);
        continue;
      }
      if (D == 1) {
        int64_t Step = Dims[0].first;
        uint64_t Count = Dims[0].second;
        int64_t Off = 0;
        for (uint64_t I = 0; I < Count; ++I, Off += Step)
          Fn(Base + Off, RunBytes);
        continue;
      }
      std::fill(Idx.begin(), Idx.end(), 0);
      int64_t Off = 0;
      while (true) {
        Fn(Base + Off, RunBytes);
        unsigned K = D;
        while (K > 0) {
          --K;
          if (++Idx[K] < Dims[K].second) {
            Off += Dims[K].first;
            break;
          }
          Off -= Dims[K].first * int64_t(Idx[K] - 1);
          Idx[K] = 0;
          if (K == 0)
            goto NextPartition;
        }
      }
    NextPartition:;
    }
  }
};

} // namespace loom::bir::sim

#endif
