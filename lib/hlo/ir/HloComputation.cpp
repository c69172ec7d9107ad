#include "loom/hlo/ir/HloComputation.h"

#include "loom/hlo/ir/HloModule.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>

namespace loom::hlo {

HloComputation::~HloComputation() = default;

bool HloComputation::IsEntryComputation() const {
  return parent_ && parent_->entry_computation() == this;
}

HloInstruction *HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  HloInstruction *inst = instruction.get();
  if (parent_) {
    llvm::StringRef prefix = inst->name().empty()
                                 ? llvm::StringRef(HloOpcodeString(inst->opcode()))
                                 : llvm::StringRef(inst->name());
    inst->SetNameView(parent_->UniqueInstructionName(prefix));
  }
  inst->parent_ = this;
  // Appended after its operands: text order stays a post order as long as
  // they are all here (and so earlier) and it has no control edges yet.
  for (HloInstruction *op : inst->operands()) {
    if (!op)
      continue;
    op->AddUser(inst);
    if (op->parent_ != this)
      ForgetPostOrder();
  }
  if (!inst->control_predecessors().empty() || !inst->control_successors().empty())
    ForgetPostOrder();
  inst->order_index_ = static_cast<uint32_t>(order_.size());
  order_.push_back(std::move(instruction));
  ++live_count_;
  if (inst->opcode() == HloOpcode::kParameter)
    RegisterParameter(inst);
  return inst;
}

void HloComputation::AppendInstructionsOf(HloComputation &from) {
  // Grown geometrically: a computation joined from many pieces must not
  // copy its vector once per piece.
  size_t wanted = order_.size() + from.order_.size();
  if (wanted > order_.capacity())
    order_.reserve(std::max(wanted, 2 * order_.capacity()));
  for (std::unique_ptr<HloInstruction> &owned : from.order_) {
    if (!owned)
      continue;
    HloInstruction *inst = owned.get();
    inst->parent_ = this;
    inst->order_index_ = static_cast<uint32_t>(order_.size());
    order_.push_back(std::move(owned));
    ++live_count_;
    if (inst->opcode() == HloOpcode::kParameter)
      RegisterParameter(inst);
  }
  // Operands of `from` that are here come earlier; anything else may not.
  if (from.text_order_is_post_order_ != kYes)
    ForgetPostOrder();
  from.order_.clear();
  from.live_count_ = 0;
  from.params_.clear();
  from.root_ = nullptr;
  from.text_order_is_post_order_ = kYes;
}

void HloComputation::RegisterParameter(HloInstruction *param) {
  int64_t n = param->parameter_number();
  if (n < 0)
    return;
  if (static_cast<int64_t>(params_.size()) <= n)
    params_.resize(n + 1, nullptr);
  // A duplicate number is left for the verifier to report; keep the first.
  if (!params_[n])
    params_[n] = param;
}

llvm::Error HloComputation::RemoveInstruction(HloInstruction *inst) {
  if (inst->parent() != this)
    return makeError("'" + inst->name() + "' is not in computation '" + name_ + "'");
  if (inst->user_count() != 0)
    return makeError("cannot remove '" + inst->name() + "': it still has users");
  if (inst == root_)
    return makeError("cannot remove '" + inst->name() + "': it is the root of '" + name_ + "'");
  if (inst->opcode() == HloOpcode::kParameter)
    return makeError("cannot remove parameter '" + inst->name() + "'");
  if (!inst->control_successors().empty())
    return makeError("cannot remove '" + inst->name() + "': it has control successors");
  inst->DetachOperands();
  inst->DropAllControlDeps();
  order_[inst->order_index_].reset();
  --live_count_;
  return llvm::Error::success();
}

static bool IsRemovable(const HloInstruction *inst) {
  return inst->user_count() == 0 && !inst->IsRoot() &&
         inst->opcode() != HloOpcode::kParameter && !HasSideEffect(*inst) &&
         inst->control_successors().empty();
}

void HloComputation::RemoveInstructionAndUnusedOperands(
    HloInstruction *inst, llvm::function_ref<void(HloInstruction *)> on_remove) {
  llvm::SmallVector<HloInstruction *, 8> worklist{inst};
  while (!worklist.empty()) {
    HloInstruction *cur = worklist.pop_back_val();
    if (cur->parent() != this || !IsRemovable(cur))
      continue;
    llvm::SmallVector<HloInstruction *, 4> operands(cur->operands().begin(),
                                                    cur->operands().end());
    if (on_remove)
      on_remove(cur);
    llvm::consumeError(RemoveInstruction(cur));
    for (HloInstruction *op : operands)
      if (!llvm::is_contained(worklist, op))
        worklist.push_back(op);
  }
}

bool HloComputation::RemoveDeadInstructions() {
  // Live marks by text-order slot; operands from elsewhere (a broken
  // module) are not followed.
  std::vector<uint8_t> live(order_.size(), 0);
  auto is_live = [&](const HloInstruction *i) {
    return i->parent() == this && live[i->order_index_];
  };
  llvm::SmallVector<HloInstruction *, 32> worklist;
  auto mark = [&](HloInstruction *i) {
    if (i->parent() != this || live[i->order_index_])
      return;
    live[i->order_index_] = 1;
    worklist.push_back(i);
  };
  if (root_)
    mark(root_);
  for (HloInstruction *i : instructions())
    if (i->opcode() == HloOpcode::kParameter || HasSideEffect(*i))
      mark(i);
  while (!worklist.empty()) {
    HloInstruction *i = worklist.pop_back_val();
    for (HloInstruction *op : i->operands())
      mark(op);
    for (HloInstruction *pred : i->control_predecessors())
      mark(pred);
  }
  std::vector<HloInstruction *> dead;
  for (HloInstruction *i : instructions())
    if (!is_live(i))
      dead.push_back(i);
  // Cut every link first so the removal order does not matter.
  for (HloInstruction *i : dead) {
    i->DetachOperands();
    i->DropAllControlDeps();
  }
  for (HloInstruction *i : dead) {
    i->ClearUsers();
    order_[i->order_index_].reset();
    --live_count_;
  }
  // Compact the text order while no walk can be running over it.
  if (!dead.empty()) {
    llvm::erase_if(order_, [](const std::unique_ptr<HloInstruction> &i) { return !i; });
    for (size_t k = 0; k < order_.size(); ++k)
      order_[k]->order_index_ = static_cast<uint32_t>(k);
  }
  return !dead.empty();
}

void HloComputation::MoveInstructions(llvm::ArrayRef<Placement> placements) {
  if (placements.empty())
    return;
  const size_t n = order_.size();
  auto slot_before = [n](const Placement &p) {
    return p.before ? static_cast<size_t>(p.before->order_index_) : n;
  };
  // Everything before the first slot that changes stays where it is.
  size_t first = n;
  for (const Placement &p : placements) {
    assert(p.instruction->parent_ == this && (!p.before || p.before->parent_ == this) &&
           "a placement outside the computation");
    first = std::min({first, slot_before(p), static_cast<size_t>(p.instruction->order_index_)});
  }
  // Placement indices by the slot they go before, stable.
  std::vector<uint32_t> by_slot(placements.size());
  for (uint32_t i = 0; i < by_slot.size(); ++i)
    by_slot[i] = i;
  std::stable_sort(by_slot.begin(), by_slot.end(), [&](uint32_t a, uint32_t b) {
    return slot_before(placements[a]) < slot_before(placements[b]);
  });
  // The short way: each run of placements with the same `before` into
  // empty slots a few slots before it, moving only the instructions
  // between; false, having changed nothing, when a run finds no room.
  auto move_into_empty_slots_before = [&]() -> bool {
    // How far before its `before` a run looks for empty slots.
    constexpr size_t kReach = 32;
    // Everything placed must come from after every `before`, so that no
    // window below holds an instruction that moves.
    size_t lowest_moving = order_.size();
    for (const Placement &p : placements) {
      if (!p.before)
        return false;
      lowest_moving = std::min<size_t>(lowest_moving, p.instruction->order_index_);
    }
    struct Run {
      size_t first, count; // in by_slot
      size_t lo, before;   // the slots [lo, before) are rewritten
    };
    std::vector<Run> runs;
    size_t floor = 0; // the lowest slot the next run may rewrite
    for (size_t k = 0; k < by_slot.size();) {
      const size_t before = placements[by_slot[k]].before->order_index_;
      size_t end = k + 1;
      while (end < by_slot.size() && placements[by_slot[end]].before->order_index_ == before)
        ++end;
      if (before >= lowest_moving)
        return false;
      // Down from `before` until as many empty slots as the run places.
      size_t lo = before, empty = 0;
      while (empty < end - k) {
        if (lo == floor || before - lo >= kReach)
          return false;
        if (!order_[--lo])
          ++empty;
      }
      runs.push_back({k, end - k, lo, before});
      floor = before + 1;
      k = end;
    }
    // In each window the instructions there keep their order, packed down
    // into its empty slots, and the run follows them, right before `before`:
    // the text order MoveInstructions' full pass makes.
    for (const Run &r : runs) {
      size_t to = r.lo;
      for (size_t s = r.lo; s < r.before; ++s) {
        if (!order_[s])
          continue;
        if (s != to) {
          order_[to] = std::move(order_[s]);
          order_[to]->order_index_ = static_cast<uint32_t>(to);
        }
        ++to;
      }
      for (size_t i = r.first; i < r.first + r.count; ++i) {
        HloInstruction *inst = placements[by_slot[i]].instruction;
        assert(order_[inst->order_index_] && "an instruction placed twice");
        order_[to] = std::move(order_[inst->order_index_]);
        inst->order_index_ = static_cast<uint32_t>(to);
        ++to;
      }
      assert(to == r.before && "the window's empty slots were counted");
    }
    // The slots the placed instructions left at the end.
    while (!order_.empty() && !order_.back())
      order_.pop_back();
    ForgetPostOrder();
    return true;
  };
  // A pass that replaced instructions left their slots empty near where the
  // new ones go: filling those moves a few instructions, not every slot
  // from the first change on (a million of them in one computation).
  if (move_into_empty_slots_before())
    return;
  std::vector<uint8_t> moving(n - first, 0);
  for (const Placement &p : placements)
    moving[p.instruction->order_index_ - first] = 1;
  std::vector<std::unique_ptr<HloInstruction>> region;
  region.reserve(n - first);
  size_t k = 0;
  // Slots are read before any is renumbered: order_index_ still names the
  // old slot of every instruction until the end.
  auto place = [&](size_t at) {
    for (; k < by_slot.size() && slot_before(placements[by_slot[k]]) == at; ++k) {
      HloInstruction *inst = placements[by_slot[k]].instruction;
      assert(order_[inst->order_index_] && "an instruction placed twice");
      region.push_back(std::move(order_[inst->order_index_]));
    }
  };
  for (size_t s = first; s < n; ++s) {
    place(s);
    if (!moving[s - first] && order_[s])
      region.push_back(std::move(order_[s]));
  }
  place(n);
  order_.resize(first);
  for (std::unique_ptr<HloInstruction> &owned : region) {
    owned->order_index_ = static_cast<uint32_t>(order_.size());
    order_.push_back(std::move(owned));
  }
  ForgetPostOrder();
}

bool HloComputation::TextOrderIsPostOrder() const {
  if (text_order_is_post_order_ == kUnknown) {
    bool post = true;
    for (const std::unique_ptr<HloInstruction> &owned : order_) {
      const HloInstruction *inst = owned.get();
      if (!inst)
        continue;
      auto earlier = [&](const HloInstruction *dep) {
        return dep->parent() == this && dep->order_index_ < inst->order_index_ &&
               order_[dep->order_index_].get() == dep;
      };
      if (!llvm::all_of(inst->operands(), earlier) ||
          !llvm::all_of(inst->control_predecessors(), earlier)) {
        post = false;
        break;
      }
    }
    text_order_is_post_order_ = post ? kYes : kNo;
  }
  return text_order_is_post_order_ == kYes;
}

std::vector<HloInstruction *> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction *> order;
  order.reserve(live_count_);
  // Parsed modules list operands before users: when every operand and
  // control predecessor is local and comes earlier in the text, the walk
  // below would return the text order itself. Checking that costs no
  // hashing, and the answer is kept until an edit may change it.
  if (TextOrderIsPostOrder()) {
    for (HloInstruction *inst : instructions())
      order.push_back(inst);
    return order;
  }
  // Visited marks by text-order slot: no hashing, one byte per slot.
  std::vector<uint8_t> visited(order_.size(), 0);
  auto visit = [&](const HloInstruction *inst) {
    uint8_t &mark = visited[inst->order_index_];
    if (mark)
      return false;
    mark = 1;
    return true;
  };
  // Explicit stack: chains of 100k instructions must not overflow.
  struct Frame {
    HloInstruction *inst;
    size_t next;
  };
  llvm::SmallVector<Frame, 32> stack;
  for (HloInstruction *start : instructions()) {
    if (!visit(start))
      continue;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      size_t num_ops = f.inst->operands().size();
      size_t num_deps = num_ops + f.inst->control_predecessors().size();
      if (f.next == num_deps) {
        order.push_back(f.inst);
        stack.pop_back();
        continue;
      }
      size_t k = f.next++;
      HloInstruction *dep = k < num_ops ? f.inst->operands()[k]
                                        : f.inst->control_predecessors()[k - num_ops];
      // Operands from another computation belong to a broken module; the
      // verifier reports them, the walk must not follow them.
      if (dep->parent() == this && order_[dep->order_index_].get() == dep && visit(dep))
        stack.push_back({dep, 0});
    }
  }
  return order;
}

HloInstruction *HloComputation::GetInstructionWithName(llvm::StringRef name) const {
  for (HloInstruction *i : instructions())
    if (i->name() == name)
      return i;
  return nullptr;
}

bool HasSideEffect(const HloInstruction &inst) {
  switch (inst.opcode()) {
  case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv:
  case HloOpcode::kRecvDone: case HloOpcode::kInfeed: case HloOpcode::kOutfeed:
  case HloOpcode::kRng: case HloOpcode::kRngGetAndUpdateState:
  case HloOpcode::kAllReduceStart: case HloOpcode::kAllReduceDone:
  case HloOpcode::kAllGatherStart: case HloOpcode::kAllGatherDone:
  case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCollectivePermuteDone:
    return true;
  case HloOpcode::kCustomCall: {
    const HloText *v = inst.FindAttribute("custom_call_has_side_effect");
    return v && *v == "true";
  }
  default:
    return false;
  }
}

} // namespace loom::hlo
