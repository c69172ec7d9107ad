//===- NpyLiteral.cpp - NumPy's .npy files in and out of Literals --------===//
//
// The container (header, dtype, shape, bytes) is loom/support/Npy.h; this
// file maps its dtypes onto HLO element types.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/eval/NpyLiteral.h"

#include "loom/support/Error.h"
#include "loom/support/Npy.h"
#include "loom/support/InputFile.h"
#include "loom/support/OutputFile.h"

#include "llvm/Support/FormatVariadic.h"


namespace loom::hlo {
namespace {

uint32_t ReadLittleEndian32(llvm::StringRef bytes, size_t offset) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(bytes[offset + i]);
  return v;
}

void AppendLittleEndian32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
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
  // An empty literal may have no storage at all: memcpy needs valid
  // pointers even for zero bytes.
  if (!array.data.empty())
    std::memcpy(literal.raw_data(), array.data.data(), array.data.size());
  return llvm::Error::success();
}

void FillFromFloat32(const NpyArray &array, Literal &literal) {
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    uint32_t bits = ReadLittleEndian32(array.data, 4 * i);
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

llvm::Expected<NpyArray> ParseNpy(llvm::StringRef bytes) {
  auto parsed = parseNpy(bytes);
  if (!parsed)
    return parsed.takeError();
  return NpyArray{std::move(parsed->Descr), std::move(parsed->Shape), std::move(parsed->Data)};
}

std::string SerializeNpy(const NpyArray &array) {
  return serializeNpy(array.descr, array.shape, array.data);
}

llvm::Expected<Literal> NpyToLiteral(const NpyArray &array, const Shape &shape) {
  if (!shape.IsArray() || !IsSupportedElementType(shape.element_type()))
    return makeError("a .npy file cannot hold a value of shape " + shape.ToString());
  if (llvm::ArrayRef<int64_t>(array.shape) != shape.dimensions())
    return makeError("the .npy shape " + formatNpyShape(array.shape) +
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
      AppendLittleEndian32(array.data, bits);
    }
  } else if (PrimitiveTypeBitWidth(type) < 8) {
    for (int64_t i = 0; i < literal.element_count(); ++i)
      array.data.push_back(static_cast<char>(literal.GetAsInt64(i)));
  } else if (literal.size_bytes() > 0) {
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
