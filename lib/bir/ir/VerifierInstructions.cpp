//===- VerifierInstructions.cpp - What each instruction kind requires -----===//
//
// The per-kind part of the module verifier (VerifierInternal.h): engines,
// operand shapes and types, attributes, the lanes and tiles of the copies,
// the groups of collectives and barriers.
//
//===----------------------------------------------------------------------===//

#include "VerifierInternal.h"

#include "loom/support/Error.h"

#include "llvm/Support/Casting.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>

namespace loom::bir {

using namespace verifier;

namespace {

/// The moving operand of a matmul fills at most one PSUM bank: 2 KiB per
/// partition, 512 fp32 values.
constexpr uint64_t MaxMatmulFreeSize = 512;

/// The output element count a collective over G cores needs for In input
/// elements; none if In does not split evenly.
std::optional<uint64_t> collectiveOutputSize(CollectiveKind K, uint64_t In,
                                             uint64_t G) {
  switch (K) {
  case CollectiveKind::ReduceScatter:
    return In % G ? std::nullopt : std::optional<uint64_t>(In / G);
  case CollectiveKind::AllGather:
    return In * G;
  case CollectiveKind::AllToAll:
    return In % G ? std::nullopt : std::optional<uint64_t>(In);
  default:
    return In;
  }
}

} // namespace

llvm::Error ModuleVerifier::verifyKind(const Instruction &I,
                                       const std::string &P) {
  switch (I.getType()) {
  case InstructionType::Matmul:
    return verifyMatmul(I, P);
  case InstructionType::Activation:
    return verifyActivation(llvm::cast<InstActivation>(I), P);
  case InstructionType::TensorTensor:
    return verifyTensorTensor(llvm::cast<InstTensorTensor>(I), P);
  case InstructionType::Memset:
  case InstructionType::TensorCopy:
  case InstructionType::TensorConvert:
    return verifyOnChipElementwise(I, P);
  case InstructionType::Select:
    return verifySelect(I, P);
  case InstructionType::TensorReduce:
    return verifyTensorReduce(llvm::cast<InstTensorReduce>(I), P);
  case InstructionType::Iota:
    return verifyIota(llvm::cast<InstIota>(I), P);
  case InstructionType::DMACopy:
    if (llvm::Error E = verifySignal(llvm::cast<InstCopyBase>(I), P))
      return E;
    return verifyDMACopy(llvm::cast<InstDMACopy>(I), P);
  case InstructionType::GPSIMDSB2SB:
    if (llvm::Error E = verifySignal(llvm::cast<InstCopyBase>(I), P))
      return E;
    return verifySB2SB(I, P);
  case InstructionType::SemaphoreWait: {
    const auto &W = llvm::cast<InstSemaphoreWait>(I);
    if (W.getSemaphore().empty())
      return failAt(P + ".semaphore", "a SemaphoreWait needs a semaphore name");
    if (W.getCount() == 0)
      return failAt(P + ".count", "a SemaphoreWait takes at least 1");
    return llvm::Error::success();
  }
  case InstructionType::CollectiveCompute:
    return verifyCollective(llvm::cast<InstCollectiveCompute>(I), P);
  case InstructionType::CoreBarrier:
    return verifyBarrier(llvm::cast<InstCoreBarrier>(I), P);
  case InstructionType::TensorCompletion:
    return verifyCompletion(llvm::cast<InstTensorCompletion>(I), P);
  case InstructionType::Branch:
    return llvm::Error::success();
  }
  llvm_unreachable("unknown instruction type");
}

llvm::Error ModuleVerifier::verifyMatmul(const Instruction &I,
                                         const std::string &P) {
  const AccessPattern &Stat = I.inputs()[0], &Mov = I.inputs()[1];
  const AccessPattern &Out = I.outputs()[0];
  for (size_t K = 0; K < 2; ++K)
    if (I.inputs()[K].getLocation()->getKind() != MemoryKind::SB)
      return failAt(indexed(P, "inputs", K), "a Matmul reads SB");
  if (Out.getLocation()->getKind() != MemoryKind::PSUM)
    return failAt(P + ".outputs[0]", "a Matmul writes PSUM");
  if (Out.getType() != DataType::FP32)
    return failAt(P + ".outputs[0].dtype", "a Matmul writes fp32");
  if (!isFloatType(Stat.getType()) || Stat.getType() != Mov.getType())
    return failAt(P + ".inputs", "both operands need one floating-point type");
  if (Stat.getNumPartitions() != Mov.getNumPartitions())
    return failAt(P + ".inputs[1]", "moving operand has " +
                                        llvm::Twine(Mov.getNumPartitions()) +
                                        " partitions; the stationary one " +
                                        llvm::Twine(Stat.getNumPartitions()));
  if (Mov.getNumElementsPerPartition() > MaxMatmulFreeSize)
    return failAt(P + ".inputs[1]", "moving operand has more than " +
                                        llvm::Twine(MaxMatmulFreeSize) +
                                        " elements per partition");
  if (Out.getNumPartitions() != Stat.getNumElementsPerPartition() ||
      Out.getNumElementsPerPartition() != Mov.getNumElementsPerPartition())
    return failAt(P + ".outputs[0]",
                  "output is " + shapeOf(Out) + "; stationary^T x moving is [" +
                      llvm::Twine(Stat.getNumElementsPerPartition()) + " x " +
                      llvm::Twine(Mov.getNumElementsPerPartition()) + "]");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyOnChipElementwise(const Instruction &I,
                                                    const std::string &P) {
  const AccessPattern &Out = I.outputs()[0];
  if (!isOnChip(Out.getLocation()->getKind()))
    return failAt(P + ".outputs[0]", typeName(I) + " writes SB or PSUM only");
  for (size_t K = 0; K < I.inputs().size(); ++K) {
    const AccessPattern &In = I.inputs()[K];
    if (!isOnChip(In.getLocation()->getKind()))
      return failAt(indexed(P, "inputs", K),
                    typeName(I) + " reads SB or PSUM only");
    if (!sameShape(In, Out))
      return failAt(indexed(P, "inputs", K), "shape " + shapeOf(In) +
                                                 " differs from the output's " +
                                                 shapeOf(Out));
  }
  return llvm::Error::success();
}

namespace {

/// The range of integer type T; none for a floating type.
std::optional<std::pair<int64_t, int64_t>> intRange(DataType T) {
  switch (T) {
  case DataType::INT8: return std::pair<int64_t, int64_t>{INT8_MIN, INT8_MAX};
  case DataType::INT16: return std::pair<int64_t, int64_t>{INT16_MIN, INT16_MAX};
  case DataType::INT32: return std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX};
  case DataType::UINT8: return std::pair<int64_t, int64_t>{0, UINT8_MAX};
  case DataType::UINT16: return std::pair<int64_t, int64_t>{0, UINT16_MAX};
  case DataType::UINT32: return std::pair<int64_t, int64_t>{0, UINT32_MAX};
  case DataType::INT64: return std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX};
  // uint64 values above INT64_MAX are not written as immediates.
  case DataType::UINT64: return std::pair<int64_t, int64_t>{0, INT64_MAX};
  default: return std::nullopt;
  }
}

} // namespace

llvm::Error ModuleVerifier::verifyActivation(const InstActivation &I,
                                             const std::string &P) {
  if (!std::isfinite(I.getScale()))
    return failAt(P + ".scale", "the scale must be a finite number");
  if (llvm::Error E = verifyOnChipElementwise(I, P))
    return E;
  DataType In = I.inputs()[0].getType(), Out = I.outputs()[0].getType();
  // docs/bir.md "Activation": the integer form runs when the input and the
  // output have one integer type; it has no scale.
  bool IntegerForm = !isFloatType(In) && In == Out && hasIntegerForm(I.getFunc());
  if (isIntegerOnly(I.getFunc()) && !IntegerForm)
    return failAt(P + ".func", enumName(I.getFunc()) +
                                   " needs an input and an output of one "
                                   "integer type, not " +
                                   enumName(In) + " and " + enumName(Out));
  if (IntegerForm && I.getScale() != 1.0)
    return failAt(P + ".scale", "an Activation from " + enumName(In) + " to " +
                                    enumName(Out) +
                                    " computes exactly in integers and takes "
                                    "no scale (1)");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyTensorTensor(const InstTensorTensor &I,
                                               const std::string &P) {
  if (llvm::Error E = verifyOnChipElementwise(I, P))
    return E;
  DataType T0 = I.inputs()[0].getType(), T1 = I.inputs()[1].getType();
  bool Int0 = !isFloatType(T0), Int1 = !isFloatType(T1);
  // docs/bir.md "TensorTensor": integer operands compute exactly in their
  // one type; two integer types would leave the arithmetic type open.
  if (Int0 && Int1 && T0 != T1)
    return failAt(P + ".inputs[1].dtype",
                  "integer operands need one type, not " + enumName(T0) +
                      " and " + enumName(T1));
  if (isBitwise(I.getOp()) && !(Int0 && Int1))
    return failAt(P + ".op", enumName(I.getOp()) +
                                 " needs integer operands, not " +
                                 enumName(T0) + " and " + enumName(T1));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifySelect(const Instruction &I,
                                         const std::string &P) {
  if (llvm::Error E = verifyOnChipElementwise(I, P))
    return E;
  const AccessPattern &Pred = I.inputs()[0], &Out = I.outputs()[0];
  if (Pred.getType() != DataType::UINT8)
    return failAt(P + ".inputs[0].dtype",
                  "the predicate of a Select is uint8 (0 or 1), not " +
                      enumName(Pred.getType()));
  for (size_t K = 1; K < 3; ++K)
    if (I.inputs()[K].getType() != Out.getType())
      return failAt(indexed(P, "inputs", K) + ".dtype",
                    "a Select copies " + enumName(I.inputs()[K].getType()) +
                        " but writes " + enumName(Out.getType()) +
                        "; it does not convert");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyTensorReduce(const InstTensorReduce &I,
                                               const std::string &P) {
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (!isOnChip(In.getLocation()->getKind()))
    return failAt(P + ".inputs[0]", "TensorReduce reads SB or PSUM only");
  if (!isOnChip(Out.getLocation()->getKind()))
    return failAt(P + ".outputs[0]", "TensorReduce writes SB or PSUM only");
  uint64_t NIn = In.getNumElementsPerPartition(),
           NOut = Out.getNumElementsPerPartition();
  if (In.getNumPartitions() != Out.getNumPartitions() || NIn % NOut != 0)
    return failAt(P + ".outputs[0]",
                  "output is " + shapeOf(Out) + "; a reduction of input " +
                      shapeOf(In) +
                      " needs its partitions and a divisor of its "
                      "elements per partition");
  if (isComparison(I.getOp()))
    return failAt(P + ".op", "a TensorReduce folds with an arithmetic or "
                             "bitwise op, not " +
                                 enumName(I.getOp()));
  DataType TI = In.getType(), TO = Out.getType();
  bool IntIn = !isFloatType(TI), IntOut = !isFloatType(TO);
  if ((IntIn || IntOut) && TI != TO)
    return failAt(P + ".outputs[0].dtype",
                  "an integer TensorReduce reads and writes one type, not " +
                      enumName(TI) + " and " + enumName(TO));
  if (isBitwise(I.getOp()) && !IntIn)
    return failAt(P + ".op", enumName(I.getOp()) +
                                 " needs integer operands, not " +
                                 enumName(TI));
  if (!I.isAccumulate() && IntOut) {
    auto [Lo, Hi] = *intRange(TO);
    double V = I.getInit();
    if (!(V >= double(Lo) && V <= double(Hi)) || V != std::trunc(V))
      return failAt(P + ".init", "the initial value of a reduction into " +
                                     enumName(TO) +
                                     " must be an integer from " +
                                     llvm::Twine(Lo) + " to " +
                                     llvm::Twine(Hi));
  }
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyIota(const InstIota &I,
                                       const std::string &P) {
  const AccessPattern &Out = I.outputs()[0];
  if (!isOnChip(Out.getLocation()->getKind()))
    return failAt(P + ".outputs[0]", "Iota writes SB or PSUM only");
  llvm::ArrayRef<PatternDim> Pattern = Out.getPattern();
  if (I.getMultipliers().size() != Pattern.size())
    return failAt(P + ".multipliers",
                  llvm::Twine(I.getMultipliers().size()) +
                      " multiplier(s) for an output pattern of " +
                      llvm::Twine(Pattern.size()) + " dimension(s)");
  // The smallest and largest value, exactly: every term is at most 2^63 *
  // 2^32 in magnitude, and there are at most 2^32 elements per partition.
  __int128 Lo = I.getStart(), Hi = I.getStart();
  auto Span = [&](int64_t Step, uint64_t Count) {
    __int128 Far = __int128(Step) * __int128(Count - 1);
    (Far < 0 ? Lo : Hi) += Far;
  };
  Span(I.getPartitionStep(), Out.getNumPartitions());
  for (size_t K = 0; K < Pattern.size(); ++K)
    Span(I.getMultipliers()[K], Pattern[K].Count);
  __int128 Min = INT64_MIN, Max = INT64_MAX;
  if (std::optional<std::pair<int64_t, int64_t>> R = intRange(Out.getType())) {
    Min = R->first;
    Max = R->second;
  }
  if (Lo < Min || Hi > Max)
    return failAt(P, "the values of an Iota into " + enumName(Out.getType()) +
                         " reach outside its range");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyDMACopy(const InstDMACopy &I,
                                          const std::string &P) {
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (In.getType() != Out.getType())
    return failAt(P + ".outputs[0].dtype", "a DMACopy does not convert " +
                                               enumName(In.getType()) + " to " +
                                               enumName(Out.getType()));
  if (In.getNumElements() != Out.getNumElements())
    return failAt(P + ".outputs[0]", "writes " +
                                         llvm::Twine(Out.getNumElements()) +
                                         " elements but reads " +
                                         llvm::Twine(In.getNumElements()));
  DataType T = Out.getType();
  if (I.isAccumulate() && T != DataType::FP32 && T != DataType::BF16 &&
      T != DataType::FP16)
    return failAt(P + ".accumulate",
                  "DMA accumulation adds fp32, bf16 or fp16, not " +
                      enumName(T));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifySB2SB(const Instruction &I,
                                        const std::string &P) {
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (In.getLocation()->getKind() != MemoryKind::SB)
    return failAt(P + ".inputs[0]", "a GPSIMDSB2SB reads SB");
  if (Out.getLocation()->getKind() != MemoryKind::SB)
    return failAt(P + ".outputs[0]", "a GPSIMDSB2SB writes SB");
  if (In.getType() != Out.getType())
    return failAt(P + ".outputs[0].dtype",
                  "a GPSIMDSB2SB does not convert types");
  if (!sameShape(In, Out))
    return failAt(P + ".outputs[0]", "shape " + shapeOf(Out) +
                                         " differs from the input's " +
                                         shapeOf(In));
  uint64_t Bytes =
      In.getNumElementsPerPartition() * getDataTypeSize(In.getType());
  uint64_t Padded =
      InstGPSIMDSB2SB::getEffectiveBytesPerPartition(Bytes, In.getType());
  if (Padded > InstGPSIMDSB2SB::MaxBytesPerPartition)
    return failAt(P + ".inputs[0]",
                  llvm::Twine(Padded) +
                      " bytes per partition in 4-byte lanes exceed the " +
                      llvm::Twine(InstGPSIMDSB2SB::MaxBytesPerPartition) +
                      " a GPSIMDSB2SB moves");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyCollective(const InstCollectiveCompute &I,
                                             const std::string &P) {
  if (llvm::Error E = verifyCores(I.getGroup(), P + ".group", I.isLocal()))
    return E;
  CollectiveKind K = I.getKind();
  size_t G = I.getGroup().size();
  if ((K == CollectiveKind::SendRecv || K == CollectiveKind::SendRecvCCE) &&
      G != 2)
    return failAt(P + ".group", enumName(K) + " swaps between 2 cores, not " +
                                    llvm::Twine(G));
  if (isReducingCollective(K) != (I.getReduceOp() != ReduceOp::None)) {
    llvm::StringRef Rule =
        isReducingCollective(K) ? " needs a reduce op" : " takes no reduce op";
    return failAt(P + ".reduce", enumName(K) + Rule);
  }
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (In.getType() != Out.getType())
    return failAt(P + ".outputs[0].dtype",
                  "a collective does not convert types");
  // The per-peer sizes of an AllToAllV are not in the IR.
  if (K == CollectiveKind::AllToAllV)
    return llvm::Error::success();
  std::optional<uint64_t> Want =
      collectiveOutputSize(K, In.getNumElements(), G);
  if (!Want)
    return failAt(P + ".inputs[0]", llvm::Twine(In.getNumElements()) +
                                        " elements do not split evenly over " +
                                        llvm::Twine(G) + " cores");
  if (*Want != Out.getNumElements())
    return failAt(P + ".outputs[0]",
                  enumName(K) + " of " + llvm::Twine(In.getNumElements()) +
                      " elements over " + llvm::Twine(G) + " cores writes " +
                      llvm::Twine(*Want) + " elements, not " +
                      llvm::Twine(Out.getNumElements()));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyBarrier(const InstCoreBarrier &I,
                                          const std::string &P) {
  if (llvm::Error E = verifyCores(I.getCores(), P + ".cores", /*Local=*/true))
    return E;
  auto [It, New] = BarrierIds.try_emplace(I.getId(), &I);
  if (!New)
    return failAt(P + ".id", "barrier id " + llvm::Twine(I.getId()) +
                                 " is already used by '" +
                                 It->second->getName() + "'");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyCores(llvm::ArrayRef<unsigned> Cores,
                                        const std::string &P, bool Local) {
  if (Cores.empty())
    return failAt(P, "needs at least one core");
  std::set<unsigned> Seen;
  unsigned Lnc = M.getTargetOptions().LncSize;
  for (size_t K = 0; K < Cores.size(); ++K) {
    if (!Seen.insert(Cores[K]).second)
      return failAt(at(P, K),
                    "core " + llvm::Twine(Cores[K]) + " is listed twice");
    if (Local && Cores[K] >= Lnc)
      return failAt(at(P, K), "core " + llvm::Twine(Cores[K]) +
                                  " is outside the logical core (lnc_size " +
                                  llvm::Twine(Lnc) + ")");
  }
  if (Local && !Seen.count(M.getNeuronCoreId()))
    return failAt(P, "core " + llvm::Twine(M.getNeuronCoreId()) +
                         ", which runs this module, is not listed");
  return llvm::Error::success();
}

} // namespace loom::bir
