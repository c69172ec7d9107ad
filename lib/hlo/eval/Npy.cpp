//===- Npy.cpp - NumPy's .npy files in and out of Literals ---------------===//

#include "loom/hlo/eval/Npy.h"

#include "loom/support/Error.h"
#include "loom/support/OutputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

namespace loom::hlo {
namespace {

constexpr llvm::StringLiteral kMagic("\x93NUMPY");
// Magic, two version bytes; the header length follows (2 or 4 bytes).
constexpr size_t kPreambleSize = 8;
// NumPy pads the header so the data starts on a 64-byte boundary.
constexpr size_t kAlignment = 64;
// A header longer than this is not something NumPy wrote for a plain array.
constexpr uint64_t kMaxHeaderSize = 1 << 20;

uint64_t ReadLittleEndian(llvm::StringRef bytes, size_t offset, int size) {
  uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(bytes[offset + i]);
  return v;
}

void AppendLittleEndian(std::string &out, uint64_t v, int size) {
  for (int i = 0; i < size; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This reads exactly that subset: string keys, and string, True/False or
// tuple-of-integers values.
class HeaderParser {
public:
  explicit HeaderParser(llvm::StringRef text) : text_(text) {}

  llvm::Error Parse(NpyArray &array) {
    bool have_descr = false, have_order = false, have_shape = false;
    if (!Consume('{'))
      return Fail("expected '{'");
    while (true) {
      if (Consume('}'))
        break;
      std::string key;
      if (auto err = ParseString(key))
        return err;
      if (!Consume(':'))
        return Fail("expected ':' after '" + key + "'");
      if (key == "descr" && !have_descr) {
        have_descr = true;
        if (Peek() == '[')
          return Fail("structured dtypes are not supported");
        if (auto err = ParseString(array.descr))
          return err;
      } else if (key == "fortran_order" && !have_order) {
        have_order = true;
        bool fortran = false;
        if (auto err = ParseBool(fortran))
          return err;
        if (fortran)
          return Fail("fortran_order arrays are not supported (save in C order)");
      } else if (key == "shape" && !have_shape) {
        have_shape = true;
        if (auto err = ParseShape(array.shape))
          return err;
      } else {
        return Fail("unexpected or repeated key '" + key + "'");
      }
      if (!Consume(',')) {
        if (!Consume('}'))
          return Fail("expected ',' or '}'");
        break;
      }
    }
    SkipSpace();
    if (pos_ != text_.size())
      return Fail("unexpected text after the header dict");
    if (!have_descr || !have_order || !have_shape)
      return Fail("the header must have the keys 'descr', 'fortran_order' and 'shape'");
    return llvm::Error::success();
  }

private:
  llvm::Error Fail(const llvm::Twine &msg) {
    return makeError("malformed .npy header at offset " + llvm::Twine(pos_) + ": " + msg);
  }
  void SkipSpace() {
    while (pos_ < text_.size() && llvm::isSpace(text_[pos_]))
      ++pos_;
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c)
      return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(llvm::StringRef word) {
    SkipSpace();
    if (!text_.substr(pos_).startswith(word))
      return false;
    pos_ += word.size();
    return true;
  }

  llvm::Error ParseString(std::string &out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"')
      return Fail("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == llvm::StringRef::npos)
      return Fail("unterminated string");
    out = text_.slice(pos_ + 1, end).str();
    if (out.find('\\') != std::string::npos)
      return Fail("escapes in strings are not supported");
    pos_ = end + 1;
    return llvm::Error::success();
  }

  llvm::Error ParseBool(bool &out) {
    if (ConsumeWord("True"))
      out = true;
    else if (ConsumeWord("False"))
      out = false;
    else
      return Fail("expected True or False");
    return llvm::Error::success();
  }

  llvm::Error ParseShape(std::vector<int64_t> &dims) {
    if (!Consume('('))
      return Fail("expected '(' to open the shape");
    while (!Consume(')')) {
      SkipSpace();
      size_t start = pos_;
      while (pos_ < text_.size() && llvm::isDigit(text_[pos_]))
        ++pos_;
      uint64_t dim = 0;
      if (text_.slice(start, pos_).getAsInteger(10, dim) ||
          dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Fail("expected a non-negative dimension");
      ConsumeWord("L"); // Python 2 wrote long integers with a suffix.
      dims.push_back(static_cast<int64_t>(dim));
      if (!Consume(',')) {
        if (!Consume(')'))
          return Fail("expected ',' or ')' in the shape");
        break;
      }
    }
    return llvm::Error::success();
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
};

// Item size of a dtype such as `<f4`; 0 when the string is not one of the
// scalar dtypes loom knows.
int DescrItemSize(llvm::StringRef descr) {
  static constexpr struct {
    const char *descr;
    int size;
  } kKnown[] = {{"|b1", 1}, {"|i1", 1}, {"|u1", 1}, {"<i2", 2},  {"<i4", 4},
                {"<i8", 8}, {"<u2", 2}, {"<u4", 4}, {"<u8", 8},  {"<f2", 2},
                {"<f4", 4}, {"<f8", 8}, {"<c8", 8}, {"<c16", 16}};
  for (const auto &known : kKnown)
    if (descr == known.descr)
      return known.size;
  return 0;
}

// NumPy writes one-byte dtypes with '|', but '<' and '=' mean the same for
// them, and '=' is '<' on the little-endian hosts loom runs on.
std::string NormalizeDescr(llvm::StringRef descr) {
  if (descr.size() < 2)
    return descr.str();
  char order = descr[0];
  llvm::StringRef rest = descr.drop_front();
  if (order == '=')
    order = '<';
  bool one_byte = rest == "b1" || rest == "i1" || rest == "u1";
  if (one_byte && (order == '<' || order == '>'))
    order = '|';
  return std::string(1, order) + rest.str();
}

llvm::Expected<int64_t> ElementCount(llvm::ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims)
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return makeError("the .npy shape has too many elements");
    else
      count *= d;
  return count;
}

std::string FormatNpyShape(llvm::ArrayRef<int64_t> dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  if (dims.size() == 1)
    s += ",";
  return s + ")";
}

bool IsSmallFloatType(PrimitiveType type) {
  return IsFloatingPointType(type) && type != PrimitiveType::F16 && type != PrimitiveType::F32 &&
         type != PrimitiveType::F64;
}

// How the bytes of one dtype become elements of one element type.
enum class Transfer {
  kRawCopy,       // identical storage
  kFloat32,       // `<f4` values rounded into a smaller float type
  kIntegerValues, // `|i1`/`|u1` values range-checked into a sub-byte type
  kBool,          // `|b1` bytes that must be 0 or 1
};

std::optional<Transfer> TransferFor(PrimitiveType type, llvm::StringRef descr) {
  if (type == PrimitiveType::PRED)
    return descr == "|b1" ? std::optional(Transfer::kBool) : std::nullopt;
  llvm::StringRef natural = NpyDescrForType(type);
  if (IsSmallFloatType(type)) {
    if (descr == "<f4")
      return Transfer::kFloat32;
    // Raw bit patterns: the unsigned dtype of the storage width.
    bool raw = ByteSizeOfPrimitiveType(type) == 2 ? descr == "<u2" : descr == "|u1";
    return raw ? std::optional(Transfer::kRawCopy) : std::nullopt;
  }
  if (descr != natural)
    return std::nullopt;
  if (PrimitiveTypeBitWidth(type) < 8)
    return Transfer::kIntegerValues;
  return Transfer::kRawCopy;
}

std::string AcceptedDescrs(PrimitiveType type) {
  std::string s = "'" + NpyDescrForType(type).str() + "'";
  if (IsSmallFloatType(type))
    s += ByteSizeOfPrimitiveType(type) == 2 ? " or '<u2' (raw bits)" : " or '|u1' (raw bits)";
  return s;
}

llvm::Error FillSubByteIntegers(const NpyArray &array, Literal &literal) {
  PrimitiveType type = literal.element_type();
  int bits = PrimitiveTypeBitWidth(type);
  bool is_signed = IsSignedIntegralType(type);
  int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
  int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    auto byte = static_cast<uint8_t>(array.data[i]);
    int64_t v = is_signed ? static_cast<int8_t>(byte) : byte;
    if (v < lo || v > hi)
      return makeError(llvm::formatv("element {0} is {1}, outside the range of {2}", i, v,
                                     PrimitiveTypeName(type)));
    literal.SetFromInt64(i, v);
  }
  return llvm::Error::success();
}

llvm::Error FillBools(const NpyArray &array, Literal &literal) {
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    auto byte = static_cast<uint8_t>(array.data[i]);
    if (byte > 1)
      return makeError(llvm::formatv("element {0} of a bool array is {1}, not 0 or 1", i,
                                     static_cast<int>(byte)));
    literal.SetFromBool(i, byte == 1);
  }
  return llvm::Error::success();
}

// Same storage on both sides; only sub-byte floats (one byte per element)
// can hold a byte that is no bit pattern of the type.
llvm::Error CopyRawBits(const NpyArray &array, Literal &literal) {
  if (static_cast<size_t>(literal.size_bytes()) != array.data.size())
    return makeError("internal error: .npy data size differs from the literal's");
  int bits = PrimitiveTypeBitWidth(literal.element_type());
  for (size_t i = 0; bits < 8 && i < array.data.size(); ++i)
    if (static_cast<uint8_t>(array.data[i]) >> bits)
      return makeError(llvm::formatv("element {0} is not a {1}-bit pattern of {2}", i, bits,
                                     PrimitiveTypeName(literal.element_type())));
  std::memcpy(literal.raw_data(), array.data.data(), array.data.size());
  return llvm::Error::success();
}

void FillFromFloat32(const NpyArray &array, Literal &literal) {
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    uint32_t bits = static_cast<uint32_t>(ReadLittleEndian(array.data, 4 * i, 4));
    float f;
    std::memcpy(&f, &bits, sizeof f);
    literal.SetFromDouble(i, f);
  }
}

} // namespace

llvm::StringRef NpyDescrForType(PrimitiveType type) {
  switch (type) {
  case PrimitiveType::PRED:
    return "|b1";
  case PrimitiveType::S1:
  case PrimitiveType::S2:
  case PrimitiveType::S4:
  case PrimitiveType::S8:
    return "|i1";
  case PrimitiveType::S16:
    return "<i2";
  case PrimitiveType::S32:
    return "<i4";
  case PrimitiveType::S64:
    return "<i8";
  case PrimitiveType::U1:
  case PrimitiveType::U2:
  case PrimitiveType::U4:
  case PrimitiveType::U8:
    return "|u1";
  case PrimitiveType::U16:
    return "<u2";
  case PrimitiveType::U32:
    return "<u4";
  case PrimitiveType::U64:
    return "<u8";
  case PrimitiveType::F16:
    return "<f2";
  case PrimitiveType::F64:
    return "<f8";
  case PrimitiveType::C64:
    return "<c8";
  case PrimitiveType::C128:
    return "<c16";
  case PrimitiveType::TOKEN:
  case PrimitiveType::OPAQUE_TYPE:
  case PrimitiveType::TUPLE:
    return "";
  default:
    // f32, and the float types NumPy has no dtype for (bf16, f8, f4),
    // which f32 holds exactly.
    return "<f4";
  }
}

namespace {

// The header dict's bytes, after checking the magic, version and length.
llvm::Expected<llvm::StringRef> HeaderOf(llvm::StringRef bytes) {
  if (bytes.size() < kPreambleSize || !bytes.startswith(kMagic))
    return makeError("not a .npy file (bad magic string)");
  int major = static_cast<uint8_t>(bytes[6]);
  int minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return makeError(llvm::formatv(".npy format version {0}.{1} is not supported "
                                   "(1.0, 2.0 and 3.0 are)",
                                   major, minor));
  int length_size = major == 1 ? 2 : 4;
  if (bytes.size() < kPreambleSize + length_size)
    return makeError("truncated .npy file: no header length");
  uint64_t header_size = ReadLittleEndian(bytes, kPreambleSize, length_size);
  size_t header_start = kPreambleSize + length_size;
  if (header_size > kMaxHeaderSize || bytes.size() - header_start < header_size)
    return makeError(llvm::formatv("truncated .npy file: the header says {0} bytes", header_size));
  return bytes.substr(header_start, header_size);
}

// The data must be exactly the shape's elements, no more, no less.
llvm::Error CheckDataSize(const NpyArray &array, size_t data_size) {
  int item_size = DescrItemSize(array.descr);
  auto count = ElementCount(array.shape);
  if (!count)
    return count.takeError();
  bool too_big = *count > std::numeric_limits<int64_t>::max() / item_size;
  if (!too_big && static_cast<uint64_t>(*count * item_size) == data_size)
    return llvm::Error::success();
  return makeError(llvm::formatv(".npy data is {0} bytes; shape {1} of '{2}' needs {3}", data_size,
                                 FormatNpyShape(array.shape), array.descr,
                                 too_big ? std::string("more than can be addressed")
                                         : std::to_string(*count * item_size)));
}

} // namespace

llvm::Expected<NpyArray> ParseNpy(llvm::StringRef bytes) {
  auto header = HeaderOf(bytes);
  if (!header)
    return header.takeError();
  NpyArray array;
  if (auto err = HeaderParser(*header).Parse(array))
    return err;
  array.descr = NormalizeDescr(array.descr);
  if (DescrItemSize(array.descr) == 0)
    return makeError("unsupported .npy dtype '" + array.descr +
                     "' (little-endian bool, integer, float and complex dtypes are)");
  llvm::StringRef data = bytes.drop_front(header->end() - bytes.begin());
  if (auto err = CheckDataSize(array, data.size()))
    return err;
  array.data = data.str();
  return array;
}

std::string SerializeNpy(const NpyArray &array) {
  std::string dict = "{'descr': '" + array.descr +
                     "', 'fortran_order': False, 'shape': " + FormatNpyShape(array.shape) + ", }";
  // Version 1.0 has a 2-byte header length; bigger headers need 2.0.
  size_t unpadded_v1 = kPreambleSize + 2 + dict.size() + 1;
  int length_size = unpadded_v1 + kAlignment <= 65535 ? 2 : 4;
  size_t unpadded = kPreambleSize + length_size + dict.size() + 1;
  size_t padded = (unpadded + kAlignment - 1) / kAlignment * kAlignment;
  dict.append(padded - unpadded, ' ');
  dict.push_back('\n');
  std::string out = kMagic.str();
  out.push_back(static_cast<char>(length_size == 2 ? 1 : 2));
  out.push_back(0);
  AppendLittleEndian(out, dict.size(), length_size);
  out += dict;
  out += array.data;
  return out;
}

llvm::Expected<Literal> NpyToLiteral(const NpyArray &array, const Shape &shape) {
  if (!shape.IsArray() || !IsSupportedElementType(shape.element_type()))
    return makeError("a .npy file cannot hold a value of shape " + shape.ToString());
  if (llvm::ArrayRef<int64_t>(array.shape) != shape.dimensions())
    return makeError("the .npy shape " + FormatNpyShape(array.shape) +
                     " does not match the parameter shape " + shape.ToString(false));
  PrimitiveType type = shape.element_type();
  std::optional<Transfer> transfer = TransferFor(type, array.descr);
  if (!transfer)
    return makeError("the .npy dtype '" + array.descr + "' cannot hold " + PrimitiveTypeName(type) +
                     " (expected " + AcceptedDescrs(type) + ")");
  Literal literal(shape);
  switch (*transfer) {
  case Transfer::kRawCopy:
    if (auto err = CopyRawBits(array, literal))
      return err;
    break;
  case Transfer::kFloat32:
    FillFromFloat32(array, literal);
    break;
  case Transfer::kIntegerValues:
    if (auto err = FillSubByteIntegers(array, literal))
      return err;
    break;
  case Transfer::kBool:
    if (auto err = FillBools(array, literal))
      return err;
    break;
  }
  return literal;
}

llvm::Expected<NpyArray> LiteralToNpy(const Literal &literal) {
  const Shape &shape = literal.shape();
  llvm::StringRef descr = NpyDescrForType(shape.element_type());
  if (!shape.IsArray() || descr.empty())
    return makeError("a .npy file cannot hold a value of shape " + shape.ToString());
  NpyArray array;
  array.descr = descr.str();
  array.shape.assign(shape.dimensions().begin(), shape.dimensions().end());
  PrimitiveType type = shape.element_type();
  if (IsSmallFloatType(type)) {
    for (int64_t i = 0; i < literal.element_count(); ++i) {
      float f = static_cast<float>(literal.GetAsDouble(i));
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      AppendLittleEndian(array.data, bits, 4);
    }
  } else if (PrimitiveTypeBitWidth(type) < 8) {
    for (int64_t i = 0; i < literal.element_count(); ++i)
      array.data.push_back(static_cast<char>(literal.GetAsInt64(i)));
  } else {
    array.data.assign(reinterpret_cast<const char *>(literal.raw_data()),
                      static_cast<size_t>(literal.size_bytes()));
  }
  return array;
}

llvm::Expected<Literal> ReadNpyFile(llvm::StringRef path, const Shape &shape) {
  auto bytes = readInput(path);
  if (!bytes)
    return bytes.takeError();
  auto prefix = [&](llvm::Error err) {
    return makeError(path + ": " + llvm::toString(std::move(err)));
  };
  auto array = ParseNpy(*bytes);
  if (!array)
    return prefix(array.takeError());
  auto literal = NpyToLiteral(*array, shape);
  if (!literal)
    return prefix(literal.takeError());
  return literal;
}

llvm::Error WriteNpyFile(llvm::StringRef path, const Literal &literal) {
  auto array = LiteralToNpy(literal);
  if (!array)
    return makeError(path + ": " + llvm::toString(array.takeError()));
  return writeOutputAtomically(path, SerializeNpy(*array));
}

} // namespace loom::hlo
