//===- HloProtoHeader.cpp - Module header attributes <-> XLA fields ---------===//
//
// The header of the text form (`HloModule m, is_scheduled=true,
// input_output_alias={...}, ...`) against HloModuleProto's fields:
// EncodeHeaderAttribute and DeriveHeader (HloProtoInternal.h).
//
//===----------------------------------------------------------------------===//

#include "HloProtoFields.h"

namespace loom::hlo::proto_internal {

// ---- Module header -----------------------------------------------------------------

namespace {

// `{ {0}: (1, {}, may-alias), ... }`.
bool EncodeAliases(llvm::StringRef text, xla::HloInputOutputAliasProto *out) {
  Scan c{text};
  xla::HloInputOutputAliasProto a;
  if (!c.Eat('{'))
    return false;
  while (!c.Eat('}')) {
    std::vector<int64_t> output, param_index;
    int64_t param;
    llvm::StringRef kind;
    if (!c.Eat('{') || !c.IntsUntil('}', output) || !c.Eat(':') || !c.Eat('(') ||
        !c.Int(param) || !c.Eat(',') || !c.Eat('{') || !c.IntsUntil('}', param_index))
      return false;
    auto *e = a.add_entries();
    if (c.Eat(',')) {
      if (!c.Word(kind) || (kind != "may-alias" && kind != "must-alias"))
        return false;
      e->set_kind(kind == "may-alias" ? xla::MAY_ALIAS : xla::MUST_ALIAS);
    }
    if (!c.Eat(')'))
      return false;
    AddAll(e->mutable_output_shape_index(), output);
    e->set_parameter_number(param);
    AddAll(e->mutable_parameter_shape_index(), param_index);
    if (!c.EndItem())
      return false;
  }
  if (!c.AtEnd())
    return false;
  *out = std::move(a);
  return true;
}

std::string DeriveAliases(const xla::HloInputOutputAliasProto &a) {
  std::string s = "{ ";
  for (int i = 0; i < a.entries_size(); ++i) {
    const auto &e = a.entries(i);
    if (i)
      s += ", ";
    s += IntListOf(e.output_shape_index()) + ": (" + std::to_string(e.parameter_number()) +
         ", " + IntListOf(e.parameter_shape_index());
    if (e.kind() == xla::MAY_ALIAS)
      s += ", may-alias";
    else if (e.kind() == xla::MUST_ALIAS)
      s += ", must-alias";
    s += ")";
  }
  return s + " }";
}

bool EncodeDonors(llvm::StringRef text, xla::HloBufferDonorProto *out) {
  Scan c{text};
  xla::HloBufferDonorProto d;
  if (!c.Eat('{'))
    return false;
  while (!c.Eat('}')) {
    std::vector<int64_t> index;
    int64_t param;
    if (!c.Eat('(') || !c.Int(param) || !c.Eat(',') || !c.Eat('{') ||
        !c.IntsUntil('}', index) || !c.Eat(')'))
      return false;
    auto *e = d.add_entries();
    e->set_parameter_number(param);
    AddAll(e->mutable_parameter_shape_index(), index);
    if (!c.EndItem())
      return false;
  }
  if (!c.AtEnd())
    return false;
  *out = std::move(d);
  return true;
}

std::string DeriveDonors(const xla::HloBufferDonorProto &d) {
  std::string s = "{ ";
  for (int i = 0; i < d.entries_size(); ++i) {
    if (i)
      s += ", ";
    s += "(" + std::to_string(d.entries(i).parameter_number()) + ", " +
         IntListOf(d.entries(i).parameter_shape_index()) + ")";
  }
  return s + " }";
}

} // namespace

bool EncodeHeaderAttribute(llvm::StringRef name, llvm::StringRef value,
                           xla::HloModuleProto *out, HeaderState *state) {
  if (name == "is_scheduled") {
    if (value.trim() != "true")
      return false;
    state->scheduled = true;
    return true;
  }
  if (name == "replica_count" || name == "num_partitions") {
    std::optional<int64_t> n = OneInt(value);
    if (!n || *n < 1 || *n > INT32_MAX)
      return false;
    (name == "replica_count" ? state->replica_count : state->num_partitions) = *n;
    return true;
  }
  if (name == "input_output_alias")
    return !out->has_input_output_alias() &&
           EncodeAliases(value, out->mutable_input_output_alias());
  if (name == "buffer_donor")
    return !out->has_buffer_donor() && EncodeDonors(value, out->mutable_buffer_donor());
  if (name == "frontend_attributes")
    return !out->has_frontend_attributes() &&
           EncodeFrontendAttributes(value, out->mutable_frontend_attributes());
  // entry_computation_layout is the writer's (it needs the shapes).
  return false;
}

std::vector<std::pair<std::string, std::string>> DeriveHeader(const xla::HloModuleProto &m) {
  std::vector<std::pair<std::string, std::string>> out;
  if (m.has_schedule() && !m.schedule().sequences().empty())
    out.push_back({"is_scheduled", "true"});
  if (m.has_host_program_shape()) {
    const xla::ProgramShapeProto &p = m.host_program_shape();
    std::string s = "{(";
    for (int i = 0; i < p.parameters_size(); ++i) {
      llvm::Expected<Shape> shape = ShapeFromProto(p.parameters(i));
      if (!shape) {
        llvm::consumeError(shape.takeError());
        s.clear();
        break;
      }
      if (i)
        s += ", ";
      s += shape->ToString();
    }
    llvm::Expected<Shape> result = ShapeFromProto(p.result());
    if (!s.empty() && result) {
      s += ")->" + result->ToString() + "}";
      out.push_back({"entry_computation_layout", s});
    } else if (!result) {
      llvm::consumeError(result.takeError());
    }
  }
  if (m.has_device_assignment()) {
    if (m.device_assignment().replica_count() > 1)
      out.push_back({"replica_count", std::to_string(m.device_assignment().replica_count())});
    if (m.device_assignment().computation_count() > 1)
      out.push_back(
          {"num_partitions", std::to_string(m.device_assignment().computation_count())});
  }
  if (m.has_input_output_alias() && m.input_output_alias().entries_size())
    out.push_back({"input_output_alias", DeriveAliases(m.input_output_alias())});
  if (m.has_buffer_donor() && m.buffer_donor().entries_size())
    out.push_back({"buffer_donor", DeriveDonors(m.buffer_donor())});
  if (m.has_frontend_attributes())
    if (std::optional<std::string> f = DeriveFrontendAttributes(m.frontend_attributes()))
      out.push_back({"frontend_attributes", *f});
  return out;
}

} // namespace loom::hlo::proto_internal
