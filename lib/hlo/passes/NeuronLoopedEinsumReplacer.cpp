//===- NeuronLoopedEinsumReplacer.cpp - dot(all-gather(w), x) to one call -===//
//
// The rewrite, for a weight gathered on the rhs of the dot (4-way, one group):
//
//   before:
//     %w  = bf16[64,4,16] convert(f32[64,4,16] %w.f32)
//     %ag = bf16[64,16,16] all-gather(%w), channel_id=1,
//           replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
//     %y  = bf16[8,16,16] dot(bf16[8,64] %x, %ag),
//           lhs_contracting_dims={1}, rhs_contracting_dims={0}
//   after:
//     %reshape = bf16[256,16] reshape(%w)
//     %collective-matmul = bf16[8,16,16] custom-call(%reshape, %x),
//           custom_call_target="AwsNeuronCollectiveMatmul",
//           frontend_attributes={loom_weight_side="rhs", ...},
//           backend_config="rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=1"
//
// and for NeuronX Distributed's combined all-gather (weight on the lhs):
//
//   before:
//     %ag = (bf16[8,2,64], bf16[8,64]) all-gather(%w0, %w1), dimensions={0}, ...
//     %g  = bf16[8,2,64] get-tuple-element(%ag), index=0
//     %r  = bf16[16,64] reshape(%g)
//     %y  = bf16[16,32] dot(%r, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
//   after:
//     %reshape = bf16[4,64] reshape(%w0)      (the operand at the gte's index)
//     %collective-matmul = bf16[16,32] custom-call(%reshape, %x), ...
//
// The dot is replaced by the driver; the all-gather and reshapes that became
// dead go with it, an all-gather with other users stays.
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"

#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/passes/CollectiveMatmulMatchers.h"
#include "loom/hlo/passes/WeightProvenance.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallString.h"

#include <deque>

#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::hlo {
namespace {

/// Everything the rewrite needs, decided before anything is mutated.
struct Plan {
  const char *matcher = "";
  int64_t weight_side = 0; // 0: lhs, 1: rhs
  HloInstruction *weight_operand = nullptr; // the dot's operand on that side
  HloInstruction *activation = nullptr;     // the dot's other operand
  HloInstruction *ag = nullptr;
  int64_t ag_operand_index = 0;
  HloInstruction *local_weight = nullptr; // ag->operand(ag_operand_index)
  /// That operand's all-gather result: the all-gather's shape or one of its
  /// elements (the all-gather outlives the plan: the dot reads it).
  const Shape *gathered_shape = nullptr;
  DotDimensionNumbers dnums;
  int64_t ag_dimension = 0;
  std::vector<std::vector<int64_t>> groups; // expanded
  std::optional<int64_t> channel_id;        // the all-gather's
  bool use_global_device_ids = false;       // the all-gather's
  int64_t tp_degree = 0;
  int64_t num_groups = 0;
  bool use_sb_to_sb = false;
  std::vector<std::pair<std::string, std::string>> dot_frontend_attributes;
  /// The dot's sharding and metadata as the custom-call takes them over
  /// (ShareText); absent when the dot has none. Taken with the dot's other
  /// attributes while those are in the cache.
  std::optional<HloText> dot_sharding, dot_metadata;
  // Provenance mode only:
  /// How the weight side was proven, for the remark ("WeightInRHS",
  /// "dynamic-slice of loop-invariant %gte", ...); empty outside the mode.
  std::string proof;
  /// The contracting dimensions were merged into one: dnums is the merged
  /// form, the operands are read as these shapes (the activation through a
  /// reshape the rewrite adds), and `from` names the original lists. Out of
  /// line: a module has tens of thousands of plans alive at once, and
  /// merging is rare.
  struct Merged {
    Shape weight, activation;
    std::string from;
  };
  std::unique_ptr<Merged> merged;

  /// The weight operand's shape as the custom-call's dot reads it.
  const Shape &WeightOperandShape() const {
    return merged ? merged->weight : weight_operand->shape();
  }

  std::string BackendConfig() const {
    collective_matmul::BackendConfig config;
    config.rhs_contracting_dim = dnums.rhs_contracting_dimensions[0];
    config.tp_degree = tp_degree;
    config.num_groups = num_groups;
    config.use_sb_to_sb = use_sb_to_sb;
    return collective_matmul::EncodeBackendConfig(config);
  }
};

/// The outcome for one instruction.
struct Analysis {
  enum Kind { kIrrelevant, kMissed, kFuse } kind = kIrrelevant;
  std::string reason; // kMissed
  Plan plan;          // kFuse
};

Analysis Missed(const llvm::Twine &reason) {
  Analysis a;
  a.kind = Analysis::kMissed;
  a.reason = reason.str();
  return a;
}

std::string Ref(const HloInstruction *inst) { return ("%" + inst->name()).str(); }

const char *SideName(int64_t side) { return side == 0 ? "lhs" : "rhs"; }

/// XLA's participant modes of an all-gather: what the ids in replica_groups
/// name and who takes part in one group.
enum class GroupMode {
  kCrossReplica,             // no channel_id: replica ids, within one partition
  kCrossReplicaAndPartition, // channel_id: replica ids, each group spanning every partition
  kFlattenedId,              // channel_id + use_global_device_ids: global device ids
};

GroupMode GetGroupMode(const std::optional<int64_t> &channel_id, bool use_global_device_ids) {
  if (!channel_id)
    return GroupMode::kCrossReplica;
  return use_global_device_ids ? GroupMode::kFlattenedId
                               : GroupMode::kCrossReplicaAndPartition;
}

const HloModule *ModuleOf(const HloInstruction &inst) {
  return inst.parent() ? inst.parent()->parent() : nullptr;
}

int64_t ReplicaCount(const HloInstruction &ag) {
  const HloModule *module = ModuleOf(ag);
  return module ? module->replica_count() : 1;
}

int64_t NumPartitions(const HloInstruction &ag) {
  const HloModule *module = ModuleOf(ag);
  return module ? module->num_partitions() : 1;
}

/// Implicit groups larger than this are declined rather than materialised.
constexpr int64_t kMaxImplicitGroupSize = int64_t(1) << 20;

/// The one group an absent or empty replica_groups stands for, in the ids
/// of the mode: every replica, or every device for flattened ids. A module
/// with one replica and one partition does not know its device count (XLA's
/// verifier accepts any shard count then), so the group is as large as the
/// number of shards the all-gather stacks. nullopt when the group would have
/// more than kMaxImplicitGroupSize ids.
std::optional<std::vector<int64_t>> ImplicitGroup(const HloInstruction &ag, GroupMode mode,
                                                  int64_t partitions, int64_t shard_count) {
  int64_t n = ReplicaCount(ag);
  if (n == 1 && partitions == 1)
    n = shard_count;
  else if (mode == GroupMode::kFlattenedId && __builtin_mul_overflow(n, partitions, &n))
    return std::nullopt;
  if (n < 1 || n > kMaxImplicitGroupSize)
    return std::nullopt;
  std::vector<int64_t> all;
  all.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    all.push_back(i);
  return all;
}

/// Every group j is exactly {j*g, ..., j*g+g-1}, in order, g = size of group 0.
bool AreContiguous(const std::vector<std::vector<int64_t>> &groups) {
  const size_t g = groups.front().size();
  for (size_t j = 0; j < groups.size(); ++j) {
    if (groups[j].size() != g)
      return false;
    for (size_t k = 0; k < g; ++k)
      if (groups[j][k] != static_cast<int64_t>(j * g + k))
        return false;
  }
  return true;
}

/// 2 * bytes(element) * elements / 2^20 <= threshold, computed exactly.
bool FitsSbToSb(const Shape &weight, int64_t threshold_in_mb) {
  __int128 bytes = static_cast<__int128>(2) * ByteSizeOfPrimitiveType(weight.element_type()) *
                   weight.element_count();
  return bytes <= static_cast<__int128>(threshold_in_mb) * (1 << 20);
}

/// Walks from the dot's weight operand to `ag` through operand 0: only
/// reshapes may sit between them, and a get-tuple-element right above the
/// all-gather selects the operand. Anything else would make the custom-call
/// mean something other than the dot.
llvm::Error TraceWeightPath(HloInstruction *weight_operand, HloInstruction *ag,
                            int64_t *operand_index) {
  *operand_index = 0;
  for (HloInstruction *cur = weight_operand; cur != ag; cur = cur->mutable_operand(0)) {
    if (cur->operand_count() == 0)
      return makeError("the weight operand does not lead to " + Ref(ag));
    bool above_ag = cur->operand(0) == ag;
    if (cur->opcode() == HloOpcode::kGetTupleElement && above_ag) {
      auto index = GetTupleIndex(*cur);
      if (!index)
        return index.takeError();
      *operand_index = *index;
      continue;
    }
    if (cur->opcode() != HloOpcode::kReshape)
      return makeError("the path from the weight operand to " + Ref(ag) + " passes through " +
                       cur->OpcodeText() + " " + Ref(cur) +
                       ", which the custom-call cannot express");
  }
  return llvm::Error::success();
}

/// `text` as the custom-call keeps it: a view stays a view (of the module's
/// source, which outlives every instruction of the module), owned text is
/// copied.
HloText ShareText(const HloText &text) {
  return text.owned() ? HloText(text) : HloText::View(text);
}

std::string TakeMessage(llvm::Error error) { return llvm::toString(std::move(error)); }

/// Why a dot is declined, or nullopt when the step passed.
using Reason = std::optional<std::string>;

/// "two", "no", ...: counts in remarks are spelled out up to nine.
std::string CountWord(size_t n) {
  static const char *const kWords[] = {"no",   "one", "two",   "three", "four",
                                       "five", "six", "seven", "eight", "nine"};
  return n < std::size(kWords) ? kWords[n] : std::to_string(n);
}

/// Step 2: one contraction axis per side (the sizes of the lists, not their
/// values; neuronx-cc 2.24 compares the counts).
Reason CheckContractingDims(const DotDimensionNumbers &dnums) {
  for (const auto &[side, dims] : {std::pair{"lhs", &dnums.lhs_contracting_dimensions},
                                   std::pair{"rhs", &dnums.rhs_contracting_dimensions}})
    if (dims->size() != 1)
      return std::string(side) + " has " + CountWord(dims->size()) + " contracting dimensions" +
             (dims->empty() ? "" : " " + FormatIntList(*dims)) + " (needs exactly 1)";
  return std::nullopt;
}

/// Provenance mode: why the contracting dimensions cannot be merged into
/// one, or nullopt when they can (as many on each side, at least two, each
/// side's adjacent and paired in the same order).
Reason CheckMergeable(const DotDimensionNumbers &dnums) {
  const auto &lhs = dnums.lhs_contracting_dimensions;
  const auto &rhs = dnums.rhs_contracting_dimensions;
  if (lhs.size() != rhs.size() || lhs.size() < 2)
    return "not merged: the lhs has " + CountWord(lhs.size()) + " and the rhs " +
           CountWord(rhs.size());
  for (size_t k = 1; k < lhs.size(); ++k)
    if (lhs[k] != lhs[0] + static_cast<int64_t>(k) ||
        rhs[k] != rhs[0] + static_cast<int64_t>(k))
      return "not merged: lhs " + FormatIntList(lhs) + " and rhs " + FormatIntList(rhs) +
             " are not both adjacent ascending dimensions in the same order";
  return std::nullopt;
}

/// `shape` with dimensions [first, first + count) replaced by their product.
Shape MergeDimensions(const Shape &shape, int64_t first, int64_t count) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d > first && d < first + count) {
      dims.back() *= shape.dimensions(d);
      continue;
    }
    dims.push_back(shape.dimensions(d));
  }
  Shape merged(shape.element_type(), dims);
  if (shape.has_layout())
    merged.set_layout(Shape::DefaultLayout(merged.rank()));
  return merged;
}

/// The five structural matchers, evaluated once, as neuronx-cc 2.24 does.
struct Matches {
  bool lhs_rs, lhs, rhs_rs, rhs, lhs_nxd;
  bool any() const { return lhs_rs || lhs || rhs_rs || rhs || lhs_nxd; }
};

Matches RunMatchers(const HloInstruction *dot) {
  return {MatchAllGatherInDotLhsRS(dot), MatchAllGatherInDotLhs(dot),
          MatchAllGatherInDotRhsRS(dot), MatchAllGatherInDotRhs(dot),
          MatchAllGatherInDotLhsNxD(dot)};
}

/// Step 3 failed although an all-gather is within reach of `side`:
/// e.g. "the lhs is negate(convert(all-gather %ag))", outermost first.
std::string NoMatcherReason(HloInstruction *dot, int64_t side, HloInstruction *ag) {
  std::string prefix, suffix;
  for (const HloInstruction *cur = dot->operand(side); cur != ag; cur = cur->operand(0)) {
    prefix += cur->OpcodeText() + "(";
    suffix += ")";
  }
  return "no matcher applies: the " + std::string(SideName(side)) + " is " + prefix +
         "all-gather " + Ref(ag) + suffix +
         "; only all-gather and reshape(all-gather) on either side, or "
         "reshape(get-tuple-element(all-gather)) on the lhs, fold";
}

/// Provenance mode: what WeightProvenance says of the all-gather operand
/// that feeds `side` of the dot.
WeightProof ProveSide(const HloInstruction *dot, int64_t side, WeightProvenance &provenance) {
  AllGatherOnSide found = FindAllGatherOnSide(dot, side);
  if (!found.ag || found.operand_index < 0 || found.operand_index >= found.ag->operand_count())
    return WeightProof{};
  return provenance.Prove(found.ag->operand(found.operand_index));
}

/// Steps 3-4: which matcher wins, which side is the weight, and whether that
/// side is proven to be one. Sets plan.matcher, weight_side, weight_operand,
/// activation, ag and, in provenance mode, proof.
Reason ChooseWeightSide(HloInstruction *dot, const Matches &m,
                        const CollectiveMatmulOptions &options, WeightProvenance *provenance,
                        Plan &plan) {
  HloInstruction *ag = nullptr;
  if (m.lhs || m.lhs_rs) {
    plan.matcher = m.lhs ? "MatchAllGatherInDotLhs" : "MatchAllGatherInDotLhsRS";
    plan.weight_side = 0;
    if (WeightInLHS(dot)) {
      if (provenance)
        plan.proof = "WeightInLHS";
    } else if (!provenance) {
      return std::string(
          "weight side not a parameter: the lhs all-gather operand does not reach a "
          "parameter through convert/reshape/bitcast/get-tuple-element "
          "(NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE does not apply to lhs all-gathers)");
    } else if (WeightProof proof = ProveSide(dot, 0, *provenance); proof.IsWeight()) {
      plan.proof = proof.Describe();
    } else {
      return "weight side not a parameter: the lhs all-gather operand does not reach a "
             "parameter through convert/reshape/bitcast/get-tuple-element and is not a "
             "weight: " + proof.Reason() +
             " (NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE does not apply to lhs all-gathers)";
    }
  } else if (m.rhs) {
    plan.matcher = "MatchAllGatherInDotRhs";
    plan.weight_side = 1;
    if (!provenance) {
      if (!WeightInRHS(dot) && !WeightInLHS(dot) && !options.permute_aggressive)
        return std::string("weight side not a parameter, set "
                           "NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE=1 to fold anyway");
    } else if (WeightInRHS(dot)) {
      plan.proof = "WeightInRHS";
    } else if (WeightProof proof = ProveSide(dot, 1, *provenance); proof.IsWeight()) {
      plan.proof = proof.Describe();
    } else if (WeightInLHS(dot)) {
      plan.proof = "WeightInLHS";
    } else if (options.permute_aggressive) {
      plan.proof = "NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE=1 (unproven: " + proof.Reason() + ")";
    } else {
      return "weight side not a parameter and not a weight: " + proof.Reason() +
             "; set NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE=1 to fold anyway";
    }
  } else if (m.lhs_nxd) {
    plan.matcher = "MatchAllGatherInDotLhsNxD";
    plan.weight_side = 0;
    if (provenance)
      plan.proof = "the matcher (MatchAllGatherInDotLhsNxD needs no proof)";
  } else {
    plan.matcher = "MatchAllGatherInDotRhsRS";
    if (provenance)
      plan.proof = "the matcher (MatchAllGatherInDotRhsRS needs no proof)";
    // Neuron's pass takes operand 0 as the weight here; loom takes the
    // operand that carries the all-gather unless asked to follow Neuron.
    plan.weight_side = options.compat ? 0 : 1;
    if (options.compat) {
      ag = GetRootAllGather(dot->mutable_operand(0), 4);
      if (!ag)
        return std::string("(--neuron-compat) RhsRS: operand 0 reaches no all-gather");
    }
  }
  plan.weight_operand = dot->mutable_operand(plan.weight_side);
  plan.activation = dot->mutable_operand(1 - plan.weight_side);
  if (!ag)
    ag = FindAllGatherOnSide(dot, plan.weight_side).ag;
  if (!ag) // cannot happen after a matcher; never dereference a missing one
    return "no all-gather on the " + std::string(SideName(plan.weight_side));
  plan.ag = ag;
  if (llvm::Error e = TraceWeightPath(plan.weight_operand, ag, &plan.ag_operand_index))
    return TakeMessage(std::move(e));
  return std::nullopt;
}

/// Steps 5-6: the NeuronX Distributed operand gate and the all-gather rule
/// (dimension > 1, or a rank-3 operand 0). Sets plan.ag_dimension.
Reason CheckAllGather(const CollectiveMatmulOptions &options, Plan &plan) {
  const HloInstruction &ag = *plan.ag;
  if (options.nxd && ag.operand_count() > 5)
    return "more than 5 all-gather operands under NEURON_COLLECTIVE_MATMUL_NXD (" + Ref(&ag) +
           " has " + std::to_string(ag.operand_count()) + ")";
  auto dim = GetCollectiveDimension(ag);
  if (!dim)
    return "cannot read the all-gather dimension: " + TakeMessage(dim.takeError());
  plan.ag_dimension = *dim;
  if (ag.operand_count() == 0)
    return "all-gather " + Ref(&ag) + " has no operand";
  if (plan.ag_dimension > 1)
    return std::nullopt;
  const Shape &gathered = ag.operand(0)->shape();
  int64_t rank = gathered.IsArray() ? gathered.rank() : -1;
  if (rank != 3)
    return "all-gather dimension " + std::to_string(plan.ag_dimension) + " with rank-" +
           std::to_string(rank) + " operand (needs dimension > 1 or a rank-3 operand)";
  return std::nullopt;
}

/// Provenance mode, merged contraction: the dot reads the all-gather itself
/// (so its dimensions are the all-gather's), the all-gather dimension is
/// not contracted, and both operands are static arrays. Sets the merged
/// shapes and replaces plan.dnums by the merged dimension numbers.
Reason MergeContraction(Plan &plan) {
  DotDimensionNumbers &d = plan.dnums;
  const auto &weight_dims =
      plan.weight_side == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  if (plan.weight_operand != plan.ag)
    return "not merged: the " + std::string(SideName(plan.weight_side)) + " is " +
           plan.weight_operand->OpcodeText() + " " + Ref(plan.weight_operand) + " of " +
           Ref(plan.ag) + "; contracting dimensions merge only when the dot reads the "
           "all-gather itself";
  if (llvm::is_contained(weight_dims, plan.ag_dimension))
    return "not merged: the all-gather dimension " + std::to_string(plan.ag_dimension) +
           " is one of the " + SideName(plan.weight_side) + " contracting dimensions " +
           FormatIntList(weight_dims);
  const Shape &weight = plan.weight_operand->shape();
  const Shape &activation = plan.activation->shape();
  if (!weight.IsArray() || !activation.IsArray() || !weight.is_static() ||
      !activation.is_static())
    return std::string("not merged: the dot operands must be static arrays");
  const HloInstruction *lhs = plan.weight_side == 0 ? plan.weight_operand : plan.activation;
  const HloInstruction *rhs = plan.weight_side == 0 ? plan.activation : plan.weight_operand;
  const int64_t count = static_cast<int64_t>(d.lhs_contracting_dimensions.size());
  const int64_t lhs_first = d.lhs_contracting_dimensions.front();
  const int64_t rhs_first = d.rhs_contracting_dimensions.front();
  Shape lhs_shape = MergeDimensions(lhs->shape(), lhs_first, count);
  Shape rhs_shape = MergeDimensions(rhs->shape(), rhs_first, count);
  auto merged = std::make_unique<Plan::Merged>();
  merged->from = "lhs_contracting_dims=" + FormatIntList(d.lhs_contracting_dimensions) +
                     " rhs_contracting_dims=" + FormatIntList(d.rhs_contracting_dimensions);
  auto shift = [count](std::vector<int64_t> &dims, int64_t first) {
    for (int64_t &b : dims)
      if (b > first)
        b -= count - 1;
  };
  shift(d.lhs_batch_dimensions, lhs_first);
  shift(d.rhs_batch_dimensions, rhs_first);
  d.lhs_contracting_dimensions = {lhs_first};
  d.rhs_contracting_dimensions = {rhs_first};
  merged->weight = plan.weight_side == 0 ? lhs_shape : rhs_shape;
  merged->activation = plan.weight_side == 0 ? rhs_shape : lhs_shape;
  plan.merged = std::move(merged);
  return std::nullopt;
}

/// Step 7: the local weight, its gathered shape and the dot operand are
/// shapes the custom-call can carry. Sets plan.local_weight and
/// gathered_shape.
Reason CheckWeightShapes(Plan &plan) {
  const HloInstruction &ag = *plan.ag;
  const int64_t index = plan.ag_operand_index;
  if (index < 0 || index >= ag.operand_count())
    return "get-tuple-element index " + std::to_string(index) +
           " is out of range for all-gather " + Ref(&ag);
  plan.local_weight = plan.ag->mutable_operand(index);
  if (ag.shape().IsTuple()) {
    if (index >= ag.shape().tuple_shapes_size())
      return "all-gather " + Ref(&ag) + " has no result element " + std::to_string(index);
    plan.gathered_shape = &ag.shape().tuple_shapes(index);
  } else {
    plan.gathered_shape = &ag.shape();
  }
  const Shape &local = plan.local_weight->shape();
  const Shape &gathered = *plan.gathered_shape;
  const Shape &seen = plan.WeightOperandShape();
  if (!local.IsArray() || !gathered.IsArray() || !seen.IsArray() || !local.is_static() ||
      !gathered.is_static() || !seen.is_static())
    return std::string("the weight shapes must be static arrays");
  if (local.rank() == 0 || local.dimensions().back() == 0)
    return "the local weight " + local.ToString(false) +
           " has no innermost dimension to contract";
  if (seen.element_type() != local.element_type() ||
      seen.element_count() != gathered.element_count())
    return "the weight operand " + seen.ToString(false) +
           " is not a reshape of the gathered weight " + gathered.ToString(false);
  return std::nullopt;
}

/// How many shards the all-gather stacks along its dimension, from the
/// local and gathered shapes of the operand the dot reads; 1 when they
/// cannot say.
int64_t ShardCount(const Plan &plan) {
  const Shape &local = plan.local_weight->shape();
  if (plan.ag_dimension < 0 || plan.ag_dimension >= local.rank() ||
      plan.ag_dimension >= plan.gathered_shape->rank())
    return 1;
  int64_t shard = local.dimensions()[plan.ag_dimension];
  return shard > 0 ? plan.gathered_shape->dimensions()[plan.ag_dimension] / shard : 1;
}

/// Step 8: expands the replica groups and checks that tp_degree/num_groups
/// describe them (decision 3). Sets plan.groups, tp_degree and num_groups.
Reason ResolveReplicaGroups(const CollectiveMatmulOptions &options, Plan &plan) {
  const HloInstruction &ag = *plan.ag;
  auto groups = GetReplicaGroups(ag);
  if (!groups)
    return "cannot read the replica groups: " + TakeMessage(groups.takeError());
  plan.groups = std::move(groups->groups);
  plan.channel_id = GetChannelId(ag);
  plan.use_global_device_ids = GetUseGlobalDeviceIds(ag);
  const GroupMode mode = GetGroupMode(plan.channel_id, plan.use_global_device_ids);
  const int64_t partitions = NumPartitions(ag);
  if (plan.groups.empty()) {
    std::optional<std::vector<int64_t>> all =
        ImplicitGroup(ag, mode, partitions, ShardCount(plan));
    if (!all)
      return std::string("the module's device count is too large to expand the implicit "
                         "replica group");
    plan.groups.push_back(std::move(*all));
  }
  if (plan.groups.front().empty())
    return std::string("the first replica group is empty");
  if (!options.compat && partitions > 1 && mode == GroupMode::kCrossReplicaAndPartition)
    return "all-gather with channel_id and without use_global_device_ids gathers every one "
           "of the " + std::to_string(partitions) +
           " partitions of each replica group: tp_degree/num_groups cannot express it";
  plan.tp_degree = static_cast<int64_t>(plan.groups.front().size());
  plan.num_groups = static_cast<int64_t>(plan.groups.size());
  // The contract's rule (docs/collective-matmul-contract.md, "What the
  // verifier checks"): the gathered weight is the local one with the
  // all-gather dimension times the group, every partition of each replica
  // group included without global ids. An all-gather whose result says
  // otherwise (a module read without verification) is declined, not folded
  // into a custom-call that fails the verifier.
  int64_t group = plan.tp_degree;
  if (mode == GroupMode::kCrossReplicaAndPartition &&
      __builtin_mul_overflow(group, partitions, &group))
    return std::string("the all-gather's group size overflows");
  const Shape &local = plan.local_weight->shape();
  const int64_t d = plan.ag_dimension;
  int64_t gathered_size;
  if (d < 0 || d >= local.rank() || d >= plan.gathered_shape->rank() ||
      __builtin_mul_overflow(local.dimensions(d), group, &gathered_size) ||
      gathered_size != plan.gathered_shape->dimensions(d))
    return "the all-gather makes " + plan.gathered_shape->ToString(false) + " from " +
           local.ToString(false) + ", not dimension " + std::to_string(d) +
           " multiplied by its group size " + std::to_string(group);
  if (!options.compat && !AreContiguous(plan.groups))
    return "non-contiguous replica groups " + FormatReplicaGroups(plan.groups) +
           ": tp_degree/num_groups cannot express them";
  return std::nullopt;
}

/// Step 1 without its details: a two-operand dot with an all-gather within
/// GetRootAllGather's depth of either operand. Each matcher's shape puts its
/// all-gather there (one or two operand-0 hops from the dot's operand), so
/// no other instruction can match or be declined.
bool ReachesAllGather(const HloInstruction *dot) {
  if (dot->opcode() != HloOpcode::kDot || dot->operand_count() != 2)
    return false;
  return GetRootAllGather(dot->operands()[0], 4) || GetRootAllGather(dot->operands()[1], 4);
}

/// The checks of docs/collective-matmul.md, in neuronx-cc 2.24's order; the first
/// one that fails is the remark's reason.
Analysis Analyze(HloInstruction *dot, const CollectiveMatmulOptions &options,
                 WeightProvenance *provenance) {
  if (dot->opcode() != HloOpcode::kDot || dot->operand_count() != 2)
    return {};
  // 1. Reach: a matcher, or an all-gather within GetRootAllGather's depth.
  const Matches matches = RunMatchers(dot);
  HloInstruction *reach0 = GetRootAllGather(dot->mutable_operand(0), 4);
  HloInstruction *reach1 = GetRootAllGather(dot->mutable_operand(1), 4);
  if (!matches.any() && !reach0 && !reach1)
    return {};

  Plan plan;
  auto dnums = GetDotDimensionNumbers(*dot);
  if (!dnums)
    return Missed("cannot read the dot dimension numbers: " + TakeMessage(dnums.takeError()));
  plan.dnums = std::move(*dnums);
  Reason reason = CheckContractingDims(plan.dnums);                     // 2
  // Provenance mode: several contracting dimensions may merge into one;
  // why they do not is said after why one is needed.
  Reason unmerged; // set: the dimensions are to be merged
  if (reason && provenance) {
    if (Reason why_not = CheckMergeable(plan.dnums)) {
      reason = *reason + "; " + *why_not;
    } else {
      unmerged = std::move(reason);
      reason.reset();
    }
  }
  if (!reason && !matches.any())                                        // 3
    reason = reach0 ? NoMatcherReason(dot, 0, reach0) : NoMatcherReason(dot, 1, reach1);
  if (!reason)
    reason = ChooseWeightSide(dot, matches, options, provenance, plan); // 3-4
  if (!reason)
    reason = CheckAllGather(options, plan);                             // 5-6
  if (!reason && unmerged)
    if (Reason why_not = MergeContraction(plan))
      reason = *unmerged + "; " + *why_not;
  if (!reason)
    reason = CheckWeightShapes(plan);                                   // 7
  if (!reason)
    reason = ResolveReplicaGroups(options, plan);                       // 8
  if (reason)
    return Missed(*reason);

  // 9. The kernel variant, from the weight as the dot sees it.
  plan.use_sb_to_sb = FitsSbToSb(plan.WeightOperandShape(), options.sb_to_sb_threshold_in_mb);
  // The attributes the custom-call carries over, found in one walk (the
  // first text attribute of each name, as FindAttribute finds it).
  bool has_frontend_attributes = false;
  for (const HloInstruction::Attribute &a : dot->attributes()) {
    if (a.kind != HloInstruction::AttributeKind::kText)
      continue;
    if (!plan.dot_sharding && a.name == "sharding")
      plan.dot_sharding = ShareText(a.value);
    else if (!plan.dot_metadata && a.name == "metadata")
      plan.dot_metadata = ShareText(a.value);
    else if (a.name == "frontend_attributes")
      has_frontend_attributes = true;
  }
  if (has_frontend_attributes) {
    auto fe = GetFrontendAttributes(*dot);
    if (!fe)
      return Missed("cannot read the dot's frontend_attributes: " +
                    TakeMessage(fe.takeError()));
    plan.dot_frontend_attributes = std::move(*fe);
  }

  Analysis result;
  result.kind = Analysis::kFuse;
  result.plan = std::move(plan);
  return result;
}

/// The frontend_attributes text of the custom-call: the dot's own first,
/// then the loom_* keys of docs/collective-matmul-contract.md, encoded from
/// the plan and the matched instructions in place.
HloText FrontendAttributesText(const Plan &plan) {
  collective_matmul::LoomAttributesRef loom;
  loom.weight_side = plan.weight_side == 0 ? collective_matmul::WeightSide::kLhs
                                           : collective_matmul::WeightSide::kRhs;
  loom.dnums = &plan.dnums;
  loom.all_gather_dimension = plan.ag_dimension;
  loom.replica_groups = &plan.groups;
  loom.channel_id = plan.channel_id;
  loom.use_global_device_ids = plan.use_global_device_ids;
  loom.local_weight_shape = &plan.local_weight->shape();
  loom.gathered_weight_shape = plan.gathered_shape;
  loom.weight_operand_shape = &plan.WeightOperandShape();
  llvm::SmallString<512> text;
  collective_matmul::EncodeFrontendAttributes(plan.dot_frontend_attributes, loom, text);
  return HloText(text.str());
}


/// backend_config as the custom-call keeps it: QuoteString of the encoded
/// keys, quoted in place (its keys, signs, `=`, `,` and digits have nothing
/// to escape), one copy.
HloText QuotedBackendConfig(const Plan &plan) {
  llvm::SmallString<96> quoted;
  quoted.push_back('"');
  quoted += plan.BackendConfig();
  quoted.push_back('"');
  return HloText(quoted.str());
}

/// The plan of a match still describes the dot: its operands, the chain to
/// the all-gather and the local weight are the instructions analyzed. An
/// expansion rewires only the users of the dot it replaces, and the
/// decision reads nothing else an expansion can change (the proofs stop at
/// a dot or custom-call either way), so an intact plan is the one Analyze
/// would give again.
bool PlanIsIntact(const HloInstruction *dot, const Plan &plan) {
  if (dot->operand_count() != 2 || dot->operand(plan.weight_side) != plan.weight_operand ||
      dot->operand(1 - plan.weight_side) != plan.activation)
    return false;
  const HloInstruction *cur = plan.weight_operand;
  for (int hop = 0; cur != plan.ag; ++hop) {
    if (hop > 4 || cur->operand_count() == 0)
      return false;
    cur = cur->operand(0);
  }
  return plan.ag_operand_index < plan.ag->operand_count() &&
         plan.ag->operand(plan.ag_operand_index) == plan.local_weight;
}

} // namespace

struct NeuronLoopedEinsumReplacer::State {
  /// Plans of the matches of the computation being rewritten: `plans` holds
  /// the plan of every match made in it (reused from one computation to
  /// the next), `plan_index` the one that stands for each match. A deque: a
  /// module has tens of thousands of matches, and a plan stays where it is
  /// while more are added.
  const HloComputation *computation = nullptr;
  std::deque<Plan> plans;
  llvm::SmallDenseMap<const HloInstruction *, uint32_t, 8> plan_index;
  std::unique_ptr<WeightProvenance> provenance;
  /// An expansion happened since the provenance answers were computed.
  bool provenance_stale = false;

  void ClearPlans() {
    plans.clear();
    plan_index.clear();
  }
  void Clear() {
    computation = nullptr;
    ClearPlans();
    provenance.reset();
    provenance_stale = false;
  }
};

NeuronLoopedEinsumReplacer::NeuronLoopedEinsumReplacer(const CollectiveMatmulOptions &options)
    : options_(options), state_(std::make_unique<State>()) {}

NeuronLoopedEinsumReplacer::~NeuronLoopedEinsumReplacer() = default;

llvm::Expected<bool> NeuronLoopedEinsumReplacer::Run(HloModule &module) {
  state_->Clear();
  if (options_.provenance)
    state_->provenance = std::make_unique<WeightProvenance>(module);
  llvm::Expected<bool> changed = OpExpanderPass::Run(module);
  state_->Clear();
  return changed;
}

bool NeuronLoopedEinsumReplacer::IsCandidate(const HloInstruction *inst) const {
  return ReachesAllGather(inst);
}

bool NeuronLoopedEinsumReplacer::InstructionMatchesPattern(HloInstruction *inst) {
  State &state = *state_;
  if (inst->parent() != state.computation) {
    state.computation = inst->parent();
    state.ClearPlans();
  }
  // The driver asks again right before expanding: an intact plan stands.
  if (auto it = state.plan_index.find(inst); it != state.plan_index.end()) {
    if (PlanIsIntact(inst, state.plans[it->second]))
      return true;
    state.plan_index.erase(it);
    state.provenance_stale = true;
  }
  WeightProvenance *provenance = state.provenance.get();
  if (provenance && state.provenance_stale) {
    provenance->Reset();
    state.provenance_stale = false;
  }
  Analysis analysis = Analyze(inst, options_, provenance);
  if (analysis.kind == Analysis::kMissed)
    Remark(*inst, "missed: " + analysis.reason);
  if (analysis.kind != Analysis::kFuse)
    return false;
  state.plan_index[inst] = static_cast<uint32_t>(state.plans.size());
  state.plans.push_back(std::move(analysis.plan));
  return true;
}

llvm::Expected<HloInstruction *>
NeuronLoopedEinsumReplacer::ExpandInstruction(HloInstruction *dot) {
  auto it = state_->plan_index.find(dot);
  if (it == state_->plan_index.end())
    return makeError("neuron_looped_einsum_replacer: '" + dot->name() +
                     "' was expanded without a match");
  const uint32_t index = it->second;
  Plan &plan = state_->plans[index];
  state_->plan_index.erase(it);
  state_->provenance_stale = true;
  HloComputation *computation = dot->parent();

  // Operand 0: the local shard as [E / K, K], K its innermost dimension.
  const Shape &local = plan.local_weight->shape();
  const int64_t k = local.dimensions().back();
  Shape matrix(local.element_type(), {local.element_count() / k, k});
  if (local.has_layout())
    matrix.set_layout(Shape::DefaultLayout(2));
  HloInstruction *weight = computation->AddInstruction(
      HloInstruction::Create(HloOpcode::kReshape, matrix, {plan.local_weight}));

  // Attributes in XLA's print order. The dot's sharding and metadata carry
  // over (XLA's ReplaceInstruction copies both onto a replacement without
  // its own), and so do its frontend attributes, ahead of the loom_* keys.
  // Merged contraction: the activation as the merged dot reads it.
  HloInstruction *activation = plan.activation;
  if (plan.merged)
    activation = computation->AddInstruction(HloInstruction::Create(
        HloOpcode::kReshape, plan.merged->activation, {plan.activation}));
  auto call =
      HloInstruction::Create(HloOpcode::kCustomCall, dot->shape(), {weight, activation});
  // The prefix AddInstruction names the call from: a view, not a copy.
  call->SetNameView("collective-matmul");
  static const std::string quoted_target = QuoteString(collective_matmul::kTarget);
  call->mutable_attributes().reserve(5); // grown once, not per attribute
  call->SetAttributeStaticName("custom_call_target", HloText::View(quoted_target));
  if (plan.dot_sharding)
    call->SetAttributeStaticName("sharding", std::move(*plan.dot_sharding));
  call->SetAttributeStaticName("frontend_attributes", FrontendAttributesText(plan));
  if (plan.dot_metadata)
    call->SetAttributeStaticName("metadata", std::move(*plan.dot_metadata));
  call->SetAttributeStaticName("backend_config", QuotedBackendConfig(plan));
  const int64_t rhs_contracting_dim = plan.dnums.rhs_contracting_dimensions[0];
  HloInstruction *result = computation->AddInstruction(std::move(call));

  if (WantsRemark(*dot))
    Remark(*dot, "fused (" + llvm::Twine(plan.matcher) + ", tp_degree=" +
                     llvm::Twine(plan.tp_degree) + ", num_groups=" + llvm::Twine(plan.num_groups) +
                     ", rhs_contracting_dim=" + llvm::Twine(rhs_contracting_dim) +
                     ", use_sb_to_sb=" + (plan.use_sb_to_sb ? "1" : "0") +
                     (plan.merged ? ", merged " + plan.merged->from : std::string()) +
                     ", weight=" + SideName(plan.weight_side) +
                     (plan.proof.empty() ? std::string() : " via " + plan.proof) + ")");
  // Spent: its memory goes back while the other matches are expanded.
  state_->plans[index] = Plan();
  return result;
}

} // namespace loom::hlo
