//===- HloNameTable.h - The set of instruction names a module has taken ---===//
//
// XLA names instructions `base.N` (`add.17`, `fusion.3`) and new ones get
// the first free `prefix.N`, so a module must answer "is this name taken?"
// for every name it hands out. A hash set of a million names is a cache
// miss per name, in the parser and again in every pass that names
// something. Dump names share a few bases, so the table keeps, per base,
// whether the bare base is taken and a bitset of the N taken with it: a
// name costs a bit, and the bases fit in cache. Names that do not have that
// shape (a suffix with a leading zero, or a sparse huge N) go to an
// ordinary hash set; membership checks both, so the choice is invisible.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_HLONAMETABLE_H
#define LOOM_HLO_IR_HLONAMETABLE_H

#include "loom/hlo/ir/HloText.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace loom::hlo {

/// HloNameInfo for keys hashed with HloNameTable::Hash: the hash compared
/// first and the bytes inline (names are short; a call to memcmp per probe
/// costs more than the compare).
struct HloNameKeyInfo : HloNameInfo {
  static bool isEqual(const HloName &a, const HloName &b) {
    if (a.hash != b.hash || a.text.size() != b.text.size())
      return false;
    if (a.text.data() == b.text.data())
      return true;
    if (IsEmptyOrTombstone(a) || IsEmptyOrTombstone(b))
      return false;
    return SameBytes(a.text.data(), b.text.data(), a.text.size());
  }
  static bool SameBytes(const char *a, const char *b, size_t n) {
    if (n > 32)
      return std::memcmp(a, b, n) == 0;
    // Shape texts (`f32[128,256]{1,0}`) are mostly 17 to 32 bytes: four
    // loads, no call.
    if (n > 16)
      return Load<uint64_t>(a) == Load<uint64_t>(b) &&
             Load<uint64_t>(a + 8) == Load<uint64_t>(b + 8) &&
             Load<uint64_t>(a + n - 16) == Load<uint64_t>(b + n - 16) &&
             Load<uint64_t>(a + n - 8) == Load<uint64_t>(b + n - 8);
    if (n >= 8)
      return Load<uint64_t>(a) == Load<uint64_t>(b) &&
             Load<uint64_t>(a + n - 8) == Load<uint64_t>(b + n - 8);
    if (n >= 4)
      return Load<uint32_t>(a) == Load<uint32_t>(b) &&
             Load<uint32_t>(a + n - 4) == Load<uint32_t>(b + n - 4);
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i])
        return false;
    return true;
  }

private:
  template <typename T> static T Load(const char *p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  static bool IsEmptyOrTombstone(const HloName &n) {
    return n.text.data() == getEmptyKey().text.data() ||
           n.text.data() == getTombstoneKey().text.data();
  }
};

class HloNameTable {
public:
  /// The hash the table keys names by (HloName's, eight bytes a step
  /// rather than one): names, shape texts and opcodes are hashed for every
  /// instruction parsed. Tables that use it use it for all their keys.
  static uint32_t Hash(llvm::StringRef text) { return static_cast<uint32_t>(Hash64(text)); }
  /// The same hash before it is cut to 32 bits, for tables that want more
  /// bits than a slot index (the verifier's name rule keeps the upper 32
  /// bits as a tag and splits the names into parts by them).
  static uint64_t Hash64(llvm::StringRef text) {
    const char *p = text.data();
    size_t n = text.size();
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (; n > 8; p += 8, n -= 8) {
      h = (h ^ Load64(p)) * 0xff51afd7ed558ccdull;
      h ^= h >> 29;
    }
    // The last 1 to 8 bytes, in loads that stay inside the text.
    uint64_t word = 0;
    if (text.size() >= 8)
      word = Load64(text.data() + text.size() - 8);
    else if (n >= 4)
      word = Load32(p) | uint64_t(Load32(p + n - 4)) << 32;
    else if (n > 0)
      word = uint64_t(static_cast<unsigned char>(p[0])) |
             uint64_t(static_cast<unsigned char>(p[n / 2])) << 8 |
             uint64_t(static_cast<unsigned char>(p[n - 1])) << 16;
    h = (h ^ word) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    return h;
  }
  /// `text` with that hash.
  static HloName Key(llvm::StringRef text) { return HloName(text, Hash(text)); }

  /// Records `name` as taken; false if it already was. The table copies
  /// what it keeps: `name` need not outlive the call.
  bool Insert(llvm::StringRef name);
  bool Contains(llvm::StringRef name) const;
  /// Inserts every name of `other`; false if some name was in both. Per
  /// base the bitsets are or-ed, so this costs a word per 64 names rather
  /// than a lookup per name.
  bool Merge(const HloNameTable &other);
  size_t size() const { return size_; }

private:
  static uint64_t Load64(const char *p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static uint32_t Load32(const char *p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  struct Base {
    bool bare_taken = false; // the base itself, without a suffix
    uint64_t count = 0;      // names of this base with a suffix
    uint64_t in_others = 0;  // of those, how many are in `others_`
    /// Bit N % 64 of bits[N / 64 - first_word] is `base.N`: the bitset
    /// starts at the first word used, so a table of the names of a part of
    /// a module (HloModule::AppendPiece) is as small as the part.
    uint64_t first_word = 0;
    std::vector<uint64_t> bits;
    bool Test(uint64_t n) const {
      uint64_t w = n / 64 - first_word;
      return n / 64 >= first_word && w < bits.size() && (bits[w] >> (n % 64) & 1);
    }
  };
  /// `base.N` with N written without leading zeros and small enough: the
  /// bitset form. Otherwise `suffix` is -1 and the whole name is the base
  /// (bare) or it goes to `others_`.
  struct Split {
    llvm::StringRef base;
    int64_t suffix = -1;
    bool bare = false;
  };
  static Split SplitName(llvm::StringRef name);
  llvm::StringRef Save(llvm::StringRef text);
  bool InOthers(const Base &base, llvm::StringRef name) const;
  /// The entry of `base`, made if missing.
  Base &BaseOf(HloName base);
  /// Makes `base`'s bitset cover words [lo, hi).
  static void Cover(Base &base, uint64_t lo, uint64_t hi);

  llvm::DenseMap<HloName, uint32_t, HloNameKeyInfo> base_index_;
  std::vector<Base> bases_;
  llvm::DenseSet<HloName, HloNameKeyInfo> others_;
  llvm::BumpPtrAllocator storage_;
  size_t size_ = 0;
};

} // namespace loom::hlo

#endif
