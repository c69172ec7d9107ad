//===- HloComputation.h - A named graph of instructions with one root ----===//
#ifndef LOOM_HLO_IR_HLOCOMPUTATION_H
#define LOOM_HLO_IR_HLOCOMPUTATION_H

#include "loom/hlo/ir/HloInstruction.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/iterator_range.h"

#include <list>
#include <memory>
#include <string>
#include <vector>

namespace loom::hlo {

class HloComputation {
public:
  using InstructionList = std::list<std::unique_ptr<HloInstruction>>;

  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  ~HloComputation();

  const std::string &name() const { return name_; }
  void SetName(std::string name) { name_ = std::move(name); }
  HloModule *parent() const { return parent_; }
  bool IsEntryComputation() const;

  /// Adopts `instruction`, links it into its operands' user lists and gives
  /// it a module-unique name (derived from its opcode when it has none).
  /// New instructions go at the end; printing and post order still place
  /// them before their users.
  HloInstruction *AddInstruction(std::unique_ptr<HloInstruction> instruction);
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
  auto instructions() const {
    return llvm::map_range(instructions_, [](const std::unique_ptr<HloInstruction> &I) {
      return I.get();
    });
  }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  /// Operands (and control predecessors) before users; otherwise text order
  /// is kept. Instructions unreachable from the root are included.
  std::vector<HloInstruction *> MakeInstructionPostOrder() const;
  HloInstruction *GetInstructionWithName(llvm::StringRef name) const;

  /// Parameters indexed by parameter number; nullptr where a number is
  /// missing in a module that was not verified.
  const std::vector<HloInstruction *> &parameter_instructions() const { return params_; }
  HloInstruction *parameter_instruction(int64_t i) const { return params_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(params_.size()); }

  /// Text after the closing brace, e.g. `, execution_thread="host"`.
  const std::string &trailer() const { return trailer_; }
  void set_trailer(std::string text) { trailer_ = std::move(text); }

  /// The computation in XLA's dump syntax.
  std::string ToString() const;

private:
  friend class HloModule;
  void RegisterParameter(HloInstruction *param);

  std::string name_;
  InstructionList instructions_;
  HloInstruction *root_ = nullptr;
  std::vector<HloInstruction *> params_;
  std::string trailer_;
  HloModule *parent_ = nullptr;
};

/// Whether an instruction must stay even without users (outfeed, send,
/// custom-call with side effect, ...).
bool HasSideEffect(const HloInstruction &instruction);

} // namespace loom::hlo

#endif
