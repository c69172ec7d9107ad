//===- HloComputation.h - A named graph of instructions with one root ----===//
#ifndef LOOM_HLO_IR_HLOCOMPUTATION_H
#define LOOM_HLO_IR_HLOCOMPUTATION_H

#include "loom/hlo/ir/HloInstruction.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/iterator_range.h"

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace loom::hlo {

/// Walks a computation's instructions in text order. It reads a vector of
/// pointers by index (slots of removed instructions are null and skipped), so
/// a walk over a large computation loads independent addresses rather than
/// chasing list links, and instructions added during a walk are visited, as
/// they were when the walk followed a list.
class HloInstructionIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = HloInstruction *;
  using difference_type = std::ptrdiff_t;
  using pointer = HloInstruction *const *;
  using reference = HloInstruction *;

  HloInstructionIterator() = default;
  HloInstructionIterator(const std::vector<std::unique_ptr<HloInstruction>> *order,
                         size_t index)
      : order_(order), index_(index) {
    Skip();
  }
  HloInstruction *operator*() const { return (*order_)[index_].get(); }
  HloInstructionIterator &operator++() {
    ++index_;
    Skip();
    return *this;
  }
  HloInstructionIterator operator++(int) {
    HloInstructionIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const HloInstructionIterator &o) const {
    bool end = AtEnd(), o_end = o.AtEnd();
    return end == o_end && (end || index_ == o.index_);
  }
  bool operator!=(const HloInstructionIterator &o) const { return !(*this == o); }

private:
  bool AtEnd() const { return !order_ || index_ >= order_->size(); }
  void Skip() {
    while (order_ && index_ < order_->size() && !(*order_)[index_])
      ++index_;
  }
  const std::vector<std::unique_ptr<HloInstruction>> *order_ = nullptr;
  size_t index_ = 0;
};

class HloComputation {
public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  ~HloComputation();

  const std::string &name() const { return name_; }
  void SetName(std::string name) { name_ = std::move(name); }
  HloModule *parent() const { return parent_; }
  bool IsEntryComputation() const;

  /// Adopts `instruction`, links it into its operands' user lists and gives
  /// it a module-unique name (derived from its opcode when it has none). A
  /// null operand is left for HloInstruction::SetMissingOperand.
  /// New instructions go at the end; printing and post order still place
  /// them before their users.
  HloInstruction *AddInstruction(std::unique_ptr<HloInstruction> instruction);
  /// Moves every instruction of `from` to the end of this computation, in
  /// order, and leaves `from` empty: the parser joins the pieces of one
  /// computation read on several threads.
  void AppendInstructionsOf(HloComputation &from);
  /// Where MoveInstructions puts one instruction: right before `before` in
  /// text order, or at the end when `before` is null.
  struct Placement {
    HloInstruction *instruction;
    const HloInstruction *before;
  };
  /// Moves instructions of this computation to new places in text order in
  /// one pass over the slots from the first one that changes: each goes
  /// right before its `before` (which must not move itself), those with the
  /// same `before` in the order given; every other instruction keeps its
  /// order. Removed slots from there on are dropped, so text_order_slot
  /// changes: no walk over the computation may be running. A pass that adds
  /// many instructions places them in one call rather than one shift of the
  /// text order per instruction.
  void MoveInstructions(llvm::ArrayRef<Placement> placements);
  /// Removes an instruction that has no users, is not the root and has no
  /// control successors.
  llvm::Error RemoveInstruction(HloInstruction *instruction);
  /// Removes `instruction` if dead, then every operand that became dead,
  /// transitively. Parameters and instructions with side effects stay.
  /// `on_remove`, when given, sees each instruction just before it is
  /// destroyed, so a caller holding pointers to pending work can drop them.
  void RemoveInstructionAndUnusedOperands(
      HloInstruction *instruction,
      llvm::function_ref<void(HloInstruction *)> on_remove = nullptr);
  /// Removes every instruction whose value reaches neither the root nor a
  /// side effect. Returns whether anything was removed.
  bool RemoveDeadInstructions();

  HloInstruction *root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction *root) { root_ = root; }

  /// Instructions in text order (as parsed, new ones appended).
  llvm::iterator_range<HloInstructionIterator> instructions() const {
    return {HloInstructionIterator(&order_, 0),
            HloInstructionIterator(&order_, static_cast<size_t>(-1))};
  }
  int64_t instruction_count() const { return live_count_; }
  /// The slots of the text order (HloInstruction::text_order_slot): as many
  /// as instructions were added since the last compaction; a removed
  /// instruction's slot holds null.
  size_t slot_count() const { return order_.size(); }
  const HloInstruction *instruction_in_slot(size_t slot) const { return order_[slot].get(); }
  /// Operands (and control predecessors) before users; otherwise text order
  /// is kept. Instructions unreachable from the root are included.
  std::vector<HloInstruction *> MakeInstructionPostOrder() const;
  /// Whether text order is such a post order already (every operand and
  /// control predecessor local and earlier); the answer is kept until an
  /// edit may change it.
  bool TextOrderIsPostOrder() const;
  HloInstruction *GetInstructionWithName(llvm::StringRef name) const;

  /// Parameters indexed by parameter number; nullptr where a number is
  /// missing in a module that was not verified.
  const std::vector<HloInstruction *> &parameter_instructions() const { return params_; }
  HloInstruction *parameter_instruction(int64_t i) const { return params_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(params_.size()); }

  /// Text after the closing brace, e.g. `, execution_thread="host"`.
  const std::string &trailer() const { return trailer_; }
  void set_trailer(std::string text) { trailer_ = std::move(text); }

  /// The id an HloModuleProto gave the computation, -1 when it has none
  /// (as HloInstruction::unique_id).
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  /// The computation in XLA's dump syntax.
  std::string ToString() const;

private:
  friend class HloModule;
  friend class HloInstruction;
  void RegisterParameter(HloInstruction *param);
  /// An edit that may put a user before one of its operands in text order.
  void ForgetPostOrder() { text_order_is_post_order_ = kUnknown; }

  std::string name_;
  // The instructions in text order, owned; null where one was removed (so a
  // walk may remove instructions), compacted by RemoveDeadInstructions.
  std::vector<std::unique_ptr<HloInstruction>> order_;
  int64_t live_count_ = 0;
  // Whether text order is a post order (every operand and control
  // predecessor earlier): true of an empty computation, kept across the
  // edits that cannot break it (so true of parsed ones without control
  // edges), so the printer and the passes do not each walk every operand
  // edge to find out.
  enum : int8_t { kUnknown = -1, kNo = 0, kYes = 1 };
  mutable int8_t text_order_is_post_order_ = kYes;
  HloInstruction *root_ = nullptr;
  std::vector<HloInstruction *> params_;
  std::string trailer_;
  int64_t unique_id_ = -1;
  HloModule *parent_ = nullptr;
};

/// Whether an instruction must stay even without users (outfeed, send,
/// custom-call with side effect, ...).
bool HasSideEffect(const HloInstruction &instruction);

} // namespace loom::hlo

#endif
