//===- Npy.cpp - NumPy's .npy container, independent of any IR ------------===//

#include "loom/support/Npy.h"

#include "loom/support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

namespace loom {
namespace {

constexpr llvm::StringLiteral Magic("\x93NUMPY");
// Magic, two version bytes; the header length follows (2 or 4 bytes).
constexpr size_t PreambleSize = 8;
// NumPy pads the header so the data starts on a 64-byte boundary.
constexpr size_t Alignment = 64;
// A header longer than this is not something NumPy wrote for a plain array.
constexpr uint64_t MaxHeaderSize = 1 << 20;

uint64_t readLittleEndian(llvm::StringRef Bytes, size_t Offset, int Size) {
  uint64_t V = 0;
  for (int I = Size - 1; I >= 0; --I)
    V = (V << 8) | static_cast<uint8_t>(Bytes[Offset + I]);
  return V;
}

void appendLittleEndian(std::string &Out, uint64_t V, int Size) {
  for (int I = 0; I < Size; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This reads exactly that subset: string keys, and string, True/False or
// tuple-of-integers values.
class HeaderParser {
public:
  explicit HeaderParser(llvm::StringRef Text) : Text(Text) {}

  llvm::Error parse(NpyArray &A) {
    bool HaveDescr = false, HaveOrder = false, HaveShape = false;
    if (!consume('{'))
      return fail("expected '{'");
    while (true) {
      if (consume('}'))
        break;
      std::string Key;
      if (auto Err = parseString(Key))
        return Err;
      if (!consume(':'))
        return fail("expected ':' after '" + Key + "'");
      if (Key == "descr" && !HaveDescr) {
        HaveDescr = true;
        if (peek() == '[')
          return fail("structured dtypes are not supported");
        if (auto Err = parseString(A.Descr))
          return Err;
      } else if (Key == "fortran_order" && !HaveOrder) {
        HaveOrder = true;
        bool Fortran = false;
        if (auto Err = parseBool(Fortran))
          return Err;
        if (Fortran)
          return fail("fortran_order arrays are not supported (save in C order)");
      } else if (Key == "shape" && !HaveShape) {
        HaveShape = true;
        if (auto Err = parseShape(A.Shape))
          return Err;
      } else {
        return fail("unexpected or repeated key '" + Key + "'");
      }
      if (!consume(',')) {
        if (!consume('}'))
          return fail("expected ',' or '}'");
        break;
      }
    }
    skipSpace();
    if (Pos != Text.size())
      return fail("unexpected text after the header dict");
    if (!HaveDescr || !HaveOrder || !HaveShape)
      return fail("the header must have the keys 'descr', 'fortran_order' and 'shape'");
    return llvm::Error::success();
  }

private:
  llvm::Error fail(const llvm::Twine &Msg) {
    return makeError("malformed .npy header at offset " + llvm::Twine(Pos) + ": " + Msg);
  }
  void skipSpace() {
    while (Pos < Text.size() && llvm::isSpace(Text[Pos]))
      ++Pos;
  }
  char peek() {
    skipSpace();
    return Pos < Text.size() ? Text[Pos] : '\0';
  }
  bool consume(char C) {
    if (peek() != C)
      return false;
    ++Pos;
    return true;
  }
  bool consumeWord(llvm::StringRef Word) {
    skipSpace();
    if (!Text.substr(Pos).startswith(Word))
      return false;
    Pos += Word.size();
    return true;
  }

  llvm::Error parseString(std::string &Out) {
    char Quote = peek();
    if (Quote != '\'' && Quote != '"')
      return fail("expected a quoted string");
    size_t End = Text.find(Quote, Pos + 1);
    if (End == llvm::StringRef::npos)
      return fail("unterminated string");
    Out = Text.slice(Pos + 1, End).str();
    if (Out.find('\\') != std::string::npos)
      return fail("escapes in strings are not supported");
    Pos = End + 1;
    return llvm::Error::success();
  }

  llvm::Error parseBool(bool &Out) {
    if (consumeWord("True"))
      Out = true;
    else if (consumeWord("False"))
      Out = false;
    else
      return fail("expected True or False");
    return llvm::Error::success();
  }

  llvm::Error parseShape(std::vector<int64_t> &Dims) {
    if (!consume('('))
      return fail("expected '(' to open the shape");
    while (!consume(')')) {
      skipSpace();
      size_t Start = Pos;
      while (Pos < Text.size() && llvm::isDigit(Text[Pos]))
        ++Pos;
      uint64_t Dim = 0;
      if (Text.slice(Start, Pos).getAsInteger(10, Dim) ||
          Dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return fail("expected a non-negative dimension");
      consumeWord("L"); // Python 2 wrote long integers with a suffix.
      Dims.push_back(static_cast<int64_t>(Dim));
      if (!consume(',')) {
        if (!consume(')'))
          return fail("expected ',' or ')' in the shape");
        break;
      }
    }
    return llvm::Error::success();
  }

  llvm::StringRef Text;
  size_t Pos = 0;
};

// NumPy writes one-byte dtypes with '|', but '<' and '=' mean the same for
// them, and '=' is '<' on the little-endian hosts loom runs on.
std::string normalizeDescr(llvm::StringRef Descr) {
  if (Descr.size() < 2)
    return Descr.str();
  char Order = Descr[0];
  llvm::StringRef Rest = Descr.drop_front();
  if (Order == '=')
    Order = '<';
  bool OneByte = Rest == "b1" || Rest == "i1" || Rest == "u1";
  if (OneByte && (Order == '<' || Order == '>'))
    Order = '|';
  return std::string(1, Order) + Rest.str();
}

llvm::Expected<int64_t> elementCount(llvm::ArrayRef<int64_t> Dims) {
  // An array with a zero dimension is empty whatever its other dimensions.
  if (llvm::is_contained(Dims, 0))
    return 0;
  int64_t Count = 1;
  for (int64_t D : Dims) {
    if (D != 0 && Count > std::numeric_limits<int64_t>::max() / D)
      return makeError("the .npy shape has too many elements");
    Count *= D;
  }
  return Count;
}

// The header dict's bytes, after checking the magic, version and length.
llvm::Expected<llvm::StringRef> headerOf(llvm::StringRef Bytes) {
  if (Bytes.size() < PreambleSize || !Bytes.startswith(Magic))
    return makeError("not a .npy file (bad magic string)");
  int Major = static_cast<uint8_t>(Bytes[6]);
  int Minor = static_cast<uint8_t>(Bytes[7]);
  if (Major < 1 || Major > 3 || Minor != 0)
    return makeError(llvm::formatv(".npy format version {0}.{1} is not supported "
                                   "(1.0, 2.0 and 3.0 are)",
                                   Major, Minor));
  int LengthSize = Major == 1 ? 2 : 4;
  if (Bytes.size() < PreambleSize + LengthSize)
    return makeError("truncated .npy file: no header length");
  uint64_t HeaderSize = readLittleEndian(Bytes, PreambleSize, LengthSize);
  size_t HeaderStart = PreambleSize + LengthSize;
  if (HeaderSize > MaxHeaderSize || Bytes.size() - HeaderStart < HeaderSize)
    return makeError(llvm::formatv("truncated .npy file: the header says {0} bytes", HeaderSize));
  return Bytes.substr(HeaderStart, HeaderSize);
}

// The data must be exactly the shape's elements, no more, no less.
llvm::Error checkDataSize(const NpyArray &A, size_t DataSize) {
  int ItemSize = npyDescrItemSize(A.Descr);
  auto Count = elementCount(A.Shape);
  if (!Count)
    return Count.takeError();
  bool TooBig = *Count > std::numeric_limits<int64_t>::max() / ItemSize;
  if (!TooBig && static_cast<uint64_t>(*Count * ItemSize) == DataSize)
    return llvm::Error::success();
  return makeError(llvm::formatv(".npy data is {0} bytes; shape {1} of '{2}' needs {3}", DataSize,
                                 formatNpyShape(A.Shape), A.Descr,
                                 TooBig ? std::string("more than can be addressed")
                                        : std::to_string(*Count * ItemSize)));
}

} // namespace

int npyDescrItemSize(llvm::StringRef Descr) {
  static constexpr struct {
    const char *Descr;
    int Size;
  } Known[] = {{"|b1", 1}, {"|i1", 1}, {"|u1", 1}, {"<i2", 2},  {"<i4", 4},
               {"<i8", 8}, {"<u2", 2}, {"<u4", 4}, {"<u8", 8},  {"<f2", 2},
               {"<f4", 4}, {"<f8", 8}, {"<c8", 8}, {"<c16", 16}};
  for (const auto &K : Known)
    if (Descr == K.Descr)
      return K.Size;
  return 0;
}

std::string formatNpyShape(llvm::ArrayRef<int64_t> Dims) {
  std::string S = "(";
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? ", " : "") + std::to_string(Dims[I]);
  if (Dims.size() == 1)
    S += ",";
  return S + ")";
}

llvm::Expected<NpyArray> parseNpy(llvm::StringRef Bytes) {
  auto Header = headerOf(Bytes);
  if (!Header)
    return Header.takeError();
  NpyArray A;
  if (auto Err = HeaderParser(*Header).parse(A))
    return Err;
  A.Descr = normalizeDescr(A.Descr);
  if (npyDescrItemSize(A.Descr) == 0)
    return makeError("unsupported .npy dtype '" + A.Descr +
                     "' (little-endian bool, integer, float and complex dtypes are)");
  llvm::StringRef Data = Bytes.drop_front(Header->end() - Bytes.begin());
  if (auto Err = checkDataSize(A, Data.size()))
    return Err;
  A.Data = Data.str();
  return A;
}

std::string serializeNpy(const NpyArray &A) { return serializeNpy(A.Descr, A.Shape, A.Data); }

std::string serializeNpy(llvm::StringRef Descr, llvm::ArrayRef<int64_t> Shape,
                         llvm::StringRef Data) {
  std::string Dict = "{'descr': '" + Descr.str() +
                     "', 'fortran_order': False, 'shape': " + formatNpyShape(Shape) + ", }";
  // Version 1.0 has a 2-byte header length; bigger headers need 2.0.
  size_t UnpaddedV1 = PreambleSize + 2 + Dict.size() + 1;
  int LengthSize = UnpaddedV1 + Alignment <= 65535 ? 2 : 4;
  size_t Unpadded = PreambleSize + LengthSize + Dict.size() + 1;
  size_t Padded = (Unpadded + Alignment - 1) / Alignment * Alignment;
  Dict.append(Padded - Unpadded, ' ');
  Dict.push_back('\n');
  std::string Out = Magic.str();
  Out.reserve(Out.size() + 6 + Dict.size() + Data.size());
  Out.push_back(static_cast<char>(LengthSize == 2 ? 1 : 2));
  Out.push_back(0);
  appendLittleEndian(Out, Dict.size(), LengthSize);
  Out += Dict;
  Out += Data;
  return Out;
}

} // namespace loom
