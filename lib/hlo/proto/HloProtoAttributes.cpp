//===- HloProtoAttributes.cpp - Instruction attributes <-> XLA fields -----===//
//
// Each attribute of the text form the XLA fields can hold has an encoder and
// a derivation, e.g.
//
//   dimensions={0,1}                 <->  dimensions: [0, 1]
//   slice={[0:2], [1:8:2]}           <->  slice_dimensions { start: 0 limit: 2 stride: 1 } ...
//   replica_groups=[2,4]<=[4,2]T(1,0) <-> collective_device_list { iota_replica_group_list {...} }
//   sharding={devices=[2,1]<=[2]}    <->  sharding { type: OTHER tile_assignment_dimensions: [2, 1]
//                                                    iota_reshape_dims: [2] ... }
//   metadata={op_name="a" source_line=3} <-> metadata { op_name: "a" source_line: 3 }
//
// An encoder refuses (sets nothing) what its field cannot hold; the writer
// then keeps the text verbatim. The derivations spell values as XLA prints
// them; the writer compares and keeps the text wherever they differ.
// This file maps each attribute name to its field(s) (EncodeAttribute) and
// back (DeriveAttributes); the message-valued ones (replica groups,
// shardings, metadata, windows, ...) are coded in HloProtoFields.cpp, the
// module header in HloProtoHeader.cpp.
//
//===----------------------------------------------------------------------===//

#include "HloProtoFields.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loom::hlo::proto_internal {

namespace {

bool IsBatchNorm(HloOpcode op) {
  return op == HloOpcode::kBatchNormGrad || op == HloOpcode::kBatchNormInference ||
         op == HloOpcode::kBatchNormTraining;
}

// Collectives XLA prints `replica_groups=` for even when there are none.
bool AlwaysPrintsReplicaGroups(HloOpcode op) {
  switch (op) {
  case HloOpcode::kAllGather:
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kAllReduce:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kAllToAll:
  case HloOpcode::kReduceScatter:
  case HloOpcode::kRaggedAllToAll:
  case HloOpcode::kCollectiveBroadcast:
    return true;
  default:
    return false;
  }
}

// Opcodes XLA prints `dimensions=` for even when it is `{}`.
bool AlwaysPrintsDimensions(HloOpcode op) {
  switch (op) {
  case HloOpcode::kBroadcast:
  case HloOpcode::kTranspose:
  case HloOpcode::kReduce:
  case HloOpcode::kReverse:
  case HloOpcode::kConcatenate:
  case HloOpcode::kSort:
  case HloOpcode::kMap:
  case HloOpcode::kAllGather:
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kReduceScatter:
    return true;
  default:
    return false;
  }
}

bool IsCollectivePermute(HloOpcode op) {
  return op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart;
}

std::string FloatText(float v) {
  // XLA prints a float attribute with six significant digits.
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

const char *const kApiVersions[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                    "API_VERSION_STATUS_RETURNING",
                                    "API_VERSION_STATUS_RETURNING_UNIFIED",
                                    "API_VERSION_TYPED_FFI"};
const char *const kPrecisions[] = {"default", "high", "highest"};
const char *const kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

template <size_t N> int IndexOf(const char *const (&names)[N], llvm::StringRef text) {
  for (size_t i = 0; i < N; ++i)
    if (text == names[i])
      return static_cast<int>(i);
  return -1;
}

} // namespace

// ---- Encoding --------------------------------------------------------------------

void EncodeImplicitDefaults(HloOpcode opcode, HloInstructionProto *out) {
  if (opcode == HloOpcode::kCustomCall)
    out->set_custom_call_api_version(xla::API_VERSION_ORIGINAL);
  if (opcode == HloOpcode::kConvolution) {
    out->set_feature_group_count(1);
    out->set_batch_group_count(1);
  }
}

bool EncodeAttribute(HloOpcode op, llvm::StringRef name, llvm::StringRef value,
                     HloInstructionProto *out) {
  auto ints_into = [&](auto *field) {
    if (field->size())
      return false;
    std::optional<std::vector<int64_t>> v = Ints(value);
    if (!v)
      return false;
    AddAll(field, *v);
    return true;
  };
  auto int_into = [&](auto setter) {
    std::optional<int64_t> v = OneInt(value);
    if (!v)
      return false;
    setter(*v);
    return true;
  };
  auto bool_into = [&](auto setter) {
    std::optional<bool> v = Bool(value);
    if (!v)
      return false;
    setter(*v);
    return true;
  };
  // A quoted value into a `string` field (UTF-8 only) or a `bytes` one.
  auto string_into = [&](std::string *field, bool any_bytes = false) {
    std::optional<std::string> v = QuotedValue(value, any_bytes);
    if (!v)
      return false;
    *field = std::move(*v);
    return true;
  };

  if (name == "dimensions")
    return op != HloOpcode::kIota && ints_into(out->mutable_dimensions());
  if (name == "iota_dimension")
    return op == HloOpcode::kIota && !out->dimensions_size() &&
           int_into([&](int64_t v) { out->add_dimensions(v); });
  if (name == "index")
    return op == HloOpcode::kGetTupleElement &&
           int_into([&](int64_t v) { out->set_tuple_index(v); });
  if (name == "direction") {
    llvm::StringRef d = value.trim();
    if (op != HloOpcode::kCompare ||
        !(d == "EQ" || d == "NE" || d == "GE" || d == "GT" || d == "LE" || d == "LT"))
      return false;
    out->set_comparison_direction(d.str());
    return true;
  }
  if (name == "type") {
    Scan c{value};
    llvm::StringRef w;
    if (op != HloOpcode::kCompare || !c.Word(w) || !c.AtEnd())
      return false;
    out->set_comparison_type(w.str());
    return true;
  }
  if (name == "epsilon") {
    if (!IsBatchNorm(op))
      return false;
    std::string t = value.trim().str();
    char *end = nullptr;
    float v = std::strtof(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size())
      return false;
    out->set_epsilon(v);
    return true;
  }
  if (name == "feature_index")
    return IsBatchNorm(op) && int_into([&](int64_t v) { out->set_feature_index(v); });
  if (name == "custom_call_target")
    return op == HloOpcode::kCustomCall && string_into(out->mutable_custom_call_target());
  if (name == "backend_config") {
    llvm::StringRef t = value.trim();
    if (t.startswith("{") && t.endswith("}")) {
      out->set_backend_config(t.str());
      return true;
    }
    return string_into(out->mutable_backend_config(), /*any_bytes=*/true);
  }
  if (name == "api_version") {
    int v = IndexOf(kApiVersions, value.trim());
    if (op != HloOpcode::kCustomCall || v < 0)
      return false;
    out->set_custom_call_api_version(static_cast<xla::CustomCallApiVersion>(v));
    return true;
  }
  if (name == "custom_call_has_side_effect")
    return op == HloOpcode::kCustomCall &&
           bool_into([&](bool v) { out->set_custom_call_has_side_effect(v); });
  if (name == "channel_id")
    return int_into([&](int64_t v) { out->set_channel_id(v); }) && out->channel_id() > 0;
  if (name == "replica_groups") {
    if (out->replica_groups_size() || out->has_collective_device_list())
      return false;
    HloInstructionProto tmp;
    if (!EncodeReplicaGroups(value, &tmp))
      return false;
    out->mutable_replica_groups()->Swap(tmp.mutable_replica_groups());
    if (tmp.has_collective_device_list())
      out->mutable_collective_device_list()->Swap(tmp.mutable_collective_device_list());
    return true;
  }
  if (name == "use_global_device_ids")
    return bool_into([&](bool v) { out->set_use_global_device_ids(v); });
  if (name == "source_target_pairs") {
    HloInstructionProto tmp;
    if (out->source_target_pairs_size() || !EncodePairs(value, &tmp))
      return false;
    out->mutable_source_target_pairs()->Swap(tmp.mutable_source_target_pairs());
    return true;
  }
  if (name == "slice") {
    HloInstructionProto tmp;
    if (out->slice_dimensions_size() || !EncodeSlice(value, &tmp))
      return false;
    out->mutable_slice_dimensions()->Swap(tmp.mutable_slice_dimensions());
    return true;
  }
  if (name == "dynamic_slice_sizes")
    return ints_into(out->mutable_dynamic_slice_sizes());
  if (name == "padding")
    return op == HloOpcode::kPad && !out->has_padding_config() &&
           EncodePadding(value, out->mutable_padding_config());
  if (name == "window") {
    xla::Window w;
    if (out->has_window() || !EncodeWindow(value, &w))
      return false;
    *out->mutable_window() = std::move(w);
    return true;
  }
  if (name == "dim_labels") {
    xla::ConvolutionDimensionNumbers d;
    if (out->has_convolution_dimension_numbers() || !EncodeDimLabels(value, &d))
      return false;
    *out->mutable_convolution_dimension_numbers() = std::move(d);
    return true;
  }
  if (name == "feature_group_count")
    return int_into([&](int64_t v) { out->set_feature_group_count(v); });
  if (name == "batch_group_count")
    return int_into([&](int64_t v) { out->set_batch_group_count(v); });
  if (name == "lhs_batch_dims")
    return ints_into(out->mutable_dot_dimension_numbers()->mutable_lhs_batch_dimensions());
  if (name == "lhs_contracting_dims")
    return ints_into(out->mutable_dot_dimension_numbers()->mutable_lhs_contracting_dimensions());
  if (name == "rhs_batch_dims")
    return ints_into(out->mutable_dot_dimension_numbers()->mutable_rhs_batch_dimensions());
  if (name == "rhs_contracting_dims")
    return ints_into(out->mutable_dot_dimension_numbers()->mutable_rhs_contracting_dimensions());
  if (name == "operand_precision") {
    Scan c{value};
    std::vector<int> v;
    if (!c.Eat('{'))
      return false;
    while (!c.Eat('}')) {
      llvm::StringRef w;
      if (!c.Word(w) || IndexOf(kPrecisions, w) < 0)
        return false;
      v.push_back(IndexOf(kPrecisions, w));
      if (!c.EndItem())
        return false;
    }
    if (!c.AtEnd() || out->precision_config().operand_precision_size())
      return false;
    for (int p : v)
      out->mutable_precision_config()->add_operand_precision(
          static_cast<xla::PrecisionConfig::Precision>(p));
    return true;
  }
  // Gather and scatter.
  xla::GatherDimensionNumbers *g = op == HloOpcode::kGather
                                       ? out->mutable_gather_dimension_numbers()
                                       : nullptr;
  xla::ScatterDimensionNumbers *s = op == HloOpcode::kScatter
                                        ? out->mutable_scatter_dimension_numbers()
                                        : nullptr;
  if (g) {
    if (name == "offset_dims") return ints_into(g->mutable_offset_dims());
    if (name == "collapsed_slice_dims") return ints_into(g->mutable_collapsed_slice_dims());
    if (name == "start_index_map") return ints_into(g->mutable_start_index_map());
    if (name == "operand_batching_dims") return ints_into(g->mutable_operand_batching_dims());
    if (name == "start_indices_batching_dims")
      return ints_into(g->mutable_start_indices_batching_dims());
    if (name == "index_vector_dim")
      return int_into([&](int64_t v) { g->set_index_vector_dim(v); });
    if (name == "slice_sizes") return ints_into(out->mutable_gather_slice_sizes());
  }
  if (s) {
    if (name == "update_window_dims") return ints_into(s->mutable_update_window_dims());
    if (name == "inserted_window_dims") return ints_into(s->mutable_inserted_window_dims());
    if (name == "scatter_dims_to_operand_dims")
      return ints_into(s->mutable_scatter_dims_to_operand_dims());
    if (name == "input_batching_dims") return ints_into(s->mutable_input_batching_dims());
    if (name == "scatter_indices_batching_dims")
      return ints_into(s->mutable_scatter_indices_batching_dims());
    if (name == "index_vector_dim")
      return int_into([&](int64_t v) { s->set_index_vector_dim(v); });
  }
  if (name == "indices_are_sorted")
    return bool_into([&](bool v) { out->set_indices_are_sorted(v); });
  if (name == "unique_indices")
    return bool_into([&](bool v) { out->set_unique_indices(v); });
  if (name == "exponent_bits")
    return op == HloOpcode::kReducePrecision &&
           int_into([&](int64_t v) { out->set_exponent_bits(static_cast<int32_t>(v)); });
  if (name == "mantissa_bits")
    return op == HloOpcode::kReducePrecision &&
           int_into([&](int64_t v) { out->set_mantissa_bits(static_cast<int32_t>(v)); });
  if (name == "distribution") {
    llvm::StringRef d = value.trim();
    if (op != HloOpcode::kRng || (d != "rng_uniform" && d != "rng_normal"))
      return false;
    out->set_distribution(d == "rng_uniform" ? xla::RNG_UNIFORM : xla::RNG_NORMAL);
    return true;
  }
  if (name == "is_stable")
    return bool_into([&](bool v) { out->set_is_stable(v); });
  if (name == "fft_type") {
    int v = IndexOf(kFftTypes, value.trim());
    if (op != HloOpcode::kFft || v < 0)
      return false;
    out->set_fft_type(static_cast<xla::FftType>(v));
    return true;
  }
  if (name == "fft_length")
    return op == HloOpcode::kFft && ints_into(out->mutable_fft_length());
  if (name == "infeed_config")
    return string_into(out->mutable_infeed_config(), /*any_bytes=*/true);
  if (name == "outfeed_config")
    return string_into(out->mutable_outfeed_config(), /*any_bytes=*/true);
  if (name == "is_host_transfer")
    return bool_into([&](bool v) { out->set_is_host_transfer(v); });
  if (name == "parameter_replication") {
    Scan c{value};
    std::vector<bool> v;
    if (!c.Eat('{') || out->has_parameter_replication())
      return false;
    while (!c.Eat('}')) {
      llvm::StringRef w;
      if (!c.Word(w) || !Bool(w))
        return false;
      v.push_back(*Bool(w));
      if (!c.EndItem())
        return false;
    }
    if (!c.AtEnd())
      return false;
    for (bool b : v)
      out->mutable_parameter_replication()->add_replicated_at_leaf_buffers(b);
    return true;
  }
  if (name == "kind") {
    Scan c{value};
    llvm::StringRef w;
    if (op != HloOpcode::kFusion || !c.Word(w) || !c.AtEnd())
      return false;
    out->set_fusion_kind(w.str());
    return true;
  }
  if (name == "sharding") {
    Scan c{value};
    xla::OpSharding sh;
    if (out->has_sharding() || !ParseSharding(c, &sh, 0) || !c.AtEnd())
      return false;
    *out->mutable_sharding() = std::move(sh);
    return true;
  }
  if (name == "frontend_attributes")
    return !out->has_frontend_attributes() &&
           EncodeFrontendAttributes(value, out->mutable_frontend_attributes());
  if (name == "metadata")
    return !out->has_metadata() && EncodeMetadata(value, out->mutable_metadata());
  return false;
}

// ---- Derivation -------------------------------------------------------------------

std::vector<DerivedAttribute> DeriveAttributes(const HloInstructionProto &in,
                                               const DeriveContext &ctx) {
  std::vector<DerivedAttribute> out;
  HloOpcode op = ctx.opcode;
  auto text = [&](const char *name, std::string value) {
    DerivedAttribute a;
    a.name = name;
    a.value = std::move(value);
    out.push_back(std::move(a));
  };
  auto computations = [&](const char *name, HloInstruction::AttributeKind kind,
                          llvm::ArrayRef<int64_t> ids) {
    DerivedAttribute a;
    a.name = name;
    a.kind = kind;
    a.computation_ids.assign(ids.begin(), ids.end());
    out.push_back(std::move(a));
  };

  if (op == HloOpcode::kFusion && !in.fusion_kind().empty())
    text("kind", in.fusion_kind());
  if (op == HloOpcode::kGetTupleElement)
    text("index", std::to_string(in.tuple_index()));
  if (op == HloOpcode::kIota && in.dimensions_size() == 1)
    text("iota_dimension", std::to_string(in.dimensions(0)));
  if (op == HloOpcode::kCompare && !in.comparison_direction().empty())
    text("direction", in.comparison_direction());
  if (op == HloOpcode::kCompare && !in.comparison_type().empty())
    text("type", in.comparison_type());
  if (IsBatchNorm(op)) {
    text("epsilon", FloatText(in.epsilon()));
    text("feature_index", std::to_string(in.feature_index()));
  }
  if (op == HloOpcode::kCustomCall)
    text("custom_call_target", Quote(in.custom_call_target()));
  if (in.has_window())
    text("window", DeriveWindow(in.window()));
  if (in.has_convolution_dimension_numbers())
    text("dim_labels", DeriveDimLabels(in.convolution_dimension_numbers()));
  if (in.feature_group_count() > 1)
    text("feature_group_count", std::to_string(in.feature_group_count()));
  if (in.batch_group_count() > 1)
    text("batch_group_count", std::to_string(in.batch_group_count()));
  if (in.channel_id() > 0)
    text("channel_id", std::to_string(in.channel_id()));
  if (AlwaysPrintsReplicaGroups(op) || in.replica_groups_size() ||
      in.has_collective_device_list())
    if (std::optional<std::string> rg = DeriveReplicaGroups(in))
      text("replica_groups", *rg);
  if (op != HloOpcode::kIota && (in.dimensions_size() || AlwaysPrintsDimensions(op)))
    text("dimensions", IntListOf(in.dimensions()));
  if (in.use_global_device_ids())
    text("use_global_device_ids", "true");
  if (IsCollectivePermute(op) || in.source_target_pairs_size())
    text("source_target_pairs", DerivePairs(in));
  if (op == HloOpcode::kSlice || in.slice_dimensions_size())
    text("slice", DeriveSlice(in));
  if (in.dynamic_slice_sizes_size() || op == HloOpcode::kDynamicSlice)
    text("dynamic_slice_sizes", IntListOf(in.dynamic_slice_sizes()));
  if (op == HloOpcode::kPad && in.has_padding_config())
    text("padding", DerivePadding(in.padding_config()));
  if (in.has_dot_dimension_numbers()) {
    const xla::DotDimensionNumbers &d = in.dot_dimension_numbers();
    if (d.lhs_batch_dimensions_size())
      text("lhs_batch_dims", IntListOf(d.lhs_batch_dimensions()));
    text("lhs_contracting_dims", IntListOf(d.lhs_contracting_dimensions()));
    if (d.rhs_batch_dimensions_size())
      text("rhs_batch_dims", IntListOf(d.rhs_batch_dimensions()));
    text("rhs_contracting_dims", IntListOf(d.rhs_contracting_dimensions()));
  }
  if (in.has_precision_config()) {
    const auto &p = in.precision_config().operand_precision();
    if (std::any_of(p.begin(), p.end(), [](int v) { return v != 0; })) {
      std::string s = "{";
      for (int i = 0; i < p.size(); ++i) {
        if (i)
          s += ',';
        int v = p.Get(i);
        s += v >= 0 && v < 3 ? kPrecisions[v] : "default";
      }
      text("operand_precision", s + "}");
    }
  }
  if (op == HloOpcode::kGather && in.has_gather_dimension_numbers()) {
    const xla::GatherDimensionNumbers &g = in.gather_dimension_numbers();
    text("offset_dims", IntListOf(g.offset_dims()));
    text("collapsed_slice_dims", IntListOf(g.collapsed_slice_dims()));
    text("start_index_map", IntListOf(g.start_index_map()));
    if (g.operand_batching_dims_size())
      text("operand_batching_dims", IntListOf(g.operand_batching_dims()));
    if (g.start_indices_batching_dims_size())
      text("start_indices_batching_dims", IntListOf(g.start_indices_batching_dims()));
    text("index_vector_dim", std::to_string(g.index_vector_dim()));
    text("slice_sizes", IntListOf(in.gather_slice_sizes()));
  }
  if (op == HloOpcode::kScatter && in.has_scatter_dimension_numbers()) {
    const xla::ScatterDimensionNumbers &s = in.scatter_dimension_numbers();
    text("update_window_dims", IntListOf(s.update_window_dims()));
    text("inserted_window_dims", IntListOf(s.inserted_window_dims()));
    text("scatter_dims_to_operand_dims", IntListOf(s.scatter_dims_to_operand_dims()));
    if (s.input_batching_dims_size())
      text("input_batching_dims", IntListOf(s.input_batching_dims()));
    if (s.scatter_indices_batching_dims_size())
      text("scatter_indices_batching_dims", IntListOf(s.scatter_indices_batching_dims()));
    text("index_vector_dim", std::to_string(s.index_vector_dim()));
  }
  if (in.indices_are_sorted())
    text("indices_are_sorted", "true");
  if (in.unique_indices())
    text("unique_indices", "true");
  if (op == HloOpcode::kReducePrecision) {
    text("exponent_bits", std::to_string(in.exponent_bits()));
    text("mantissa_bits", std::to_string(in.mantissa_bits()));
  }
  if (op == HloOpcode::kRng)
    text("distribution", in.distribution() == xla::RNG_NORMAL ? "rng_normal" : "rng_uniform");
  if (in.is_stable())
    text("is_stable", "true");
  if (op == HloOpcode::kFft) {
    int t = in.fft_type();
    text("fft_type", t >= 0 && t < 4 ? kFftTypes[t] : "FFT");
    text("fft_length", IntListOf(in.fft_length()));
  }
  if (!in.infeed_config().empty())
    text("infeed_config", Quote(in.infeed_config()));
  if (!in.outfeed_config().empty())
    text("outfeed_config", Quote(in.outfeed_config()));
  if (in.is_host_transfer())
    text("is_host_transfer", "true");
  if (in.has_parameter_replication() &&
      in.parameter_replication().replicated_at_leaf_buffers_size()) {
    std::string s = "{";
    const auto &r = in.parameter_replication().replicated_at_leaf_buffers();
    for (int i = 0; i < r.size(); ++i)
      s += std::string(i ? "," : "") + (r.Get(i) ? "true" : "false");
    text("parameter_replication", s + "}");
  }
  if (in.custom_call_has_side_effect())
    text("custom_call_has_side_effect", "true");
  if (op == HloOpcode::kCustomCall && in.custom_call_api_version() != xla::API_VERSION_ORIGINAL) {
    int v = in.custom_call_api_version();
    text("api_version", v >= 0 && v < 5 ? kApiVersions[v] : "API_VERSION_UNSPECIFIED");
  }

  // Called computations, by opcode (XLA's order of called_computation_ids).
  llvm::SmallVector<int64_t, 4> ids(in.called_computation_ids().begin(),
                                    in.called_computation_ids().end());
  using Kind = HloInstruction::AttributeKind;
  if (!ids.empty()) {
    if (op == HloOpcode::kWhile && ids.size() == 2) {
      computations("condition", Kind::kComputation, {ids[1]});
      computations("body", Kind::kComputation, {ids[0]});
    } else if (op == HloOpcode::kConditional && ctx.predicated_conditional && ids.size() == 2) {
      computations("true_computation", Kind::kComputation, {ids[0]});
      computations("false_computation", Kind::kComputation, {ids[1]});
    } else if (op == HloOpcode::kConditional) {
      computations("branch_computations", Kind::kComputationList, ids);
    } else if (op == HloOpcode::kSelectAndScatter && ids.size() == 2) {
      computations("select", Kind::kComputation, {ids[0]});
      computations("scatter", Kind::kComputation, {ids[1]});
    } else if ((op == HloOpcode::kFusion || op == HloOpcode::kAsyncStart ||
                op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone) &&
               ids.size() == 1) {
      computations("calls", Kind::kComputation, ids);
    } else if (ids.size() == 1) {
      computations("to_apply", Kind::kComputation, ids);
    } else {
      computations("called_computations", Kind::kComputationList, ids);
    }
  }
  if (in.control_predecessor_ids_size()) {
    DerivedAttribute a;
    a.name = "control-predecessors";
    a.kind = Kind::kControlPredecessors;
    out.push_back(std::move(a));
  }
  if (in.has_sharding()) {
    std::string s;
    DeriveSharding(in.sharding(), s, 0);
    text("sharding", std::move(s));
  }
  if (in.has_frontend_attributes())
    if (std::optional<std::string> f = DeriveFrontendAttributes(in.frontend_attributes()))
      text("frontend_attributes", *f);
  if (in.has_metadata())
    if (std::optional<std::string> m = DeriveMetadata(in.metadata()))
      text("metadata", *m);
  if (!in.backend_config().empty()) {
    llvm::StringRef b = in.backend_config();
    text("backend_config", b.startswith("{") && b.endswith("}") ? b.str() : Quote(b));
  }
  return out;
}

std::vector<int64_t>
CalledComputationIds(HloOpcode opcode,
                     llvm::ArrayRef<std::pair<llvm::StringRef, llvm::SmallVector<int64_t, 2>>>
                         attributes) {
  auto find = [&](llvm::StringRef name) -> const llvm::SmallVector<int64_t, 2> * {
    for (const auto &[n, ids] : attributes)
      if (n == name)
        return &ids;
    return nullptr;
  };
  auto pair_of = [&](llvm::StringRef first, llvm::StringRef second) -> std::vector<int64_t> {
    const auto *a = find(first), *b = find(second);
    if (a && b && a->size() == 1 && b->size() == 1 && attributes.size() == 2)
      return {(*a)[0], (*b)[0]};
    return {};
  };
  std::vector<int64_t> ids;
  if (opcode == HloOpcode::kWhile)
    ids = pair_of("body", "condition");
  else if (opcode == HloOpcode::kSelectAndScatter)
    ids = pair_of("select", "scatter");
  else if (opcode == HloOpcode::kConditional)
    ids = pair_of("true_computation", "false_computation");
  if (!ids.empty())
    return ids;
  for (const auto &[name, list] : attributes)
    ids.insert(ids.end(), list.begin(), list.end());
  return ids;
}

} // namespace loom::hlo::proto_internal
