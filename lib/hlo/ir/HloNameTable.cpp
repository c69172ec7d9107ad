#include "loom/hlo/ir/HloNameTable.h"

#include <cstring>

namespace loom::hlo {

// Every string has one split, so a name is found wherever it was put:
// `add.17` is base `add` with 17; `add`, `add.017`, `add.` and `a.b` are
// bare bases. Suffixes of more than nine digits are bare too.
HloNameTable::Split HloNameTable::SplitName(llvm::StringRef name) {
  Split split;
  size_t dot = name.rfind('.');
  llvm::StringRef digits =
      dot == llvm::StringRef::npos ? llvm::StringRef() : name.substr(dot + 1);
  bool canonical = !digits.empty() && digits.size() <= 9 &&
                   (digits.size() == 1 || digits[0] != '0');
  for (char c : digits)
    canonical &= c >= '0' && c <= '9';
  if (!canonical) {
    split.base = name;
    split.bare = true;
    return split;
  }
  int64_t n = 0;
  for (char c : digits)
    n = n * 10 + (c - '0');
  split.base = name.substr(0, dot);
  split.suffix = n;
  return split;
}

llvm::StringRef HloNameTable::Save(llvm::StringRef text) {
  if (text.empty())
    return text;
  char *copy = storage_.Allocate<char>(text.size());
  std::memcpy(copy, text.data(), text.size());
  return llvm::StringRef(copy, text.size());
}

// Only a base with names in the hash set pays for the lookup there.
bool HloNameTable::InOthers(const Base &base, llvm::StringRef name) const {
  return base.in_others != 0 && others_.contains(HloName(name));
}

bool HloNameTable::Contains(llvm::StringRef name) const {
  Split split = SplitName(name);
  auto it = base_index_.find(HloName(split.base));
  // Every name of the hash set has its base entered.
  if (it == base_index_.end())
    return false;
  const Base &base = bases_[it->second];
  if (split.bare)
    return base.bare_taken;
  uint64_t n = static_cast<uint64_t>(split.suffix);
  if (n / 64 < base.bits.size() && (base.bits[n / 64] >> (n % 64) & 1))
    return true;
  return InOthers(base, name);
}

bool HloNameTable::Insert(llvm::StringRef name) {
  // One split and one base lookup: this runs once per parsed name.
  Split split = SplitName(name);
  HloName key(split.base);
  auto it = base_index_.find(key);
  if (it == base_index_.end()) {
    it = base_index_.try_emplace(HloName(Save(split.base), key.hash),
                                 static_cast<uint32_t>(bases_.size()))
             .first;
    bases_.emplace_back();
  }
  Base &base = bases_[it->second];
  if (split.bare) {
    if (base.bare_taken)
      return false;
    base.bare_taken = true;
    ++size_;
    return true;
  }
  uint64_t n = static_cast<uint64_t>(split.suffix);
  bool in_bits = n / 64 < base.bits.size();
  if ((in_bits && (base.bits[n / 64] >> (n % 64) & 1)) || InOthers(base, name))
    return false;
  ++size_;
  ++base.count;
  // The bitset may grow to 64 bits per name of the base plus a little: a
  // lone `x.99999999` goes to the hash set rather than taking 12 MB.
  if (!in_bits && n >= 64 * base.count + 512) {
    others_.insert(HloName(Save(name)));
    ++base.in_others;
    return true;
  }
  if (!in_bits)
    base.bits.resize(n / 64 + 1);
  base.bits[n / 64] |= uint64_t(1) << (n % 64);
  return true;
}

} // namespace loom::hlo
