#include "loom/bir/passes/PartialAccessPatterns.h"

#include <cassert>

namespace loom::bir {

std::optional<unsigned> getScatterDimension(const AccessPattern &AP,
                                            unsigned NumCores) {
  llvm::ArrayRef<PatternDim> P = AP.getPattern();
  for (unsigned K = 0; K < P.size(); ++K)
    if (P[K].Count >= 4 && NumCores && P[K].Count % NumCores == 0)
      return K;
  return std::nullopt;
}

AccessPattern createPartialAP(const AccessPattern &AP, const TensorSplit &S,
                              unsigned Part) {
  AccessPattern Slice = AP.clone();
  switch (S.How) {
  case TensorSplit::Kind::Whole:
    return Slice;
  case TensorSplit::Kind::Partitions: {
    unsigned Each = AP.getNumPartitions() / S.Parts;
    Slice.setPartitions(AP.getStartPartition() + Part * Each, Each);
    return Slice;
  }
  case TensorSplit::Kind::FreeDim: {
    std::vector<PatternDim> P(AP.getPattern().begin(), AP.getPattern().end());
    assert(S.Dim < P.size() && P[S.Dim].Count % S.Parts == 0);
    uint64_t Each = P[S.Dim].Count / S.Parts;
    // The slice starts Part * Each steps into the dimension; with a negative
    // step that is below the offset, but never below the pattern's lowest
    // byte, which the verifier keeps inside the location.
    int64_t Shift = P[S.Dim].Step * int64_t(Part * Each) *
                    int64_t(getDataTypeSize(AP.getType()));
    Slice.setOffset(uint64_t(int64_t(AP.getOffset()) + Shift));
    P[S.Dim].Count = Each;
    Slice.setPattern(std::move(P));
    return Slice;
  }
  }
  return Slice;
}

void legalizeAPs(Instruction &I) {
  for (AccessPattern &AP : I.inputs())
    AP.setPattern(normalizePattern(AP.getPattern()));
  for (AccessPattern &AP : I.outputs())
    AP.setPattern(normalizePattern(AP.getPattern()));
}

std::vector<PatternDim> densePattern(const AccessPattern &AP) {
  std::vector<PatternDim> P(AP.getPattern().begin(), AP.getPattern().end());
  int64_t Stride = 1;
  for (auto It = P.rbegin(); It != P.rend(); ++It) {
    It->Step = Stride;
    Stride *= int64_t(It->Count);
  }
  return P;
}

bool mayOverlap(const AccessPattern &A, const AccessPattern &B) {
  if (A.getLocation() != B.getLocation())
    return false;
  unsigned AEnd = A.getStartPartition() + A.getNumPartitions();
  unsigned BEnd = B.getStartPartition() + B.getNumPartitions();
  if (A.getStartPartition() >= BEnd || B.getStartPartition() >= AEnd)
    return false;
  std::optional<ByteRange> RA = A.getByteRange(), RB = B.getByteRange();
  if (!RA || !RB)
    return true;
  return RA->Begin < RB->End && RB->Begin < RA->End;
}

} // namespace loom::bir
