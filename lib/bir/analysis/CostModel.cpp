//===- CostModel.cpp - How long a BIR instruction takes on its engine -----===//
//
// The formulas are in CostModel.h and docs/cost-model.md; the parameter
// table below is the one place that names the parameters for tools.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/analysis/CostModel.h"

#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::bir::analysis {
namespace {

/// How a parameter is stored and what values it accepts.
struct ParamEntry {
  CostModelParamInfo Info;
  double CostModelParams::*Real; ///< null for DmaEnginesPerCore
  /// Zero allowed (a latency) or not (a throughput, a count).
  bool AllowZero;
};

using P = CostModelParams;

const ParamEntry ParamTable[] = {
    {{"dma-engines-per-core", "queues",
      "DMA queues per core; the collectives' reference cost spreads over all of them"},
     nullptr, false},
    {{"dma-bytes-per-ns", "B/ns", "throughput of one DMA queue"}, &P::DmaBytesPerNs, false},
    {{"dma-fixed-ns", "ns", "fixed cost of a DMACopy: from its trigger to its first byte"},
     &P::DmaFixedNs, true},
    {{"dma-descriptor-bytes", "B",
      "overhead of one DMA descriptor (contiguous chunk), as bytes at the queue's rate"},
     &P::DmaDescriptorBytes, true},
    {{"dma-accumulate-factor", "x",
      "throughput of an accumulating DMACopy relative to a plain copy"},
     &P::DmaAccumulateFactor, false},
    {{"sb2sb-bytes-per-ns", "B/ns",
      "throughput of one core's GPSIMD SBUF-to-SBUF copy (4-byte lanes)"},
     &P::Sb2sbBytesPerNs, false},
    {{"sb2sb-start-ns", "ns", "fixed cost of a GPSIMDSB2SB"}, &P::Sb2sbStartNs, true},
    {{"barrier-ns", "ns", "CoreBarrier from the last core's arrival to its release"},
     &P::BarrierNs, true},
    {{"semaphore-signal-ns", "ns",
      "from a copy's completion to the increment of the semaphore it signals"},
     &P::SemaphoreSignalNs, true},
    {{"engine-fixed-ns", "ns", "fixed issue cost of a compute or synchronization instruction"},
     &P::EngineFixedNs, true},
    {{"pe-bf16-flops-per-ns", "FLOP/ns", "tensor engine throughput on bf16 / fp16 inputs"},
     &P::PeBf16FlopsPerNs, false},
    {{"pe-fp8-flops-per-ns", "FLOP/ns", "tensor engine throughput on fp8 inputs"},
     &P::PeFp8FlopsPerNs, false},
    {{"pe-fp32-flops-per-ns", "FLOP/ns", "tensor engine throughput on fp32 inputs"},
     &P::PeFp32FlopsPerNs, false},
    {{"act-elems-per-ns", "elem/ns", "ACT elements per ns in each partition"},
     &P::ActElemsPerNs, false},
    {{"dve-elems-per-ns", "elem/ns", "DVE elements per ns in each partition"},
     &P::DveElemsPerNs, false},
    {{"pool-elems-per-ns", "elem/ns", "POOL (GPSIMD) elements per ns in each partition"},
     &P::PoolElemsPerNs, false},
    {{"remote-bytes-per-ns", "B/ns",
      "chip-to-chip bandwidth of one core's collective across devices"},
     &P::RemoteBytesPerNs, false},
    {{"remote-step-ns", "ns", "latency of one ring step of a collective across devices"},
     &P::RemoteStepNs, true},
};

const ParamEntry *findParam(llvm::StringRef Name) {
  for (const ParamEntry &E : ParamTable)
    if (E.Info.Name == Name)
      return &E;
  return nullptr;
}

/// Saturating product.
uint64_t mulSat(uint64_t A, uint64_t B) {
  if (A != 0 && B > std::numeric_limits<uint64_t>::max() / A)
    return std::numeric_limits<uint64_t>::max();
  return A * B;
}

uint64_t bytesOf(const AccessPattern &AP) {
  return mulSat(AP.getNumElements(), getDataTypeSize(AP.getType()));
}

} // namespace

llvm::ArrayRef<CostModelParamInfo> getCostModelParamInfos() {
  static const std::vector<CostModelParamInfo> Infos = [] {
    std::vector<CostModelParamInfo> V;
    for (const ParamEntry &E : ParamTable)
      V.push_back(E.Info);
    return V;
  }();
  return Infos;
}

llvm::Error setCostModelParam(CostModelParams &Params, llvm::StringRef Name, double Value) {
  const ParamEntry *E = findParam(Name);
  if (!E)
    return makeError("unknown cost model parameter '" + Name +
                     "' (docs/cost-model.md lists them)");
  if (!std::isfinite(Value))
    return makeError("cost model parameter '" + Name + "' must be a finite number");
  if (Value < 0 || (Value == 0 && !E->AllowZero))
    return makeError("cost model parameter '" + Name + "' must be " +
                     (E->AllowZero ? "at least 0" : "greater than 0") + ", not " +
                     llvm::formatv("{0}", Value));
  if (!E->Real) {
    if (Value != std::floor(Value) || Value > 65535)
      return makeError("cost model parameter '" + Name +
                       "' must be a whole number from 1 to 65535");
    Params.DmaEnginesPerCore = static_cast<unsigned>(Value);
    return llvm::Error::success();
  }
  Params.*(E->Real) = Value;
  return llvm::Error::success();
}

llvm::Error parseCostModelAssignment(CostModelParams &Params, llvm::StringRef Assignment) {
  auto [Name, Text] = Assignment.split('=');
  Name = Name.trim();
  Text = Text.trim();
  if (Name.empty() || Assignment.find('=') == llvm::StringRef::npos)
    return makeError("expected NAME=VALUE for a cost model parameter, not '" + Assignment + "'");
  double Value;
  if (Text.getAsDouble(Value))
    return makeError("cost model parameter '" + Name + "': '" + Text + "' is not a number");
  return setCostModelParam(Params, Name, Value);
}

std::optional<double> getCostModelParam(const CostModelParams &Params, llvm::StringRef Name) {
  const ParamEntry *E = findParam(Name);
  if (!E)
    return std::nullopt;
  if (!E->Real)
    return static_cast<double>(Params.DmaEnginesPerCore);
  return Params.*(E->Real);
}

uint64_t CostModel::getDmaChunks(const AccessPattern &AP) {
  // Walk the pattern from the innermost dimension out: while each dimension
  // continues the contiguous run (its step equals the run's length so far),
  // the run grows; every dimension after the first break multiplies the
  // number of runs.
  uint64_t Runs = 1;
  uint64_t Run = 1;
  bool Broken = false;
  llvm::ArrayRef<PatternDim> Dims = AP.getPattern();
  for (const PatternDim &D : llvm::reverse(Dims)) {
    if (D.Count == 1)
      continue;
    if (!Broken && D.Step > 0 && static_cast<uint64_t>(D.Step) == Run) {
      Run = mulSat(Run, D.Count);
      continue;
    }
    Broken = true;
    Runs = mulSat(Runs, D.Count);
  }
  return mulSat(Runs, std::max(1u, AP.getNumPartitions()));
}

double CostModel::dmaCopyNs(uint64_t Bytes, uint64_t Chunks, bool Accumulate) const {
  double Rate = P.DmaBytesPerNs * (Accumulate ? P.DmaAccumulateFactor : 1.0);
  return P.DmaFixedNs +
         (static_cast<double>(Bytes) + static_cast<double>(Chunks) * P.DmaDescriptorBytes) / Rate;
}

double CostModel::sb2sbNs(uint64_t EffectiveBytesPerPartition, unsigned Partitions) const {
  return P.Sb2sbStartNs +
         static_cast<double>(EffectiveBytesPerPartition) * Partitions / P.Sb2sbBytesPerNs;
}

double CostModel::collectiveNs(CollectiveKind Kind, unsigned GroupSize, uint64_t Bytes) const {
  const double N = std::max(1u, GroupSize);
  const double B = static_cast<double>(Bytes);
  const double Share = (N - 1) / N; // of the tensor that crosses between cores
  double Copied = 0, Reduced = 0;   // bus bytes
  switch (Kind) {
  case CollectiveKind::AllReduce:
    // Reduce-scatter, then all-gather: 2(n-1)/n of the tensor.
    Reduced = Share * B;
    Copied = Share * B;
    break;
  case CollectiveKind::ReduceScatter:
    Reduced = Share * B;
    break;
  case CollectiveKind::AllGather:
    Copied = (N - 1) * B; // (n-1)/n of the n*B output
    break;
  case CollectiveKind::AllToAll:
  case CollectiveKind::AllToAllV:
    Copied = Share * B;
    break;
  case CollectiveKind::SendRecv:
  case CollectiveKind::SendRecvCCE:
  case CollectiveKind::Permute:
  case CollectiveKind::PermuteImplicit:
    Copied = GroupSize > 1 ? B : 0;
    break;
  case CollectiveKind::PermuteReduce:
  case CollectiveKind::PermuteReduceImplicit:
    Reduced = GroupSize > 1 ? B : 0;
    break;
  }
  const double Rate = P.DmaEnginesPerCore * P.DmaBytesPerNs;
  return P.BarrierNs + P.DmaFixedNs + Copied / Rate + Reduced / (Rate * P.DmaAccumulateFactor);
}

double CostModel::remoteCollectiveNs(CollectiveKind Kind, unsigned GroupSize,
                                     uint64_t Bytes) const {
  const double N = std::max(1u, GroupSize);
  const double B = static_cast<double>(Bytes);
  double Steps = 1, Bus = 0;
  switch (Kind) {
  case CollectiveKind::AllReduce:
    Steps = 2 * (N - 1);
    Bus = 2 * (N - 1) / N * B;
    break;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
  case CollectiveKind::AllToAllV:
    Steps = N - 1;
    Bus = (N - 1) / N * B;
    break;
  case CollectiveKind::AllGather:
    Steps = N - 1;
    Bus = (N - 1) * B;
    break;
  case CollectiveKind::SendRecv:
  case CollectiveKind::SendRecvCCE:
  case CollectiveKind::Permute:
  case CollectiveKind::PermuteImplicit:
  case CollectiveKind::PermuteReduce:
  case CollectiveKind::PermuteReduceImplicit:
    Bus = GroupSize > 1 ? B : 0;
    break;
  }
  return std::max(1.0, Steps) * P.RemoteStepNs + Bus / P.RemoteBytesPerNs;
}

double CostModel::instructionNs(const Instruction &I) const {
  auto ElemsPerPartition = [&](const AccessPattern &AP) {
    return static_cast<double>(AP.getNumElementsPerPartition());
  };
  auto EngineRate = [&](Engine E) {
    switch (E) {
    case Engine::ACT:
      return P.ActElemsPerNs;
    case Engine::POOL:
      return P.PoolElemsPerNs;
    default:
      return P.DveElemsPerNs;
    }
  };
  switch (I.getType()) {
  case InstructionType::DMACopy: {
    const auto &Copy = llvm::cast<InstDMACopy>(I);
    if (I.inputs().empty() || I.outputs().empty())
      return P.DmaFixedNs;
    const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
    uint64_t Chunks = std::max(getDmaChunks(In), getDmaChunks(Out));
    return dmaCopyNs(bytesOf(Out), Chunks, Copy.isAccumulate());
  }
  case InstructionType::IndirectDMACopy: {
    // The queue first reads the index values (one more descriptor fetch,
    // a fixed cost), then moves the data as a DMACopy of the same patterns
    // does: the bytes and runs do not depend on where the operand starts.
    const auto &Copy = llvm::cast<InstIndirectDMACopy>(I);
    const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
    uint64_t Chunks = std::max(getDmaChunks(In), getDmaChunks(Out));
    return P.DmaFixedNs + dmaCopyNs(bytesOf(Out), Chunks, Copy.isAccumulate());
  }
  case InstructionType::GPSIMDSB2SB: {
    if (I.inputs().empty())
      return P.Sb2sbStartNs;
    const AccessPattern &In = I.inputs()[0];
    // Every element takes a 4-byte lane: the formula's one home is
    // InstGPSIMDSB2SB, which lower_local_collectives' budget uses too. At
    // most 2^32 elements per partition, so no product overflows.
    uint64_t Bpp = In.getNumElementsPerPartition() * getDataTypeSize(In.getType());
    uint64_t Effective =
        InstGPSIMDSB2SB::getEffectiveBytesPerPartition(Bpp, In.getType());
    return sb2sbNs(Effective, In.getNumPartitions());
  }
  case InstructionType::CollectiveCompute: {
    const auto &C = llvm::cast<InstCollectiveCompute>(I);
    uint64_t Bytes = I.inputs().empty() ? 0 : bytesOf(I.inputs()[0]);
    if (!C.isLocal())
      return remoteCollectiveNs(C.getKind(), C.getGroup().size(), Bytes);
    return collectiveNs(C.getKind(), C.getGroup().size(), Bytes);
  }
  case InstructionType::CoreBarrier:
    return P.BarrierNs;
  case InstructionType::TensorCompletion:
  case InstructionType::SemaphoreWait:
  case InstructionType::Branch:
    return P.EngineFixedNs;
  case InstructionType::Matmul: {
    if (I.inputs().size() < 2)
      return P.EngineFixedNs;
    // The moving operand's N columns stream through the whole 128 x 128
    // array: the time does not shrink when K or M is below 128.
    DataType T = I.inputs()[0].getType();
    double Rate = T == DataType::FP32                                     ? P.PeFp32FlopsPerNs
                  : (T == DataType::FP8E4M3 || T == DataType::FP8E5M2) ? P.PeFp8FlopsPerNs
                                                                        : P.PeBf16FlopsPerNs;
    double Flops = 2.0 * MaxOnChipPartitions * MaxOnChipPartitions * ElemsPerPartition(I.inputs()[1]);
    return P.EngineFixedNs + Flops / Rate;
  }
  case InstructionType::Activation:
  case InstructionType::TensorTensor:
  case InstructionType::TensorCopy:
  case InstructionType::TensorConvert:
  case InstructionType::Select:
  case InstructionType::Memset:
  case InstructionType::Iota: {
    if (I.outputs().empty())
      return P.EngineFixedNs;
    return P.EngineFixedNs + ElemsPerPartition(I.outputs()[0]) / EngineRate(I.getEngine());
  }
  case InstructionType::TensorReduce: {
    // The engine streams every input element once; the output is smaller.
    if (I.inputs().empty())
      return P.EngineFixedNs;
    return P.EngineFixedNs + ElemsPerPartition(I.inputs()[0]) / EngineRate(I.getEngine());
  }
  }
  return P.EngineFixedNs;
}

} // namespace loom::bir::analysis
