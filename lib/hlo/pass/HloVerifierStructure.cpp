//===- HloVerifierStructure.cpp - The walk over one computation -----------===//
//
// ComputationVerifier::CheckPiece, a computation or a range of its text
// order at a time on whichever thread takes it: each instruction's
// computation references, parent, operand, user and control edges and the
// validity of its shape (dimensions, element count, layout), then its shape
// rules (HloVerifierShapes.cpp). Once every piece of a computation is
// walked, CheckHead checks its root and parameter numbers, and CheckCycles
// runs the depth-first search for a cycle, only when an edge goes forward
// in the text (otherwise the text order is a topological order). Each reads
// the module and writes only the WalkResult it is given.
//
//===----------------------------------------------------------------------===//
#include "HloVerifierInternal.h"

#include "loom/hlo/ir/HloNameTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace loom::hlo::hlo_verifier {
namespace {

/// Starts loading every cache line of an instruction.
void Prefetch(const HloInstruction *inst) {
  const char *bytes = reinterpret_cast<const char *>(inst);
  for (size_t offset = 0; offset < sizeof(HloInstruction); offset += 64)
    __builtin_prefetch(bytes + offset);
}

/// Starts loading what a walk reads of an instruction besides the
/// instruction itself: its name (text in the module's source, far from
/// the instruction) and its attribute list.
void PrefetchText(const HloInstruction *inst) {
  __builtin_prefetch(inst->name().data());
  __builtin_prefetch(inst->attributes().data());
}

} // namespace

void ComputationVerifier::CheckPiece(const HloComputation &comp, size_t from, size_t to,
                                     WalkResult &result) {
  result_ = &result;
  comp_ = &comp;
  inst_ = nullptr;
  kind_ = Kind::kHead;

  // Every check of an instruction is made while it is in the cache: a walk
  // over a large module is a cache miss per instruction, and each of the
  // instruction's cache lines is one more, and its name and its attribute
  // list (which live elsewhere) two more. The instructions some steps ahead
  // are prefetched, and the name and attributes of those half as far ahead,
  // whose own lines have arrived by then.
  auto at = [&](size_t slot) { return comp.instruction_in_slot(slot); };
  result.comp = &comp;
  result.from = from;
  size_t live = 0;
  for (size_t slot = from; slot < to; ++slot)
    live += at(slot) != nullptr;
  // The name rule finds an instruction from its position in the piece: its
  // slot, unless removed instructions left empty slots (then a list, which
  // a parsed module never needs: a million pointers are 8 MB at the peak).
  bool dense = live == to - from;
  if (!dense)
    result.insts.reserve(live);
  result.name_hashes.reserve(live);
  // On the 1M-instruction module of bench/HloVerifyBench, distances from 8
  // to 64 take the same time; without prefetching the instructions the
  // walk took 0.19 s rather than 0.16 s.
  constexpr size_t kAhead = 32;
  constexpr size_t kTextAhead = kAhead / 2;
  for (size_t slot = from; slot < std::min(to, from + kTextAhead); ++slot)
    if (at(slot))
      PrefetchText(at(slot));
  for (size_t slot = from; slot < to; ++slot) {
    if (slot + kAhead < to && at(slot + kAhead))
      Prefetch(at(slot + kAhead));
    if (slot + kTextAhead < to && at(slot + kTextAhead))
      PrefetchText(at(slot + kTextAhead));
    const HloInstruction *inst = at(slot);
    if (!inst)
      continue;
    inst_ = inst;
    slot_ = slot;
    if (!dense)
      result.insts.push_back(inst);
    if (inst->opcode() == HloOpcode::kParameter)
      result.params.push_back(inst);
    CheckCallees();
    result.name_hashes.push_back(HloNameTable::Hash64(inst->name()));
    CheckEdges();
    // The shape rules read callees: not after a dangling reference (in this
    // piece; the report leaves out every rule's problem after one anyway).
    if (result.callees_ok) {
      kind_ = Kind::kRule;
      CheckInstruction();
    }
  }
  inst_ = nullptr;
}

void ComputationVerifier::CheckHead(const HloComputation &comp, llvm::ArrayRef<WalkResult> pieces,
                                    WalkResult &result) {
  result_ = &result;
  comp_ = &comp;
  inst_ = nullptr;
  kind_ = Kind::kHead;
  const HloInstruction *root = comp.root_instruction();
  if (!root)
    Report(&comp, nullptr, "has no ROOT instruction");
  else if (root->parent() != &comp)
    Report(&comp, nullptr, "its ROOT '" + root->name() + "' belongs to another computation");
  if (pieces.size() == 1)
    return CheckParameterNumbers(comp, pieces.front().params);
  std::vector<const HloInstruction *> params;
  for (const WalkResult &piece : pieces)
    llvm::append_range(params, piece.params);
  CheckParameterNumbers(comp, params);
}

void ComputationVerifier::CheckCallees() {
  for (const HloInstruction::Attribute &attr : inst_->attributes()) {
    for (const HloComputation *callee : attr.computations) {
      if (callee && computations_.contains(callee))
        continue;
      // Not dereferenced: a computation outside the module may be gone.
      result_->callees_ok = false;
      kind_ = Kind::kCallee;
      Report(comp_, inst_, llvm::Twine(attr.name.ref()) +
                               " refers to a computation that is not in the module");
    }
  }
}

void ComputationVerifier::CheckEdges() {
  kind_ = Kind::kStructure;
  bool &operands_local = result_->operands_local;
  bool &in_text_order = result_->in_text_order;
  const HloInstruction *inst = inst_;
  const HloComputation *comp = comp_;
  if (inst->parent() != comp)
    Report(comp, inst, "its parent is not the computation that holds it");
  // Parsed instructions share one Shape per distinct shape text: one found
  // valid is not checked again (an invalid one is, for every instruction).
  const Shape *shape = &inst->shape();
  const Shape *&known = valid_shapes_[(reinterpret_cast<uintptr_t>(shape) >> 4) %
                                      std::size(valid_shapes_)];
  if (known != shape) {
    size_t before = result_->counts[static_cast<size_t>(Kind::kStructure) - kFirstWalkKind];
    CheckShapeIsValid(*shape);
    if (result_->counts[static_cast<size_t>(Kind::kStructure) - kFirstWalkKind] == before)
      known = shape;
  }
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    const HloInstruction *op = inst->operand(i);
    if (!op) {
      Report(comp, inst, "operand " + llvm::Twine(i) + " is missing");
      operands_local = false;
      continue;
    }
    if (op->parent() != comp) {
      operands_local = false;
      Report(comp, inst, "operand " + llvm::Twine(i) + " '" + op->name() + "' belongs to " +
                             (op->parent() ? "computation '" + op->parent()->name() + "'"
                                           : std::string("no computation")));
      continue;
    }
    in_text_order = in_text_order && Before(op);
    // Passes walk users as often as operands: the two lists must agree.
    // HasUser is O(1) even for a constant with thousands of users.
    if (!op->HasUser(inst))
      Report(comp, inst, "operand '" + op->name() + "' does not list it as a user");
  }
  for (const HloInstruction *pred : inst->control_predecessors()) {
    if (pred->parent() == comp) {
      in_text_order = in_text_order && Before(pred);
      continue;
    }
    operands_local = false;
    Report(comp, inst, "control predecessor '" + pred->name() +
                           "' belongs to another computation");
  }
}

void ComputationVerifier::CheckParameterNumbers(const HloComputation &comp,
                                     llvm::ArrayRef<const HloInstruction *> params) {
  int64_t count = static_cast<int64_t>(params.size());
  std::vector<const HloInstruction *> by_number(count, nullptr);
  for (const HloInstruction *param : params) {
    int64_t n = param->parameter_number();
    if (n < 0 || n >= count) {
      Report(&comp, param, "parameter number " + llvm::Twine(n) +
                               " is out of range: the computation has " + llvm::Twine(count) +
                               " parameters, numbered 0.." + llvm::Twine(count - 1));
      continue;
    }
    if (by_number[n])
      Report(&comp, param, "parameter number " + llvm::Twine(n) + " is also used by '" +
                               by_number[n]->name() + "'");
    else
      by_number[n] = param;
  }
}

void ComputationVerifier::CheckCycles(const HloComputation &comp, WalkResult &result) {
  result_ = &result;
  comp_ = &comp;
  inst_ = nullptr;
  kind_ = Kind::kCycle;
  // One depth-first search over operands and control predecessors, with an
  // explicit stack: real modules have dependency chains far deeper than the
  // call stack allows. The state of an instruction of the computation is
  // kept at its text-order slot (SlotOf); an edge to an instruction that
  // names the computation as its parent without being one of its
  // instructions keeps that instruction's state in a map. The order of the
  // search is the text order of the starts and the operand order of the
  // edges, so the instruction reported is always the same.
  enum : uint8_t { kNew, kOnStack, kDone };
  cycle_state_.assign(comp.slot_count(), kNew);
  llvm::DenseMap<const HloInstruction *, uint8_t> outside;
  auto state_of = [&](const HloInstruction *inst, int64_t slot) -> uint8_t {
    if (slot >= 0)
      return cycle_state_[slot];
    auto it = outside.find(inst);
    return it == outside.end() ? uint8_t(kNew) : it->second;
  };
  auto set_state = [&](const HloInstruction *inst, int64_t slot, uint8_t state) {
    if (slot >= 0)
      cycle_state_[slot] = state;
    else
      outside[inst] = state;
  };
  struct Frame {
    const HloInstruction *inst;
    int64_t slot; // in the computation; -1 outside it
    size_t next;
  };
  std::vector<Frame> stack;
  for (size_t start = 0; start < comp.slot_count(); ++start) {
    const HloInstruction *first = comp.instruction_in_slot(start);
    if (!first || cycle_state_[start] != kNew)
      continue;
    cycle_state_[start] = kOnStack;
    stack.push_back({first, static_cast<int64_t>(start), 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      const HloInstruction *inst = f.inst;
      size_t num_ops = inst->operands().size();
      size_t num_deps = num_ops + inst->control_predecessors().size();
      if (f.next == num_deps) {
        set_state(inst, f.slot, kDone);
        stack.pop_back();
        continue;
      }
      size_t k = f.next++;
      const HloInstruction *dep =
          k < num_ops ? inst->operand(k) : inst->control_predecessors()[k - num_ops];
      int64_t d = SlotOf(dep);
      uint8_t state = state_of(dep, d);
      if (state == kNew) {
        set_state(dep, d, kOnStack);
        stack.push_back({dep, d, 0});
        continue;
      }
      if (state != kOnStack)
        continue;
      Report(&comp, dep, "is part of a cycle: it depends on itself through '" +
                             inst->name() + "'");
      return;
    }
  }
}

void ComputationVerifier::CheckShapeIsValid(const Shape &shape) {
  if (shape.IsTuple()) {
    for (const Shape &element : shape.tuple_shapes())
      CheckShapeIsValid(element);
    return;
  }
  if (shape.IsBuffer())
    return CheckShapeIsValid(shape.buffer_shape());
  if (!shape.IsArray())
    return;
  int64_t product = 1;
  bool overflow = false;
  // A zero dimension makes the shape empty whatever the others multiply to.
  bool empty = false;
  for (int64_t d : shape.dimensions()) {
    if (d == Shape::kUnboundedSize)
      continue;
    if (d < 0) {
      Fail("shape " + Str(shape) + " has a negative dimension");
      return;
    }
    empty |= d == 0;
    overflow |= __builtin_mul_overflow(product, d, &product);
  }
  if (overflow && !empty) {
    Fail("shape " + Str(shape) + ": the product of its dimensions overflows a 64-bit integer");
    return;
  }
  if (!shape.has_layout())
    return;
  llvm::ArrayRef<int64_t> m2m = shape.layout()->minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
    Fail("layout of " + Str(shape) + " lists " + llvm::Twine(m2m.size()) +
         " dimensions for rank " + llvm::Twine(shape.rank()));
    return;
  }
  // A bit per dimension: no allocation for any rank a real shape has.
  llvm::SmallVector<uint64_t, 1> seen((m2m.size() + 63) / 64, 0);
  for (int64_t d : m2m) {
    if (d < 0 || d >= shape.rank() || (seen[d / 64] >> (d % 64) & 1)) {
      Fail("layout of " + shape.ToString() + " is not a permutation of its dimensions");
      return;
    }
    seen[d / 64] |= uint64_t(1) << (d % 64);
  }
}

} // namespace loom::hlo::hlo_verifier
