//===- HloModule.h - A whole HLO module: header and computations ---------===//
#ifndef LOOM_HLO_IR_HLOMODULE_H
#define LOOM_HLO_IR_HLOMODULE_H

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstructionArena.h"
#include "loom/hlo/ir/HloNameTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
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

  /// Adds a computation at the end. `names_reserved`: the caller has
  /// reserved every instruction name already (the parser does, while each
  /// name is in cache).
  HloComputation *AddComputation(std::unique_ptr<HloComputation> computation,
                                 bool names_reserved = false);
  HloComputation *AddEmbeddedComputation(std::unique_ptr<HloComputation> computation);

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
  /// if free, else `prefix.N`. It is reserved, and the text lives as long
  /// as the module.
  llvm::StringRef UniqueInstructionName(llvm::StringRef prefix);
  /// Records a name as taken; false if it already was. The empty name is
  /// never recorded.
  bool ReserveInstructionName(llvm::StringRef name);
  /// Reserves the name of every instruction of the module, if not done yet;
  /// returns false if two instructions share a name. Naming calls do this
  /// on first use, so a module that is only read never builds the table.
  bool IndexInstructionNames();

  /// The text the module was parsed from: instruction names and attribute
  /// texts are views into it (HloText.h). Empty for a module built in code.
  llvm::StringRef source() const { return source_; }
  /// Takes `text` as the source; only before anything views it.
  void set_source(std::string text) {
    source_text_ = std::move(text);
    source_buffer_.reset();
    source_ = source_text_;
  }
  /// The same with a buffer (a mapped file: no copy of the input).
  void set_source(std::unique_ptr<llvm::MemoryBuffer> buffer) {
    source_text_.clear();
    source_buffer_ = std::move(buffer);
    source_ = source_buffer_->getBuffer();
  }

  /// Keeps `shape` for instructions to share (CreateWithSharedShape); it
  /// lives as long as the module. The parser keeps one per shape text.
  const Shape *AddSharedShape(Shape shape) {
    shared_shapes_.push_back(std::move(shape));
    return &shared_shapes_.back();
  }

  /// Moves every computation of `piece` to the end of this module, in
  /// order, with the shapes they share; the instruction names `piece` has
  /// reserved become reserved here. `piece` is a part of this module's
  /// source parsed on its own (the parser reads a large module in pieces
  /// on several threads) and is left empty. Returns false if some name was
  /// reserved in both.
  bool AppendPiece(HloModule &piece);
  /// The instruction names reserved so far (IndexInstructionNames).
  const HloNameTable &instruction_names() const { return names_; }
  /// Puts `with` where `old` is in the module's order and returns `old`.
  std::unique_ptr<HloComputation> ReplaceComputation(HloComputation *old,
                                                     std::unique_ptr<HloComputation> with);

  /// Where the parser puts this module's instructions (HloInstructionArena.h);
  /// it lives as long as the module.
  HloInstructionArena &instruction_arena() { return instruction_arena_; }

  /// The module in XLA's dump syntax.
  std::string ToString() const;
  /// The same text, streamed to `os` in pieces on this thread.
  void Print(llvm::raw_ostream &os) const { Print(os, 1); }
  /// The same bytes, formatted in pieces on up to `threads` threads (0: the
  /// machine's cores) while the caller writes the finished ones to `os` in
  /// order (docs/performance.md, "Threads").
  void Print(llvm::raw_ostream &os, unsigned threads) const;

private:
  friend class HloComputation;
  bool InSource(llvm::StringRef text) const;
  /// `name` as a key that lives as long as the module.
  llvm::StringRef StableName(llvm::StringRef name);

  // What instructions view (source text, shared shapes, handed-out names)
  // is declared before the computations, so it outlives them.
  std::string source_text_;
  std::unique_ptr<llvm::MemoryBuffer> source_buffer_;
  llvm::StringRef source_; // one of the two
  std::deque<Shape> shared_shapes_; // stable addresses
  std::vector<std::unique_ptr<std::deque<Shape>>> piece_shapes_; // AppendPiece
  HloInstructionArena instruction_arena_; // the parsed instructions' memory
  llvm::BumpPtrAllocator name_storage_;
  std::string name_;
  std::vector<HeaderAttribute> header_;
  std::string stack_frame_index_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation *entry_ = nullptr;
  // Every name taken, and per prefix given to UniqueInstructionName the
  // last N tried for `prefix.N`, so names are handed out in linear time.
  HloNameTable names_;
  llvm::StringMap<int64_t> prefix_counters_;
  bool names_indexed_ = false;
};

} // namespace loom::hlo

#endif
