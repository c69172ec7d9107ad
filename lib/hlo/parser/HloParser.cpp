//===- HloParser.cpp - Recursive-descent parser for XLA's HLO text --------===//
//
// One pass over the buffer with a cursor: hand-written token readers and
// recursive descent, no regex and no token objects. The module keeps the
// text as its source, and names, attribute values and literals stay views
// into it in the IR (HloText); instructions that write the same shape text
// share one parsed Shape. Nothing is allocated per token; an instruction
// is one heap block in the common case.
//
// Everything the IR keeps verbatim (attribute values, literals, layout
// attributes, header attributes) is delimited by a balanced scan over (), []
// and {} that skips quoted strings; nothing inside is interpreted.
//
// With HloParseOptions::threads > 1 a large module is parsed in pieces of
// whole computations on several threads and joined in text order; any piece
// that does not parse on its own sends the whole text after the header to
// the sequential parser, so results and errors never depend on the thread
// count (TryParsePieces; docs/hlo-text-format.md, "Parsing on several
// threads").
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/parser/HloParser.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/ShapeInference.h"
#include "loom/support/Error.h"
#include "loom/support/Parallel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace loom::hlo {
namespace {

using Attribute = HloInstruction::Attribute;
using AttributeKind = HloInstruction::AttributeKind;

/// Character classes, one table lookup each: the lexers test every byte.
enum CharClass : uint8_t {
  kClassLowerAlnum = 2, // a-z 0-9
  kClassAlnum = 4,      // a-z A-Z 0-9
  kClassName = 8,       // alnum _ . -
  kClassAttributeName = 16, // alnum _ -
  kClassSpace = 32,     // space \t \n \r \f \v
  kClassDimension = 64, // what array dimensions are written with: 0-9 , < = ? space
};
constexpr std::array<uint8_t, 256> kCharClasses = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    bool digit = c >= '0' && c <= '9';
    bool lower = c >= 'a' && c <= 'z';
    bool alnum = digit || lower || (c >= 'A' && c <= 'Z');
    uint8_t v = 0;
    if (digit || lower)
      v |= kClassLowerAlnum;
    if (alnum)
      v |= kClassAlnum;
    if (alnum || c == '_' || c == '.' || c == '-')
      v |= kClassName;
    if (alnum || c == '_' || c == '-')
      v |= kClassAttributeName;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
      v |= kClassSpace;
    if (digit || c == ',' || c == '<' || c == '=' || c == '?' || c == ' ')
      v |= kClassDimension;
    t[static_cast<size_t>(c)] = v;
  }
  return t;
}();
inline bool HasClass(char c, CharClass k) {
  return kCharClasses[static_cast<unsigned char>(c)] & k;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLowerAlnum(char c) { return HasClass(c, kClassLowerAlnum); }
bool IsAlnum(char c) { return HasClass(c, kClassAlnum); }
bool IsNameChar(char c) { return HasClass(c, kClassName); }
bool IsAttributeNameChar(char c) { return HasClass(c, kClassAttributeName); }
bool IsHorizontalSpace(char c) { return c == ' ' || c == '\t'; }
bool IsSpace(char c) { return HasClass(c, kClassSpace); }

/// `text` without trailing whitespace (StringRef::rtrim builds a table per
/// call).
llvm::StringRef TrimTrailingSpace(llvm::StringRef text) {
  size_t n = text.size();
  while (n > 0 && IsSpace(text[n - 1]))
    --n;
  return text.take_front(n);
}

/// The first byte in [p, end) that is one of `Chars`, or end: 16 bytes a
/// step where SSE2 is there (every x86-64), a byte a step elsewhere.
template <char... Chars> const char *FindFirstOf(const char *p, const char *end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    __m128i hit = _mm_setzero_si128();
    ((hit = _mm_or_si128(hit, _mm_cmpeq_epi8(block, _mm_set1_epi8(Chars)))), ...);
    if (int mask = _mm_movemask_epi8(hit))
      return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  for (; p < end; ++p)
    if (((*p == Chars) || ...))
      return p;
  return end;
}

char CloserOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

/// Attributes whose values name other IR objects and so are kept as pointers.
enum class ReferenceKind { kNone, kComputation, kComputationList, kControlPredecessors };

ReferenceKind ClassifyAttribute(llvm::StringRef name) {
  // Runs for every attribute: most (metadata=, dimensions=, ...) start with
  // a letter no reference attribute starts with.
  switch (name.empty() ? '\0' : name[0]) {
  case 't': case 'c': case 'b': case 's': case 'f':
    break;
  default:
    return ReferenceKind::kNone;
  }
  if (name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
      name == "select" || name == "scatter" || name == "true_computation" ||
      name == "false_computation")
    return ReferenceKind::kComputation;
  if (name == "branch_computations" || name == "called_computations")
    return ReferenceKind::kComputationList;
  if (name == "control-predecessors")
    return ReferenceKind::kControlPredecessors;
  return ReferenceKind::kNone;
}

/// Stop conditions of a balanced scan, checked only outside all brackets.
enum StopAt : unsigned {
  kStopAtCloser = 0,
  kStopAtComma = 1,
  kStopAtNewline = 2,
  kStopAtComment = 4,
};

/// Every key of the parser's tables, hashed as the IR's name table hashes.
HloName NameKey(llvm::StringRef text) { return HloNameTable::Key(text); }

/// Names are looked up once per operand.
bool SameText(llvm::StringRef a, llvm::StringRef b) {
  return a.size() == b.size() && HloNameKeyInfo::SameBytes(a.data(), b.data(), a.size());
}

template <typename T> using NameMap = llvm::DenseMap<HloName, T, HloNameKeyInfo>;

/// Opcode and element type lookups run for every instruction and every
/// shape; a small hash table built once beats the IR's chains of compares
/// (and StringMap's out-of-line hash).
std::optional<HloOpcode> LookupOpcode(llvm::StringRef text) {
  static const NameMap<HloOpcode> table = [] {
    NameMap<HloOpcode> t;
#define LOOM_X(E, S) t[NameKey(S)] = HloOpcode::E;
    LOOM_HLO_OPCODE_LIST(LOOM_X)
#undef LOOM_X
    return t;
  }();
  auto it = table.find(NameKey(text));
  if (it != table.end())
    return it->second;
  return StringToHloOpcode(text); // old spellings
}

std::optional<PrimitiveType> LookupPrimitiveType(llvm::StringRef text) {
  static const NameMap<PrimitiveType> table = [] {
    NameMap<PrimitiveType> t;
#define LOOM_X(E, S, B) t[NameKey(S)] = PrimitiveType::E;
    LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
    return t;
  }();
  auto it = table.find(NameKey(text));
  if (it == table.end())
    return std::nullopt;
  return it->second;
}

class Parser {
public:
  /// Parses `module`'s source into it: what the IR keeps of the text are
  /// views into that source.
  Parser(std::unique_ptr<HloModule> module, llvm::StringRef file_name,
         const HloParseOptions &options = HloParseOptions())
      : buffer_(module->source()), file_name_(file_name), cur_(buffer_.begin()),
        end_(buffer_.end()), module_(std::move(module)), options_(options) {}
  /// Parses text that no module keeps (a shape).
  Parser(llvm::StringRef text, llvm::StringRef file_name)
      : buffer_(text), file_name_(file_name), cur_(text.begin()), end_(text.end()) {}

  llvm::Expected<std::unique_ptr<HloModule>> ParseModule();
  llvm::Expected<Shape> ParseShapeText();

private:
  /// Parses the computations of [begin, end) of `source` into `piece`, a
  /// module of its own, as the sequential parser would parse them there
  /// (TryParsePieces). `abandon`, once set, makes it stop early.
  Parser(std::unique_ptr<HloModule> piece, llvm::StringRef source, llvm::StringRef file_name,
         const char *begin, const char *end, const std::atomic<bool> *abandon)
      : buffer_(source), file_name_(file_name), cur_(begin), end_(end),
        module_(std::move(piece)), abandon_(abandon) {}

  /// Names visible to the operands of one computation's instructions.
  struct Scope {
    HloComputation *computation = nullptr;
    /// Each instruction by name, with its shape as written at its
    /// definition (empty when inferred).
    struct Defined {
      HloInstruction *instruction = nullptr;
      llvm::StringRef shape_text;
    };
    /// One of the parser's reused maps (Parser::scope_maps_), empty at
    /// the start of the computation.
    NameMap<Defined> &instructions;
    HloInstruction *root = nullptr;
    HloInstruction *last = nullptr;
  };
  /// A computation named by an attribute, resolved once all are read:
  /// computations may be used before they are defined.
  struct PendingReference {
    HloInstruction *instruction;
    size_t attribute;
    size_t slot;
    llvm::StringRef name;
    const char *at;
  };
  /// A computation written inline (`calls={ ... }`), named at the end so
  /// the name cannot clash with one defined later in the text.
  struct InlineComputation {
    HloComputation *computation;
    llvm::StringRef instruction;
    llvm::StringRef attribute;
  };

  // ---- Errors -------------------------------------------------------------
  bool Fail(const char *at, const llvm::Twine &message) {
    if (!failed_) {
      failed_ = true;
      error_ = message.str();
      error_at_ = at;
    }
    return false;
  }
  llvm::Error TakeError() const {
    return makeLocatedError(locate(file_name_, buffer_, error_at_ - buffer_.begin()), error_);
  }
  /// `instruction 'x': ` while an instruction is being read.
  std::string Context() const {
    if (current_instruction_.empty())
      return "";
    return ("instruction '" + current_instruction_ + "': ").str();
  }

  // ---- Tokens -------------------------------------------------------------
  /// Whitespace and comments. Called between almost every two tokens, so
  /// the common case (already at a token) stays inline.
  LLVM_ATTRIBUTE_ALWAYS_INLINE void SkipTrivia() {
    if (cur_ < end_ && !IsSpace(*cur_) && *cur_ != '/')
      return;
    // One space between two tokens is the next most common case.
    if (end_ - cur_ >= 2 && *cur_ == ' ' && !IsSpace(cur_[1]) && cur_[1] != '/') {
      ++cur_;
      return;
    }
    SkipTriviaSlow();
  }
  void SkipTriviaSlow();
  void SkipHorizontalSpace() {
    while (cur_ < end_ && IsHorizontalSpace(*cur_))
      ++cur_;
  }
  bool Peek(char c) const { return cur_ < end_ && *cur_ == c; }
  bool Expect(char c, const llvm::Twine &what) {
    if (Peek(c)) {
      ++cur_;
      return true;
    }
    return Fail(cur_, "expected " + what);
  }
  /// Expect(c, before + name + "'"), the message made only on failure.
  bool ExpectAfter(char c, const char *before, llvm::StringRef name) {
    if (Peek(c)) {
      ++cur_;
      return true;
    }
    return Fail(cur_, llvm::Twine("expected ") + before + name + "'");
  }
  /// The rest of a `,`-separated list after its opening bracket, through
  /// `close`; the list may be empty. `element` reads one element (trivia
  /// before it skipped) and returns false on failure; `what` names what was
  /// expected when neither ',' nor `close` follows an element.
  template <typename ElementFn>
  bool ParseSeparatedList(char close, const llvm::Twine &what, ElementFn element) {
    SkipTrivia();
    if (Peek(close)) {
      ++cur_;
      return true;
    }
    while (true) {
      SkipTrivia();
      if (!element())
        return false;
      SkipTrivia();
      if (Peek(',')) {
        ++cur_;
        continue;
      }
      return Expect(close, what);
    }
  }
  bool ConsumeKeyword(llvm::StringRef keyword);
  bool LexName(llvm::StringRef &name);
  llvm::StringRef LexWhile(bool (*pred)(char)) {
    const char *begin = cur_;
    while (cur_ < end_ && pred(*cur_))
      ++cur_;
    return llvm::StringRef(begin, cur_ - begin);
  }
  bool LexNonNegativeInt(int64_t &value, const char *what);
  bool SkipString();
  bool ScanBalanced(unsigned stops);
  bool ScanAttributeValue(llvm::StringRef attribute, llvm::StringRef &value);

  // ---- Shapes -------------------------------------------------------------
  bool AtShape() const;
  bool AtBufferShape() const;
  bool ParseBufferShape(Shape *out, const Shape *expect, int depth);
  bool ParseShapeAt(Shape *out, const Shape *expect, int depth);
  bool ParseTupleShape(Shape *out, const Shape *expect, int depth);
  bool ParseArrayShape(Shape *out, const Shape *expect);
  bool ParseLayout(Layout *out);
  bool ShapeTextMatches(const char *begin, const char *end, const Shape &shape);
  const char *ShapeTextEnd() const;
  bool ParseInstructionShape(Shape &shape, const Shape *&shared);

  // ---- Module structure ---------------------------------------------------
  bool ParseHeader();
  bool ParseStackFrameIndex();
  bool ParseComputation();
  bool ParseSignature();
  bool ParseInstructions(HloComputation &computation, const char *open, int depth);
  bool ParseInstruction(Scope &scope, int depth);
  bool ParseOpcode(HloOpcode &opcode, std::optional<HloOpcode> &wrapped);
  bool ParseInstructionBody(Scope &scope, llvm::StringRef name, int depth,
                            HloInstruction *&result);
  bool ParseOperands(Scope &scope, int depth, llvm::SmallVectorImpl<HloInstruction *> &operands);
  bool ParseAttributes(Scope &scope, llvm::StringRef instruction, int depth,
                       llvm::SmallVectorImpl<Attribute> &attributes,
                       llvm::SmallVectorImpl<HloInstruction *> &control_predecessors);
  bool ParseComputationReference(llvm::StringRef instruction, llvm::StringRef attribute,
                                 int depth, llvm::SmallVectorImpl<Attribute> &attributes);
  bool ParseControlPredecessors(Scope &scope, llvm::SmallVectorImpl<HloInstruction *> &preds);
  bool LooksLikeInlineComputation();
  bool InferShape(HloInstruction &inst, size_t first_pending, const char *at);
  bool NormalizeAttributes(HloInstruction &inst, size_t first_pending, const char *at);
  void UniquifyInstructionNames();
  bool Finish();
  bool ParseComputations();
  bool TryParsePieces();
  std::vector<const char *> PieceStarts(unsigned threads) const;

  llvm::StringRef buffer_;
  llvm::StringRef file_name_;
  const char *cur_;
  const char *end_;

  bool failed_ = false;
  std::string error_;
  const char *error_at_ = nullptr;
  llvm::StringRef current_instruction_;
  bool shape_mismatch_ = false;
  bool has_duplicate_names_ = false;
  /// The shape text of the instruction ParseInstructionBody just read.
  llvm::StringRef body_shape_text_;

  std::unique_ptr<HloModule> module_;
  NameMap<HloComputation *> computations_by_name_;
  HloComputation *entry_ = nullptr;
  HloComputation *last_top_level_ = nullptr;
  std::vector<PendingReference> pending_;
  std::vector<InlineComputation> inline_;
  /// Operands written as instructions in place; named at the end.
  std::vector<HloInstruction *> unnamed_;
  /// Every computation with the offset of its '{', to visit them in text
  /// order whatever order they were added to the module in.
  std::vector<std::pair<const char *, HloComputation *>> by_position_;
  /// Instruction shapes by their text: a dump repeats a few shapes over
  /// and over, and each is parsed once and shared (HloModule::AddSharedShape).
  NameMap<const Shape *> shapes_by_text_;
  /// The name maps of the computations being read (ParseInstructions).
  std::vector<std::unique_ptr<NameMap<Scope::Defined>>> scope_maps_;
  size_t open_scopes_ = 0;

  HloParseOptions options_;
  /// Set when another piece failed (TryParsePieces).
  const std::atomic<bool> *abandon_ = nullptr;
};

// ---- Tokens -----------------------------------------------------------------

void Parser::SkipTriviaSlow() {
  while (cur_ < end_) {
    char c = *cur_;
    if (IsSpace(c)) {
      ++cur_;
      continue;
    }
    if (c != '/' || cur_ + 1 >= end_)
      return;
    if (cur_[1] == '/') {
      const void *eol = std::memchr(cur_, '\n', end_ - cur_);
      cur_ = eol ? static_cast<const char *>(eol) : end_;
      continue;
    }
    if (cur_[1] != '*')
      return;
    llvm::StringRef rest(cur_ + 2, end_ - cur_ - 2);
    size_t close = rest.find("*/");
    if (close == llvm::StringRef::npos) {
      Fail(cur_, "unterminated '/*' comment");
      cur_ = end_;
      return;
    }
    cur_ = rest.begin() + close + 2;
  }
}

bool Parser::ConsumeKeyword(llvm::StringRef keyword) {
  size_t n = keyword.size();
  if (static_cast<size_t>(end_ - cur_) < n ||
      !HloNameKeyInfo::SameBytes(cur_, keyword.data(), n))
    return false;
  if (cur_ + n < end_ && IsNameChar(cur_[n]))
    return false;
  cur_ += n;
  return true;
}

bool Parser::LexName(llvm::StringRef &name) {
  const char *p = cur_;
  if (p < end_ && *p == '%')
    ++p;
  const char *begin = p;
  while (p < end_ && IsNameChar(*p))
    ++p;
  if (p == begin)
    return false;
  name = llvm::StringRef(begin, p - begin);
  cur_ = p;
  return true;
}

bool Parser::LexNonNegativeInt(int64_t &value, const char *what) {
  const char *at = cur_;
  if (cur_ == end_ || !IsDigit(*cur_))
    return Fail(at, Context() + "expected " + what);
  // Up to 18 digits cannot overflow; only longer numbers pay for checks.
  int64_t v = 0;
  const char *fast_end = end_ - cur_ > 18 ? cur_ + 18 : end_;
  for (; cur_ < fast_end && IsDigit(*cur_); ++cur_)
    v = v * 10 + (*cur_ - '0');
  for (; cur_ < end_ && IsDigit(*cur_); ++cur_)
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *cur_ - '0', &v))
      return Fail(at, Context() + what + " does not fit in 64 bits");
  value = v;
  return true;
}

bool Parser::SkipString() {
  const char *open = cur_;
  ++cur_;
  while (cur_ < end_) {
    cur_ = FindFirstOf<'\\', '"'>(cur_, end_);
    if (cur_ == end_)
      break;
    char c = *cur_;
    if (c == '\\') {
      cur_ += (end_ - cur_ >= 2) ? 2 : 1;
      continue;
    }
    ++cur_;
    if (c == '"')
      return true;
  }
  return Fail(open, "unterminated string");
}

// Moves over balanced brackets and strings. Stops before a closer that no
// bracket of the scan opened (the caller's), at the end of input, or - only
// outside all brackets - at whatever `stops` selects. Iterative with an
// explicit stack, so deep input costs memory bounded by kMaxNestingDepth.
bool Parser::ScanBalanced(unsigned stops) {
  // Most of a value is ordinary text; skip it without the checks below.
  llvm::SmallVector<const char *, 16> open;
  while (cur_ < end_) {
    cur_ = FindFirstOf<'"', '(', ')', '[', ']', '{', '}', ',', '\n', '\r', '/'>(cur_, end_);
    if (cur_ == end_)
      break;
    char c = *cur_;
    if (open.empty()) {
      if ((stops & kStopAtComma) && c == ',')
        return true;
      if ((stops & kStopAtNewline) && (c == '\n' || c == '\r'))
        return true;
      if ((stops & kStopAtComment) && c == '/' && cur_ + 1 < end_ &&
          (cur_[1] == '/' || cur_[1] == '*'))
        return true;
    }
    switch (c) {
    case '"':
      if (!SkipString())
        return false;
      continue;
    case '(':
    case '[':
    case '{':
      if (open.size() >= static_cast<size_t>(kMaxNestingDepth))
        return Fail(cur_, "brackets nested deeper than " + llvm::Twine(kMaxNestingDepth) +
                              " levels");
      open.push_back(cur_++);
      continue;
    case ')':
    case ']':
    case '}': {
      if (open.empty())
        return true;
      char want = CloserOf(*open.back());
      if (c != want)
        return Fail(cur_, llvm::Twine("expected '") + llvm::Twine(want) + "' to match '" +
                              llvm::Twine(*open.back()) + "' but found '" + llvm::Twine(c) +
                              "'");
      open.pop_back();
      ++cur_;
      continue;
    }
    default:
      ++cur_;
    }
  }
  if (!open.empty())
    return Fail(open.back(), llvm::Twine("unterminated '") + llvm::Twine(*open.back()) + "'");
  return true;
}

bool Parser::ScanAttributeValue(llvm::StringRef attribute, llvm::StringRef &value) {
  // Multi-line dumps may break the line right after the '='.
  SkipTrivia();
  const char *begin = cur_;
  if (!ScanBalanced(kStopAtComma | kStopAtNewline | kStopAtComment))
    return false;
  value = TrimTrailingSpace(llvm::StringRef(begin, cur_ - begin));
  if (value.empty())
    return Fail(begin, Context() + "expected a value for attribute '" + attribute + "'");
  return true;
}

// ---- Shapes -----------------------------------------------------------------

bool Parser::AtShape() const {
  if (cur_ == end_)
    return false;
  if (*cur_ == '(')
    return true;
  const char *p = cur_;
  while (p < end_ && IsLowerAlnum(*p))
    ++p;
  if (p == cur_ || p == end_)
    return false;
  return *p == '[' || (*p == '(' && p - cur_ == 1 && *cur_ == 'b');
}

bool Parser::AtBufferShape() const {
  return end_ - cur_ >= 2 && cur_[0] == 'b' && cur_[1] == '(';
}

// Reads a shape into `out` (null: check the syntax only). When `expect` is
// given, what is read is compared with it, layouts ignored, and a difference
// sets shape_mismatch_; nothing is allocated then.
bool Parser::ParseShapeAt(Shape *out, const Shape *expect, int depth) {
  if (depth >= kMaxNestingDepth)
    return Fail(cur_, Context() + "shape nested deeper than " + llvm::Twine(kMaxNestingDepth) +
                          " levels");
  if (Peek('('))
    return ParseTupleShape(out, expect, depth);
  if (AtBufferShape())
    return ParseBufferShape(out, expect, depth);
  return ParseArrayShape(out, expect);
}

// `b(s32[2,8]{1,0})`.
bool Parser::ParseBufferShape(Shape *out, const Shape *expect, int depth) {
  cur_ += 2;
  if (expect && !expect->IsBuffer()) {
    shape_mismatch_ = true;
    expect = nullptr;
  }
  SkipTrivia();
  const char *at = cur_;
  Shape array;
  if (!ParseShapeAt(out ? &array : nullptr, expect ? &expect->buffer_shape() : nullptr,
                    depth + 1))
    return false;
  if (out && !array.IsArray())
    return Fail(at, Context() + "a buffer shape holds an array");
  SkipTrivia();
  if (!Expect(')', "')' to close the buffer shape"))
    return false;
  if (out)
    *out = Shape::MakeBuffer(std::move(array));
  return true;
}

bool Parser::ParseTupleShape(Shape *out, const Shape *expect, int depth) {
  ++cur_;
  if (out)
    *out = Shape::MakeTuple({});
  if (expect && !expect->IsTuple()) {
    shape_mismatch_ = true;
    expect = nullptr;
  }
  int64_t count = 0;
  bool ok = ParseSeparatedList(')', "',' or ')' in a tuple shape", [&] {
    Shape *element = nullptr;
    if (out) {
      out->mutable_tuple_shapes().emplace_back();
      element = &out->mutable_tuple_shapes().back();
    }
    const Shape *element_expect = nullptr;
    if (expect) {
      if (count < expect->tuple_shapes_size())
        element_expect = &expect->tuple_shapes(count);
      else
        shape_mismatch_ = true;
    }
    if (!ParseShapeAt(element, element_expect, depth + 1))
      return false;
    ++count;
    return true;
  });
  if (!ok)
    return false;
  if (expect && count != expect->tuple_shapes_size())
    shape_mismatch_ = true;
  return true;
}

bool Parser::ParseArrayShape(Shape *out, const Shape *expect) {
  const char *at = cur_;
  llvm::StringRef type_name = LexWhile(IsLowerAlnum);
  if (type_name.empty())
    return Fail(at, Context() + "expected a shape");
  std::optional<PrimitiveType> type = LookupPrimitiveType(type_name);
  if (!type || *type == PrimitiveType::TUPLE || *type == PrimitiveType::BUFFER)
    return Fail(at, Context() + "unknown element type '" + type_name + "'");
  if (!Expect('[', "'[' after the element type"))
    return false;
  bool is_array = *type != PrimitiveType::TOKEN && *type != PrimitiveType::OPAQUE_TYPE;
  if (expect && (expect->element_type() != *type || expect->IsTuple()))
    shape_mismatch_ = true;
  bool compare = expect && !shape_mismatch_ && expect->element_type() == *type;

  llvm::SmallVector<int64_t, 8> dims;
  llvm::SmallVector<bool, 8> dynamic;
  int64_t rank = 0;
  int64_t elements = 1;
  bool overflow = false;
  // A zero dimension makes the shape empty whatever the others multiply to.
  bool empty = false;
  bool ok = ParseSeparatedList(']', "',' or ']' in the dimensions", [&] {
    int64_t size;
    bool is_dynamic = false;
    if (Peek('?')) {
      ++cur_;
      size = Shape::kUnboundedSize;
      is_dynamic = true;
    } else {
      if (Peek('<') && cur_ + 1 < end_ && cur_[1] == '=') {
        cur_ += 2;
        is_dynamic = true;
        SkipTrivia();
      }
      if (!LexNonNegativeInt(size, "a dimension size"))
        return false;
      if (__builtin_mul_overflow(elements, size, &elements))
        overflow = true;
      empty |= size == 0;
    }
    if (out) {
      dims.push_back(size);
      dynamic.push_back(is_dynamic);
    }
    // Dynamic markers are not compared: XLA's own tests write `<=5` on
    // operands whose definition is static.
    if (compare && (rank >= expect->rank() || expect->dimensions(rank) != size))
      shape_mismatch_ = true;
    ++rank;
    return true;
  });
  if (!ok)
    return false;
  if (compare && rank != expect->rank())
    shape_mismatch_ = true;
  if (overflow && !empty)
    return Fail(at, Context() + "the dimensions of '" + llvm::StringRef(at, cur_ - at) +
                        "' multiply past the 64-bit element count limit");
  if (!is_array && rank != 0)
    return Fail(at, Context() + "'" + type_name + "' shapes have no dimensions");
  if (out) {
    *out = Shape(*type, dims);
    for (size_t i = 0; i < dynamic.size(); ++i)
      if (dynamic[i])
        out->set_dynamic_dimension(i, true);
  }
  // Only a brace touching ']' is a layout: in `-> f32[2] {` it opens the
  // computation body.
  if (!is_array || !Peek('{'))
    return true;
  if (!out)
    return ParseLayout(nullptr);
  Layout layout;
  if (!ParseLayout(&layout))
    return false;
  out->set_layout(std::move(layout));
  return true;
}

bool Parser::ParseLayout(Layout *out) {
  ++cur_;
  SkipTrivia();
  while (!Peek('}') && !Peek(':')) {
    int64_t dim;
    if (!LexNonNegativeInt(dim, "a layout dimension"))
      return false;
    if (out)
      out->minor_to_major.push_back(dim);
    SkipTrivia();
    if (!Peek(','))
      break;
    ++cur_;
    SkipTrivia();
  }
  if (Peek(':')) {
    const char *begin = ++cur_;
    if (!ScanBalanced(kStopAtCloser))
      return false;
    if (out)
      out->attributes = std::string(begin, cur_);
  }
  return Expect('}', "'}' to close the layout");
}

// Where the shape at cur_ ends, found without decoding it: an element type,
// bracketed dimensions and a layout brace touching them, or a parenthesized
// tuple on one line. nullptr for anything else; that shape is just parsed.
const char *Parser::ShapeTextEnd() const {
  const char *p = cur_;
  if (p < end_ && *p == '(') {
    int depth = 0;
    for (; p < end_; ++p) {
      char c = *p;
      if (c == '(')
        ++depth;
      else if (c == ')' && --depth == 0)
        return p + 1;
      else if (c == '\n' || c == '"')
        return nullptr;
    }
    return nullptr;
  }
  while (p < end_ && IsLowerAlnum(*p))
    ++p;
  if (p == cur_ || p == end_ || *p != '[')
    return nullptr;
  // As in ParseArrayShape: a brace after a token or opaque shape is not
  // its layout.
  llvm::StringRef type(cur_, p - cur_);
  bool takes_layout = type != "token" && type != "opaque";
  for (++p; p < end_ && *p != ']'; ++p)
    if (!HasClass(*p, kClassDimension))
      return nullptr;
  if (p == end_)
    return nullptr;
  ++p;
  if (p == end_ || *p != '{' || !takes_layout)
    return p;
  for (++p; p < end_ && *p != '}'; ++p)
    if (*p == '{' || *p == '\n' || *p == '"')
      return nullptr;
  return p == end_ ? nullptr : p + 1;
}

// The shape written before an instruction's opcode: shared with every
// earlier instruction that wrote the same text, else parsed (and kept for
// later ones when the text was the whole shape).
bool Parser::ParseInstructionShape(Shape &shape, const Shape *&shared) {
  const char *text_end = module_ ? ShapeTextEnd() : nullptr;
  if (!text_end)
    return ParseShapeAt(&shape, nullptr, 0);
  HloName key = NameKey(llvm::StringRef(cur_, text_end - cur_));
  auto it = shapes_by_text_.find(key);
  if (it != shapes_by_text_.end()) {
    shared = it->second;
    cur_ = text_end;
    return true;
  }
  if (!ParseShapeAt(&shape, nullptr, 0))
    return false;
  if (cur_ != text_end)
    return true;
  shared = module_->AddSharedShape(std::move(shape));
  shapes_by_text_.try_emplace(key, shared);
  return true;
}

bool Parser::ShapeTextMatches(const char *begin, const char *end, const Shape &shape) {
  const char *saved_cur = cur_, *saved_end = end_;
  cur_ = begin;
  end_ = end;
  shape_mismatch_ = false;
  bool ok = ParseShapeAt(nullptr, &shape, 0);
  cur_ = saved_cur;
  end_ = saved_end;
  return ok && !shape_mismatch_;
}

// ---- Module structure ---------------------------------------------------------

bool Parser::ParseHeader() {
  SkipTrivia();
  if (!ConsumeKeyword("HloModule"))
    return Fail(cur_, "expected 'HloModule'");
  SkipTrivia();
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(cur_, "expected the module name");
  // Old dumps wrote `HloModule name:`.
  if (Peek(':'))
    ++cur_;
  module_->SetName(name.str());
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (!Peek(','))
      return true;
    ++cur_;
    SkipTrivia();
    const char *at = cur_;
    llvm::StringRef attribute = LexWhile(IsAttributeNameChar);
    if (attribute.empty())
      return Fail(at, "expected a module attribute name");
    if (!Expect('=', "'=' after module attribute '" + attribute + "'"))
      return false;
    llvm::StringRef value;
    if (!ScanAttributeValue(attribute, value))
      return false;
    module_->mutable_header_attributes().push_back({attribute.str(), value.str()});
  }
}

static bool IsStackFrameKeyword(llvm::StringRef word) {
  return word == "FileNames" || word == "FunctionNames" || word == "FileLocations" ||
         word == "StackFrames";
}

// The tables are lines of a keyword or of `<id> <entry>`; they are kept
// verbatim up to the first line that is neither.
bool Parser::ParseStackFrameIndex() {
  SkipTrivia();
  const char *begin = cur_;
  const char *last_end = cur_;
  while (cur_ < end_) {
    while (cur_ < end_ && IsSpace(*cur_))
      ++cur_;
    const char *line = cur_;
    bool is_table_line = cur_ < end_ && IsDigit(*cur_);
    if (!is_table_line) {
      llvm::StringRef word = LexWhile(IsAlnum);
      SkipHorizontalSpace();
      is_table_line = IsStackFrameKeyword(word) && (cur_ == end_ || *cur_ == '\n' || *cur_ == '\r');
    }
    if (!is_table_line) {
      cur_ = line;
      break;
    }
    const void *eol = std::memchr(cur_, '\n', end_ - cur_);
    cur_ = eol ? static_cast<const char *>(eol) : end_;
    last_end = cur_;
  }
  if (last_end != begin)
    module_->set_stack_frame_index(llvm::StringRef(begin, last_end - begin).rtrim().str());
  cur_ = last_end;
  return true;
}

bool Parser::ParseSignature() {
  ++cur_;
  bool ok = ParseSeparatedList(')', "',' or ')' in the computation signature", [&] {
    llvm::StringRef name;
    if (!LexName(name))
      return Fail(cur_, "expected a parameter name in the computation signature");
    SkipTrivia();
    if (!Expect(':', "':' after parameter '" + name + "'"))
      return false;
    SkipTrivia();
    return ParseShapeAt(nullptr, nullptr, 0);
  });
  if (!ok)
    return false;
  SkipTrivia();
  if (!(Peek('-') && cur_ + 1 < end_ && cur_[1] == '>'))
    return Fail(cur_, "expected '->' in the computation signature");
  cur_ += 2;
  SkipTrivia();
  return ParseShapeAt(nullptr, nullptr, 0);
}

bool Parser::ParseComputation() {
  const char *at = cur_;
  bool is_entry = ConsumeKeyword("ENTRY");
  SkipTrivia();
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(cur_, "expected a computation name");
  SkipTrivia();
  if (Peek('(') && !ParseSignature())
    return false;
  SkipTrivia();
  const char *open = cur_;
  if (!ExpectAfter('{', "'{' to open computation '", name))
    return false;
  if (computations_by_name_.count(NameKey(name)))
    return Fail(at, "duplicate computation name '" + name + "'");
  auto owned = std::make_unique<HloComputation>(name.str());
  if (!ParseInstructions(*owned, open, 1))
    return false;
  // `}, execution_thread="host"` and the like stay with the computation.
  SkipTrivia();
  if (Peek(',')) {
    const char *begin = cur_;
    if (!ScanBalanced(kStopAtNewline))
      return false;
    owned->set_trailer(llvm::StringRef(begin, cur_ - begin).rtrim().str());
  }
  HloComputation *computation =
      module_->AddComputation(std::move(owned), /*names_reserved=*/true);
  computations_by_name_[NameKey(computation->name())] = computation;
  by_position_.push_back({open, computation});
  last_top_level_ = computation;
  if (!is_entry)
    return true;
  if (entry_)
    return Fail(at, "computation '" + name + "' is marked ENTRY but '" + entry_->name() +
                        "' already is");
  entry_ = computation;
  return true;
}

bool Parser::ParseInstructions(HloComputation &computation, const char *open, int depth) {
  // One map per level of computations written in place, kept from one
  // computation to the next: clearing keeps its buckets, where a new map
  // per computation grew them again every time.
  if (scope_maps_.size() <= open_scopes_)
    scope_maps_.push_back(std::make_unique<NameMap<Scope::Defined>>());
  NameMap<Scope::Defined> &names = *scope_maps_[open_scopes_];
  names.clear();
  ++open_scopes_;
  auto close = llvm::make_scope_exit([&] { --open_scopes_; });
  Scope scope{&computation, names};
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (cur_ == end_)
      return Fail(open, "unterminated computation: expected '}' to match this '{'");
    if (*cur_ == '}') {
      ++cur_;
      break;
    }
    if (!ParseInstruction(scope, depth))
      return false;
  }
  if (!scope.last)
    return Fail(open, "computation '" + computation.name() + "' has no instructions");
  computation.set_root_instruction(scope.root ? scope.root : scope.last);
  return true;
}

bool Parser::ParseOpcode(HloOpcode &opcode, std::optional<HloOpcode> &wrapped) {
  const char *at = cur_;
  llvm::StringRef text = LexWhile(IsAttributeNameChar);
  if (text.empty())
    return Fail(at, Context() + "expected an opcode");
  if (std::optional<HloOpcode> op = LookupOpcode(text)) {
    opcode = *op;
    return true;
  }
  // XLA's async sugar: `negate-start` wraps negate in an async computation.
  static constexpr std::pair<llvm::StringLiteral, HloOpcode> kSuffixes[] = {
      {"-start", HloOpcode::kAsyncStart},
      {"-update", HloOpcode::kAsyncUpdate},
      {"-done", HloOpcode::kAsyncDone},
  };
  for (const auto &[suffix, async_opcode] : kSuffixes) {
    if (!text.endswith(suffix))
      continue;
    if (std::optional<HloOpcode> base = LookupOpcode(text.drop_back(suffix.size()))) {
      opcode = async_opcode;
      wrapped = *base;
      return true;
    }
  }
  return Fail(at, Context() + "unknown opcode '" + text + "'");
}

bool Parser::ParseOperands(Scope &scope, int depth,
                           llvm::SmallVectorImpl<HloInstruction *> &operands) {
  SkipTrivia();
  if (Peek(')')) {
    ++cur_;
    return true;
  }
  while (true) {
    SkipTrivia();
    const char *operand_begin = cur_;
    const char *shape_end = nullptr;
    // Dump text writes an operand's shape as its definition wrote it, and
    // the definition's text was parsed: the same bytes need no second look.
    // Only the extent is found first; any other text is parsed (for its
    // syntax errors, reported as before) before it is used.
    bool shape_checked = true;
    if (AtShape()) {
      if (const char *end = ShapeTextEnd()) {
        cur_ = shape_end = end;
        shape_checked = false;
      } else if (!ParseShapeAt(nullptr, nullptr, 0)) {
        return false;
      } else {
        shape_end = cur_;
      }
      SkipTrivia();
    }
    auto check_shape = [&] {
      if (shape_checked)
        return true;
      shape_checked = true;
      const char *resume = cur_;
      cur_ = operand_begin;
      if (!ParseShapeAt(nullptr, nullptr, 0))
        return false;
      cur_ = resume;
      return true;
    };
    const char *at = cur_;
    llvm::StringRef name;
    if (!LexName(name)) {
      if (!check_shape())
        return false;
      return Fail(at, Context() + "expected an operand name");
    }
    SkipTrivia();
    HloInstruction *operand = nullptr;
    if (Peek('(')) {
      // An operand written as an instruction in place:
      // `add(x, s32[] constant(1))`.
      if (depth + 1 >= kMaxNestingDepth)
        return Fail(at, Context() + "operands nested deeper than " +
                            llvm::Twine(kMaxNestingDepth) + " levels");
      cur_ = operand_begin;
      if (!ParseInstructionBody(scope, "", depth + 1, operand))
        return false;
    } else {
      auto it = scope.instructions.find(NameKey(name));
      if (it == scope.instructions.end() || !it->second.instruction) {
        if (!check_shape())
          return false;
        return Fail(at, Context() + "unknown operand '" + name +
                            "' (operands must be defined earlier in computation '" +
                            scope.computation->name() + "')");
      }
      operand = it->second.instruction;
      // The same bytes as the definition's parse to the same shape; other
      // text is checked, then parsed again to compare.
      llvm::StringRef written(operand_begin, shape_end ? shape_end - operand_begin : 0);
      if (shape_end && !SameText(written, it->second.shape_text) && !check_shape())
        return false;
      if (shape_end && !SameText(written, it->second.shape_text) &&
          !ShapeTextMatches(operand_begin, shape_end, operand->shape()))
        return Fail(operand_begin, Context() + "operand '" + name + "' is written as '" +
                                       llvm::StringRef(operand_begin, shape_end - operand_begin) +
                                       "' but its shape is " + operand->shape().ToString());
    }
    operands.push_back(operand);
    SkipTrivia();
    if (Peek(',')) {
      ++cur_;
      continue;
    }
    return ExpectAfter(')', "',' or ')' after operand '", name);
  }
}

bool Parser::LooksLikeInlineComputation() {
  const char *saved = cur_;
  ++cur_;
  SkipTrivia();
  bool result = ConsumeKeyword("ROOT");
  llvm::StringRef name;
  if (!result && LexName(name)) {
    SkipTrivia();
    result = Peek('=');
  }
  cur_ = saved;
  return result;
}

bool Parser::ParseComputationReference(llvm::StringRef instruction, llvm::StringRef attribute,
                                       int depth, llvm::SmallVectorImpl<Attribute> &attributes) {
  SkipHorizontalSpace();
  size_t index = attributes.size();
  // `calls={ a = ... }`: a computation written in place.
  if (Peek('{') && LooksLikeInlineComputation()) {
    if (depth + 1 >= kMaxNestingDepth)
      return Fail(cur_, "computations nested deeper than " + llvm::Twine(kMaxNestingDepth) +
                            " levels");
    const char *open = cur_++;
    auto owned = std::make_unique<HloComputation>("");
    llvm::StringRef saved_instruction = current_instruction_;
    bool ok = ParseInstructions(*owned, open, depth + 1);
    current_instruction_ = saved_instruction;
    if (!ok)
      return false;
    HloComputation *computation =
      module_->AddComputation(std::move(owned), /*names_reserved=*/true);
    inline_.push_back({computation, instruction, attribute});
    by_position_.push_back({open, computation});
    attributes.push_back(
        {HloText::View(attribute), HloText(), AttributeKind::kComputation, {computation}});
    return true;
  }
  if (Peek('{')) {
    ++cur_;
    attributes.push_back(
        {HloText::View(attribute), HloText(), AttributeKind::kComputationList, {}});
    return ParseSeparatedList('}', "',' or '}' in '" + attribute + "'", [&] {
      const char *at = cur_;
      llvm::StringRef name;
      if (!LexName(name))
        return Fail(at, Context() + "expected a computation name in '" + attribute + "'");
      pending_.push_back({nullptr, index, attributes[index].computations.size(), name, at});
      attributes[index].computations.push_back(nullptr);
      return true;
    });
  }
  const char *at = cur_;
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(at, Context() + "expected a computation name after '" + attribute + "='");
  pending_.push_back({nullptr, index, 0, name, at});
  attributes.push_back(
      {HloText::View(attribute), HloText(), AttributeKind::kComputation, {nullptr}});
  return true;
}

bool Parser::ParseControlPredecessors(Scope &scope,
                                      llvm::SmallVectorImpl<HloInstruction *> &preds) {
  SkipHorizontalSpace();
  if (!Expect('{', "'{' after 'control-predecessors='"))
    return false;
  return ParseSeparatedList('}', "',' or '}' in 'control-predecessors'", [&] {
    const char *at = cur_;
    llvm::StringRef name;
    if (!LexName(name))
      return Fail(at, Context() + "expected an instruction name in 'control-predecessors'");
    auto it = scope.instructions.find(NameKey(name));
    if (it == scope.instructions.end() || !it->second.instruction)
      return Fail(at, Context() + "unknown control predecessor '" + name + "'");
    preds.push_back(it->second.instruction);
    return true;
  });
}

bool Parser::ParseAttributes(Scope &scope, llvm::StringRef instruction, int depth,
                             llvm::SmallVectorImpl<Attribute> &attributes,
                             llvm::SmallVectorImpl<HloInstruction *> &control_predecessors) {
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (!Peek(','))
      return true;
    ++cur_;
    SkipTrivia();
    const char *at = cur_;
    llvm::StringRef name = LexWhile(IsAttributeNameChar);
    if (name.empty())
      return Fail(at, Context() + "expected an attribute name");
    if (!ExpectAfter('=', "'=' after attribute '", name))
      return false;
    ReferenceKind kind = ClassifyAttribute(name);
    SkipTrivia();
    // A quoted value of a reference-named attribute is plain text.
    if (kind != ReferenceKind::kNone && Peek('"'))
      kind = ReferenceKind::kNone;
    switch (kind) {
    case ReferenceKind::kComputation:
    case ReferenceKind::kComputationList:
      if (!ParseComputationReference(instruction, name, depth, attributes))
        return false;
      continue;
    case ReferenceKind::kControlPredecessors:
      if (!ParseControlPredecessors(scope, control_predecessors))
        return false;
      attributes.push_back(
          {HloText::View(name), HloText(), AttributeKind::kControlPredecessors, {}});
      continue;
    case ReferenceKind::kNone:
      break;
    }
    llvm::StringRef value;
    if (!ScanAttributeValue(name, value))
      return false;
    attributes.push_back(
        {HloText::View(name), HloText::View(value), AttributeKind::kText, {}});
  }
}

// What XLA's parser fills in or refuses, so the module prints as XLA prints
// it: a broadcast of a scalar without `dimensions=` has `dimensions={}`;
// `api_version=` takes only XLA's enum names (the printer leaves the
// default, API_VERSION_ORIGINAL, implicit).
bool Parser::NormalizeAttributes(HloInstruction &inst, size_t first_pending, const char *at) {
  if (inst.opcode() == HloOpcode::kBroadcast && !inst.HasAttribute("dimensions") &&
      inst.operand_count() == 1 && inst.operand(0)->shape().IsArray() &&
      inst.operand(0)->shape().rank() == 0) {
    // First, where XLA prints it (before sharding, metadata, ...). A valid
    // broadcast refers to no computation, but the verifier only refuses one
    // that does later: its references move one attribute on.
    HloInstruction::Attribute dims;
    dims.name = HloText::View("dimensions");
    dims.value = HloText::View("{}");
    inst.mutable_attributes().insert(inst.mutable_attributes().begin(), std::move(dims));
    for (size_t i = first_pending; i < pending_.size(); ++i)
      ++pending_[i].attribute;
  }
  if (const HloText *version = inst.FindAttribute("api_version")) {
    llvm::StringRef v = *version;
    // The names of XLA's CustomCallApiVersion enum (torch-neuronx dumps
    // write API_VERSION_UNSPECIFIED); no numbers, no other spelling.
    if (v != "API_VERSION_UNSPECIFIED" && v != "API_VERSION_ORIGINAL" &&
        v != "API_VERSION_STATUS_RETURNING" && v != "API_VERSION_STATUS_RETURNING_UNIFIED" &&
        v != "API_VERSION_TYPED_FFI")
      return Fail(at, Context() + "unknown api_version '" + v +
                          "'; expected API_VERSION_ORIGINAL, API_VERSION_STATUS_RETURNING, "
                          "API_VERSION_STATUS_RETURNING_UNIFIED, API_VERSION_TYPED_FFI or "
                          "API_VERSION_UNSPECIFIED");
  }
  return true;
}

// XLA lets tests leave out shapes that follow from the operands; the rules
// are ShapeInference's. Called computations written earlier in the text are
// resolved for the rule (a reduce's or call's shape comes from its callee).
bool Parser::InferShape(HloInstruction &inst, size_t first_pending, const char *at) {
  for (size_t i = first_pending; i < pending_.size(); ++i) {
    const PendingReference &ref = pending_[i];
    auto it = computations_by_name_.find(NameKey(ref.name));
    if (it != computations_by_name_.end())
      inst.mutable_attributes()[ref.attribute].computations[ref.slot] = it->second;
  }
  for (const Attribute &attribute : inst.attributes())
    for (const HloComputation *callee : attribute.computations)
      if (!callee)
        return Fail(at, Context() + "cannot infer the shape (computation '" +
                            attribute.name + "' is defined later in the text); write it");
  llvm::Expected<Shape> shape = ShapeInference::InferInstructionShape(inst);
  if (!shape)
    return Fail(at, Context() + "cannot infer the shape (" + llvm::toString(shape.takeError()) +
                        "); write it");
  *inst.mutable_shape() = std::move(*shape);
  return true;
}

bool Parser::ParseInstruction(Scope &scope, int depth) {
  const char *start = cur_;
  bool is_root = ConsumeKeyword("ROOT");
  if (is_root)
    SkipTrivia();
  const char *name_at = cur_;
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(name_at, "expected an instruction name");
  current_instruction_ = name;
  // Entered now (one lookup per name); the instruction is filled in once
  // read, and an operand naming it before then is unknown.
  HloName key = NameKey(name);
  auto [slot, inserted] = scope.instructions.try_emplace(key);
  if (!inserted)
    return Fail(name_at, "duplicate instruction name '" + name + "' in computation '" +
                             scope.computation->name() + "'");
  // Reserved in the module now, while the name is in cache; a name another
  // computation took first is renamed at the end.
  if (!module_->ReserveInstructionName(name))
    has_duplicate_names_ = true;
  SkipTrivia();
  if (!ExpectAfter('=', "'=' after instruction name '", name))
    return false;
  SkipTrivia();
  HloInstruction *inst = nullptr;
  if (!ParseInstructionBody(scope, name, depth, inst))
    return false;
  slot->second = {inst, body_shape_text_};
  scope.last = inst;
  current_instruction_ = "";
  if (!is_root)
    return true;
  if (scope.root)
    return Fail(start, "computation '" + scope.computation->name() + "' has two ROOT "
                       "instructions: '" + scope.root->name() + "' and '" + name + "'");
  scope.root = inst;
  return true;
}

// `[shape] opcode(operands), attributes` after `name =`. With an empty name
// it is an operand written in place, which takes no attributes (they would
// belong to its user) and is named once the module is read.
bool Parser::ParseInstructionBody(Scope &scope, llvm::StringRef name, int depth,
                                  HloInstruction *&result) {
  bool nested = name.empty();
  Shape shape;
  const Shape *shared_shape = nullptr;
  bool has_shape = AtShape();
  const char *shape_begin = cur_;
  if (has_shape && !ParseInstructionShape(shape, shared_shape))
    return false;
  llvm::StringRef shape_text(shape_begin, has_shape ? cur_ - shape_begin : 0);
  SkipTrivia();
  const char *opcode_at = cur_;
  HloOpcode opcode;
  std::optional<HloOpcode> wrapped;
  if (!ParseOpcode(opcode, wrapped))
    return false;
  SkipTrivia();
  if (!Expect('(', "'(' after the opcode"))
    return false;

  llvm::SmallVector<HloInstruction *, 8> operands;
  llvm::StringRef literal;
  int64_t parameter_number = -1;
  if (opcode == HloOpcode::kConstant) {
    const char *begin = cur_;
    if (!ScanBalanced(kStopAtCloser))
      return false;
    literal = llvm::StringRef(begin, cur_ - begin);
    if (!Expect(')', "')' after the constant's literal"))
      return false;
  } else if (opcode == HloOpcode::kParameter) {
    SkipTrivia();
    const char *at = cur_;
    if (!LexNonNegativeInt(parameter_number, "a parameter number"))
      return false;
    // Parameter numbers index a vector; one per input byte is a safe bound.
    if (parameter_number >= static_cast<int64_t>(buffer_.size()))
      return Fail(at, Context() + "parameter number " + llvm::Twine(parameter_number) +
                          " is out of range");
    SkipTrivia();
    if (!Expect(')', "')' after the parameter number"))
      return false;
  } else if (!ParseOperands(scope, depth, operands)) {
    return false;
  }

  // Made before its attributes are read, which go into it in place; it
  // joins the computation only once it is complete.
  std::unique_ptr<HloInstruction> owned =
      shared_shape ? HloInstruction::CreateWithSharedShape(opcode, shared_shape, operands)
                   : HloInstruction::Create(opcode, std::move(shape), operands);
  llvm::SmallVector<HloInstruction *, 2> control_predecessors;
  size_t first_pending = pending_.size();
  if (!nested && !ParseAttributes(scope, name, depth, owned->mutable_attributes(),
                                  control_predecessors))
    return false;
  owned->SetNameView(name);
  owned->set_async_wrapped_opcode(wrapped);
  if (opcode == HloOpcode::kConstant)
    owned->set_literal_text(HloText::View(literal));
  owned->set_parameter_number(parameter_number);
  if (!NormalizeAttributes(*owned, first_pending, opcode_at))
    return false;
  if (!has_shape && !InferShape(*owned, first_pending, opcode_at))
    return false;
  result = scope.computation->AddInstruction(std::move(owned));
  for (size_t i = first_pending; i < pending_.size(); ++i)
    pending_[i].instruction = result;
  for (HloInstruction *pred : control_predecessors)
    pred->AddControlDependencyTo(result);
  if (nested)
    unnamed_.push_back(result);
  body_shape_text_ = shape_text;
  return true;
}

bool Parser::Finish() {
  if (module_->computation_count() == 0)
    return Fail(cur_, "module '" + module_->name() + "' has no computations");
  for (const InlineComputation &ic : inline_) {
    std::string base = (ic.instruction + "." + ic.attribute).str();
    std::string name = base;
    for (int n = 1; computations_by_name_.count(NameKey(name)); ++n)
      name = base + "." + std::to_string(n);
    ic.computation->SetName(std::move(name));
    computations_by_name_[NameKey(ic.computation->name())] = ic.computation;
  }
  for (const PendingReference &ref : pending_) {
    auto it = computations_by_name_.find(NameKey(ref.name));
    if (it == computations_by_name_.end())
      return Fail(ref.at, "instruction '" + ref.instruction->name() +
                              "' refers to unknown computation '" + ref.name + "'");
    ref.instruction->mutable_attributes()[ref.attribute].computations[ref.slot] = it->second;
  }
  // As in XLA: without an ENTRY marker the last computation is the entry.
  module_->set_entry_computation(entry_ ? entry_ : last_top_level_);
  UniquifyInstructionNames();
  return true;
}

// XLA makes instruction names unique across the module when it builds one,
// and passes rely on it; tests often reuse `p0` in every computation. The
// first definition in the text keeps its name, later ones get `name.N`.
void Parser::UniquifyInstructionNames() {
  // Every written name is reserved in the module by now, so names given to
  // in-place operands cannot take one that appears in the text.
  for (HloInstruction *inst : unnamed_)
    inst->SetNameView(module_->UniqueInstructionName(HloOpcodeString(inst->opcode())));
  // Every written name reserved once: nothing to rename.
  if (!has_duplicate_names_)
    return;
  llvm::sort(by_position_, [](const auto &a, const auto &b) { return a.first < b.first; });
  llvm::DenseSet<HloName, HloNameKeyInfo> seen;
  seen.reserve(static_cast<unsigned>(module_->instruction_count()));
  std::vector<HloInstruction *> duplicates;
  for (const auto &[open, computation] : by_position_)
    for (HloInstruction *inst : computation->instructions())
      if (!seen.insert(NameKey(inst->name())).second)
        duplicates.push_back(inst);
  // Every parsed name is reserved in the module already, so the new names
  // cannot take one that is written somewhere in the text.
  for (HloInstruction *inst : duplicates)
    inst->SetNameView(module_->UniqueInstructionName(inst->name()));
}

bool Parser::ParseComputations() {
  // The instructions read here live in the module's slabs, not one heap
  // block each (HloInstructionArena.h).
  HloInstructionArenaScope arena(&module_->instruction_arena());
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (cur_ == end_)
      return true;
    if (abandon_ && abandon_->load(std::memory_order_relaxed))
      return Fail(cur_, "abandoned");
    if (!ParseComputation())
      return false;
  }
}

// Where the pieces of the text after the header start: the first at cur_,
// the others at lines that look like the start of a computation
// (`[ENTRY] [%]name (` or `... {`), spread evenly over the text. A guess
// may be wrong (the line may sit inside a comment or a string, or be an
// instruction written at the start of a line); TryParsePieces then finds
// that some piece does not parse and reads the module sequentially.
std::vector<const char *> Parser::PieceStarts(unsigned threads) const {
  std::vector<const char *> starts;
  size_t rest = end_ - cur_;
  size_t min_bytes = std::max<size_t>(options_.min_chunk_bytes, 1);
  // Many pieces per thread: computations differ in size, and the thread
  // that takes the last piece works alone while it reads it. At 1M
  // instructions 32 per thread cut the lone tail from about 50 ms (8 per
  // thread) to a few ms (docs/performance.md, "Threads").
  constexpr size_t kPiecesPerThread = 32;
  size_t wanted = std::min<size_t>(rest / min_bytes, size_t(threads) * kPiecesPerThread);
  if (wanted < 2)
    return starts;
  starts.push_back(cur_);
  auto looks_like_computation = [&](const char *p) {
    const char *line_end = p;
    while (line_end < end_ && *line_end != '\n')
      ++line_end;
    llvm::StringRef line(p, line_end - p);
    if (line.consume_front("ENTRY"))
      line = line.ltrim(" \t");
    line.consume_front("%");
    size_t name = 0;
    while (name < line.size() && IsNameChar(line[name]))
      ++name;
    if (name == 0)
      return false;
    line = line.drop_front(name).ltrim(" \t");
    return !line.empty() && (line[0] == '(' || line[0] == '{');
  };
  for (size_t i = 1; i < wanted; ++i) {
    const char *p = std::max(cur_ + rest / wanted * i, starts.back() + 1);
    // The first line that starts at or after p.
    while (p < end_) {
      if (p[-1] != '\n') {
        const void *eol = std::memchr(p, '\n', end_ - p);
        if (!eol)
          return starts;
        p = static_cast<const char *>(eol) + 1;
        continue;
      }
      char c = *p;
      if ((c == '%' || c == 'E' || IsNameChar(c)) && looks_like_computation(p))
        break;
      ++p;
    }
    if (p >= end_)
      break;
    starts.push_back(p);
  }
  if (starts.size() < 2)
    starts.clear();
  return starts;
}

// Parses the computations in pieces, each on its own into a module of its
// own, and joins them in text order. A piece reads exactly what the
// sequential parser reads from the same position (it starts where a
// computation would and must end at the next piece's start), so the join
// is the sequential result, provided the pieces do not clash: the state
// that crosses pieces (computation names, the ENTRY mark, instruction
// names, shapes inferred from earlier callees) is checked here or makes a
// piece fail. On any failure nothing is kept and the caller parses
// sequentially, so errors are exactly the sequential ones.
bool Parser::TryParsePieces() {
  unsigned threads = resolveThreadCount(options_.threads);
  if (threads <= 1)
    return false;
  std::vector<const char *> starts = PieceStarts(threads);
  if (starts.empty())
    return false;
  size_t count = starts.size();
  std::vector<std::unique_ptr<Parser>> pieces(count);
  std::atomic<bool> abandon{false};
  // Largest first: a large piece taken last (the entry computation of a
  // dump is often the largest and comes last) would leave the other
  // threads idle. Which thread parses which piece changes nothing else.
  auto piece_end = [&](size_t i) { return i + 1 < count ? starts[i + 1] : end_; };
  std::vector<size_t> by_size(count);
  for (size_t i = 0; i < count; ++i)
    by_size[i] = i;
  llvm::stable_sort(by_size, [&](size_t a, size_t b) {
    return piece_end(a) - starts[a] > piece_end(b) - starts[b];
  });
  parallelFor(threads, count, [&](size_t k) {
    size_t i = by_size[k];
    if (abandon.load(std::memory_order_relaxed))
      return;
    auto module = std::make_unique<HloModule>("");
    module->IndexInstructionNames();
    const char *end = piece_end(i);
    std::unique_ptr<Parser> piece(
        new Parser(std::move(module), buffer_, file_name_, starts[i], end, &abandon));
    if (!piece->ParseComputations())
      abandon.store(true, std::memory_order_relaxed);
    pieces[i] = std::move(piece);
  });
  if (abandon.load(std::memory_order_relaxed))
    return false;
  // What the sequential parser would refuse across pieces.
  NameMap<HloComputation *> by_name;
  HloComputation *entry = nullptr;
  for (const auto &piece : pieces) {
    if (piece->entry_) {
      if (entry)
        return false;
      entry = piece->entry_;
    }
    for (const auto &[name, computation] : piece->computations_by_name_)
      if (!by_name.try_emplace(name, computation).second)
        return false;
  }
  computations_by_name_ = std::move(by_name);
  entry_ = entry;
  for (const auto &piece : pieces) {
    if (!module_->AppendPiece(*piece->module_))
      has_duplicate_names_ = true;
    has_duplicate_names_ |= piece->has_duplicate_names_;
    if (piece->last_top_level_)
      last_top_level_ = piece->last_top_level_;
    pending_.insert(pending_.end(), piece->pending_.begin(), piece->pending_.end());
    inline_.insert(inline_.end(), piece->inline_.begin(), piece->inline_.end());
    unnamed_.insert(unnamed_.end(), piece->unnamed_.begin(), piece->unnamed_.end());
    by_position_.insert(by_position_.end(), piece->by_position_.begin(),
                        piece->by_position_.end());
  }
  cur_ = end_;
  if (options_.pieces_joined)
    *options_.pieces_joined = count;
  return true;
}

llvm::Expected<std::unique_ptr<HloModule>> Parser::ParseModule() {
  // The module's name table is filled as names are read (ParseInstruction).
  module_->IndexInstructionNames();
  if (!ParseHeader() || !ParseStackFrameIndex())
    return TakeError();
  if (options_.pieces_joined)
    *options_.pieces_joined = 0;
  if (TryParsePieces() || ParseComputations())
    Finish();
  if (failed_)
    return TakeError();
  return std::move(module_);
}

llvm::Expected<Shape> Parser::ParseShapeText() {
  SkipTrivia();
  Shape shape;
  if (ParseShapeAt(&shape, nullptr, 0)) {
    SkipTrivia();
    if (cur_ != end_)
      Fail(cur_, "unexpected text after the shape");
  }
  if (failed_)
    return TakeError();
  return shape;
}

} // namespace

llvm::Expected<std::unique_ptr<HloModule>> ParseHloModule(llvm::StringRef text,
                                                          llvm::StringRef file_name) {
  return ParseHloModuleOwned(text.str(), file_name);
}

llvm::Expected<std::unique_ptr<HloModule>> ParseHloModuleOwned(std::string text,
                                                               llvm::StringRef file_name) {
  return ParseHloModuleOwned(std::move(text), file_name, HloParseOptions());
}

llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef file_name) {
  return ParseHloModuleOwned(std::move(buffer), file_name, HloParseOptions());
}

llvm::Expected<std::unique_ptr<HloModule>> ParseHloModuleOwned(std::string text,
                                                               llvm::StringRef file_name,
                                                               const HloParseOptions &options) {
  // Names and texts are 32-bit views (HloText).
  if (text.size() > UINT32_MAX)
    return makeError(file_name + ": input of 4 GiB or more is not supported");
  auto module = std::make_unique<HloModule>("");
  module->set_source(std::move(text));
  return Parser(std::move(module), file_name, options).ParseModule();
}

llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef file_name,
                    const HloParseOptions &options) {
  if (buffer->getBufferSize() > UINT32_MAX)
    return makeError(file_name + ": input of 4 GiB or more is not supported");
  auto module = std::make_unique<HloModule>("");
  module->set_source(std::move(buffer));
  return Parser(std::move(module), file_name, options).ParseModule();
}

llvm::Expected<Shape> ParseShape(llvm::StringRef text) {
  return Parser(text, "<shape>").ParseShapeText();
}

std::unique_ptr<HloModule> CloneModule(const HloModule &module) {
  llvm::Expected<std::unique_ptr<HloModule>> clone =
      ParseHloModule(module.ToString(), "<clone of " + module.name() + ">");
  if (!clone)
    llvm::report_fatal_error(llvm::Twine("a printed module failed to parse back: ") +
                             llvm::toString(clone.takeError()));
  return std::move(*clone);
}

} // namespace loom::hlo
