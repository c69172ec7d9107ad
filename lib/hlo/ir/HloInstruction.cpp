#include "loom/hlo/ir/HloInstruction.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

namespace loom::hlo {

HloInstruction::HloInstruction(HloOpcode opcode, Shape shape)
    : opcode_(opcode), owns_shape_(true), shape_(new Shape(std::move(shape))) {}

HloInstruction::HloInstruction(HloOpcode opcode, const Shape *shared_shape)
    : opcode_(opcode), shape_(shared_shape) {}

std::unique_ptr<HloInstruction>
HloInstruction::CreateWithSharedShape(HloOpcode opcode, const Shape *shape,
                                      llvm::ArrayRef<HloInstruction *> operands) {
  std::unique_ptr<HloInstruction> inst(new HloInstruction(opcode, shape));
  inst->operands_.assign(operands.begin(), operands.end());
  return inst;
}

Shape *HloInstruction::mutable_shape() {
  if (!owns_shape_) {
    shape_ = new Shape(*shape_);
    owns_shape_ = true;
  }
  return const_cast<Shape *>(shape_);
}

HloInstruction::~HloInstruction() {
  if (owns_shape_)
    delete shape_;
}

// What every instruction of a parsed module costs, in its slab with the
// 8-byte tag (docs/performance.md): kept to 13 blocks of 16 bytes.
static_assert(sizeof(HloInstruction) <= 200);

// operator new places an instruction 8 bytes into a 16-aligned block.
static_assert(alignof(HloInstruction) <= detail::kInstructionAlignment);

std::unique_ptr<HloInstruction>
HloInstruction::Create(HloOpcode opcode, Shape shape,
                       llvm::ArrayRef<HloInstruction *> operands, llvm::StringRef name) {
  std::unique_ptr<HloInstruction> inst(new HloInstruction(opcode, std::move(shape)));
  inst->operands_.assign(operands.begin(), operands.end());
  inst->name_ = name;
  return inst;
}

std::string HloInstruction::OpcodeText() const {
  if (!async_wrapped_)
    return HloOpcodeString(opcode_).str();
  llvm::StringRef suffix = opcode_ == HloOpcode::kAsyncStart    ? "-start"
                           : opcode_ == HloOpcode::kAsyncUpdate ? "-update"
                                                                : "-done";
  return (HloOpcodeString(*async_wrapped_) + suffix).str();
}

static constexpr size_t kUserIndexThreshold = 16;

void HloInstruction::AddUser(HloInstruction *user) {
  if (llvm::DenseMap<HloInstruction *, size_t> *index = user_index()) {
    if (index->try_emplace(user, users_.size()).second)
      users_.push_back(user);
    return;
  }
  if (llvm::is_contained(users_, user))
    return;
  users_.push_back(user);
  if (users_.size() <= kUserIndexThreshold)
    return;
  auto &index = MutableCold().user_index;
  index = std::make_unique<llvm::DenseMap<HloInstruction *, size_t>>();
  for (size_t i = 0; i < users_.size(); ++i)
    index->try_emplace(users_[i], i);
}

void HloInstruction::SetMissingOperand(int64_t i, HloInstruction *operand) {
  assert(!operands_[i] && "the operand is there already");
  operands_[i] = operand;
  if (!parent_)
    return;
  operand->AddUser(this);
  if (operand->parent_ != parent_)
    parent_->ForgetPostOrder();
}

bool HloInstruction::HasUser(const HloInstruction *user) const {
  if (llvm::DenseMap<HloInstruction *, size_t> *index = user_index())
    return index->count(const_cast<HloInstruction *>(user)) != 0;
  return llvm::is_contained(users_, user);
}

void HloInstruction::RemoveUser(HloInstruction *user) {
  llvm::DenseMap<HloInstruction *, size_t> *index = user_index();
  if (!index) {
    auto it = llvm::find(users_, user);
    if (it != users_.end())
      users_.erase(it);
    return;
  }
  auto it = index->find(user);
  if (it == index->end())
    return;
  // Swap with the last user so removal stays O(1) on long lists.
  size_t pos = it->second;
  index->erase(it);
  if (pos + 1 != users_.size()) {
    users_[pos] = users_.back();
    (*index)[users_[pos]] = pos;
  }
  users_.pop_back();
}

void HloInstruction::ClearUsers() {
  users_.clear();
  if (cold_)
    cold_->user_index.reset();
}

void HloInstruction::AppendOperand(HloInstruction *operand) {
  operands_.push_back(operand);
  if (parent_) {
    operand->AddUser(this);
    parent_->ForgetPostOrder();
  }
}

llvm::Error HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction *new_operand) {
  HloInstruction *old = operands_[i];
  if (old == new_operand)
    return llvm::Error::success();
  if (!old->shape().Compatible(new_operand->shape()))
    return makeError("cannot replace operand " + llvm::Twine(i) + " of '" + name() +
                     "': shape " + old->shape().ToString() + " is not compatible with " +
                     new_operand->shape().ToString());
  operands_[i] = new_operand;
  if (parent_) {
    parent_->ForgetPostOrder();
    if (!llvm::is_contained(operands_, old))
      old->RemoveUser(this);
    new_operand->AddUser(this);
  }
  return llvm::Error::success();
}

llvm::Error HloInstruction::ReplaceAllUsesWith(HloInstruction *other) {
  if (other == this)
    return llvm::Error::success();
  if (!shape_->Compatible(other->shape()))
    return makeError("cannot replace the uses of '" + name() + "' (" + shape_->ToString() +
                     ") with '" + other->name() + "' (" + other->shape().ToString() + ")");
  // Copy: the user list shrinks as users are rewired.
  llvm::SmallVector<HloInstruction *, 8> users(users_.begin(), users_.end());
  for (HloInstruction *user : users) {
    if (user->parent_)
      user->parent_->ForgetPostOrder();
    for (HloInstruction *&op : user->operands_)
      if (op == this)
        op = other;
    other->AddUser(user);
  }
  ClearUsers();
  if (parent_ && parent_->root_instruction() == this)
    parent_->set_root_instruction(other);
  return llvm::Error::success();
}

void HloInstruction::DetachOperands() {
  if (parent_)
    for (HloInstruction *op : operands_)
      op->RemoveUser(this);
  operands_.clear();
}

HloInstruction::Cold &HloInstruction::MutableCold() {
  if (!cold_)
    cold_ = std::make_unique<Cold>();
  return *cold_;
}

void HloInstruction::AddControlDependencyTo(HloInstruction *successor) {
  if (llvm::is_contained(control_successors(), successor))
    return;
  MutableCold().succs.push_back(successor);
  successor->MutableCold().preds.push_back(this);
  if (successor->parent_)
    successor->parent_->ForgetPostOrder();
}

void HloInstruction::RemoveControlDependencyTo(HloInstruction *successor) {
  if (cold_)
    llvm::erase_value(cold_->succs, successor);
  if (successor->cold_)
    llvm::erase_value(successor->cold_->preds, this);
}

void HloInstruction::DropAllControlDeps() {
  if (!cold_)
    return;
  for (HloInstruction *pred : cold_->preds)
    llvm::erase_value(pred->cold_->succs, this);
  for (HloInstruction *succ : cold_->succs)
    llvm::erase_value(succ->cold_->preds, this);
  cold_->preds.clear();
  cold_->succs.clear();
}

bool HloInstruction::IsRoot() const {
  return parent_ && parent_->root_instruction() == this;
}

const HloText *HloInstruction::FindAttribute(llvm::StringRef name) const {
  for (const Attribute &a : attributes_)
    if (a.name == name && a.kind == AttributeKind::kText)
      return &a.value;
  return nullptr;
}

bool HloInstruction::HasAttribute(llvm::StringRef name) const {
  return llvm::any_of(attributes_, [&](const Attribute &a) { return a.name == name; });
}

void HloInstruction::SetAttribute(llvm::StringRef name, HloText value) {
  if (!SetAttributeInPlace(name, value))
    attributes_.push_back({HloText(name), std::move(value), AttributeKind::kText, {}});
}

void HloInstruction::SetAttributeStaticName(llvm::StringLiteral name, HloText value) {
  if (!SetAttributeInPlace(name, value))
    attributes_.push_back({HloText::View(name), std::move(value), AttributeKind::kText, {}});
}

bool HloInstruction::SetAttributeInPlace(llvm::StringRef name, HloText &value) {
  for (Attribute &a : attributes_) {
    if (a.name != name)
      continue;
    a.kind = AttributeKind::kText;
    a.value = std::move(value);
    a.computations.clear();
    return true;
  }
  return false;
}

void HloInstruction::SetCalledComputation(llvm::StringRef name, HloComputation *computation) {
  for (Attribute &a : attributes_) {
    if (a.name != name)
      continue;
    a.kind = AttributeKind::kComputation;
    a.value.clear();
    a.computations = {computation};
    return;
  }
  attributes_.push_back({HloText(name), HloText(), AttributeKind::kComputation, {computation}});
}

bool HloInstruction::RemoveAttribute(llvm::StringRef name) {
  auto it = llvm::find_if(attributes_, [&](const Attribute &a) { return a.name == name; });
  if (it == attributes_.end())
    return false;
  attributes_.erase(it);
  return true;
}

std::vector<HloComputation *> HloInstruction::called_computations() const {
  std::vector<HloComputation *> result;
  for (const Attribute &a : attributes_)
    result.insert(result.end(), a.computations.begin(), a.computations.end());
  return result;
}

llvm::ArrayRef<HloComputation *>
HloInstruction::CalledComputations(llvm::StringRef attribute) const {
  for (const Attribute &a : attributes_)
    if (a.name == attribute)
      return a.computations;
  return {};
}

void HloInstruction::ReplaceCalledComputation(HloComputation *from, HloComputation *to) {
  for (Attribute &a : attributes_)
    for (HloComputation *&c : a.computations)
      if (c == from)
        c = to;
}

} // namespace loom::hlo
