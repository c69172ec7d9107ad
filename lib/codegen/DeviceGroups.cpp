#include "loom/codegen/DeviceGroups.h"

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"

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
        return hlo::InstructionError(
            I, "replica group id " + llvm::Twine(Id) + " is out of range [0, " +
                   llvm::Twine(Ids) + "): the launch has no " +
                   (M == Mode::CrossPartition ? "partition "
                    : M == Mode::Flattened    ? "device "
                                              : "replica ") +
                   llvm::Twine(Id));
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

std::vector<unsigned>
groupContaining(const std::vector<std::vector<int64_t>> &Groups,
                unsigned Device) {
  for (const std::vector<int64_t> &G : Groups)
    if (llvm::is_contained(G, int64_t(Device)))
      return std::vector<unsigned>(G.begin(), G.end());
  return {};
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
      return hlo::InstructionError(
          I, "source_target_pairs id out of range [0, " + llvm::Twine(Ids) +
                 "): the launch has no " +
                 (CrossPartition ? "partition " : "replica ") +
                 llvm::Twine(S < 0 || S >= Ids ? S : T));
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

bool isCollectiveOpcode(HloOpcode Op) {
  switch (Op) {
  case HloOpcode::kAllGather:
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kAllReduce:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kReduceScatter:
  case HloOpcode::kAllToAll:
  case HloOpcode::kCollectivePermute:
  case HloOpcode::kCollectivePermuteStart:
    return true;
  default:
    return false;
  }
}

const hlo::Shape &getCollectiveResultShape(const HloInstruction &I) {
  const hlo::Shape &S = I.shape();
  bool Wrapped = (I.opcode() == HloOpcode::kAllGatherStart ||
                  I.opcode() == HloOpcode::kCollectivePermuteStart ||
                  I.opcode() == HloOpcode::kAsyncStart) &&
                 S.IsTuple() && S.tuple_shapes_size() >= 2;
  return Wrapped ? S.tuple_shapes(1) : S;
}

llvm::Error checkGroupShapes(const HloInstruction &I, const hlo::Shape &Result,
                             uint64_t N) {
  HloOpcode Op = I.opcode();
  bool Gather = Op == HloOpcode::kAllGather || Op == HloOpcode::kAllGatherStart;
  bool Scatter = Op == HloOpcode::kReduceScatter;
  bool ToAll = Op == HloOpcode::kAllToAll;
  // The array form has a split dimension; the tuple form (one operand per
  // member, even a group of one) has none, as the interpreter reads them.
  bool ArrayToAll = ToAll && I.HasAttribute("dimensions");
  auto misfit = [&]() {
    return makeError("its shapes do not fit its group of " + llvm::Twine(N) +
                     " device(s); give the launch size with "
                     "--replica-count / --num-partitions");
  };
  if (ToAll && !ArrayToAll && static_cast<uint64_t>(I.operand_count()) != N)
    return misfit();
  for (int64_t K = 0; K < I.operand_count(); ++K) {
    const hlo::Shape &OS = I.operand(K)->shape();
    const hlo::Shape &RS =
        Result.IsTuple() && Result.tuple_shapes_size()
            ? Result.tuple_shapes(
                  std::min<int64_t>(K, Result.tuple_shapes_size() - 1))
            : Result;
    if (!OS.IsArray() || !RS.IsArray())
      return makeError("operands and results must be arrays");
    uint64_t In = OS.element_count(), Want = In;
    bool Scalar = OS.rank() == 0;
    if (Gather && !Scalar)
      Want = In * N;
    else if (Scatter && !Scalar)
      Want = In % N ? 0 : In / N;
    if (static_cast<uint64_t>(RS.element_count()) != Want ||
        (Scatter && !Scalar && In % N))
      return misfit();
    if (ArrayToAll) {
      llvm::Expected<int64_t> D = hlo::GetCollectiveDimension(I);
      if (!D)
        return D.takeError();
      if (*D < 0 || *D >= OS.rank() || OS.dimensions(*D) % N)
        return misfit();
    }
  }
  return llvm::Error::success();
}

namespace {

llvm::Error checkFits(const HloInstruction &I, LaunchSize L) {
  if (I.opcode() == HloOpcode::kCollectivePermute ||
      I.opcode() == HloOpcode::kCollectivePermuteStart)
    return getDevicePairs(I, L).takeError();
  llvm::Expected<std::vector<std::vector<int64_t>>> Groups =
      getDeviceGroups(I, L);
  if (!Groups)
    return Groups.takeError();
  for (const auto &G : *Groups)
    if (llvm::Error E = checkGroupShapes(I, getCollectiveResultShape(I), G.size()))
      return hlo::InstructionError(I, llvm::toString(std::move(E)));
  return llvm::Error::success();
}

std::vector<const HloInstruction *> collectivesOf(const hlo::HloModule &M) {
  std::vector<const HloInstruction *> Out;
  for (const hlo::HloComputation *C : M.computations())
    for (const HloInstruction *I : C->instructions())
      if (isCollectiveOpcode(I->opcode()))
        Out.push_back(I);
  return Out;
}

} // namespace

llvm::Error checkLaunchFits(const hlo::HloModule &M, LaunchSize L) {
  for (const HloInstruction *I : collectivesOf(M))
    if (llvm::Error E = checkFits(*I, L))
      return E;
  return llvm::Error::success();
}

std::optional<LaunchSize> inferLaunchSize(const hlo::HloModule &M,
                                          int64_t MaxDevices) {
  std::vector<const HloInstruction *> Colls = collectivesOf(M);
  // The collective that refused the last candidate is tried first on the
  // next one: most candidates fail on the same few.
  size_t First = 0;
  for (int64_t N = 1; N <= MaxDevices; ++N)
    for (int64_t R = 1; R <= N; ++R) {
      if (N % R)
        continue;
      LaunchSize L{R, N / R};
      bool Fits = true;
      for (size_t K = 0; K < Colls.size() && Fits; ++K) {
        size_t J = (First + K) % Colls.size();
        if (llvm::Error E = checkFits(*Colls[J], L)) {
          llvm::consumeError(std::move(E));
          Fits = false;
          First = J;
        }
      }
      if (Fits)
        return L;
    }
  return std::nullopt;
}

} // namespace loom::codegen
