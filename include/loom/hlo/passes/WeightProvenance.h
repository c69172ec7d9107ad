//===- WeightProvenance.h - Is this value a (slice of a) weight? ----------===//
//
// A value is a weight when it derives only from entry parameters or from
// loop-invariant loop state through data-movement ops:
//   convert, reshape, bitcast, copy, transpose, broadcast, slice, and
//   dynamic-slice whose start indices are constants or derive only from the
//   loop counter and constants.
// Loop-invariant loop state is element i of a while body's parameter that
// the body's root tuple passes through unchanged (`get-tuple-element(param),
// index=i` at position i), where every while running the body is given, at
// position i of its init tuple, a weight. A loop counter is element i that
// the root advances by a constant (`add`/`subtract` of the element and a
// constant). JAX's scan over stacked layer weights, `[L, ...]` carried through
// the loop and sliced at the layer counter, is the case this proves
// (docs/collective-matmul.md, "Provenance mode").
//
// Every answer is memoized per instruction (and per loop-state element), so
// the analysis of a whole module is linear in its size. The module must not
// change while one analysis object is in use; Reset() forgets every answer.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASSES_WEIGHTPROVENANCE_H
#define LOOM_HLO_PASSES_WEIGHTPROVENANCE_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::hlo {

/// The answer for one value.
struct WeightProof {
  enum Kind : uint8_t {
    kEntryParameter, // derives from a parameter of the entry computation
    kLoopInvariant,  // derives from loop-invariant while state
    kNotAWeight,
  } kind = kNotAWeight;
  /// Weights: the entry parameter or the loop-state get-tuple-element reached.
  const HloInstruction *source = nullptr;
  /// Weights: the dynamic-slice nearest the value on the path, if any.
  const HloInstruction *dynamic_slice = nullptr;
  /// Not a weight: the instruction that stops the proof, and why.
  const HloInstruction *blocker = nullptr;
  enum Why : uint8_t {
    kNone,
    kNotDataMovement,     // blocker is an op outside the list
    kIndexNotDerived,     // blocker is a dynamic-slice; detail = the start index operand
    kLoopStateUpdated,    // blocker is a loop-state gte the root does not pass through
    kNotLoopState,        // blocker is a parameter/gte of a computation no while runs as body
    kInitNotTuple,        // blocker is a while whose init is not a tuple instruction
    kUnreadable,          // blocker's attributes cannot be read
  } why = kNone;
  int64_t detail = 0;

  bool IsWeight() const { return kind != kNotAWeight; }
  /// `dynamic-slice of loop-invariant %gte`, `entry parameter %p`, ...
  std::string Describe() const;
  /// Why it is not a weight, naming the instruction that stops the proof.
  std::string Reason() const;
};

class WeightProvenance {
public:
  explicit WeightProvenance(const HloModule &module);

  WeightProof Prove(const HloInstruction *value);
  /// True when `index` is a constant, or derives only from constants and
  /// loop counters.
  bool DerivesFromLoopCounter(const HloInstruction *index);
  /// Forgets every memoized answer (after the module changed).
  void Reset();

private:
  WeightProof ProveLoopState(const HloComputation *body, int64_t index,
                             const HloInstruction *gte);
  bool IsLoopCounter(const HloComputation *body, int64_t index) const;
  bool IsWhileBody(const HloComputation *computation) const;

  const HloModule &module_;
  /// The whiles running each computation as their body.
  llvm::DenseMap<const HloComputation *, llvm::SmallVector<const HloInstruction *, 1>> whiles_;
  /// Computations some other instruction (not a while's body) calls.
  llvm::DenseMap<const HloComputation *, bool> other_callers_;
  llvm::DenseMap<const HloInstruction *, WeightProof> proofs_;
  llvm::DenseMap<std::pair<const HloComputation *, int64_t>, WeightProof> loop_state_;
  llvm::DenseMap<const HloInstruction *, bool> index_derived_;
  std::vector<const HloInstruction *> path_, stack_; // scratch, reused
};

} // namespace loom::hlo

#endif
