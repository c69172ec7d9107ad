//===- CollectiveMatmulMatchers.h - Where does a dot's all-gather sit? ----===//
//
// The structural predicates neuron_looped_einsum_replacer is built from,
// named as in Neuron's hlo-opt. Each one looks at a `dot` and says whether an
// all-gather feeds one of its operands in one particular shape:
//
//   MatchAllGatherInDotLhs     dot(all-gather(w), x)
//   MatchAllGatherInDotLhsRS   dot(reshape(all-gather(w)), x)
//   MatchAllGatherInDotRhs     dot(x, all-gather(w))
//   MatchAllGatherInDotRhsRS   dot(x, reshape(all-gather(w)))
//   MatchAllGatherInDotLhsNxD  dot(reshape(get-tuple-element(all-gather(w0, w1, ...))), x)
//                              (NeuronX Distributed's combined all-gather)
//
// None of them dereferences anything that is not there: a non-dot, a dot
// without two operands or a chain that stops early simply does not match.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASSES_COLLECTIVEMATMULMATCHERS_H
#define LOOM_HLO_PASSES_COLLECTIVEMATMULMATCHERS_H

#include "loom/hlo/ir/HloInstruction.h"

#include <cstdint>

namespace loom::hlo {

bool MatchAllGatherInDotLhs(const HloInstruction *dot);
bool MatchAllGatherInDotLhsRS(const HloInstruction *dot);
bool MatchAllGatherInDotRhs(const HloInstruction *dot);
bool MatchAllGatherInDotRhsRS(const HloInstruction *dot);
bool MatchAllGatherInDotLhsNxD(const HloInstruction *dot);

/// `inst` itself if it is an all-gather, else the first all-gather met by
/// following operand 0 at most `depth` times; nullptr if none.
HloInstruction *GetRootAllGather(HloInstruction *inst, int depth = 4);

/// convert(get-tuple-element(parameter)): how a loop-carried weight of a
/// different element type surfaces in a while body. neuronx-cc 2.24's named
/// signature; ReachesParameter accepts it as one of its chains.
bool IsConvertGetTupleElementParameter(const HloInstruction *inst);

/// Where an all-gather feeds one side of a dot. `ag` is null when the side
/// is not `[reshape](all-gather)` or `[reshape](get-tuple-element(all-gather))`.
struct AllGatherOnSide {
  HloInstruction *ag = nullptr;
  /// The all-gather operand whose gathered value reaches the dot: the
  /// get-tuple-element's index for a combined all-gather, else 0.
  int64_t operand_index = 0;
  /// The get-tuple-element between the dot and the all-gather, if any.
  HloInstruction *gte = nullptr;
};
AllGatherOnSide FindAllGatherOnSide(const HloInstruction *dot, int64_t side);

/// True when the value `inst` reaches a `parameter` (of any computation,
/// a while body's included) through a chain of convert, reshape, bitcast and
/// get-tuple-element, each followed through its operand 0.
bool ReachesParameter(const HloInstruction *inst);

/// The lhs (operand 0) / rhs (operand 1) of `dot` is a gathered weight: the
/// side is `[reshape]([get-tuple-element](all-gather))`, and the all-gather
/// operand that feeds the dot reaches a parameter (ReachesParameter).
bool WeightInLHS(const HloInstruction *dot);
bool WeightInRHS(const HloInstruction *dot);

} // namespace loom::hlo

#endif
