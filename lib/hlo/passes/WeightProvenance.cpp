//===- WeightProvenance.cpp - Is this value a (slice of a) weight? --------===//
#include "loom/hlo/passes/WeightProvenance.h"

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"

namespace loom::hlo {
namespace {

std::string Ref(const HloInstruction *inst) {
  return inst ? ("%" + inst->name()).str() : std::string("(none)");
}

WeightProof Blocked(const HloInstruction *blocker, WeightProof::Why why, int64_t detail = 0) {
  WeightProof proof;
  proof.blocker = blocker;
  proof.why = why;
  proof.detail = detail;
  return proof;
}

/// The ops a weight may pass through (operand 0 carries the data).
bool IsDataMovement(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::kConvert:
  case HloOpcode::kReshape:
  case HloOpcode::kBitcast:
  case HloOpcode::kCopy:
  case HloOpcode::kTranspose:
  case HloOpcode::kBroadcast:
  case HloOpcode::kSlice:
    return true;
  default:
    return false;
  }
}

/// Side-effect-free ops an index may be computed with from the loop counter
/// and constants.
bool IsIndexArithmetic(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::kAdd:
  case HloOpcode::kSubtract:
  case HloOpcode::kMultiply:
  case HloOpcode::kDivide:
  case HloOpcode::kRemainder:
  case HloOpcode::kMaximum:
  case HloOpcode::kMinimum:
  case HloOpcode::kClamp:
  case HloOpcode::kSelect:
  case HloOpcode::kCompare:
  case HloOpcode::kNegate:
  case HloOpcode::kAbs:
  case HloOpcode::kSign:
  case HloOpcode::kAnd:
  case HloOpcode::kOr:
  case HloOpcode::kXor:
  case HloOpcode::kNot:
  case HloOpcode::kShiftLeft:
  case HloOpcode::kShiftRightArithmetic:
  case HloOpcode::kShiftRightLogical:
  case HloOpcode::kConvert:
  case HloOpcode::kBitcastConvert:
  case HloOpcode::kReshape:
  case HloOpcode::kBitcast:
  case HloOpcode::kCopy:
  case HloOpcode::kBroadcast:
  case HloOpcode::kSlice:
  case HloOpcode::kDynamicSlice:
  case HloOpcode::kConcatenate:
    return true;
  default:
    return false;
  }
}

/// The tuple index of a get-tuple-element, or -1 when unreadable.
int64_t TupleIndexOr(const HloInstruction &gte) {
  auto index = GetTupleIndex(gte);
  if (!index) {
    llvm::consumeError(index.takeError());
    return -1;
  }
  return *index;
}

/// `inst` is get-tuple-element(parameter 0 of `body`), index=`index`.
bool IsParameterElement(const HloInstruction *inst, const HloComputation *body, int64_t index) {
  return inst && inst->opcode() == HloOpcode::kGetTupleElement && inst->operand_count() == 1 &&
         body->num_parameters() == 1 && inst->operand(0) == body->parameter_instruction(0) &&
         TupleIndexOr(*inst) == index;
}

/// The body's root tuple hands element `index` of the parameter back
/// unchanged.
bool PassesThrough(const HloComputation *body, int64_t index) {
  const HloInstruction *root = body ? body->root_instruction() : nullptr;
  return root && root->opcode() == HloOpcode::kTuple && index >= 0 &&
         index < root->operand_count() && IsParameterElement(root->operand(index), body, index);
}

const HloComputation *BodyOf(const HloInstruction &while_inst) {
  llvm::ArrayRef<HloComputation *> body = while_inst.CalledComputations("body");
  return body.size() == 1 ? body.front() : nullptr;
}

} // namespace

std::string WeightProof::Describe() const {
  if (!IsWeight())
    return "not a weight";
  std::string text = dynamic_slice ? "dynamic-slice of " : "";
  text += kind == kLoopInvariant ? "loop-invariant " : "entry parameter ";
  return text + Ref(source);
}

std::string WeightProof::Reason() const {
  const std::string at = Ref(blocker);
  switch (why) {
  case kNone:
    return "it is a weight";
  case kNotDataMovement:
    return at + " is " + (blocker ? blocker->OpcodeText() : std::string("missing")) +
           ", not an entry parameter, loop-invariant loop state or a data-movement op "
           "(convert, reshape, bitcast, copy, transpose, broadcast, slice, dynamic-slice)";
  case kIndexNotDerived:
    return "start index " + std::to_string(detail - 1) + " of dynamic-slice " + at + " (" +
           Ref(blocker && detail < blocker->operand_count() ? blocker->operand(detail)
                                                             : nullptr) +
           ") derives from neither the loop counter nor constants";
  case kLoopStateUpdated:
    return at + " is element " + std::to_string(detail) +
           " of the loop state, which the body's root does not pass through unchanged";
  case kNotLoopState:
    return at + " is a parameter of " +
           (blocker && blocker->parent() ? blocker->parent()->name() : std::string("?")) +
           ", which is neither the entry computation nor only a while body";
  case kInitNotTuple:
    return "the init of while " + at + " is not a tuple instruction";
  case kUnreadable:
    return "cannot read the attributes of " + at;
  }
  return "not a weight";
}

WeightProvenance::WeightProvenance(const HloModule &module) : module_(module) {
  for (const HloComputation *computation : module_.computations())
    for (const HloInstruction *inst : computation->instructions())
      for (const HloComputation *callee : inst->called_computations()) {
        if (inst->opcode() == HloOpcode::kWhile && callee == BodyOf(*inst))
          whiles_[callee].push_back(inst);
        else if (inst->opcode() != HloOpcode::kWhile ||
                 !llvm::is_contained(inst->CalledComputations("condition"), callee))
          other_callers_[callee] = true;
      }
}

void WeightProvenance::Reset() {
  proofs_.clear();
  loop_state_.clear();
  index_derived_.clear();
}

bool WeightProvenance::IsWhileBody(const HloComputation *computation) const {
  return whiles_.count(computation) && !other_callers_.count(computation);
}

bool WeightProvenance::IsLoopCounter(const HloComputation *body, int64_t index) const {
  if (!IsWhileBody(body))
    return false;
  const HloInstruction *root = body->root_instruction();
  if (!root || root->opcode() != HloOpcode::kTuple || index < 0 || index >= root->operand_count())
    return false;
  const HloInstruction *next = root->operand(index);
  if ((next->opcode() != HloOpcode::kAdd && next->opcode() != HloOpcode::kSubtract) ||
      next->operand_count() != 2)
    return false;
  const HloInstruction *a = next->operand(0), *b = next->operand(1);
  if (IsParameterElement(a, body, index) && b->opcode() == HloOpcode::kConstant)
    return true;
  return next->opcode() == HloOpcode::kAdd && a->opcode() == HloOpcode::kConstant &&
         IsParameterElement(b, body, index);
}

bool WeightProvenance::DerivesFromLoopCounter(const HloInstruction *index) {
  if (auto it = index_derived_.find(index); it != index_derived_.end())
    return it->second;
  stack_.clear();
  stack_.push_back(index);
  while (!stack_.empty()) {
    const HloInstruction *v = stack_.back();
    if (index_derived_.count(v)) {
      stack_.pop_back();
      continue;
    }
    switch (v->opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
      index_derived_[v] = true;
      stack_.pop_back();
      continue;
    case HloOpcode::kGetTupleElement: {
      const HloInstruction *tuple = v->operand_count() == 1 ? v->operand(0) : nullptr;
      index_derived_[v] = tuple && tuple->opcode() == HloOpcode::kParameter && tuple->parent() &&
                          IsParameterElement(v, tuple->parent(), TupleIndexOr(*v)) &&
                          IsLoopCounter(tuple->parent(), TupleIndexOr(*v));
      stack_.pop_back();
      continue;
    }
    default:
      break;
    }
    if (!IsIndexArithmetic(v->opcode()) || v->operand_count() == 0) {
      index_derived_[v] = false;
      stack_.pop_back();
      continue;
    }
    // Post order: decide once every operand is decided.
    bool pending = false, derived = true;
    for (const HloInstruction *operand : v->operands()) {
      auto it = index_derived_.find(operand);
      if (it == index_derived_.end()) {
        stack_.push_back(operand);
        pending = true;
      } else {
        derived &= it->second;
      }
    }
    if (pending)
      continue;
    index_derived_[v] = derived;
    stack_.pop_back();
  }
  return index_derived_.lookup(index);
}

WeightProof WeightProvenance::ProveLoopState(const HloComputation *body, int64_t index,
                                             const HloInstruction *gte) {
  const auto key = std::make_pair(body, index);
  if (auto it = loop_state_.find(key); it != loop_state_.end()) {
    WeightProof proof = it->second;
    if (proof.IsWeight())
      proof.source = gte;
    return proof;
  }
  if (!IsWhileBody(body))
    return loop_state_[key] = Blocked(gte, WeightProof::kNotLoopState);
  if (!PassesThrough(body, index))
    return loop_state_[key] = Blocked(gte, WeightProof::kLoopStateUpdated, index);
  // A guard for a module whose loops call each other (not valid HLO).
  loop_state_[key] = Blocked(gte, WeightProof::kNotLoopState);
  WeightProof result;
  result.kind = WeightProof::kLoopInvariant;
  result.source = gte;
  // whiles_ does not change after construction, so the reference stays valid
  // while Prove() below memoizes.
  const auto &whiles = whiles_.find(body)->second;
  for (const HloInstruction *loop : whiles) {
    const HloInstruction *init = loop->operand_count() == 1 ? loop->operand(0) : nullptr;
    if (init && init->opcode() == HloOpcode::kParameter && init->parent() &&
        init->parent()->IsEntryComputation())
      continue;
    if (!init || init->opcode() != HloOpcode::kTuple || index >= init->operand_count()) {
      result = Blocked(loop, WeightProof::kInitNotTuple);
      break;
    }
    WeightProof element = Prove(init->operand(index));
    if (!element.IsWeight()) {
      result = element;
      break;
    }
  }
  return loop_state_[key] = result;
}

WeightProof WeightProvenance::Prove(const HloInstruction *value) {
  llvm::SmallVector<const HloInstruction *, 16> path;
  const HloInstruction *cur = value;
  WeightProof result;
  bool memoized = false;
  for (;;) {
    if (!cur) {
      result = Blocked(nullptr, WeightProof::kNotDataMovement);
      break;
    }
    if (auto it = proofs_.find(cur); it != proofs_.end()) {
      result = it->second;
      memoized = true;
      break;
    }
    const HloOpcode opcode = cur->opcode();
    if (IsDataMovement(opcode) && cur->operand_count() >= 1) {
      path.push_back(cur);
      cur = cur->operand(0);
      continue;
    }
    if (opcode == HloOpcode::kDynamicSlice && cur->operand_count() >= 1) {
      int64_t bad = 0;
      for (int64_t i = 1; i < cur->operand_count() && !bad; ++i)
        if (!DerivesFromLoopCounter(cur->operand(i)))
          bad = i;
      if (bad) {
        result = Blocked(cur, WeightProof::kIndexNotDerived, bad);
        break;
      }
      path.push_back(cur);
      cur = cur->operand(0);
      continue;
    }
    if (opcode == HloOpcode::kParameter) {
      if (cur->parent() && cur->parent()->IsEntryComputation()) {
        result.kind = WeightProof::kEntryParameter;
        result.source = cur;
      } else {
        result = Blocked(cur, WeightProof::kNotLoopState);
      }
      break;
    }
    if (opcode != HloOpcode::kGetTupleElement || cur->operand_count() != 1) {
      result = Blocked(cur, WeightProof::kNotDataMovement);
      break;
    }
    const int64_t index = TupleIndexOr(*cur);
    const HloInstruction *tuple = cur->operand(0);
    if (index < 0) {
      result = Blocked(cur, WeightProof::kUnreadable);
      break;
    }
    if (tuple->opcode() == HloOpcode::kParameter) {
      if (tuple->parent() && tuple->parent()->IsEntryComputation()) {
        result.kind = WeightProof::kEntryParameter;
        result.source = tuple;
      } else {
        result = ProveLoopState(tuple->parent(), index, cur);
      }
      break;
    }
    if (tuple->opcode() == HloOpcode::kTuple && index < tuple->operand_count()) {
      path.push_back(cur);
      cur = tuple->operand(index);
      continue;
    }
    if (tuple->opcode() == HloOpcode::kWhile && tuple->operand_count() == 1) {
      // A loop's result element is its init element when the body passes
      // it through.
      const HloInstruction *init = tuple->operand(0);
      if (!PassesThrough(BodyOf(*tuple), index)) {
        result = Blocked(cur, WeightProof::kLoopStateUpdated, index);
        break;
      }
      if (init->opcode() != HloOpcode::kTuple || index >= init->operand_count()) {
        result = Blocked(tuple, WeightProof::kInitNotTuple);
        break;
      }
      path.push_back(cur);
      cur = init->operand(index);
      continue;
    }
    result = Blocked(tuple, WeightProof::kNotDataMovement);
    break;
  }
  if (cur && !memoized)
    proofs_[cur] = result;
  // Every instruction on the path has the answer of the end of the path,
  // with the dynamic-slice nearest to it.
  const HloInstruction *slice = result.dynamic_slice;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if ((*it)->opcode() == HloOpcode::kDynamicSlice)
      slice = *it;
    WeightProof proof = result;
    if (proof.IsWeight())
      proof.dynamic_slice = slice;
    proofs_[*it] = proof;
    if (*it == value)
      result = proof;
  }
  return result;
}

} // namespace loom::hlo
