//===- Dot.cpp - dot and the contraction split ------------------------------===//

#include "DeviceLowering.h"

#include <numeric>

namespace loom::codegen::detail {

// ---- Dot -------------------------------------------------------------------------

std::vector<int64_t> freeDims(const Shape &S, llvm::ArrayRef<int64_t> Batch,
                              llvm::ArrayRef<int64_t> Contract) {
  std::vector<int64_t> F;
  for (int64_t D = 0; D < S.rank(); ++D)
    if (!llvm::is_contained(Batch, D) && !llvm::is_contained(Contract, D))
      F.push_back(D);
  return F;
}

DotSizes dotSizes(const Shape &LS, const Shape &RS,
                  const hlo::DotDimensionNumbers &DN) {
  auto prod = [](const Shape &S, llvm::ArrayRef<int64_t> Ds) {
    uint64_t P = 1;
    for (int64_t D : Ds)
      P *= S.dimensions(D);
    return P;
  };
  DotSizes Sz;
  Sz.B = prod(LS, DN.lhs_batch_dimensions);
  Sz.K = prod(LS, DN.lhs_contracting_dimensions);
  Sz.M = prod(LS, freeDims(LS, DN.lhs_batch_dimensions,
                           DN.lhs_contracting_dimensions));
  Sz.N = prod(RS, freeDims(RS, DN.rhs_batch_dimensions,
                           DN.rhs_contracting_dimensions));
  return Sz;
}

bool contractionSplit(const DotSizes &S, unsigned L) {
  const uint64_t TK = 128, TM = 128, TN = PsumBankBytes / 4;
  uint64_t NumTiles = S.B * ((S.M + TM - 1) / TM) * ((S.N + TN - 1) / TN);
  uint64_t KTiles = (S.K + TK - 1) / TK;
  return L > 1 && S.K > 0 && NumTiles > 0 && NumTiles < L && KTiles >= L;
}

// The operands in the order the tiles read them: [B][K][M] and [B][K][N],
// K in the order lhs_contracting_dims lists it (the interpreter's sum
// order, docs/interpreter.md).
int DeviceLowering::canonicalOperand(const HloInstruction &I, int Buf,
                                     const Shape &S, llvm::ArrayRef<int64_t> Bt,
                                     llvm::ArrayRef<int64_t> Ct,
                                     llvm::ArrayRef<int64_t> Fr,
                                     llvm::StringRef Tag) {
  std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
  std::vector<int64_t> St = rowMajorStrides(Dm);
  Dims Src, Dst;
  std::vector<int64_t> Order, Permuted;
  for (llvm::ArrayRef<int64_t> List : {Bt, Ct, Fr})
    for (int64_t D : List)
      Order.push_back(D);
  bool Identity = true;
  for (size_t J = 0; J < Order.size(); ++J) {
    Src.push_back({St[Order[J]], static_cast<uint64_t>(Dm[Order[J]])});
    Permuted.push_back(Dm[Order[J]]);
    Identity &= Order[J] == static_cast<int64_t>(J);
  }
  if (Identity)
    return Buf;
  // The destination walk has the source's dimensions, so that the move
  // splits along the outermost over the cores and the DMA queues (a
  // transpose moves one element per descriptor).
  std::vector<int64_t> PSt = rowMajorStrides(Permuted);
  for (size_t J = 0; J < Order.size(); ++J)
    Dst.push_back({PSt[J], static_cast<uint64_t>(Permuted[J])});
  int Scratch = newBuffer((I.name() + "." + Tag).str(), Bufs[Buf].T,
                          Bufs[Buf].Elems);
  move(I, Buf, 0, Src, Scratch, 0, Dst);
  return Scratch;
}

llvm::Expected<Val> DeviceLowering::lowerDot(const HloInstruction &I,
                                             llvm::ArrayRef<Val> Ops) {
  llvm::Expected<hlo::DotDimensionNumbers> DN = hlo::GetDotDimensionNumbers(I);
  if (!DN)
    return DN.takeError();
  return lowerDotOf(I, I.operand(0)->shape(), I.operand(1)->shape(), *DN, Ops,
                    I.shape());
}

llvm::Expected<Val> DeviceLowering::lowerDotOf(
    const HloInstruction &I, const Shape &LS, const Shape &RS,
    const hlo::DotDimensionNumbers &DNums, llvm::ArrayRef<Val> Ops,
    const Shape &ResultShape) {
  const hlo::DotDimensionNumbers *DN = &DNums;
  DataType TL = Bufs[Ops[0].Buf].T, TR = Bufs[Ops[1].Buf].T;
  if (TL != TR) {
    if (!isFloatType(TL) || !isFloatType(TR))
      return notLowered(I, "operands of two types, one of them an integer");
    // The interpreter reads both operands as fp32 (its accumulation type
    // for every float result narrower than f64): each operand of another
    // type is converted to fp32 first, which is exact, and the dot runs on
    // fp32 operands.
    std::vector<Val> Wide(Ops.begin(), Ops.end());
    for (int K = 0; K < 2; ++K) {
      if (Bufs[Ops[K].Buf].T == DataType::FP32)
        continue;
      int W = newBuffer((I.name() + ".f32." + llvm::Twine(K)).str(),
                        DataType::FP32, Bufs[Ops[K].Buf].Elems);
      elementwise(I, {Ops[K].Buf}, W, makeConvert);
      Wide[K] = arrayVal(W);
    }
    barrier(I.name());
    return lowerDotOf(I, LS, RS, DNums, Wide, ResultShape);
  }
  if (!isFloatType(TL))
    return notLowered(I, "integer dot; the PE accumulates in fp32");
  llvm::Expected<DataType> TO = typeOf(I, ResultShape);
  if (!TO)
    return TO.takeError();
  if (!isArithmeticFloat(*TO))
    return notLowered(I, "result type " +
                             hlo::PrimitiveTypeName(ResultShape.element_type()));
  std::vector<int64_t> LF = freeDims(LS, DN->lhs_batch_dimensions,
                                     DN->lhs_contracting_dimensions);
  std::vector<int64_t> RF = freeDims(RS, DN->rhs_batch_dimensions,
                                     DN->rhs_contracting_dimensions);
  DotSizes Sz = dotSizes(LS, RS, *DN);
  uint64_t B = Sz.B, K = Sz.K, M = Sz.M, N = Sz.N;
  llvm::Expected<int> Out = resultBuffer(I, ResultShape);
  if (!Out)
    return Out.takeError();
  if (B * M * N == 0)
    return arrayVal(*Out);
  if (K == 0) {
    // A sum of no products: zeros.
    fill(I, *Out, 0.0);
    barrier(I.name());
    return arrayVal(*Out);
  }
  // The operands in the order the tiles read them: [B][K][M] and [B][K][N],
  // K in the order lhs_contracting_dims lists it (the interpreter's sum
  // order, docs/interpreter.md).
  int LT = canonicalOperand(I, Ops[0].Buf, LS, DN->lhs_batch_dimensions,
                            DN->lhs_contracting_dimensions, LF, "lhsT");
  int RT = canonicalOperand(I, Ops[1].Buf, RS, DN->rhs_batch_dimensions,
                            DN->rhs_contracting_dimensions, RF, "rhsT");
  barrier((I.name() + ".operands").str());
  const uint64_t TK = 128, TM = 128, TN = PsumBankBytes / 4;
  if (contractionSplit(Sz, L)) {
    // Too few output tiles to share: the cores split the contraction
    // (docs/codegen.md, "Work split"), then combine their partial sums.
    unsigned Tile = 0;
    for (uint64_t Bi = 0; Bi < B; ++Bi)
      for (uint64_t M0 = 0; M0 < M; M0 += TM)
        for (uint64_t N0 = 0; N0 < N; N0 += TN, ++Tile)
          splitContraction(I, LT, RT, *Out, *TO, Bi, M0, N0, M, N, K,
                           std::min(TM, M - M0), std::min(TN, N - N0), Tile);
    barrier(I.name());
    return arrayVal(*Out);
  }
  unsigned Tile = 0;
  for (uint64_t Bi = 0; Bi < B; ++Bi)
    for (uint64_t M0 = 0; M0 < M; M0 += TM)
      for (uint64_t N0 = 0; N0 < N; N0 += TN, ++Tile) {
        uint64_t Mt = std::min(TM, M - M0), Nt = std::min(TN, N - N0);
        unsigned Core = Tile % L;
        CoreEmitter &E = Cores[Core];
        MemoryLocation *Ps = E.nextPsum();
        AccessPattern Acc(Ps, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                          DataType::FP32);
        // G K tiles of each operand share an SB working tile, as far as
        // its 8 KiB per partition go, each loaded by its own DMA: several
        // K tiles in flight per working tile instead of one. Both working
        // tiles are taken together and used by these G K tiles only, so
        // the round robin of the tiles never hands out one still in use.
        unsigned Sz = getDataTypeSize(TL);
        uint64_t G = std::max<uint64_t>(1, SlotBytes / (std::max(Mt, Nt) * Sz));
        MemoryLocation *SS = nullptr, *SM = nullptr;
        for (uint64_t K0 = 0; K0 < K; K0 += TK) {
          uint64_t Kt = std::min(TK, K - K0), KT = K0 / TK;
          if (KT % G == 0) {
            SS = E.nextSlot(TL);
            SM = E.nextSlot(TL);
          }
          AccessPattern Stat(SS, 0, static_cast<unsigned>(Kt), (KT % G) * Mt * Sz,
                             {{1, Mt}}, TL);
          AccessPattern Mov(SM, 0, static_cast<unsigned>(Kt), (KT % G) * Nt * Sz,
                            {{1, Nt}}, TL);
          E.emit(std::make_unique<InstDMACopy>(name(Core, I, "ld_w"),
                                               E.nextDma(), false),
                 {dram(LT, Core, Bi * K * M + K0 * M + M0,
                       {{static_cast<int64_t>(M), Kt}, {1, Mt}})},
                 {Stat});
          E.emit(std::make_unique<InstDMACopy>(name(Core, I, "ld_x"),
                                               E.nextDma(), false),
                 {dram(RT, Core, Bi * K * N + K0 * N + N0,
                       {{static_cast<int64_t>(N), Kt}, {1, Nt}})},
                 {Mov});
          E.emit(std::make_unique<InstMatmul>(name(Core, I, "mm"), Engine::PE,
                                              K0 > 0),
                 {Stat, Mov}, {Acc});
        }
        MemoryLocation *SO = E.nextSlot(*TO);
        AccessPattern Res(SO, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}}, *TO);
        E.emit(std::make_unique<InstTensorCopy>(
                   name(Core, I, "evac"), Tile % 2 ? Engine::DVE : Engine::ACT),
               {Acc}, {Res});
        E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                             false),
               {Res},
               {dram(*Out, Core, Bi * M * N + M0 * N + N0,
                     {{static_cast<int64_t>(N), Mt}, {1, Nt}})});
      }
  barrier(I.name());
  return arrayVal(*Out);
}

/// One output tile whose K tiles are shared by the cores: core c
/// accumulates its contiguous range of K tiles in PSUM and copies the
/// partial sum to SB; then
///
///   lnc 2, rows even:  SendRecv swap of the halves each core does not keep
///                      (core 0 keeps rows [0, Mt/2), core 1 the rest),
///                      TensorTensor Add of the kept and the received half,
///                      each core stores its half;
///   more cores, rows dividing by them: a local ReduceScatter (Add) leaves
///                      core c the sum of its share of the rows, which it stores;
///   otherwise:         a local AllReduce (Add) of the partial sums; core c
///                      stores its share of the rows.
///
/// The sum is (core 0's part) + (core 1's part) + ..., not k upwards: the
/// result may differ from the interpreter's by rounding (docs/codegen.md).
void DeviceLowering::splitContraction(const HloInstruction &I, int LT, int RT,
                                      int Out, DataType TO, uint64_t Bi,
                                      uint64_t M0, uint64_t N0, uint64_t M,
                                      uint64_t N, uint64_t K, uint64_t Mt,
                                      uint64_t Nt, unsigned Tile) {
  const uint64_t TK = 128;
  uint64_t KTiles = (K + TK - 1) / TK;
  DataType TL = Bufs[LT].T;
  bool Swap = L == 2 && Mt % 2 == 0;
  // More cores with rows that split: a local ReduceScatter leaves each core
  // the sum of its own rows (fenced and kept by lower_local_collectives).
  bool Scatter = !Swap && Mt % L == 0;
  std::vector<unsigned> All(L);
  std::iota(All.begin(), All.end(), 0);
  std::string CollName = (I.name() + (Swap      ? ".swap"
                                      : Scatter ? ".reducescatter"
                                                : ".allreduce") +
                          llvm::Twine(Tile)).str();
  for (unsigned C = 0; C < L; ++C) {
    CoreEmitter &E = Cores[C];
    uint64_t KT0 = KTiles * C / L, KT1 = KTiles * (C + 1) / L;
    MemoryLocation *Ps = E.nextPsum();
    AccessPattern Acc(Ps, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                      DataType::FP32);
    for (uint64_t KT = KT0; KT < KT1; ++KT) {
      uint64_t K0 = KT * TK, Kt = std::min(TK, K - K0);
      MemoryLocation *SS = E.nextSlot(TL), *SM = E.nextSlot(TL);
      AccessPattern Stat(SS, 0, static_cast<unsigned>(Kt), 0, {{1, Mt}}, TL);
      AccessPattern Mov(SM, 0, static_cast<unsigned>(Kt), 0, {{1, Nt}}, TL);
      E.emit(std::make_unique<InstDMACopy>(name(C, I, "ld_w"), E.nextDma(),
                                           false),
             {dram(LT, C, Bi * K * M + K0 * M + M0,
                   {{static_cast<int64_t>(M), Kt}, {1, Mt}})},
             {Stat});
      E.emit(std::make_unique<InstDMACopy>(name(C, I, "ld_x"), E.nextDma(),
                                           false),
             {dram(RT, C, Bi * K * N + K0 * N + N0,
                   {{static_cast<int64_t>(N), Kt}, {1, Nt}})},
             {Mov});
      E.emit(std::make_unique<InstMatmul>(name(C, I, "mm"), Engine::PE,
                                          KT > KT0),
             {Stat, Mov}, {Acc});
    }
    MemoryLocation *Part = E.nextSlot(DataType::FP32);
    AccessPattern PartAP(Part, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                         DataType::FP32);
    E.emit(std::make_unique<InstTensorCopy>(name(C, I, "part"), Engine::ACT),
           {Acc}, {PartAP});
    MemoryLocation *Sum = E.nextSlot(DataType::FP32);
    uint64_t R0, R1; // the rows this core stores
    AccessPattern SumAP(Sum, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                        DataType::FP32);
    if (Swap) {
      unsigned H = static_cast<unsigned>(Mt / 2);
      R0 = C * H;
      R1 = R0 + H;
      MemoryLocation *Recv = E.nextSlot(DataType::FP32);
      AccessPattern RecvAP(Recv, 0, H, 0, {{1, Nt}}, DataType::FP32);
      // Core 0 sends the rows core 1 keeps, and the other way round.
      AccessPattern Give(Part, C == 0 ? H : 0, H, 0, {{1, Nt}}, DataType::FP32);
      AccessPattern Kept(Part, C == 0 ? 0 : H, H, 0, {{1, Nt}}, DataType::FP32);
      E.emit(std::make_unique<InstCollectiveCompute>(
                 E.uniqueName(CollName), Engine::POOL, CollectiveKind::SendRecv,
                 All, ReduceOp::None, /*Local=*/true),
             {Give}, {RecvAP});
      // Core 0's part first on both halves.
      std::vector<AccessPattern> Terms =
          C == 0 ? std::vector<AccessPattern>{Kept, RecvAP}
                 : std::vector<AccessPattern>{RecvAP, Kept};
      SumAP = AccessPattern(Sum, 0, H, 0, {{1, Nt}}, DataType::FP32);
      E.emit(std::make_unique<InstTensorTensor>(name(C, I, "sum"), Engine::DVE,
                                                ArithOp::Add),
             Terms, {SumAP});
    } else if (Scatter) {
      R0 = Mt * C / L;
      R1 = Mt * (C + 1) / L;
      SumAP = AccessPattern(Sum, 0, static_cast<unsigned>(R1 - R0), 0,
                            {{1, Nt}}, DataType::FP32);
      E.emit(std::make_unique<InstCollectiveCompute>(
                 E.uniqueName(CollName), Engine::POOL,
                 CollectiveKind::ReduceScatter, All, ReduceOp::Add,
                 /*Local=*/true),
             {PartAP}, {SumAP});
    } else {
      R0 = Mt * C / L;
      R1 = Mt * (C + 1) / L;
      E.emit(std::make_unique<InstCollectiveCompute>(
                 E.uniqueName(CollName), Engine::POOL, CollectiveKind::AllReduce,
                 All, ReduceOp::Add, /*Local=*/true),
             {PartAP}, {SumAP});
      if (R1 == R0)
        continue;
      SumAP = AccessPattern(Sum, static_cast<unsigned>(R0),
                            static_cast<unsigned>(R1 - R0), 0, {{1, Nt}},
                            DataType::FP32);
    }
    MemoryLocation *Res = E.nextSlot(TO);
    AccessPattern ResAP(Res, 0, static_cast<unsigned>(R1 - R0), 0, {{1, Nt}},
                        TO);
    E.emit(std::make_unique<InstTensorConvert>(name(C, I, "evac"), Engine::ACT),
           {SumAP}, {ResAP});
    E.emit(std::make_unique<InstDMACopy>(name(C, I, "st"), E.nextDma(), false),
           {ResAP},
           {dram(Out, C, Bi * M * N + (M0 + R0) * N + N0,
                 {{static_cast<int64_t>(N), R1 - R0}, {1, Nt}})});
  }
}

} // namespace loom::codegen::detail

namespace loom::codegen {

bool splitsContraction(const hlo::HloInstruction &I, unsigned Lnc) {
  using namespace detail;
  if (Lnc < 2 || I.operand_count() != 2)
    return false;
  if (I.opcode() == HloOpcode::kDot) {
    llvm::Expected<hlo::DotDimensionNumbers> DN = hlo::GetDotDimensionNumbers(I);
    if (!DN) {
      llvm::consumeError(DN.takeError());
      return false;
    }
    return contractionSplit(
        dotSizes(I.operand(0)->shape(), I.operand(1)->shape(), *DN), Lnc);
  }
  if (!hlo::collective_matmul::IsCollectiveMatmul(I))
    return false;
  llvm::Expected<hlo::collective_matmul::Meaning> Mn =
      hlo::collective_matmul::Resolve(I);
  if (!Mn) {
    llvm::consumeError(Mn.takeError());
    return false;
  }
  const Shape &Other = I.operand(1)->shape();
  if (ringForm(*Mn, Other, I.shape()) != RingForm::Gathered)
    return false;
  bool WeightLhs = Mn->weight_side == hlo::collective_matmul::WeightSide::kLhs;
  return contractionSplit(
      WeightLhs ? dotSizes(Mn->weight_operand_shape, Other, Mn->dnums)
                : dotSizes(Other, Mn->weight_operand_shape, Mn->dnums),
      Lnc);
}

} // namespace loom::codegen
