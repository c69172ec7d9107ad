//===- CollectiveMatmulMatchers.cpp - Where does a dot's all-gather sit? --===//
#include "loom/hlo/passes/CollectiveMatmulMatchers.h"

#include "loom/hlo/ir/HloAttributes.h"

namespace loom::hlo {
namespace {

bool Is(const HloInstruction *inst, HloOpcode opcode) {
  return inst && inst->opcode() == opcode;
}

/// Operand `i` of `inst`, or nullptr when it has fewer operands.
HloInstruction *OperandOrNull(const HloInstruction *inst, int64_t i) {
  if (!inst || i < 0 || i >= inst->operand_count())
    return nullptr;
  return inst->operands()[i];
}

/// Operand `side` (0 = lhs, 1 = rhs) of a dot with two operands.
HloInstruction *DotSide(const HloInstruction *dot, int64_t side) {
  if (!Is(dot, HloOpcode::kDot) || dot->operand_count() != 2)
    return nullptr;
  return dot->operands()[side];
}

bool SideIsAllGather(const HloInstruction *dot, int64_t side) {
  return Is(DotSide(dot, side), HloOpcode::kAllGather);
}

bool SideIsReshapeOfAllGather(const HloInstruction *dot, int64_t side) {
  const HloInstruction *op = DotSide(dot, side);
  return Is(op, HloOpcode::kReshape) && Is(OperandOrNull(op, 0), HloOpcode::kAllGather);
}

bool WeightOnSide(const HloInstruction *dot, int64_t side) {
  AllGatherOnSide found = FindAllGatherOnSide(dot, side);
  if (!found.ag)
    return false;
  return ReachesParameter(OperandOrNull(found.ag, found.operand_index));
}

} // namespace

bool MatchAllGatherInDotLhs(const HloInstruction *dot) { return SideIsAllGather(dot, 0); }
bool MatchAllGatherInDotRhs(const HloInstruction *dot) { return SideIsAllGather(dot, 1); }
bool MatchAllGatherInDotLhsRS(const HloInstruction *dot) {
  return SideIsReshapeOfAllGather(dot, 0);
}
bool MatchAllGatherInDotRhsRS(const HloInstruction *dot) {
  return SideIsReshapeOfAllGather(dot, 1);
}

bool MatchAllGatherInDotLhsNxD(const HloInstruction *dot) {
  const HloInstruction *op = DotSide(dot, 0);
  if (!Is(op, HloOpcode::kReshape))
    return false;
  const HloInstruction *gte = OperandOrNull(op, 0);
  return Is(gte, HloOpcode::kGetTupleElement) &&
         Is(OperandOrNull(gte, 0), HloOpcode::kAllGather);
}

HloInstruction *GetRootAllGather(HloInstruction *inst, int depth) {
  for (int hop = 0; inst; ++hop) {
    if (inst->opcode() == HloOpcode::kAllGather)
      return inst;
    if (hop == depth)
      break;
    inst = OperandOrNull(inst, 0);
  }
  return nullptr;
}

bool IsConvertGetTupleElementParameter(const HloInstruction *inst) {
  if (!Is(inst, HloOpcode::kConvert))
    return false;
  const HloInstruction *gte = OperandOrNull(inst, 0);
  return Is(gte, HloOpcode::kGetTupleElement) &&
         Is(OperandOrNull(gte, 0), HloOpcode::kParameter);
}

AllGatherOnSide FindAllGatherOnSide(const HloInstruction *dot, int64_t side) {
  AllGatherOnSide result;
  HloInstruction *cur = DotSide(dot, side);
  if (Is(cur, HloOpcode::kReshape))
    cur = OperandOrNull(cur, 0);
  if (Is(cur, HloOpcode::kGetTupleElement)) {
    auto index = GetTupleIndex(*cur);
    if (!index) {
      llvm::consumeError(index.takeError());
      return result;
    }
    result.gte = cur;
    result.operand_index = *index;
    cur = OperandOrNull(cur, 0);
  }
  if (!Is(cur, HloOpcode::kAllGather))
    return AllGatherOnSide{};
  result.ag = cur;
  return result;
}

bool ReachesParameter(const HloInstruction *inst) {
  // A DAG has no cycles, so the walk ends; the bound only guards against a
  // broken module.
  for (int steps = 0; inst && steps < 1 << 20; ++steps) {
    switch (inst->opcode()) {
    case HloOpcode::kParameter:
      return true;
    case HloOpcode::kConvert:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kGetTupleElement:
      inst = OperandOrNull(inst, 0);
      break;
    default:
      return false;
    }
  }
  return false;
}

bool WeightInLHS(const HloInstruction *dot) { return WeightOnSide(dot, 0); }
bool WeightInRHS(const HloInstruction *dot) { return WeightOnSide(dot, 1); }

} // namespace loom::hlo
