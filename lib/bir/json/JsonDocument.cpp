#include "loom/bir/json/JsonDocument.h"

#include "llvm/ADT/SmallString.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace loom::bir {

namespace {

/// The characters llvm::json takes into a number before converting it.
bool isNumberChar(char C) {
  return (C >= '0' && C <= '9') || C == 'e' || C == 'E' || C == '+' ||
         C == '-' || C == '.';
}

/// "-" and 1 to 18 digits always fit int64_t; the common case, read here
/// without strtoll.
std::optional<int64_t> parseShortInteger(llvm::StringRef S) {
  bool Negative = S.consume_front("-");
  if (S.empty() || S.size() > 18)
    return std::nullopt;
  int64_t V = 0;
  for (char C : S) {
    if (C < '0' || C > '9')
      return std::nullopt;
    V = V * 10 + (C - '0');
  }
  return Negative ? -V : V;
}

/// How a number is converted: the whole text by strtoll, else (with no
/// leading '-') by strtoull, else by strtod, else it is an error. LLVM 14's
/// parser has no strtoull step and takes strtoll's clamped result.
enum class NumberKind { Int, UInt, Double, Invalid };

NumberKind classifyNumber(llvm::StringRef S) {
  if (parseShortInteger(S))
    return NumberKind::Int;
  llvm::SmallString<32> Buf(S); // strto* need a terminated string.
  const char *Begin = Buf.c_str();
  const char *Last = Begin + S.size();
  char *End;
  errno = 0;
  std::strtoll(Begin, &End, 10);
  if (End == Last && errno != ERANGE)
    return NumberKind::Int;
  if (S.front() != '-') {
    errno = 0;
    std::strtoull(Begin, &End, 10);
    if (End == Last && errno != ERANGE)
      return NumberKind::UInt;
  }
  std::strtod(Begin, &End);
  return End == Last ? NumberKind::Double : NumberKind::Invalid;
}

// The conversions of a number the parser has classified.
int64_t toInt64(llvm::StringRef S) {
  if (std::optional<int64_t> I = parseShortInteger(S))
    return *I;
  llvm::SmallString<32> Buf(S);
  return std::strtoll(Buf.c_str(), nullptr, 10);
}

uint64_t toUInt64(llvm::StringRef S) {
  llvm::SmallString<32> Buf(S);
  return std::strtoull(Buf.c_str(), nullptr, 10);
}

double toDouble(llvm::StringRef S) {
  llvm::SmallString<32> Buf(S);
  return std::strtod(Buf.c_str(), nullptr);
}

void appendUTF8(uint32_t Rune, std::string &Out) {
  if (Rune < 0x80) {
    Out.push_back(static_cast<char>(Rune));
  } else if (Rune < 0x800) {
    Out.push_back(static_cast<char>(0xC0 | (Rune >> 6)));
    Out.push_back(static_cast<char>(0x80 | (Rune & 0x3F)));
  } else if (Rune < 0x10000) {
    Out.push_back(static_cast<char>(0xE0 | (Rune >> 12)));
    Out.push_back(static_cast<char>(0x80 | ((Rune >> 6) & 0x3F)));
    Out.push_back(static_cast<char>(0x80 | (Rune & 0x3F)));
  } else {
    Out.push_back(static_cast<char>(0xF0 | (Rune >> 18)));
    Out.push_back(static_cast<char>(0x80 | ((Rune >> 12) & 0x3F)));
    Out.push_back(static_cast<char>(0x80 | ((Rune >> 6) & 0x3F)));
    Out.push_back(static_cast<char>(0x80 | (Rune & 0x3F)));
  }
}

} // namespace

/// One pass over the text with a stack of the open containers. Positions
/// and messages of errors follow llvm::json::parse: P is where it would
/// stand when it gives up.
class JsonDocument::Parser {
public:
  Parser(JsonDocument &D, llvm::StringRef Text)
      : D(D), Start(Text.begin()), P(Text.begin()), End(Text.end()) {}

  std::optional<SyntaxError> run();

private:
  bool fail(const char *Msg) {
    Error = SyntaxError{static_cast<size_t>(P - Start), Msg};
    return false;
  }
  char next() { return P == End ? 0 : *P++; }
  void skipWhitespace() {
    while (P != End && (*P == ' ' || *P == '\n' || *P == '\r' || *P == '\t'))
      ++P;
  }
  uint32_t push(Kind K, size_t Offset = 0, size_t Length = 0) {
    D.Nodes.push_back(
        {K, static_cast<uint32_t>(Length), static_cast<uint32_t>(Offset)});
    return static_cast<uint32_t>(D.Nodes.size() - 1);
  }
  void close(uint32_t Index) {
    D.Nodes[Index].Data = static_cast<uint32_t>(D.Nodes.size());
  }

  enum Step { Failed, Complete, Opened };
  Step parseValue();
  bool parseKey();
  bool parseLiteral(const char *Rest, Kind K, const char *Msg);
  bool parseString();
  bool parseEscapedString(const char *Begin);
  bool parseUnicode(std::string &Out);
  bool parse4Hex(uint16_t &Out);
  bool parseNumber(const char *Begin);

  JsonDocument &D;
  const char *Start, *P, *End;
  std::vector<uint32_t> Open;
  std::optional<SyntaxError> Error;
};

std::optional<JsonDocument::SyntaxError> JsonDocument::Parser::run() {
  size_t Bad;
  if (!llvm::json::isUTF8(llvm::StringRef(Start, End - Start), &Bad))
    return SyntaxError{Bad, "Invalid UTF-8 sequence"};
  // Nodes hold 32-bit offsets.
  if (End - Start > std::numeric_limits<uint32_t>::max())
    return SyntaxError{0, "Document larger than 4 GiB"};
  // Every node but a lone top-level scalar takes at least two bytes ("1,"
  // or "[]"), so this never reallocates; the pages beyond the nodes
  // written are never touched, so they cost address space, not memory.
  D.Nodes.reserve((End - Start) / 2 + 1);
  for (;;) {
    Step S = parseValue();
    if (S == Failed)
      return Error;
    if (S == Opened)
      continue; // Its first value comes next.
    // Close every container the value completes.
    for (;;) {
      if (Open.empty()) {
        skipWhitespace();
        if (P != End)
          fail("Text after end of document");
        return Error;
      }
      bool InObject = D.Nodes[Open.back()].K == Object;
      skipWhitespace();
      char C = next();
      if (C == ',') {
        skipWhitespace();
        if (InObject && !parseKey())
          return Error;
        break;
      }
      if (C != (InObject ? '}' : ']')) {
        fail(InObject ? "Expected , or } after object property"
                      : "Expected , or ] after array element");
        return Error;
      }
      close(Open.back());
      Open.pop_back();
    }
  }
}

// A container is only opened (with the key of its first member): the loop
// of run() reads its contents as the values that follow, so nesting costs
// heap, not stack.
JsonDocument::Parser::Step JsonDocument::Parser::parseValue() {
  auto Done = [](bool OK) { return OK ? Complete : Failed; };
  skipWhitespace();
  if (P == End)
    return Done(fail("Unexpected EOF"));
  char C = *P++;
  switch (C) {
  case 'n':
    return Done(parseLiteral("ull", Null, "Invalid JSON value (null?)"));
  case 't':
    return Done(parseLiteral("rue", True, "Invalid JSON value (true?)"));
  case 'f':
    return Done(parseLiteral("alse", False, "Invalid JSON value (false?)"));
  case '"':
    return Done(parseString());
  case '[':
  case '{': {
    bool IsObject = C == '{';
    uint32_t Index = push(IsObject ? Object : Array);
    skipWhitespace();
    if (P != End && *P == (IsObject ? '}' : ']')) {
      ++P;
      close(Index);
      return Complete;
    }
    Open.push_back(Index);
    if (IsObject && !parseKey())
      return Failed;
    return Opened;
  }
  default:
    if (isNumberChar(C))
      return Done(parseNumber(P - 1));
    return Done(fail("Invalid JSON value"));
  }
}

bool JsonDocument::Parser::parseKey() {
  if (next() != '"')
    return fail("Expected object key");
  if (!parseString())
    return false;
  skipWhitespace();
  if (next() != ':')
    return fail("Expected : after object key");
  return true;
}

bool JsonDocument::Parser::parseLiteral(const char *Rest, Kind K,
                                        const char *Msg) {
  for (; *Rest; ++Rest)
    if (next() != *Rest)
      return fail(Msg);
  push(K);
  return true;
}

bool JsonDocument::Parser::parseString() {
  const char *Begin = P;
  for (;;) {
    char C = next();
    if (C == '"')
      break;
    if (P == End)
      return fail("Unterminated string");
    if ((C & 0x1f) == C)
      return fail("Control character in string");
    if (C == '\\')
      return parseEscapedString(Begin);
  }
  size_t Length = P - 1 - Begin;
  if (Length >= (1u << 28))
    return fail("String longer than 256 MiB");
  push(String, Begin - Start, Length);
  return true;
}

// P is just past the first backslash; the string is decoded into Decoded
// from its beginning.
bool JsonDocument::Parser::parseEscapedString(const char *Begin) {
  std::string &Out = D.Decoded;
  size_t Offset = Out.size();
  Out.append(Begin, P - 1);
  for (char C = '\\';;) {
    if (C != '\\') {
      if ((C & 0x1f) == C)
        return fail("Control character in string");
      Out.push_back(C);
    } else {
      switch (C = next()) {
      case '"':
      case '\\':
      case '/':
        Out.push_back(C);
        break;
      case 'b':
        Out.push_back('\b');
        break;
      case 'f':
        Out.push_back('\f');
        break;
      case 'n':
        Out.push_back('\n');
        break;
      case 'r':
        Out.push_back('\r');
        break;
      case 't':
        Out.push_back('\t');
        break;
      case 'u':
        if (!parseUnicode(Out))
          return false;
        break;
      default:
        return fail("Invalid escape sequence");
      }
    }
    C = next();
    if (C == '"')
      break;
    if (P == End)
      return fail("Unterminated string");
  }
  size_t Length = Out.size() - Offset;
  if (Length >= (1u << 28))
    return fail("String longer than 256 MiB");
  push(EscapedString, Offset, Length);
  return true;
}

// Four hex digits; all four are consumed before any is checked.
bool JsonDocument::Parser::parse4Hex(uint16_t &Out) {
  char Digits[4];
  for (char &C : Digits)
    C = next();
  Out = 0;
  for (char C : Digits) {
    if (!std::isxdigit(static_cast<unsigned char>(C)))
      return fail("Invalid \\u escape sequence");
    Out = static_cast<uint16_t>(Out << 4 |
                                (C <= '9' ? C - '0' : (C | 0x20) - 'a' + 10));
  }
  return true;
}

// After "\u". Unpaired surrogates are valid JSON (RFC 8259, 8.2) and become
// U+FFFD; a leading surrogate takes a following "\uXXXX" only if it is a
// trailing one, otherwise that escape is read on its own.
bool JsonDocument::Parser::parseUnicode(std::string &Out) {
  const uint32_t Replacement = 0xFFFD;
  uint16_t First;
  if (!parse4Hex(First))
    return false;
  for (;;) {
    if (First < 0xD800 || First >= 0xE000) {
      appendUTF8(First, Out);
      return true;
    }
    if (First >= 0xDC00 || End - P < 2 || P[0] != '\\' || P[1] != 'u') {
      appendUTF8(Replacement, Out);
      return true;
    }
    P += 2;
    uint16_t Second;
    if (!parse4Hex(Second))
      return false;
    if (Second < 0xDC00 || Second >= 0xE000) {
      appendUTF8(Replacement, Out);
      First = Second;
      continue;
    }
    appendUTF8(0x10000 + ((First - 0xD800) << 10) + (Second - 0xDC00), Out);
    return true;
  }
}

bool JsonDocument::Parser::parseNumber(const char *Begin) {
  while (P != End && isNumberChar(*P))
    ++P;
  llvm::StringRef S(Begin, P - Begin);
  NumberKind K = classifyNumber(S);
  if (K == NumberKind::Invalid)
    return fail("Invalid JSON value (number?)");
  if (S.size() >= (1u << 28))
    return fail("Number longer than 256 MiB");
  push(K == NumberKind::Int    ? Int
       : K == NumberKind::UInt ? UInt
                               : Double,
       Begin - Start, S.size());
  return true;
}

std::optional<JsonDocument::SyntaxError>
JsonDocument::parse(llvm::StringRef NewText) {
  Text = NewText;
  Owned.clear();
  Decoded.clear();
  Nodes.clear();
  std::optional<SyntaxError> E = Parser(*this, Text).run();
  if (E)
    Nodes.clear();
  return E;
}

/// Writes each string and number of a Value into Owned, keeping the
/// Value's number type.
class JsonDocument::Copier {
public:
  explicit Copier(JsonDocument &D) : D(D) {}

  void copy(const llvm::json::Value &V) {
    using llvm::json::Value;
    switch (V.kind()) {
    case Value::Null:
      return add(Null);
    case Value::Boolean:
      return add(*V.getAsBoolean() ? True : False);
    case Value::Number: {
      // llvm::json::Value does not tell its number type; the getters do:
      // an integer >= 0 has both views, a uint64_t beyond int64_t only the
      // unsigned one, a double neither or (with no fraction) only the
      // signed one. A negative integer and a negative integral double read
      // the same through every getter; both are kept as integers.
      auto I = V.getAsInteger();
      auto U = V.getAsUINT64();
      char Buf[32];
      if (I && (U || *I < 0)) {
        std::snprintf(Buf, sizeof(Buf), "%lld", static_cast<long long>(*I));
        return add(Int, Buf);
      }
      if (U) {
        std::snprintf(Buf, sizeof(Buf), "%llu",
                      static_cast<unsigned long long>(*U));
        return add(UInt, Buf);
      }
      // %.17g reads back as the same double, "nan" and "inf" included.
      std::snprintf(Buf, sizeof(Buf), "%.17g", *V.getAsNumber());
      return add(Double, Buf);
    }
    case Value::String:
      return add(String, *V.getAsString());
    case Value::Array: {
      uint32_t Index = push(Array);
      for (const Value &E : *V.getAsArray())
        copy(E);
      D.Nodes[Index].Data = static_cast<uint32_t>(D.Nodes.size());
      return;
    }
    case Value::Object: {
      uint32_t Index = push(Object);
      for (const auto &KV : *V.getAsObject()) {
        add(String, KV.first);
        copy(KV.second);
      }
      D.Nodes[Index].Data = static_cast<uint32_t>(D.Nodes.size());
      return;
    }
    }
  }

private:
  uint32_t push(Kind K, size_t Offset = 0, size_t Length = 0) {
    D.Nodes.push_back(
        {K, static_cast<uint32_t>(Length), static_cast<uint32_t>(Offset)});
    return static_cast<uint32_t>(D.Nodes.size() - 1);
  }
  void add(Kind K, llvm::StringRef S = "") {
    push(K, D.Owned.size(), S.size());
    D.Owned += S;
  }

  JsonDocument &D;
};

void JsonDocument::assign(const llvm::json::Value &V) {
  Owned.clear();
  Decoded.clear();
  Nodes.clear();
  Copier(*this).copy(V);
  Text = Owned;
}

// Accessors. Numbers are converted from their text on each call, which the
// loader makes once per value.

bool JsonRef::isNull() const {
  return Doc && Doc->Nodes[Index].K == JsonDocument::Null;
}

bool JsonRef::isObject() const {
  return Doc && Doc->Nodes[Index].K == JsonDocument::Object;
}

bool JsonRef::isArray() const {
  return Doc && Doc->Nodes[Index].K == JsonDocument::Array;
}

std::optional<bool> JsonRef::getAsBoolean() const {
  if (!Doc)
    return std::nullopt;
  unsigned K = Doc->Nodes[Index].K;
  if (K == JsonDocument::True || K == JsonDocument::False)
    return K == JsonDocument::True;
  return std::nullopt;
}

std::optional<uint64_t> JsonRef::getAsUINT64() const {
  if (!Doc)
    return std::nullopt;
  const JsonDocument::Node &N = Doc->Nodes[Index];
  if (N.K == JsonDocument::Int) {
    int64_t I = toInt64(Doc->text(N));
    return I >= 0 ? std::optional<uint64_t>(I) : std::nullopt;
  }
  if (N.K == JsonDocument::UInt)
    return toUInt64(Doc->text(N));
  return std::nullopt;
}

std::optional<int64_t> JsonRef::getAsInteger() const {
  if (!Doc)
    return std::nullopt;
  const JsonDocument::Node &N = Doc->Nodes[Index];
  if (N.K == JsonDocument::Int)
    return toInt64(Doc->text(N));
  if (N.K == JsonDocument::Double) {
    double D = toDouble(Doc->text(N));
    if (std::modf(D, &D) == 0.0 &&
        D >= double(std::numeric_limits<int64_t>::min()) &&
        D <= double(std::numeric_limits<int64_t>::max()))
      return static_cast<int64_t>(D);
  }
  return std::nullopt;
}

std::optional<double> JsonRef::getAsNumber() const {
  if (!Doc)
    return std::nullopt;
  const JsonDocument::Node &N = Doc->Nodes[Index];
  switch (N.K) {
  case JsonDocument::Int:
    return static_cast<double>(toInt64(Doc->text(N)));
  case JsonDocument::UInt:
    return static_cast<double>(toUInt64(Doc->text(N)));
  case JsonDocument::Double:
    return toDouble(Doc->text(N));
  default:
    return std::nullopt;
  }
}

std::optional<llvm::StringRef> JsonRef::getAsString() const {
  if (!Doc)
    return std::nullopt;
  const JsonDocument::Node &N = Doc->Nodes[Index];
  if (N.K == JsonDocument::String || N.K == JsonDocument::EscapedString)
    return Doc->text(N);
  return std::nullopt;
}

JsonRef JsonRef::firstElement() const {
  if (!isArray() && !isObject())
    return JsonRef();
  uint32_t End = Doc->Nodes[Index].Data;
  return Index + 1 < End ? JsonRef(Doc, Index + 1, End) : JsonRef();
}

size_t JsonRef::size() const {
  size_t N = 0;
  for (JsonRef E = firstElement(); E; E = E.next())
    ++N;
  return isObject() ? N / 2 : N;
}

JsonRef JsonRef::get(llvm::StringRef Key) const {
  JsonRef Found;
  forEachMember([&](llvm::StringRef K, JsonRef V) {
    if (K == Key)
      Found = V;
  });
  return Found;
}

JsonRef JsonRef::next() const {
  if (!Doc)
    return JsonRef();
  uint32_t After = Doc->end(Index);
  return After < ParentEnd ? JsonRef(Doc, After, ParentEnd) : JsonRef();
}

} // namespace loom::bir
