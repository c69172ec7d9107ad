#include "loom/hlo/ir/HloInstructionArena.h"

#include "llvm/Support/MemAlloc.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace loom::hlo {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUseArenas = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUseArenas = false;
#else
constexpr bool kUseArenas = true;
#endif
#else
constexpr bool kUseArenas = true;
#endif

thread_local HloInstructionArena *current_arena = nullptr;

// Every instruction is preceded by 8 bytes saying where it came from, so
// that operator delete needs no lookup. Blocks are 16-aligned, so the
// instruction is 8-aligned, all it needs (HloInstruction.cpp checks).
constexpr size_t kHeader = 8;
constexpr uint64_t kFromHeap = 0x68656170; // "heap"
constexpr uint64_t kFromArena = 0x6172656e; // "aren"
// Slabs start small (a test's module touches a few KiB) and double up to
// 4 MiB, so a large module maps a few hundred slabs.
constexpr size_t kMaxSlab = 4 << 20;

size_t AlignUp(size_t n) { return (n + 15) & ~size_t(15); }

// A full-size slab is filled to its end, so it is asked for in huge pages
// where Linux has them on request: one page fault per 2 MiB rather than
// 512 (page faults were about a tenth of a one-thread parse of a million
// instructions, docs/performance.md). Smaller slabs, often the last and
// partly used of a module, stay in small pages so that what is not used is
// not resident.
constexpr size_t kHugePage = 2 << 20;
void *AllocateSlab(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes == kMaxSlab) {
    void *slab = nullptr;
    if (posix_memalign(&slab, kHugePage, bytes) != 0)
      llvm::report_bad_alloc_error("slab allocation failed");
    madvise(slab, bytes, MADV_HUGEPAGE); // advice only: failure changes nothing
    return slab;
  }
#endif
  return llvm::safe_malloc(bytes);
}
static_assert(kHeader >= sizeof(uint64_t));

} // namespace

bool HloInstructionArena::Enabled() { return kUseArenas; }

HloInstructionArena::~HloInstructionArena() {
  for (void *slab : slabs_)
    std::free(slab);
}

void *HloInstructionArena::Allocate(size_t size) {
  size = AlignUp(size);
  if (static_cast<size_t>(end_ - cur_) < size) {
    size_t bytes = std::max(next_slab_, size);
    next_slab_ = std::min(next_slab_ * 2, kMaxSlab);
    void *slab = AllocateSlab(bytes);
    slabs_.push_back(slab);
    slab_bytes_ += bytes;
    cur_ = static_cast<char *>(slab);
    end_ = cur_ + bytes;
  }
  void *p = cur_;
  cur_ += size;
  return p;
}

void HloInstructionArena::Absorb(HloInstructionArena &other) {
  slabs_.insert(slabs_.end(), other.slabs_.begin(), other.slabs_.end());
  slab_bytes_ += other.slab_bytes_;
  other.slabs_.clear();
  other.slab_bytes_ = 0;
  other.cur_ = other.end_ = nullptr;
}

HloInstructionArenaScope::HloInstructionArenaScope(HloInstructionArena *arena)
    : saved_(current_arena) {
  current_arena = arena;
}

HloInstructionArenaScope::~HloInstructionArenaScope() { current_arena = saved_; }

namespace detail {

void *AllocateInstruction(size_t size) {
  char *block;
  uint64_t tag;
  if (kUseArenas && current_arena) {
    block = static_cast<char *>(current_arena->Allocate(size + kHeader));
    tag = kFromArena;
  } else {
    block = static_cast<char *>(::operator new(size + kHeader));
    tag = kFromHeap;
  }
  std::memcpy(block, &tag, sizeof tag);
  return block + kHeader;
}

void FreeInstruction(void *p) {
  if (!p)
    return;
  char *block = static_cast<char *>(p) - kHeader;
  uint64_t tag;
  std::memcpy(&tag, block, sizeof tag);
  // An arena's memory goes back with its slabs.
  if (tag == kFromHeap)
    ::operator delete(block);
}

} // namespace detail

} // namespace loom::hlo
