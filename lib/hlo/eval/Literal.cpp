//===- Literal.cpp - Concrete HLO values: storage, access, printing -------===//

#include "loom/hlo/eval/Literal.h"

#include "ElementTypes.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loom::hlo {

bool IsSupportedElementType(PrimitiveType type) {
  return DispatchElementType(
      type, [](auto) { return true; }, [] { return false; });
}

Literal::Literal() = default;

Literal::Literal(const Shape &shape) : shape_(shape) {
  if (shape.IsTuple()) {
    tuple_.reserve(shape.tuple_shapes_size());
    for (const Shape &element : shape.tuple_shapes())
      tuple_.emplace_back(element);
    return;
  }
  if (!shape.IsArray())
    return;
  element_count_ = shape.ElementsIn().value_or(0);
  data_.assign(static_cast<size_t>(element_count_ *
                                   ByteSizeOfPrimitiveType(shape.element_type())),
               0);
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal &element : elements)
    shapes.push_back(element.shape());
  Literal result;
  result.shape_ = Shape::MakeTuple(std::move(shapes));
  result.tuple_ = std::move(elements);
  return result;
}

Literal Literal::CreateR0FromDouble(PrimitiveType type, double v) {
  Literal result(Shape(type, {}));
  result.SetFromDouble(0, v);
  return result;
}

Literal Literal::CreateR0FromInt64(PrimitiveType type, int64_t v) {
  Literal result(Shape(type, {}));
  result.SetFromInt64(0, v);
  return result;
}

Literal Literal::CreateR0Bool(bool v) {
  Literal result(Shape(PrimitiveType::PRED, {}));
  result.SetFromBool(0, v);
  return result;
}

// ---- Element access -------------------------------------------------------------

namespace {

using F64Traits = ElementTraits<PrimitiveType::F64>;
using S64Traits = ElementTraits<PrimitiveType::S64>;
using U64Traits = ElementTraits<PrimitiveType::U64>;
using PredTraits = ElementTraits<PrimitiveType::PRED>;
using C128Traits = ElementTraits<PrimitiveType::C128>;

/// Reads element i of `lit` as traits To's storage via XLA's convert.
template <typename To> typename To::Storage ReadAs(const Literal &lit, int64_t i) {
  return DispatchElementType(
      lit.element_type(),
      [&](auto traits) -> typename To::Storage {
        using T = decltype(traits);
        return ConvertElement<T, To>(lit.data<typename T::Storage>()[i]);
      },
      [] { return typename To::Storage{}; });
}

/// Writes `v` (traits From's storage) into element i via XLA's convert.
template <typename From> void WriteFrom(Literal &lit, int64_t i, typename From::Storage v) {
  DispatchElementType(
      lit.element_type(),
      [&](auto traits) {
        using T = decltype(traits);
        lit.data<typename T::Storage>()[i] = ConvertElement<From, T>(v);
      },
      [] {});
}

} // namespace

double Literal::GetAsDouble(int64_t i) const { return ReadAs<F64Traits>(*this, i); }
void Literal::SetFromDouble(int64_t i, double v) { WriteFrom<F64Traits>(*this, i, v); }

int64_t Literal::GetAsInt64(int64_t i) const {
  // Unsigned 64-bit values above INT64_MAX come back wrapped, like a C cast.
  if (element_type() == PrimitiveType::U64)
    return static_cast<int64_t>(data<uint64_t>()[i]);
  return ReadAs<S64Traits>(*this, i);
}

void Literal::SetFromInt64(int64_t i, int64_t v) { WriteFrom<S64Traits>(*this, i, v); }

uint64_t Literal::GetAsUint64(int64_t i) const {
  if (IsSignedIntegralType(element_type()))
    return static_cast<uint64_t>(ReadAs<S64Traits>(*this, i));
  return ReadAs<U64Traits>(*this, i);
}

void Literal::SetFromUint64(int64_t i, uint64_t v) { WriteFrom<U64Traits>(*this, i, v); }

bool Literal::GetAsBool(int64_t i) const { return ReadAs<PredTraits>(*this, i) != 0; }
void Literal::SetFromBool(int64_t i, bool v) {
  WriteFrom<PredTraits>(*this, i, static_cast<uint8_t>(v ? 1 : 0));
}

std::complex<double> Literal::GetAsComplex(int64_t i) const {
  return ReadAs<C128Traits>(*this, i);
}

void Literal::SetFromComplex(int64_t i, std::complex<double> v) {
  WriteFrom<C128Traits>(*this, i, v);
}

bool Literal::operator==(const Literal &o) const {
  if (!shape_.Compatible(o.shape_))
    return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i)
      if (tuple_[i] != o.tuple_[i])
        return false;
    return true;
  }
  return data_ == o.data_;
}

void Literal::Reshape(const Shape &shape) {
  shape_ = shape;
}

int64_t Literal::TotalBytes() const {
  int64_t total = static_cast<int64_t>(data_.size());
  for (const Literal &element : tuple_)
    total += element.TotalBytes();
  return total;
}

// ---- Printing ---------------------------------------------------------------------

namespace {

/// The shape as a literal prints it: arrays of rank >= 1 always with a
/// layout (the default one when the shape has none), rank 0 without.
Shape PrintableShape(const Shape &shape) {
  Shape result = shape;
  if (result.IsTuple()) {
    for (Shape &element : result.mutable_tuple_shapes())
      element = PrintableShape(element);
  } else if (result.IsArray()) {
    if (result.rank() == 0)
      result.set_layout(std::nullopt);
    else if (!result.has_layout())
      result.set_layout(Shape::DefaultLayout(result.rank()));
  }
  return result;
}

std::string FormatG(int digits, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

/// XLA's round-trip float text: the shorter precision when it round-trips
/// (f32 and f64 only), otherwise max_digits10; NaNs with a payload other
/// than the quiet bit get `(0x<payload>)`.
std::string FormatFloat(PrimitiveType type, uint64_t bits) {
  double v = FloatBitsToDouble(type, bits);
  std::string text;
  if (type == PrimitiveType::F32) {
    float f = static_cast<float>(v);
    text = FormatG(6, f);
    if (std::strtof(text.c_str(), nullptr) != f)
      text = FormatG(9, f);
  } else if (type == PrimitiveType::F64) {
    text = FormatG(15, v);
    if (std::strtod(text.c_str(), nullptr) != v)
      text = FormatG(17, v);
  } else {
    text = FormatG(MaxDigits10(type), v);
  }
  if (std::isnan(v)) {
    int mantissa_bits = 0;
    switch (type) {
    case PrimitiveType::F16: mantissa_bits = 10; break;
    case PrimitiveType::BF16: mantissa_bits = 7; break;
    case PrimitiveType::F32: mantissa_bits = 23; break;
    case PrimitiveType::F64: mantissa_bits = 52; break;
    case PrimitiveType::F8E5M2: mantissa_bits = 2; break;
    default: break;
    }
    if (mantissa_bits > 0) {
      uint64_t payload = bits & ((uint64_t{1} << mantissa_bits) - 1);
      if (payload != (uint64_t{1} << (mantissa_bits - 1))) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "(0x%" PRIx64 ")", payload);
        text += buf;
      }
    }
  }
  return text;
}

template <typename T> uint64_t StorageBits(T s) {
  if constexpr (std::is_same_v<T, float>) {
    uint32_t u;
    std::memcpy(&u, &s, 4);
    return u;
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t u;
    std::memcpy(&u, &s, 8);
    return u;
  } else {
    return static_cast<uint64_t>(s);
  }
}

std::string FormatElement(const Literal &lit, int64_t i, bool pred_as_word) {
  return DispatchElementType(
      lit.element_type(),
      [&](auto traits) -> std::string {
        using T = decltype(traits);
        auto s = lit.data<typename T::Storage>()[i];
        if constexpr (T::kKind == ElementKind::kPred) {
          bool b = T::Load(s);
          return pred_as_word ? (b ? "true" : "false") : (b ? "1" : "0");
        } else if constexpr (T::kKind == ElementKind::kSigned) {
          return std::to_string(static_cast<int64_t>(T::Load(s)));
        } else if constexpr (T::kKind == ElementKind::kUnsigned) {
          return std::to_string(static_cast<uint64_t>(T::Load(s)));
        } else if constexpr (T::kKind == ElementKind::kComplex) {
          PrimitiveType part = T::kPrimitiveType == PrimitiveType::C64 ? PrimitiveType::F32
                                                                     : PrimitiveType::F64;
          return "(" + FormatFloat(part, StorageBits(s.real())) + ", " +
                 FormatFloat(part, StorageBits(s.imag())) + ")";
        } else {
          return FormatFloat(T::kPrimitiveType, StorageBits(s));
        }
      },
      [] { return std::string("?"); });
}

/// XLA's one-line nested braces: `{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`, with
/// `/*i0=0*/` index comments above rank 3.
void PrintNested(const Literal &lit, llvm::ArrayRef<int64_t> dims, std::vector<int64_t> &index,
                 int64_t &linear, std::string &out) {
  const int64_t rank = lit.shape().rank();
  if (dims.empty()) {
    out += FormatElement(lit, linear++, /*pred_as_word=*/false);
    return;
  }
  if (rank == 1) {
    out += "{";
  } else if (dims.size() == 1) {
    out += dims[0] <= 1 ? "{" : "{ ";
  } else if (rank > 3 && !index.empty()) {
    out += "{ /*i" + std::to_string(index.size() - 1) + "=" + std::to_string(index.back()) +
           "*/";
    if (dims[0] > 0)
      out += " ";
  } else {
    out += "{ ";
  }
  for (int64_t i = 0; i < dims[0]; ++i) {
    index.push_back(i);
    PrintNested(lit, dims.drop_front(), index, linear, out);
    index.pop_back();
    if (i < dims[0] - 1)
      out += ", ";
  }
  if (rank == 1)
    out += "}";
  else if (dims.size() == 1)
    out += dims[0] <= 1 ? "}" : " }";
  else
    out += " }";
}

/// An array with no elements prints its braces down to its first zero
/// dimension (`f32[2,0]` is `{ {}, {} }`, as XLA prints it) unless there are
/// more of them than this: then `{}`, which ParseLiteral reads for any
/// shape with no elements. s8[100000,100000,0] would print 10^10 braces.
constexpr int64_t kMaxEmptyBraces = 4096;

std::string ArrayValuesToString(const Literal &lit, int64_t max_elements) {
  const int64_t n = lit.element_count();
  if (lit.shape().rank() == 0)
    return FormatElement(lit, 0, /*pred_as_word=*/true);
  if (n == 0) {
    int64_t braces = 1;
    for (int64_t d : lit.shape().dimensions()) {
      if (d == 0)
        break;
      if (__builtin_mul_overflow(braces, d, &braces) || braces > kMaxEmptyBraces)
        return "{}";
    }
  }
  if (max_elements >= 0 && n > max_elements) {
    // Elided arrays print flat: head, `...`, tail, in row-major order.
    int64_t head = (max_elements + 1) / 2, tail = max_elements / 2;
    std::string out = "{";
    for (int64_t i = 0; i < head; ++i)
      out += FormatElement(lit, i, false) + ", ";
    out += "...";
    for (int64_t i = n - tail; i < n; ++i)
      out += ", " + FormatElement(lit, i, false);
    return out + "}";
  }
  std::string out;
  std::vector<int64_t> index;
  int64_t linear = 0;
  PrintNested(lit, lit.shape().dimensions(), index, linear, out);
  return out;
}

} // namespace

std::string Literal::ValuesToString(int64_t max_elements) const {
  if (IsToken())
    return "token";
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i)
        out += ", ";
      out += tuple_[i].ValuesToString(max_elements);
    }
    return out + ")";
  }
  if (!shape_.IsArray())
    return "opaque";
  return ArrayValuesToString(*this, max_elements);
}

std::string Literal::ToString(int64_t max_elements) const {
  if (IsToken())
    return "token";
  return PrintableShape(shape_).ToString() + " " + ValuesToString(max_elements);
}

} // namespace loom::hlo
