//===- CollectiveMatmulContract.cpp - Encode, decode, resolve, verify -----===//
//
// docs/collective-matmul-contract.md is the specification; the division it
// states is implemented here:
//
//   backend_config (what the kernel reads)  rhs_contracting_dim, tp_degree,
//                                           num_groups, use_sb_to_sb
//   loom_* frontend attributes              weight side, the other dot
//                                           dimension numbers, the all-gather
//                                           dimension, its participant mode,
//                                           the exact group membership, and
//                                           the three weight shapes
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/ir/CollectiveMatmulContract.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/ir/ShapeInference.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

#include <charconv>
#include <iterator>

namespace loom::hlo::collective_matmul {
namespace {

// The backend_config keys, in their wire order (neuronx-cc 2.24 assembles
// the string from these literal pieces; the lowering re-parses it).
constexpr llvm::StringLiteral kRhsContractingDim = "rhs_contracting_dim";
constexpr llvm::StringLiteral kTpDegree = "tp_degree";
constexpr llvm::StringLiteral kNumGroups = "num_groups";
constexpr llvm::StringLiteral kUseSbToSb = "use_sb_to_sb";

// The loom_* keys, in the order the pass writes them.
constexpr llvm::StringLiteral kWeightSide = "loom_weight_side";
constexpr llvm::StringLiteral kLhsBatchDims = "loom_lhs_batch_dims";
constexpr llvm::StringLiteral kRhsBatchDims = "loom_rhs_batch_dims";
constexpr llvm::StringLiteral kLhsContractingDims = "loom_lhs_contracting_dims";
constexpr llvm::StringLiteral kRhsContractingDims = "loom_rhs_contracting_dims";
constexpr llvm::StringLiteral kAllGatherDimension = "loom_all_gather_dimension";
constexpr llvm::StringLiteral kReplicaGroups = "loom_replica_groups";
constexpr llvm::StringLiteral kChannelId = "loom_channel_id";
constexpr llvm::StringLiteral kUseGlobalDeviceIds = "loom_use_global_device_ids";
constexpr llvm::StringLiteral kLocalWeightShape = "loom_local_weight_shape";
constexpr llvm::StringLiteral kGatheredWeightShape = "loom_gathered_weight_shape";
constexpr llvm::StringLiteral kWeightOperandShape = "loom_weight_operand_shape";

std::string Str(const Shape &shape) { return shape.ToString(/*PrintLayout=*/false); }

// The encoders append to one character buffer: no stream, no temporary
// per value (the pass encodes a dozen values for each of tens of thousands
// of dots).
using Buffer = llvm::SmallVectorImpl<char>;

void Append(Buffer &out, llvm::StringRef text) { out.append(text.begin(), text.end()); }

/// A decimal integer, as std::to_string writes it.
void AppendInt(Buffer &out, int64_t value) {
  char digits[24];
  char *end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  out.append(digits, end);
}

/// `{1,2}`: FormatIntList's text.
void AppendIntList(Buffer &out, llvm::ArrayRef<int64_t> values) {
  out.push_back('{');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      out.push_back(',');
    AppendInt(out, values[i]);
  }
  out.push_back('}');
}

/// Shape::ToString(false): for a static array (every shape the pass
/// records) the element type and the dimensions, written here; any other
/// shape through the printer.
void AppendShape(Buffer &out, const Shape &shape) {
  if (!shape.IsArray() || !shape.is_static() ||
      llvm::any_of(shape.dimensions(), [](int64_t d) { return d < 0; })) {
    Append(out, Str(shape));
    return;
  }
  Append(out, PrimitiveTypeName(shape.element_type()));
  out.push_back('[');
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (i)
      out.push_back(',');
    AppendInt(out, shape.dimensions(i));
  }
  out.push_back(']');
}

/// A decimal integer: digits only, no sign, no spaces, fitting 64 bits.
/// One pass over the digits: the verifier decodes a dozen numbers of every
/// collective-matmul.
bool ParseDecimal(llvm::StringRef text, int64_t &value) {
  if (text.empty())
    return false;
  int64_t v = 0;
  for (char c : text) {
    if (!llvm::isDigit(c) || __builtin_mul_overflow(v, 10, &v) ||
        __builtin_add_overflow(v, c - '0', &v))
      return false;
  }
  value = v;
  return true;
}

const HloModule *ModuleOf(const HloInstruction &inst) {
  return inst.parent() ? inst.parent()->parent() : nullptr;
}

/// Group j is {j*g, ..., j*g+g-1}: the kernel's blocks of consecutive ranks.
std::vector<std::vector<int64_t>> KernelGroups(int64_t tp_degree, int64_t num_groups) {
  std::vector<std::vector<int64_t>> groups(num_groups);
  for (int64_t j = 0; j < num_groups; ++j)
    for (int64_t k = 0; k < tp_degree; ++k)
      groups[j].push_back(j * tp_degree + k);
  return groups;
}

/// The kernel's form without loom_*: operand 0 the local [M, K] (or
/// [B, M, K], flattened to [B*M, K]) shard on the lhs, gathered in rank order
/// along its rows, its innermost dimension contracted with dimension
/// rhs_contracting_dim of operand 1; the [M * tp_degree, N...] product is
/// reshaped to the custom-call's shape. Device ids are global (flattened).
llvm::Error ResolveNaturalForm(const HloInstruction &inst, Meaning &m) {
  const Shape &w = inst.operand(0)->shape();
  const Shape &x = inst.operand(1)->shape();
  auto missing = [&](const llvm::Twine &why) {
    return makeError("no loom_* frontend attributes, and " + why +
                                      "; the weight side, the all-gather dimension and the "
                                      "weight shapes are only implied for the kernel's "
                                      "natural form (docs/collective-matmul-contract.md)");
  };
  if (!w.IsArray() || !w.is_static() || (w.rank() != 2 && w.rank() != 3))
    return missing("operand 0 " + Str(w) + " is not a static [M, K] or [B, M, K] shard");
  if (!x.IsArray() || !x.is_static() || !inst.shape().IsArray() || !inst.shape().is_static())
    return missing("operand 1 or the result is not a static array");
  const int64_t k = w.dimensions().back();
  if (k == 0)
    return missing("operand 0 " + Str(w) + " has an empty innermost dimension");
  int64_t rows = w.element_count() / k;
  int64_t gathered_rows;
  if (__builtin_mul_overflow(rows, m.config.tp_degree, &gathered_rows))
    return missing("the gathered weight overflows");
  m.weight_side = WeightSide::kLhs;
  m.local_weight_shape = Shape(w.element_type(), {rows, k});
  m.all_gather_dimension = 0;
  m.gathered_weight_shape = Shape(w.element_type(), {gathered_rows, k});
  m.weight_operand_shape = m.gathered_weight_shape;
  m.dnums.lhs_contracting_dimensions = {1};
  m.dnums.rhs_contracting_dimensions = {m.config.rhs_contracting_dim};
  m.channel_id.reset();
  m.use_global_device_ids = true;
  llvm::Expected<Shape> dot = ShapeInference::InferDotShape(
      m.weight_operand_shape, x, m.dnums, inst.shape().element_type());
  if (!dot)
    return missing(llvm::toString(dot.takeError()));
  if (dot->element_count() != inst.shape().element_count())
    return missing("the kernel's product " + Str(*dot) + " does not reshape to the result " +
                   Str(inst.shape()));
  m.dot_shape = std::move(*dot);
  return llvm::Error::success();
}

} // namespace

bool IsCollectiveMatmul(const HloInstruction &inst) {
  if (inst.opcode() != HloOpcode::kCustomCall)
    return false;
  std::string storage;
  return GetCustomCallTargetView(inst, storage) == kTarget;
}

std::string EncodeBackendConfig(const BackendConfig &c) {
  llvm::SmallString<80> out;
  auto key = [&](llvm::StringRef key, int64_t value) {
    if (!out.empty())
      out.push_back(',');
    Append(out, key);
    out.push_back('=');
    AppendInt(out, value);
  };
  key(kRhsContractingDim, c.rhs_contracting_dim);
  key(kTpDegree, c.tp_degree);
  key(kNumGroups, c.num_groups);
  key(kUseSbToSb, c.use_sb_to_sb ? 1 : 0);
  return out.str().str();
}

llvm::Expected<BackendConfig> DecodeBackendConfig(llvm::StringRef text) {
  BackendConfig c;
  const llvm::StringLiteral keys[] = {kRhsContractingDim, kTpDegree, kNumGroups, kUseSbToSb};
  int64_t values[4];
  llvm::StringRef rest = text;
  for (size_t i = 0; i < 4; ++i) {
    llvm::StringRef key = keys[i];
    if (i > 0 && !rest.consume_front(","))
      return makeError("backend_config \"" + text + "\": expected ',' before key '" + key + "'");
    if (!rest.consume_front(key) || !rest.consume_front("="))
      return makeError("backend_config \"" + text + "\": expected key '" + key +
                       "=' (the keys are rhs_contracting_dim, tp_degree, num_groups, "
                       "use_sb_to_sb, in this order)");
    llvm::StringRef value = rest.take_until([](char ch) { return ch == ','; });
    rest = rest.drop_front(value.size());
    if (!ParseDecimal(value, values[i]))
      return makeError("backend_config key '" + key + "': '" + value +
                       "' is not a decimal integer");
  }
  if (!rest.empty())
    return makeError("backend_config \"" + text + "\": unexpected text '" + rest +
                     "' after use_sb_to_sb");
  if (values[3] > 1)
    return makeError("backend_config key 'use_sb_to_sb': '" + llvm::Twine(values[3]) +
                     "' is neither 0 nor 1");
  c.rhs_contracting_dim = values[0];
  c.tp_degree = values[1];
  c.num_groups = values[2];
  c.use_sb_to_sb = values[3] == 1;
  if (c.tp_degree < 1)
    return makeError("backend_config key 'tp_degree': must be at least 1");
  if (c.num_groups < 1)
    return makeError("backend_config key 'num_groups': must be at least 1");
  return c;
}

bool IsLoomKey(llvm::StringRef key) { return key.startswith("loom_"); }

LoomAttributesRef::LoomAttributesRef(const LoomAttributes &a)
    : weight_side(a.weight_side), dnums(&a.dnums), all_gather_dimension(a.all_gather_dimension),
      replica_groups(&a.replica_groups), channel_id(a.channel_id),
      use_global_device_ids(a.use_global_device_ids), local_weight_shape(&a.local_weight_shape),
      gathered_weight_shape(&a.gathered_weight_shape),
      weight_operand_shape(&a.weight_operand_shape) {}

namespace {

/// Writes each loom_* attribute of `a`, in the order the pass writes them:
/// `begin(key)`, then the value appended to `value`, then `end()`. The one
/// place that spells the keys' values.
template <typename Begin, typename End>
void WriteLoomAttributes(const LoomAttributesRef &a, Buffer &value, Begin begin, End end) {
  auto text = [&](llvm::StringRef key, llvm::StringRef text) {
    begin(key);
    Append(value, text);
    end();
  };
  auto ints = [&](llvm::StringRef key, llvm::ArrayRef<int64_t> values) {
    begin(key);
    AppendIntList(value, values);
    end();
  };
  auto shape = [&](llvm::StringRef key, const Shape &s) {
    begin(key);
    AppendShape(value, s);
    end();
  };
  text(kWeightSide, a.weight_side == WeightSide::kLhs ? "lhs" : "rhs");
  ints(kLhsBatchDims, a.dnums->lhs_batch_dimensions);
  ints(kRhsBatchDims, a.dnums->rhs_batch_dimensions);
  ints(kLhsContractingDims, a.dnums->lhs_contracting_dimensions);
  ints(kRhsContractingDims, a.dnums->rhs_contracting_dimensions);
  begin(kAllGatherDimension);
  AppendInt(value, a.all_gather_dimension);
  end();
  // FormatReplicaGroups' text.
  begin(kReplicaGroups);
  value.push_back('{');
  for (size_t i = 0; i < a.replica_groups->size(); ++i) {
    if (i)
      value.push_back(',');
    AppendIntList(value, (*a.replica_groups)[i]);
  }
  value.push_back('}');
  end();
  if (a.channel_id) {
    begin(kChannelId);
    AppendInt(value, *a.channel_id);
    end();
  }
  text(kUseGlobalDeviceIds, a.use_global_device_ids ? "true" : "false");
  shape(kLocalWeightShape, *a.local_weight_shape);
  shape(kGatheredWeightShape, *a.gathered_weight_shape);
  shape(kWeightOperandShape, *a.weight_operand_shape);
}

} // namespace

std::vector<std::pair<std::string, std::string>>
EncodeLoomAttributes(const LoomAttributesRef &a) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(12);
  llvm::SmallString<64> value;
  WriteLoomAttributes(
      a, value, [&](llvm::StringRef key) { out.emplace_back(key.str(), std::string()); },
      [&] {
        out.back().second = value.str().str();
        value.clear();
      });
  return out;
}

void EncodeFrontendAttributes(llvm::ArrayRef<std::pair<std::string, std::string>> own,
                              const LoomAttributesRef &a, llvm::SmallVectorImpl<char> &out) {
  // SetFrontendAttributes' form: braces, then `key=` and the quoted value,
  // entries separated by single commas.
  out.clear();
  out.push_back('{');
  auto begin = [&](llvm::StringRef key) {
    if (out.size() > 1)
      out.push_back(',');
    Append(out, key);
    out.push_back('=');
    out.push_back('"');
  };
  auto end = [&] { out.push_back('"'); };
  for (const auto &[key, value] : own) {
    if (IsLoomKey(key))
      continue;
    // The dot's values may hold anything: quoted as SetFrontendAttributes
    // quotes them.
    if (out.size() > 1)
      out.push_back(',');
    Append(out, key);
    out.push_back('=');
    std::string quoted;
    AppendQuotedString(quoted, value);
    Append(out, quoted);
  }
  // The loom_* values are written in place, unquoted: digits, signs, braces,
  // brackets, commas and type names have nothing to escape (QuoteString
  // escapes quotes, backslashes, newlines and tabs only).
  WriteLoomAttributes(a, out, begin, end);
  out.push_back('}');
}

llvm::Expected<Shape> DecodeArrayShape(llvm::StringRef text) {
  llvm::StringRef rest = text;
  llvm::StringRef type_name = rest.take_until([](char ch) { return ch == '['; });
  rest = rest.drop_front(type_name.size());
  std::optional<PrimitiveType> type = StringToPrimitiveType(type_name);
  if (!type || PrimitiveTypeBitWidth(*type) == 0 || !rest.consume_front("[") ||
      !rest.consume_back("]"))
    return makeError("'" + text + "' is not a static array shape like bf16[4,128]");
  llvm::SmallVector<int64_t, 8> dims;
  // The comma-separated sizes, an empty one refused (`f32[2,]`).
  while (!rest.empty()) {
    llvm::StringRef part = rest.take_until([](char ch) { return ch == ','; });
    int64_t d;
    if (!ParseDecimal(part, d))
      return makeError("'" + text + "' is not a static array shape like bf16[4,128]");
    dims.push_back(d);
    if (part.size() == rest.size())
      break;
    rest = rest.drop_front(part.size() + 1);
    if (rest.empty())
      return makeError("'" + text + "' is not a static array shape like bf16[4,128]");
  }
  Shape shape(*type, dims);
  if (!shape.ElementsIn())
    return makeError("'" + text + "': the element count overflows");
  return shape;
}

llvm::Expected<std::optional<LoomAttributes>>
DecodeLoomAttributes(llvm::ArrayRef<std::pair<std::string, std::string>> attrs) {
  llvm::SmallVector<std::pair<llvm::StringRef, llvm::StringRef>, 16> views;
  views.reserve(attrs.size());
  for (const auto &[key, value] : attrs)
    views.emplace_back(key, value);
  return DecodeLoomAttributes(views);
}

llvm::Expected<std::optional<LoomAttributes>>
DecodeLoomAttributes(llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> attrs) {
  // The value of each key of the contract, the last one written when a key
  // is repeated; a loom_* key the contract does not know still makes the
  // attributes the loom_* form.
  const llvm::StringLiteral keys[] = {kWeightSide,         kLhsBatchDims,
                                      kRhsBatchDims,       kLhsContractingDims,
                                      kRhsContractingDims, kAllGatherDimension,
                                      kReplicaGroups,      kChannelId,
                                      kUseGlobalDeviceIds, kLocalWeightShape,
                                      kGatheredWeightShape, kWeightOperandShape};
  constexpr size_t kKeys = std::size(keys);
  std::optional<llvm::StringRef> values[kKeys];
  bool any = false;
  // The pass writes the keys in the contract's order: each is looked for
  // first where the previous one was found, plus one.
  size_t expected = 0;
  for (const auto &[key, value] : attrs) {
    if (!IsLoomKey(key))
      continue;
    any = true;
    for (size_t n = 0; n < kKeys; ++n) {
      size_t k = (expected + n) % kKeys;
      if (key != keys[k])
        continue;
      values[k] = value;
      expected = k + 1;
      break;
    }
  }
  if (!any)
    return std::nullopt;
  auto find = [&](llvm::StringRef key) -> std::optional<llvm::StringRef> {
    // `key` is one of `keys`, the same object: compared by address first.
    for (size_t k = 0; k < kKeys; ++k)
      if ((key.data() == keys[k].data() && key.size() == keys[k].size()) || key == keys[k])
        return values[k];
    return std::nullopt;
  };
  auto need = [&](llvm::StringRef key) -> llvm::Expected<llvm::StringRef> {
    std::optional<llvm::StringRef> value = find(key);
    if (!value)
      return makeError("missing frontend attribute " + key);
    return *value;
  };
  auto bad = [](llvm::StringRef key, const llvm::Twine &why) {
    return makeError("malformed frontend attribute " + key + ": " + why);
  };
  LoomAttributes a;
  llvm::Expected<llvm::StringRef> side = need(kWeightSide);
  if (!side)
    return side.takeError();
  if (*side != "lhs" && *side != "rhs")
    return bad(kWeightSide, "'" + *side + "' is neither lhs nor rhs");
  a.weight_side = *side == "lhs" ? WeightSide::kLhs : WeightSide::kRhs;
  std::pair<llvm::StringRef, std::vector<int64_t> *> lists[] = {
      {kLhsBatchDims, &a.dnums.lhs_batch_dimensions},
      {kRhsBatchDims, &a.dnums.rhs_batch_dimensions},
      {kLhsContractingDims, &a.dnums.lhs_contracting_dimensions},
      {kRhsContractingDims, &a.dnums.rhs_contracting_dimensions}};
  for (auto [key, out] : lists) {
    llvm::Expected<llvm::StringRef> text = need(key);
    if (!text)
      return text.takeError();
    llvm::Expected<std::vector<int64_t>> values = ParseIntList(*text);
    if (!values)
      return bad(key, llvm::toString(values.takeError()));
    *out = std::move(*values);
  }
  llvm::Expected<llvm::StringRef> dim = need(kAllGatherDimension);
  if (!dim)
    return dim.takeError();
  if (!ParseDecimal(*dim, a.all_gather_dimension))
    return bad(kAllGatherDimension, "'" + *dim + "' is not a number");
  llvm::Expected<llvm::StringRef> groups = need(kReplicaGroups);
  if (!groups)
    return groups.takeError();
  llvm::Expected<ReplicaGroups> parsed = ParseReplicaGroups(*groups);
  if (!parsed)
    return bad(kReplicaGroups, llvm::toString(parsed.takeError()));
  a.replica_groups = std::move(parsed->groups);
  if (std::optional<llvm::StringRef> channel = find(kChannelId)) {
    int64_t id;
    if (!ParseDecimal(*channel, id))
      return bad(kChannelId, "'" + *channel + "' is not a number");
    a.channel_id = id;
  }
  llvm::Expected<llvm::StringRef> global = need(kUseGlobalDeviceIds);
  if (!global)
    return global.takeError();
  if (*global != "true" && *global != "false")
    return bad(kUseGlobalDeviceIds, "'" + *global + "' is neither true nor false");
  a.use_global_device_ids = *global == "true";
  std::pair<llvm::StringRef, Shape *> shapes[] = {{kLocalWeightShape, &a.local_weight_shape},
                                                  {kGatheredWeightShape, &a.gathered_weight_shape},
                                                  {kWeightOperandShape, &a.weight_operand_shape}};
  for (auto [key, out] : shapes) {
    llvm::Expected<llvm::StringRef> text = need(key);
    if (!text)
      return text.takeError();
    llvm::Expected<Shape> shape = DecodeArrayShape(*text);
    if (!shape)
      return bad(key, llvm::toString(shape.takeError()));
    *out = std::move(*shape);
  }
  return std::optional<LoomAttributes>(std::move(a));
}

llvm::Expected<Meaning> Resolve(const HloInstruction &inst) {
  if (inst.operand_count() != 2)
    return makeError("custom-call " + kTarget +
                                      " takes 2 operands (weight, activation), got " +
                                      llvm::Twine(inst.operand_count()));
  Meaning m;
  std::string config_text;
  llvm::Expected<BackendConfig> config =
      DecodeBackendConfig(GetBackendConfigView(inst, config_text));
  if (!config)
    return makeError(llvm::toString(config.takeError()));
  m.config = *config;
  if (m.config.tp_degree > (int64_t(1) << 20) || m.config.num_groups > (int64_t(1) << 20) ||
      m.config.tp_degree * m.config.num_groups > (int64_t(1) << 20))
    return makeError("backend_config tp_degree x num_groups is too large");
  // Views: the verifier resolves every collective-matmul of a module, and
  // copying a dozen keys and values each cost more than the checks.
  FrontendAttributeViews fe;
  if (llvm::Error e = GetFrontendAttributeViews(inst, fe))
    return e;
  llvm::Expected<std::optional<LoomAttributes>> loom = DecodeLoomAttributes(fe.entries);
  if (!loom)
    return makeError(llvm::toString(loom.takeError()));
  if (!*loom) {
    m.groups = KernelGroups(m.config.tp_degree, m.config.num_groups);
    if (llvm::Error e = ResolveNaturalForm(inst, m))
      return e;
    return m;
  }
  LoomAttributes &a = **loom;
  m.from_loom_attributes = true;
  m.weight_side = a.weight_side;
  m.recorded_rhs_contracting_dimensions = std::move(a.dnums.rhs_contracting_dimensions);
  m.dnums = std::move(a.dnums);
  // The contracting dimension of the rhs is the kernel's key.
  m.dnums.rhs_contracting_dimensions = {m.config.rhs_contracting_dim};
  m.all_gather_dimension = a.all_gather_dimension;
  m.channel_id = a.channel_id;
  m.use_global_device_ids = a.use_global_device_ids;
  m.local_weight_shape = std::move(a.local_weight_shape);
  m.gathered_weight_shape = std::move(a.gathered_weight_shape);
  m.weight_operand_shape = std::move(a.weight_operand_shape);
  m.dot_shape = inst.shape();
  // The membership: the kernel's blocks say it unless the groups are another
  // partition of the same ranks into num_groups groups of tp_degree
  // (--neuron-compat folds those); then loom_replica_groups says which.
  bool shaped = static_cast<int64_t>(a.replica_groups.size()) == m.config.num_groups &&
                llvm::all_of(a.replica_groups, [&](const std::vector<int64_t> &g) {
                  return static_cast<int64_t>(g.size()) == m.config.tp_degree;
                });
  if (!shaped)
    return makeError("backend_config says tp_degree=" +
                                      llvm::Twine(m.config.tp_degree) +
                                      ", num_groups=" + llvm::Twine(m.config.num_groups) +
                                      " but " + kReplicaGroups + " is " +
                                      FormatReplicaGroups(a.replica_groups));
  llvm::SmallVector<bool, 64> seen(m.config.tp_degree * m.config.num_groups, false);
  for (const std::vector<int64_t> &g : a.replica_groups)
    for (int64_t id : g) {
      if (id < 0 || id >= static_cast<int64_t>(seen.size()) || seen[id])
        return makeError(kReplicaGroups + " " +
                                          FormatReplicaGroups(a.replica_groups) +
                                          " must name each of the devices 0.." +
                                          llvm::Twine(seen.size() - 1) + " once");
      seen[id] = true;
    }
  m.groups = std::move(a.replica_groups);
  return m;
}

llvm::Error Verify(const HloInstruction &inst) {
  llvm::Expected<Meaning> resolved = Resolve(inst);
  if (!resolved)
    return resolved.takeError();
  const Meaning &m = *resolved;
  if (!m.from_loom_attributes)
    return llvm::Error::success(); // ResolveNaturalForm checked the shapes
  auto fail = [&](const llvm::Twine &msg) { return makeError(msg); };
  // Resolve decoded the loom_* keys once; what they recorded is in `m`.
  const std::vector<int64_t> &recorded = m.recorded_rhs_contracting_dimensions;
  if (recorded.size() != 1 || recorded[0] != m.config.rhs_contracting_dim)
    return fail("backend_config says rhs_contracting_dim=" +
                llvm::Twine(m.config.rhs_contracting_dim) + " but the dot's rhs contracting "
                "dimensions (" + kRhsContractingDims + ") are " + FormatIntList(recorded));
  // Operand 0 is the local weight, reshaped.
  const Shape &w = inst.operand(0)->shape();
  const Shape &local = m.local_weight_shape;
  if (!w.IsArray() || !w.is_static() || w.element_type() != local.element_type() ||
      w.element_count() != local.element_count())
    return fail("operand 0 " + Str(w) + " is not a reshape of " + kLocalWeightShape + " " +
                Str(local));
  // The gathered weight: the local one with the all-gather dimension
  // multiplied by the group size (every partition of each replica group
  // too, for a channel without global ids).
  const Shape &gathered = m.gathered_weight_shape;
  int64_t group = m.config.tp_degree;
  const HloModule *module = ModuleOf(inst);
  if (m.channel_id && !m.use_global_device_ids && module)
    group *= module->num_partitions();
  int64_t d = m.all_gather_dimension;
  if (d >= local.rank())
    return fail(kAllGatherDimension + " " + llvm::Twine(d) + " is out of range for " +
                kLocalWeightShape + " " + Str(local));
  Shape expected = local;
  expected.set_dimensions(d, local.dimensions(d) * group);
  if (!gathered.Compatible(expected))
    return fail(kGatheredWeightShape + " " + Str(gathered) + " must be " + kLocalWeightShape +
                " " + Str(local) + " with dimension " + llvm::Twine(d) +
                " multiplied by the group size " + llvm::Twine(group) + " (tp_degree=" +
                llvm::Twine(m.config.tp_degree) + "): " + Str(expected));
  const Shape &seen = m.weight_operand_shape;
  if (seen.element_type() != gathered.element_type() ||
      seen.element_count() != gathered.element_count())
    return fail(kWeightOperandShape + " " + Str(seen) + " is not a reshape of " +
                kGatheredWeightShape + " " + Str(gathered));
  // The result is the dot of the weight and operand 1 on the recorded side.
  const Shape &x = inst.operand(1)->shape();
  const bool lhs = m.weight_side == WeightSide::kLhs;
  llvm::Expected<Shape> dot = ShapeInference::InferDotShape(
      lhs ? seen : x, lhs ? x : seen, m.dnums,
      inst.shape().IsArray() ? std::optional(inst.shape().element_type()) : std::nullopt);
  if (!dot)
    return fail("the recorded dot does not apply: " + llvm::toString(dot.takeError()));
  if (!inst.shape().IsArray() || inst.shape().dimensions() != dot->dimensions())
    return fail("result " + Str(inst.shape()) + " is not the recorded dot's " + Str(*dot));
  return llvm::Error::success();
}

} // namespace loom::hlo::collective_matmul
