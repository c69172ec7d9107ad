//===- DeviceGroups.h - HLO replica groups as launch device ids -*- C++ -*-===//
//
// XLA's CollectiveOpGroupMode maps the replica groups of a collective to
// devices (docs/bir.md, "Collectives across devices"); the code generator
// writes the group of a device as device ids.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_CODEGEN_DEVICEGROUPS_H
#define LOOM_CODEGEN_DEVICEGROUPS_H

#include "loom/hlo/ir/HloInstruction.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace loom::codegen {

struct LaunchSize {
  int64_t ReplicaCount = 1;
  int64_t NumPartitions = 1;
};

/// Every group of a collective (all-reduce, all-gather, reduce-scatter,
/// all-to-all and their -start forms) as device ids, in group order.
llvm::Expected<std::vector<std::vector<int64_t>>>
getDeviceGroups(const hlo::HloInstruction &I, LaunchSize L);

/// The same for explicit groups (empty: one group of every id) in the mode
/// that a channel id, use_global_device_ids and whether the op carries that
/// attribute give (AwsNeuronCollectiveMatmul's resolved all-gather).
llvm::Expected<std::vector<std::vector<int64_t>>>
expandDeviceGroups(const hlo::HloInstruction &I,
                   std::vector<std::vector<int64_t>> Groups, bool Channel,
                   bool Global, bool HasGlobalAttribute, LaunchSize L);

/// collective-permute's source_target_pairs as device pairs: the ids are
/// replica ids without a channel_id (one set of pairs per partition) and
/// partition ids with one (one set per replica).
llvm::Expected<std::vector<std::pair<int64_t, int64_t>>>
getDevicePairs(const hlo::HloInstruction &I, LaunchSize L);

} // namespace loom::codegen

#endif
