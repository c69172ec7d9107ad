//===- LiteralParser.cpp - The text inside constant(...) to a Literal -----===//
//
// Accepts what XLA prints for constants: scalars, nested braces with
// optional `/*i0=0*/` comments, tuples with or without per-element shape
// prefixes, `nan(0x...)` payloads, pred as true/false or 1/0, complex as
// `(re, im)`. An elided array (`{...}`) is an error: its values are gone.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/eval/Literal.h"

#include "ElementTypes.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/support/Error.h"


#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace loom::hlo {
namespace {

class LiteralParser {
public:
  explicit LiteralParser(llvm::StringRef text) : text_(text) {}

  llvm::Expected<Literal> ParseTop(const Shape &shape) {
    llvm::Expected<Literal> lit = ParseValue(shape, /*allow_prefix=*/false);
    if (!lit)
      return lit.takeError();
    SkipSpace();
    if (pos_ != text_.size())
      return Error("unexpected text after the literal");
    return lit;
  }

private:
  llvm::Error Error(const llvm::Twine &msg) {
    return makeError("literal: " + msg + " at offset " + llvm::Twine(pos_) + " of '" +
                     Excerpt() + "'");
  }
  std::string Excerpt() const {
    return text_.size() <= 80 ? text_.str() : (text_.take_front(77) + "...").str();
  }

  void SkipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (text_.substr(pos_).startswith("/*")) {
        size_t end = text_.find("*/", pos_ + 2);
        pos_ = end == llvm::StringRef::npos ? text_.size() : end + 2;
      } else {
        break;
      }
    }
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  llvm::Error Expect(char c) {
    if (Consume(c))
      return llvm::Error::success();
    return Error(llvm::Twine("expected '") + llvm::Twine(c) + "'");
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  /// Skips a shape prefix such as `f32[2]{0}` or `(f32[], s32[])` when one
  /// stands before a value; it must agree with the expected shape.
  llvm::Error SkipShapePrefix(const Shape &expected) {
    SkipSpace();
    size_t start = pos_;
    llvm::StringRef rest = text_.substr(pos_);
    size_t end = 0;
    if (!rest.empty() && std::isalpha(static_cast<unsigned char>(rest[0]))) {
      while (end < rest.size() && std::isalnum(static_cast<unsigned char>(rest[end])))
        ++end;
      if (end >= rest.size() || rest[end] != '[')
        return llvm::Error::success(); // a word value: true, nan, inf
      end = rest.find(']', end);
      if (end == llvm::StringRef::npos)
        return Error("unterminated shape");
      ++end;
      if (end < rest.size() && rest[end] == '{') {
        size_t close = rest.find('}', end);
        if (close == llvm::StringRef::npos)
          return Error("unterminated layout");
        end = close + 1;
      }
    } else if (!rest.empty() && rest[0] == '(') {
      int depth = 0;
      for (; end < rest.size(); ++end) {
        if (rest[end] == '(')
          ++depth;
        else if (rest[end] == ')' && --depth == 0)
          break;
      }
      if (end >= rest.size())
        return llvm::Error::success();
      ++end;
      // Only a shape when it parses as one and a value follows.
      size_t after = end;
      while (after < rest.size() && rest[after] == ' ')
        ++after;
      if (after >= rest.size() || rest[after] != '(')
        return llvm::Error::success();
    } else {
      return llvm::Error::success();
    }
    llvm::Expected<Shape> prefix = ParseShape(rest.take_front(end));
    if (!prefix) {
      llvm::consumeError(prefix.takeError());
      if (rest[0] == '(')
        return llvm::Error::success();
      return Error("malformed shape prefix '" + rest.take_front(end) + "'");
    }
    if (!prefix->Compatible(expected))
      return Error("shape prefix " + prefix->ToString() + " does not match " +
                   expected.ToString());
    pos_ = start + end;
    return llvm::Error::success();
  }

  llvm::Expected<Literal> ParseValue(const Shape &shape, bool allow_prefix) {
    if (allow_prefix)
      if (llvm::Error err = SkipShapePrefix(shape))
        return err;
    if (shape.IsTuple())
      return ParseTuple(shape);
    if (shape.IsToken()) {
      SkipSpace();
      if (text_.substr(pos_).startswith("token"))
        pos_ += 5;
      return Literal(shape);
    }
    if (!IsSupportedElementType(shape.element_type()))
      return Error("unsupported element type " +
                   PrimitiveTypeName(shape.element_type()));
    const bool empty = llvm::is_contained(shape.dimensions(), 0);
    if (!empty && !shape.ElementsIn())
      return Error("shape " + shape.ToString() + " has no fixed element count");
    Literal lit(shape);
    // `{}` is any array with no elements, whatever its other dimensions
    // (Literal::ToString prints it so when the braces would be too many).
    if (empty) {
      const size_t save = pos_;
      if (Consume('{') && Consume('}'))
        return lit;
      pos_ = save;
    }
    if (shape.rank() == 0 || Peek() != '{') {
      if (empty) {
        // A scalar filling no elements: read it for its errors only.
        Literal scalar(Shape(shape.element_type(), {}));
        if (llvm::Error err = ParseElement(scalar, 0))
          return err;
        return lit;
      }
      if (llvm::Error err = ParseElement(lit, 0))
        return err;
      // A scalar written for an array fills it (XLA dumps `constant(0.)`
      // for splats in some tools).
      for (int64_t i = 1; i < lit.element_count(); ++i)
        std::memcpy(lit.raw_data() + i * ByteSizeOfPrimitiveType(shape.element_type()),
                    lit.raw_data(), ByteSizeOfPrimitiveType(shape.element_type()));
      return lit;
    }
    int64_t linear = 0;
    if (llvm::Error err = ParseNested(lit, 0, linear))
      return err;
    return lit;
  }

  llvm::Expected<Literal> ParseTuple(const Shape &shape) {
    if (llvm::Error err = Expect('('))
      return err;
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0)
        if (llvm::Error err = Expect(','))
          return err;
      llvm::Expected<Literal> element = ParseValue(shape.tuple_shapes(i), true);
      if (!element)
        return element.takeError();
      elements.push_back(std::move(*element));
    }
    if (llvm::Error err = Expect(')'))
      return err;
    Literal lit = Literal::MakeTuple(std::move(elements));
    lit.Reshape(shape);
    return lit;
  }

  llvm::Error ParseNested(Literal &lit, int64_t dim, int64_t &linear) {
    const Shape &shape = lit.shape();
    if (dim == shape.rank())
      return ParseElement(lit, linear++);
    if (llvm::Error err = Expect('{'))
      return err;
    SkipSpace();
    if (text_.substr(pos_).startswith("..."))
      return Error("the constant's values are elided ({...})");
    const int64_t size = shape.dimensions(dim);
    for (int64_t i = 0; i < size; ++i) {
      if (i > 0)
        if (llvm::Error err = Expect(','))
          return Error("expected " + llvm::Twine(size) + " elements in dimension " +
                       llvm::Twine(dim) + " of " + shape.ToString());
      if (llvm::Error err = ParseNested(lit, dim + 1, linear))
        return err;
    }
    if (!Consume('}'))
      return Error("expected " + llvm::Twine(size) + " elements in dimension " +
                   llvm::Twine(dim) + " of " + shape.ToString());
    return llvm::Error::success();
  }

  /// A number or word token: [-+]?[0-9a-zA-Z.]+ with exponent signs, and
  /// an optional `(0x...)` NaN payload.
  llvm::StringRef Token() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+'))
      ++pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      bool exp_sign = (c == '-' || c == '+') && pos_ > start &&
                      (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E') &&
                      !text_.substr(start, pos_ - start).contains_insensitive("0x");
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || exp_sign)
        ++pos_;
      else
        break;
    }
    if (text_.substr(pos_).startswith("(0x")) {
      size_t close = text_.find(')', pos_);
      if (close != llvm::StringRef::npos)
        pos_ = close + 1;
    }
    return text_.substr(start, pos_ - start);
  }

  llvm::Error ParseElement(Literal &lit, int64_t i) {
    PrimitiveType type = lit.element_type();
    if (IsComplexType(type))
      return ParseComplexElement(lit, i);
    llvm::StringRef token = Token();
    if (token.empty())
      return Error("expected a value of type " + PrimitiveTypeName(type));
    if (type == PrimitiveType::PRED)
      return ParsePred(lit, i, token);
    if (IsFloatingPointType(type))
      return ParseFloat(lit, i, token);
    return ParseInteger(lit, i, token);
  }

  llvm::Error ParsePred(Literal &lit, int64_t i, llvm::StringRef token) {
    if (token == "true" || token == "1")
      lit.SetFromBool(i, true);
    else if (token == "false" || token == "0")
      lit.SetFromBool(i, false);
    else
      return Error("expected true or false, got '" + token + "'");
    return llvm::Error::success();
  }

  llvm::Error ParseInteger(Literal &lit, int64_t i, llvm::StringRef token) {
    PrimitiveType type = lit.element_type();
    llvm::StringRef digits = token;
    bool negative = digits.consume_front("-");
    if (!negative)
      digits.consume_front("+");
    // Decimal as XLA's lexer reads it (a leading 0 is not octal); a 0x
    // prefix is taken as hexadecimal.
    unsigned radix = 10;
    if (digits.startswith_insensitive("0x")) {
      digits = digits.drop_front(2);
      radix = 16;
    }
    uint64_t magnitude;
    if (digits.empty() || digits.getAsInteger(radix, magnitude))
      return Error("expected an integer of type " + PrimitiveTypeName(type) + ", got '" +
                   token + "'");
    int bits = PrimitiveTypeBitWidth(type);
    bool is_signed = IsSignedIntegralType(type);
    // The value must fit the element type: XLA rejects out-of-range constants.
    // XLA reads the text as an s64 and then checks it as unsigned, so a
    // negative u64 constant wraps (u64 -1 is the maximum); other unsigned
    // types reject negative values.
    uint64_t limit = is_signed ? (uint64_t{1} << (bits - 1)) - (negative ? 0 : 1)
                               : (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
    const bool u64_wraps =
        negative && !is_signed && bits == 64 && magnitude <= (uint64_t{1} << 63);
    if (!u64_wraps && ((negative && !is_signed && magnitude != 0) || magnitude > limit))
      return Error("value '" + token + "' is out of range for " + PrimitiveTypeName(type));
    if (negative && is_signed)
      lit.SetFromInt64(i, static_cast<int64_t>(uint64_t{0} - magnitude));
    else
      lit.SetFromUint64(i, negative ? uint64_t{0} - magnitude : magnitude);
    return llvm::Error::success();
  }

  llvm::Error ParseFloat(Literal &lit, int64_t i, llvm::StringRef token) {
    PrimitiveType type = lit.element_type();
    llvm::StringRef body = token;
    bool negative = body.consume_front("-");
    if (!negative)
      body.consume_front("+");
    if (body.startswith("nan")) {
      llvm::StringRef payload_text = body.drop_front(3);
      uint64_t payload = 0;
      if (!payload_text.empty()) {
        if (!payload_text.consume_front("(") || !payload_text.consume_back(")") ||
            payload_text.getAsInteger(0, payload))
          return Error("malformed NaN '" + token + "'");
      }
      double nan = std::numeric_limits<double>::quiet_NaN();
      lit.SetFromDouble(i, negative ? -nan : nan);
      if (payload != 0)
        return SetNanPayload(lit, i, payload, token);
      return llvm::Error::success();
    }
    double v;
    if (body == "inf") {
      v = HUGE_VAL;
    } else {
      std::string s = body.str();
      char *end = nullptr;
      errno = 0;
      v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !(std::isdigit(s[0]) || s[0] == '.'))
        return Error("expected a number of type " + PrimitiveTypeName(type) + ", got '" +
                     token + "'");
    }
    lit.SetFromDouble(i, negative ? -v : v);
    // As in XLA, a finite value that rounds to infinity in the element type
    // (f16 65520, bf16 1e100) is out of range.
    if (std::isfinite(v) && std::isinf(lit.GetAsDouble(i)))
      return Error("value '" + token + "' is out of range for " + PrimitiveTypeName(type));
    return llvm::Error::success();
  }

  llvm::Error SetNanPayload(Literal &lit, int64_t i, uint64_t payload, llvm::StringRef token) {
    int mantissa_bits;
    switch (lit.element_type()) {
    case PrimitiveType::F16: mantissa_bits = 10; break;
    case PrimitiveType::BF16: mantissa_bits = 7; break;
    case PrimitiveType::F32: mantissa_bits = 23; break;
    case PrimitiveType::F64: mantissa_bits = 52; break;
    case PrimitiveType::F8E5M2: mantissa_bits = 2; break;
    default:
      return Error("NaN payload on a type without one: '" + token + "'");
    }
    if (payload >> mantissa_bits)
      return Error("NaN payload too wide in '" + token + "'");
    int64_t bytes = ByteSizeOfPrimitiveType(lit.element_type());
    uint64_t bits = 0;
    std::memcpy(&bits, lit.raw_data() + i * bytes, bytes);
    bits = (bits & ~((uint64_t{1} << mantissa_bits) - 1)) | payload;
    std::memcpy(lit.raw_data() + i * bytes, &bits, bytes);
    return llvm::Error::success();
  }

  llvm::Error ParseComplexElement(Literal &lit, int64_t i) {
    PrimitiveType part = lit.element_type() == PrimitiveType::C64 ? PrimitiveType::F32
                                                                  : PrimitiveType::F64;
    Literal parts(Shape(part, {2}));
    if (llvm::Error err = Expect('('))
      return err;
    if (llvm::Error err = ParseFloat(parts, 0, Token()))
      return err;
    if (llvm::Error err = Expect(','))
      return err;
    if (llvm::Error err = ParseFloat(parts, 1, Token()))
      return err;
    if (llvm::Error err = Expect(')'))
      return err;
    lit.SetFromComplex(i, {parts.GetAsDouble(0), parts.GetAsDouble(1)});
    return llvm::Error::success();
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
};

} // namespace

llvm::Expected<Literal> ParseLiteral(const Shape &shape, llvm::StringRef text) {
  return LiteralParser(text).ParseTop(shape);
}

} // namespace loom::hlo
