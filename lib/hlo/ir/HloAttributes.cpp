#include "loom/hlo/ir/HloAttributes.h"

#include "loom/support/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <iterator>

namespace loom::hlo {
namespace {

/// StringRef::ltrim / rtrim / trim of the same characters (" \t\n\v\f\r"),
/// inline: attribute text rarely has spaces to trim, and the verifier
/// decodes attributes of every collective and custom-call.
bool IsTrimmed(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}
llvm::StringRef LTrim(llvm::StringRef text) {
  size_t i = 0;
  while (i < text.size() && IsTrimmed(text[i]))
    ++i;
  return text.drop_front(i);
}
llvm::StringRef Trim(llvm::StringRef text) {
  text = LTrim(text);
  size_t n = text.size();
  while (n > 0 && IsTrimmed(text[n - 1]))
    --n;
  return text.take_front(n);
}

/// A cursor over an attribute's text; every read skips spaces first.
class Cursor {
public:
  explicit Cursor(llvm::StringRef text) : rest_(text) {}
  bool Eat(char c) {
    SkipSpace();
    if (rest_.empty() || rest_.front() != c)
      return false;
    rest_ = rest_.drop_front();
    return true;
  }
  bool Peek(char c) {
    SkipSpace();
    return !rest_.empty() && rest_.front() == c;
  }
  bool EatInt(int64_t &value) {
    SkipSpace();
    size_t n = 0;
    if (n < rest_.size() && rest_[n] == '-')
      ++n;
    while (n < rest_.size() && llvm::isDigit(rest_[n]))
      ++n;
    if (rest_.take_front(n).getAsInteger(10, value))
      return false;
    rest_ = rest_.drop_front(n);
    return true;
  }
  /// Eats Word (no space skipped inside it).
  bool EatWord(llvm::StringRef word) {
    SkipSpace();
    if (!rest_.startswith(word))
      return false;
    rest_ = rest_.drop_front(word.size());
    return true;
  }
  /// Eats a name in single quotes, `'axis_0'`.
  bool EatQuotedName(llvm::StringRef &name) {
    if (!Eat('\''))
      return false;
    size_t end = rest_.find('\'');
    if (end == llvm::StringRef::npos || end == 0)
      return false;
    name = rest_.take_front(end);
    rest_ = rest_.drop_front(end + 1);
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return rest_.empty();
  }

private:
  void SkipSpace() { rest_ = LTrim(rest_); }
  llvm::StringRef rest_;
};

/// Reads `a,b,c` up to `close` (which is consumed).
template <typename Ints> bool EatIntsUntil(Cursor &c, char close, Ints &out) {
  if (c.Eat(close))
    return true;
  do {
    int64_t v;
    if (!c.EatInt(v))
      return false;
    out.push_back(v);
  } while (c.Eat(','));
  return c.Eat(close);
}

llvm::Expected<const HloText *> Require(const HloInstruction &inst, llvm::StringRef name) {
  const HloText *v = inst.FindAttribute(name);
  if (!v)
    return InstructionError(inst, "missing attribute '" + name + "'");
  return v;
}

llvm::Expected<int64_t> GetIntAttribute(const HloInstruction &inst, llvm::StringRef name) {
  auto v = Require(inst, name);
  if (!v)
    return v.takeError();
  int64_t n;
  if (llvm::StringRef(**v).trim().getAsInteger(10, n))
    return InstructionError(inst, "attribute '" + name + "' is not an integer: " + **v);
  return n;
}

llvm::Expected<std::vector<int64_t>> GetIntListAttribute(const HloInstruction &inst,
                                                         llvm::StringRef name,
                                                         bool required) {
  const HloText *v = inst.FindAttribute(name);
  if (!v) {
    if (required)
      return InstructionError(inst, "missing attribute '" + name + "'");
    return std::vector<int64_t>{};
  }
  auto list = ParseIntList(*v);
  if (!list)
    return InstructionError(inst, "attribute '" + name + "': " + llvm::toString(list.takeError()));
  return list;
}

/// Expands `[G,S]<=[dims]T(perm)` to G groups of S devices.
llvm::Expected<std::vector<std::vector<int64_t>>> ExpandIota(Cursor &c) {
  std::vector<int64_t> group_shape, dims, perm;
  if (!c.Eat('[') || !EatIntsUntil(c, ']', group_shape) || group_shape.size() != 2)
    return makeError("iota replica groups need a [groups,size] shape");
  if (!c.Eat('<') || !c.Eat('=') || !c.Eat('[') || !EatIntsUntil(c, ']', dims) || dims.empty())
    return makeError("iota replica groups need '<=[dims]'");
  if (c.Eat('T')) {
    if (!c.Eat('(') || !EatIntsUntil(c, ')', perm))
      return makeError("malformed transpose 'T(...)' in iota replica groups");
  } else {
    for (size_t i = 0; i < dims.size(); ++i)
      perm.push_back(static_cast<int64_t>(i));
  }
  if (!c.AtEnd())
    return makeError("unexpected text after iota replica groups");
  if (perm.size() != dims.size())
    return makeError("transpose rank differs from the iota rank");
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d <= 0 || __builtin_mul_overflow(total, d, &total) || total > (int64_t(1) << 24))
      return makeError("iota replica group dimensions out of range");
  }
  if (group_shape[0] <= 0 || group_shape[1] <= 0 || group_shape[0] * group_shape[1] != total)
    return makeError("iota replica group shape does not cover the device list");
  std::vector<bool> seen(dims.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(dims.size()) || seen[p])
      return makeError("iota transpose is not a permutation");
    seen[p] = true;
  }
  // Walk the transposed array in row-major order; each element is the
  // row-major index of the same element in the untransposed iota.
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  std::vector<int64_t> index(dims.size(), 0);
  std::vector<int64_t> flat;
  flat.reserve(total);
  for (int64_t n = 0; n < total; ++n) {
    int64_t value = 0;
    for (size_t k = 0; k < perm.size(); ++k)
      value += index[k] * strides[perm[k]];
    flat.push_back(value);
    for (int64_t k = static_cast<int64_t>(perm.size()) - 1; k >= 0; --k) {
      if (++index[k] < dims[perm[k]])
        break;
      index[k] = 0;
    }
  }
  std::vector<std::vector<int64_t>> groups(group_shape[0]);
  for (int64_t g = 0; g < group_shape[0]; ++g)
    groups[g].assign(flat.begin() + g * group_shape[1], flat.begin() + (g + 1) * group_shape[1]);
  return groups;
}

/// Expands the mesh-axes form `mesh['a'=4,'b'=2] {'a'}` (XLA's
/// MeshAxesReplicaGroupList): the devices of the mesh, row-major over its
/// axes (`device_ids=(...)` after the axes gives them, else 0, 1, ...), are
/// grouped over the axes listed in braces; every other axis indexes the
/// groups. An axis ref `'a':(p)s` names the sub-axis of size s whose major
/// neighbours have total size p: the axis is split, major to minor, into
/// the sub-axes it is grouped over and the sizes between them. The groups
/// are the device array with the ungrouped dimensions first and the
/// grouped ones last, in the order listed, cut into equal runs.
llvm::Expected<std::vector<std::vector<int64_t>>> ExpandMesh(Cursor &c) {
  struct Axis {
    llvm::StringRef name;
    int64_t size;
  };
  std::vector<Axis> axes;
  if (!c.EatWord("mesh") || !c.Eat('['))
    return makeError("mesh replica groups need mesh['axis'=size,...]");
  int64_t total = 1;
  do {
    Axis a;
    if (!c.EatQuotedName(a.name) || !c.Eat('=') || !c.EatInt(a.size) || a.size <= 0)
      return makeError("malformed mesh axis (expected 'name'=size)");
    for (const Axis &b : axes)
      if (b.name == a.name)
        return makeError("mesh axis '" + a.name + "' is named twice");
    if (__builtin_mul_overflow(total, a.size, &total) || total > (int64_t(1) << 24))
      return makeError("mesh replica group dimensions out of range");
    axes.push_back(a);
  } while (c.Eat(','));
  if (!c.Eat(']'))
    return makeError("malformed mesh (expected ']')");
  std::vector<int64_t> devices;
  if (c.Eat(',')) {
    if (!c.EatWord("device_ids") || !c.Eat('=') || !c.Eat('(') || !EatIntsUntil(c, ')', devices))
      return makeError("malformed mesh device_ids=(...)");
    std::vector<bool> seen(static_cast<size_t>(total), false);
    if (static_cast<int64_t>(devices.size()) != total)
      return makeError("mesh device_ids do not match the mesh's size");
    for (int64_t d : devices) {
      if (d < 0 || d >= total || seen[d])
        return makeError("mesh device_ids are not a permutation of the devices");
      seen[d] = true;
    }
  } else {
    for (int64_t d = 0; d < total; ++d)
      devices.push_back(d);
  }
  // The grouped axis refs, in the order listed.
  struct Ref {
    size_t axis;
    int64_t pre, size; // pre == 0: the whole axis
  };
  std::vector<Ref> refs;
  if (!c.Eat('{'))
    return makeError("mesh replica groups need the grouped axes in braces");
  if (!c.Eat('}')) {
    do {
      llvm::StringRef name;
      if (!c.EatQuotedName(name))
        return makeError("malformed mesh axis ref (expected 'name')");
      size_t k = 0;
      while (k < axes.size() && axes[k].name != name)
        ++k;
      if (k == axes.size())
        return makeError("mesh axis ref '" + name + "' names no axis of the mesh");
      Ref r{k, 0, axes[k].size};
      if (c.Eat(':')) {
        if (!c.Eat('(') || !c.EatInt(r.pre) || !c.Eat(')') || !c.EatInt(r.size) || r.pre <= 0 ||
            r.size <= 1 || axes[k].size % r.pre != 0 || (axes[k].size / r.pre) % r.size != 0)
          return makeError("malformed sub-axis of '" + name + "' (expected 'name':(pre)size "
                           "dividing the axis)");
      }
      refs.push_back(r);
    } while (c.Eat(','));
    if (!c.Eat('}'))
      return makeError("malformed mesh axis refs (expected '}')");
  }
  if (!c.AtEnd())
    return makeError("unexpected text after mesh replica groups");
  // Split every axis into dimensions, major to minor; grouped[d] is the
  // position in refs of the ref that dimension d is, or -1.
  std::vector<int64_t> dims, grouped;
  for (size_t k = 0; k < axes.size(); ++k) {
    std::vector<size_t> on; // refs on axis k, by pre
    for (size_t r = 0; r < refs.size(); ++r)
      if (refs[r].axis == k)
        on.push_back(r);
    std::sort(on.begin(), on.end(), [&](size_t x, size_t y) { return refs[x].pre < refs[y].pre; });
    int64_t done = 1;
    for (size_t r : on) {
      int64_t pre = refs[r].pre == 0 ? 1 : refs[r].pre;
      if (refs[r].pre == 0 && on.size() > 1)
        return makeError("mesh axis '" + axes[k].name + "' is grouped whole and in part");
      if (pre % done != 0)
        return makeError("sub-axes of '" + axes[k].name + "' overlap");
      if (pre != done) {
        dims.push_back(pre / done);
        grouped.push_back(-1);
      }
      dims.push_back(refs[r].size);
      grouped.push_back(static_cast<int64_t>(r));
      done = pre * refs[r].size;
    }
    if (done != axes[k].size) {
      if (axes[k].size % done != 0)
        return makeError("sub-axes of '" + axes[k].name + "' do not divide it");
      dims.push_back(axes[k].size / done);
      grouped.push_back(-1);
    }
  }
  // The order of the dimensions: ungrouped ones, then refs as listed.
  std::vector<size_t> order;
  for (size_t d = 0; d < dims.size(); ++d)
    if (grouped[d] < 0)
      order.push_back(d);
  for (size_t r = 0; r < refs.size(); ++r)
    for (size_t d = 0; d < dims.size(); ++d)
      if (grouped[d] == static_cast<int64_t>(r))
        order.push_back(d);
  int64_t group_size = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    if (grouped[d] >= 0)
      group_size *= dims[d];
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(total / group_size));
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t at = 0;
    for (size_t k = 0; k < order.size(); ++k)
      at += index[k] * strides[order[k]];
    groups[n / group_size].push_back(devices[at]);
    for (int64_t k = static_cast<int64_t>(order.size()) - 1; k >= 0; --k) {
      if (++index[k] < dims[order[k]])
        break;
      index[k] = 0;
    }
  }
  return groups;
}

} // namespace

llvm::Error InstructionError(const HloInstruction &inst, const llvm::Twine &msg) {
  return makeError("'" + inst.name() + "': " + msg);
}

llvm::Expected<std::vector<int64_t>> ParseIntList(llvm::StringRef text) {
  Cursor c(text);
  std::vector<int64_t> values;
  if (!c.Eat('{') || !EatIntsUntil(c, '}', values) || !c.AtEnd())
    return makeError("expected a list of integers like {0,1}, got '" + text + "'");
  return values;
}

std::string FormatIntList(llvm::ArrayRef<int64_t> values) {
  std::string s = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(values[i]);
  }
  return s + "}";
}

std::optional<std::string> UnquoteString(llvm::StringRef text) {
  text = text.trim();
  if (text.size() < 2 || text.front() != '"' || text.back() != '"')
    return std::nullopt;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char ch = text[i];
    if (ch != '\\' || i + 2 >= text.size()) {
      out += ch;
      continue;
    }
    char next = text[++i];
    switch (next) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    default: out += next; break;
    }
  }
  return out;
}

std::optional<llvm::StringRef> UnquoteStringView(llvm::StringRef text, std::string &storage) {
  llvm::StringRef trimmed = Trim(text);
  if (trimmed.size() < 2 || trimmed.front() != '"' || trimmed.back() != '"')
    return std::nullopt;
  // Without a backslash UnquoteString copies the contents unchanged.
  llvm::StringRef contents = trimmed.drop_front().drop_back();
  if (contents.find('\\') == llvm::StringRef::npos)
    return contents;
  storage = *UnquoteString(text);
  return llvm::StringRef(storage);
}

void AppendQuotedString(std::string &out, llvm::StringRef text) {
  out += '"';
  // The runs between characters to escape are appended whole: most values
  // have none.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char *escaped;
    switch (text[i]) {
    case '"': escaped = "\\\""; break;
    case '\\': escaped = "\\\\"; break;
    case '\n': escaped = "\\n"; break;
    case '\t': escaped = "\\t"; break;
    default: continue;
    }
    out.append(text.data() + run, i - run);
    out += escaped;
    run = i + 1;
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

std::string QuoteString(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size() + 2);
  AppendQuotedString(out, text);
  return out;
}

llvm::Expected<ReplicaGroups> ParseReplicaGroups(llvm::StringRef text) {
  Cursor c(text);
  ReplicaGroups result;
  if (c.Peek('[')) {
    auto groups = ExpandIota(c);
    if (!groups)
      return groups.takeError();
    result.groups = std::move(*groups);
    result.was_iota = true;
    return result;
  }
  if (c.Peek('m')) {
    auto groups = ExpandMesh(c);
    if (!groups)
      return groups.takeError();
    result.groups = std::move(*groups);
    result.was_iota = true;
    return result;
  }
  if (!c.Eat('{'))
    return makeError("expected replica groups like {{0,1},{2,3}}, [2,2]<=[4] or "
                     "mesh['x'=2,'y'=2] {'x'}");
  if (!c.Eat('}')) {
    // Each group is read into inline storage, then copied once at its size.
    llvm::SmallVector<int64_t, 16> group;
    do {
      group.clear();
      if (!c.Eat('{') || !EatIntsUntil(c, '}', group))
        return makeError("malformed replica group in '" + text + "'");
      result.groups.emplace_back(group.begin(), group.end());
    } while (c.Eat(','));
    if (!c.Eat('}'))
      return makeError("malformed replica groups '" + text + "'");
  }
  if (!c.AtEnd())
    return makeError("unexpected text after replica groups '" + text + "'");
  return result;
}

std::string FormatReplicaGroups(const std::vector<std::vector<int64_t>> &groups) {
  std::string s = "{";
  for (size_t i = 0; i < groups.size(); ++i) {
    if (i)
      s += ',';
    s += FormatIntList(groups[i]);
  }
  return s + "}";
}

llvm::Expected<std::vector<int64_t>> GetDimensions(const HloInstruction &inst) {
  return GetIntListAttribute(inst, "dimensions", /*required=*/true);
}

llvm::Expected<int64_t> GetTupleIndex(const HloInstruction &inst) {
  return GetIntAttribute(inst, "index");
}

llvm::Expected<int64_t> GetIotaDimension(const HloInstruction &inst) {
  return GetIntAttribute(inst, "iota_dimension");
}

llvm::Expected<DotDimensionNumbers> GetDotDimensionNumbers(const HloInstruction &inst) {
  DotDimensionNumbers d;
  static constexpr llvm::StringLiteral kNames[] = {"lhs_batch_dims", "rhs_batch_dims",
                                                   "lhs_contracting_dims",
                                                   "rhs_contracting_dims"};
  std::vector<int64_t> *const outs[] = {&d.lhs_batch_dimensions, &d.rhs_batch_dimensions,
                                        &d.lhs_contracting_dimensions,
                                        &d.rhs_contracting_dimensions};
  // One walk over the attributes finds all four (the first text attribute
  // of each name, as FindAttribute would): the passes read the dimension
  // numbers of every dot they look at.
  const HloText *values[std::size(kNames)] = {};
  for (const HloInstruction::Attribute &a : inst.attributes()) {
    if (a.kind != HloInstruction::AttributeKind::kText)
      continue;
    for (size_t i = 0; i < std::size(kNames); ++i)
      if (!values[i] && a.name == kNames[i])
        values[i] = &a.value;
  }
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (!values[i])
      continue;
    auto list = ParseIntList(*values[i]);
    if (!list)
      return InstructionError(inst, "attribute '" + kNames[i] +
                                        "': " + llvm::toString(list.takeError()));
    *outs[i] = std::move(*list);
  }
  return d;
}

namespace {

/// An integer-list attribute and where it goes.
struct IntListField {
  const char *name;
  std::vector<int64_t> *out;
  bool required;
};

/// Reads each field, then `index_vector_dim` (gather and scatter share
/// this form of dimension numbers).
llvm::Error ReadIndexedDimensionNumbers(const HloInstruction &inst,
                                        llvm::ArrayRef<IntListField> fields,
                                        int64_t &index_vector_dim) {
  for (const IntListField &f : fields) {
    auto list = GetIntListAttribute(inst, f.name, f.required);
    if (!list)
      return list.takeError();
    *f.out = std::move(*list);
  }
  auto dim = GetIntAttribute(inst, "index_vector_dim");
  if (!dim)
    return dim.takeError();
  index_vector_dim = *dim;
  return llvm::Error::success();
}

} // namespace

llvm::Expected<GatherDimensionNumbers> GetGatherDimensionNumbers(const HloInstruction &inst) {
  GatherDimensionNumbers d;
  const IntListField fields[] = {
      {"offset_dims", &d.offset_dims, true},
      {"collapsed_slice_dims", &d.collapsed_slice_dims, false},
      {"start_index_map", &d.start_index_map, true},
      {"operand_batching_dims", &d.operand_batching_dims, false},
      {"start_indices_batching_dims", &d.start_indices_batching_dims, false},
      {"slice_sizes", &d.slice_sizes, true}};
  if (llvm::Error e = ReadIndexedDimensionNumbers(inst, fields, d.index_vector_dim))
    return e;
  return d;
}

llvm::Expected<ScatterDimensionNumbers> GetScatterDimensionNumbers(const HloInstruction &inst) {
  ScatterDimensionNumbers d;
  const IntListField fields[] = {
      {"update_window_dims", &d.update_window_dims, true},
      {"inserted_window_dims", &d.inserted_window_dims, false},
      {"scatter_dims_to_operand_dims", &d.scatter_dims_to_operand_dims, true},
      {"input_batching_dims", &d.input_batching_dims, false},
      {"scatter_indices_batching_dims", &d.scatter_indices_batching_dims, false}};
  if (llvm::Error e = ReadIndexedDimensionNumbers(inst, fields, d.index_vector_dim))
    return e;
  return d;
}

void SetDotDimensionNumbers(HloInstruction &inst, const DotDimensionNumbers &d) {
  // XLA prints only the non-empty lists, batch dims first.
  auto set = [&](const char *name, const std::vector<int64_t> &v) {
    if (v.empty())
      inst.RemoveAttribute(name);
    else
      inst.SetAttribute(name, FormatIntList(v));
  };
  set("lhs_batch_dims", d.lhs_batch_dimensions);
  set("lhs_contracting_dims", d.lhs_contracting_dimensions);
  set("rhs_batch_dims", d.rhs_batch_dimensions);
  set("rhs_contracting_dims", d.rhs_contracting_dimensions);
}

llvm::Expected<ReplicaGroups> GetReplicaGroups(const HloInstruction &inst) {
  const HloText *v = inst.FindAttribute("replica_groups");
  if (!v)
    return ReplicaGroups{};
  auto groups = ParseReplicaGroups(*v);
  if (!groups)
    return InstructionError(inst, "replica_groups: " + llvm::toString(groups.takeError()));
  return groups;
}

std::optional<int64_t> GetChannelId(const HloInstruction &inst) {
  const HloText *v = inst.FindAttribute("channel_id");
  int64_t n;
  if (!v || llvm::StringRef(*v).getAsInteger(10, n))
    return std::nullopt;
  return n;
}

bool GetUseGlobalDeviceIds(const HloInstruction &inst) {
  const HloText *v = inst.FindAttribute("use_global_device_ids");
  return v && *v == "true";
}

llvm::Expected<int64_t> GetCollectiveDimension(const HloInstruction &inst) {
  auto dims = GetDimensions(inst);
  if (!dims)
    return dims.takeError();
  if (dims->size() != 1)
    return InstructionError(inst, "expected exactly one collective dimension");
  return dims->front();
}

llvm::Expected<std::vector<std::pair<int64_t, int64_t>>>
GetSourceTargetPairs(const HloInstruction &inst) {
  auto v = Require(inst, "source_target_pairs");
  if (!v)
    return v.takeError();
  auto groups = ParseReplicaGroups(**v);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (!groups || groups->was_iota)
    return InstructionError(inst, "malformed source_target_pairs: " + **v);
  for (const auto &g : groups->groups) {
    if (g.size() != 2)
      return InstructionError(inst, "each source_target_pair needs two ids: " + **v);
    pairs.emplace_back(g[0], g[1]);
  }
  return pairs;
}

std::string GetCustomCallTarget(const HloInstruction &inst) {
  const HloText *v = inst.FindAttribute("custom_call_target");
  if (!v)
    return "";
  return UnquoteString(*v).value_or(*v);
}

std::string GetBackendConfig(const HloInstruction &inst) {
  const HloText *v = inst.FindAttribute("backend_config");
  if (!v)
    return "";
  return UnquoteString(*v).value_or(*v);
}

llvm::StringRef GetCustomCallTargetView(const HloInstruction &inst, std::string &storage) {
  const HloText *v = inst.FindAttribute("custom_call_target");
  if (!v)
    return "";
  return UnquoteStringView(*v, storage).value_or(v->ref());
}

llvm::StringRef GetBackendConfigView(const HloInstruction &inst, std::string &storage) {
  const HloText *v = inst.FindAttribute("backend_config");
  if (!v)
    return "";
  return UnquoteStringView(*v, storage).value_or(v->ref());
}

llvm::Expected<int> GetCustomCallApiVersion(const HloInstruction &inst) {
  const HloText *v = inst.FindAttribute("api_version");
  if (!v)
    return 1;
  int version = llvm::StringSwitch<int>(*v)
                    .Case("API_VERSION_UNSPECIFIED", 0)
                    .Case("API_VERSION_ORIGINAL", 1)
                    .Case("API_VERSION_STATUS_RETURNING", 2)
                    .Case("API_VERSION_STATUS_RETURNING_UNIFIED", 3)
                    .Case("API_VERSION_TYPED_FFI", 4)
                    .Default(-1);
  if (version < 0)
    return InstructionError(inst, "unknown api_version '" + *v + "'");
  return version;
}

/// Decodes frontend_attributes, calling `add(key, quoted_value)` for each
/// entry in order; the errors both forms of the accessor return.
static llvm::Error
ForEachFrontendAttribute(const HloInstruction &inst,
                         llvm::function_ref<void(llvm::StringRef, llvm::StringRef)> add) {
  const HloText *v = inst.FindAttribute("frontend_attributes");
  if (!v)
    return llvm::Error::success();
  llvm::StringRef text = Trim(*v);
  if (!text.consume_front("{") || !text.consume_back("}"))
    return InstructionError(inst, "frontend_attributes must be braced: " + *v);
  while (!(text = LTrim(text)).empty()) {
    size_t eq = text.find('=');
    if (eq == llvm::StringRef::npos)
      return InstructionError(inst, "malformed frontend_attributes: " + *v);
    llvm::StringRef key = Trim(text.take_front(eq));
    text = LTrim(text.drop_front(eq + 1));
    if (!text.startswith("\""))
      return InstructionError(inst, "frontend attribute '" + key + "' must be quoted");
    size_t end = 1;
    while (end < text.size() && text[end] != '"')
      end += text[end] == '\\' ? 2 : 1;
    if (end >= text.size())
      return InstructionError(inst, "unterminated frontend attribute '" + key + "'");
    add(key, text.take_front(end + 1));
    text = LTrim(text.drop_front(end + 1));
    if (!text.empty() && !text.consume_front(","))
      return InstructionError(inst, "malformed frontend_attributes: " + *v);
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::pair<std::string, std::string>>>
GetFrontendAttributes(const HloInstruction &inst) {
  std::vector<std::pair<std::string, std::string>> result;
  if (llvm::Error e = ForEachFrontendAttribute(
          inst, [&](llvm::StringRef key, llvm::StringRef quoted) {
            result.emplace_back(key.str(), *UnquoteString(quoted));
          }))
    return e;
  return result;
}

llvm::Error GetFrontendAttributeViews(const HloInstruction &inst, FrontendAttributeViews &out) {
  out.entries.clear();
  out.storage.clear();
  std::string unescaped;
  return ForEachFrontendAttribute(inst, [&](llvm::StringRef key, llvm::StringRef quoted) {
    std::optional<llvm::StringRef> value = UnquoteStringView(quoted, unescaped);
    if (value->data() == unescaped.data()) {
      out.storage.push_front(std::move(unescaped));
      unescaped.clear();
      value = out.storage.front();
    }
    out.entries.emplace_back(key, *value);
  });
}

void SetFrontendAttributes(HloInstruction &inst,
                           const std::vector<std::pair<std::string, std::string>> &attrs) {
  size_t size = 2;
  for (const auto &kv : attrs)
    size += kv.first.size() + kv.second.size() + 4;
  std::string s;
  s.reserve(size);
  s += '{';
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (i)
      s += ',';
    s += attrs[i].first;
    s += '=';
    AppendQuotedString(s, attrs[i].second);
  }
  s += '}';
  inst.SetAttribute("frontend_attributes", s);
}

llvm::Expected<ComparisonDirection> GetComparisonDirection(const HloInstruction &inst) {
  auto v = Require(inst, "direction");
  if (!v)
    return v.takeError();
  auto d = llvm::StringSwitch<std::optional<ComparisonDirection>>(**v)
               .Case("EQ", ComparisonDirection::kEq)
               .Case("NE", ComparisonDirection::kNe)
               .Case("GE", ComparisonDirection::kGe)
               .Case("GT", ComparisonDirection::kGt)
               .Case("LE", ComparisonDirection::kLe)
               .Case("LT", ComparisonDirection::kLt)
               .Default(std::nullopt);
  if (!d)
    return InstructionError(inst, "unknown comparison direction '" + **v + "'");
  return *d;
}

llvm::Expected<SliceConfig> GetSliceConfig(const HloInstruction &inst) {
  auto v = Require(inst, "slice");
  if (!v)
    return v.takeError();
  Cursor c(**v);
  SliceConfig s;
  auto bad = [&] { return InstructionError(inst, "malformed slice " + **v); };
  if (!c.Eat('{'))
    return bad();
  if (!c.Eat('}')) {
    do {
      int64_t start, limit, stride = 1;
      if (!c.Eat('[') || !c.EatInt(start) || !c.Eat(':') || !c.EatInt(limit))
        return bad();
      if (c.Eat(':') && !c.EatInt(stride))
        return bad();
      if (!c.Eat(']'))
        return bad();
      s.starts.push_back(start);
      s.limits.push_back(limit);
      s.strides.push_back(stride);
    } while (c.Eat(','));
    if (!c.Eat('}'))
      return bad();
  }
  if (!c.AtEnd())
    return bad();
  return s;
}

llvm::Expected<std::vector<int64_t>> GetDynamicSliceSizes(const HloInstruction &inst) {
  return GetIntListAttribute(inst, "dynamic_slice_sizes", /*required=*/true);
}

llvm::Expected<std::vector<PaddingDimension>> GetPaddingConfig(const HloInstruction &inst) {
  auto v = Require(inst, "padding");
  if (!v)
    return v.takeError();
  std::vector<PaddingDimension> result;
  llvm::SmallVector<llvm::StringRef, 4> dims;
  llvm::StringRef(**v).split(dims, 'x');
  for (llvm::StringRef dim : dims) {
    llvm::SmallVector<llvm::StringRef, 3> parts;
    dim.split(parts, '_');
    PaddingDimension p;
    if (parts.size() < 2 || parts.size() > 3 || parts[0].getAsInteger(10, p.low) ||
        parts[1].getAsInteger(10, p.high) ||
        (parts.size() == 3 && parts[2].getAsInteger(10, p.interior)))
      return InstructionError(inst, "malformed padding '" + **v + "'");
    result.push_back(p);
  }
  return result;
}

bool IsReplicatedParameter(const HloInstruction &param) {
  const HloText *sharding = param.FindAttribute("sharding");
  if (!sharding)
    return false;
  llvm::StringRef text = llvm::StringRef(*sharding).trim();
  if (text == "{replicated}")
    return true;
  // A tuple sharding `{{replicated}, {replicated}}`: every element replicated.
  if (!text.consume_front("{") || !text.consume_back("}") || text.trim().empty())
    return false;
  llvm::SmallVector<llvm::StringRef, 4> elements;
  text.split(elements, ',');
  return llvm::all_of(elements,
                      [](llvm::StringRef e) { return e.trim() == "{replicated}"; });
}

} // namespace loom::hlo
