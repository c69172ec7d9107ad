//===- HloInstructionArena.h - Slabs for the instructions a parser makes --===//
//
// A million instructions from malloc cost a million heap blocks, and on a
// parser's worker thread glibc grows that thread's heap a few pages at a
// time, one mprotect(2) each: thousands of calls that take the address
// space's lock for writing while the other thread faults its pages in
// (docs/performance.md, "Threads"). While an HloInstructionArenaScope is
// alive on a thread, the instructions created there are carved from the
// slabs of its arena, which the module owns; they are destroyed as ever,
// and their memory goes back when the module goes. Instructions created
// anywhere else (by the passes, by tests) come from the heap, as do all of
// them in an AddressSanitizer build, whose checks of freed memory need
// one block per instruction.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_HLOINSTRUCTIONARENA_H
#define LOOM_HLO_IR_HLOINSTRUCTIONARENA_H

#include <cstddef>
#include <vector>

namespace loom::hlo {

class HloInstructionArena {
public:
  HloInstructionArena() = default;
  ~HloInstructionArena();
  HloInstructionArena(const HloInstructionArena &) = delete;
  HloInstructionArena &operator=(const HloInstructionArena &) = delete;

  /// `size` bytes aligned to 16, valid until the arena is destroyed.
  void *Allocate(size_t size);
  /// Takes `other`'s slabs (a parsed piece joining its module): what was
  /// carved from them stays where it is.
  void Absorb(HloInstructionArena &other);
  /// Bytes in slabs, for tests.
  size_t slab_bytes() const { return slab_bytes_; }
  /// False in an AddressSanitizer build: every instruction is then a heap
  /// block of its own.
  static bool Enabled();

private:
  std::vector<void *> slabs_;
  char *cur_ = nullptr;
  char *end_ = nullptr;
  size_t next_slab_ = 16 * 1024;
  size_t slab_bytes_ = 0;
};

/// Makes `arena` the source of the instructions created on this thread
/// until the scope ends (scopes nest; a null arena means the heap).
class HloInstructionArenaScope {
public:
  explicit HloInstructionArenaScope(HloInstructionArena *arena);
  ~HloInstructionArenaScope();
  HloInstructionArenaScope(const HloInstructionArenaScope &) = delete;
  HloInstructionArenaScope &operator=(const HloInstructionArenaScope &) = delete;

private:
  HloInstructionArena *saved_;
};

namespace detail {
/// HloInstruction's operator new and delete; the object is 8-aligned.
inline constexpr size_t kInstructionAlignment = 8;
void *AllocateInstruction(size_t size);
void FreeInstruction(void *p);
} // namespace detail

} // namespace loom::hlo

#endif
