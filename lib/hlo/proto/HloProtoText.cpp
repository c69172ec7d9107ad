//===- HloProtoText.cpp - Small attribute values ----------------------------===//
//
// The pieces of attribute text every part of lib/hlo/proto reads and writes:
// quoted strings as XLA prints them, and the small values
// (an integer list, one integer, a bool, a quoted string) read with Scan
// (HloProtoFields.h).
//
//===----------------------------------------------------------------------===//

#include "HloProtoFields.h"

#include "llvm/Support/ConvertUTF.h"

#include <cstdio>

namespace loom::hlo::proto_internal {

// ---- Text helpers --------------------------------------------------------------

std::string Quote(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char ch : text) {
    switch (ch) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    // XLA escapes strings with absl::CEscape: single quotes too, and
    // control characters as three octal digits.
    case '\'': out += "\\'"; break;
    default:
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(static_cast<unsigned char>(ch)));
        out += buf;
      } else {
        out += ch;
      }
      break;
    }
  }
  out += '"';
  return out;
}

std::optional<std::vector<int64_t>> Ints(llvm::StringRef text) {
  Scan c{text};
  std::vector<int64_t> v;
  if (!c.Eat('{') || !c.IntsUntil('}', v) || !c.AtEnd())
    return std::nullopt;
  return v;
}

std::optional<int64_t> OneInt(llvm::StringRef text) {
  Scan c{text};
  int64_t v;
  if (!c.Int(v) || !c.AtEnd())
    return std::nullopt;
  return v;
}

std::optional<bool> Bool(llvm::StringRef text) {
  text = text.trim();
  if (text == "true")
    return true;
  if (text == "false")
    return false;
  return std::nullopt;
}

bool IsUtf8(llvm::StringRef s) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(s.data());
  return llvm::isLegalUTF8String(&begin, begin + s.size());
}

std::optional<std::string> QuotedValue(llvm::StringRef text, bool any_bytes) {
  Scan c{text};
  std::string out;
  if (!(any_bytes ? c.QuotedBytes(out) : c.Quoted(out)) || !c.AtEnd())
    return std::nullopt;
  return out;
}

std::string Join(llvm::ArrayRef<int64_t> v, llvm::StringRef sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i)
      out += sep;
    out += std::to_string(v[i]);
  }
  return out;
}

std::optional<std::vector<int64_t>> ParseInts(llvm::StringRef text) { return Ints(text); }

} // namespace loom::hlo::proto_internal
