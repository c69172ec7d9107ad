//===- HloScopeNames.h - The instruction names one computation defines ----===//
//
// Internal to lib/hlo/parser. Every operand of every instruction is looked
// up by name in the names its computation defined so far. A hash map of a
// million names (one computation of an unrolled model) is about 100 MB: a
// cache miss per definition and per operand, and its growth zeroes pages
// (docs/performance.md, "One computation of a million instructions").
// Dump names are `base.N`, and a dump numbers its instructions in text
// order, so this table keeps the definitions in a vector in text order and
// finds `base.N` by N in an array indexed by N (from the first N seen): the
// last definitions, which most operands name, stay in cache, and only the
// few bases are hashed. Definitions of the same N with other bases are
// chained. Names of another shape (no `.N`, a leading zero, an N far from
// the others) go to an ordinary hash map; lookups check both, so where a
// name went is invisible.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_PARSER_HLOSCOPENAMES_H
#define LOOM_LIB_HLO_PARSER_HLOSCOPENAMES_H

#include "loom/hlo/ir/HloNameTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <cassert>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace loom::hlo {
class HloInstruction;
}

namespace loom::hlo::hlo_parser {

class ScopeNames {
public:
  /// `origin` is the start of the text every name and shape text is a view
  /// of (the module's source, under 4 GiB): entries keep 32-bit offsets.
  explicit ScopeNames(const char *origin) : origin_(origin) {}

  /// Enters `name` with no instruction yet; `inserted` is false (and the
  /// index that of the earlier definition) when it is already there.
  std::pair<uint32_t, bool> Insert(llvm::StringRef name);
  /// The index of `name`'s definition, or kNone.
  uint32_t Find(llvm::StringRef name) const;
  static constexpr uint32_t kNone = UINT32_MAX;

  HloInstruction *instruction(uint32_t i) const { return At(i).instruction; }
  llvm::StringRef shape_text(uint32_t i) const {
    return llvm::StringRef(origin_ + At(i).shape_offset, At(i).shape_size);
  }
  llvm::StringRef name(uint32_t i) const {
    return llvm::StringRef(origin_ + At(i).name_offset, At(i).name_size);
  }
  /// The definition's instruction and its shape as written (empty when
  /// inferred), once read.
  void Define(uint32_t i, HloInstruction *instruction, llvm::StringRef shape_text) {
    Entry &e = At(i);
    e.instruction = instruction;
    e.shape_offset = shape_text.empty() ? 0 : Offset(shape_text.data());
    e.shape_size = static_cast<uint32_t>(shape_text.size());
  }
  uint32_t size() const { return size_; }
  /// Empty again; the storage stays for the next computation.
  void clear();

private:
  /// `base.N` with N written without leading zeros in at most nine digits.
  struct Split {
    llvm::StringRef base;
    uint32_t number = 0;
    bool numbered = false;
  };
  static Split SplitName(llvm::StringRef name) {
    Split split;
    size_t n = name.size(), i = n;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
      --i;
    size_t digits = n - i;
    if (digits == 0 || digits > 9 || i < 2 || name[i - 1] != '.' ||
        (digits > 1 && name[i] == '0'))
      return split;
    uint32_t number = 0;
    for (size_t k = i; k < n; ++k)
      number = number * 10 + static_cast<uint32_t>(name[k] - '0');
    split.base = name.take_front(i - 1);
    split.number = number;
    split.numbered = true;
    return split;
  }
  struct Entry {
    HloInstruction *instruction = nullptr;
    uint32_t name_offset = 0;
    uint32_t name_size = 0;
    uint32_t shape_offset = 0;
    uint32_t shape_size = 0;
    /// The base's index in `bases_`, or kNone for a name in `others_`.
    uint32_t base = kNone;
    /// The earlier entry with the same N (another base), or kNone.
    uint32_t next = kNone;
  };
  uint32_t Offset(const char *p) const {
    assert(p >= origin_ && "every name is a view of the source");
    return static_cast<uint32_t>(p - origin_);
  }
  /// The index of `base` in `bases_`, or kNone.
  uint32_t FindBase(llvm::StringRef base) const;
  uint32_t FindNumbered(uint32_t base, uint32_t number) const {
    if (base == kNone || number < first_ || number - first_ >= by_number_.size())
      return kNone;
    for (uint32_t i = by_number_[number - first_]; i != kNone; i = At(i).next)
      if (At(i).base == base)
        return i;
    return kNone;
  }
  uint32_t FindOther(llvm::StringRef name) const;
  /// The entries in chunks that never move: a vector of a million entries
  /// would copy itself while growing and hold both copies for a moment.
  static constexpr unsigned kChunkBits = 12;
  Entry &At(uint32_t i) const { return chunks_[i >> kChunkBits][i & ((1u << kChunkBits) - 1)]; }

  const char *origin_;
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  uint32_t size_ = 0;
  /// by_number_[N - first_]: the last entry named `base.N` for some base.
  std::vector<uint32_t> by_number_;
  uint32_t first_ = 0;
  /// How far by_number_ was written since the last clear.
  size_t by_number_used_ = 0;
  llvm::DenseMap<HloName, uint32_t, HloNameKeyInfo> bases_;
  llvm::DenseMap<HloName, uint32_t, HloNameKeyInfo> others_;
};

} // namespace loom::hlo::hlo_parser

#endif
