//===- HloProtoShapes.cpp - Shapes and literals <-> ShapeProto, LiteralProto ===//
//
//   f32[2,<=3]{1,0:T(8,128)}  <->  element_type: F32 dimensions: [2, 3]
//                                  is_dynamic_dimension: [false, true]
//                                  layout { minor_to_major: [1, 0]
//                                           tiles { dimensions: [8, 128] } }
//   s32[4] constant({1, 2, 3, 4})  <->  literal { shape {...} s32s: [1, 2, 3, 4] }
//
//===----------------------------------------------------------------------===//

#include "HloProtoInternal.h"

#include "loom/hlo/eval/Literal.h"
#include "loom/support/Error.h"

#include "llvm/ADT/StringExtras.h"

#include <cstring>
#include <limits>

namespace loom::hlo::proto_internal {

namespace {

// XLA marks an unbounded dynamic dimension (`?`) with this size.
constexpr int64_t kProtoUnboundedSize = std::numeric_limits<int64_t>::min();

// T(a,b)(c,d)E(n)S(n): the part of the layout text the fields hold.
struct LayoutFields {
  std::vector<std::vector<int64_t>> tiles;
  int64_t element_size_in_bits = 0;
  int64_t memory_space = 0;
};

std::string LayoutFieldsText(const LayoutFields &f) {
  std::string out;
  if (!f.tiles.empty()) {
    out += 'T';
    for (const std::vector<int64_t> &tile : f.tiles) {
      out += '(';
      for (size_t i = 0; i < tile.size(); ++i) {
        if (i)
          out += ',';
        out += std::to_string(tile[i]);
      }
      out += ')';
    }
  }
  if (f.element_size_in_bits != 0)
    out += "E(" + std::to_string(f.element_size_in_bits) + ")";
  if (f.memory_space != 0)
    out += "S(" + std::to_string(f.memory_space) + ")";
  return out;
}

bool ReadNumber(llvm::StringRef &s, int64_t &out) {
  size_t n = 0;
  while (n < s.size() && (llvm::isDigit(s[n]) || (n == 0 && s[n] == '-')))
    ++n;
  if (n == 0 || s.substr(0, n).getAsInteger(10, out))
    return false;
  s = s.drop_front(n);
  return true;
}

// `(a,b,...)` at the front of `s`.
bool ReadParenList(llvm::StringRef &s, std::vector<int64_t> &out) {
  if (!s.consume_front("("))
    return false;
  out.clear();
  while (!s.consume_front(")")) {
    int64_t v;
    if (!ReadNumber(s, v))
      return false;
    out.push_back(v);
    if (!s.startswith(")") && !s.consume_front(","))
      return false;
  }
  return true;
}

std::optional<LayoutFields> ParseLayoutFields(llvm::StringRef s) {
  LayoutFields f;
  if (s.consume_front("T")) {
    std::vector<int64_t> tile;
    while (s.startswith("(")) {
      if (!ReadParenList(s, tile))
        return std::nullopt;
      f.tiles.push_back(tile);
    }
    if (f.tiles.empty())
      return std::nullopt;
  }
  std::vector<int64_t> one;
  if (s.consume_front("E")) {
    if (!ReadParenList(s, one) || one.size() != 1)
      return std::nullopt;
    f.element_size_in_bits = one[0];
  }
  if (s.consume_front("S")) {
    if (!ReadParenList(s, one) || one.size() != 1)
      return std::nullopt;
    f.memory_space = one[0];
  }
  if (!s.empty())
    return std::nullopt;
  return f;
}

template <typename T> void AppendBytes(std::string *out, const T *data, int64_t count) {
  out->append(reinterpret_cast<const char *>(data), static_cast<size_t>(count) * sizeof(T));
}

} // namespace

xla::PrimitiveType ToProtoType(PrimitiveType type) {
  switch (type) {
#define LOOM_X(E, S, B)                                                        \
  case PrimitiveType::E:                                                       \
    return xla::E;
    LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
  }
  return xla::PRIMITIVE_TYPE_INVALID;
}

std::optional<PrimitiveType> FromProtoType(int type) {
  switch (type) {
#define LOOM_X(E, S, B)                                                        \
  case xla::E:                                                                 \
    return PrimitiveType::E;
    LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
  default:
    return std::nullopt;
  }
}

void ShapeToProto(const Shape &shape, xla::ShapeProto *out, int64_t *verbatim_layouts) {
  out->set_element_type(ToProtoType(shape.element_type()));
  if (shape.IsTuple() || shape.IsBuffer()) {
    for (const Shape &element : shape.tuple_shapes())
      ShapeToProto(element, out->add_tuple_shapes(), verbatim_layouts);
    return;
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    int64_t size = shape.dimensions(i);
    out->add_dimensions(size == Shape::kUnboundedSize ? kProtoUnboundedSize : size);
    out->add_is_dynamic_dimension(shape.is_dynamic_dimension(i));
  }
  if (!shape.has_layout())
    return;
  const Layout &layout = *shape.layout();
  xla::LayoutProto *lp = out->mutable_layout();
  for (int64_t d : layout.minor_to_major)
    lp->add_minor_to_major(d);
  if (layout.attributes.empty())
    return;
  std::optional<LayoutFields> fields = ParseLayoutFields(layout.attributes);
  if (fields && LayoutFieldsText(*fields) == layout.attributes) {
    for (const std::vector<int64_t> &tile : fields->tiles) {
      xla::TileProto *t = lp->add_tiles();
      for (int64_t d : tile)
        t->add_dimensions(d);
    }
    lp->set_element_size_in_bits(fields->element_size_in_bits);
    lp->set_memory_space(fields->memory_space);
    return;
  }
  lp->set_loom_attributes_text(layout.attributes);
  if (verbatim_layouts)
    ++*verbatim_layouts;
}

llvm::Expected<Shape> ShapeFromProto(const xla::ShapeProto &proto, int depth) {
  if (depth > kMaxProtoDepth)
    return makeError("shape nested deeper than " + llvm::Twine(kMaxProtoDepth) + " levels");
  std::optional<PrimitiveType> type = FromProtoType(proto.element_type());
  if (!type)
    return makeError("unknown element type " + llvm::Twine(proto.element_type()));
  auto no_dimensions = [&](llvm::StringRef what) -> llvm::Error {
    if (proto.dimensions_size() || proto.is_dynamic_dimension_size() || proto.has_layout())
      return makeError(llvm::Twine("a ") + what +
                       " shape has dimensions or a layout (only arrays have them)");
    return llvm::Error::success();
  };
  if (*type == PrimitiveType::TUPLE || *type == PrimitiveType::BUFFER) {
    if (llvm::Error err = no_dimensions(*type == PrimitiveType::TUPLE ? "tuple" : "buffer"))
      return err;
    std::vector<Shape> elements;
    elements.reserve(proto.tuple_shapes_size());
    for (const xla::ShapeProto &element : proto.tuple_shapes()) {
      llvm::Expected<Shape> e = ShapeFromProto(element, depth + 1);
      if (!e)
        return e.takeError();
      elements.push_back(std::move(*e));
    }
    if (*type == PrimitiveType::TUPLE)
      return Shape::MakeTuple(std::move(elements));
    if (elements.size() != 1 || !elements[0].IsArray())
      return makeError("a buffer shape must hold exactly one array shape");
    return Shape::MakeBuffer(std::move(elements[0]));
  }
  if (proto.tuple_shapes_size())
    return makeError("a " + PrimitiveTypeName(*type) + " shape has tuple elements");
  if (*type == PrimitiveType::TOKEN || *type == PrimitiveType::OPAQUE_TYPE) {
    if (llvm::Error err = no_dimensions(PrimitiveTypeName(*type)))
      return err;
    return Shape(*type, {});
  }
  int64_t rank = proto.dimensions_size();
  if (proto.is_dynamic_dimension_size() != 0 && proto.is_dynamic_dimension_size() != rank)
    return makeError("is_dynamic_dimension has " + llvm::Twine(proto.is_dynamic_dimension_size()) +
                     " entries for " + llvm::Twine(rank) + " dimensions");
  llvm::SmallVector<int64_t, 4> dims;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = proto.dimensions(i);
    bool dynamic = proto.is_dynamic_dimension_size() && proto.is_dynamic_dimension(i);
    if (size == kProtoUnboundedSize && dynamic)
      size = Shape::kUnboundedSize;
    else if (size < 0)
      return makeError("dimension " + llvm::Twine(i) + " has size " + llvm::Twine(size));
    dims.push_back(size);
  }
  Shape shape(*type, dims);
  for (int64_t i = 0; i < rank; ++i)
    shape.set_dynamic_dimension(i, proto.is_dynamic_dimension_size() &&
                                       proto.is_dynamic_dimension(i));
  if (!shape.ElementsIn() && shape.is_static())
    return makeError("the dimensions of '" + shape.ToString(false) +
                     "' multiply past the 64-bit element count limit");
  if (proto.has_layout()) {
    const xla::LayoutProto &lp = proto.layout();
    if (lp.minor_to_major_size() != rank)
      return makeError("layout has " + llvm::Twine(lp.minor_to_major_size()) +
                       " minor_to_major entries for a shape of rank " + llvm::Twine(rank) +
                       " ('" + shape.ToString(false) + "')");
    Layout layout;
    llvm::SmallVector<bool, 4> seen(rank, false);
    for (int64_t d : lp.minor_to_major()) {
      if (d < 0 || d >= rank || seen[d])
        return makeError("layout minor_to_major " + IntListOf(lp.minor_to_major()) +
                         " is not a permutation of the dimensions of '" +
                         shape.ToString(false) + "'");
      seen[d] = true;
      layout.minor_to_major.push_back(d);
    }
    if (!lp.loom_attributes_text().empty()) {
      layout.attributes = lp.loom_attributes_text();
    } else {
      LayoutFields fields;
      for (const xla::TileProto &t : lp.tiles())
        fields.tiles.emplace_back(t.dimensions().begin(), t.dimensions().end());
      fields.element_size_in_bits = lp.element_size_in_bits();
      fields.memory_space = lp.memory_space();
      layout.attributes = LayoutFieldsText(fields);
    }
    // XLA gives scalars an empty layout, which its text form does not
    // print; loom prints what it holds, so it holds none.
    if (rank > 0 || !layout.attributes.empty())
      shape.set_layout(std::move(layout));
  }
  return shape;
}

// ---- Literals ------------------------------------------------------------------

namespace {

// Fills `out` from one array literal.
void ArrayToProto(const Literal &lit, xla::LiteralProto *out) {
  int64_t n = lit.element_count();
  const uint8_t *raw = lit.raw_data();
  switch (lit.element_type()) {
  case PrimitiveType::PRED:
    for (int64_t i = 0; i < n; ++i)
      out->add_preds(raw[i] != 0);
    return;
  case PrimitiveType::S32:
    for (int64_t i = 0; i < n; ++i)
      out->add_s32s(lit.data<int32_t>()[i]);
    return;
  case PrimitiveType::S64:
    for (int64_t i = 0; i < n; ++i)
      out->add_s64s(lit.data<int64_t>()[i]);
    return;
  case PrimitiveType::U32:
    for (int64_t i = 0; i < n; ++i)
      out->add_u32s(lit.data<uint32_t>()[i]);
    return;
  case PrimitiveType::U64:
    for (int64_t i = 0; i < n; ++i)
      out->add_u64s(lit.data<uint64_t>()[i]);
    return;
  case PrimitiveType::F32:
    for (int64_t i = 0; i < n; ++i)
      out->add_f32s(lit.data<float>()[i]);
    return;
  case PrimitiveType::F64:
    for (int64_t i = 0; i < n; ++i)
      out->add_f64s(lit.data<double>()[i]);
    return;
  case PrimitiveType::C64:
    for (int64_t i = 0; i < 2 * n; ++i)
      out->add_c64s(lit.data<float>()[i]);
    return;
  case PrimitiveType::C128:
    for (int64_t i = 0; i < 2 * n; ++i)
      out->add_c128s(lit.data<double>()[i]);
    return;
  default:
    break;
  }
  // Byte fields: the storage as it is (little-endian, one byte per element
  // for the sub-byte types, as XLA stores them).
  std::string *bytes = nullptr;
  switch (lit.element_type()) {
  case PrimitiveType::S1: bytes = out->mutable_s1s(); break;
  case PrimitiveType::S2: bytes = out->mutable_s2s(); break;
  case PrimitiveType::S4: bytes = out->mutable_s4s(); break;
  case PrimitiveType::S8: bytes = out->mutable_s8s(); break;
  case PrimitiveType::U1: bytes = out->mutable_u1s(); break;
  case PrimitiveType::U2: bytes = out->mutable_u2s(); break;
  case PrimitiveType::U4: bytes = out->mutable_u4s(); break;
  case PrimitiveType::U8: bytes = out->mutable_u8s(); break;
  case PrimitiveType::S16: bytes = out->mutable_s16s(); break;
  case PrimitiveType::U16: bytes = out->mutable_u16s(); break;
  case PrimitiveType::F16: bytes = out->mutable_f16s(); break;
  case PrimitiveType::BF16: bytes = out->mutable_bf16s(); break;
  case PrimitiveType::F4E2M1FN: bytes = out->mutable_f4e2m1fns(); break;
  case PrimitiveType::F8E3M4: bytes = out->mutable_f8e3m4s(); break;
  case PrimitiveType::F8E4M3: bytes = out->mutable_f8e4m3s(); break;
  case PrimitiveType::F8E4M3FN: bytes = out->mutable_f8e4m3fns(); break;
  case PrimitiveType::F8E4M3B11FNUZ: bytes = out->mutable_f8e4m3b11fnuzs(); break;
  case PrimitiveType::F8E4M3FNUZ: bytes = out->mutable_f8e4m3fnuzs(); break;
  case PrimitiveType::F8E5M2: bytes = out->mutable_f8e5m2s(); break;
  case PrimitiveType::F8E5M2FNUZ: bytes = out->mutable_f8e5m2fnuzs(); break;
  case PrimitiveType::F8E8M0FNU: bytes = out->mutable_f8e8m0fnus(); break;
  default: return; // token: no data
  }
  AppendBytes(bytes, raw, lit.size_bytes());
}

void LiteralValueToProto(const Literal &lit, xla::LiteralProto *out) {
  ShapeToProto(lit.shape(), out->mutable_shape(), nullptr);
  if (lit.IsTuple()) {
    for (const Literal &element : lit.tuple_elements())
      LiteralValueToProto(element, out->add_tuple_literals());
    return;
  }
  ArrayToProto(lit, out);
}

// The element storage of `proto` for an array of `type` as bytes, and its
// element count as the proto holds it.
llvm::Error FillArray(const xla::LiteralProto &proto, Literal &lit) {
  int64_t n = lit.element_count();
  auto count_error = [&](int64_t have) {
    return makeError("the literal has " + llvm::Twine(have) + " values for " +
                     llvm::Twine(n) + " elements of '" + lit.shape().ToString(false) + "'");
  };
  uint8_t *raw = lit.raw_data();
  auto copy_repeated = [&](const auto &values, int64_t per_element) -> llvm::Error {
    if (values.size() != n * per_element)
      return count_error(values.size() / per_element);
    using T = typename std::decay_t<decltype(values)>::value_type;
    for (int64_t i = 0; i < n * per_element; ++i) {
      T v = values.Get(static_cast<int>(i));
      std::memcpy(raw + i * sizeof(T), &v, sizeof(T));
    }
    return llvm::Error::success();
  };
  switch (lit.element_type()) {
  case PrimitiveType::PRED:
    if (proto.preds_size() != n)
      return count_error(proto.preds_size());
    for (int64_t i = 0; i < n; ++i)
      raw[i] = proto.preds(static_cast<int>(i)) ? 1 : 0;
    return llvm::Error::success();
  case PrimitiveType::S32: return copy_repeated(proto.s32s(), 1);
  case PrimitiveType::S64: return copy_repeated(proto.s64s(), 1);
  case PrimitiveType::U32: return copy_repeated(proto.u32s(), 1);
  case PrimitiveType::U64: return copy_repeated(proto.u64s(), 1);
  case PrimitiveType::F32: return copy_repeated(proto.f32s(), 1);
  case PrimitiveType::F64: return copy_repeated(proto.f64s(), 1);
  case PrimitiveType::C64: return copy_repeated(proto.c64s(), 2);
  case PrimitiveType::C128: return copy_repeated(proto.c128s(), 2);
  default:
    break;
  }
  const std::string *bytes = nullptr;
  switch (lit.element_type()) {
  case PrimitiveType::S1: bytes = &proto.s1s(); break;
  case PrimitiveType::S2: bytes = &proto.s2s(); break;
  case PrimitiveType::S4: bytes = &proto.s4s(); break;
  case PrimitiveType::S8: bytes = &proto.s8s(); break;
  case PrimitiveType::U1: bytes = &proto.u1s(); break;
  case PrimitiveType::U2: bytes = &proto.u2s(); break;
  case PrimitiveType::U4: bytes = &proto.u4s(); break;
  case PrimitiveType::U8: bytes = &proto.u8s(); break;
  case PrimitiveType::S16: bytes = &proto.s16s(); break;
  case PrimitiveType::U16: bytes = &proto.u16s(); break;
  case PrimitiveType::F16: bytes = &proto.f16s(); break;
  case PrimitiveType::BF16: bytes = &proto.bf16s(); break;
  case PrimitiveType::F4E2M1FN: bytes = &proto.f4e2m1fns(); break;
  case PrimitiveType::F8E3M4: bytes = &proto.f8e3m4s(); break;
  case PrimitiveType::F8E4M3: bytes = &proto.f8e4m3s(); break;
  case PrimitiveType::F8E4M3FN: bytes = &proto.f8e4m3fns(); break;
  case PrimitiveType::F8E4M3B11FNUZ: bytes = &proto.f8e4m3b11fnuzs(); break;
  case PrimitiveType::F8E4M3FNUZ: bytes = &proto.f8e4m3fnuzs(); break;
  case PrimitiveType::F8E5M2: bytes = &proto.f8e5m2s(); break;
  case PrimitiveType::F8E5M2FNUZ: bytes = &proto.f8e5m2fnuzs(); break;
  case PrimitiveType::F8E8M0FNU: bytes = &proto.f8e8m0fnus(); break;
  default:
    return llvm::Error::success(); // token
  }
  if (static_cast<int64_t>(bytes->size()) != lit.size_bytes())
    return makeError("the literal has " + llvm::Twine(bytes->size()) + " bytes for " +
                     llvm::Twine(n) + " elements of '" + lit.shape().ToString(false) +
                     "' (" + llvm::Twine(lit.size_bytes()) + " bytes)");
  if (!bytes->empty()) // an empty array may have no storage at all
    std::memcpy(raw, bytes->data(), bytes->size());
  return llvm::Error::success();
}

llvm::Expected<Literal> LiteralFromProto(const xla::LiteralProto &proto, const Shape &shape,
                                         int depth) {
  if (depth > kMaxProtoDepth)
    return makeError("literal nested deeper than " + llvm::Twine(kMaxProtoDepth) + " levels");
  if (shape.IsTuple()) {
    if (proto.tuple_literals_size() != shape.tuple_shapes_size())
      return makeError("the literal has " + llvm::Twine(proto.tuple_literals_size()) +
                       " tuple elements for '" + shape.ToString(false) + "'");
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      llvm::Expected<Literal> e =
          LiteralFromProto(proto.tuple_literals(static_cast<int>(i)), shape.tuple_shapes(i),
                           depth + 1);
      if (!e)
        return e.takeError();
      elements.push_back(std::move(*e));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  if (!shape.IsArray() && !shape.IsToken())
    return makeError("a constant of shape '" + shape.ToString(false) + "' has no literal");
  std::optional<int64_t> elements = shape.ElementsIn();
  // A constant's values are held in memory: refuse what cannot be.
  if (!elements || *elements > (int64_t(1) << 32))
    return makeError("a constant of shape '" + shape.ToString(false) + "' is too large");
  Literal lit(shape);
  if (llvm::Error err = FillArray(proto, lit))
    return err;
  return lit;
}

} // namespace

bool LiteralToProto(const Shape &shape, llvm::StringRef text, xla::LiteralProto *out) {
  llvm::Expected<Literal> lit = ParseLiteral(shape, text);
  if (!lit) {
    llvm::consumeError(lit.takeError());
    return false;
  }
  LiteralValueToProto(*lit, out);
  // The instruction's shape, with its layout, as XLA writes it.
  out->clear_shape();
  ShapeToProto(shape, out->mutable_shape(), nullptr);
  return true;
}

llvm::Expected<std::string> LiteralTextFromProto(const xla::LiteralProto &proto,
                                                 const Shape &shape) {
  llvm::Expected<Literal> lit = LiteralFromProto(proto, shape, 0);
  if (!lit)
    return lit.takeError();
  return lit->ValuesToString(-1);
}

} // namespace loom::hlo::proto_internal
