//===- HloProtoFields.cpp - Attribute values <-> XLA messages ---------------===//
//
// The encoders and derivations of the attributes whose values are XLA
// messages (HloProtoFields.h), e.g.
//
//   replica_groups=[2,4]<=[4,2]T(1,0) <-> collective_device_list { iota_replica_group_list {...} }
//   sharding={devices=[2,1]<=[2]}    <->  sharding { type: OTHER tile_assignment_dimensions: [2, 1]
//                                                    iota_reshape_dims: [2] ... }
//   metadata={op_name="a" source_line=3} <-> metadata { op_name: "a" source_line: 3 }
//   slice={[0:2], [1:8:2]}           <->  slice_dimensions { start: 0 limit: 2 stride: 1 } ...
//
//===----------------------------------------------------------------------===//

#include "HloProtoFields.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace loom::hlo::proto_internal {

// ---- Replica groups ------------------------------------------------------------

bool EncodeReplicaGroups(llvm::StringRef text, HloInstructionProto *out) {
  Scan c{text};
  if (c.Eat('[')) {
    std::vector<int64_t> shape, dims, perm;
    if (!c.IntsUntil(']', shape) || shape.size() != 2 || !c.EatWord("<=") || !c.Eat('[') ||
        !c.IntsUntil(']', dims) || dims.empty())
      return false;
    if (c.Eat('T') && (!c.Eat('(') || !c.IntsUntil(')', perm) || perm.size() != dims.size()))
      return false;
    if (!c.AtEnd())
      return false;
    xla::IotaReplicaGroupListProto *iota =
        out->mutable_collective_device_list()->mutable_iota_replica_group_list();
    iota->set_num_replica_groups(shape[0]);
    iota->set_num_devices_per_group(shape[1]);
    AddAll(iota->mutable_iota_reshape_dims(), dims);
    if (perm.empty())
      for (size_t i = 0; i < dims.size(); ++i)
        perm.push_back(static_cast<int64_t>(i));
    for (int64_t p : perm)
      iota->add_iota_transpose_perm(static_cast<int32_t>(p));
    return true;
  }
  std::vector<std::vector<int64_t>> groups;
  if (!c.Eat('{'))
    return false;
  if (!c.ListUntil('}', [&] {
        std::vector<int64_t> g;
        if (!c.Eat('{') || !c.IntsUntil('}', g))
          return false;
        groups.push_back(std::move(g));
        return true;
      }))
    return false;
  if (!c.AtEnd())
    return false;
  for (const std::vector<int64_t> &g : groups)
    AddAll(out->add_replica_groups()->mutable_replica_ids(), g);
  return true;
}

std::optional<std::string> DeriveReplicaGroups(const HloInstructionProto &in) {
  if (in.has_collective_device_list() &&
      in.collective_device_list().has_iota_replica_group_list()) {
    const xla::IotaReplicaGroupListProto &iota =
        in.collective_device_list().iota_replica_group_list();
    std::string s = "[" + std::to_string(iota.num_replica_groups()) + "," +
                    std::to_string(iota.num_devices_per_group()) + "]<=[" +
                    Join(llvm::SmallVector<int64_t, 4>(iota.iota_reshape_dims().begin(),
                                                       iota.iota_reshape_dims().end()),
                         ",") +
                    "]";
    bool identity = true;
    for (int i = 0; i < iota.iota_transpose_perm_size(); ++i)
      identity &= iota.iota_transpose_perm(i) == i;
    if (!identity)
      s += "T(" +
           Join(llvm::SmallVector<int64_t, 4>(iota.iota_transpose_perm().begin(),
                                              iota.iota_transpose_perm().end()),
                ",") +
           ")";
    return s;
  }
  // The list form: XLA's old field, or the new one's list.
  const auto &groups = in.replica_groups_size() || !in.has_collective_device_list()
                           ? in.replica_groups()
                           : in.collective_device_list().replica_groups();
  std::string s = "{";
  for (int i = 0; i < groups.size(); ++i) {
    if (i)
      s += ',';
    s += IntListOf(groups.Get(i).replica_ids());
  }
  s += '}';
  return s;
}

// ---- Sharding -------------------------------------------------------------------

namespace {

bool ParseShardingBody(Scan &c, xla::OpSharding *out, int depth);

} // namespace

// One sharding `{...}` (the braces included).
bool ParseSharding(Scan &c, xla::OpSharding *out, int depth) {
  if (depth > kMaxProtoDepth || !c.Eat('{'))
    return false;
  c.Ws();
  if (c.s.startswith("{")) {
    // A tuple: `{{a}, {b}}`.
    out->set_type(xla::OpSharding::TUPLE);
    while (true) {
      if (!ParseSharding(c, out->add_tuple_shardings(), depth + 1))
        return false;
      if (c.Eat('}'))
        return true;
      if (!c.Eat(','))
        return false;
    }
  }
  if (c.Eat('}')) {
    // `{}`: an empty tuple sharding.
    out->set_type(xla::OpSharding::TUPLE);
    return true;
  }
  return ParseShardingBody(c, out, depth);
}

namespace {

bool ParseShardingBody(Scan &c, xla::OpSharding *out, int depth) {
  llvm::StringRef word;
  if (!c.Word(word))
    return false;
  if (word == "replicated" || word == "manual" || word == "unknown") {
    out->set_type(word == "replicated" ? xla::OpSharding::REPLICATED
                  : word == "manual"   ? xla::OpSharding::MANUAL
                                       : xla::OpSharding::UNKNOWN);
    return c.Eat('}');
  }
  if (word == "maximal") {
    int64_t device;
    if (!c.EatWord("device=") || !c.Int(device))
      return false;
    out->set_type(xla::OpSharding::MAXIMAL);
    out->add_tile_assignment_dimensions(1);
    out->add_tile_assignment_devices(device);
    return c.Eat('}');
  }
  if (word != "devices=" && !(word == "devices" && c.Eat('=')))
    return false;
  std::vector<int64_t> dims, ids;
  if (!c.Eat('[') || !c.IntsUntil(']', dims) || dims.empty())
    return false;
  out->set_type(xla::OpSharding::OTHER);
  AddAll(out->mutable_tile_assignment_dimensions(), dims);
  if (c.EatWord("<=")) {
    std::vector<int64_t> reshape, perm;
    if (!c.Eat('[') || !c.IntsUntil(']', reshape) || reshape.empty())
      return false;
    if (c.s.startswith("T")) {
      c.s = c.s.drop_front();
      if (!c.Eat('(') || !c.IntsUntil(')', perm) || perm.size() != reshape.size())
        return false;
    } else {
      for (size_t i = 0; i < reshape.size(); ++i)
        perm.push_back(static_cast<int64_t>(i));
    }
    AddAll(out->mutable_iota_reshape_dims(), reshape);
    for (int64_t p : perm)
      out->add_iota_transpose_perm(static_cast<int32_t>(p));
  } else {
    while (true) {
      int64_t id;
      if (!c.Int(id))
        return false;
      ids.push_back(id);
      c.Ws();
      if (!c.s.startswith(","))
        break;
      c.s = c.s.drop_front();
    }
    AddAll(out->mutable_tile_assignment_devices(), ids);
  }
  while (!c.Eat('}')) {
    if (c.EatWord("last_tile_dim_replicate")) {
      out->set_replicate_on_last_tile_dim(true);
    } else if (c.EatWord("last_tile_dims={")) {
      while (true) {
        llvm::StringRef t;
        if (!c.Word(t))
          return false;
        if (t == "replicated")
          out->add_last_tile_dims(xla::OpSharding::REPLICATED);
        else if (t == "manual")
          out->add_last_tile_dims(xla::OpSharding::MANUAL);
        else if (t == "unknown")
          out->add_last_tile_dims(xla::OpSharding::UNKNOWN);
        else
          return false;
        if (c.Eat('}'))
          break;
        if (!c.Eat(','))
          return false;
      }
    } else {
      return false;
    }
  }
  (void)depth;
  return true;
}

} // namespace

void DeriveSharding(const xla::OpSharding &s, std::string &out, int depth) {
  if (depth > kMaxProtoDepth) {
    out += "{}";
    return;
  }
  switch (s.type()) {
  case xla::OpSharding::TUPLE:
    out += '{';
    for (int i = 0; i < s.tuple_shardings_size(); ++i) {
      if (i)
        out += ", ";
      // Every fifth element carries its index, as in tuple shapes.
      if (i && i % 5 == 0)
        out += "/*index=" + std::to_string(i) + "*/";
      DeriveSharding(s.tuple_shardings(i), out, depth + 1);
    }
    out += '}';
    return;
  case xla::OpSharding::REPLICATED:
    out += "{replicated}";
    return;
  case xla::OpSharding::MANUAL:
    out += "{manual}";
    return;
  case xla::OpSharding::UNKNOWN:
    out += "{unknown}";
    return;
  case xla::OpSharding::MAXIMAL:
    out += "{maximal device=" +
           std::to_string(s.tile_assignment_devices_size() ? s.tile_assignment_devices(0) : 0) +
           "}";
    return;
  default:
    break;
  }
  out += "{devices=[" + Join(llvm::SmallVector<int64_t, 4>(s.tile_assignment_dimensions().begin(),
                                                           s.tile_assignment_dimensions().end()),
                             ",") +
         "]";
  if (s.iota_reshape_dims_size()) {
    out += "<=[" + Join(llvm::SmallVector<int64_t, 4>(s.iota_reshape_dims().begin(),
                                                      s.iota_reshape_dims().end()),
                        ",") +
           "]";
    bool identity = true;
    for (int i = 0; i < s.iota_transpose_perm_size(); ++i)
      identity &= s.iota_transpose_perm(i) == i;
    if (!identity)
      out += "T(" + Join(llvm::SmallVector<int64_t, 4>(s.iota_transpose_perm().begin(),
                                                       s.iota_transpose_perm().end()),
                         ",") +
             ")";
  } else {
    out += Join(llvm::SmallVector<int64_t, 16>(s.tile_assignment_devices().begin(),
                                               s.tile_assignment_devices().end()),
                ",");
  }
  if (s.replicate_on_last_tile_dim())
    out += " last_tile_dim_replicate";
  if (s.last_tile_dims_size()) {
    out += " last_tile_dims={";
    for (int i = 0; i < s.last_tile_dims_size(); ++i) {
      if (i)
        out += ", ";
      int t = s.last_tile_dims(i);
      out += t == xla::OpSharding::MANUAL      ? "manual"
             : t == xla::OpSharding::UNKNOWN   ? "unknown"
                                               : "replicated";
    }
    out += '}';
  }
  out += '}';
}

// ---- Metadata -------------------------------------------------------------------

bool EncodeMetadata(llvm::StringRef text, xla::OpMetadata *out) {
  Scan c{text};
  if (!c.Eat('{'))
    return false;
  xla::OpMetadata m;
  while (!c.Eat('}')) {
    llvm::StringRef key;
    if (!c.Word(key) || !c.Eat('='))
      return false;
    std::string str;
    int64_t num = 0;
    bool is_string = key == "op_type" || key == "op_name" || key == "source_file" ||
                     key == "scheduling_name";
    if (is_string ? !c.Quoted(str) : !c.Int(num))
      return false;
    if (!is_string && (num < INT32_MIN || num > INT32_MAX))
      return false;
    int32_t n = static_cast<int32_t>(num);
    if (key == "op_type") m.set_op_type(str);
    else if (key == "op_name") m.set_op_name(str);
    else if (key == "source_file") m.set_source_file(str);
    else if (key == "scheduling_name") m.set_scheduling_name(str);
    else if (key == "source_line") m.set_source_line(n);
    else if (key == "source_end_line") m.set_source_end_line(n);
    else if (key == "source_column") m.set_source_column(n);
    else if (key == "source_end_column") m.set_source_end_column(n);
    else if (key == "stack_frame_id") m.set_stack_frame_id(n);
    else return false;
  }
  if (!c.AtEnd())
    return false;
  *out = std::move(m);
  return true;
}

std::optional<std::string> DeriveMetadata(const xla::OpMetadata &m) {
  std::vector<std::string> parts;
  if (!m.op_type().empty()) parts.push_back("op_type=" + Quote(m.op_type()));
  if (!m.op_name().empty()) parts.push_back("op_name=" + Quote(m.op_name()));
  if (!m.source_file().empty()) parts.push_back("source_file=" + Quote(m.source_file()));
  if (m.source_line()) parts.push_back("source_line=" + std::to_string(m.source_line()));
  if (m.source_end_line()) parts.push_back("source_end_line=" + std::to_string(m.source_end_line()));
  if (m.source_column()) parts.push_back("source_column=" + std::to_string(m.source_column()));
  if (m.source_end_column())
    parts.push_back("source_end_column=" + std::to_string(m.source_end_column()));
  if (m.stack_frame_id()) parts.push_back("stack_frame_id=" + std::to_string(m.stack_frame_id()));
  if (!m.scheduling_name().empty())
    parts.push_back("scheduling_name=" + Quote(m.scheduling_name()));
  if (parts.empty())
    return std::nullopt;
  std::string s = "{";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i)
      s += ' ';
    s += parts[i];
  }
  return s + "}";
}

// ---- Frontend attributes ---------------------------------------------------------

bool EncodeFrontendAttributes(llvm::StringRef text, xla::FrontendAttributes *out) {
  Scan c{text};
  if (!c.Eat('{'))
    return false;
  xla::FrontendAttributes f;
  while (!c.Eat('}')) {
    c.Ws();
    size_t eq = c.s.find('=');
    if (eq == llvm::StringRef::npos || eq == 0)
      return false;
    std::string key = c.s.substr(0, eq).str();
    c.s = c.s.drop_front(eq + 1);
    std::string value;
    c.Ws();
    if (c.s.startswith("{")) {
      // A structured value XLA prints without quotes: the balanced braces.
      int depth = 0;
      size_t i = 0;
      for (; i < c.s.size(); ++i) {
        if (c.s[i] == '{')
          ++depth;
        else if (c.s[i] == '}' && --depth == 0)
          break;
      }
      if (i >= c.s.size())
        return false;
      value = c.s.substr(0, i + 1).str();
      c.s = c.s.drop_front(i + 1);
    } else if (!c.Quoted(value)) {
      return false;
    }
    // The map's keys and values are `string`s (UTF-8 only); a repeated key
    // cannot be held by the map: keep the text.
    if (!IsUtf8(key) || !IsUtf8(value) || !f.mutable_map()->insert({key, value}).second)
      return false;
    if (!c.EndItem())
      return false;
  }
  if (!c.AtEnd())
    return false;
  *out = std::move(f);
  return true;
}

std::optional<std::string> DeriveFrontendAttributes(const xla::FrontendAttributes &f) {
  if (f.map().empty())
    return std::nullopt;
  // XLA prints the keys sorted; a proto map has no order of its own.
  std::map<std::string, std::string> sorted(f.map().begin(), f.map().end());
  std::string s = "{";
  bool first = true;
  for (const auto &[k, v] : sorted) {
    if (!first)
      s += ',';
    first = false;
    llvm::StringRef value = v;
    s += k + "=" + (value.startswith("{") && value.endswith("}") ? v : Quote(v));
  }
  return s + "}";
}

// ---- Windows, convolutions, padding, slices ----------------------------------------

namespace {

// `a x b x c` numbers, or `lo_hi x lo_hi` pairs.
bool Dims(llvm::StringRef text, std::vector<int64_t> &out) {
  out.clear();
  for (llvm::StringRef part : llvm::split(text, 'x')) {
    int64_t v;
    if (part.getAsInteger(10, v))
      return false;
    out.push_back(v);
  }
  return true;
}

} // namespace

bool EncodeWindow(llvm::StringRef text, xla::Window *out) {
  Scan c{text};
  if (!c.Eat('{'))
    return false;
  size_t close = c.s.rfind('}');
  if (close == llvm::StringRef::npos || !c.s.substr(close + 1).trim().empty())
    return false;
  llvm::SmallVector<llvm::StringRef, 6> fields;
  c.s.substr(0, close).split(fields, ' ', -1, false);
  xla::Window w;
  std::vector<int64_t> size, stride, lhs, rhs, rev;
  std::vector<std::pair<int64_t, int64_t>> pad;
  for (llvm::StringRef f : fields) {
    auto [key, value] = f.split('=');
    if (key == "size") {
      if (!Dims(value, size)) return false;
    } else if (key == "stride") {
      if (!Dims(value, stride)) return false;
    } else if (key == "lhs_dilate") {
      if (!Dims(value, lhs)) return false;
    } else if (key == "rhs_dilate") {
      if (!Dims(value, rhs)) return false;
    } else if (key == "rhs_reversal") {
      if (!Dims(value, rev)) return false;
    } else if (key == "pad") {
      for (llvm::StringRef part : llvm::split(value, 'x')) {
        auto [lo, hi] = part.split('_');
        int64_t l, h;
        if (lo.getAsInteger(10, l) || hi.getAsInteger(10, h))
          return false;
        pad.push_back({l, h});
      }
    } else {
      return false;
    }
  }
  size_t rank = size.size();
  auto fits = [&](size_t n) { return n == 0 || n == rank; };
  if (!fits(stride.size()) || !fits(lhs.size()) || !fits(rhs.size()) || !fits(rev.size()) ||
      !fits(pad.size()))
    return false;
  for (size_t i = 0; i < rank; ++i) {
    xla::WindowDimension *d = w.add_dimensions();
    d->set_size(size[i]);
    d->set_stride(stride.empty() ? 1 : stride[i]);
    d->set_padding_low(pad.empty() ? 0 : pad[i].first);
    d->set_padding_high(pad.empty() ? 0 : pad[i].second);
    d->set_base_dilation(lhs.empty() ? 1 : lhs[i]);
    d->set_window_dilation(rhs.empty() ? 1 : rhs[i]);
    if (!rev.empty() && rev[i] != 0 && rev[i] != 1)
      return false;
    d->set_window_reversal(!rev.empty() && rev[i] == 1);
  }
  *out = std::move(w);
  return true;
}

std::string DeriveWindow(const xla::Window &w) {
  std::vector<int64_t> size, stride, lhs, rhs, rev;
  std::string pad;
  bool any_stride = false, any_pad = false, any_lhs = false, any_rhs = false, any_rev = false;
  for (int i = 0; i < w.dimensions_size(); ++i) {
    const xla::WindowDimension &d = w.dimensions(i);
    size.push_back(d.size());
    stride.push_back(d.stride());
    lhs.push_back(d.base_dilation());
    rhs.push_back(d.window_dilation());
    rev.push_back(d.window_reversal() ? 1 : 0);
    if (i)
      pad += 'x';
    pad += std::to_string(d.padding_low()) + "_" + std::to_string(d.padding_high());
    any_stride |= d.stride() != 1;
    any_pad |= d.padding_low() != 0 || d.padding_high() != 0;
    any_lhs |= d.base_dilation() != 1;
    any_rhs |= d.window_dilation() != 1;
    any_rev |= d.window_reversal();
  }
  std::string s = "{";
  if (!size.empty())
    s += "size=" + Join(size, "x");
  if (any_stride)
    s += " stride=" + Join(stride, "x");
  if (any_pad)
    s += " pad=" + pad;
  if (any_lhs)
    s += " lhs_dilate=" + Join(lhs, "x");
  if (any_rhs)
    s += " rhs_dilate=" + Join(rhs, "x");
  if (any_rev)
    s += " rhs_reversal=" + Join(rev, "x");
  return s + "}";
}

namespace {

// One side of `b01f_01io->b01f`: the positions of the two letters and of
// each spatial digit.
bool Labels(llvm::StringRef text, char a, char b, int64_t &pos_a, int64_t &pos_b,
            std::vector<int64_t> &spatial) {
  pos_a = pos_b = -1;
  spatial.assign(text.size() >= 2 ? text.size() - 2 : 0, -1);
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    int64_t p = static_cast<int64_t>(i);
    if (ch == a && pos_a < 0)
      pos_a = p;
    else if (ch == b && pos_b < 0)
      pos_b = p;
    else if (llvm::isDigit(ch) && static_cast<size_t>(ch - '0') < spatial.size() &&
             spatial[ch - '0'] < 0)
      spatial[ch - '0'] = p;
    else
      return false;
  }
  return pos_a >= 0 && pos_b >= 0 &&
         std::none_of(spatial.begin(), spatial.end(), [](int64_t v) { return v < 0; });
}

} // namespace

bool EncodeDimLabels(llvm::StringRef text, xla::ConvolutionDimensionNumbers *out) {
  auto [lhs, rest] = text.trim().split('_');
  auto [rhs, output] = rest.split("->");
  xla::ConvolutionDimensionNumbers d;
  int64_t a, b;
  std::vector<int64_t> sp;
  if (!Labels(lhs, 'b', 'f', a, b, sp))
    return false;
  d.set_input_batch_dimension(a);
  d.set_input_feature_dimension(b);
  AddAll(d.mutable_input_spatial_dimensions(), sp);
  if (!Labels(rhs, 'i', 'o', a, b, sp))
    return false;
  d.set_kernel_input_feature_dimension(a);
  d.set_kernel_output_feature_dimension(b);
  AddAll(d.mutable_kernel_spatial_dimensions(), sp);
  if (!Labels(output, 'b', 'f', a, b, sp))
    return false;
  d.set_output_batch_dimension(a);
  d.set_output_feature_dimension(b);
  AddAll(d.mutable_output_spatial_dimensions(), sp);
  *out = std::move(d);
  return true;
}

namespace {

std::string LabelText(int64_t pos_a, char a, int64_t pos_b, char b,
                      const google::protobuf::RepeatedField<int64_t> &spatial) {
  int64_t rank = 2 + spatial.size();
  std::string s(static_cast<size_t>(std::max<int64_t>(rank, 0)), '?');
  auto put = [&](int64_t p, char ch) {
    if (p >= 0 && p < rank)
      s[p] = ch;
  };
  put(pos_a, a);
  put(pos_b, b);
  for (int i = 0; i < spatial.size(); ++i)
    put(spatial.Get(i), i < 10 ? static_cast<char>('0' + i) : '?');
  return s;
}

} // namespace

std::string DeriveDimLabels(const xla::ConvolutionDimensionNumbers &d) {
  return LabelText(d.input_batch_dimension(), 'b', d.input_feature_dimension(), 'f',
                   d.input_spatial_dimensions()) +
         "_" +
         LabelText(d.kernel_input_feature_dimension(), 'i', d.kernel_output_feature_dimension(),
                   'o', d.kernel_spatial_dimensions()) +
         "->" +
         LabelText(d.output_batch_dimension(), 'b', d.output_feature_dimension(), 'f',
                   d.output_spatial_dimensions());
}

bool EncodePadding(llvm::StringRef text, xla::PaddingConfig *out) {
  xla::PaddingConfig p;
  text = text.trim();
  if (!text.empty()) {
    for (llvm::StringRef part : llvm::split(text, 'x')) {
      llvm::SmallVector<llvm::StringRef, 3> v;
      part.split(v, '_');
      int64_t lo, hi, interior = 0;
      if (v.size() < 2 || v.size() > 3 || v[0].getAsInteger(10, lo) ||
          v[1].getAsInteger(10, hi) || (v.size() == 3 && v[2].getAsInteger(10, interior)))
        return false;
      xla::PaddingConfig::PaddingConfigDimension *d = p.add_dimensions();
      d->set_edge_padding_low(lo);
      d->set_edge_padding_high(hi);
      d->set_interior_padding(interior);
    }
  }
  *out = std::move(p);
  return true;
}

std::string DerivePadding(const xla::PaddingConfig &p) {
  std::string s;
  for (int i = 0; i < p.dimensions_size(); ++i) {
    const auto &d = p.dimensions(i);
    if (i)
      s += 'x';
    s += std::to_string(d.edge_padding_low()) + "_" + std::to_string(d.edge_padding_high());
    if (d.interior_padding() != 0)
      s += "_" + std::to_string(d.interior_padding());
  }
  return s;
}

bool EncodeSlice(llvm::StringRef text, HloInstructionProto *out) {
  Scan c{text};
  if (!c.Eat('{'))
    return false;
  std::vector<std::vector<int64_t>> dims;
  if (!c.ListUntil('}', [&] {
        std::vector<int64_t> v;
        if (!c.Eat('[') || !c.IntsUntil(']', v, ':') || v.size() < 2 || v.size() > 3)
          return false;
        dims.push_back(std::move(v));
        return true;
      }))
    return false;
  if (!c.AtEnd())
    return false;
  for (const std::vector<int64_t> &v : dims) {
    HloInstructionProto::SliceDimensions *d = out->add_slice_dimensions();
    d->set_start(v[0]);
    d->set_limit(v[1]);
    d->set_stride(v.size() == 3 ? v[2] : 1);
  }
  return true;
}

std::string DeriveSlice(const HloInstructionProto &in) {
  std::string s = "{";
  for (int i = 0; i < in.slice_dimensions_size(); ++i) {
    const auto &d = in.slice_dimensions(i);
    if (i)
      s += ", ";
    s += "[" + std::to_string(d.start()) + ":" + std::to_string(d.limit());
    if (d.stride() != 1)
      s += ":" + std::to_string(d.stride());
    s += "]";
  }
  return s + "}";
}

// `{{0,1},{1,2}}`.
bool EncodePairs(llvm::StringRef text, HloInstructionProto *out) {
  Scan c{text};
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (!c.Eat('{'))
    return false;
  if (!c.ListUntil('}', [&] {
        std::vector<int64_t> v;
        if (!c.Eat('{') || !c.IntsUntil('}', v) || v.size() != 2)
          return false;
        pairs.push_back({v[0], v[1]});
        return true;
      }))
    return false;
  if (!c.AtEnd())
    return false;
  for (auto [s, t] : pairs) {
    xla::SourceTarget *st = out->add_source_target_pairs();
    st->set_source(s);
    st->set_target(t);
  }
  return true;
}

std::string DerivePairs(const HloInstructionProto &in) {
  std::string s = "{";
  for (int i = 0; i < in.source_target_pairs_size(); ++i) {
    if (i)
      s += ',';
    s += "{" + std::to_string(in.source_target_pairs(i).source()) + "," +
         std::to_string(in.source_target_pairs(i).target()) + "}";
  }
  return s + "}";
}

} // namespace loom::hlo::proto_internal
