//===- HloProtoFields.h - Attribute values that are XLA messages -*- C++ -*-===//
//
// Private to lib/hlo/proto. The attributes whose values are XLA messages
// (replica groups, shardings, metadata, frontend attributes, windows,
// convolution labels, padding, slices, source-target pairs) each have an
// encoder, which refuses (sets nothing) what its field cannot hold, and a
// derivation, which spells the field as XLA prints it
// (HloProtoFields.cpp). They and the instruction attributes
// (HloProtoAttributes.cpp) and the module header (HloProtoHeader.cpp) read
// values with Scan and the small parsers of HloProtoText.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_PROTO_HLOPROTOFIELDS_H
#define LOOM_LIB_HLO_PROTO_HLOPROTOFIELDS_H

#include "HloProtoInternal.h"

#include "loom/hlo/ir/HloAttributes.h"

#include "llvm/ADT/StringExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::hlo::proto_internal {

using xla::HloInstructionProto;

// A cursor over an attribute value. Every read either consumes what it
// read or fails; callers give up on the first failure.
struct Scan {
  llvm::StringRef s;
  // White space and `/*...*/` comments (XLA's `/*index=5*/` markers).
  void Ws() {
    while (true) {
      s = s.ltrim(" \t\r\n");
      if (!s.startswith("/*"))
        return;
      size_t end = s.find("*/", 2);
      if (end == llvm::StringRef::npos)
        return;
      s = s.drop_front(end + 2);
    }
  }
  bool Eat(char c) {
    Ws();
    return s.consume_front(llvm::StringRef(&c, 1));
  }
  bool EatWord(llvm::StringRef w) {
    Ws();
    return s.consume_front(w);
  }
  bool AtEnd() {
    Ws();
    return s.empty();
  }
  bool Int(int64_t &out) {
    Ws();
    size_t n = 0;
    if (n < s.size() && (s[n] == '-' || s[n] == '+'))
      ++n;
    while (n < s.size() && llvm::isDigit(s[n]))
      ++n;
    if (n == 0 || (n == 1 && !llvm::isDigit(s[0])))
      return false;
    if (s.substr(0, n).getAsInteger(10, out))
      return false;
    s = s.drop_front(n);
    return true;
  }
  // Integers separated by `sep` up to `close` (consumed).
  bool IntsUntil(char close, std::vector<int64_t> &out, char sep = ',') {
    out.clear();
    return ListUntil(
        close,
        [&] {
          int64_t v;
          if (!Int(v))
            return false;
          out.push_back(v);
          return true;
        },
        sep);
  }
  // Items separated by `sep` up to `close` (consumed), none allowed; `item`
  // reads one and says whether it could.
  template <typename ReadItem> bool ListUntil(char close, ReadItem item, char sep = ',') {
    if (Eat(close))
      return true;
    while (true) {
      if (!item())
        return false;
      if (Eat(close))
        return true;
      if (!Eat(sep))
        return false;
    }
  }
  // After an item of a `{a, b, ...}` list read item by item: a ',' (eaten)
  // or the '}' that ends the list (left for the caller, which also allows a
  // trailing ',').
  bool EndItem() {
    Ws();
    return s.startswith("}") || Eat(',');
  }
  // [A-Za-z0-9_.-]+
  bool Word(llvm::StringRef &out) {
    Ws();
    size_t n = 0;
    while (n < s.size() &&
           (llvm::isAlnum(s[n]) || s[n] == '_' || s[n] == '.' || s[n] == '-'))
      ++n;
    if (n == 0)
      return false;
    out = s.substr(0, n);
    s = s.drop_front(n);
    return true;
  }
  // A quoted string with backslash escapes, unescaped, for one of XLA's
  // `string` fields: it must be UTF-8, since protobuf refuses to read a
  // string field that is not, while the text form may quote any byte.
  // Refused, the attribute stays verbatim in loom's `bytes` fields.
  bool Quoted(std::string &out) { return QuotedBytes(out) && IsUtf8(out); }
  // The same for a `bytes` field (backend_config, ...): any bytes.
  bool QuotedBytes(std::string &out) {
    Ws();
    if (!s.startswith("\""))
      return false;
    size_t i = 1;
    while (i < s.size() && s[i] != '"')
      i += s[i] == '\\' ? 2 : 1;
    if (i >= s.size())
      return false;
    std::optional<std::string> u = UnquoteString(s.substr(0, i + 1));
    if (!u)
      return false;
    out = std::move(*u);
    s = s.drop_front(i + 1);
    return true;
  }
};

// ---- Small values (HloProtoText.cpp) ----------------------------------------

std::optional<std::vector<int64_t>> Ints(llvm::StringRef text);

std::optional<int64_t> OneInt(llvm::StringRef text);

std::optional<bool> Bool(llvm::StringRef text);

// The unescaped contents of a quoted value, for a `string` field (UTF-8
// only, Scan::Quoted) or, with `any_bytes`, a `bytes` field.
std::optional<std::string> QuotedValue(llvm::StringRef text, bool any_bytes = false);

std::string Join(llvm::ArrayRef<int64_t> v, llvm::StringRef sep);

template <typename Repeated> void AddAll(Repeated *field, llvm::ArrayRef<int64_t> v) {
  for (int64_t x : v)
    field->Add(x);
}

// ---- Message fields (HloProtoFields.cpp) ------------------------------------

bool EncodeReplicaGroups(llvm::StringRef text, HloInstructionProto *out);

std::optional<std::string> DeriveReplicaGroups(const HloInstructionProto &in);

// One sharding `{...}` (the braces included).
bool ParseSharding(Scan &c, xla::OpSharding *out, int depth);

void DeriveSharding(const xla::OpSharding &s, std::string &out, int depth);

bool EncodeMetadata(llvm::StringRef text, xla::OpMetadata *out);

std::optional<std::string> DeriveMetadata(const xla::OpMetadata &m);

bool EncodeFrontendAttributes(llvm::StringRef text, xla::FrontendAttributes *out);

std::optional<std::string> DeriveFrontendAttributes(const xla::FrontendAttributes &f);

bool EncodeWindow(llvm::StringRef text, xla::Window *out);

std::string DeriveWindow(const xla::Window &w);

bool EncodeDimLabels(llvm::StringRef text, xla::ConvolutionDimensionNumbers *out);

std::string DeriveDimLabels(const xla::ConvolutionDimensionNumbers &d);

bool EncodePadding(llvm::StringRef text, xla::PaddingConfig *out);

std::string DerivePadding(const xla::PaddingConfig &p);

bool EncodeSlice(llvm::StringRef text, HloInstructionProto *out);

std::string DeriveSlice(const HloInstructionProto &in);

// `{{0,1},{1,2}}`.
bool EncodePairs(llvm::StringRef text, HloInstructionProto *out);

std::string DerivePairs(const HloInstructionProto &in);

} // namespace loom::hlo::proto_internal

#endif
