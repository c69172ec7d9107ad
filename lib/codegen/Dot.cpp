//===- Dot.cpp - dot, the contraction split, collective matmul --------------===//

#include "DeviceLowering.h"

#include <numeric>

namespace loom::codegen::detail {

// ---- Dot -------------------------------------------------------------------------

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
  if (TL != TR)
    return notLowered(I, "operands of two types; a Matmul takes one");
  if (!isFloatType(TL))
    return notLowered(I, "integer dot; the PE accumulates in fp32");
  llvm::Expected<DataType> TO = typeOf(I, ResultShape);
  if (!TO)
    return TO.takeError();
  if (!isArithmeticFloat(*TO))
    return notLowered(I, "result type " +
                             hlo::PrimitiveTypeName(ResultShape.element_type()));
  auto freeDims = [](const Shape &S, const std::vector<int64_t> &Batch,
                     const std::vector<int64_t> &Contract) {
    std::vector<int64_t> F;
    for (int64_t D = 0; D < S.rank(); ++D)
      if (!llvm::is_contained(Batch, D) && !llvm::is_contained(Contract, D))
        F.push_back(D);
    return F;
  };
  std::vector<int64_t> LF = freeDims(LS, DN->lhs_batch_dimensions,
                                     DN->lhs_contracting_dimensions);
  std::vector<int64_t> RF = freeDims(RS, DN->rhs_batch_dimensions,
                                     DN->rhs_contracting_dimensions);
  auto prod = [](const Shape &S, const std::vector<int64_t> &Ds) {
    uint64_t P = 1;
    for (int64_t D : Ds)
      P *= S.dimensions(D);
    return P;
  };
  uint64_t B = prod(LS, DN->lhs_batch_dimensions);
  uint64_t K = prod(LS, DN->lhs_contracting_dimensions);
  uint64_t M = prod(LS, LF), N = prod(RS, RF);
  llvm::Expected<int> Out = resultBuffer(I, ResultShape);
  if (!Out)
    return Out.takeError();
  if (B * M * N == 0)
    return arrayVal(*Out);
  if (K == 0)
    return notLowered(I, "an empty contraction");
  // The operands in the order the tiles read them: [B][K][M] and [B][K][N],
  // K in the order lhs_contracting_dims lists it (the interpreter's sum
  // order, docs/interpreter.md).
  auto canonical = [&](int Op, const Shape &S, const std::vector<int64_t> &Bt,
                       const std::vector<int64_t> &Ct,
                       const std::vector<int64_t> &Fr,
                       llvm::StringRef Tag) -> int {
    std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
    std::vector<int64_t> St = rowMajorStrides(Dm);
    Dims Src;
    std::vector<int64_t> Order;
    for (auto *List : {&Bt, &Ct, &Fr})
      for (int64_t D : *List)
        Order.push_back(D);
    bool Identity = true;
    for (size_t J = 0; J < Order.size(); ++J) {
      Src.push_back({St[Order[J]], static_cast<uint64_t>(Dm[Order[J]])});
      Identity &= Order[J] == static_cast<int64_t>(J);
    }
    if (Identity)
      return Ops[Op].Buf;
    int Scratch = newBuffer((I.name() + "." + Tag).str(), Bufs[Ops[Op].Buf].T,
                            Bufs[Ops[Op].Buf].Elems);
    uint64_t E = Bufs[Scratch].Elems;
    move(I, Ops[Op].Buf, 0, Src, Scratch, 0, {{1, E}});
    return Scratch;
  };
  int LT = canonical(0, LS, DN->lhs_batch_dimensions,
                     DN->lhs_contracting_dimensions, LF, "lhsT");
  int RT = canonical(1, RS, DN->rhs_batch_dimensions,
                     DN->rhs_contracting_dimensions, RF, "rhsT");
  barrier((I.name() + ".operands").str());
  const uint64_t TK = 128, TM = 128, TN = PsumBankBytes / 4;
  uint64_t NumTiles = B * ((M + TM - 1) / TM) * ((N + TN - 1) / TN);
  uint64_t KTiles = (K + TK - 1) / TK;
  if (L > 1 && NumTiles < L && KTiles >= L) {
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
        for (uint64_t K0 = 0; K0 < K; K0 += TK) {
          uint64_t Kt = std::min(TK, K - K0);
          MemoryLocation *SS = E.nextSlot(TL), *SM = E.nextSlot(TL);
          AccessPattern Stat(SS, 0, static_cast<unsigned>(Kt), 0, {{1, Mt}}, TL);
          AccessPattern Mov(SM, 0, static_cast<unsigned>(Kt), 0, {{1, Nt}}, TL);
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
  std::vector<unsigned> All(L);
  std::iota(All.begin(), All.end(), 0);
  std::string CollName = (I.name() + (Swap ? ".swap" : ".allreduce") +
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

/// AwsNeuronCollectiveMatmul by its contract (CollectiveMatmulContract.h,
/// Resolve): the local weight shard is all-gathered over the resolved
/// groups, reshaped (row-major: the same location) to the weight operand
/// shape, and multiplied on the recorded side as dot. The gather is one
/// collective carried by core 0; the kernel's ring of per-step
/// collective-permutes overlapped with the block matmuls is not generated
/// yet.
llvm::Expected<Val> DeviceLowering::lowerCollectiveMatmul(const HloInstruction &I,
                                                         llvm::ArrayRef<Val> Ops) {
  llvm::Expected<hlo::collective_matmul::Meaning> Mn =
      hlo::collective_matmul::Resolve(I);
  if (!Mn)
    return notLowered(I, llvm::toString(Mn.takeError()));
  llvm::Expected<std::vector<std::vector<int64_t>>> Groups = expandDeviceGroups(
      I, Mn->groups, Mn->channel_id.has_value() || Mn->use_global_device_ids,
      Mn->use_global_device_ids, /*HasGlobalAttribute=*/true, LS);
  if (!Groups)
    return notLowered(I, llvm::toString(Groups.takeError()));
  std::vector<unsigned> Group;
  for (const auto &G : *Groups)
    if (llvm::is_contained(G, Device))
      Group.assign(G.begin(), G.end());
  if (Group.empty())
    return notLowered(I, "the device is in no group of the gather");
  uint64_t n = Group.size();
  const Shape &Local = Mn->local_weight_shape;
  int In = Ops[0].Buf;
  uint64_t E = Bufs[In].Elems;
  if (static_cast<uint64_t>(Local.element_count()) != E ||
      static_cast<uint64_t>(Mn->gathered_weight_shape.element_count()) != n * E ||
      Mn->weight_operand_shape.element_count() !=
          Mn->gathered_weight_shape.element_count() ||
      Mn->dot_shape.element_count() != I.shape().element_count())
    return notLowered(I, "its shapes do not fit its group of " +
                             llvm::Twine(n) + " device(s)");
  DataType T = Bufs[In].T;
  int G = newBuffer((I.name() + ".gathered").str(), T, n * E);
  int64_t D = Mn->all_gather_dimension;
  uint64_t Outer = 1, Inner = 1;
  for (int64_t K = 0; K < Local.rank(); ++K)
    (K < D ? Outer : Inner) *= Local.dimensions(K);
  if (n == 1) {
    move(I, In, 0, {{1, E}}, G, 0, {{1, E}});
  } else {
    int Stacked = Outer == 1 ? G
                             : newBuffer((I.name() + ".stacked").str(), T, n * E);
    Cores[0].emit(std::make_unique<InstCollectiveCompute>(
                      Cores[0].uniqueName((I.name() + ".gather").str()),
                      Engine::POOL, CollectiveKind::AllGather, Group,
                      ReduceOp::None, /*Local=*/false),
                  {dram(In, 0, 0, {{1, E}})}, {dram(Stacked, 0, 0, {{1, n * E}})});
    if (Outer != 1) {
      barrier((I.name() + ".stacked").str());
      move(I, Stacked, 0,
           {{static_cast<int64_t>(Inner), Outer},
            {static_cast<int64_t>(E), n},
            {1, Inner}},
           G, 0, {{1, n * E}});
    }
  }
  barrier((I.name() + ".gathered").str());
  Val W = arrayVal(G);
  bool WeightLhs = Mn->weight_side == hlo::collective_matmul::WeightSide::kLhs;
  const Shape &Other = I.operand(1)->shape();
  if (WeightLhs)
    return lowerDotOf(I, Mn->weight_operand_shape, Other, Mn->dnums,
                      {W, Ops[1]}, Mn->dot_shape);
  return lowerDotOf(I, Other, Mn->weight_operand_shape, Mn->dnums, {Ops[1], W},
                    Mn->dot_shape);
}

} // namespace loom::codegen::detail
