//===- HloModule.h - A whole HLO module: header and computations ---------===//
#ifndef LOOM_HLO_IR_HLOMODULE_H
#define LOOM_HLO_IR_HLOMODULE_H

#include "loom/hlo/ir/HloComputation.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::hlo {

class HloModule {
public:
  /// A header attribute, `name=value` after `HloModule <name>,`, verbatim.
  struct HeaderAttribute {
    std::string name;
    std::string value;
  };

  explicit HloModule(std::string name) : name_(std::move(name)) {}

  const std::string &name() const { return name_; }
  void SetName(std::string name) { name_ = std::move(name); }

  // Header attributes in order; replica_count / num_partitions decoded.
  llvm::ArrayRef<HeaderAttribute> header_attributes() const { return header_; }
  std::vector<HeaderAttribute> &mutable_header_attributes() { return header_; }
  const std::string *FindHeaderAttribute(llvm::StringRef name) const;
  void SetHeaderAttribute(llvm::StringRef name, std::string value);
  int64_t replica_count() const;   // 1 when absent
  int64_t num_partitions() const;  // 1 when absent
  bool is_scheduled() const;

  /// XLA's stack frame index (the FileNames / FunctionNames / FileLocations /
  /// StackFrames tables between the header and the first computation),
  /// verbatim; empty when the module has none.
  const std::string &stack_frame_index() const { return stack_frame_index_; }
  void set_stack_frame_index(std::string text) { stack_frame_index_ = std::move(text); }

  /// Adds a computation at the end (or before the entry if `before_entry`).
  HloComputation *AddComputation(std::unique_ptr<HloComputation> computation);
  HloComputation *AddEmbeddedComputation(std::unique_ptr<HloComputation> computation);
  /// Removes a computation nobody calls.
  llvm::Error RemoveComputation(HloComputation *computation);

  HloComputation *entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation *entry) { entry_ = entry; }
  auto computations() const {
    return llvm::map_range(computations_, [](const std::unique_ptr<HloComputation> &C) {
      return C.get();
    });
  }
  int64_t computation_count() const { return static_cast<int64_t>(computations_.size()); }
  HloComputation *GetComputationWithName(llvm::StringRef name) const;
  /// Callees before callers (the order XLA's passes walk computations in).
  std::vector<HloComputation *> MakeComputationPostOrder() const;
  /// The post order without the computations that fusion instructions call:
  /// those are the bodies of already-formed fusions, which rewrite passes
  /// leave alone (XLA's MakeNonfusionComputations).
  std::vector<HloComputation *> MakeNonfusionComputations() const;
  int64_t instruction_count() const;

  /// A name not yet used by any instruction of the module: `prefix` itself
  /// if free, else `prefix.N`.
  std::string UniqueInstructionName(llvm::StringRef prefix);
  /// Records a name as taken (the parser calls this for parsed names).
  void ReserveInstructionName(llvm::StringRef name);

  /// The module in XLA's dump syntax.
  std::string ToString() const;
  /// The same text, streamed to `os` one computation at a time.
  void Print(llvm::raw_ostream &os) const;

private:
  friend class HloComputation;
  std::string name_;
  std::vector<HeaderAttribute> header_;
  std::string stack_frame_index_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation *entry_ = nullptr;
  llvm::StringMap<int64_t> name_counters_;
};

} // namespace loom::hlo

#endif
