//===- HloLexer.cpp - The HLO parser's token readers ----------------------===//
//
// Trivia (whitespace, `//` and `/* */` comments), non-negative integers,
// strings with backslash escapes, and the balanced scan over (), [] and {}
// that delimits everything the IR keeps verbatim (attribute values,
// literals, layout attributes); nothing inside is interpreted. The ordinary
// bytes of a value are skipped 16 at a time (FindFirstOf). Also the opcode
// and element type tables, looked up for every instruction and shape.
//
//===----------------------------------------------------------------------===//
#include "HloParserInternal.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>

namespace loom::hlo::hlo_parser {

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

} // namespace loom::hlo::hlo_parser
