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
#include <vector>

namespace loom::hlo {

class HloNameTable {
public:
  /// Records `name` as taken; false if it already was. The table copies
  /// what it keeps: `name` need not outlive the call.
  bool Insert(llvm::StringRef name);
  bool Contains(llvm::StringRef name) const;
  size_t size() const { return size_; }

private:
  struct Base {
    bool bare_taken = false; // the base itself, without a suffix
    uint64_t count = 0;      // names of this base with a suffix
    uint64_t in_others = 0;  // of those, how many are in `others_`
    std::vector<uint64_t> bits;
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

  llvm::DenseMap<HloName, uint32_t, HloNameInfo> base_index_;
  std::vector<Base> bases_;
  llvm::DenseSet<HloName, HloNameInfo> others_;
  llvm::BumpPtrAllocator storage_;
  size_t size_ = 0;
};

} // namespace loom::hlo

#endif
