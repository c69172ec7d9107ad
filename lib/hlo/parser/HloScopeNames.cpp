//===- HloScopeNames.cpp - The instruction names one computation defines --===//

#include "HloScopeNames.h"

#include <algorithm>

namespace loom::hlo::hlo_parser {

uint32_t ScopeNames::FindBase(llvm::StringRef base) const {
  auto it = bases_.find(HloNameTable::Key(base));
  return it == bases_.end() ? kNone : it->second;
}

uint32_t ScopeNames::FindOther(llvm::StringRef name) const {
  if (others_.empty())
    return kNone;
  auto it = others_.find(HloNameTable::Key(name));
  return it == others_.end() ? kNone : it->second;
}

uint32_t ScopeNames::Find(llvm::StringRef name) const {
  Split split = SplitName(name);
  if (split.numbered) {
    uint32_t found = FindNumbered(FindBase(split.base), split.number);
    if (found != kNone)
      return found;
  }
  return FindOther(name);
}

std::pair<uint32_t, bool> ScopeNames::Insert(llvm::StringRef name) {
  Split split = SplitName(name);
  HloName base_key;
  uint32_t base = kNone;
  if (split.numbered) {
    base_key = HloNameTable::Key(split.base);
    auto it = bases_.find(base_key);
    if (it != bases_.end()) {
      base = it->second;
      uint32_t found = FindNumbered(base, split.number);
      if (found != kNone)
        return {found, false};
    }
  }
  if (uint32_t found = FindOther(name); found != kNone)
    return {found, false};

  uint32_t index = size_;
  if ((index >> kChunkBits) == chunks_.size())
    chunks_.push_back(std::make_unique<Entry[]>(size_t(1) << kChunkBits));
  ++size_;
  Entry &entry = At(index);
  entry = Entry();
  entry.name_offset = Offset(name.data());
  entry.name_size = static_cast<uint32_t>(name.size());
  if (split.numbered) {
    if (by_number_used_ == 0)
      first_ = split.number;
    // The array may hold a few slots per name and a little more: a lone
    // `x.99999999` after `x.1` goes to the hash map rather than taking
    // 400 MB.
    uint64_t slot = uint64_t(split.number) - first_;
    if (split.number >= first_ && slot < 4 * uint64_t(size_) + 4096) {
      if (slot >= by_number_.size())
        by_number_.resize(std::max<size_t>(slot + 1, by_number_.size() * 2), kNone);
      by_number_used_ = std::max<size_t>(by_number_used_, slot + 1);
      if (base == kNone)
        base = bases_.try_emplace(base_key, static_cast<uint32_t>(bases_.size())).first->second;
      entry.base = base;
      entry.next = by_number_[slot];
      by_number_[slot] = index;
      return {index, true};
    }
  }
  others_.try_emplace(HloNameTable::Key(name), index);
  return {index, true};
}

void ScopeNames::clear() {
  std::fill(by_number_.begin(), by_number_.begin() + by_number_used_, kNone);
  by_number_used_ = 0;
  size_ = 0;
  bases_.clear();
  others_.clear();
}

} // namespace loom::hlo::hlo_parser
