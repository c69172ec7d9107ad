//===- HloInstruction.h - One instruction of an HLO computation -----------===//
//
// Mirrors xla::HloInstruction. An instruction keeps every attribute it was
// parsed with, in order, as text; typed accessors (HloAttributes.h)
// decode the ones passes and the interpreter read, and setters re-encode them.
// Names and texts are HloText: views into the parsed module's source, owned
// copies once a pass sets them (HloText.h).
// That is what lets a module print back exactly as XLA wrote it even when it
// carries attributes loom has never heard of.
//
// Two kinds of attribute refer to other IR objects and are therefore kept as
// pointers and printed from them: computation references (to_apply=, calls=,
// condition=, body=, branch_computations=, ...) and control-predecessors=.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_HLOINSTRUCTION_H
#define LOOM_HLO_IR_HLOINSTRUCTION_H

#include "loom/hlo/ir/HloInstructionArena.h"
#include "loom/hlo/ir/HloOpcode.h"
#include "loom/hlo/ir/HloText.h"
#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom::hlo {

class HloComputation;
class HloModule;

class HloInstruction {
public:
  /// How an attribute's value is stored.
  enum class AttributeKind : uint8_t {
    kText,                 // verbatim text after '='
    kComputation,          // `name=%comp`: one computation
    kComputationList,      // `name={%a, %b}`: braced computation list
    kControlPredecessors,  // `control-predecessors={%a, %b}`
  };
  struct Attribute {
    HloText name;
    HloText value; // for kText only
    AttributeKind kind = AttributeKind::kText;
    llvm::SmallVector<HloComputation *, 1> computations; // for the computation kinds
  };
  using AttributeList = llvm::SmallVector<Attribute, 1>;

  /// A detached instruction; HloComputation::AddInstruction adopts it. Users
  /// of the operands are updated when it is added to a computation.
  static std::unique_ptr<HloInstruction>
  Create(HloOpcode opcode, Shape shape, llvm::ArrayRef<HloInstruction *> operands,
         llvm::StringRef name = "");
  /// The same with a shape that outlives the instruction and may be shared
  /// by others (a module's shape pool, HloModule::AddSharedShape).
  static std::unique_ptr<HloInstruction>
  CreateWithSharedShape(HloOpcode opcode, const Shape *shape,
                        llvm::ArrayRef<HloInstruction *> operands);

  ~HloInstruction();
  /// From the thread's HloInstructionArena while the parser reads a module,
  /// otherwise from the heap (HloInstructionArena.h).
  static void *operator new(size_t size) { return detail::AllocateInstruction(size); }
  static void operator delete(void *p) { detail::FreeInstruction(p); }
  HloInstruction(const HloInstruction &) = delete;
  HloInstruction &operator=(const HloInstruction &) = delete;

  HloOpcode opcode() const { return opcode_; }
  /// For XLA's async sugar (`%x = f32[] negate-start(...)`): the wrapped
  /// opcode. opcode() is then kAsyncStart/kAsyncUpdate/kAsyncDone.
  std::optional<HloOpcode> async_wrapped_opcode() const { return async_wrapped_; }
  void set_async_wrapped_opcode(std::optional<HloOpcode> op) { async_wrapped_ = op; }
  /// The opcode as printed: "add", "negate-start", ...
  std::string OpcodeText() const;

  llvm::StringRef name() const { return name_; }
  /// An owned copy of `name`.
  void SetName(llvm::StringRef name) { name_ = name; }
  /// `name` is text that outlives the instruction (the module's source or
  /// name table); no copy is made.
  void SetNameView(llvm::StringRef name) { name_ = HloText::View(name); }

  const Shape &shape() const { return *shape_; }
  /// The shape to change: a shared shape is copied first (copy on write),
  /// so a reference from shape() taken before may then see the old value.
  Shape *mutable_shape();

  // Operands and users. users() holds each user once, in the order they
  // started using this instruction.
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  /// Operand i, read-only; mutable_operand(i) of a mutable instruction for
  /// rewriting.
  const HloInstruction *operand(int64_t i) const { return operands_[i]; }
  HloInstruction *mutable_operand(int64_t i) { return operands_[i]; }
  llvm::ArrayRef<HloInstruction *> operands() const { return operands_; }
  llvm::ArrayRef<HloInstruction *> users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  /// Whether `user` is in users(); O(1) on long user lists.
  bool HasUser(const HloInstruction *user) const;
  void AppendOperand(HloInstruction *operand);
  /// Fills operand i, left null when the instruction was made (the parser
  /// reading a large computation in pieces on several threads leaves the
  /// operands defined in an earlier piece for the join), and links this
  /// instruction into its users.
  void SetMissingOperand(int64_t i, HloInstruction *operand);
  /// Replaces operand i; the shapes must be compatible.
  llvm::Error ReplaceOperandWith(int64_t i, HloInstruction *new_operand);
  /// Replaces every use of this instruction (operands of users, and the root
  /// of the parent computation) with `other`. Shapes must be compatible.
  llvm::Error ReplaceAllUsesWith(HloInstruction *other);
  /// Drops every operand (and the matching user links).
  void DetachOperands();

  // Control dependencies.
  llvm::ArrayRef<HloInstruction *> control_predecessors() const {
    return cold_ ? llvm::ArrayRef<HloInstruction *>(cold_->preds)
                 : llvm::ArrayRef<HloInstruction *>();
  }
  llvm::ArrayRef<HloInstruction *> control_successors() const {
    return cold_ ? llvm::ArrayRef<HloInstruction *>(cold_->succs)
                 : llvm::ArrayRef<HloInstruction *>();
  }
  /// Makes this instruction a control predecessor of `successor`.
  void AddControlDependencyTo(HloInstruction *successor);
  void RemoveControlDependencyTo(HloInstruction *successor);
  void DropAllControlDeps();

  HloComputation *parent() const { return parent_; }
  /// The instruction's slot in its computation's text order
  /// (HloComputation::instruction_in_slot); meaningful while it is in one.
  uint32_t text_order_slot() const { return order_index_; }
  bool IsRoot() const;

  /// kParameter: the number in `parameter(N)`.
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }
  /// kConstant: the literal between the parentheses, verbatim.
  llvm::StringRef literal_text() const {
    return cold_ ? cold_->literal_text.ref() : llvm::StringRef();
  }
  void set_literal_text(HloText text) {
    if (cold_ || !text.empty())
      MutableCold().literal_text = std::move(text);
  }

  // Attributes, in print order.
  llvm::ArrayRef<Attribute> attributes() const { return attributes_; }
  llvm::SmallVectorImpl<Attribute> &mutable_attributes() { return attributes_; }
  /// The text of a kText attribute; nullptr when absent.
  const HloText *FindAttribute(llvm::StringRef name) const;
  bool HasAttribute(llvm::StringRef name) const;
  /// Sets a text attribute, in place when present, appended otherwise.
  void SetAttribute(llvm::StringRef name, HloText value);
  /// SetAttribute for a name that outlives the instruction (a string
  /// literal): an appended attribute keeps a view of it, not a copy.
  void SetAttributeStaticName(llvm::StringLiteral name, HloText value);
  /// Sets a computation reference (`name=%comp`), in place or appended.
  void SetCalledComputation(llvm::StringRef name, HloComputation *computation);
  bool RemoveAttribute(llvm::StringRef name);

  /// Every computation this instruction calls, in attribute order.
  std::vector<HloComputation *> called_computations() const;
  /// The computations of one attribute (to_apply, condition, body, calls,
  /// branch_computations, ...); empty if absent.
  llvm::ArrayRef<HloComputation *> CalledComputations(llvm::StringRef attribute) const;
  /// Replaces references to `from` in every computation attribute.
  void ReplaceCalledComputation(HloComputation *from, HloComputation *to);

  /// The id an HloModuleProto gave the instruction, -1 when it has none
  /// (parsed from text, or made by a pass). Not printed: the text form has
  /// no ids; writing the module as a proto keeps it (docs/hlo-proto.md).
  int64_t unique_id() const { return cold_ ? cold_->unique_id : -1; }
  void set_unique_id(int64_t id) {
    if (cold_ || id != -1)
      MutableCold().unique_id = id;
  }

  /// The instruction in XLA's dump syntax, without indentation or newline.
  std::string ToString() const;

private:
  /// SetAttribute when `name` is present (`value` moved in); false otherwise.
  bool SetAttributeInPlace(llvm::StringRef name, HloText &value);
  friend class HloComputation;
  HloInstruction(HloOpcode opcode, Shape shape);
  HloInstruction(HloOpcode opcode, const Shape *shared_shape);
  void AddUser(HloInstruction *user);
  void RemoveUser(HloInstruction *user);
  void ClearUsers();

  // What few instructions have (control edges, a long user list's index, a
  // constant's literal, a proto's id): kept out of line so that most
  // instructions pay one pointer for all of it. A parsed module of a
  // million instructions holds them all at once (docs/performance.md).
  struct Cold {
    std::vector<HloInstruction *> preds;
    std::vector<HloInstruction *> succs;
    // Position of each user in users_, built once the list grows past a
    // few entries: a parameter used 100k times must not make parsing
    // quadratic.
    std::unique_ptr<llvm::DenseMap<HloInstruction *, size_t>> user_index;
    HloText literal_text;
    int64_t unique_id = -1;
  };
  Cold &MutableCold();
  llvm::DenseMap<HloInstruction *, size_t> *user_index() const {
    return cold_ ? cold_->user_index.get() : nullptr;
  }

  // What the walks over a computation read (post order, verifier, passes)
  // comes first, so that a walk touches the first cache lines of each
  // instruction only. Small vectors keep the common one or two operands,
  // users and attributes inside the instruction: one heap block for most.
  HloOpcode opcode_;
  std::optional<HloOpcode> async_wrapped_;
  // Whether shape_ is this instruction's own (deleted with it).
  bool owns_shape_ = false;
  uint32_t order_index_ = 0; // slot in the parent's text-order vector
  HloComputation *parent_ = nullptr;
  llvm::SmallVector<HloInstruction *, 2> operands_;
  std::unique_ptr<Cold> cold_;
  llvm::SmallVector<HloInstruction *, 2> users_;
  HloText name_;
  AttributeList attributes_;
  int64_t parameter_number_ = -1;
  // Parsed instructions share one Shape per distinct shape text (most of a
  // dump's instructions repeat a few shapes); others own theirs.
  const Shape *shape_;
};

} // namespace loom::hlo

#endif
