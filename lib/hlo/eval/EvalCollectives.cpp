//===- EvalCollectives.cpp - Collectives over the lock-step device set ----===//
//
// Participant groups follow XLA's CollectiveOpGroupMode:
//   no channel_id                          -> cross-replica: groups list replica
//                                             ids, one group per partition;
//   channel_id, op without the attribute   -> cross-partition: groups list
//   (all-to-all, collective-permute, ...)     partition ids, one per replica;
//   channel_id, use_global_device_ids=false -> cross-replica-and-partition:
//                                             groups list replica ids and take
//                                             every partition of them;
//   channel_id, use_global_device_ids=true  -> flattened ids
//                                             (replica * num_partitions + partition).
// An empty group list is one group of every id of the mode. Members are in
// group order (all-gather concatenates and all-reduce folds in that order).
//
//===----------------------------------------------------------------------===//

#include "Evaluator.h"

#include "loom/hlo/ir/CollectiveMatmulContract.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"

#include <numeric>
#include <optional>

namespace loom::hlo {
namespace {

enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

/// all-reduce, all-gather and reduce-scatter carry use_global_device_ids;
/// the other collectives have no such attribute (XLA's std::nullopt).
bool HasGlobalDeviceIdsAttribute(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
  case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
  case HloOpcode::kReduceScatter: case HloOpcode::kCustomCall:
    return true;
  default:
    return false;
  }
}

llvm::Expected<GroupMode> ModeOf(const HloInstruction &inst, bool has_channel_id,
                                 bool use_global_device_ids) {
  if (!has_channel_id) {
    if (use_global_device_ids)
      return EvalError(inst, "use_global_device_ids=true needs a channel_id");
    return GroupMode::kCrossReplica;
  }
  if (!HasGlobalDeviceIdsAttribute(inst.opcode()))
    return GroupMode::kCrossPartition;
  return use_global_device_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

/// Each group as global device ids, in group order.
llvm::Expected<std::vector<std::vector<int64_t>>>
DeviceGroups(const HloInstruction &inst, GroupMode mode,
             std::vector<std::vector<int64_t>> groups, const SpmdLayout &layout) {
  const int64_t replicas = layout.replica_count, partitions = layout.num_partitions;
  const int64_t id_count = mode == GroupMode::kCrossPartition ? partitions
                           : mode == GroupMode::kFlattenedId  ? replicas * partitions
                                                              : replicas;
  if (groups.empty()) {
    groups.emplace_back(id_count);
    std::iota(groups[0].begin(), groups[0].end(), 0);
  }
  for (const auto &group : groups)
    for (int64_t id : group)
      if (id < 0 || id >= id_count)
        return EvalError(inst, "replica group id " + llvm::Twine(id) + " is out of range [0, " +
                                   llvm::Twine(id_count) + "): there is no " +
                                   (mode == GroupMode::kCrossPartition ? "partition "
                                    : mode == GroupMode::kFlattenedId  ? "device "
                                                                       : "replica ") +
                                   llvm::Twine(id));
  std::vector<std::vector<int64_t>> result;
  auto device = [&](int64_t r, int64_t p) { return r * partitions + p; };
  for (const auto &group : groups) {
    switch (mode) {
    case GroupMode::kCrossReplica:
      for (int64_t p = 0; p < partitions; ++p) {
        result.emplace_back();
        for (int64_t r : group)
          result.back().push_back(device(r, p));
      }
      break;
    case GroupMode::kCrossPartition:
      for (int64_t r = 0; r < replicas; ++r) {
        result.emplace_back();
        for (int64_t p : group)
          result.back().push_back(device(r, p));
      }
      break;
    case GroupMode::kCrossReplicaAndPartition:
      result.emplace_back();
      for (int64_t r : group)
        for (int64_t p = 0; p < partitions; ++p)
          result.back().push_back(device(r, p));
      break;
    case GroupMode::kFlattenedId:
      result.push_back(group);
      break;
    }
  }
  return result;
}

/// The groups that involve the current device set, as positions in it.
/// Every device of the set must be in exactly one group, and every member
/// of such a group must be in the set (devices that went another way in
/// control flow cannot take part).
llvm::Expected<std::vector<std::vector<size_t>>>
ActiveGroups(const HloInstruction &inst, const std::vector<std::vector<int64_t>> &groups,
             const SpmdContext &ctx) {
  llvm::DenseMap<int64_t, size_t> position;
  for (size_t k = 0; k < ctx.devices.size(); ++k)
    position[ctx.devices[k]] = k;
  std::vector<int> group_of(ctx.devices.size(), -1);
  std::vector<std::vector<size_t>> result;
  for (const auto &group : groups) {
    std::vector<size_t> members;
    int64_t missing = -1;
    for (int64_t d : group) {
      auto it = position.find(d);
      if (it == position.end()) {
        missing = d;
        continue;
      }
      if (group_of[it->second] != -1)
        return EvalError(inst, "device " + llvm::Twine(d) + " appears in two replica groups");
      group_of[it->second] = static_cast<int>(result.size());
      members.push_back(it->second);
    }
    if (members.empty())
      continue;
    if (missing >= 0)
      return EvalError(inst, "device " + llvm::Twine(missing) +
                                 " does not reach this collective while others of its group "
                                 "do (devices diverged in control flow)");
    result.push_back(std::move(members));
  }
  for (size_t k = 0; k < ctx.devices.size(); ++k)
    if (group_of[k] == -1)
      return EvalError(inst, "device " + llvm::Twine(ctx.devices[k]) +
                                 " is in no replica group");
  return result;
}

llvm::Expected<std::vector<std::vector<size_t>>> GroupsFor(const HloInstruction &inst,
                                                           const SpmdContext &ctx) {
  llvm::Expected<ReplicaGroups> groups = GetReplicaGroups(inst);
  if (!groups)
    return groups.takeError();
  llvm::Expected<GroupMode> mode =
      ModeOf(inst, GetChannelId(inst).has_value(), GetUseGlobalDeviceIds(inst));
  if (!mode)
    return mode.takeError();
  llvm::Expected<std::vector<std::vector<int64_t>>> devices =
      DeviceGroups(inst, *mode, std::move(groups->groups), ctx.layout);
  if (!devices)
    return devices.takeError();
  return ActiveGroups(inst, *devices, ctx);
}

/// The i-th array of a possibly-tuple result shape.
const Shape &ResultPart(const Shape &result, size_t i, size_t count) {
  return count == 1 && !result.IsTuple() ? result : result.tuple_shapes(i);
}

llvm::Error CheckParts(const HloInstruction &inst, const Shape &result, size_t count) {
  if (count == 1 && !result.IsTuple())
    return llvm::Error::success();
  if (!result.IsTuple() || result.tuple_shapes_size() != static_cast<int64_t>(count))
    return EvalError(inst, "expected a tuple of " + llvm::Twine(count) + " results");
  return llvm::Error::success();
}

/// Packs per-operand results into each device's value.
DeviceValues Pack(std::vector<DeviceValues> parts, const Shape &result, size_t devices) {
  if (parts.size() == 1 && !result.IsTuple())
    return std::move(parts[0]);
  DeviceValues out;
  for (size_t k = 0; k < devices; ++k) {
    std::vector<Literal> elements;
    for (DeviceValues &part : parts)
      elements.push_back(std::move(part[k]));
    Literal tuple = Literal::MakeTuple(std::move(elements));
    tuple.Reshape(result);
    out.push_back(std::move(tuple));
  }
  return out;
}

/// Gathers `operand` along `dim` over each group into `shape`.
/// The all-gather of each group, once: element g is what every member of
/// groups[g] receives.
llvm::Expected<std::vector<Literal>>
GatherGroups(const HloInstruction &inst, const DeviceValues &operand, int64_t dim,
             const Shape &shape, const std::vector<std::vector<size_t>> &groups) {
  std::vector<Literal> out;
  out.reserve(groups.size());
  for (const auto &group : groups) {
    std::vector<const Literal *> parts;
    for (size_t k : group)
      parts.push_back(&operand[k]);
    const Shape &in = parts[0]->shape();
    if (!shape.IsArray() || shape.element_type() != in.element_type() || dim < 0 ||
        dim >= in.rank() || shape.rank() != in.rank())
      return EvalError(inst, "all-gather of " + in.ToString() + " into " + shape.ToString() +
                                 " along dimension " + llvm::Twine(dim));
    for (int64_t d = 0; d < in.rank(); ++d) {
      int64_t expected = d == dim ? in.dimensions(d) * static_cast<int64_t>(group.size())
                                  : in.dimensions(d);
      if (shape.dimensions(d) != expected)
        return EvalError(inst, "all-gather result " + shape.ToString() + " does not match " +
                                   llvm::Twine(group.size()) + " x " + in.ToString());
    }
    out.push_back(ConcatenateLiterals(parts, dim, shape));
  }
  return out;
}

llvm::Expected<DeviceValues> GatherArrays(const HloInstruction &inst, const DeviceValues &operand,
                                          int64_t dim, const Shape &shape,
                                          const std::vector<std::vector<size_t>> &groups) {
  llvm::Expected<std::vector<Literal>> gathered = GatherGroups(inst, operand, dim, shape, groups);
  if (!gathered)
    return gathered.takeError();
  DeviceValues out(operand.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<size_t> &group = groups[g];
    for (size_t j = 0; j + 1 < group.size(); ++j)
      out[group[j]] = (*gathered)[g];
    out[group.back()] = std::move((*gathered)[g]);
  }
  return out;
}

/// all-gather and reduce-scatter, operand by operand: a rank-0 operand
/// (torch-xla's token-like scalar) passes through unchanged; `combine` makes
/// the part of every other operand from (its values, its shape, the result
/// part's shape, the collective dimension, the groups).
template <typename CombineFn>
llvm::Expected<DeviceValues> DimensionCollective(const HloInstruction &inst, const Shape &result,
                                                 Operands &ops, const SpmdContext &ctx,
                                                 CombineFn combine) {
  if (llvm::Error err = CheckParts(inst, result, ops.size()))
    return err;
  llvm::Expected<int64_t> dim = GetCollectiveDimension(inst);
  if (!dim)
    return dim.takeError();
  llvm::Expected<std::vector<std::vector<size_t>>> groups = GroupsFor(inst, ctx);
  if (!groups)
    return groups.takeError();
  std::vector<DeviceValues> parts;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Shape &shape = ResultPart(result, i, ops.size());
    const Shape &in = ops.At(i, 0).shape();
    if (in.IsArray() && in.rank() == 0) {
      if (!in.Compatible(shape))
        return EvalError(inst, "rank-0 operand must keep its shape");
      parts.push_back(ops.Take(i));
      continue;
    }
    llvm::Expected<DeviceValues> part = combine(ops.Get(i), in, shape, *dim, *groups);
    if (!part)
      return part.takeError();
    parts.push_back(std::move(*part));
  }
  return Pack(std::move(parts), result, ctx.devices.size());
}

llvm::Expected<DeviceValues> AllGather(const HloInstruction &inst, const Shape &result,
                                       Operands &ops, const SpmdContext &ctx) {
  return DimensionCollective(
      inst, result, ops, ctx,
      [&](const DeviceValues &operand, const Shape &, const Shape &shape, int64_t dim,
          const std::vector<std::vector<size_t>> &groups) {
        return GatherArrays(inst, operand, dim, shape, groups);
      });
}

/// Elementwise fold of each group's operands in group order.
llvm::Expected<DeviceValues> ReduceGroups(const HloInstruction &inst, const DeviceValues &operand,
                                          const std::vector<std::vector<size_t>> &groups,
                                          const SpmdContext &ctx) {
  llvm::ArrayRef<HloComputation *> to_apply = inst.CalledComputations("to_apply");
  if (to_apply.size() != 1)
    return EvalError(inst, "expected one to_apply computation");
  DeviceValues out(operand.size());
  for (const auto &group : groups) {
    Combiner combiner(*to_apply[0], ctx.runner_for(ctx.devices[group[0]]));
    Literal acc = operand[group[0]];
    if (!acc.shape().IsArray())
      return EvalError(inst, "operands must be arrays");
    for (size_t j = 1; j < group.size(); ++j)
      if (llvm::Error err = combiner.Accumulate(inst, acc, operand[group[j]]))
        return err;
    for (size_t j = 0; j + 1 < group.size(); ++j)
      out[group[j]] = acc;
    out[group.back()] = std::move(acc);
  }
  return out;
}

llvm::Expected<DeviceValues> AllReduce(const HloInstruction &inst, const Shape &result,
                                       Operands &ops, const SpmdContext &ctx) {
  if (llvm::Error err = CheckParts(inst, result, ops.size()))
    return err;
  llvm::Expected<std::vector<std::vector<size_t>>> groups = GroupsFor(inst, ctx);
  if (!groups)
    return groups.takeError();
  std::vector<DeviceValues> parts;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops.At(i, 0).shape().Compatible(ResultPart(result, i, ops.size())))
      return EvalError(inst, "operand and result shapes differ");
    llvm::Expected<DeviceValues> reduced = ReduceGroups(inst, ops.Get(i), *groups, ctx);
    if (!reduced)
      return reduced.takeError();
    for (Literal &lit : *reduced)
      lit.Reshape(ResultPart(result, i, ops.size()));
    parts.push_back(std::move(*reduced));
  }
  return Pack(std::move(parts), result, ctx.devices.size());
}

llvm::Expected<DeviceValues> ReduceScatter(const HloInstruction &inst, const Shape &result,
                                           Operands &ops, const SpmdContext &ctx) {
  return DimensionCollective(
      inst, result, ops, ctx,
      [&](const DeviceValues &operand, const Shape &in, const Shape &shape, int64_t dim,
          const std::vector<std::vector<size_t>> &groups) -> llvm::Expected<DeviceValues> {
        llvm::Expected<DeviceValues> reduced = ReduceGroups(inst, operand, groups, ctx);
        if (!reduced)
          return reduced.takeError();
        for (const auto &group : groups) {
          const int64_t size = static_cast<int64_t>(group.size());
          if (!shape.IsArray() || dim < 0 || dim >= in.rank() || shape.rank() != in.rank() ||
              shape.element_type() != in.element_type() ||
              shape.dimensions(dim) * size != in.dimensions(dim))
            return EvalError(inst, "reduce-scatter of " + in.ToString() + " into " +
                                       shape.ToString() + " over " + llvm::Twine(size) +
                                       " devices");
          for (size_t rank = 0; rank < group.size(); ++rank) {
            std::vector<int64_t> starts(in.rank(), 0);
            starts[dim] = static_cast<int64_t>(rank) * shape.dimensions(dim);
            Literal &full = (*reduced)[group[rank]];
            full = SliceLiteral(full, starts, shape.dimensions(), shape);
          }
        }
        return reduced;
      });
}

/// collective-permute: one operand gives the permuted array; several
/// operands (XLA's combined form) give a tuple, each permuted alike.
llvm::Expected<DeviceValues> CollectivePermute(const HloInstruction &inst, const Shape &result,
                                               Operands &ops, const SpmdContext &ctx) {
  if (ops.size() == 0 || (ops.size() > 1 && (!result.IsTuple() ||
                                             result.tuple_shapes_size() !=
                                                 static_cast<int64_t>(ops.size()))))
    return EvalError(inst, "collective-permute of " + llvm::Twine(ops.size()) +
                               " operands must give a tuple of as many results");
  for (size_t i = 0; i < ops.size(); ++i)
    if (!ops.At(i, 0).shape().Compatible(ResultPart(result, i, ops.size())))
      return EvalError(inst, "operand and result shapes differ");
  llvm::Expected<std::vector<std::pair<int64_t, int64_t>>> pairs = GetSourceTargetPairs(inst);
  if (!pairs)
    return pairs.takeError();
  // Pairs name replica ids (no channel id) or partition ids (channel id),
  // within each partition or replica respectively.
  const bool cross_partition = GetChannelId(inst).has_value();
  const SpmdLayout &layout = ctx.layout;
  const int64_t id_count = cross_partition ? layout.num_partitions : layout.replica_count;
  llvm::DenseMap<int64_t, int64_t> source_of;
  for (auto [source, target] : *pairs) {
    if (source < 0 || source >= id_count || target < 0 || target >= id_count)
      return EvalError(inst, "source_target_pairs id out of range");
    if (!source_of.try_emplace(target, source).second)
      return EvalError(inst, "id " + llvm::Twine(target) + " is the target of two pairs");
  }
  llvm::DenseMap<int64_t, size_t> position;
  for (size_t k = 0; k < ctx.devices.size(); ++k)
    position[ctx.devices[k]] = k;
  // The position (in ctx.devices) each device receives from, or none.
  std::vector<std::optional<size_t>> from(ctx.devices.size());
  for (size_t k = 0; k < ctx.devices.size(); ++k) {
    const int64_t d = ctx.devices[k];
    const int64_t r = layout.replica_id(d), p = layout.partition_id(d);
    auto it = source_of.find(cross_partition ? p : r);
    if (it == source_of.end())
      continue; // not a target: zeros
    const int64_t source = cross_partition ? r * layout.num_partitions + it->second
                                           : it->second * layout.num_partitions + p;
    auto src = position.find(source);
    if (src == position.end())
      return EvalError(inst, "source device " + llvm::Twine(source) +
                                 " does not reach this collective (devices diverged in "
                                 "control flow)");
    from[k] = src->second;
  }
  std::vector<DeviceValues> parts;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Shape &shape = ResultPart(result, i, ops.size());
    const DeviceValues &operand = ops.Get(i);
    DeviceValues out;
    for (size_t k = 0; k < ctx.devices.size(); ++k) {
      if (!from[k]) {
        out.emplace_back(shape); // zeros
        continue;
      }
      out.push_back(operand[*from[k]]);
      out.back().Reshape(shape);
    }
    parts.push_back(std::move(out));
  }
  return Pack(std::move(parts), result, ctx.devices.size());
}

llvm::Expected<DeviceValues> AllToAll(const HloInstruction &inst, const Shape &result,
                                      Operands &ops, const SpmdContext &ctx) {
  llvm::Expected<std::vector<std::vector<size_t>>> groups = GroupsFor(inst, ctx);
  if (!groups)
    return groups.takeError();
  DeviceValues out(ctx.devices.size());
  if (!inst.HasAttribute("dimensions")) {
    // Tuple form: rank i receives operand i of every member, in group order.
    for (const auto &group : *groups) {
      if (ops.size() != group.size() || !result.IsTuple() ||
          result.tuple_shapes_size() != static_cast<int64_t>(group.size()))
        return EvalError(inst, "tuple all-to-all needs one operand per group member");
      for (size_t i = 0; i < group.size(); ++i) {
        std::vector<Literal> elements;
        for (size_t j = 0; j < group.size(); ++j) {
          elements.push_back(ops.At(i, group[j]));
          if (!elements.back().shape().Compatible(result.tuple_shapes(j)))
            return EvalError(inst, "operand shapes differ from the result");
          elements.back().Reshape(result.tuple_shapes(j));
        }
        out[group[i]] = Literal::MakeTuple(std::move(elements));
        out[group[i]].Reshape(result);
      }
    }
    return out;
  }
  llvm::Expected<int64_t> dim = GetCollectiveDimension(inst);
  if (!dim)
    return dim.takeError();
  if (ops.size() != 1 || !ops.At(0, 0).shape().Compatible(result) || !result.IsArray() ||
      *dim < 0 || *dim >= result.rank())
    return EvalError(inst, "array all-to-all needs one operand shaped like the result");
  // Split along `dim` into one chunk per member; rank i concatenates chunk
  // i of every member in group order.
  for (const auto &group : *groups) {
    const int64_t size = static_cast<int64_t>(group.size());
    if (result.dimensions(*dim) % size != 0)
      return EvalError(inst, "dimension " + llvm::Twine(*dim) + " does not split into " +
                                 llvm::Twine(size) + " chunks");
    std::vector<int64_t> chunk_dims(result.dimensions().begin(), result.dimensions().end());
    chunk_dims[*dim] /= size;
    Shape chunk_shape(result.element_type(), chunk_dims);
    for (int64_t i = 0; i < size; ++i) {
      std::vector<Literal> chunks;
      for (int64_t j = 0; j < size; ++j) {
        std::vector<int64_t> starts(result.rank(), 0);
        starts[*dim] = i * chunk_dims[*dim];
        chunks.push_back(SliceLiteral(ops.At(0, group[j]), starts, chunk_dims, chunk_shape));
      }
      std::vector<const Literal *> pointers;
      for (const Literal &c : chunks)
        pointers.push_back(&c);
      out[group[i]] = ConcatenateLiterals(pointers, *dim, result);
    }
  }
  return out;
}

llvm::Expected<DeviceValues> CollectiveBroadcast(const HloInstruction &inst, const Shape &result,
                                                 Operands &ops, const SpmdContext &ctx) {
  if (ops.size() != 1 || !ops.At(0, 0).shape().Compatible(result))
    return EvalError(inst, "collective-broadcast needs one operand shaped like the result");
  llvm::Expected<std::vector<std::vector<size_t>>> groups = GroupsFor(inst, ctx);
  if (!groups)
    return groups.takeError();
  // The first member of each group is the root.
  DeviceValues out(ctx.devices.size());
  for (const auto &group : *groups)
    for (size_t k : group) {
      out[k] = ops.At(0, group[0]);
      out[k].Reshape(result);
    }
  return out;
}

} // namespace

llvm::Expected<DeviceValues> EvalCollective(const HloInstruction &inst, const Shape &result,
                                            Operands &ops, const SpmdContext &ctx) {
  if (ops.size() == 0)
    return EvalError(inst, "collective without operands");
  switch (inst.opcode()) {
  case HloOpcode::kAllGather:
  case HloOpcode::kAllGatherStart:
    return AllGather(inst, result, ops, ctx);
  case HloOpcode::kAllReduce:
  case HloOpcode::kAllReduceStart:
    return AllReduce(inst, result, ops, ctx);
  case HloOpcode::kReduceScatter:
    return ReduceScatter(inst, result, ops, ctx);
  case HloOpcode::kCollectivePermute:
  case HloOpcode::kCollectivePermuteStart:
    return CollectivePermute(inst, result, ops, ctx);
  case HloOpcode::kAllToAll:
    return AllToAll(inst, result, ops, ctx);
  case HloOpcode::kCollectiveBroadcast:
    return CollectiveBroadcast(inst, result, ops, ctx);
  default:
    return UnsupportedError(inst, "collective");
  }
}

// ---- AwsNeuronCollectiveMatmul -------------------------------------------------
//
// collective_matmul::Resolve decides what the custom-call computes: the
// geometry (tp_degree, num_groups, rhs_contracting_dim) from backend_config,
// the rest from the loom_* attributes or, without them, from the kernel's
// natural form (docs/collective-matmul-contract.md).

llvm::Expected<DeviceValues> EvalCollectiveMatmul(const HloInstruction &inst, Operands &ops,
                                                  const SpmdContext &ctx) {
  if (ops.size() != 2)
    return EvalError(inst, collective_matmul::kTarget + " takes two operands");
  llvm::Expected<collective_matmul::Meaning> meaning = collective_matmul::Resolve(inst);
  if (!meaning)
    return EvalError(inst, llvm::toString(meaning.takeError()));
  const collective_matmul::Meaning &m = *meaning;
  // 1. The local shard in its original shape (a row-major reshape).
  DeviceValues local = ops.Take(0);
  for (Literal &w : local) {
    if (!w.shape().IsArray() || w.element_type() != m.local_weight_shape.element_type() ||
        w.element_count() != m.local_weight_shape.ElementsIn())
      return EvalError(inst, "operand 0 " + w.shape().ToString() +
                                 " does not reshape to the local weight shape " +
                                 m.local_weight_shape.ToString());
    w.Reshape(m.local_weight_shape);
  }
  // 2. The all-gather over the resolved groups, in the participant mode of
  // the original one (flattened ids in the kernel's natural form).
  llvm::Expected<GroupMode> mode =
      ModeOf(inst, m.channel_id.has_value() || m.use_global_device_ids, m.use_global_device_ids);
  if (!mode)
    return mode.takeError();
  llvm::Expected<std::vector<std::vector<int64_t>>> device_groups =
      DeviceGroups(inst, *mode, m.groups, ctx.layout);
  if (!device_groups)
    return device_groups.takeError();
  llvm::Expected<std::vector<std::vector<size_t>>> groups =
      ActiveGroups(inst, *device_groups, ctx);
  if (!groups)
    return groups.takeError();
  // Every member of a group reads the same gathered weight: it is made once
  // per group, not copied per device.
  llvm::Expected<std::vector<Literal>> gathered =
      GatherGroups(inst, local, m.all_gather_dimension, m.gathered_weight_shape, *groups);
  if (!gathered)
    return gathered.takeError();
  local.clear();
  const size_t kNoGroup = groups->size();
  std::vector<size_t> group_of(ctx.devices.size(), kNoGroup);
  for (size_t g = 0; g < groups->size(); ++g)
    for (size_t k : (*groups)[g])
      group_of[k] = g;
  // 3. The weight as the dot saw it, 4. the dot on the recorded side, in the
  // dot's shape, then (natural form) reshaped to the custom-call's. The dots
  // of the devices are independent: they run on the pool.
  for (Literal &w : *gathered) {
    if (w.element_count() != m.weight_operand_shape.ElementsIn() ||
        w.element_type() != m.weight_operand_shape.element_type())
      return EvalError(inst, "the gathered weight " + m.gathered_weight_shape.ToString() +
                                 " does not reshape to the weight operand shape " +
                                 m.weight_operand_shape.ToString());
    w.Reshape(m.weight_operand_shape);
  }
  const bool weight_is_lhs = m.weight_side == collective_matmul::WeightSide::kLhs;
  return RunPerDevice(ctx.pool, ctx.devices.size(), [&](size_t k) -> llvm::Expected<Literal> {
    if (group_of[k] == kNoGroup)
      return EvalError(inst, "the gathered weight " + m.gathered_weight_shape.ToString() +
                                 " does not reshape to the weight operand shape " +
                                 m.weight_operand_shape.ToString());
    const Literal &w = (*gathered)[group_of[k]];
    const Literal &activation = ops.At(1, k);
    llvm::Expected<Literal> product =
        weight_is_lhs ? DotLiterals(inst, w, activation, m.dnums, m.dot_shape)
                      : DotLiterals(inst, activation, w, m.dnums, m.dot_shape);
    if (product && !m.dot_shape.Compatible(inst.shape()))
      product->Reshape(inst.shape());
    return product;
  });
}

} // namespace loom::hlo
