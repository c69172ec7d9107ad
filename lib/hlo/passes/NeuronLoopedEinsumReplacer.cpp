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

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/passes/CollectiveMatmulMatchers.h"
#include "loom/support/Error.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::hlo {
namespace {

constexpr const char kTarget[] = "AwsNeuronCollectiveMatmul";

/// Everything the rewrite needs, decided before anything is mutated.
struct Plan {
  const char *matcher = "";
  int64_t weight_side = 0; // 0: lhs, 1: rhs
  HloInstruction *weight_operand = nullptr; // the dot's operand on that side
  HloInstruction *activation = nullptr;     // the dot's other operand
  HloInstruction *ag = nullptr;
  int64_t ag_operand_index = 0;
  HloInstruction *local_weight = nullptr; // ag->operand(ag_operand_index)
  Shape gathered_shape;                   // that operand's all-gather result
  DotDimensionNumbers dnums;
  int64_t ag_dimension = 0;
  std::vector<std::vector<int64_t>> groups; // expanded
  int64_t tp_degree = 0;
  int64_t num_groups = 0;
  bool use_sb_to_sb = false;
  std::vector<std::pair<std::string, std::string>> dot_frontend_attributes;

  std::string BackendConfig() const {
    return "rhs_contracting_dim=" + std::to_string(dnums.rhs_contracting_dimensions[0]) +
           ",tp_degree=" + std::to_string(tp_degree) +
           ",num_groups=" + std::to_string(num_groups) +
           ",use_sb_to_sb=" + (use_sb_to_sb ? "1" : "0");
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

std::string Ref(const HloInstruction *inst) { return "%" + inst->name(); }

const char *SideName(int64_t side) { return side == 0 ? "lhs" : "rhs"; }

/// XLA's participant modes of an all-gather: what the ids in replica_groups
/// name and who takes part in one group.
enum class GroupMode {
  kCrossReplica,             // no channel_id: replica ids, within one partition
  kCrossReplicaAndPartition, // channel_id: replica ids, each group spanning every partition
  kFlattenedId,              // channel_id + use_global_device_ids: global device ids
};

GroupMode GetGroupMode(const HloInstruction &ag) {
  if (!GetChannelId(ag))
    return GroupMode::kCrossReplica;
  return GetUseGlobalDeviceIds(ag) ? GroupMode::kFlattenedId
                                   : GroupMode::kCrossReplicaAndPartition;
}

int64_t ReplicaCount(const HloInstruction &ag) {
  const HloModule *module = ag.parent() ? ag.parent()->parent() : nullptr;
  return module ? module->replica_count() : 1;
}

int64_t NumPartitions(const HloInstruction &ag) {
  const HloModule *module = ag.parent() ? ag.parent()->parent() : nullptr;
  return module ? module->num_partitions() : 1;
}

/// Implicit groups larger than this are declined rather than materialised.
constexpr int64_t kMaxImplicitGroupSize = int64_t(1) << 20;

/// The one group an absent or empty replica_groups stands for, in the ids
/// of the mode: every replica, or every device for flattened ids. nullopt
/// when the module claims more devices than kMaxImplicitGroupSize.
std::optional<std::vector<int64_t>> ImplicitGroup(const HloInstruction &ag) {
  int64_t n = ReplicaCount(ag);
  if (GetGroupMode(ag) == GroupMode::kFlattenedId &&
      __builtin_mul_overflow(n, NumPartitions(ag), &n))
    return std::nullopt;
  if (n < 1 || n > kMaxImplicitGroupSize)
    return std::nullopt;
  std::vector<int64_t> all;
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
  for (HloInstruction *cur = weight_operand; cur != ag; cur = cur->operand(0)) {
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
      return makeError("the path from the " + llvm::Twine("weight operand to ") + Ref(ag) +
                       " passes through " + cur->OpcodeText() + " " + Ref(cur) +
                       ", which the custom-call cannot express");
  }
  return llvm::Error::success();
}

std::string TakeMessage(llvm::Error error) { return llvm::toString(std::move(error)); }

Analysis Analyze(HloInstruction *dot, const CollectiveMatmulOptions &options) {
  if (dot->opcode() != HloOpcode::kDot || dot->operand_count() != 2)
    return {};
  const bool lhs_rs = MatchAllGatherInDotLhsRS(dot);
  const bool lhs = MatchAllGatherInDotLhs(dot);
  const bool rhs_rs = MatchAllGatherInDotRhsRS(dot);
  const bool rhs = MatchAllGatherInDotRhs(dot);
  const bool lhs_nxd = MatchAllGatherInDotLhsNxD(dot);
  HloInstruction *reach0 = GetRootAllGather(dot->operand(0), 4);
  HloInstruction *reach1 = GetRootAllGather(dot->operand(1), 4);
  const bool any_matcher = lhs_rs || lhs || rhs_rs || rhs || lhs_nxd;
  if (!any_matcher && !reach0 && !reach1)
    return {};

  // Steps as numbered in docs/collective-matmul.md. 1 (reach) is above.
  // 2. A single contraction axis on each side (the list sizes, not values).
  auto dnums = GetDotDimensionNumbers(*dot);
  if (!dnums)
    return Missed("cannot read the dot dimension numbers: " + TakeMessage(dnums.takeError()));
  if (size_t n = dnums->lhs_contracting_dimensions.size(); n != 1)
    return Missed("lhs has " + llvm::Twine(n) + " contracting dimensions (needs exactly 1)");
  if (size_t n = dnums->rhs_contracting_dimensions.size(); n != 1)
    return Missed("rhs has " + llvm::Twine(n) + " contracting dimensions (needs exactly 1)");

  // 3-4. One of the five shapes, and which side is the weight.
  Plan plan;
  plan.dnums = std::move(*dnums);
  if (!any_matcher) {
    const int64_t side = reach0 ? 0 : 1;
    HloInstruction *ag = reach0 ? reach0 : reach1;
    // e.g. convert(negate(all-gather %ag)), outermost first.
    std::string prefix, suffix;
    for (HloInstruction *cur = dot->operand(side); cur != ag; cur = cur->operand(0)) {
      prefix += cur->OpcodeText() + "(";
      suffix += ")";
    }
    std::string shape = prefix + "all-gather " + Ref(ag) + suffix;
    return Missed("no matcher applies: the " + llvm::Twine(SideName(side)) + " is " + shape +
                  "; only all-gather and reshape(all-gather) on either side, or "
                  "reshape(get-tuple-element(all-gather)) on the lhs, fold");
  }
  HloInstruction *ag = nullptr;
  if (lhs || lhs_rs) {
    plan.matcher = lhs ? "MatchAllGatherInDotLhs" : "MatchAllGatherInDotLhsRS";
    plan.weight_side = 0;
    if (!WeightInLHS(dot))
      return Missed("weight side not a parameter: the lhs all-gather operand does not reach a "
                    "parameter through convert/reshape/bitcast/get-tuple-element "
                    "(NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE does not apply to lhs all-gathers)");
  } else if (rhs) {
    plan.matcher = "MatchAllGatherInDotRhs";
    plan.weight_side = 1;
    if (!WeightInRHS(dot) && !WeightInLHS(dot) && !options.permute_aggressive)
      return Missed("weight side not a parameter; set NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE=1 to "
                    "fold anyway");
  } else if (lhs_nxd) {
    plan.matcher = "MatchAllGatherInDotLhsNxD";
    plan.weight_side = 0;
  } else {
    plan.matcher = "MatchAllGatherInDotRhsRS";
    // Neuron's pass takes operand 0 as the weight here; loom takes the
    // operand that carries the all-gather unless asked to follow Neuron.
    plan.weight_side = options.compat ? 0 : 1;
    if (options.compat) {
      ag = reach0;
      if (!ag)
        return Missed("(--neuron-compat) RhsRS: operand 0 reaches no all-gather");
    }
  }
  plan.weight_operand = dot->operand(plan.weight_side);
  plan.activation = dot->operand(1 - plan.weight_side);
  if (!ag)
    ag = FindAllGatherOnSide(dot, plan.weight_side).ag;
  if (!ag) // cannot happen after a matcher; never dereference a missing one
    return Missed("no all-gather on the " + llvm::Twine(SideName(plan.weight_side)));
  plan.ag = ag;
  if (llvm::Error e = TraceWeightPath(plan.weight_operand, ag, &plan.ag_operand_index))
    return Missed(TakeMessage(std::move(e)));

  // 5. NeuronX Distributed gate on combined all-gathers.
  if (options.nxd && ag->operand_count() > 5)
    return Missed("all-gather has " + llvm::Twine(ag->operand_count()) +
                  " operands (more than 5) under NEURON_COLLECTIVE_MATMUL_NXD");

  // 6. All-gather dimension > 1, or a rank-3 gathered operand.
  auto dim = GetCollectiveDimension(*ag);
  if (!dim)
    return Missed("cannot read the all-gather dimension: " + TakeMessage(dim.takeError()));
  plan.ag_dimension = *dim;
  if (ag->operand_count() == 0)
    return Missed("all-gather " + Ref(ag) + " has no operand");
  if (plan.ag_dimension <= 1) {
    int64_t rank = ag->operand(0)->shape().IsArray() ? ag->operand(0)->shape().rank() : -1;
    if (rank != 3)
      return Missed("all-gather dimension " + llvm::Twine(plan.ag_dimension) + " with rank-" +
                    llvm::Twine(rank) +
                    " operand (needs dimension > 1 or a rank-3 operand)");
  }

  // 7. Shapes the custom-call can carry.
  if (plan.ag_operand_index < 0 || plan.ag_operand_index >= ag->operand_count())
    return Missed("get-tuple-element index " + llvm::Twine(plan.ag_operand_index) +
                  " is out of range for all-gather " + Ref(ag));
  plan.local_weight = ag->operand(plan.ag_operand_index);
  if (ag->shape().IsTuple()) {
    if (plan.ag_operand_index >= ag->shape().tuple_shapes_size())
      return Missed("all-gather " + Ref(ag) + " has no result element " +
                    llvm::Twine(plan.ag_operand_index));
    plan.gathered_shape = ag->shape().tuple_shapes(plan.ag_operand_index);
  } else {
    plan.gathered_shape = ag->shape();
  }
  const Shape &local = plan.local_weight->shape();
  const Shape &seen = plan.weight_operand->shape();
  if (!local.IsArray() || !plan.gathered_shape.IsArray() || !seen.IsArray() ||
      !local.is_static() || !plan.gathered_shape.is_static() || !seen.is_static())
    return Missed("the weight shapes must be static arrays");
  if (local.rank() == 0 || local.dimensions().back() == 0)
    return Missed("the local weight " + local.ToString(false) +
                  " has no innermost dimension to contract");
  if (seen.element_type() != local.element_type() ||
      seen.element_count() != plan.gathered_shape.element_count())
    return Missed("the weight operand " + seen.ToString(false) +
                  " is not a reshape of the gathered weight " +
                  plan.gathered_shape.ToString(false));

  // 8. Replica groups: tp_degree/num_groups only describe contiguous blocks.
  auto groups = GetReplicaGroups(*ag);
  if (!groups)
    return Missed("cannot read the replica groups: " + TakeMessage(groups.takeError()));
  plan.groups = std::move(groups->groups);
  if (plan.groups.empty()) {
    std::optional<std::vector<int64_t>> all = ImplicitGroup(*ag);
    if (!all)
      return Missed("the module's device count is too large to expand the implicit replica "
                    "group");
    plan.groups.push_back(std::move(*all));
  }
  if (plan.groups.front().empty())
    return Missed("the first replica group is empty");
  if (int64_t partitions = NumPartitions(*ag);
      !options.compat && partitions > 1 &&
      GetGroupMode(*ag) == GroupMode::kCrossReplicaAndPartition)
    return Missed("all-gather with channel_id and without use_global_device_ids gathers every "
                  "one of the " + llvm::Twine(partitions) +
                  " partitions of each replica group: tp_degree/num_groups cannot express it");
  plan.tp_degree = static_cast<int64_t>(plan.groups.front().size());
  plan.num_groups = static_cast<int64_t>(plan.groups.size());
  if (!options.compat && !AreContiguous(plan.groups))
    return Missed("non-contiguous replica groups " + FormatReplicaGroups(plan.groups) +
                  ": tp_degree/num_groups cannot express them");

  // 9. The kernel variant, from the weight as the dot sees it.
  plan.use_sb_to_sb = FitsSbToSb(seen, options.sb_to_sb_threshold_in_mb);

  auto fe = GetFrontendAttributes(*dot);
  if (!fe)
    return Missed("cannot read the dot's frontend_attributes: " + TakeMessage(fe.takeError()));
  plan.dot_frontend_attributes = std::move(*fe);

  Analysis result;
  result.kind = Analysis::kFuse;
  result.plan = std::move(plan);
  return result;
}

std::string Location(const HloInstruction *inst) {
  std::string computation = inst->parent() ? inst->parent()->name() : "";
  return computation + "/" + inst->name();
}

/// The frontend_attributes of the custom-call: the dot's own first, then the
/// loom_* keys of docs/collective-matmul-contract.md.
std::vector<std::pair<std::string, std::string>> FrontendAttributes(const Plan &plan) {
  std::vector<std::pair<std::string, std::string>> attrs;
  for (const auto &kv : plan.dot_frontend_attributes)
    if (!llvm::StringRef(kv.first).startswith("loom_"))
      attrs.push_back(kv);
  const HloInstruction &ag = *plan.ag;
  attrs.emplace_back("loom_weight_side", SideName(plan.weight_side));
  attrs.emplace_back("loom_lhs_batch_dims", FormatIntList(plan.dnums.lhs_batch_dimensions));
  attrs.emplace_back("loom_rhs_batch_dims", FormatIntList(plan.dnums.rhs_batch_dimensions));
  attrs.emplace_back("loom_lhs_contracting_dims",
                     FormatIntList(plan.dnums.lhs_contracting_dimensions));
  attrs.emplace_back("loom_rhs_contracting_dims",
                     FormatIntList(plan.dnums.rhs_contracting_dimensions));
  attrs.emplace_back("loom_all_gather_dimension", std::to_string(plan.ag_dimension));
  attrs.emplace_back("loom_replica_groups", FormatReplicaGroups(plan.groups));
  if (std::optional<int64_t> channel = GetChannelId(ag))
    attrs.emplace_back("loom_channel_id", std::to_string(*channel));
  attrs.emplace_back("loom_use_global_device_ids", GetUseGlobalDeviceIds(ag) ? "true" : "false");
  attrs.emplace_back("loom_local_weight_shape", plan.local_weight->shape().ToString(false));
  attrs.emplace_back("loom_gathered_weight_shape", plan.gathered_shape.ToString(false));
  attrs.emplace_back("loom_weight_operand_shape", plan.weight_operand->shape().ToString(false));
  return attrs;
}

} // namespace

llvm::Expected<bool> NeuronLoopedEinsumReplacer::Run(HloModule &module) {
  remarked_.clear();
  auto changed = OpExpanderPass::Run(module);
  remarked_.clear();
  return changed;
}

bool NeuronLoopedEinsumReplacer::InstructionMatchesPattern(HloInstruction *inst) {
  Analysis analysis = Analyze(inst, options_);
  if (analysis.kind == Analysis::kMissed && remark_stream() && remarked_.insert(inst).second)
    *remark_stream() << Location(inst) << ": missed: " << analysis.reason << "\n";
  return analysis.kind == Analysis::kFuse;
}

llvm::Expected<HloInstruction *>
NeuronLoopedEinsumReplacer::ExpandInstruction(HloInstruction *dot) {
  Analysis analysis = Analyze(dot, options_);
  if (analysis.kind != Analysis::kFuse)
    return makeError("neuron_looped_einsum_replacer: '" + dot->name() +
                     "' no longer matches: " + analysis.reason);
  const Plan &plan = analysis.plan;
  HloComputation *computation = dot->parent();

  // Operand 0: the local shard as [E / K, K], K its innermost dimension.
  const Shape &local = plan.local_weight->shape();
  const int64_t k = local.dimensions().back();
  Shape matrix(local.element_type(), {local.element_count() / k, k});
  if (local.has_layout())
    matrix.set_layout(Shape::DefaultLayout(2));
  HloInstruction *weight = computation->AddInstruction(
      HloInstruction::Create(HloOpcode::kReshape, matrix, {plan.local_weight}));

  auto call = HloInstruction::Create(HloOpcode::kCustomCall, dot->shape(),
                                     {weight, plan.activation}, "collective-matmul");
  call->SetAttribute("custom_call_target", QuoteString(kTarget));
  SetFrontendAttributes(*call, FrontendAttributes(plan));
  if (const std::string *metadata = dot->FindAttribute("metadata"))
    call->SetAttribute("metadata", *metadata);
  call->SetAttribute("backend_config", QuoteString(plan.BackendConfig()));
  HloInstruction *result = computation->AddInstruction(std::move(call));

  if (remark_stream() && remarked_.insert(dot).second)
    *remark_stream() << Location(dot) << ": fused (" << plan.matcher
                     << ", weight=" << SideName(plan.weight_side)
                     << ", tp_degree=" << plan.tp_degree << ", num_groups=" << plan.num_groups
                     << ", rhs_contracting_dim=" << plan.dnums.rhs_contracting_dimensions[0]
                     << ", use_sb_to_sb=" << (plan.use_sb_to_sb ? 1 : 0) << ")\n";
  return result;
}

} // namespace loom::hlo
