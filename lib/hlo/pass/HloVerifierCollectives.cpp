//===- HloVerifierCollectives.cpp - The shape rules of the collectives ----===//
//
// The group size of a collective as XLA derives it (replica groups, the
// module's replica and partition counts, use_global_device_ids), and the
// rules of all-gather, all-reduce, reduce-scatter and collective-permute
// and of the asynchronous -start/-done pairs (docs/hlo-verifier.md,
// "Collectives: replica groups and the group size").
//
//===----------------------------------------------------------------------===//
#include "HloVerifierInternal.h"

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <vector>

namespace loom::hlo::hlo_verifier {
namespace {

/// A set of device ids: a bit each for the small ids every real module
/// uses (no allocation), a hash set for the others.
class DeviceIdSet {
public:
  /// Whether `id` was not yet in the set.
  bool insert(int64_t id) {
    if (id < 0 || id >= kBits)
      return large_.insert(id).second;
    uint64_t bit = uint64_t(1) << (id % 64);
    if (small_[id / 64] & bit)
      return false;
    small_[id / 64] |= bit;
    ++small_count_;
    return true;
  }
  bool contains(int64_t id) const {
    if (id < 0 || id >= kBits)
      return large_.contains(id);
    return small_[id / 64] >> (id % 64) & 1;
  }
  size_t size() const { return small_count_ + large_.size(); }

private:
  static constexpr int64_t kBits = 256;
  uint64_t small_[kBits / 64] = {};
  size_t small_count_ = 0;
  llvm::DenseSet<int64_t> large_;
};

} // namespace

std::optional<int64_t> ComputationVerifier::CollectiveGroupSize(bool uniform_groups) {
  auto groups = GetReplicaGroups(*inst_);
  if (!groups) {
    FailAccessor(groups.takeError());
    return std::nullopt;
  }
  DeviceIdSet seen;
  for (const std::vector<int64_t> &group : groups->groups) {
    if (group.empty()) {
      Fail("replica_groups contains an empty group");
      return std::nullopt;
    }
    if (uniform_groups && group.size() != groups->groups.front().size()) {
      Fail("replica groups must all have the same size");
      return std::nullopt;
    }
    for (int64_t id : group) {
      if (!seen.insert(id)) {
        Fail("device " + llvm::Twine(id) + " appears twice in replica_groups");
        return std::nullopt;
      }
    }
  }
  bool has_channel = GetChannelId(*inst_).has_value();
  bool global_ids = GetUseGlobalDeviceIds(*inst_);
  if (!has_channel && global_ids) {
    Fail("use_global_device_ids=true requires a channel_id");
    return std::nullopt;
  }
  int64_t explicit_size =
      groups->groups.empty() ? 0 : static_cast<int64_t>(groups->groups.front().size());
  int64_t size;
  if (!has_channel) {
    // Cross-replica: groups of replicas; none listed means all of them.
    size = explicit_size ? explicit_size : module_.replica_count();
  } else if (!global_ids) {
    // Cross-replica-and-partition: each replica group spans every partition.
    int64_t replicas = explicit_size ? explicit_size : module_.replica_count();
    if (__builtin_mul_overflow(replicas, module_.num_partitions(), &size))
      return std::nullopt;
  } else if (explicit_size) {
    // Flattened ids: the groups list global device ids.
    size = explicit_size;
  } else {
    // Flattened ids without groups: XLA's verifier refuses the form, but
    // the interpreter (EvalCollectives.cpp, DeviceGroups) and
    // neuron_looped_einsum_replacer (ImplicitGroup) both read it as one
    // group of every device, replica_count x num_partitions, so the result
    // is held to that group's size.
    if (__builtin_mul_overflow(module_.replica_count(), module_.num_partitions(), &size))
      return std::nullopt;
  }
  // Listed groups name ids 0..n-1. (XLA also ties n to replica_count or
  // num_partitions; its own test modules break that, and a module that does
  // not state its device count gets 1 by default, so it is not checked.)
  int64_t named = static_cast<int64_t>(seen.size());
  for (int64_t id = 0; id < named; ++id) {
    if (!seen.contains(id)) {
      Fail("replica_groups name " + llvm::Twine(named) + " devices but not device " +
           llvm::Twine(id) + "; they must name 0.." + llvm::Twine(named - 1));
      return std::nullopt;
    }
  }
  // A size of 1 is what a module without replica_count/num_partitions gets
  // by default; like XLA, treat it as unknown rather than as a real group.
  if (size <= 1)
    return std::nullopt;
  return size;
}

const Shape *ComputationVerifier::CollectiveResult(int64_t i, int64_t n) {
  const Shape &out = inst_->shape();
  if (n == 1)
    return &out;
  if (!out.IsTuple() || out.tuple_shapes_size() != n) {
    Fail(inst_->OpcodeText() + " of " + llvm::Twine(n) + " operands must produce a tuple of " +
         llvm::Twine(n) + " elements, got " + Str(out));
    return nullptr;
  }
  return &out.tuple_shapes(i);
}

bool ComputationVerifier::CheckDimensionCollective(
    llvm::function_ref<bool(int64_t i, const Shape &in, const Shape &out, int64_t dim,
                            std::optional<int64_t> &group)>
        check) {
  int64_t n = inst_->operand_count();
  if (n < 1) {
    Fail(inst_->OpcodeText() + " needs at least one operand");
    return false;
  }
  auto dim_or = GetCollectiveDimension(*inst_);
  if (!dim_or) {
    FailAccessor(dim_or.takeError());
    return false;
  }
  int64_t dim = *dim_or;
  std::optional<int64_t> group = CollectiveGroupSize(/*uniform_groups=*/true);
  for (int64_t i = 0; i < n; ++i) {
    const Shape &in = inst_->operand(i)->shape();
    const Shape *out = CollectiveResult(i, n);
    if (!out)
      return false;
    // Neuron token threading: `(T, bf16[]) all-gather(w, t)` carries a
    // rank-0 ordering token through the collective unchanged.
    if (IsScalar(in)) {
      if (!SameShape(in, *out))
        Fail(inst_->OpcodeText() + " operand " + llvm::Twine(i) + " is rank 0 and passes through "
             "unchanged, so its result must be " + Str(in) + ", got " + Str(*out));
      continue;
    }
    if (!in.IsArray() || dim < 0 || dim >= in.rank()) {
      Fail(inst_->OpcodeText() + " dimension " + llvm::Twine(dim) +
           " is out of range for operand " + llvm::Twine(i) + " " + Str(in));
      return false;
    }
    if (!check(i, in, *out, dim, group))
      return false;
  }
  return true;
}

void ComputationVerifier::CheckAllGather() {
  int64_t n = inst_->operand_count();
  CheckDimensionCollective([&](int64_t i, const Shape &in, const Shape &out, int64_t dim,
                               std::optional<int64_t> &group) {
    // Without a known group size, XLA infers it from the first operand.
    if (!group && in.dimensions(dim) > 0 && out.IsArray() && out.rank() == in.rank())
      group = (out.dimensions(dim) + in.dimensions(dim) - 1) / in.dimensions(dim);
    int64_t factor = group.value_or(1);
    int64_t gathered;
    if (__builtin_mul_overflow(in.dimensions(dim), factor, &gathered)) {
      Fail("all-gather result dimension overflows");
      return false;
    }
    // SameShape(out, expected_shape) below, without building the shape.
    bool same = out.element_type() == in.element_type() && out.rank() == in.rank();
    for (int64_t k = 0; same && k < in.rank(); ++k)
      same = out.dimensions(k) == (k == dim ? gathered : in.dimensions(k));
    if (same)
      return true;
    std::vector<int64_t> expected(in.dimensions().begin(), in.dimensions().end());
    expected[dim] = gathered;
    Shape expected_shape(in.element_type(), expected);
    if (!SameShape(out, expected_shape)) {
      Fail("all-gather result " + llvm::Twine(n == 1 ? "" : "element " + llvm::Twine(i) + " ") +
           Str(out) + " must be operand " + llvm::Twine(i) + " " + Str(in) +
           " with dimension " + llvm::Twine(dim) + " multiplied by the group size " +
           llvm::Twine(factor) + ": " + Str(expected_shape));
      return false;
    }
    return true;
  });
}

void ComputationVerifier::CheckAllReduce() {
  int64_t n = inst_->operand_count();
  if (n < 1) {
    Fail("all-reduce needs at least one operand");
    return;
  }
  // All-reduce groups may differ in size; only their ids are checked.
  CollectiveGroupSize(/*uniform_groups=*/false);
  for (int64_t i = 0; i < n; ++i) {
    const Shape &in = inst_->operand(i)->shape();
    const Shape *out = CollectiveResult(i, n);
    if (!out)
      return;
    if (!SameShape(in, *out)) {
      Fail("all-reduce result " + Str(*out) + " must have the shape of operand " +
           llvm::Twine(i) + " " + Str(in));
      return;
    }
  }
  RequireCallee("to_apply");
}

void ComputationVerifier::CheckReduceScatter() {
  bool ok = CheckDimensionCollective([&](int64_t i, const Shape &in, const Shape &out,
                                         int64_t dim, std::optional<int64_t> &group) {
    if (!group && out.IsArray() && out.rank() == in.rank() && out.dimensions(dim) > 0)
      group = (in.dimensions(dim) + out.dimensions(dim) - 1) / out.dimensions(dim);
    int64_t factor = group.value_or(1);
    if (in.dimensions(dim) % factor != 0) {
      Fail("reduce-scatter dimension " + llvm::Twine(dim) + " of operand " + llvm::Twine(i) +
           " " + Str(in) + " is not divisible by the group size " + llvm::Twine(factor));
      return false;
    }
    std::vector<int64_t> expected(in.dimensions().begin(), in.dimensions().end());
    expected[dim] /= factor;
    Shape expected_shape(in.element_type(), expected);
    if (!SameShape(out, expected_shape)) {
      Fail("reduce-scatter result " + Str(out) + " must be operand " + llvm::Twine(i) + " " +
           Str(in) + " with dimension " + llvm::Twine(dim) + " divided by the group size " +
           llvm::Twine(factor) + ": " + Str(expected_shape));
      return false;
    }
    return true;
  });
  if (!ok)
    return;
  RequireCallee("to_apply");
}

void ComputationVerifier::CheckCollectivePermute() {
  // The combined and in-place forms (several operands, buffer offsets) have
  // rules of their own; the plain form moves one value unchanged.
  if (inst_->operand_count() != 1)
    return;
  const Shape &in = inst_->operand(0)->shape();
  if (!SameShape(in, inst_->shape()))
    Fail("collective-permute result " + Str(inst_->shape()) +
         " must have the shape of its operand " + Str(in));
  auto pairs = GetSourceTargetPairs(*inst_);
  if (!pairs)
    return FailAccessor(pairs.takeError());
  llvm::DenseSet<int64_t> sources, targets;
  for (auto [source, target] : *pairs) {
    if (source < 0 || target < 0)
      Fail("source_target_pairs has a negative device id");
    else if (!sources.insert(source).second)
      Fail("device " + llvm::Twine(source) + " is a source twice in source_target_pairs");
    else if (!targets.insert(target).second)
      Fail("device " + llvm::Twine(target) + " is a target twice in source_target_pairs");
    else
      continue;
    return;
  }
}

// The -start / -done halves of the asynchronous collectives, as XLA's
// verifier checks them: all-reduce-start has its operand's shape (a tuple for
// several), collective-permute-start (one operand) returns (operand, result,
// context...), all-gather-start (operand(s), result); a -done returns the
// result its -start holds.
void ComputationVerifier::CheckAsyncPair() {
  const Shape &out = inst_->shape();
  const HloOpcode opcode = inst_->opcode();
  if (opcode == HloOpcode::kAllGatherStart || opcode == HloOpcode::kCollectivePermuteStart) {
    int64_t n = inst_->operand_count();
    // The combined and in-place forms of collective-permute-start have
    // rules of their own.
    if (n < 1 || (opcode == HloOpcode::kCollectivePermuteStart && n != 1))
      return;
    // Older XLA (and MHLO's export) write all-gather-start with the gathered
    // result itself as its shape; that form is not checked here.
    if (opcode == HloOpcode::kAllGatherStart && !out.IsTuple())
      return;
    std::vector<const Shape *> operands;
    for (const HloInstruction *op : inst_->operands())
      operands.push_back(&op->shape());
    Shape held = n == 1 ? *operands.front() : ShapeInference::InferTupleShape(operands);
    bool ok = out.IsTuple() && out.tuple_shapes_size() >= 2 && SameShape(out.tuple_shapes(0), held);
    if (ok && opcode == HloOpcode::kCollectivePermuteStart)
      ok = SameShape(out.tuple_shapes(1), held);
    if (ok && opcode == HloOpcode::kAllGatherStart)
      ok = out.tuple_shapes_size() == 2;
    if (!ok)
      Fail(inst_->OpcodeText() + " must return a tuple of its operand " + Str(held) +
           (opcode == HloOpcode::kCollectivePermuteStart
                ? ", the result of its shape, and context values"
                : " and the gathered result") +
           ", got " + Str(out));
    return;
  }
  std::optional<Shape> expected = Inferred(ShapeInference::InferInstructionShape(*inst_));
  if (expected && !SameShape(*expected, out))
    Fail(inst_->OpcodeText() + " result " + Str(out) + " must be " + Str(*expected));
}

} // namespace loom::hlo::hlo_verifier
