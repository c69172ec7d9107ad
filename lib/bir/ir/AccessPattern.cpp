#include "loom/bir/ir/AccessPattern.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace loom::bir {

uint64_t AccessPattern::getNumElementsPerPartition() const {
  uint64_t N = 1;
  for (const PatternDim &D : Pattern)
    N = llvm::SaturatingMultiply(N, D.Count);
  return N;
}

uint64_t AccessPattern::getNumElements() const {
  return llvm::SaturatingMultiply(getNumElementsPerPartition(),
                                  uint64_t(NumPartitions));
}

std::optional<ByteRange> AccessPattern::getByteRange() const {
  constexpr uint64_t MaxCount = std::numeric_limits<int64_t>::max();
  // Lowest and highest element reached, relative to the offset.
  int64_t Low = 0, High = 0;
  for (const PatternDim &D : Pattern) {
    if (D.Count == 0 || D.Count > MaxCount)
      return std::nullopt;
    llvm::Optional<int64_t> Span =
        llvm::checkedMul<int64_t>(D.Step, D.Count - 1);
    int64_t &Side = Span && *Span < 0 ? Low : High;
    llvm::Optional<int64_t> Moved =
        Span ? llvm::checkedAdd<int64_t>(Side, *Span) : llvm::None;
    if (!Moved)
      return std::nullopt;
    Side = *Moved;
  }
  int64_t Size = getDataTypeSize(Type);
  llvm::Optional<int64_t> LowBytes = llvm::checkedMul<int64_t>(Low, Size);
  llvm::Optional<int64_t> EndBytes =
      llvm::checkedMulAdd<int64_t>(High, Size, Size);
  if (!LowBytes || !EndBytes || uint64_t(-*LowBytes) > Offset)
    return std::nullopt;
  llvm::Optional<uint64_t> End =
      llvm::checkedAddUnsigned<uint64_t>(Offset, uint64_t(*EndBytes));
  if (!End)
    return std::nullopt;
  return ByteRange{Offset - uint64_t(-*LowBytes), *End};
}

std::vector<PatternDim> normalizePattern(llvm::ArrayRef<PatternDim> P) {
  std::vector<PatternDim> Out;
  for (const PatternDim &D : P) {
    if (D.Count == 1)
      continue;
    // An outer dimension whose step is the inner one's whole extent walks
    // on where the inner one stops: the two are one longer dimension.
    if (!Out.empty() && Out.back().Step == D.Step * int64_t(D.Count)) {
      Out.back() = {D.Step, Out.back().Count * D.Count};
      continue;
    }
    Out.push_back(D);
  }
  return Out;
}

} // namespace loom::bir
