//===- HloText.h - Text the IR keeps: a view of the source, or owned ------===//
//
// Instruction names, attribute values and literals are most of a dump's
// bytes. A parsed module keeps its source text (HloModule::source), and
// these strings are views into it: parsing copies nothing, and a module
// costs its text once. Text a pass sets, and every copy, owns its bytes,
// so a copied attribute never outlives the module it was parsed into.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_HLOTEXT_H
#define LOOM_HLO_IR_HLOTEXT_H

#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace loom::hlo {

class HloText {
public:
  HloText() = default;
  /// An owned copy.
  HloText(llvm::StringRef text) { Assign(text); }
  HloText(const std::string &text) { Assign(text); }
  HloText(const char *text) { Assign(llvm::StringRef(text)); }
  /// A view of text that outlives this object (a module's source, a module's
  /// name table, a string literal).
  static HloText View(llvm::StringRef text) {
    assert(text.size() <= UINT32_MAX && "the parser refuses larger input");
    HloText t;
    t.data_ = text.data();
    t.size_ = text.size();
    return t;
  }

  HloText(const HloText &other) { Assign(other.ref()); }
  HloText(HloText &&other) noexcept
      : data_(other.data_), size_(other.size_), owned_(other.owned_) {
    other.data_ = "";
    other.size_ = 0;
    other.owned_ = false;
  }
  HloText &operator=(const HloText &other) {
    if (this != &other) {
      HloText copy(other);
      *this = std::move(copy);
    }
    return *this;
  }
  HloText &operator=(HloText &&other) noexcept {
    if (this == &other)
      return *this;
    Release();
    data_ = other.data_;
    size_ = other.size_;
    owned_ = other.owned_;
    other.data_ = "";
    other.size_ = 0;
    other.owned_ = false;
    return *this;
  }
  HloText &operator=(llvm::StringRef text) {
    HloText copy(text);
    return *this = std::move(copy);
  }
  HloText &operator=(const std::string &text) { return *this = llvm::StringRef(text); }
  HloText &operator=(const char *text) { return *this = llvm::StringRef(text); }
  ~HloText() { Release(); }

  llvm::StringRef ref() const { return llvm::StringRef(data_, size_); }
  operator llvm::StringRef() const { return ref(); }
  /// A copy; implicit so that code written for std::string attributes reads
  /// the same. Hot paths use ref().
  operator std::string() const { return str(); }
  std::string str() const { return std::string(data_, size_); }
  const char *data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Whether the bytes belong to this object (rather than being a view).
  bool owned() const { return owned_; }
  void clear() { *this = HloText(); }

  friend bool operator==(const HloText &a, const HloText &b) { return a.ref() == b.ref(); }
  friend bool operator!=(const HloText &a, const HloText &b) { return a.ref() != b.ref(); }
  friend bool operator==(const HloText &a, llvm::StringRef b) { return a.ref() == b; }
  friend bool operator!=(const HloText &a, llvm::StringRef b) { return a.ref() != b; }
  friend bool operator==(llvm::StringRef a, const HloText &b) { return a == b.ref(); }
  friend bool operator!=(llvm::StringRef a, const HloText &b) { return a != b.ref(); }
  friend bool operator==(const HloText &a, const char *b) { return a.ref() == b; }
  friend bool operator!=(const HloText &a, const char *b) { return a.ref() != b; }
  friend bool operator==(const HloText &a, const std::string &b) { return a.ref() == b; }
  friend bool operator!=(const HloText &a, const std::string &b) { return a.ref() != b; }

private:
  void Assign(llvm::StringRef text) {
    if (text.empty())
      return;
    assert(text.size() <= UINT32_MAX && "text of 4 GiB or more");
    char *copy = new char[text.size()];
    std::memcpy(copy, text.data(), text.size());
    data_ = copy;
    size_ = text.size();
    owned_ = true;
  }
  void Release() {
    if (owned_)
      delete[] data_;
    owned_ = false;
  }

  const char *data_ = "";
  uint32_t size_ = 0;
  bool owned_ = false;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const HloText &text) {
  return os << text.ref();
}
// Concatenation for error messages. Templates, so that only an HloText
// itself matches (a string literal must not convert to one).
template <typename T, typename = std::enable_if_t<std::is_same_v<T, HloText>>>
std::string operator+(const std::string &a, const T &b) { return a + b.str(); }
template <typename T, typename = std::enable_if_t<std::is_same_v<T, HloText>>>
std::string operator+(const T &a, const std::string &b) { return a.str() + b; }
template <typename T, typename = std::enable_if_t<std::is_same_v<T, HloText>>>
std::string operator+(const char *a, const T &b) { return a + b.str(); }
template <typename T, typename = std::enable_if_t<std::is_same_v<T, HloText>>>
std::string operator+(const T &a, const char *b) { return a.str() + b; }
// A Twine cannot keep a reference to a temporary StringRef past the call,
// so a Twine + HloText is a string.
template <typename T, typename = std::enable_if_t<std::is_same_v<T, HloText>>>
std::string operator+(const llvm::Twine &a, const T &b) { return a.str() + b.str(); }
template <typename T, typename = std::enable_if_t<std::is_same_v<T, HloText>>>
std::string &operator+=(std::string &a, const T &b) { return a.append(b.data(), b.size()); }

/// A name with its hash: the key of the IR's name tables. The hash is
/// computed once, where the name is read; probes and rehashing compare
/// hashes and touch the name's bytes only when they match, which matters
/// when the bytes are scattered over a large source text.
struct HloName {
  llvm::StringRef text;
  uint32_t hash = 0;

  HloName() = default;
  explicit HloName(llvm::StringRef t) : text(t), hash(Hash(t)) {}
  HloName(llvm::StringRef t, uint32_t h) : text(t), hash(h) {}

  /// FNV-1a with a final mix: FNV's low bits, which pick the bucket, barely
  /// differ between names that differ in a last digit (`add.17`, `add.18`).
  static uint32_t Hash(llvm::StringRef name) {
    uint32_t h = 2166136261u;
    for (char c : name)
      h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
  }
};

struct HloNameInfo {
  static HloName getEmptyKey() {
    return HloName(llvm::DenseMapInfo<llvm::StringRef>::getEmptyKey(), 0);
  }
  static HloName getTombstoneKey() {
    return HloName(llvm::DenseMapInfo<llvm::StringRef>::getTombstoneKey(), 0);
  }
  static unsigned getHashValue(const HloName &name) { return name.hash; }
  static bool isEqual(const HloName &a, const HloName &b) {
    if (IsSpecial(a) || IsSpecial(b))
      return a.text.data() == b.text.data();
    return a.hash == b.hash && a.text == b.text;
  }

private:
  static bool IsSpecial(const HloName &n) {
    return n.text.data() == getEmptyKey().text.data() ||
           n.text.data() == getTombstoneKey().text.data();
  }
};

} // namespace loom::hlo

#endif
