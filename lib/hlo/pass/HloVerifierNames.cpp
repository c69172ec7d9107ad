//===- HloVerifierNames.cpp - The HLO verifier's name tables --------------===//
//
// The rules that names are unique: computation names among the module's
// computations, and instruction names across the whole module (XLA's rule;
// passes look instructions up by name module-wide). The instruction names
// are split into parts by their hash (HloNameTable::Hash64, the hash the
// IR's name table and the parser key names by), each part filled in module
// order on its own thread, so the parts together find exactly what one
// table over the module finds (docs/hlo-verifier.md, "Threads").
//
//===----------------------------------------------------------------------===//
#include "HloVerifierInternal.h"

#include "loom/hlo/ir/HloNameTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace loom::hlo::hlo_verifier {
namespace {

/// The instruction names of one part of a module, for the rule that they
/// are unique (a name belongs to part PartOf(hash), so the parts are
/// independent and may be filled on different threads). An open-addressing
/// table (a DenseMap of StringRef compares the text of every name a probe
/// passes, a cache miss each): a slot holds 32 bits of the name's hash and
/// the instruction's position in the module (the walks keep the
/// instructions and their hashes), so the text is compared only when those
/// bits agree, which is a real duplicate or one probe in 2^32.
///
/// At a million names the table is far larger than the caches and each
/// insertion is a miss to memory; Prefetch() starts loading a slot, so a
/// caller that prefetches a few names ahead of their insertion waits for
/// the misses together rather than one after another.
class NameTable {
public:
  /// Where an instruction is: its computation's position in the module and
  /// its own in the computation; from the position in the module (`index`).
  using Locate = llvm::function_ref<std::pair<uint32_t, uint32_t>(uint32_t index)>;
  using InstructionAt = llvm::function_ref<const HloInstruction *(uint32_t index)>;
  using HashAt = llvm::function_ref<uint64_t(uint32_t index)>;

  explicit NameTable(size_t expected) {
    Rehash(llvm::PowerOf2Ceil(std::max<size_t>(16, 2 * expected)), nullptr);
  }

  /// The part of `parts` a name of hash `hash` belongs to: from the bits
  /// the slot index does not use.
  static unsigned PartOf(uint64_t hash, unsigned parts) {
    return static_cast<unsigned>(((hash >> 32) * parts) >> 32);
  }

  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

  /// Records the instruction of position `index` in the module, whose name
  /// `inst_at(index)->name()` hashes to `hash`, and returns -1; or returns
  /// the position of the instruction that had the name first.
  int64_t Insert(uint32_t index, uint64_t hash, InstructionAt inst_at, HashAt hash_at) {
    if (2 * (count_ + 1) > slots_.size())
      Rehash(2 * slots_.size(), hash_at);
    uint32_t tag = static_cast<uint32_t>(hash >> 32);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      uint64_t slot = slots_[i];
      if (slot == 0) {
        // A position fits 32 bits: a module of 2^32 instructions would
        // need terabytes.
        slots_[i] = (uint64_t(tag) << 32) | (uint64_t(index) + 1);
        ++count_;
        return -1;
      }
      if (static_cast<uint32_t>(slot >> 32) != tag)
        continue;
      uint32_t earlier = static_cast<uint32_t>(slot) - 1;
      if (inst_at(earlier)->name() == inst_at(index)->name())
        return earlier;
    }
  }

private:
  void Rehash(size_t slot_count, HashAt hash_at) {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(slot_count, 0);
    mask_ = slot_count - 1;
    for (uint64_t slot : old) {
      if (!slot)
        continue;
      uint64_t hash = hash_at(static_cast<uint32_t>(slot) - 1);
      size_t i = hash & mask_;
      while (slots_[i])
        i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<uint64_t> slots_; // 0: empty
  size_t mask_ = 0;
  size_t count_ = 0;
};

} // namespace

std::vector<char> FindDuplicateComputationNames(llvm::ArrayRef<const HloComputation *> comps) {
  const size_t n = comps.size();
  std::vector<char> name_taken(n, 0);
  llvm::DenseMap<llvm::StringRef, const HloComputation *> names;
  names.reserve(static_cast<unsigned>(n));
  for (size_t o = 0; o < n; ++o)
    name_taken[o] = !names.try_emplace(comps[o]->name(), comps[o]).second;
  return name_taken;
}

std::vector<NameProblem> FindDuplicateNames(llvm::ArrayRef<WalkResult> results,
                                            llvm::ArrayRef<uint32_t> starts, unsigned part,
                                            unsigned parts) {
  auto locate = [&](uint32_t index) {
    uint32_t o = static_cast<uint32_t>(llvm::upper_bound(starts, index) - starts.begin()) - 1;
    return std::make_pair(o, index - starts[o]);
  };
  auto inst_at = [&](uint32_t index) {
    auto [o, p] = locate(index);
    return results[o].Instruction(p);
  };
  auto hash_at = [&](uint32_t index) {
    auto [o, p] = locate(index);
    return results[o].name_hashes[p];
  };
  std::vector<NameProblem> found;
  size_t count = starts.back();
  // A part holds about count / parts names; the slack covers the hash's
  // unevenness without doubling the table (a power of two at least twice
  // the names: 2^21 slots, 16 MiB, for a million names in one part).
  NameTable table(count / parts + count / (64 * parts) + 16);
  // Slots are prefetched kAhead names ahead of their insertion.
  constexpr size_t kAhead = 16;
  for (size_t o = 0; o < results.size(); ++o) {
    llvm::ArrayRef<uint64_t> hashes = results[o].name_hashes;
    llvm::ArrayRef<uint64_t> next =
        o + 1 < results.size() ? llvm::ArrayRef<uint64_t>(results[o + 1].name_hashes)
                               : llvm::ArrayRef<uint64_t>();
    for (size_t p = 0; p < hashes.size(); ++p) {
      // The one kAhead further, in this piece or the next (a piece
      // shorter than kAhead leaves a few unprefetched).
      size_t ahead = p + kAhead;
      if (ahead < hashes.size()) {
        if (NameTable::PartOf(hashes[ahead], parts) == part)
          table.Prefetch(hashes[ahead]);
      } else if (ahead - hashes.size() < next.size()) {
        if (NameTable::PartOf(next[ahead - hashes.size()], parts) == part)
          table.Prefetch(next[ahead - hashes.size()]);
      }
      uint64_t hash = hashes[p];
      if (NameTable::PartOf(hash, parts) != part)
        continue;
      int64_t earlier = table.Insert(starts[o] + static_cast<uint32_t>(p), hash, inst_at, hash_at);
      if (earlier >= 0)
        found.push_back({static_cast<uint32_t>(o), static_cast<uint32_t>(p),
                         locate(static_cast<uint32_t>(earlier)).first});
    }
  }
  return found;
}

} // namespace loom::hlo::hlo_verifier
