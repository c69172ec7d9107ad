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
#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
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

/// The group of Groups that holds Device, as unsigned device ids; empty
/// when none does.
std::vector<unsigned>
groupContaining(const std::vector<std::vector<int64_t>> &Groups,
                unsigned Device);

/// collective-permute's source_target_pairs as device pairs: the ids are
/// replica ids without a channel_id (one set of pairs per partition) and
/// partition ids with one (one set per replica).
llvm::Expected<std::vector<std::pair<int64_t, int64_t>>>
getDevicePairs(const hlo::HloInstruction &I, LaunchSize L);

/// all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute
/// and their -start forms.
bool isCollectiveOpcode(hlo::HloOpcode Op);

/// The result shape of a collective (all-reduce, all-gather, reduce-scatter,
/// all-to-all, collective-permute or their -start forms): a -start's
/// (operands, result, context...) gives its element 1.
const hlo::Shape &getCollectiveResultShape(const hlo::HloInstruction &I);

/// Whether the operand and result shapes of collective I fit a group of N
/// devices: an all-gather multiplies the elements of each operand by N, a
/// reduce-scatter divides them by N, an array all-to-all splits its
/// dimension N ways, a tuple all-to-all has N operands (a rank-0 operand of
/// a combined collective passes through). The error says what does not fit.
llvm::Error checkGroupShapes(const hlo::HloInstruction &I,
                             const hlo::Shape &Result, uint64_t N);

/// Whether every collective of M fits launch L: every replica group and
/// source-target pair names ids of the launch, and the shapes fit every
/// group (checkGroupShapes). The error names the first that does not.
llvm::Error checkLaunchFits(const hlo::HloModule &M, LaunchSize L);

/// The smallest launch that fits the collectives of M (checkLaunchFits):
/// the fewest devices, and among launches of that many devices the most
/// partitions (XLA's SPMD partitioner writes partition ids); none when no
/// launch of up to MaxDevices devices fits. A module without collectives
/// gets one device. Used where the module header gives no launch size
/// (docs/codegen.md, "Launch size").
std::optional<LaunchSize> inferLaunchSize(const hlo::HloModule &M,
                                          int64_t MaxDevices = 1024);

} // namespace loom::codegen

#endif
