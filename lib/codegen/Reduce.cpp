//===- Reduce.cpp - reduce, iota, while -------------------------------------===//

#include "DeviceLowering.h"

namespace loom::codegen::detail {

// ---- Reduce, iota, dynamic slices, while ------------------------------------------

llvm::Expected<ArithOp> reduceArithOf(const HloInstruction &I) {
  llvm::ArrayRef<HloComputation *> C = I.CalledComputations("to_apply");
  if (C.size() != 1)
    return makeError("no to_apply computation");
  const HloInstruction *Root = C[0]->root_instruction();
  if (C[0]->parameter_instructions().size() != 2 || Root->operand_count() != 2 ||
      Root->operand(0)->opcode() != HloOpcode::kParameter ||
      Root->operand(1)->opcode() != HloOpcode::kParameter)
    return makeError("to_apply is not one op of its two parameters");
  switch (Root->opcode()) {
  case HloOpcode::kAdd: return ArithOp::Add;
  case HloOpcode::kMultiply: return ArithOp::Multiply;
  case HloOpcode::kMaximum: return ArithOp::Max;
  case HloOpcode::kMinimum: return ArithOp::Min;
  case HloOpcode::kAnd: return ArithOp::And;
  case HloOpcode::kOr: return ArithOp::Or;
  default:
    return makeError("to_apply is " + Root->OpcodeText());
  }
}

llvm::Expected<Val> DeviceLowering::lowerReduce(const HloInstruction &I,
                                                llvm::ArrayRef<Val> Ops) {
  if (I.operand_count() != 2 || !I.shape().IsArray())
    return lowerVariadicReduce(I, Ops);
  llvm::Expected<ArithOp> A = reduceArithOf(I);
  if (!A)
    return notLowered(I, llvm::toString(A.takeError()));
  llvm::Expected<std::vector<int64_t>> Dims0 = hlo::GetDimensions(I);
  if (!Dims0)
    return Dims0.takeError();
  const Shape &S = I.operand(0)->shape();
  llvm::Expected<DataType> T = typeOf(I, I.shape());
  if (!T)
    return T.takeError();
  // A maximum or minimum keeps one of the values: no rounding.
  if (isFloatType(*T) && !isArithmeticFloat(*T) && *A != ArithOp::Max &&
      *A != ArithOp::Min)
    return notLowered(I, "an fp8 accumulator rounds differently in BIR");
  std::vector<int64_t> Keep, Red;
  for (int64_t D = 0; D < S.rank(); ++D)
    (llvm::is_contained(*Dims0, D) ? Red : Keep).push_back(D);
  uint64_t G = 1, R = 1;
  for (int64_t D : Keep)
    G *= S.dimensions(D);
  for (int64_t D : Red)
    R *= S.dimensions(D);
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  int Init = Ops[1].Buf;
  if (G == 0)
    return arrayVal(*Out);
  if (R == 0) {
    move(I, Init, 0, {{0, G}}, *Out, 0, {{1, G}});
    barrier(I.name());
    return arrayVal(*Out);
  }
  // The operand as [kept][reduced], the reduced elements in row-major
  // order: the order the interpreter folds them in.
  int In = Ops[0].Buf;
  bool Identity = true;
  for (size_t K = 0; K < Keep.size(); ++K)
    Identity &= Keep[K] == static_cast<int64_t>(K);
  if (!Identity) {
    std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
    std::vector<int64_t> St = rowMajorStrides(Dm);
    Dims Src;
    for (auto *List : {&Keep, &Red})
      for (int64_t D : *List)
        Src.push_back({St[D], static_cast<uint64_t>(Dm[D])});
    In = newBuffer((I.name() + ".in").str(), Bufs[Ops[0].Buf].T, G * R);
    move(I, Ops[0].Buf, 0, Src, In, 0, {{1, G * R}});
    barrier((I.name() + ".in").str());
  }
  foldGroups(I, In, *Out, *T, G, R, *A, Ops[1].Const, Init);
  barrier(I.name());
  return arrayVal(*Out);
}

llvm::Expected<Val> DeviceLowering::lowerVariadicReduce(const HloInstruction &I,
                                                        llvm::ArrayRef<Val> Ops) {
  size_t N = I.operand_count() / 2;
  if (I.operand_count() % 2 != 0 || N == 0 || !I.shape().IsTuple() ||
      I.shape().tuple_shapes_size() != static_cast<int64_t>(N))
    return notLowered(I, "the operands, init values and results do not pair up");
  llvm::ArrayRef<HloComputation *> C = I.CalledComputations("to_apply");
  if (C.size() != 1)
    return notLowered(I, "no to_apply computation");
  llvm::Expected<std::vector<int64_t>> Dims0 = hlo::GetDimensions(I);
  if (!Dims0)
    return Dims0.takeError();
  const Shape &S = I.operand(0)->shape();
  std::vector<int64_t> Keep, Red;
  for (int64_t D = 0; D < S.rank(); ++D)
    (llvm::is_contained(*Dims0, D) ? Red : Keep).push_back(D);
  std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
  std::vector<int64_t> St = rowMajorStrides(Dm);
  uint64_t G = 1, R = 1;
  for (int64_t D : Keep)
    G *= Dm[D];
  for (int64_t D : Red)
    R *= Dm[D];
  for (size_t J = 0; J < N; ++J)
    if (I.operand(J)->shape().dimensions() != S.dimensions() ||
        I.operand(N + J)->shape().rank() != 0)
      return notLowered(I, "the operands differ in shape");
  if (G * R > MaxVariadicReduceWork)
    return notLowered(I, llvm::Twine(G) + " x " + llvm::Twine(R) +
                             " steps of to_apply; at most " +
                             llvm::Twine(MaxVariadicReduceWork) +
                             " are lowered");
  llvm::Expected<Val> Out = newValue(I, I.shape());
  if (!Out)
    return Out.takeError();
  if (G == 0)
    return *Out;
  // Every result position folds its own elements: the G positions are the
  // lanes of one value, and each step applies to_apply to all of them at
  // once (its scalar ops become elementwise ops over G elements), from the
  // init values, through the reduced elements in row-major order: the
  // interpreter's order.
  std::vector<Val> Acc;
  for (size_t J = 0; J < N; ++J) {
    int B = R == 0 ? Out->Elems[J].Buf
                   : newBuffer((I.name() + ".acc").str(), Bufs[Out->Elems[J].Buf].T, G);
    move(I, Ops[N + J].Buf, 0, {{0, G}}, B, 0, {{1, G}});
    Acc.push_back(arrayVal(B, Ops[N + J].Const));
  }
  barrier(I.name());
  if (R == 0)
    return *Out;
  Dims KeepD;
  for (int64_t D : Keep)
    KeepD.push_back({St[D], static_cast<uint64_t>(Dm[D])});
  uint64_t SavedLanes = Lanes;
  Lanes = G;
  std::vector<int64_t> At(Red.size(), 0);
  for (uint64_t Step = 0; Step < R; ++Step) {
    uint64_t Rest = Step, Off = 0;
    for (size_t K = Red.size(); K-- > 0;) {
      At[K] = static_cast<int64_t>(Rest % Dm[Red[K]]);
      Rest /= Dm[Red[K]];
      Off += At[K] * St[Red[K]];
    }
    std::vector<Val> Args = Acc;
    for (size_t J = 0; J < N; ++J) {
      int X = newBuffer((I.name() + ".x").str(), Bufs[Ops[J].Buf].T, G);
      move(I, Ops[J].Buf, Off, KeepD, X, 0, {{1, G}});
      Args.push_back(arrayVal(X));
    }
    barrier(I.name());
    llvm::Expected<Val> V = lowerComputation(*C[0], Args);
    if (!V) {
      Lanes = SavedLanes;
      return V.takeError();
    }
    bool Ok = V->IsTuple && V->Elems.size() == N;
    for (size_t J = 0; Ok && J < N; ++J)
      Ok = V->Elems[J].Buf >= 0 && Bufs[V->Elems[J].Buf].Elems == G &&
           Bufs[V->Elems[J].Buf].T == Bufs[Out->Elems[J].Buf].T;
    if (!Ok) {
      Lanes = SavedLanes;
      return notLowered(I, "to_apply does not return one value of each result type");
    }
    Acc = V->Elems;
  }
  Lanes = SavedLanes;
  for (size_t J = 0; J < N; ++J)
    move(I, Acc[J].Buf, 0, {{1, G}}, Out->Elems[J].Buf, 0, {{1, G}});
  barrier(I.name());
  return *Out;
}

void DeviceLowering::foldGroups(const HloInstruction &I, int In, int Out,
                                DataType T, uint64_t G, uint64_t R, ArithOp A,
                                std::optional<double> InitConst, int Init) {
  DataType TI = Bufs[In].T;
  uint64_t F = SlotBytes / std::max(getDataTypeSize(TI), getDataTypeSize(T));
  uint64_t PerRow = R <= F ? std::max<uint64_t>(1, F / R) : 1;
  std::vector<Chunk> Cs = chunks(G, PerRow);
  for (unsigned K = 0; K < Cs.size(); ++K) {
    const Chunk &C = Cs[K];
    unsigned Core = K % L;
    CoreEmitter &E = Cores[Core];
    MemoryLocation *OT = E.nextSlot(T);
    AccessPattern OutTile(OT, 0, C.Parts, 0, {{1, C.Free}}, T);
    if (!InitConst)
      E.emit(std::make_unique<InstDMACopy>(name(Core, I, "init"), E.nextDma(),
                                           false),
             {dram(Init, Core, 0, {{0, C.Parts * C.Free}})}, {OutTile});
    for (uint64_t R0 = 0; R0 < R; R0 += F) {
      uint64_t Rl = R <= F ? R : std::min(F, R - R0);
      MemoryLocation *IT = E.nextSlot(TI);
      // The slots go round robin: never load into the tile that holds the
      // running fold (a long reduction comes back to it).
      if (IT == OT)
        IT = E.nextSlot(TI);
      AccessPattern InTile(IT, 0, C.Parts, 0, {{1, C.Free * Rl}}, TI);
      Dims DramD = C.Parts > 1
                       ? Dims{{static_cast<int64_t>(C.Free * R), C.Parts},
                              {static_cast<int64_t>(R), C.Free},
                              {1, Rl}}
                       : Dims{{static_cast<int64_t>(R), C.Free}, {1, Rl}};
      E.emit(std::make_unique<InstDMACopy>(name(Core, I, "ld"), E.nextDma(),
                                           false),
             {dram(In, Core, C.First * R + R0, DramD)}, {InTile});
      bool Acc = R0 > 0 || !InitConst;
      E.emit(std::make_unique<InstTensorReduce>(
                 name(Core, I, "red"), K % 2 ? Engine::POOL : Engine::DVE, A,
                 Acc, InitConst.value_or(0)),
             {InTile}, {OutTile});
      if (R <= F)
        break;
    }
    Dims OutD = C.Parts > 1 ? Dims{{static_cast<int64_t>(C.Free), C.Parts},
                                   {1, C.Free}}
                            : Dims{{1, C.Free}};
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {OutTile}, {dram(Out, Core, C.First, OutD)});
  }
}

llvm::Expected<Val> DeviceLowering::lowerIota(const HloInstruction &I) {
  llvm::Expected<int64_t> Dim = hlo::GetIotaDimension(I);
  if (!Dim)
    return Dim.takeError();
  llvm::Expected<int> Result = resultBuffer(I, I.shape());
  if (!Result)
    return Result.takeError();
  const Shape &S = I.shape();
  std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
  if (Bufs[*Result].Elems == 0)
    return arrayVal(*Result);
  // An integer type narrower than the positions wraps them, as HLO's iota
  // of that type counts (u8 of 600 positions: 0..255, 0..255, 0..87); BIR's
  // Iota writes only values of its type's range, so the positions are
  // written in int32 and converted, which wraps between integers.
  DataType RT = Bufs[*Result].T;
  bool Narrow = (RT == DataType::INT8 || RT == DataType::UINT8 ||
                 RT == DataType::INT16 || RT == DataType::UINT16) &&
                Dm[*Dim] - 1 > (RT == DataType::INT8    ? INT8_MAX
                                : RT == DataType::UINT8 ? UINT8_MAX
                                : RT == DataType::INT16 ? INT16_MAX
                                                        : UINT16_MAX);
  int Wide = Narrow ? newBuffer((I.name() + ".wide").str(), DataType::INT32,
                                Bufs[*Result].Elems)
                    : -1;
  int Out = Narrow ? Wide : *Result;
  auto finish = [&]() {
    if (Narrow) {
      elementwise(I, {Wide}, *Result, makeConvert);
      barrier((I.name() + ".cvt").str());
    }
    return arrayVal(*Result);
  };
  DataType T = Bufs[Out].T;
  uint64_t F = SlotBytes / getDataTypeSize(T);
  // Rows of the tile: the outer dimension (rank 1: runs of F elements), each
  // partition one row; Iota's partition step and multipliers give the
  // index along the iota dimension.
  uint64_t Rows, Inner;
  Dims Pattern;
  std::vector<int64_t> Mult;
  int64_t RowStep;
  if (S.rank() == 1) {
    Inner = std::min<uint64_t>(F, Dm[0]);
    Rows = Dm[0] / Inner;
    Pattern = {{1, Inner}};
    Mult = {1};
    RowStep = static_cast<int64_t>(Inner);
  } else {
    Rows = Dm[0];
    Inner = 1;
    std::vector<int64_t> St = rowMajorStrides(Dm);
    for (size_t K = 1; K < Dm.size(); ++K) {
      Inner *= Dm[K];
      Pattern.push_back({St[K], static_cast<uint64_t>(Dm[K])});
      Mult.push_back(static_cast<int64_t>(K) == *Dim ? 1 : 0);
    }
    if (Inner > F) {
      // Rows longer than a tile row: a rank-1 iota of the iota dimension,
      // broadcast along the others by a step-0 read.
      int Line = newBuffer((I.name() + ".line").str(), T, Dm[*Dim]);
      uint64_t Len = Dm[*Dim];
      for (uint64_t E0 = 0; E0 < Len; E0 += 128 * F) {
        uint64_t Rest = std::min<uint64_t>(128 * F, Len - E0);
        uint64_t Cols = std::min<uint64_t>(F, Rest);
        unsigned Parts = static_cast<unsigned>(Rest / Cols);
        for (int Piece = 0; Piece < 2; ++Piece) {
          uint64_t First = Piece == 0 ? E0 : E0 + Parts * Cols;
          unsigned P = Piece == 0 ? Parts : 1;
          uint64_t C = Piece == 0 ? Cols : Rest - Parts * Cols;
          if (C == 0)
            continue;
          CoreEmitter &E = Cores[0];
          MemoryLocation *Tl = E.nextSlot(T);
          AccessPattern Tile(Tl, 0, P, 0, {{1, C}}, T);
          E.emit(std::make_unique<InstIota>(name(0, I, "iota"), Engine::POOL,
                                            static_cast<int64_t>(First),
                                            static_cast<int64_t>(C),
                                            std::vector<int64_t>{1}),
                 {}, {Tile});
          Dims D = P > 1 ? Dims{{static_cast<int64_t>(C), P}, {1, C}}
                         : Dims{{1, C}};
          E.emit(std::make_unique<InstDMACopy>(name(0, I, "st"), E.nextDma(),
                                               false),
                 {Tile}, {dram(Line, 0, First, D)});
        }
      }
      barrier((I.name() + ".line").str());
      Dims Src, Dst;
      std::vector<int64_t> OutSt = rowMajorStrides(Dm);
      for (size_t K = 0; K < Dm.size(); ++K) {
        Src.push_back({static_cast<int64_t>(K) == *Dim ? 1 : 0,
                       static_cast<uint64_t>(Dm[K])});
        Dst.push_back({OutSt[K], static_cast<uint64_t>(Dm[K])});
      }
      move(I, Line, 0, Src, Out, 0, Dst);
      barrier(I.name());
      return finish();
    }
    RowStep = *Dim == 0 ? 1 : 0;
  }
  unsigned K = 0;
  auto emitRows = [&](uint64_t R0, unsigned Parts, Dims Pat,
                      std::vector<int64_t> Mu, int64_t Start) {
    unsigned Core = K++ % L;
    CoreEmitter &E = Cores[Core];
    MemoryLocation *Tl = E.nextSlot(T);
    uint64_t N = countOf(Pat);
    AccessPattern Tile(Tl, 0, Parts, 0, Pat, T);
    E.emit(std::make_unique<InstIota>(name(Core, I, "iota"), Engine::POOL,
                                      Start, RowStep, std::move(Mu)),
           {}, {Tile});
    AccessPattern Flat(Tl, 0, Parts, 0, {{1, N}}, T);
    Dims D = Parts > 1 ? Dims{{static_cast<int64_t>(N), Parts}, {1, N}}
                       : Dims{{1, N}};
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {Flat}, {dram(Out, Core, R0 * N, D)});
  };
  for (uint64_t R0 = 0; R0 < Rows; R0 += 128) {
    unsigned Parts = static_cast<unsigned>(std::min<uint64_t>(128, Rows - R0));
    int64_t Start = S.rank() == 1 ? static_cast<int64_t>(R0 * Inner)
                    : *Dim == 0   ? static_cast<int64_t>(R0)
                                  : 0;
    emitRows(R0, Parts, Pattern, Mult, Start);
  }
  if (S.rank() == 1 && Rows * Inner < static_cast<uint64_t>(Dm[0])) {
    uint64_t Rest = Dm[0] - Rows * Inner;
    // The last partial row starts at element Rows * Inner.
    unsigned Core = K++ % L;
    CoreEmitter &E = Cores[Core];
    MemoryLocation *Tl = E.nextSlot(T);
    AccessPattern Tile(Tl, 0, 1, 0, {{1, Rest}}, T);
    E.emit(std::make_unique<InstIota>(name(Core, I, "iota"), Engine::POOL,
                                      static_cast<int64_t>(Rows * Inner), 0,
                                      std::vector<int64_t>{1}),
           {}, {Tile});
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {Tile}, {dram(Out, Core, Rows * Inner, {{1, Rest}})});
  }
  barrier(I.name());
  return finish();
}

/// Scalar integer arithmetic on values known at compile time, as the
/// device computes it (offsets of dynamic slices, induction variables);
/// none when an operand is unknown or the result leaves the type's range.

} // namespace loom::codegen::detail
