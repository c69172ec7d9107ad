//===- IndirectDMACopy.cpp - The run-time offset of an IndirectDMACopy -----===//
//
// The offset arithmetic that the verifier (bounds over every index value)
// and the simulator (the offset of one execution) share, so the two cannot
// disagree on which bytes an execution may touch.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/IndirectDMACopy.h"

#include "loom/bir/ir/MemoryLocation.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cstring>

namespace loom::bir {

template <> llvm::ArrayRef<llvm::StringRef> enumNames<IndirectSide>() {
  static const llvm::StringRef Names[] = {"in", "out"};
  return Names;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<IndirectBounds>() {
  static const llvm::StringRef Names[] = {"clamp", "skip"};
  return Names;
}

bool InstIndirectDMACopy::moves(llvm::ArrayRef<int64_t> Values) const {
  if (Bounds == IndirectBounds::Clamp)
    return true;
  for (size_t K = 0; K < Offsets.size() && K < Values.size(); ++K)
    if (Values[K] < 0 || static_cast<uint64_t>(Values[K]) > Offsets[K].Limit)
      return false;
  return true;
}

int64_t InstIndirectDMACopy::getDelta(llvm::ArrayRef<int64_t> Values) const {
  int64_t Delta = 0;
  for (size_t K = 0; K < Offsets.size() && K < Values.size(); ++K) {
    int64_t Limit = static_cast<int64_t>(Offsets[K].Limit);
    Delta += std::clamp<int64_t>(Values[K], 0, Limit) * Offsets[K].Stride;
  }
  return Delta;
}

std::pair<int64_t, int64_t> InstIndirectDMACopy::getDeltaRange() const {
  int64_t Low = 0, High = 0;
  for (const IndirectOffset &O : Offsets) {
    int64_t Span = O.Stride * static_cast<int64_t>(O.Limit);
    (Span < 0 ? Low : High) += Span;
  }
  return {Low, High};
}

int64_t readIndexValue(DataType Type, const uint8_t *P) {
  switch (Type) {
  case DataType::INT8: {
    int8_t V;
    std::memcpy(&V, P, 1);
    return V;
  }
  case DataType::INT16: {
    int16_t V;
    std::memcpy(&V, P, 2);
    return V;
  }
  case DataType::INT32: {
    int32_t V;
    std::memcpy(&V, P, 4);
    return V;
  }
  case DataType::UINT8:
    return *P;
  case DataType::UINT16: {
    uint16_t V;
    std::memcpy(&V, P, 2);
    return V;
  }
  case DataType::UINT32: {
    uint32_t V;
    std::memcpy(&V, P, 4);
    return V;
  }
  case DataType::INT64: {
    int64_t V;
    std::memcpy(&V, P, 8);
    return V;
  }
  case DataType::UINT64: {
    // Beyond int64's range the value clamps to every limit anyway.
    uint64_t V;
    std::memcpy(&V, P, 8);
    return V > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(V);
  }
  default:
    return 0;
  }
}

std::optional<std::pair<std::string, std::string>>
checkIndirectDMACopy(const InstIndirectDMACopy &I) {
  using Problem = std::pair<std::string, std::string>;
  llvm::ArrayRef<IndirectOffset> Offsets = I.getOffsets();
  if (Offsets.empty())
    return Problem{".offsets", "an IndirectDMACopy needs at least one offset"};
  if (Offsets.size() > InstIndirectDMACopy::MaxOffsets)
    return Problem{".offsets", "at most " +
                                   llvm::Twine(InstIndirectDMACopy::MaxOffsets)
                                       .str() +
                                   " offsets"};
  if (I.inputs().size() != 1 + Offsets.size())
    return Problem{".inputs", "an IndirectDMACopy with " +
                                  std::to_string(Offsets.size()) +
                                  " offset(s) has " +
                                  std::to_string(1 + Offsets.size()) +
                                  " inputs (the data, then one index each), not " +
                                  std::to_string(I.inputs().size())};
  for (size_t K = 0; K < Offsets.size(); ++K) {
    std::string P = ".offsets[" + std::to_string(K) + "]";
    const IndirectOffset &O = Offsets[K];
    uint64_t Stride = O.Stride < 0 ? 0 - static_cast<uint64_t>(O.Stride)
                                   : static_cast<uint64_t>(O.Stride);
    uint64_t Max = static_cast<uint64_t>(InstIndirectDMACopy::MaxTermSpan);
    if (O.Limit >= Max || Stride >= Max ||
        (O.Limit != 0 && Stride > Max / O.Limit))
      return Problem{P, "stride " + std::to_string(O.Stride) + " times limit " +
                            std::to_string(O.Limit) + " reaches 2^40 elements or more"};
    const AccessPattern &Ix = I.inputs()[1 + K];
    std::string IP = ".inputs[" + std::to_string(1 + K) + "]";
    if (isFloatType(Ix.getType()))
      return Problem{IP, "an index is an integer, not " +
                             enumName(Ix.getType()).str()};
    if (Ix.getNumElements() != 1)
      return Problem{IP, "an index is one element, not " +
                             std::to_string(Ix.getNumElements())};
  }
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (In.getType() != Out.getType())
    return Problem{".outputs[0].dtype", "an IndirectDMACopy does not convert " +
                                            enumName(In.getType()).str() +
                                            " to " +
                                            enumName(Out.getType()).str()};
  if (In.getNumElements() != Out.getNumElements())
    return Problem{".outputs[0]", "writes " + std::to_string(Out.getNumElements()) +
                                      " elements but reads " +
                                      std::to_string(In.getNumElements())};
  DataType T = Out.getType();
  if (I.isAccumulate() && T != DataType::FP32 && T != DataType::BF16 &&
      T != DataType::FP16)
    return Problem{".accumulate", "DMA accumulation adds fp32, bf16 or fp16, not " +
                                      enumName(T).str()};
  // Every index value keeps the dynamic operand inside its location: the
  // checks of every access pattern saw it at delta 0; here the extremes.
  const AccessPattern &D = I.getDynamicOperand();
  std::optional<ByteRange> R = D.getByteRange();
  if (!R)
    return std::nullopt; // the pattern check reports it
  auto [Low, High] = I.getDeltaRange();
  int64_t Size = getDataTypeSize(D.getType());
  // |delta| < 8 * 2^40 elements of at most 4 bytes: no product overflows.
  uint64_t Below = static_cast<uint64_t>(-Low * Size);
  uint64_t Above = static_cast<uint64_t>(High * Size);
  uint64_t Bpp = D.getLocation()->getBytesPerPartition();
  std::string Which = I.getSide() == IndirectSide::In ? ".inputs[0]" : ".outputs[0]";
  if (Below > R->Begin || R->End > Bpp || Above > Bpp - R->End)
    return Problem{Which, "with its offsets it may touch bytes [" +
                              std::to_string(static_cast<int64_t>(R->Begin) + Low * Size) +
                              ", " + std::to_string(R->End + Above) +
                              "), outside the " + std::to_string(Bpp) +
                              " bytes per partition of '" +
                              D.getLocation()->getName().str() + "'"};
  return std::nullopt;
}

} // namespace loom::bir
