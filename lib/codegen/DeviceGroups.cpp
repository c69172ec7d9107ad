#include "loom/codegen/DeviceGroups.h"

#include "loom/hlo/ir/HloAttributes.h"

#include <numeric>

namespace loom::codegen {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

enum class Mode { CrossReplica, CrossPartition, CrossReplicaAndPartition, Flattened };

/// XLA gives use_global_device_ids only to all-reduce, all-gather and
/// reduce-scatter; for the others a channel_id means cross-partition.
bool hasGlobalDeviceIdsAttribute(HloOpcode Op) {
  switch (Op) {
  case HloOpcode::kAllReduce:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kAllGather:
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kReduceScatter:
    return true;
  default:
    return false;
  }
}

} // namespace

llvm::Expected<std::vector<std::vector<int64_t>>>
getDeviceGroups(const HloInstruction &I, LaunchSize L) {
  llvm::Expected<hlo::ReplicaGroups> RG = hlo::GetReplicaGroups(I);
  if (!RG)
    return RG.takeError();
  return expandDeviceGroups(I, RG->groups, hlo::GetChannelId(I).has_value(),
                            hlo::GetUseGlobalDeviceIds(I),
                            hasGlobalDeviceIdsAttribute(I.opcode()), L);
}

llvm::Expected<std::vector<std::vector<int64_t>>>
expandDeviceGroups(const HloInstruction &I,
                   std::vector<std::vector<int64_t>> Groups, bool Channel,
                   bool Global, bool HasGlobalAttribute, LaunchSize L) {
  Mode M = !Channel ? Mode::CrossReplica
           : !HasGlobalAttribute ? Mode::CrossPartition
           : Global ? Mode::Flattened
                    : Mode::CrossReplicaAndPartition;
  if (!Channel && Global)
    return hlo::InstructionError(I, "use_global_device_ids=true needs a channel_id");
  int64_t R = L.ReplicaCount, P = L.NumPartitions;
  int64_t Ids = M == Mode::CrossPartition ? P : M == Mode::Flattened ? R * P : R;
  if (Groups.empty()) {
    Groups.emplace_back(Ids);
    std::iota(Groups[0].begin(), Groups[0].end(), 0);
  }
  std::vector<std::vector<int64_t>> Out;
  for (const auto &G : Groups) {
    for (int64_t Id : G)
      if (Id < 0 || Id >= Ids)
        return hlo::InstructionError(I, "replica group id " + llvm::Twine(Id) +
                                            " is out of range [0, " +
                                            llvm::Twine(Ids) + ")");
    switch (M) {
    case Mode::CrossReplica:
      for (int64_t Part = 0; Part < P; ++Part) {
        Out.emplace_back();
        for (int64_t Rep : G)
          Out.back().push_back(Rep * P + Part);
      }
      break;
    case Mode::CrossPartition:
      for (int64_t Rep = 0; Rep < R; ++Rep) {
        Out.emplace_back();
        for (int64_t Part : G)
          Out.back().push_back(Rep * P + Part);
      }
      break;
    case Mode::CrossReplicaAndPartition:
      Out.emplace_back();
      for (int64_t Rep : G)
        for (int64_t Part = 0; Part < P; ++Part)
          Out.back().push_back(Rep * P + Part);
      break;
    case Mode::Flattened:
      Out.push_back(G);
      break;
    }
  }
  return Out;
}

llvm::Expected<std::vector<std::pair<int64_t, int64_t>>>
getDevicePairs(const HloInstruction &I, LaunchSize L) {
  auto Pairs = hlo::GetSourceTargetPairs(I);
  if (!Pairs)
    return Pairs.takeError();
  bool CrossPartition = hlo::GetChannelId(I).has_value();
  int64_t R = L.ReplicaCount, P = L.NumPartitions;
  int64_t Ids = CrossPartition ? P : R;
  std::vector<std::pair<int64_t, int64_t>> Out;
  for (auto [S, T] : *Pairs)
    if (S < 0 || S >= Ids || T < 0 || T >= Ids)
      return hlo::InstructionError(I, "source_target_pairs id out of range [0, " +
                                          llvm::Twine(Ids) + ")");
  if (CrossPartition) {
    for (int64_t Rep = 0; Rep < R; ++Rep)
      for (auto [S, T] : *Pairs)
        Out.push_back({Rep * P + S, Rep * P + T});
  } else {
    for (int64_t Part = 0; Part < P; ++Part)
      for (auto [S, T] : *Pairs)
        Out.push_back({S * P + Part, T * P + Part});
  }
  return Out;
}

} // namespace loom::codegen
