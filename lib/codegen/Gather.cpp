//===- Gather.cpp - gather with start indices read on the device ----------===//
//
// Every batch position of a gather is one window of the operand, copied by
// an IndirectDMACopy whose offsets are that position's index vector: the
// DMA reads the indices when it runs, clamped as XLA clamps a gather's
// starts (docs/codegen.md, "Run-time offsets").
//
//===----------------------------------------------------------------------===//

#include "DeviceLowering.h"

#include "loom/hlo/ir/ShapeInference.h"

namespace loom::codegen::detail {

llvm::Expected<Val> DeviceLowering::lowerGather(const HloInstruction &I,
                                                llvm::ArrayRef<Val> Ops) {
  llvm::Expected<hlo::GatherDimensionNumbers> DN =
      hlo::GetGatherDimensionNumbers(I);
  if (!DN)
    return DN.takeError();
  const Shape &In = I.operand(0)->shape(), &Idx = I.operand(1)->shape(),
              &OutS = I.shape();
  llvm::Expected<Shape> Want = hlo::ShapeInference::InferGatherShape(In, Idx, *DN);
  if (!Want)
    return notLowered(I, llvm::toString(Want.takeError()));
  if (Want->dimensions() != OutS.dimensions())
    return notLowered(I, "the result shape is not the gather's");
  if (llvm::Error E = typeOf(I, Idx).takeError())
    return E;
  llvm::Expected<int> Out = resultBuffer(I, OutS);
  if (!Out)
    return Out.takeError();
  if (OutS.element_count() == 0)
    return arrayVal(*Out);
  if (llvm::is_contained(DN->slice_sizes, 0))
    return notLowered(I, "slice size 0 of a collapsed or batching dimension");
  int64_t InRank = In.rank(), IdxRank = Idx.rank(), OutRank = OutS.rank();
  int64_t IVD = DN->index_vector_dim;
  std::vector<int64_t> InDims(In.dimensions().begin(), In.dimensions().end());
  std::vector<int64_t> IdxDims(Idx.dimensions().begin(), Idx.dimensions().end());
  std::vector<int64_t> OutDims(OutS.dimensions().begin(), OutS.dimensions().end());
  std::vector<int64_t> InSt = rowMajorStrides(InDims),
                       IdxSt = rowMajorStrides(IdxDims),
                       OutSt = rowMajorStrides(OutDims);
  std::vector<int64_t> BatchOut, BatchIdx;
  for (int64_t D = 0; D < OutRank; ++D)
    if (!llvm::is_contained(DN->offset_dims, D))
      BatchOut.push_back(D);
  for (int64_t D = 0; D < IdxRank; ++D)
    if (D != IVD)
      BatchIdx.push_back(D);
  if (BatchOut.size() != BatchIdx.size())
    return notLowered(I, "the batch dimensions do not match the indices");
  uint64_t Positions = 1;
  for (int64_t D : BatchOut)
    Positions *= static_cast<uint64_t>(OutDims[D]);
  if (Positions > MaxGatherPositions)
    return notLowered(I, llvm::Twine(Positions) + " index vectors; at most " +
                             llvm::Twine(MaxGatherPositions) +
                             " are lowered (one DMA each)");
  // The window: every operand dimension, in order, with its slice size
  // (collapsed and batching ones have size 1), which is the order of the
  // result's offset dimensions.
  Dims Window, Dest;
  for (int64_t D = 0; D < InRank; ++D)
    Window.push_back({InSt[D], static_cast<uint64_t>(DN->slice_sizes[D])});
  for (int64_t D : DN->offset_dims)
    Dest.push_back({OutSt[D], static_cast<uint64_t>(OutDims[D])});
  std::vector<int64_t> Batch(BatchOut.size(), 0);
  for (uint64_t Pos = 0; Pos < Positions; ++Pos) {
    // Batch: the row-major multi-index of this position.
    uint64_t Rest = Pos;
    for (size_t B = BatchOut.size(); B-- > 0;) {
      Batch[B] = static_cast<int64_t>(Rest % OutDims[BatchOut[B]]);
      Rest /= OutDims[BatchOut[B]];
    }
    uint64_t IdxBase = 0, DstOff = 0, SrcOff = 0;
    for (size_t B = 0; B < BatchOut.size(); ++B) {
      IdxBase += Batch[B] * IdxSt[BatchIdx[B]];
      DstOff += Batch[B] * OutSt[BatchOut[B]];
    }
    RunTimeOffset RT;
    RT.Side = IndirectSide::In;
    for (size_t K = 0; K < DN->start_index_map.size(); ++K) {
      int64_t D = DN->start_index_map[K];
      int64_t Limit = InDims[D] - DN->slice_sizes[D];
      if (Limit == 0)
        continue; // the clamp makes every start 0
      uint64_t Elem = IdxBase + (IVD < IdxRank ? K * IdxSt[IVD] : 0);
      RT.Terms.push_back({InSt[D], static_cast<uint64_t>(Limit)});
      RT.Index.push_back({Ops[1].Buf, Elem});
    }
    // A batching dimension's start is the position itself.
    for (size_t K = 0; K < DN->operand_batching_dims.size(); ++K) {
      int64_t D = DN->operand_batching_dims[K];
      auto It = llvm::find(BatchIdx, DN->start_indices_batching_dims[K]);
      if (It == BatchIdx.end())
        return notLowered(I, "a batching dimension is the index vector's");
      int64_t Start = Batch[It - BatchIdx.begin()];
      SrcOff += std::clamp<int64_t>(Start, 0, InDims[D] - DN->slice_sizes[D]) *
                InSt[D];
    }
    if (RT.Terms.size() > InstIndirectDMACopy::MaxOffsets)
      return notLowered(I, "more than " +
                               llvm::Twine(InstIndirectDMACopy::MaxOffsets) +
                               " start indices per window");
    move(I, Ops[0].Buf, SrcOff, Window, *Out, DstOff, Dest,
         RT.Terms.empty() ? nullptr : &RT, static_cast<unsigned>(Pos % L));
  }
  barrier(I.name());
  return arrayVal(*Out);
}

} // namespace loom::codegen::detail
