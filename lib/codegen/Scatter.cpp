//===- Scatter.cpp - scatter with indices read on the device ---------------===//
//
// The result starts as a copy of the operand; then every scatter position
// (an index vector) combines its update window into the window of the
// result its indices select. The DMA reads the indices when it runs, in
// the skip mode of IndirectDMACopy: a window that does not fit the operand
// is not written at all, which is XLA's scatter (and the interpreter's,
// lib/hlo/eval/EvalGather.cpp). Positions are applied one after another
// in row-major order on one core, so repeated indices combine in the
// interpreter's order (docs/codegen.md, "scatter").
//
//===----------------------------------------------------------------------===//

#include "DeviceLowering.h"

namespace loom::codegen::detail {

namespace {

/// How a scatter's to_apply combines the current value (parameter 0) with
/// the update (parameter 1).
struct Combine {
  enum Kind { Take, Keep, Op } K = Take;
  ArithOp A = ArithOp::Add;
  /// The op's operands are (update, current) rather than (current, update).
  bool Swapped = false;
};

llvm::Expected<Combine> combineOf(const HloInstruction &I) {
  llvm::ArrayRef<HloComputation *> C = I.CalledComputations("to_apply");
  if (C.size() != 1)
    return makeError("no to_apply computation");
  auto Params = C[0]->parameter_instructions();
  if (Params.size() != 2)
    return makeError("to_apply does not have two parameters");
  auto paramNo = [&](const HloInstruction *P) -> int {
    for (int K = 0; K < 2; ++K)
      if (P == Params[K])
        return K;
    return -1;
  };
  const HloInstruction *Root = C[0]->root_instruction();
  Combine R;
  if (int P = paramNo(Root); P >= 0) {
    R.K = P == 1 ? Combine::Take : Combine::Keep;
    return R;
  }
  if (Root->operand_count() != 2 || paramNo(Root->operand(0)) < 0 ||
      paramNo(Root->operand(1)) < 0 ||
      paramNo(Root->operand(0)) == paramNo(Root->operand(1)))
    return makeError("to_apply is not a parameter or one op of its two parameters");
  R.K = Combine::Op;
  R.Swapped = paramNo(Root->operand(0)) == 1;
  switch (Root->opcode()) {
  case HloOpcode::kAdd: R.A = ArithOp::Add; break;
  case HloOpcode::kSubtract: R.A = ArithOp::Subtract; break;
  case HloOpcode::kMultiply: R.A = ArithOp::Multiply; break;
  case HloOpcode::kDivide: R.A = ArithOp::Divide; break;
  case HloOpcode::kMaximum: R.A = ArithOp::Max; break;
  case HloOpcode::kMinimum: R.A = ArithOp::Min; break;
  case HloOpcode::kAnd: R.A = ArithOp::And; break;
  case HloOpcode::kOr: R.A = ArithOp::Or; break;
  case HloOpcode::kXor: R.A = ArithOp::Xor; break;
  default:
    return makeError("to_apply is " + Root->OpcodeText());
  }
  return R;
}

} // namespace

llvm::Expected<Val> DeviceLowering::lowerScatter(const HloInstruction &I,
                                                 llvm::ArrayRef<Val> Ops) {
  if (I.operand_count() != 3 || !I.shape().IsArray())
    return notLowered(I, "a scatter of several operands");
  llvm::Expected<hlo::ScatterDimensionNumbers> DN =
      hlo::GetScatterDimensionNumbers(I);
  if (!DN)
    return DN.takeError();
  llvm::Expected<Combine> Cb = combineOf(I);
  if (!Cb)
    return notLowered(I, llvm::toString(Cb.takeError()));
  const Shape &In = I.operand(0)->shape(), &Idx = I.operand(1)->shape(),
              &Upd = I.operand(2)->shape(), &OutS = I.shape();
  llvm::Expected<DataType> T = typeOf(I, OutS);
  if (!T)
    return T.takeError();
  if (llvm::Error E = typeOf(I, Idx).takeError())
    return E;
  PrimitiveType HT = OutS.element_type();
  if (In.dimensions() != OutS.dimensions() || In.element_type() != HT ||
      Upd.element_type() != HT || !hlo::IsIntegralType(Idx.element_type()))
    return notLowered(I, "the operand, updates and result differ in type or shape");
  if (Cb->K == Combine::Op) {
    const HloInstruction *Root =
        I.CalledComputations("to_apply")[0]->root_instruction();
    if (Root->shape().element_type() != HT)
      return notLowered(I, "to_apply computes in another type");
    bool Bitwise = Cb->A == ArithOp::And || Cb->A == ArithOp::Or ||
                   Cb->A == ArithOp::Xor;
    if (Bitwise && hlo::IsFloatingPointType(HT))
      return notLowered(I, "a bitwise combination of floats");
    if (!Bitwise && HT == PrimitiveType::PRED)
      return notLowered(I, "arithmetic on pred");
    if (hlo::IsFloatingPointType(HT) && !isArithmeticFloat(*T))
      return notLowered(I, "an arithmetic result of type " +
                               hlo::PrimitiveTypeName(HT) +
                               " rounds differently in BIR");
  }
  int64_t InRank = In.rank(), IdxRank = Idx.rank(), UpdRank = Upd.rank();
  int64_t IVD = DN->index_vector_dim;
  const auto &UWD = DN->update_window_dims, &IWD = DN->inserted_window_dims,
             &SDOD = DN->scatter_dims_to_operand_dims,
             &IBD = DN->input_batching_dims,
             &SIBD = DN->scatter_indices_batching_dims;
  auto inRange = [](llvm::ArrayRef<int64_t> L, int64_t Rank) {
    return llvm::all_of(L, [&](int64_t D) { return D >= 0 && D < Rank; });
  };
  if (IVD < 0 || IVD > IdxRank || !inRange(UWD, UpdRank) ||
      !inRange(IWD, InRank) || !inRange(SDOD, InRank) || !inRange(IBD, InRank) ||
      !inRange(SIBD, IdxRank) || IBD.size() != SIBD.size() ||
      llvm::is_contained(SIBD, IVD))
    return notLowered(I, "the dimension numbers do not fit the shapes");
  int64_t VectorSize = IVD < IdxRank ? Idx.dimensions(IVD) : 1;
  if (VectorSize != static_cast<int64_t>(SDOD.size()))
    return notLowered(I, "scatter_dims_to_operand_dims does not match the index vector");
  for (int64_t D : SDOD)
    if (llvm::is_contained(IBD, D))
      return notLowered(I, "an operand dimension is both indexed and batching");
  std::vector<int64_t> UpdScatter, WindowOperand, BatchIdx;
  for (int64_t D = 0; D < UpdRank; ++D)
    if (!llvm::is_contained(UWD, D))
      UpdScatter.push_back(D);
  for (int64_t D = 0; D < InRank; ++D)
    if (!llvm::is_contained(IWD, D) && !llvm::is_contained(IBD, D))
      WindowOperand.push_back(D);
  for (int64_t D = 0; D < IdxRank; ++D)
    if (D != IVD)
      BatchIdx.push_back(D);
  if (WindowOperand.size() != UWD.size() ||
      UpdScatter.size() != BatchIdx.size() || !llvm::is_sorted(UWD))
    return notLowered(I, "the update rank does not fit the dimension numbers");
  std::vector<int64_t> InDims(In.dimensions().begin(), In.dimensions().end());
  std::vector<int64_t> IdxDims(Idx.dimensions().begin(), Idx.dimensions().end());
  std::vector<int64_t> UpdDims(Upd.dimensions().begin(), Upd.dimensions().end());
  for (size_t B = 0; B < BatchIdx.size(); ++B)
    if (UpdDims[UpdScatter[B]] != IdxDims[BatchIdx[B]])
      return notLowered(I, "the update's scatter dimensions are not the indices'");
  std::vector<int64_t> InSt = rowMajorStrides(InDims),
                       IdxSt = rowMajorStrides(IdxDims),
                       UpdSt = rowMajorStrides(UpdDims);
  // The update window's extent along every operand dimension.
  std::vector<int64_t> WinSize(InRank, 1);
  for (size_t K = 0; K < UWD.size(); ++K)
    WinSize[WindowOperand[K]] = UpdDims[UWD[K]];
  uint64_t Positions = 1;
  for (int64_t D : UpdScatter)
    Positions *= static_cast<uint64_t>(UpdDims[D]);
  // The interpreter applies the update elements in row-major order; one
  // position after another is that order when every window dimension
  // follows every scatter dimension in the update.
  if (Positions > 1 && !UWD.empty() &&
      UWD.front() != UpdRank - static_cast<int64_t>(UWD.size()))
    return notLowered(I, "an update window dimension before a scatter "
                         "dimension orders the updates otherwise");
  if (Positions > MaxGatherPositions)
    return notLowered(I, llvm::Twine(Positions) + " index vectors; at most " +
                             llvm::Twine(MaxGatherPositions) +
                             " are lowered (one DMA each)");
  llvm::Expected<int> Out = resultBuffer(I, OutS);
  if (!Out)
    return Out.takeError();
  uint64_t E = OutS.element_count();
  if (E == 0)
    return arrayVal(*Out);
  move(I, Ops[0].Buf, 0, {{1, E}}, *Out, 0, {{1, E}});
  bool Fits = true;
  for (int64_t D = 0; D < InRank; ++D)
    Fits = Fits && WinSize[D] <= InDims[D];
  if (Upd.element_count() == 0 || Cb->K == Combine::Keep || !Fits) {
    // No update changes the result (a window larger than the operand
    // never fits).
    barrier(I.name());
    return arrayVal(*Out);
  }
  // The window in the result: every operand dimension in order (inserted
  // and batching ones of size 1), the order of the update's window dims.
  Dims Window, UpdWin;
  for (int64_t D = 0; D < InRank; ++D)
    Window.push_back({InSt[D], static_cast<uint64_t>(WinSize[D])});
  for (int64_t D : UWD)
    UpdWin.push_back({UpdSt[D], static_cast<uint64_t>(UpdDims[D])});
  uint64_t W = countOf(Window);
  // A combination other than taking the update (or an add DMA's
  // accumulation can do) reads the current window into SB: W elements as
  // Parts rows of Row, one tile.
  bool AccumulateAdd = Cb->K == Combine::Op && Cb->A == ArithOp::Add &&
                       isArithmeticFloat(*T);
  bool ThroughSB = Cb->K == Combine::Op && !AccumulateAdd;
  uint64_t F = SlotBytes / getDataTypeSize(*T), Row = 0;
  if (ThroughSB) {
    for (uint64_t R = std::min(F, W); R >= 1 && Row == 0; --R)
      if (W % R == 0 && W / R <= 128)
        Row = R;
    if (Row == 0)
      return notLowered(I, "an update window of " + llvm::Twine(W) +
                               " elements is not one SB tile");
  }
  // Everything after the copy runs on core 0, in order.
  barrier(I.name());
  CoreEmitter &Em = Cores[0];
  std::vector<int64_t> Batch(UpdScatter.size(), 0);
  for (uint64_t Pos = 0; Pos < Positions; ++Pos) {
    uint64_t Rest = Pos;
    for (size_t B = UpdScatter.size(); B-- > 0;) {
      Batch[B] = static_cast<int64_t>(Rest % UpdDims[UpdScatter[B]]);
      Rest /= UpdDims[UpdScatter[B]];
    }
    uint64_t IdxBase = 0, UpdOff = 0, DstOff = 0;
    for (size_t B = 0; B < UpdScatter.size(); ++B) {
      IdxBase += Batch[B] * IdxSt[BatchIdx[B]];
      UpdOff += Batch[B] * UpdSt[UpdScatter[B]];
    }
    // A batching dimension's start is the position itself, known here.
    bool Skip = false;
    for (size_t K = 0; K < IBD.size(); ++K) {
      int64_t D = IBD[K];
      int64_t Start = Batch[llvm::find(BatchIdx, SIBD[K]) - BatchIdx.begin()];
      if (Start > InDims[D] - WinSize[D])
        Skip = true;
      DstOff += Start * InSt[D];
    }
    if (Skip)
      continue;
    // Every indexed dimension keeps its term, even of limit 0: in the skip
    // mode any other value skips the window.
    std::vector<IndirectOffset> Terms;
    std::vector<AccessPattern> Index;
    for (size_t K = 0; K < SDOD.size(); ++K) {
      int64_t D = SDOD[K];
      uint64_t Elem = IdxBase + (IVD < IdxRank ? K * IdxSt[IVD] : 0);
      Terms.push_back({InSt[D], static_cast<uint64_t>(InDims[D] - WinSize[D])});
      Index.push_back(dram(Ops[1].Buf, 0, Elem, {{1, 1}}));
    }
    if (Terms.size() > InstIndirectDMACopy::MaxOffsets)
      return notLowered(I, "more than " +
                               llvm::Twine(InstIndirectDMACopy::MaxOffsets) +
                               " indexed dimensions");
    AccessPattern Update = dram(Ops[2].Buf, 0, UpdOff, UpdWin);
    AccessPattern Dest = dram(*Out, 0, DstOff, Window);
    auto withIndex = [&](AccessPattern Data) {
      std::vector<AccessPattern> V = {std::move(Data)};
      V.insert(V.end(), Index.begin(), Index.end());
      return V;
    };
    if (Terms.empty()) {
      // No index vector: every position writes the same window.
      if (!ThroughSB) {
        Em.emit(std::make_unique<InstDMACopy>(name(0, I, "dma"), Em.nextDma(),
                                              AccumulateAdd),
                {Update}, {Dest});
        continue;
      }
    }
    if (!ThroughSB) {
      Em.emit(std::make_unique<InstIndirectDMACopy>(
                  name(0, I, "idma"), Em.nextDma(), IndirectSide::Out, Terms,
                  AccumulateAdd, IndirectBounds::Skip),
              withIndex(Update), {Dest});
      continue;
    }
    // Read the current window (clamped: always a window of the result; its
    // combination is not stored when the indices skip), combine, store.
    auto tile = [&] {
      return AccessPattern(Em.nextSlot(*T), 0, static_cast<unsigned>(W / Row),
                           0, {{1, Row}}, *T);
    };
    AccessPattern Cur = tile(), New = tile(), Res = tile();
    if (Terms.empty())
      Em.emit(std::make_unique<InstDMACopy>(name(0, I, "ld"), Em.nextDma(), false),
              {Dest}, {Cur});
    else
      Em.emit(std::make_unique<InstIndirectDMACopy>(
                  name(0, I, "ld"), Em.nextDma(), IndirectSide::In, Terms, false),
              withIndex(Dest), {Cur});
    Em.emit(std::make_unique<InstDMACopy>(name(0, I, "ldu"), Em.nextDma(), false),
            {Update}, {New});
    std::vector<AccessPattern> Args = {Cur, New};
    if (Cb->Swapped)
      std::swap(Args[0], Args[1]);
    Em.emit(std::make_unique<InstTensorTensor>(name(0, I, "op"),
                                               Pos % 2 ? Engine::POOL : Engine::DVE,
                                               Cb->A),
            std::move(Args), {Res});
    if (Terms.empty())
      Em.emit(std::make_unique<InstDMACopy>(name(0, I, "st"), Em.nextDma(), false),
              {Res}, {Dest});
    else
      Em.emit(std::make_unique<InstIndirectDMACopy>(
                  name(0, I, "st"), Em.nextDma(), IndirectSide::Out, Terms, false,
                  IndirectBounds::Skip),
              withIndex(Res), {Dest});
  }
  barrier(I.name());
  return arrayVal(*Out);
}

} // namespace loom::codegen::detail
