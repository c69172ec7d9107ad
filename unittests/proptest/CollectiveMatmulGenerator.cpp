//===- CollectiveMatmulGenerator.cpp - Random modules for the fusion ------===//
//
// A case is drawn in three steps: the device geometry (how many devices,
// which groups, which participant mode), the values around the all-gather
// (weights, token, activation, dot dimensions), and the text. Shapes are
// computed here, so every module is valid by construction; the property
// test still verifies each one, which keeps this file honest.
//
//===----------------------------------------------------------------------===//
#include "CollectiveMatmulGenerator.h"

#include "loom/hlo/eval/RandomInputs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

namespace loom::hlo::proptest {
namespace {

struct ArrayShape {
  std::string type;
  std::vector<int64_t> dims;

  std::string Text() const {
    std::string s = type + "[";
    for (size_t i = 0; i < dims.size(); ++i)
      s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
  }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t count() const {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  }
};

std::string IntList(llvm::ArrayRef<int64_t> values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + std::to_string(values[i]);
  return s + "}";
}

std::string TupleText(llvm::ArrayRef<std::string> elements) {
  return "(" + llvm::join(elements, ", ") + ")";
}

// How the all-gather's participants are named (XLA's collective op group
// modes for all-gather).
enum class DeviceMode { kCrossReplica, kReplicaAndPartition, kFlattened };

struct Geometry {
  DeviceMode mode = DeviceMode::kCrossReplica;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  /// Devices of one group: the all-gather's multiplier.
  int64_t gather_factor = 2;
  /// The all-gather's participant attributes, e.g.
  /// `channel_id=2, replica_groups={{0,1}}` (no dimensions).
  std::string group_attrs;
  std::string trailing_attrs; // `, use_global_device_ids=true` or empty
  std::string summary;
};

// A value of the computation being written: its name and shape text.
struct Value {
  std::string name;
  std::string shape;
};

// The lines of one computation. Names are unique across the module because
// the counter is the module's.
class ComputationWriter {
public:
  ComputationWriter(std::string name, int64_t *counter)
      : name_(std::move(name)), counter_(counter) {}

  Value Add(llvm::StringRef hint, const std::string &shape, const std::string &rest) {
    Value v{hint.str() + "." + std::to_string((*counter_)++), shape};
    lines_.push_back("%" + v.name + " = " + shape + " " + rest);
    return v;
  }
  void SetRoot(const Value &root) { root_ = root.name; }
  std::string Text(bool entry) const {
    std::string s = (entry ? "ENTRY %" : "%") + name_ + " {\n";
    for (const std::string &line : lines_) {
      bool is_root = line.compare(1, root_.size() + 3, root_ + " = ") == 0;
      s += (is_root ? "  ROOT " : "  ") + line + "\n";
    }
    return s + "}\n";
  }
  const std::string &name() const { return name_; }

private:
  std::string name_;
  int64_t *counter_;
  std::vector<std::string> lines_;
  std::string root_;
};

std::string Ref(const Value &v) { return "%" + v.name; }
std::string Refs(llvm::ArrayRef<Value> values) {
  std::vector<std::string> refs;
  for (const Value &v : values)
    refs.push_back(Ref(v));
  return llvm::join(refs, ", ");
}

// One operand of the all-gather.
struct GatherOperand {
  ArrayShape local;
  bool is_token = false;
  // Loop-carried element type (the body converts it to `local.type`).
  std::string carried_type;
};

// The dot, decided against the weight operand shape the dot sees.
struct DotPlan {
  ArrayShape activation; // full (as the dot sees it)
  std::vector<int64_t> weight_contracting, activation_contracting;
  std::vector<int64_t> weight_batch, activation_batch;
  ArrayShape result;
  /// Dimension of the activation that may be gathered (a free one), or -1.
  int64_t activation_free_dim = -1;
};

enum class ActivationKind { kPlain, kComputed, kGathered, kGatheredComputed };

class CaseGenerator {
public:
  CaseGenerator(uint64_t seed, MatcherShape shape) : rng_(seed), shape_(shape) {}
  GeneratedCase Generate();

private:
  template <typename T> const T &Pick(llvm::ArrayRef<T> items) {
    return items[rng_.Uniform(0, static_cast<int64_t>(items.size()) - 1)];
  }
  void Note(const std::string &text) { summary_ += (summary_.empty() ? "" : " ") + text; }
  void Tag(const std::string &tag) { tags_.push_back(tag); }
  void TagCase(bool in_while);

  // Drawing.
  Geometry DrawGeometry();
  std::string DrawGroups(int64_t ids, int64_t groups, int64_t size, bool allow_implicit);
  void DrawGatherOperands();
  ArrayShape DrawReshape(const ArrayShape &shape);
  DotPlan DrawDot(const ArrayShape &weight);
  ArrayShape GatheredShape(const GatherOperand &operand) const;
  CollectiveMatmulOptions DrawOptions();

  // Writing.
  std::string AllGatherShape() const;
  std::string AllGatherRest(llvm::ArrayRef<Value> operands) const;
  Value WriteWeightOperand(ComputationWriter &c, const Value &ag);
  Value WriteActivation(ComputationWriter &c, const Value &x);
  Value WriteDot(ComputationWriter &c, const Value &weight, const Value &activation);
  std::string WritePlainModule();
  std::string WriteWhileModule();
  std::string Header() const;

  SplitMix64 rng_;
  MatcherShape shape_;
  std::string summary_;
  std::vector<std::string> tags_;
  std::string type_;
  Geometry geometry_;
  int64_t ag_dim_ = 0;
  std::vector<GatherOperand> operands_;
  bool tuple_ag_ = false;
  int64_t weight_index_ = 0;
  int64_t token_index_ = -1;
  bool reshape_weight_ = false;
  ArrayShape weight_seen_; // the weight operand as the dot sees it
  DotPlan dot_;
  ActivationKind activation_kind_ = ActivationKind::kPlain;
  ArrayShape activation_local_;
  bool output_extras_ = false;
  // The gathered weight is also an output, so its all-gather outlives the
  // fusion (plain modules).
  bool share_weight_ = false;
  // The dot's element type: `type_`, or f32 accumulation of bf16 operands.
  std::string result_type_;
  int64_t counter_ = 0;
};

std::string CaseGenerator::DrawGroups(int64_t ids, int64_t groups, int64_t size,
                                      bool allow_implicit) {
  enum { kContiguous, kShuffled, kIota, kIotaTransposed, kNone, kEmpty };
  // Mostly forms the fusion can express, some it must refuse.
  std::vector<int> forms = {kContiguous, kContiguous, kContiguous, kContiguous, kIota,
                            kIota,       kIota,       kShuffled,   kShuffled,   kIotaTransposed};
  if (allow_implicit && groups == 1)
    forms.insert(forms.end(), {kNone, kNone, kEmpty, kEmpty});
  int form = Pick<int>(forms);
  if (form == kNone) {
    Note("groups=none");
    Tag("groups-none");
    return "";
  }
  if (form == kEmpty) {
    Note("groups={}");
    Tag("groups-empty");
    return "replica_groups={}";
  }
  if (form == kIota) {
    Note("groups=iota");
    Tag("groups-iota");
    return "replica_groups=[" + std::to_string(groups) + "," + std::to_string(size) + "]<=[" +
           std::to_string(ids) + "]";
  }
  if (form == kIotaTransposed) {
    // Group g is {g, g + G, g + 2G, ...}: strided, not contiguous.
    Note("groups=iota-transposed");
    Tag("groups-iota-transposed");
    return "replica_groups=[" + std::to_string(groups) + "," + std::to_string(size) + "]<=[" +
           std::to_string(size) + "," + std::to_string(groups) + "]T(1,0)";
  }
  std::vector<int64_t> order(static_cast<size_t>(ids));
  std::iota(order.begin(), order.end(), 0);
  if (form == kShuffled) {
    Note("groups=shuffled");
    Tag("groups-shuffled");
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[rng_.Uniform(0, static_cast<int64_t>(i) - 1)]);
  } else {
    Note("groups=contiguous");
    Tag("groups-contiguous");
  }
  std::string s = "replica_groups={";
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<int64_t> group(order.begin() + g * size, order.begin() + (g + 1) * size);
    s += (g ? "," : "") + IntList(group);
  }
  return s + "}";
}

Geometry CaseGenerator::DrawGeometry() {
  Geometry geo;
  int64_t groups = rng_.Uniform(1, 3);
  Tag(std::to_string(groups) + (groups == 1 ? "-group" : "-groups"));
  int64_t roll = rng_.Uniform(0, 99);
  geo.mode = roll < 45   ? DeviceMode::kCrossReplica
             : roll < 90 ? DeviceMode::kFlattened
                         : DeviceMode::kReplicaAndPartition;
  std::string channel = "channel_id=" + std::to_string(rng_.Uniform(1, 9));
  if (geo.mode == DeviceMode::kReplicaAndPartition) {
    // Groups of replicas, each spanning every partition.
    geo.num_partitions = rng_.Uniform(2, 4);
    int64_t replicas_per_group = rng_.Uniform(1, 8 / geo.num_partitions);
    geo.replica_count = groups * replicas_per_group;
    geo.gather_factor = replicas_per_group * geo.num_partitions;
    std::string g = DrawGroups(geo.replica_count, groups, replicas_per_group, true);
    geo.group_attrs = channel + (g.empty() ? "" : ", " + g);
    Note(llvm::formatv("replica-and-partition {0}x{1}", geo.replica_count, geo.num_partitions)
             .str());
    Tag("replica-and-partition");
    return geo;
  }
  int64_t size = rng_.Uniform(2, 8);
  int64_t devices = groups * size;
  geo.gather_factor = size;
  if (geo.mode == DeviceMode::kCrossReplica) {
    geo.replica_count = devices;
    geo.num_partitions = devices <= 12 && rng_.Chance(0.2) ? 2 : 1;
    geo.group_attrs = DrawGroups(devices, groups, size, true);
    Note(llvm::formatv("cross-replica {0}x{1}", geo.replica_count, geo.num_partitions).str());
    Tag(geo.num_partitions == 1 ? "cross-replica" : "cross-replica-2-partitions");
    return geo;
  }
  // Flattened ids: any replicas x partitions split of the devices.
  std::vector<int64_t> divisors;
  for (int64_t r = 1; r <= devices; ++r)
    if (devices % r == 0)
      divisors.push_back(r);
  geo.replica_count = Pick<int64_t>(divisors);
  geo.num_partitions = devices / geo.replica_count;
  geo.group_attrs = channel + ", " + DrawGroups(devices, groups, size, false);
  geo.trailing_attrs = ", use_global_device_ids=true";
  Note(llvm::formatv("flattened {0}x{1}", geo.replica_count, geo.num_partitions).str());
  Tag("flattened");
  return geo;
}

ArrayShape CaseGenerator::GatheredShape(const GatherOperand &operand) const {
  ArrayShape out = operand.local;
  if (!operand.is_token)
    out.dims[ag_dim_] *= geometry_.gather_factor;
  return out;
}

void CaseGenerator::DrawGatherOperands() {
  // Rank 3 (or a dimension > 1) is what the fusion accepts; ranks 2 and 4
  // with a low dimension are the cases it must leave alone.
  int64_t rank = Pick<int64_t>({2, 3, 3, 3, 3, 4, 4, 4});
  ag_dim_ = rank == 4 && rng_.Chance(0.75) ? rng_.Uniform(2, 3) : rng_.Uniform(0, rank - 1);
  auto draw_weight = [&](int64_t r) {
    GatherOperand op;
    op.local.type = type_;
    for (int64_t i = 0; i < r; ++i)
      op.local.dims.push_back(rng_.Uniform(1, i == ag_dim_ ? 3 : 4));
    op.carried_type = rng_.Chance(0.5) ? "f32" : "bf16";
    return op;
  };
  operands_ = {draw_weight(rank)};
  weight_index_ = 0;
  tuple_ag_ =
      shape_ == MatcherShape::kLhsNxD || (shape_ == MatcherShape::kRhsRS && rng_.Chance(0.15));
  Note(llvm::formatv("{0} weight {1} ag-dim {2}", type_, operands_[0].local.Text(), ag_dim_).str());
  if (!tuple_ag_)
    return;
  // NeuronX Distributed combines several weights, sometimes more than the
  // five NEURON_COLLECTIVE_MATMUL_NXD allows.
  int64_t extra = rng_.Chance(0.2) ? 5 : rng_.Uniform(0, 2);
  bool token = extra == 0 || rng_.Chance(0.5);
  // Extra weights: any rank the dimension allows, rank 3 most often (the
  // fusion checks the rank of operand 0, which may be one of them).
  for (int64_t i = 0; i < extra; ++i) {
    int64_t r = rng_.Chance(0.5) ? 3 : rng_.Uniform(2, 4);
    operands_.push_back(draw_weight(std::max(r, ag_dim_ + 1)));
  }
  weight_index_ = rng_.Uniform(0, extra);
  std::swap(operands_[0], operands_[weight_index_]);
  if (token) {
    GatherOperand tok;
    tok.is_token = true;
    tok.local.type = rng_.Chance(0.7) ? "bf16" : type_;
    tok.carried_type = tok.local.type;
    token_index_ = rng_.Chance(0.6) ? 1 : static_cast<int64_t>(operands_.size());
    operands_.insert(operands_.begin() + token_index_, tok);
    if (weight_index_ >= token_index_)
      ++weight_index_;
  }
  Note(llvm::formatv("combined {0} operands, dot reads {1}, token at {2}", operands_.size(),
                     weight_index_, token_index_)
           .str());
}

ArrayShape CaseGenerator::DrawReshape(const ArrayShape &shape) {
  ArrayShape out = shape;
  int64_t r = shape.rank();
  switch (rng_.Uniform(0, 4)) {
  case 0: // merge two neighbours
    if (r >= 2) {
      int64_t i = rng_.Uniform(0, r - 2);
      out.dims[i] *= out.dims[i + 1];
      out.dims.erase(out.dims.begin() + i + 1);
    }
    break;
  case 1: // to the kernel's [E/K, K]
    out.dims = {shape.count() / shape.dims.back(), shape.dims.back()};
    break;
  case 2: { // split the first dimension that has a factor
    for (int64_t i = 0; i < r; ++i)
      for (int64_t f = 2; f < out.dims[i]; ++f)
        if (out.dims[i] % f == 0) {
          out.dims.insert(out.dims.begin() + i + 1, out.dims[i] / f);
          out.dims[i] = f;
          return out;
        }
    break;
  }
  case 3: // insert a unit dimension
    out.dims.insert(out.dims.begin() + rng_.Uniform(0, r), 1);
    break;
  default: // same shape, still through a reshape
    break;
  }
  return out;
}

DotPlan CaseGenerator::DrawDot(const ArrayShape &weight) {
  DotPlan plan;
  int64_t r = weight.rank();
  std::vector<int64_t> free_dims(static_cast<size_t>(r));
  std::iota(free_dims.begin(), free_dims.end(), 0);
  auto take = [&]() {
    int64_t i = rng_.Uniform(0, static_cast<int64_t>(free_dims.size()) - 1);
    int64_t d = free_dims[i];
    free_dims.erase(free_dims.begin() + i);
    return d;
  };
  // Slots of the activation: batch (-2 - k), contracting (k), free (-1).
  std::vector<std::pair<int64_t, int64_t>> slots; // (kind, weight dim or size)
  plan.weight_contracting.push_back(take());
  slots.push_back({0, plan.weight_contracting[0]});
  // Now and then two contracting dimensions: the fusion must refuse those.
  if (free_dims.size() >= 2 && rng_.Chance(0.05)) {
    plan.weight_contracting.push_back(take());
    slots.push_back({0, plan.weight_contracting[1]});
  }
  if (!free_dims.empty() && r >= 2 && rng_.Chance(0.25)) {
    plan.weight_batch.push_back(take());
    slots.push_back({1, plan.weight_batch[0]});
  }
  int64_t activation_free = rng_.Uniform(activation_kind_ >= ActivationKind::kGathered ? 1 : 0, 2);
  for (int64_t i = 0; i < activation_free; ++i)
    slots.push_back({2, rng_.Uniform(1, 4)});
  for (size_t i = slots.size(); i > 1; --i)
    std::swap(slots[i - 1], slots[rng_.Uniform(0, static_cast<int64_t>(i) - 1)]);

  plan.activation.type = type_;
  plan.activation_contracting.resize(plan.weight_contracting.size());
  std::vector<int64_t> activation_free_dims;
  for (size_t pos = 0; pos < slots.size(); ++pos) {
    auto [kind, value] = slots[pos];
    int64_t p = static_cast<int64_t>(pos);
    if (kind == 2) {
      plan.activation.dims.push_back(value);
      activation_free_dims.push_back(p);
      continue;
    }
    plan.activation.dims.push_back(weight.dims[value]);
    if (kind == 1) {
      plan.activation_batch.push_back(p);
    } else {
      size_t k = value == plan.weight_contracting[0] ? 0 : 1;
      plan.activation_contracting[k] = p;
    }
  }
  activation_local_ = plan.activation;
  if (activation_kind_ >= ActivationKind::kGathered) {
    // The activation is gathered along one of its free dimensions.
    plan.activation_free_dim = Pick<int64_t>(activation_free_dims);
    plan.activation.dims[plan.activation_free_dim] *= geometry_.gather_factor;
  }

  // XLA's dot result: batch, lhs free, rhs free.
  bool weight_lhs = shape_ == MatcherShape::kLhs || shape_ == MatcherShape::kLhsRS ||
                    shape_ == MatcherShape::kLhsNxD;
  auto free_of = [](const ArrayShape &s, const std::vector<int64_t> &a,
                    const std::vector<int64_t> &b) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < s.rank(); ++i)
      if (!llvm::is_contained(a, i) && !llvm::is_contained(b, i))
        out.push_back(s.dims[i]);
    return out;
  };
  std::vector<int64_t> wf = free_of(weight, plan.weight_contracting, plan.weight_batch);
  std::vector<int64_t> af =
      free_of(plan.activation, plan.activation_contracting, plan.activation_batch);
  plan.result.type = result_type_;
  for (int64_t b : plan.weight_batch)
    plan.result.dims.push_back(weight.dims[b]);
  llvm::append_range(plan.result.dims, weight_lhs ? wf : af);
  llvm::append_range(plan.result.dims, weight_lhs ? af : wf);
  return plan;
}

CollectiveMatmulOptions CaseGenerator::DrawOptions() {
  CollectiveMatmulOptions options;
  options.nxd = rng_.Chance(0.5);
  options.permute_aggressive = rng_.Chance(0.3);
  options.compat = rng_.Chance(0.35);
  options.sb_to_sb_threshold_in_mb = Pick<int64_t>({0, 1, 16, 1024});
  Note(llvm::formatv("options: nxd={0} aggressive={1} compat={2} threshold={3}", options.nxd,
                     options.permute_aggressive, options.compat, options.sb_to_sb_threshold_in_mb)
           .str());
  return options;
}

std::string CaseGenerator::AllGatherShape() const {
  if (!tuple_ag_)
    return GatheredShape(operands_[0]).Text();
  std::vector<std::string> elements;
  for (const GatherOperand &op : operands_)
    elements.push_back(GatheredShape(op).Text());
  return TupleText(elements);
}

std::string CaseGenerator::AllGatherRest(llvm::ArrayRef<Value> operands) const {
  std::string rest = "all-gather(" + Refs(operands) + ")";
  if (!geometry_.group_attrs.empty())
    rest += ", " + geometry_.group_attrs;
  return rest + ", dimensions={" + std::to_string(ag_dim_) + "}" + geometry_.trailing_attrs;
}

Value CaseGenerator::WriteWeightOperand(ComputationWriter &c, const Value &ag) {
  Value gathered = ag;
  if (tuple_ag_)
    gathered = c.Add("gte", GatheredShape(operands_[weight_index_]).Text(),
                     "get-tuple-element(" + Ref(ag) + "), index=" + std::to_string(weight_index_));
  if (!reshape_weight_)
    return gathered;
  return c.Add("reshape", weight_seen_.Text(), "reshape(" + Ref(gathered) + ")");
}

Value CaseGenerator::WriteActivation(ComputationWriter &c, const Value &x) {
  Value v = x;
  if (activation_kind_ == ActivationKind::kComputed ||
      activation_kind_ == ActivationKind::kGatheredComputed)
    v = c.Add("negate", activation_local_.Text(), "negate(" + Ref(v) + ")");
  if (activation_kind_ == ActivationKind::kGathered ||
      activation_kind_ == ActivationKind::kGatheredComputed) {
    std::string rest = "all-gather(" + Ref(v) + ")";
    if (!geometry_.group_attrs.empty())
      rest += ", " + geometry_.group_attrs;
    rest += ", dimensions={" + std::to_string(dot_.activation_free_dim) + "}" +
            geometry_.trailing_attrs;
    v = c.Add("all-gather.x", dot_.activation.Text(), rest);
  }
  return v;
}

Value CaseGenerator::WriteDot(ComputationWriter &c, const Value &weight, const Value &activation) {
  bool weight_lhs = shape_ == MatcherShape::kLhs || shape_ == MatcherShape::kLhsRS ||
                    shape_ == MatcherShape::kLhsNxD;
  const Value &lhs = weight_lhs ? weight : activation;
  const Value &rhs = weight_lhs ? activation : weight;
  const auto &lb = weight_lhs ? dot_.weight_batch : dot_.activation_batch;
  const auto &rb = weight_lhs ? dot_.activation_batch : dot_.weight_batch;
  const auto &lc = weight_lhs ? dot_.weight_contracting : dot_.activation_contracting;
  const auto &rc = weight_lhs ? dot_.activation_contracting : dot_.weight_contracting;
  std::string rest = "dot(" + Ref(lhs) + ", " + Ref(rhs) + ")";
  if (!lb.empty())
    rest += ", lhs_batch_dims=" + IntList(lb);
  rest += ", lhs_contracting_dims=" + IntList(lc);
  if (!rb.empty())
    rest += ", rhs_batch_dims=" + IntList(rb);
  rest += ", rhs_contracting_dims=" + IntList(rc);
  return c.Add("dot", dot_.result.Text(), rest);
}

std::string CaseGenerator::Header() const {
  std::string h = "HloModule collective_matmul_case";
  if (geometry_.replica_count != 1)
    h += ", replica_count=" + std::to_string(geometry_.replica_count);
  if (geometry_.num_partitions != 1)
    h += ", num_partitions=" + std::to_string(geometry_.num_partitions);
  return h + "\n\n";
}

std::string CaseGenerator::WritePlainModule() {
  ComputationWriter c("main", &counter_);
  int64_t param = 0;
  std::vector<Value> ag_operands;
  for (const GatherOperand &op : operands_) {
    // Now and then the weight arrives in another type and is converted.
    bool convert = !op.is_token && op.carried_type != op.local.type && rng_.Chance(0.4);
    ArrayShape p = op.local;
    if (convert)
      p.type = op.carried_type;
    Value v =
        c.Add(op.is_token ? "token" : "w", p.Text(), "parameter(" + std::to_string(param++) + ")");
    if (convert)
      v = c.Add("convert", op.local.Text(), "convert(" + Ref(v) + ")");
    ag_operands.push_back(v);
  }
  Value x = c.Add("x", activation_local_.Text(), "parameter(" + std::to_string(param++) + ")");
  Value ag = c.Add("all-gather", AllGatherShape(), AllGatherRest(ag_operands));
  Value dot = WriteDot(c, WriteWeightOperand(c, ag), WriteActivation(c, x));
  std::vector<Value> outputs = {dot};
  if (share_weight_)
    outputs.push_back(tuple_ag_ ? c.Add("gte", GatheredShape(operands_[weight_index_]).Text(),
                                        "get-tuple-element(" + Ref(ag) +
                                            "), index=" + std::to_string(weight_index_))
                                : ag);
  for (int64_t i = 0; tuple_ag_ && i < static_cast<int64_t>(operands_.size()); ++i) {
    bool is_token = i == token_index_;
    if (i == weight_index_ || (!is_token && !output_extras_))
      continue;
    Value e = c.Add("gte", GatheredShape(operands_[i]).Text(),
                    "get-tuple-element(" + Ref(ag) + "), index=" + std::to_string(i));
    if (is_token) // a user of the token besides the output
      e = c.Add("token.use", e.shape, "add(" + Ref(e) + ", " + Ref(e) + ")");
    outputs.push_back(e);
  }
  if (outputs.size() == 1) {
    c.SetRoot(dot);
  } else {
    std::vector<std::string> shapes;
    for (const Value &v : outputs)
      shapes.push_back(v.shape);
    c.SetRoot(c.Add("tuple", TupleText(shapes), "tuple(" + Refs(outputs) + ")"));
  }
  return Header() + c.Text(true);
}

std::string CaseGenerator::WriteWhileModule() {
  // Loop state: (i, carried weights and token..., x, acc).
  std::vector<std::string> slot_shapes = {"s32[]"};
  for (const GatherOperand &op : operands_) {
    ArrayShape carried = op.local;
    carried.type = op.carried_type;
    slot_shapes.push_back(carried.Text());
  }
  slot_shapes.push_back(activation_local_.Text());
  slot_shapes.push_back(dot_.result.Text());
  const std::string state = TupleText(slot_shapes);
  const int64_t n_ops = static_cast<int64_t>(operands_.size());
  const int64_t x_slot = 1 + n_ops, acc_slot = 2 + n_ops;
  auto gte = [&](ComputationWriter &c, const Value &p, int64_t i) {
    return c.Add("gte", slot_shapes[i],
                 "get-tuple-element(" + Ref(p) + "), index=" + std::to_string(i));
  };

  ComputationWriter cond("cond", &counter_);
  Value cp = cond.Add("p", state, "parameter(0)");
  Value ci = gte(cond, cp, 0);
  Value trip = cond.Add("trip", "s32[]", "constant(" + std::to_string(rng_.Uniform(1, 3)) + ")");
  cond.SetRoot(
      cond.Add("lt", "pred[]", "compare(" + Ref(ci) + ", " + Ref(trip) + "), direction=LT"));

  ComputationWriter body("body", &counter_);
  Value bp = body.Add("p", state, "parameter(0)");
  std::vector<Value> slots;
  for (int64_t i = 0; i < static_cast<int64_t>(slot_shapes.size()); ++i)
    slots.push_back(gte(body, bp, i));
  std::vector<Value> ag_operands;
  for (int64_t i = 0; i < n_ops; ++i) {
    const GatherOperand &op = operands_[i];
    ag_operands.push_back(
        op.is_token ? slots[1 + i]
                    : body.Add("convert", op.local.Text(), "convert(" + Ref(slots[1 + i]) + ")"));
  }
  Value ag = body.Add("all-gather", AllGatherShape(), AllGatherRest(ag_operands));
  Value dot = WriteDot(body, WriteWeightOperand(body, ag), WriteActivation(body, slots[x_slot]));
  std::vector<Value> next = slots;
  Value one = body.Add("one", "s32[]", "constant(1)");
  next[0] = body.Add("next", "s32[]", "add(" + Ref(slots[0]) + ", " + Ref(one) + ")");
  next[acc_slot] =
      body.Add("acc", dot_.result.Text(), "add(" + Ref(slots[acc_slot]) + ", " + Ref(dot) + ")");
  if (token_index_ >= 0) // the gathered token goes round the loop
    next[1 + token_index_] =
        body.Add("token", slot_shapes[1 + token_index_],
                 "get-tuple-element(" + Ref(ag) + "), index=" + std::to_string(token_index_));
  body.SetRoot(body.Add("tuple", state, "tuple(" + Refs(next) + ")"));

  ComputationWriter main("main", &counter_);
  std::vector<Value> init = {main.Add("zero", "s32[]", "constant(0)")};
  for (int64_t i = 1; i < acc_slot; ++i)
    init.push_back(main.Add(i == x_slot ? "x" : "w", slot_shapes[i],
                            "parameter(" + std::to_string(i - 1) + ")"));
  Value zero = main.Add("zero", result_type_ + "[]", "constant(0)");
  init.push_back(
      main.Add("acc", dot_.result.Text(), "broadcast(" + Ref(zero) + "), dimensions={}"));
  Value tuple = main.Add("init", state, "tuple(" + Refs(init) + ")");
  main.SetRoot(main.Add("while", state, "while(" + Ref(tuple) + "), condition=%cond, body=%body"));
  return Header() + cond.Text(false) + "\n" + body.Text(false) + "\n" + main.Text(true);
}

// The coverage tags of the drawn case (the geometry tags itself).
void CaseGenerator::TagCase(bool in_while) {
  static const char *const kActivation[] = {"activation-param", "activation-computed",
                                            "activation-gathered", "activation-gathered-computed"};
  Tag(in_while ? "while" : "plain");
  Tag(type_);
  Tag("weight-rank-" + std::to_string(operands_[weight_index_].local.rank()));
  Tag("ag-dim-" + std::to_string(ag_dim_));
  Tag(kActivation[static_cast<int>(activation_kind_)]);
  if (tuple_ag_)
    Tag(shape_ != MatcherShape::kLhsNxD ? "rhs-combined"
        : weight_index_ == 0            ? "nxd-index-0"
                                        : "nxd-index-nonzero");
  if (token_index_ >= 0) {
    Tag("token");
    Tag(token_index_ == 1 ? "token-at-1" : "token-last");
  }
  if (operands_.size() > 5)
    Tag("more-than-5-operands");
  if (!dot_.weight_batch.empty())
    Tag("batch-dims");
  if (dot_.weight_contracting.size() > 1)
    Tag("two-contracting");
  if (result_type_ != type_)
    Tag("f32-accumulate");
  if (share_weight_)
    Tag("shared-all-gather");
}

GeneratedCase CaseGenerator::Generate() {
  GeneratedCase result;
  result.shape = shape_;
  Note(MatcherShapeName(shape_).str());
  type_ = rng_.Chance(0.5) ? "bf16" : "f32";
  result_type_ = type_ == "bf16" && rng_.Chance(0.3) ? "f32" : type_;
  bool in_while = rng_.Chance(0.4);
  Note(in_while ? "while" : "plain");
  geometry_ = DrawGeometry();
  DrawGatherOperands();
  reshape_weight_ = shape_ == MatcherShape::kLhsRS || shape_ == MatcherShape::kRhsRS ||
                    shape_ == MatcherShape::kLhsNxD;
  ArrayShape gathered = GatheredShape(operands_[weight_index_]);
  weight_seen_ = reshape_weight_ ? DrawReshape(gathered) : gathered;
  activation_kind_ = static_cast<ActivationKind>(Pick<int>({0, 0, 0, 0, 0, 1, 2, 3}));
  dot_ = DrawDot(weight_seen_);
  Note(llvm::formatv("dot weight {0} activation {1} -> {2}", weight_seen_.Text(),
                     dot_.activation.Text(), dot_.result.Text())
           .str());
  output_extras_ = rng_.Chance(0.5);
  share_weight_ = !in_while && rng_.Chance(0.2);
  TagCase(in_while);
  result.options = DrawOptions();
  Tag(result.options.nxd ? "nxd" : "no-nxd");
  Tag(result.options.compat ? "compat" : "no-compat");
  Tag(result.options.permute_aggressive ? "aggressive" : "not-aggressive");
  result.text = in_while ? WriteWhileModule() : WritePlainModule();
  result.summary = summary_;
  result.tags = tags_;
  return result;
}

} // namespace

llvm::StringRef MatcherShapeName(MatcherShape shape) {
  switch (shape) {
  case MatcherShape::kLhs:
    return "Lhs";
  case MatcherShape::kLhsRS:
    return "LhsRS";
  case MatcherShape::kRhs:
    return "Rhs";
  case MatcherShape::kRhsRS:
    return "RhsRS";
  case MatcherShape::kLhsNxD:
    return "LhsNxD";
  }
  return "?";
}

GeneratedCase GenerateCase(uint64_t seed, MatcherShape shape) {
  return CaseGenerator(seed, shape).Generate();
}

GeneratedCase GenerateScanCase(uint64_t seed) {
  SplitMix64 rng(seed);
  GeneratedCase result;
  result.shape = MatcherShape::kRhs;
  const int64_t layers = rng.Uniform(2, 3), tp = rng.Chance(0.5) ? 2 : 4;
  const int64_t groups = rng.Uniform(1, 2), batch = 2, seq = rng.Uniform(1, 3);
  const int64_t heads = rng.Uniform(1, 2), head_dim = rng.Uniform(2, 4), shard = rng.Uniform(1, 3);
  const bool bf16 = rng.Chance(0.5), backward = rng.Chance(0.5), transposed = rng.Chance(0.5);
  // The four dots of an attention layer (forward Q and O, backward dQ and dH).
  enum Kind { kQ, kO, kDq, kDh } kind = static_cast<Kind>(rng.Uniform(0, 3));
  enum Spoil { kNone, kActivationIndex, kUpdated } spoil = kNone;
  if (rng.Chance(0.3))
    spoil = rng.Chance(0.5) ? kActivationIndex : kUpdated;
  result.options.provenance = rng.Chance(0.7);
  result.options.permute_aggressive = rng.Chance(0.3);
  const std::string t = bf16 ? "bf16" : "f32";
  const int64_t model = tp * shard; // the gathered model dimension
  // Local weight, all-gather dimension, activation, result, dimension numbers.
  std::vector<int64_t> local, act, out;
  int64_t ag_dim;
  std::string dnums;
  switch (kind) {
  case kQ: // x[B,S,D] . W[D,H,Dh] (gathered along 0)
    local = {shard, heads, head_dim}, ag_dim = 0, act = {batch, seq, model};
    out = {batch, seq, heads, head_dim};
    dnums = "lhs_contracting_dims={2}, rhs_contracting_dims={0}";
    break;
  case kO: // a[B,S,H,Dh] . W[H,Dh,D] (gathered along 2), merged {2,3} x {0,1}
    local = {heads, head_dim, shard}, ag_dim = 2, act = {batch, seq, heads, head_dim};
    out = {batch, seq, model};
    dnums = "lhs_contracting_dims={2,3}, rhs_contracting_dims={0,1}";
    break;
  case kDq: // g[B,S,D] . W[H,Dh,D] (gathered along 2), contracted on 2
    local = {heads, head_dim, shard}, ag_dim = 2, act = {batch, seq, model};
    out = {batch, seq, heads, head_dim};
    dnums = "lhs_contracting_dims={2}, rhs_contracting_dims={2}";
    break;
  case kDh: // g[B,S,H,Dh] . W[D,H,Dh] (gathered along 0), merged {2,3} x {1,2}
    local = {shard, heads, head_dim}, ag_dim = 0, act = {batch, seq, heads, head_dim};
    out = {batch, seq, model};
    dnums = "lhs_contracting_dims={2,3}, rhs_contracting_dims={1,2}";
    break;
  }
  std::vector<int64_t> gathered = local;
  gathered[ag_dim] *= tp;
  std::vector<int64_t> stacked = {layers};
  llvm::append_range(stacked, local);
  std::vector<int64_t> slice = {1};
  llvm::append_range(slice, local);
  auto shape = [](const std::string &type, llvm::ArrayRef<int64_t> dims) {
    return ArrayShape{type, std::vector<int64_t>(dims.begin(), dims.end())}.Text();
  };
  const std::string state = TupleText({"s32[]", shape("f32", act), shape("f32", stacked),
                                       shape("f32", out)});
  std::string zeros;
  for (size_t d = 0; d < local.size(); ++d)
    zeros += ", %zero";
  std::string text = "HloModule scan, num_partitions=" + std::to_string(tp * groups) + "\n\n";
  text += "%cond (c: " + state + ") -> pred[] {\n  %c = " + state + " parameter(0)\n" +
          "  %ci = s32[] get-tuple-element(%c), index=0\n  %n = s32[] constant(" +
          std::to_string(layers) + ")\n  ROOT %lt = pred[] compare(%ci, %n), direction=LT\n}\n\n";
  text += "%body (p: " + state + ") -> " + state + " {\n  %p = " + state + " parameter(0)\n";
  text += "  %i = s32[] get-tuple-element(%p), index=0\n";
  text += "  %x = " + shape("f32", act) + " get-tuple-element(%p), index=1\n";
  text += "  %w = " + shape("f32", stacked) + " get-tuple-element(%p), index=2\n";
  text += "  %acc = " + shape("f32", out) + " get-tuple-element(%p), index=3\n";
  text += "  %zero = s32[] constant(0)\n";
  std::string layer = "%i";
  if (spoil == kActivationIndex) {
    std::vector<int64_t> ones(act.size(), 1);
    std::string ranges;
    for (size_t d = 0; d < act.size(); ++d)
      ranges += std::string(d ? ", " : "") + "[0:1]";
    text += "  %x.s = " + shape("f32", ones) + " slice(%x), slice={" + ranges + "}\n";
    text += "  %x.r = f32[] reshape(%x.s)\n  %layer = s32[] convert(%x.r)\n";
    layer = "%layer";
  } else if (backward) {
    text += "  %last = s32[] constant(" + std::to_string(layers - 1) + ")\n";
    text += "  %layer = s32[] subtract(%last, %i)\n";
    layer = "%layer";
  }
  text += "  %w.ds = " + shape("f32", slice) + " dynamic-slice(%w, " + layer + zeros +
          "), dynamic_slice_sizes=" + IntList(slice) + "\n";
  std::string sliced = "%w.ds", x = "%x";
  if (bf16) {
    text += "  %w.cv = " + shape("bf16", slice) + " convert(%w.ds)\n";
    text += "  %x.bf = " + shape("bf16", act) + " convert(%x)\n";
    sliced = "%w.cv", x = "%x.bf";
  }
  text += "  %w.l = " + shape(t, local) + " reshape(" + sliced + ")\n";
  text += "  %ag = " + shape(t, gathered) + " all-gather(%w.l), channel_id=1, replica_groups=[" +
          std::to_string(groups) + "," + std::to_string(tp) + "]<=[" +
          std::to_string(groups * tp) + "], dimensions={" + std::to_string(ag_dim) +
          "}, use_global_device_ids=true\n";
  text += "  %dot = " + shape(t, out) + " dot(" + x + ", %ag), " + dnums + "\n";
  std::string product = "%dot";
  if (bf16) {
    text += "  %dot.f = " + shape("f32", out) + " convert(%dot)\n";
    product = "%dot.f";
  }
  text += "  %acc.next = " + shape("f32", out) + " add(%acc, " + product + ")\n";
  text += "  %one = s32[] constant(1)\n  %i.next = s32[] add(%i, %one)\n";
  std::string w_next = "%w";
  if (spoil == kUpdated) {
    text += "  %w.next = " + shape("f32", stacked) + " add(%w, %w)\n";
    w_next = "%w.next";
  }
  text += "  ROOT %out = " + state + " tuple(%i.next, %x, " + w_next + ", %acc.next)\n}\n\n";
  // The entry: JAX stores the stacked weight with the layer axis second and
  // transposes it before the loop.
  std::vector<int64_t> stored = stacked;
  if (transposed)
    std::swap(stored[0], stored[1]);
  std::string perm = "{1,0";
  for (size_t d = 2; d < stored.size(); ++d)
    perm += "," + std::to_string(d);
  perm += "}";
  text += "ENTRY %main (x: " + shape("f32", act) + ", w: " + shape("f32", stored) + ") -> " +
          shape("f32", out) + " {\n";
  text += "  %x = " + shape("f32", act) + " parameter(0)\n";
  text += "  %w = " + shape("f32", stored) + " parameter(1)\n";
  std::string w = "%w";
  if (transposed) {
    text += "  %w.t = " + shape("f32", stacked) + " transpose(%w), dimensions=" + perm + "\n";
    w = "%w.t";
  }
  text += "  %c0 = f32[] constant(0)\n  %acc = " + shape("f32", out) +
          " broadcast(%c0), dimensions={}\n  %start = s32[] constant(0)\n";
  text += "  %init = " + state + " tuple(%start, %x, " + w + ", %acc)\n";
  text += "  %loop = " + state + " while(%init), condition=%cond, body=%body\n";
  text += "  ROOT %r = " + shape("f32", out) + " get-tuple-element(%loop), index=3\n}\n";
  result.text = std::move(text);

  static const char *const kKinds[] = {"scan-q", "scan-o-merged", "scan-dq", "scan-dh-merged"};
  result.tags = {kKinds[kind], backward ? "scan-backward" : "scan-forward",
                 bf16 ? "bf16" : "f32",
                 spoil == kNone ? "scan-weight"
                 : spoil == kUpdated ? "scan-updated"
                                     : "scan-activation-index",
                 result.options.provenance ? "provenance" : "no-provenance"};
  const bool merged = kind == kO || kind == kDh;
  const bool proven = result.options.provenance && spoil == kNone;
  // Without a proof only the aggressive flag folds, and it cannot merge.
  const bool folds = merged ? proven || (result.options.provenance &&
                                         result.options.permute_aggressive)
                            : proven || result.options.permute_aggressive;
  result.expect_fused = folds ? 1 : 0;
  result.summary = llvm::formatv("scan {0} L={1} tp={2} groups={3} {4} {5} {6} provenance={7} "
                                 "aggressive={8}",
                                 kKinds[kind], layers, tp, groups, t,
                                 backward ? "backward" : "forward", result.tags[3],
                                 result.options.provenance, result.options.permute_aggressive)
                       .str();
  return result;
}

} // namespace loom::hlo::proptest
