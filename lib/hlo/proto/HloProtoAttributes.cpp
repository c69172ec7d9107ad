//===- HloProtoAttributes.cpp - Instruction and header attributes <-> XLA fields ===//
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
//
//===----------------------------------------------------------------------===//

#include "HloProtoInternal.h"

#include "loom/hlo/ir/HloAttributes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace loom::hlo::proto_internal {

using xla::HloInstructionProto;

// ---- Text helpers --------------------------------------------------------------

std::string Quote(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char ch : text) {
    switch (ch) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    // XLA escapes strings with absl::CEscape: single quotes too, and
    // control characters as three octal digits.
    case '\'': out += "\\'"; break;
    default:
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(static_cast<unsigned char>(ch)));
        out += buf;
      } else {
        out += ch;
      }
      break;
    }
  }
  out += '"';
  return out;
}

std::string IntList(llvm::ArrayRef<int64_t> values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(values[i]);
  }
  s += '}';
  return s;
}

namespace {

// A cursor over an attribute value. Every read either consumes what it
// read or fails; callers give up on the first failure.
struct Scan {
  llvm::StringRef s;
  // White space and `/*...*/` comments (XLA's `/*index=5*/` markers).
  void Ws() {
    while (true) {
      s = s.ltrim(" \t\r\n");
      if (!s.startswith("/*"))
        return;
      size_t end = s.find("*/", 2);
      if (end == llvm::StringRef::npos)
        return;
      s = s.drop_front(end + 2);
    }
  }
  bool Eat(char c) {
    Ws();
    return s.consume_front(llvm::StringRef(&c, 1));
  }
  bool EatWord(llvm::StringRef w) {
    Ws();
    return s.consume_front(w);
  }
  bool AtEnd() {
    Ws();
    return s.empty();
  }
  bool Int(int64_t &out) {
    Ws();
    size_t n = 0;
    if (n < s.size() && (s[n] == '-' || s[n] == '+'))
      ++n;
    while (n < s.size() && llvm::isDigit(s[n]))
      ++n;
    if (n == 0 || (n == 1 && !llvm::isDigit(s[0])))
      return false;
    if (s.substr(0, n).getAsInteger(10, out))
      return false;
    s = s.drop_front(n);
    return true;
  }
  // Integers separated by `sep` up to `close` (consumed).
  bool IntsUntil(char close, std::vector<int64_t> &out, char sep = ',') {
    out.clear();
    if (Eat(close))
      return true;
    while (true) {
      int64_t v;
      if (!Int(v))
        return false;
      out.push_back(v);
      if (Eat(close))
        return true;
      if (!Eat(sep))
        return false;
    }
  }
  // [A-Za-z0-9_.-]+
  bool Word(llvm::StringRef &out) {
    Ws();
    size_t n = 0;
    while (n < s.size() &&
           (llvm::isAlnum(s[n]) || s[n] == '_' || s[n] == '.' || s[n] == '-'))
      ++n;
    if (n == 0)
      return false;
    out = s.substr(0, n);
    s = s.drop_front(n);
    return true;
  }
  // A quoted string with backslash escapes, unescaped.
  bool Quoted(std::string &out) {
    Ws();
    if (!s.startswith("\""))
      return false;
    size_t i = 1;
    while (i < s.size() && s[i] != '"')
      i += s[i] == '\\' ? 2 : 1;
    if (i >= s.size())
      return false;
    std::optional<std::string> u = UnquoteString(s.substr(0, i + 1));
    if (!u)
      return false;
    out = std::move(*u);
    s = s.drop_front(i + 1);
    return true;
  }
};

std::optional<std::vector<int64_t>> Ints(llvm::StringRef text) {
  Scan c{text};
  std::vector<int64_t> v;
  if (!c.Eat('{') || !c.IntsUntil('}', v) || !c.AtEnd())
    return std::nullopt;
  return v;
}

std::optional<int64_t> OneInt(llvm::StringRef text) {
  Scan c{text};
  int64_t v;
  if (!c.Int(v) || !c.AtEnd())
    return std::nullopt;
  return v;
}

std::optional<bool> Bool(llvm::StringRef text) {
  text = text.trim();
  if (text == "true")
    return true;
  if (text == "false")
    return false;
  return std::nullopt;
}

std::optional<std::string> QuotedValue(llvm::StringRef text) {
  Scan c{text};
  std::string out;
  if (!c.Quoted(out) || !c.AtEnd())
    return std::nullopt;
  return out;
}

std::string Join(llvm::ArrayRef<int64_t> v, llvm::StringRef sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i)
      out += sep;
    out += std::to_string(v[i]);
  }
  return out;
}

template <typename Repeated> void AddAll(Repeated *field, llvm::ArrayRef<int64_t> v) {
  for (int64_t x : v)
    field->Add(x);
}

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
  if (!c.Eat('}')) {
    while (true) {
      std::vector<int64_t> g;
      if (!c.Eat('{') || !c.IntsUntil('}', g))
        return false;
      groups.push_back(std::move(g));
      if (c.Eat('}'))
        break;
      if (!c.Eat(','))
        return false;
    }
  }
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

bool ParseShardingBody(Scan &c, xla::OpSharding *out, int depth);

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
    // A repeated key cannot be held by the map: keep the text.
    if (!f.mutable_map()->insert({key, value}).second)
      return false;
    c.Ws();
    if (!c.s.startswith("}") && !c.Eat(','))
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
  if (!c.Eat('}')) {
    while (true) {
      std::vector<int64_t> v;
      if (!c.Eat('[') || !c.IntsUntil(']', v, ':') || v.size() < 2 || v.size() > 3)
        return false;
      dims.push_back(std::move(v));
      if (c.Eat('}'))
        break;
      if (!c.Eat(','))
        return false;
    }
  }
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
  if (!c.Eat('}')) {
    while (true) {
      std::vector<int64_t> v;
      if (!c.Eat('{') || !c.IntsUntil('}', v) || v.size() != 2)
        return false;
      pairs.push_back({v[0], v[1]});
      if (c.Eat('}'))
        break;
      if (!c.Eat(','))
        return false;
    }
  }
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

std::optional<std::vector<int64_t>> ParseInts(llvm::StringRef text) { return Ints(text); }

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
  auto bytes_into = [&](std::string *field) {
    std::optional<std::string> v = QuotedValue(value);
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
    return op == HloOpcode::kCustomCall && bytes_into(out->mutable_custom_call_target());
  if (name == "backend_config") {
    llvm::StringRef t = value.trim();
    if (t.startswith("{") && t.endswith("}")) {
      out->set_backend_config(t.str());
      return true;
    }
    return bytes_into(out->mutable_backend_config());
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
      c.Ws();
      if (!c.s.startswith("}") && !c.Eat(','))
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
    return bytes_into(out->mutable_infeed_config());
  if (name == "outfeed_config")
    return bytes_into(out->mutable_outfeed_config());
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
      c.Ws();
      if (!c.s.startswith("}") && !c.Eat(','))
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
    c.Ws();
    if (!c.s.startswith("}") && !c.Eat(','))
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
    c.Ws();
    if (!c.s.startswith("}") && !c.Eat(','))
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
