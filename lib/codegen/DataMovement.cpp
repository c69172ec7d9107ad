//===- DataMovement.cpp - DMA moves, data movement ops, dynamic slices ------===//

#include "DeviceLowering.h"

#include <algorithm>

namespace loom::codegen::detail {

namespace {

/// Bytes' worth of queue time one DMA descriptor costs (the cost model's
/// dma-descriptor-bytes default, docs/cost-model.md).
constexpr uint64_t DmaRunCost = 256;

/// The contiguous runs of a walk: one per element unless its innermost
/// dimension is unit-step.
uint64_t runsOf(const Dims &D) {
  Dims N = normalize(D);
  uint64_t Elems = countOf(N);
  return N.back().Step == 1 ? Elems / N.back().Count : Elems;
}

} // namespace

void DeviceLowering::move(const HloInstruction &I, int Src, uint64_t SrcOff,
                          Dims SrcD, int Dst, uint64_t DstOff, Dims DstD,
                          const RunTimeOffset *RT, unsigned FirstCore) {
  assert(countOf(SrcD) == countOf(DstD) && "a move keeps the element count");
  if (countOf(SrcD) == 0)
    return;
  // Split along the outermost dimension when both walks have it: each core
  // (and each DMA queue) takes a range of its indices.
  uint64_t Outer = SrcD.empty() ? 1 : SrcD[0].Count;
  bool Splittable = !SrcD.empty() && !DstD.empty() &&
                    SrcD[0].Count == DstD[0].Count && Outer > 1;
  uint64_t Elems = countOf(SrcD);
  unsigned Pieces = 1;
  if (Splittable && Elems >= 4096) {
    // A DMA queue spends a descriptor per contiguous run on top of the
    // bytes (docs/cost-model.md, "Descriptors"): a transpose or a broadcast
    // moves one element per run and costs far more than its bytes. Split by
    // that work, about 64 KiB of it per DMA, over at most every queue of
    // every core (16 each), so that such a move runs on all of them.
    uint64_t Size = getDataTypeSize(Bufs[Src].T);
    uint64_t Work = Elems * Size + DmaRunCost * std::max(runsOf(SrcD), runsOf(DstD));
    uint64_t Want = std::max<uint64_t>(1, Work / 65536);
    Pieces = static_cast<unsigned>(std::min<uint64_t>(
        {Outer, static_cast<uint64_t>(16 * L), std::max<uint64_t>(Want, L)}));
  }
  for (unsigned K = 0; K < Pieces; ++K) {
    uint64_t Lo = Outer * K / Pieces, Hi = Outer * (K + 1) / Pieces;
    if (Lo == Hi)
      continue;
    Dims S = SrcD, D = DstD;
    uint64_t SO = SrcOff, DO = DstOff;
    if (Pieces > 1) {
      SO += Lo * SrcD[0].Step;
      DO += Lo * DstD[0].Step;
      S[0].Count = D[0].Count = Hi - Lo;
    }
    unsigned Core = (FirstCore + K) % L;
    if (!RT) {
      Cores[Core].emit(std::make_unique<InstDMACopy>(
                           name(Core, I, "dma"), Cores[Core].nextDma(), false),
                       {dram(Src, Core, SO, S)}, {dram(Dst, Core, DO, D)});
      continue;
    }
    std::vector<AccessPattern> Ins = {dram(Src, Core, SO, S)};
    for (auto [Buf, Elem] : RT->Index)
      Ins.push_back(dram(Buf, Core, Elem, {{1, 1}}));
    Cores[Core].emit(std::make_unique<InstIndirectDMACopy>(
                         name(Core, I, "idma"), Cores[Core].nextDma(), RT->Side,
                         RT->Terms, false),
                     std::move(Ins), {dram(Dst, Core, DO, D)});
  }
}

llvm::Expected<Val> DeviceLowering::lowerBitcastLayouts(const HloInstruction &I,
                                                        const Val &Op) {
  // Each side walked in its physical order (its layout's major-to-minor
  // dimensions, each with its row-major stride in our logical storage)
  // visits physical position 0, 1, 2, ...: element p of one walk is element
  // p of the other, as the interpreter reinterprets the buffer.
  auto physicalWalk = [](const Shape &S) -> std::optional<Dims> {
    std::vector<int64_t> D(S.dimensions().begin(), S.dimensions().end());
    std::vector<int64_t> St = rowMajorStrides(D);
    int64_t Rank = S.rank();
    std::vector<int64_t> Order;
    if (S.has_layout() && !S.layout()->minor_to_major.empty())
      Order.assign(S.layout()->minor_to_major.rbegin(),
                   S.layout()->minor_to_major.rend());
    else
      for (int64_t K = 0; K < Rank; ++K)
        Order.push_back(K);
    std::vector<bool> Seen(Rank, false);
    if (static_cast<int64_t>(Order.size()) != Rank)
      return std::nullopt;
    Dims W;
    for (int64_t K : Order) {
      if (K < 0 || K >= Rank || Seen[K])
        return std::nullopt;
      Seen[K] = true;
      W.push_back({St[K], static_cast<uint64_t>(D[K])});
    }
    return W;
  };
  std::optional<Dims> From = physicalWalk(I.operand(0)->shape()),
                      To = physicalWalk(I.shape());
  if (!From || !To)
    return notLowered(I, "a layout that is not a permutation of the dimensions");
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  move(I, Op.Buf, 0, *From, *Out, 0, *To);
  barrier(I.name());
  return arrayVal(*Out);
}

/// A broadcast whose trailing dimensions repeat one element reads it once
/// per element: a DMA descriptor each (docs/cost-model.md). When that run of
/// T copies is long, the first R of each run are written that way, then
/// the other T / R - 1 rows of R copied from the first, contiguous runs of
/// R: R + T / R descriptors per run instead of T (docs/codegen.md, "Data
/// movement"). The copies are exact: the same bytes either way.
bool DeviceLowering::broadcastByRows(const HloInstruction &I, int Src,
                                     const Dims &SrcD, int Out,
                                     llvm::ArrayRef<int64_t> OutDims) {
  size_t J = SrcD.size();
  while (J > 0 && SrcD[J - 1].Step == 0)
    --J;
  uint64_t T = 1;
  for (size_t K = J; K < OutDims.size(); ++K)
    T *= static_cast<uint64_t>(OutDims[K]);
  if (T < 256)
    return false;
  // The row length R dividing T with the fewest descriptors, R + T / R.
  uint64_t R = 1;
  for (uint64_t D = 2; D * D <= T; ++D)
    if (T % D == 0)
      R = D;
  if (R == 1)
    return false;
  R = T / R; // the larger of the pair: longer contiguous runs, as many descriptors
  std::vector<int64_t> OutStr = rowMajorStrides(OutDims);
  Dims Lead, LeadOut;
  for (size_t K = 0; K < J; ++K) {
    Lead.push_back(SrcD[K]);
    LeadOut.push_back({OutStr[K], static_cast<uint64_t>(OutDims[K])});
  }
  auto with = [](Dims D, std::initializer_list<PatternDim> More) {
    D.insert(D.end(), More);
    return D;
  };
  const int64_t RS = static_cast<int64_t>(R);
  move(I, Src, 0, with(Lead, {{0, R}}), Out, 0, with(LeadOut, {{1, R}}));
  barrier((I.name() + ".row").str());
  move(I, Out, 0, with(LeadOut, {{0, T / R - 1}, {1, R}}), Out, R,
       with(LeadOut, {{RS, T / R - 1}, {1, R}}));
  return true;
}

/// The chunks of a stream of N elements through 128 x F tiles: full tiles,
/// then the rows that are left, then the last partial row.
// ---- Data movement --------------------------------------------------------------

llvm::Expected<Val> DeviceLowering::lowerDataMovement(const HloInstruction &I,
                                                      llvm::ArrayRef<Val> Ops) {
  const Shape &S = I.shape();
  llvm::Expected<int> Out = resultBuffer(I, S);
  if (!Out)
    return Out.takeError();
  std::vector<int64_t> OutDims(S.dimensions().begin(), S.dimensions().end());
  std::vector<int64_t> OutStr = rowMajorStrides(OutDims);
  auto contiguous = [&](llvm::ArrayRef<int64_t> Shape) {
    Dims D;
    std::vector<int64_t> St = rowMajorStrides(Shape);
    for (size_t K = 0; K < Shape.size(); ++K)
      D.push_back({St[K], static_cast<uint64_t>(Shape[K])});
    return D;
  };
  auto opShape = [&](int K) {
    llvm::ArrayRef<int64_t> D = I.operand(K)->shape().dimensions();
    return std::vector<int64_t>(D.begin(), D.end());
  };
  switch (I.opcode()) {
  case HloOpcode::kTranspose: {
    llvm::Expected<std::vector<int64_t>> Perm = hlo::GetDimensions(I);
    if (!Perm)
      return Perm.takeError();
    std::vector<int64_t> OpStr = rowMajorStrides(opShape(0));
    Dims Src;
    for (size_t K = 0; K < OutDims.size(); ++K)
      Src.push_back({OpStr[(*Perm)[K]], static_cast<uint64_t>(OutDims[K])});
    move(I, Ops[0].Buf, 0, Src, *Out, 0, contiguous(OutDims));
    break;
  }
  case HloOpcode::kBroadcast: {
    llvm::Expected<std::vector<int64_t>> Map = hlo::GetDimensions(I);
    if (!Map)
      return Map.takeError();
    std::vector<int64_t> OpStr = rowMajorStrides(opShape(0));
    Dims Src;
    for (size_t K = 0; K < OutDims.size(); ++K) {
      int64_t Step = 0;
      for (size_t J = 0; J < Map->size(); ++J)
        if ((*Map)[J] == static_cast<int64_t>(K))
          Step = OpStr[J];
      Src.push_back({Step, static_cast<uint64_t>(OutDims[K])});
    }
    if (!broadcastByRows(I, Ops[0].Buf, Src, *Out, OutDims))
      move(I, Ops[0].Buf, 0, Src, *Out, 0, contiguous(OutDims));
    break;
  }
  case HloOpcode::kSlice: {
    llvm::Expected<hlo::SliceConfig> SC = hlo::GetSliceConfig(I);
    if (!SC)
      return SC.takeError();
    std::vector<int64_t> OpStr = rowMajorStrides(opShape(0));
    Dims Src;
    uint64_t Off = 0;
    for (size_t K = 0; K < OutDims.size(); ++K) {
      Src.push_back({OpStr[K] * SC->strides[K], static_cast<uint64_t>(OutDims[K])});
      Off += SC->starts[K] * OpStr[K];
    }
    move(I, Ops[0].Buf, Off, Src, *Out, 0, contiguous(OutDims));
    break;
  }
  case HloOpcode::kConcatenate: {
    llvm::Expected<std::vector<int64_t>> D = hlo::GetDimensions(I);
    if (!D || D->size() != 1)
      return D ? notLowered(I, "expected one dimension") : D.takeError();
    int64_t Dim = (*D)[0], At = 0;
    for (int K = 0; K < I.operand_count(); ++K) {
      std::vector<int64_t> OpD = opShape(K);
      Dims Dst;
      for (size_t J = 0; J < OpD.size(); ++J)
        Dst.push_back({OutStr[J], static_cast<uint64_t>(OpD[J])});
      move(I, Ops[K].Buf, 0, contiguous(OpD), *Out, At * OutStr[Dim], Dst);
      At += OpD[Dim];
    }
    break;
  }
  case HloOpcode::kPad: {
    llvm::Expected<std::vector<hlo::PaddingDimension>> PC =
        hlo::GetPaddingConfig(I);
    if (!PC)
      return PC.takeError();
    // The padding value everywhere (a zero-step read of the scalar), then
    // the operand's elements that land inside the result.
    Dims Fill;
    for (int64_t N : OutDims)
      Fill.push_back({0, static_cast<uint64_t>(N)});
    move(I, Ops[1].Buf, 0, Fill, *Out, 0, contiguous(OutDims));
    barrier((I.name() + ".fill").str());
    std::vector<int64_t> OpD = opShape(0), OpStr = rowMajorStrides(OpD);
    Dims Src, Dst;
    uint64_t SrcOff = 0, DstOff = 0;
    bool Empty = false;
    for (size_t K = 0; K < OpD.size(); ++K) {
      const hlo::PaddingDimension &P = (*PC)[K];
      int64_t Step = P.interior + 1;
      int64_t First = 0;
      if (P.low < 0)
        First = (-P.low + Step - 1) / Step;
      int64_t Last = OpD[K] - 1; // the last index that lands inside
      while (Last >= First && P.low + Last * Step >= OutDims[K])
        --Last;
      if (Last < First) {
        Empty = true;
        break;
      }
      uint64_t Count = static_cast<uint64_t>(Last - First + 1);
      Src.push_back({OpStr[K], Count});
      Dst.push_back({OutStr[K] * Step, Count});
      SrcOff += First * OpStr[K];
      DstOff += (P.low + First * Step) * OutStr[K];
    }
    if (!Empty)
      move(I, Ops[0].Buf, SrcOff, Src, *Out, DstOff, Dst);
    break;
  }
  default:
    llvm_unreachable("not a data movement op");
  }
  barrier(I.name());
  return arrayVal(*Out);
}

llvm::Expected<Val> DeviceLowering::lowerDynamicSlice(const HloInstruction &I,
                                                      llvm::ArrayRef<Val> Ops) {
  bool Update = I.opcode() == HloOpcode::kDynamicUpdateSlice;
  const Shape &S = I.operand(0)->shape();
  unsigned First = Update ? 2 : 1;
  std::vector<int64_t> Sizes;
  if (Update) {
    llvm::ArrayRef<int64_t> U = I.operand(1)->shape().dimensions();
    Sizes.assign(U.begin(), U.end());
  } else {
    llvm::Expected<std::vector<int64_t>> Sz = hlo::GetDynamicSliceSizes(I);
    if (!Sz)
      return Sz.takeError();
    Sizes = *Sz;
  }
  if (static_cast<int64_t>(Ops.size()) != First + S.rank())
    return notLowered(I, "start indices as one array operand");
  std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
  std::vector<int64_t> St = rowMajorStrides(Dm);
  uint64_t Off = 0;
  Dims Region, Packed;
  std::vector<int64_t> PSt = rowMajorStrides(Sizes);
  RunTimeOffset RT;
  RT.Side = Update ? IndirectSide::Out : IndirectSide::In;
  for (int64_t K = 0; K < S.rank(); ++K) {
    Region.push_back({St[K], static_cast<uint64_t>(Sizes[K])});
    Packed.push_back({PSt[K], static_cast<uint64_t>(Sizes[K])});
    // XLA clamps the start so that the slice fits: 0 <= start <= Limit.
    int64_t Limit = Dm[K] - Sizes[K];
    if (std::optional<double> C = Ops[First + K].Const) {
      Off += std::clamp<int64_t>(static_cast<int64_t>(*C), 0, Limit) * St[K];
      continue;
    }
    if (Limit == 0)
      continue; // the clamp makes every start 0
    // Computed on the device: the DMA reads it when it runs.
    RT.Terms.push_back({St[K], static_cast<uint64_t>(Limit)});
    RT.Index.push_back({Ops[First + K].Buf, 0});
  }
  if (RT.Terms.size() > InstIndirectDMACopy::MaxOffsets)
    return notLowered(I, "more than " +
                             llvm::Twine(InstIndirectDMACopy::MaxOffsets) +
                             " start indices computed on the device");
  const RunTimeOffset *Dyn = RT.Terms.empty() ? nullptr : &RT;
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  if (!Update) {
    move(I, Ops[0].Buf, Off, Region, *Out, 0, Packed, Dyn);
  } else {
    uint64_t E = Bufs[*Out].Elems;
    move(I, Ops[0].Buf, 0, {{1, E}}, *Out, 0, {{1, E}});
    barrier((I.name() + ".copy").str());
    move(I, Ops[1].Buf, 0, Packed, *Out, Off, Region, Dyn);
  }
  barrier(I.name());
  return arrayVal(*Out);
}

/// The loop runs while its condition, evaluated at compile time, holds:
/// the induction variable is a value known at compile time (its start and
/// its steps are constants, partition-id, or scalar arithmetic on them),
/// compared with another such value (XLA's while-loop analysis finds trip
/// counts the same way). Each iteration's body is lowered in turn, so the
/// loop is unrolled, up to MaxUnrolledTrips iterations.

} // namespace loom::codegen::detail
