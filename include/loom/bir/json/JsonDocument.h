//===- JsonDocument.h - A JSON text as a flat array of nodes ----*- C++ -*-===//
//
// The BIR loader reads documents of tens of megabytes. A tree of
// llvm::json::Value costs a heap object per string, array and object and
// deep copies while the arrays grow; this parser instead makes one pass over
// the text and records each value as an 8-byte node in document order,
// pointing back into the text for strings and numbers. A container's node
// knows where its subtree ends, so siblings are one step apart. The parser
// is a loop with an explicit stack, not a recursion, so no nesting overflows
// the machine stack.
//
// Syntax is llvm::json's (RFC 8259 plus what llvm::json::parse accepts,
// e.g. numbers as strtoll and strtod read them: "+1", "01", "1."), errors
// carry its messages at the same byte offset, and the accessors of JsonRef
// answer as llvm::json::Value's getAs* do, so a loader written against
// either reads a document the same way. One deliberate difference: LLVM 14
// clamps an integer outside int64_t to its range; here one between 2^63
// and 2^64 - 1 is kept exactly (as later LLVMs do) and any other is read as
// a double. An object that repeats a key keeps the last value, as
// llvm::json does.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_JSON_JSONDOCUMENT_H
#define LOOM_BIR_JSON_JSONDOCUMENT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::bir {

class JsonDocument;

/// One value of a JsonDocument, or no value (an absent field); cheap to copy.
class JsonRef {
public:
  JsonRef() = default;

  /// False for "no value".
  explicit operator bool() const { return Doc != nullptr; }

  bool isNull() const;
  bool isObject() const;
  bool isArray() const;

  std::optional<bool> getAsBoolean() const;
  /// As llvm::json::Value: an integer that fits, from 0 to 2^64-1.
  std::optional<uint64_t> getAsUINT64() const;
  /// As llvm::json::Value: an integer that fits int64_t, or a double with no
  /// fraction within its range.
  std::optional<int64_t> getAsInteger() const;
  std::optional<double> getAsNumber() const;
  std::optional<llvm::StringRef> getAsString() const;

  // Arrays (and objects, whose nodes alternate key and value).
  /// The first element, or no value; next() steps to the next one.
  JsonRef firstElement() const;
  /// The number of elements of an array, of members of an object (a
  /// repeated key counts each time); counted, so linear.
  size_t size() const;

  // Objects.
  /// The value of Key (the last one if it repeats), or no value.
  JsonRef get(llvm::StringRef Key) const;
  /// Calls F(llvm::StringRef Key, JsonRef Value) on each member in
  /// document order.
  template <typename Fn> void forEachMember(Fn F) const;

  /// The value after this one (and its subtree) inside the same container,
  /// or no value after the last.
  JsonRef next() const;

private:
  friend class JsonDocument;
  JsonRef(const JsonDocument *Doc, uint32_t Index, uint32_t End)
      : Doc(Doc), Index(Index), ParentEnd(End) {}

  const JsonDocument *Doc = nullptr;
  uint32_t Index = 0;
  /// One past the last node of the enclosing container: where next() stops.
  uint32_t ParentEnd = 0;
};

class JsonDocument {
public:
  JsonDocument() = default;
  // Text may point into Owned.
  JsonDocument(const JsonDocument &) = delete;
  JsonDocument &operator=(const JsonDocument &) = delete;

  struct SyntaxError {
    /// The byte of the text where llvm::json::parse would stop.
    size_t Offset;
    /// llvm::json's message, e.g. "Expected object key".
    std::string Message;
  };

  /// Parses Text, which must outlive the document.
  std::optional<SyntaxError> parse(llvm::StringRef Text);
  /// Copies V, with its exact number types, for loaders given a Value.
  void assign(const llvm::json::Value &V);

  /// The top-level value; no value before a successful parse.
  JsonRef root() const {
    return Nodes.empty()
               ? JsonRef()
               : JsonRef(this, 0, static_cast<uint32_t>(Nodes.size()));
  }

private:
  friend class JsonRef;

  enum Kind : uint8_t {
    Null,
    False,
    True,
    Int,    // fits int64_t
    UInt,   // fits uint64_t only
    Double, // any other number
    String, // text from Text (escaped strings: from Decoded)
    EscapedString,
    Array,
    Object,
  };

  /// Strings and numbers: Length bytes at Offset of the text (of Decoded
  /// for an EscapedString). Arrays and objects: End is one past the last
  /// node of their subtree; an object's nodes alternate key and value.
  struct Node {
    uint32_t K : 4;
    uint32_t Length : 28;
    uint32_t Data;
  };
  static_assert(sizeof(Node) == 8);

  llvm::StringRef text(const Node &N) const {
    return (N.K == EscapedString ? llvm::StringRef(Decoded) : Text)
        .substr(N.Data, N.Length);
  }
  uint32_t end(uint32_t Index) const {
    const Node &N = Nodes[Index];
    return N.K == Array || N.K == Object ? N.Data : Index + 1;
  }

  class Parser;
  class Copier;

  /// What the nodes point into: the parsed text, or Owned.
  llvm::StringRef Text;
  /// The text assign() writes its strings and numbers to.
  std::string Owned;
  /// The contents of strings with escapes, decoded.
  std::string Decoded;
  std::vector<Node> Nodes;
};

template <typename Fn> void JsonRef::forEachMember(Fn F) const {
  if (!isObject())
    return;
  for (JsonRef Key = firstElement(); Key; Key = Key.next().next())
    F(*Key.getAsString(), Key.next());
}

} // namespace loom::bir

#endif
