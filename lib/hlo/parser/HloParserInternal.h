//===- HloParserInternal.h - The parts of the HLO text parser -------------===//
//
// Internal to lib/hlo/parser. One Parser reads one text with a cursor:
// hand-written token readers and recursive descent, no regex and no token
// objects (docs/hlo-text-format.md). Its members are defined in the file of
// their part:
//
//   HloLexer.cpp        tokens: trivia (space and comments), numbers,
//                       strings, the balanced scan that delimits attribute
//                       values, and the opcode and element type tables
//   HloShapeParser.cpp  shapes: arrays, tuples, buffers and layouts, the
//                       shapes shared between instructions by their text,
//                       and ParseShape
//   HloParser.cpp       the module: header, stack frame index,
//                       computations, instructions, operands, attributes,
//                       the shapes inferred, the references resolved and the
//                       names made unique at the end, and the entry points
//   HloParsePieces.cpp  the threaded piece driver: a large module cut into
//                       pieces at computations or at instructions, parsed
//                       on several threads and joined in text order, or
//                       given back to the sequential parser when any piece
//                       fails
//
// The character classes and the token readers called between almost every
// two tokens are inline here: the parser is a hot path (docs/performance.md).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_PARSER_HLOPARSERINTERNAL_H
#define LOOM_LIB_HLO_PARSER_HLOPARSERINTERNAL_H

#include "loom/hlo/parser/HloParser.h"

#include "HloScopeNames.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/ir/HloNameTable.h"
#include "loom/hlo/ir/HloOpcode.h"
#include "loom/hlo/ir/Shape.h"
#include "loom/support/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/Error.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace loom::hlo::hlo_parser {

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
inline constexpr std::array<uint8_t, 256> kCharClasses = [] {
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

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsLowerAlnum(char c) { return HasClass(c, kClassLowerAlnum); }
inline bool IsAlnum(char c) { return HasClass(c, kClassAlnum); }
inline bool IsNameChar(char c) { return HasClass(c, kClassName); }
inline bool IsAttributeNameChar(char c) { return HasClass(c, kClassAttributeName); }
inline bool IsHorizontalSpace(char c) { return c == ' ' || c == '\t'; }
inline bool IsSpace(char c) { return HasClass(c, kClassSpace); }

/// `text` without trailing whitespace (StringRef::rtrim builds a table per
/// call).
inline llvm::StringRef TrimTrailingSpace(llvm::StringRef text) {
  size_t n = text.size();
  while (n > 0 && IsSpace(text[n - 1]))
    --n;
  return text.take_front(n);
}

/// The first byte in [p, end) that is one of `Chars`, or end: 16 bytes a
/// step where SSE2 is there (every x86-64), a byte a step elsewhere.
template <char... Chars> inline const char *FindFirstOf(const char *p, const char *end) {
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

inline char CloserOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

/// Stop conditions of a balanced scan, checked only outside all brackets.
enum StopAt : unsigned {
  kStopAtCloser = 0,
  kStopAtComma = 1,
  kStopAtNewline = 2,
  kStopAtComment = 4,
};

/// Every key of the parser's tables, hashed as the IR's name table hashes.
inline HloName NameKey(llvm::StringRef text) { return HloNameTable::Key(text); }

/// Names are looked up once per operand.
inline bool SameText(llvm::StringRef a, llvm::StringRef b) {
  return a.size() == b.size() && HloNameKeyInfo::SameBytes(a.data(), b.data(), a.size());
}

template <typename T> using NameMap = llvm::DenseMap<HloName, T, HloNameKeyInfo>;

/// The opcode spelled `text` (also its old spellings); HloLexer.cpp.
std::optional<HloOpcode> LookupOpcode(llvm::StringRef text);
/// The element type spelled `text`; HloLexer.cpp.
std::optional<PrimitiveType> LookupPrimitiveType(llvm::StringRef text);

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
    /// definition (empty when inferred): one of the parser's reused tables
    /// (Parser::scope_maps_), empty at the start of the computation.
    ScopeNames &instructions;
    HloInstruction *root = nullptr;
    HloInstruction *last = nullptr;
    /// The instructions of a piece that starts inside a computation: an
    /// operand not defined in the piece is left for the join (CrossOperand).
    bool defer_unknown = false;
  };
  /// An operand a piece that starts inside a computation does not define:
  /// an instruction of an earlier piece of the same computation, found when
  /// the pieces are joined (or nowhere: then the sequential parser reports
  /// it).
  struct CrossOperand {
    HloInstruction *user = nullptr;
    uint32_t operand = 0;
    llvm::StringRef name;
    /// The operand's shape as written; empty when none is.
    llvm::StringRef written_shape;
    /// Set when the join has found it.
    HloInstruction *definition = nullptr;
  };
  /// A computation a piece leaves open at its end, or the instructions a
  /// piece that starts inside a computation holds until the computation's
  /// '}' (or its end).
  struct OpenPart {
    std::unique_ptr<HloComputation> computation;
    /// The part's names (from Parser::scope_maps_).
    std::unique_ptr<ScopeNames> names;
    HloInstruction *root = nullptr;
    HloInstruction *last = nullptr;
    /// The start of the computation, its '{' and ENTRY mark (the part that
    /// opens it only).
    const char *at = nullptr;
    const char *open = nullptr;
    bool is_entry = false;
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

  // ---- Tokens (HloLexer.cpp) ---------------------------------------------
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
  /// `keyword` not followed by a name character.
  bool ConsumeKeyword(llvm::StringRef keyword) {
    size_t n = keyword.size();
    if (static_cast<size_t>(end_ - cur_) < n ||
        !HloNameKeyInfo::SameBytes(cur_, keyword.data(), n))
      return false;
    if (cur_ + n < end_ && IsNameChar(cur_[n]))
      return false;
    cur_ += n;
    return true;
  }
  /// A name, `%` before it dropped.
  bool LexName(llvm::StringRef &name) {
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

  // ---- Shapes (HloShapeParser.cpp) ---------------------------------------
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

  // ---- Module structure (HloParser.cpp; the pieces in HloParsePieces.cpp) -
  bool ParseHeader();
  bool ParseStackFrameIndex();
  bool ParseComputation();
  bool ParseSignature();
  bool ParseInstructions(HloComputation &computation, const char *open, int depth,
                         bool head = false);
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
  bool ParseComputations(bool inside = false);
  bool ParsePieceHead();
  bool TryParsePieces();
  bool TryParsePieces(unsigned threads, llvm::ArrayRef<const char *> starts,
                      llvm::ArrayRef<uint8_t> inside);
  bool ResolveCrossOperands(llvm::ArrayRef<const ScopeNames *> earlier);
  std::vector<const char *> PieceStarts(unsigned threads, bool instructions,
                                        std::vector<uint8_t> &inside) const;

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
  std::vector<std::unique_ptr<ScopeNames>> scope_maps_;
  size_t open_scopes_ = 0;

  HloParseOptions options_;
  /// Set when another piece failed (TryParsePieces); null outside a piece.
  const std::atomic<bool> *abandon_ = nullptr;

  // ---- A piece that starts or ends inside a computation (HloParsePieces.cpp)
  /// ParseInstructions stopped at the piece's end between two instructions
  /// of a top-level computation: the next piece goes on with it.
  bool stopped_open_ = false;
  /// The instructions from the piece's start to the computation's '}'.
  OpenPart head_;
  /// Whether the head ends at a '}' (then `head_closed_` is a placeholder in
  /// the piece's module, where the whole computation goes at the join).
  bool head_ends_ = false;
  HloComputation *head_closed_ = nullptr;
  /// The computation open at the piece's end.
  OpenPart tail_;
  std::vector<CrossOperand> cross_;
};

} // namespace loom::hlo::hlo_parser

#endif
