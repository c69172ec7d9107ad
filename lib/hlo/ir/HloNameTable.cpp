#include "loom/hlo/ir/HloNameTable.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
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
  return base.in_others != 0 && others_.contains(Key(name));
}

bool HloNameTable::Contains(llvm::StringRef name) const {
  Split split = SplitName(name);
  auto it = base_index_.find(Key(split.base));
  // Every name of the hash set has its base entered.
  if (it == base_index_.end())
    return false;
  const Base &base = bases_[it->second];
  if (split.bare)
    return base.bare_taken;
  if (base.Test(static_cast<uint64_t>(split.suffix)))
    return true;
  return InOthers(base, name);
}

HloNameTable::Base &HloNameTable::BaseOf(HloName key) {
  auto it = base_index_.find(key);
  if (it == base_index_.end()) {
    it = base_index_.try_emplace(HloName(Save(key.text), key.hash),
                                 static_cast<uint32_t>(bases_.size()))
             .first;
    bases_.emplace_back();
  }
  return bases_[it->second];
}

bool HloNameTable::Insert(llvm::StringRef name) {
  // One split and one base lookup: this runs once per parsed name.
  Split split = SplitName(name);
  Base &base = BaseOf(Key(split.base));
  if (split.bare) {
    if (base.bare_taken)
      return false;
    base.bare_taken = true;
    ++size_;
    return true;
  }
  uint64_t n = static_cast<uint64_t>(split.suffix);
  uint64_t w = n / 64;
  bool in_bits = !base.bits.empty() && w >= base.first_word &&
                 w - base.first_word < base.bits.size();
  if ((in_bits && (base.bits[w - base.first_word] >> (n % 64) & 1)) || InOthers(base, name))
    return false;
  ++size_;
  ++base.count;
  if (!in_bits) {
    uint64_t lo = base.bits.empty() ? w : std::min(base.first_word, w);
    uint64_t hi = base.bits.empty() ? w + 1 : std::max(base.first_word + base.bits.size(), w + 1);
    // The bitset may span 64 bits per name of the base plus a little: a
    // lone `x.99999999` after `x.1` goes to the hash set rather than
    // taking 12 MB.
    if ((hi - lo) * 64 > 64 * base.count + 576) {
      others_.insert(Key(Save(name)));
      ++base.in_others;
      return true;
    }
    Cover(base, lo, hi);
  }
  base.bits[w - base.first_word] |= uint64_t(1) << (n % 64);
  return true;
}

void HloNameTable::Cover(Base &base, uint64_t lo, uint64_t hi) {
  if (base.bits.empty()) {
    base.first_word = lo;
    base.bits.assign(hi - lo, 0);
    return;
  }
  if (lo < base.first_word) {
    base.bits.insert(base.bits.begin(), base.first_word - lo, 0);
    base.first_word = lo;
  }
  if (hi - base.first_word > base.bits.size())
    base.bits.resize(hi - base.first_word);
}

bool HloNameTable::Merge(const HloNameTable &other) {
  bool distinct = true;
  for (const auto &entry : other.base_index_) {
    const Base &from = other.bases_[entry.second];
    Base &to = BaseOf(entry.first);
    if (from.bare_taken) {
      if (to.bare_taken)
        distinct = false;
      else
        ++size_;
      to.bare_taken = true;
    }
    if (from.bits.empty())
      continue;
    uint64_t from_end = from.first_word + from.bits.size();
    uint64_t lo = to.bits.empty() ? from.first_word : std::min(to.first_word, from.first_word);
    uint64_t hi = to.bits.empty() ? from_end : std::max(to.first_word + to.bits.size(), from_end);
    // A name of `other`'s bitset may be in this table's hash set, and two
    // far apart bitsets would make a sparse one: those few bases take the
    // names one at a time.
    if (to.in_others != 0 || (hi - lo) * 64 > 64 * (to.count + from.count) + 576) {
      llvm::SmallString<64> name;
      for (size_t w = 0; w < from.bits.size(); ++w)
        for (uint64_t word = from.bits[w]; word != 0; word &= word - 1) {
          uint64_t n = (from.first_word + w) * 64 + llvm::countTrailingZeros(word);
          name.clear();
          (entry.first.text + "." + llvm::Twine(n)).toVector(name);
          distinct &= Insert(name);
        }
      continue;
    }
    Cover(to, lo, hi);
    uint64_t added = 0;
    uint64_t *into = to.bits.data() + (from.first_word - to.first_word);
    for (size_t w = 0; w < from.bits.size(); ++w) {
      uint64_t word = from.bits[w];
      uint64_t both = into[w] & word;
      if (both != 0)
        distinct = false;
      added += static_cast<uint64_t>(llvm::countPopulation(word & ~both));
      into[w] |= word;
    }
    to.count += added;
    size_ += added;
  }
  for (const HloName &name : other.others_)
    distinct &= Insert(name.text);
  return distinct;
}

} // namespace loom::hlo
