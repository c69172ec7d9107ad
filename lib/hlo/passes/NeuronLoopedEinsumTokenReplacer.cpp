//===- NeuronLoopedEinsumTokenReplacer.cpp - Drop all-gathered tokens -----===//
//
// The rewrite (under NEURON_COLLECTIVE_MATMUL_NXD):
//
//   before:
//     %ag  = (bf16[64,16,16], bf16[]) all-gather(bf16[64,4,16] %w, bf16[] %t), dimensions={1}
//     %tok = bf16[] get-tuple-element(%ag), index=1
//     ...  = ... %tok ...
//   after:
//     ...  = ... %t ...
//
// Nothing is created: ExpandInstruction returns the existing operand and the
// driver rewires the users and removes what died. By default the operand is
// the one at the get-tuple-element's index, exact for any rank-0 element;
// with --neuron-compat it is operand 1 whatever the index, as in Neuron.
// Either way an operand that does not exist or whose shape differs from the
// get-tuple-element's is declined.
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/passes/NeuronLoopedEinsumTokenReplacer.h"

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/support/Error.h"


#include <string>

namespace loom::hlo {
namespace {

/// A rank-0 get-tuple-element of an all-gather: the pass's only candidates.
bool IsTokenOfAllGather(const HloInstruction *inst) {
  return inst->opcode() == HloOpcode::kGetTupleElement && inst->operand_count() == 1 &&
         inst->operand(0)->opcode() == HloOpcode::kAllGather && inst->shape().IsArray() &&
         inst->shape().rank() == 0;
}

/// The all-gather operand that replaces `gte`, or an explanation.
llvm::Expected<HloInstruction *> Replacement(HloInstruction *gte, bool compat) {
  HloInstruction *ag = gte->mutable_operand(0);
  int64_t index = 1;
  if (!compat) {
    auto tuple_index = GetTupleIndex(*gte);
    if (!tuple_index)
      return tuple_index.takeError();
    index = *tuple_index;
  }
  const char *which = compat ? " (--neuron-compat uses operand 1)" : "";
  if (index < 0 || index >= ag->operand_count())
    return makeError("all-gather %" + ag->name() + " has no operand " + llvm::Twine(index) +
                     which);
  HloInstruction *operand = ag->mutable_operand(index);
  if (!operand->shape().Compatible(gte->shape()))
    return makeError("all-gather operand " + llvm::Twine(index) + " is " +
                     operand->shape().ToString(false) + ", not " +
                     gte->shape().ToString(false) + which);
  return operand;
}

} // namespace

llvm::Expected<bool> NeuronLoopedEinsumTokenReplacer::Run(HloModule &module) {
  if (!options_.nxd && !remark_stream())
    return false;
  return OpExpanderPass::Run(module);
}

bool NeuronLoopedEinsumTokenReplacer::IsCandidate(const HloInstruction *inst) const {
  return IsTokenOfAllGather(inst);
}

bool NeuronLoopedEinsumTokenReplacer::InstructionMatchesPattern(HloInstruction *inst) {
  if (!IsTokenOfAllGather(inst))
    return false;
  std::string reason = "NEURON_COLLECTIVE_MATMUL_NXD is not set to 1 (it gates "
                       "neuron_looped_einsum_token_replacer)";
  if (options_.nxd) {
    auto replacement = Replacement(inst, options_.compat);
    if (replacement)
      return true;
    reason = llvm::toString(replacement.takeError());
  }
  Remark(*inst, "missed: " + reason);
  return false;
}

// The "replaced by" remark is written here, not when matching: an earlier
// replacement in the same computation may have rewired the all-gather's
// operand (a chain of token all-gathers), and the remark names what the
// get-tuple-element's users really read.
llvm::Expected<HloInstruction *>
NeuronLoopedEinsumTokenReplacer::ExpandInstruction(HloInstruction *gte) {
  if (!IsTokenOfAllGather(gte))
    return makeError("neuron_looped_einsum_token_replacer: '" + gte->name() +
                     "' is no longer a rank-0 get-tuple-element of an all-gather");
  auto replacement = Replacement(gte, options_.compat);
  if (replacement)
    Remark(*gte, "replaced by %" + (*replacement)->name());
  return replacement;
}

} // namespace loom::hlo
