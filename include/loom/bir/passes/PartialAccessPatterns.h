//===- PartialAccessPatterns.h - Slices and repacks of operands -*- C++ -*-===//
//
// The access-pattern arithmetic of the collective lowering: where a tensor
// can be cut into one slice per core (getScatterDimension), the pattern of
// one slice (createPartialAP), dense repacks for scratch tiles, and the
// canonical form every lowered operand is written in (legalizeAPs).
//
// A free dimension of an access pattern is one [step, count] entry of its
// pattern, outermost first; the partition range is not a free dimension.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_PARTIALACCESSPATTERNS_H
#define LOOM_BIR_PASSES_PARTIALACCESSPATTERNS_H

#include "loom/bir/ir/AccessPattern.h"
#include "loom/bir/ir/Instruction.h"

#include <optional>
#include <vector>

namespace loom::bir {

/// How a tensor is cut into Parts equal slices: along free dimension Dim, or
/// along the partitions, or not at all (each slice is the whole tensor).
struct TensorSplit {
  enum class Kind { FreeDim, Partitions, Whole };
  Kind How = Kind::Whole;
  unsigned Dim = 0;
  unsigned Parts = 1;
};

/// The first free dimension whose count is at least 4 and divides evenly by
/// NumCores (neuronx-cc's getFirstSplittableNonPartitionDimension).
std::optional<unsigned> getScatterDimension(const AccessPattern &AP,
                                            unsigned NumCores);

/// Slice Part of the Parts slices of AP described by S. Slice p of the
/// input pairs element by element with slice p of the output whenever both
/// are cut by the same split and have the same counts and partitions.
AccessPattern createPartialAP(const AccessPattern &AP, const TensorSplit &S,
                              unsigned Part);

/// Rewrites every operand of I into the canonical pattern.
void legalizeAPs(Instruction &I);

/// A pattern with AP's partitions and counts, packed densely from byte 0
/// of a location of its own: element e sits at e * size in its partition.
std::vector<PatternDim> densePattern(const AccessPattern &AP);

/// True if the two patterns may touch a common byte (same location,
/// intersecting partitions and byte ranges).
bool mayOverlap(const AccessPattern &A, const AccessPattern &B);

} // namespace loom::bir

#endif
