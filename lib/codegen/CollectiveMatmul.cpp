//===- CollectiveMatmul.cpp - AwsNeuronCollectiveMatmul as the kernel runs -===//
//
// The custom-call means "all-gather the weight shard, then the dot"
// (CollectiveMatmulContract.h, Resolve: the one home of that meaning). The
// Neuron kernel carries it out as a ring (the public notes of the kernel,
// shared/notes/collective-matmul-kernel.md): each device starts with its own
// block of the gathered operand, and in each of the n - 1 steps one remote
// collective-permute passes the block in hand to the next device of the
// group while the block that arrived is multiplied. docs/codegen.md,
// "AwsNeuronCollectiveMatmul", gives the rules:
//
//   step s (s = 0..n-1) on the device of rank r, block j = (r - s) mod n:
//     Permute of block j to rank r + 1, receiving block j - 1   (s < n - 1)
//     the output tiles of block j                               (overlapped)
//
// At lnc > 1 core c carries share c of every block across devices; with
// use_sb_to_sb=1 at two cores, core c loads only its share into SB and the
// cores swap the tiles by a local SendRecvCCE, so each core multiplies the
// whole block by its share of the other operand; otherwise the block goes
// through DRAM (a core barrier per step).
//
//===----------------------------------------------------------------------===//

#include "DeviceLowering.h"

#include <numeric>


namespace loom::codegen::detail {

/// The geometry of a ring dot: the weight operand as [K][F] (Cols) or
/// [F][K] (Rows), F its free elements and K the contracted ones; block
/// element (k, f) at k * SK + f * SF of the block's location.
struct DeviceLowering::RingDot {
  RingForm Form = RingForm::Rows;
  bool WeightLhs = true; // the weight is the stationary operand
  uint64_t F = 0, Fb = 0, K = 0, O = 0, SK = 0, SF = 0;
  int Other = -1; // the other operand as [K][O]
  int Out = -1;
  DataType TW = DataType::FP32, TO = DataType::FP32;
  /// Tiles exchanged SB to SB between the cores (use_sb_to_sb=1, lnc 2).
  bool SbToSb = false;
  /// Through DRAM, the cores share each block's free elements, each taking
  /// the whole other operand (when that operand is the narrower: its
  /// columns are loaded by every core instead of the block's).
  bool SplitF = false;
  /// Output element of weight free index f and other column o.
  uint64_t outIndex(uint64_t Fi, uint64_t Oc) const {
    return WeightLhs ? Fi * O + Oc : Oc * F + Fi;
  }
  /// The output walk of Fs weight elements by Os other columns, in the
  /// order of a PSUM tile (its partitions first).
  Dims outDims(uint64_t Fs, uint64_t Os) const {
    if (WeightLhs)
      return {{static_cast<int64_t>(O), Fs}, {1, Os}};
    return {{static_cast<int64_t>(F), Os}, {1, Fs}};
  }
};

void DeviceLowering::ringStep(const HloInstruction &I, unsigned Step,
                              const std::vector<unsigned> &Group, int InBuf,
                              uint64_t InOff, int OutBuf, uint64_t OutOff,
                              uint64_t E) {
  // Core c carries share c of the block (as lowerPermute splits); a block
  // that does not split is carried by core 0, the other cores running the
  // same instruction into a scratch copy (every core has each non-local
  // collective of a split program, docs/local-collectives.md).
  bool Split = L > 1 && E % L == 0;
  uint64_t Share = Split ? E / L : E;
  std::string N = (I.name() + ".ring" + llvm::Twine(Step)).str();
  for (unsigned C = 0; C < L; ++C) {
    int Dst = OutBuf;
    uint64_t Off = OutOff + (Split ? C * Share : 0);
    if (!Split && C > 0) {
      Dst = newBuffer((N + ".discard" + llvm::Twine(C)).str(), Bufs[OutBuf].T, E);
      Off = 0;
    }
    Cores[C].emit(std::make_unique<InstCollectiveCompute>(
                      Cores[C].uniqueName(N), Engine::POOL,
                      CollectiveKind::Permute, Group, ReduceOp::None,
                      /*Local=*/false),
                  {dram(InBuf, C, InOff + (Split ? C * Share : 0), {{1, Share}})},
                  {dram(Dst, C, Off, {{1, Share}})});
  }
}

/// The output tiles of one block, read from Src at element SrcOff. A tile
/// is at most 128 stationary columns by 512 moving columns (one PSUM bank
/// of fp32); every output element is accumulated on one core, K upwards, as
/// the interpreter sums. The K tiles of an operand tile share an SB working
/// tile as far as its 8 KiB per partition go, each loaded by its own DMA:
/// a working tile then holds several K tiles in flight instead of one.
void DeviceLowering::ringBlockTiles(const HloInstruction &I, const RingDot &R,
                                    uint64_t Block, int Src, uint64_t SrcOff) {
  const uint64_t TK = 128;
  // The weight's columns per tile, and the other operand's.
  uint64_t TW = R.WeightLhs ? 128 : 512, TOth = R.WeightLhs ? 512 : 128;
  uint64_t Base = Block * R.Fb, FCount = R.Fb, KCount = R.K;
  unsigned Sz = getDataTypeSize(R.TW);
  // Core c multiplies its share of the block's free elements by the whole
  // other operand (SplitF), or the whole block by its share
  // [O c / L, O (c+1) / L) of the other operand's columns.
  auto share = [&](unsigned C) {
    if (R.SplitF)
      return std::pair<uint64_t, uint64_t>(0, R.O);
    return std::pair<uint64_t, uint64_t>(R.O * C / L, R.O * (C + 1) / L);
  };
  uint64_t MaxPieces = 0;
  for (unsigned C = 0; C < L; ++C)
    MaxPieces = std::max(MaxPieces, (share(C).second - share(C).first + TOth - 1) / TOth);
  // One weight tile: Slices slices of Width rows; slice c' holds the rows
  // starting at Rows[c'] of the block. Through DRAM a tile is one slice.
  uint64_t Slices = R.SbToSb ? L : 1;
  uint64_t PerSlice = FCount / Slices, Width = TW / Slices;
  // Core c's free elements of each slice: [FLo(c), FLo(c) + FLen(c)).
  auto fLo = [&](unsigned C) { return R.SplitF ? PerSlice * C / L : 0; };
  auto fLen = [&](unsigned C) {
    return R.SplitF ? PerSlice * (C + 1) / L - fLo(C) : PerSlice;
  };
  uint64_t MaxLen = 0;
  for (unsigned C = 0; C < L; ++C)
    MaxLen = std::max(MaxLen, fLen(C));
  for (uint64_t P0 = 0; P0 < MaxLen; P0 += Width) {
    for (uint64_t Q = 0; Q < std::max<uint64_t>(MaxPieces, 1); ++Q) {
      for (unsigned C = 0; C < L; ++C) {
        CoreEmitter &E = Cores[C];
        if (P0 >= fLen(C))
          continue; // SplitF only: the SB-to-SB path has no such core
        uint64_t Wt = std::min(Width, fLen(C) - P0);
        auto [S0, S1] = share(C);
        uint64_t O0 = S0 + Q * TOth;
        bool Work = O0 < S1;
        uint64_t Ot = Work ? std::min(TOth, S1 - O0) : 0;
        if (!Work && !R.SbToSb)
          continue;
        MemoryLocation *Ps = Work ? E.nextPsum() : nullptr;
        unsigned Cols = static_cast<unsigned>(Wt * Slices);
        // G K tiles per working tile of the weight and of the other
        // operand, taken together and used by these G K tiles only (the
        // round robin of the working tiles never hands out one in use).
        uint64_t G = std::max<uint64_t>(1, SlotBytes / (std::max<uint64_t>(Cols, Ot) * Sz));
        MemoryLocation *WS = nullptr, *OS = nullptr;
        for (uint64_t K0 = 0; K0 < KCount; K0 += TK) {
          uint64_t KT = K0 / TK;
          unsigned Kt = static_cast<unsigned>(std::min(TK, KCount - K0));
          if (KT % G == 0) {
            WS = E.nextSlot(R.TW);
            OS = Work ? E.nextSlot(R.TW) : nullptr;
          }
          uint64_t WOff = (KT % G) * Cols * Sz;
          AccessPattern WAll(WS, 0, Kt, WOff, {{1, Cols}}, R.TW);
          // Partition k, column f: element (k, f) of the block.
          auto load = [&](uint64_t Slice, uint64_t Col) {
            uint64_t Fl = Slice * PerSlice + fLo(C) + P0;
            E.emit(std::make_unique<InstDMACopy>(name(C, I, "ld_w"), E.nextDma(),
                                                 false),
                   {dram(Src, C, SrcOff + K0 * R.SK + Fl * R.SF,
                         {{static_cast<int64_t>(R.SK), Kt},
                          {static_cast<int64_t>(R.SF), Wt}})},
                   {AccessPattern(WS, 0, Kt, WOff + Col * Wt * Sz, {{1, Wt}}, R.TW)});
          };
          if (!R.SbToSb) {
            load(0, 0);
          } else {
            // Own slice from DRAM, the peer's by a local SB-to-SB swap.
            load(C, C);
            std::string X = (I.name() + ".xchg" + llvm::Twine(NextExchange) +
                             "." + llvm::Twine(K0 / TK)).str();
            E.emit(std::make_unique<InstCollectiveCompute>(
                       E.uniqueName(X), Engine::POOL, CollectiveKind::SendRecvCCE,
                       std::vector<unsigned>{0, 1}, ReduceOp::None,
                       /*Local=*/true),
                   {AccessPattern(WS, 0, Kt, WOff + C * Wt * Sz, {{1, Wt}}, R.TW)},
                   {AccessPattern(WS, 0, Kt, WOff + (1 - C) * Wt * Sz, {{1, Wt}},
                                  R.TW)});
          }
          if (!Work)
            continue;
          AccessPattern OAp(OS, 0, Kt, (KT % G) * Ot * Sz, {{1, Ot}}, R.TW);
          E.emit(std::make_unique<InstDMACopy>(name(C, I, "ld_x"), E.nextDma(),
                                               false),
                 {dram(R.Other, C, K0 * R.O + O0,
                       {{static_cast<int64_t>(R.O), Kt}, {1, Ot}})},
                 {OAp});
          AccessPattern Acc =
              R.WeightLhs
                  ? AccessPattern(Ps, 0, Cols, 0, {{1, Ot}}, DataType::FP32)
                  : AccessPattern(Ps, 0, static_cast<unsigned>(Ot), 0,
                                  {{1, Cols}}, DataType::FP32);
          std::vector<AccessPattern> In =
              R.WeightLhs ? std::vector<AccessPattern>{WAll, OAp}
                          : std::vector<AccessPattern>{OAp, WAll};
          E.emit(std::make_unique<InstMatmul>(name(C, I, "mm"), Engine::PE,
                                              K0 > 0),
                 In, {Acc});
        }
        if (!Work)
          continue;
        unsigned Parts = static_cast<unsigned>(R.WeightLhs ? Cols : Ot);
        uint64_t Free = R.WeightLhs ? Ot : Cols;
        AccessPattern Acc(Ps, 0, Parts, 0, {{1, Free}}, DataType::FP32);
        Engine Evac = (P0 / Width + Q) % 2 ? Engine::DVE : Engine::ACT;
        MemoryLocation *SO = E.nextSlot(R.TO);
        E.emit(std::make_unique<InstTensorCopy>(name(C, I, "evac"), Evac),
               {Acc}, {AccessPattern(SO, 0, Parts, 0, {{1, Free}}, R.TO)});
        unsigned OSz = getDataTypeSize(R.TO);
        for (uint64_t Sl = 0; Sl < Slices; ++Sl) {
          uint64_t Row = Base + Sl * PerSlice + fLo(C) + P0;
          AccessPattern Part =
              R.WeightLhs
                  ? AccessPattern(SO, static_cast<unsigned>(Sl * Wt),
                                  static_cast<unsigned>(Wt), 0, {{1, Ot}}, R.TO)
                  : AccessPattern(SO, 0, static_cast<unsigned>(Ot),
                                  Sl * Wt * OSz, {{1, Wt}}, R.TO);
          E.emit(std::make_unique<InstDMACopy>(name(C, I, "st"), E.nextDma(),
                                               false),
                 {Part}, {dram(R.Out, C, R.outIndex(Row, O0), R.outDims(Wt, Ot))});
        }
      }
      if (R.SbToSb)
        ++NextExchange;
    }
  }
}

RingForm ringForm(const hlo::collective_matmul::Meaning &Mn, const Shape &Other,
                  const Shape &Result) {
  const Shape &Local = Mn.local_weight_shape;
  const Shape &WS = Mn.weight_operand_shape;
  bool WeightLhs = Mn.weight_side == hlo::collective_matmul::WeightSide::kLhs;
  const std::vector<int64_t> &WC = WeightLhs
                                       ? Mn.dnums.lhs_contracting_dimensions
                                       : Mn.dnums.rhs_contracting_dimensions;
  auto birType = [](const Shape &S) {
    return getBirTypeOfHloType(hlo::PrimitiveTypeName(S.element_type()));
  };
  std::optional<DataType> TW = birType(Local), TX = birType(Other),
                          TO = birType(Result);
  if (!TW || !TX || !TO || *TW != *TX || !isFloatType(*TW) ||
      !isArithmeticFloat(*TO) || !Mn.dnums.lhs_batch_dimensions.empty() ||
      !Mn.dnums.rhs_batch_dimensions.empty() || !Local.is_static() ||
      !WS.is_static() || Local.element_count() <= 0 || WS.rank() < 2)
    return RingForm::Gathered;
  int64_t D = Mn.all_gather_dimension, E = Local.element_count();
  int64_t Outer = 1;
  for (int64_t K = 0; K < D && K < Local.rank(); ++K)
    Outer *= Local.dimensions(K);
  if (Outer == 1 && WS.rank() == 2 && WC == std::vector<int64_t>{1} &&
      WS.dimensions(1) > 0 && E % WS.dimensions(1) == 0)
    return RingForm::Rows; // [F][K], a block is whole rows
  // A block that is a range of K (a [K][F] weight gathered along K) is not
  // multiplied as it arrives: its partial sum would be added in ring order,
  // not k upwards, and the rounding would differ from the interpreter's
  // (and grow through the layers after it); that form is Gathered.
  // [K...][F...] as gathered: the contracted dimensions are exactly those
  // before the gather dimension, so block j is columns [j E/K, (j+1) E/K).
  std::vector<int64_t> Lead(D);
  std::iota(Lead.begin(), Lead.end(), 0);
  if (D >= 1 && WC == Lead && WS.dimensions() == Mn.gathered_weight_shape.dimensions())
    return RingForm::Cols;
  return RingForm::Gathered;
}

/// AwsNeuronCollectiveMatmul by its contract (CollectiveMatmulContract.h,
/// Resolve). When every block is whole rows of a [W0][K] weight operand
/// whose rows are free (the kernel's natural form and the replacer's
/// row-gathered weights), the blocks are multiplied as they travel round
/// the ring; otherwise the ring fills the gathered weight first and the
/// dot follows, exactly as a dot is lowered.
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
  std::vector<unsigned> Group = groupContaining(*Groups, Device);
  if (Group.empty())
    return notLowered(I, "the device is in no group of the gather");
  uint64_t n = Group.size();
  uint64_t Rank = llvm::find(Group, static_cast<unsigned>(Device)) - Group.begin();
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
  int64_t D = Mn->all_gather_dimension;
  uint64_t Outer = 1, Inner = 1;
  for (int64_t K = 0; K < Local.rank(); ++K)
    (K < D ? Outer : Inner) *= Local.dimensions(K);
  bool WeightLhs = Mn->weight_side == hlo::collective_matmul::WeightSide::kLhs;
  const Shape &WS = Mn->weight_operand_shape;
  const Shape &OS = I.operand(1)->shape();
  const hlo::DotDimensionNumbers &DN = Mn->dnums;
  const std::vector<int64_t> &OC = WeightLhs ? DN.rhs_contracting_dimensions
                                             : DN.lhs_contracting_dimensions;
  llvm::Expected<DataType> TO = typeOf(I, I.shape());
  if (!TO)
    return TO.takeError();
  RingForm Form = ringForm(*Mn, OS, I.shape());
  if (Form == RingForm::Gathered) {
    // The other operand is laid out for the dot first, as [batch]
    // [contracting][free] (lowerDotOf then takes it as it is): its moves,
    // a transpose for an activation [M, K], run on the DMA queues under
    // the ring's transfers instead of after them.
    const std::vector<int64_t> &OB = WeightLhs ? DN.rhs_batch_dimensions
                                               : DN.lhs_batch_dimensions;
    std::vector<int64_t> OFr = freeDims(OS, OB, OC);
    int OtherT = canonicalOperand(I, Ops[1].Buf, OS, OB, OC, OFr,
                                  WeightLhs ? "rhsT" : "lhsT");
    std::vector<int64_t> Laid;
    for (llvm::ArrayRef<int64_t> List : {llvm::ArrayRef<int64_t>(OB),
                                         llvm::ArrayRef<int64_t>(OC),
                                         llvm::ArrayRef<int64_t>(OFr)})
      for (int64_t Dm : List)
        Laid.push_back(OS.dimensions(Dm));
    const Shape LaidShape(OS.element_type(), Laid);
    hlo::DotDimensionNumbers LaidDN = DN;
    std::vector<int64_t> &LB = WeightLhs ? LaidDN.rhs_batch_dimensions
                                         : LaidDN.lhs_batch_dimensions;
    std::vector<int64_t> &LC = WeightLhs ? LaidDN.rhs_contracting_dimensions
                                         : LaidDN.lhs_contracting_dimensions;
    LB.resize(OB.size());
    std::iota(LB.begin(), LB.end(), 0);
    LC.resize(OC.size());
    std::iota(LC.begin(), LC.end(), static_cast<int64_t>(OB.size()));
    Val OtherV = arrayVal(OtherT);
    int G = newBuffer((I.name() + ".gathered").str(), T, n * E);
    int Stacked = Outer == 1 ? G
                             : newBuffer((I.name() + ".stacked").str(), T, n * E);
    move(I, In, 0, {{1, E}}, Stacked, Rank * E, {{1, E}});
    for (uint64_t S = 1; S < n; ++S)
      ringStep(I, static_cast<unsigned>(S), Group, S == 1 ? In : Stacked,
               S == 1 ? 0 : ((Rank + n - S + 1) % n) * E, Stacked,
               ((Rank + n - S) % n) * E, E);
    if (Outer != 1) {
      barrier((I.name() + ".stacked").str());
      move(I, Stacked, 0,
           {{static_cast<int64_t>(Inner), Outer},
            {static_cast<int64_t>(E), n},
            {1, Inner}},
           G, 0, {{1, n * E}});
    }
    barrier((I.name() + ".gathered").str());
    Val W = arrayVal(G);
    if (WeightLhs)
      return lowerDotOf(I, WS, LaidShape, LaidDN, {W, OtherV}, Mn->dot_shape);
    return lowerDotOf(I, LaidShape, WS, LaidDN, {OtherV, W}, Mn->dot_shape);
  }
  RingDot R;
  R.Form = Form;
  R.WeightLhs = WeightLhs;
  uint64_t WElems = WS.element_count();
  if (Form == RingForm::Rows) {
    R.K = WS.dimensions(1);
    R.F = WS.dimensions(0);
    R.Fb = E / R.K;
    R.SK = 1;
    R.SF = R.K;
  } else {
    R.K = Outer;
    R.F = WElems / R.K;
    R.Fb = Inner;
    R.SK = Inner;
    R.SF = 1;
  }
  R.TW = T;
  R.TO = *TO;
  R.O = 1;
  std::vector<int64_t> OF = freeDims(OS, {}, OC);
  for (int64_t Dm : OF)
    R.O *= OS.dimensions(Dm);
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  R.Out = *Out;
  // SB to SB at two cores, for row blocks (the share a core's permute
  // receives is then whole rows: columns of the weight tiles). A local
  // collective's data is one flat sequence (docs/bir.md), so a gather of
  // more than two cores' column slices of a tile would land
  // partition-major; more cores, and the other forms, go through DRAM.
  R.SbToSb = Form == RingForm::Rows && L == 2 && Mn->config.use_sb_to_sb &&
             R.Fb % L == 0;
  R.SplitF = !R.SbToSb && L > 1 && R.O < R.Fb && R.Fb >= L;
  if (R.O == 0)
    return arrayVal(*Out);
  R.Other = canonicalOperand(I, Ops[1].Buf, OS, {}, OC, OF, "other");
  // Two block buffers, reused: step s receives into buffer s mod 2 while
  // the block of step s - 1 is multiplied from the other (the permute
  // waits for the reads of the block it overwrites, two steps back).
  int Buf[2] = {-1, -1};
  for (uint64_t S = 1; S < n && S < 3; ++S)
    Buf[S % 2] = newBuffer((I.name() + ".block" + llvm::Twine(S % 2)).str(), T, E);
  barrier((I.name() + ".operands").str());
  for (uint64_t S = 0; S < n; ++S) {
    uint64_t J = (Rank + n - S) % n;
    int Src = S == 0 ? In : Buf[S % 2];
    // Through DRAM every core reads the whole block, which the cores
    // received in shares: a barrier. The previous block's tiles run on
    // between the barriers, under this step's transfer.
    if (S > 0 && !R.SbToSb)
      barrier((I.name() + ".ring" + llvm::Twine(S)).str());
    if (S + 1 < n)
      ringStep(I, static_cast<unsigned>(S + 1), Group, Src, 0,
               Buf[(S + 1) % 2], 0, E);
    ringBlockTiles(I, R, J, Src, 0);
  }
  barrier(I.name());
  return arrayVal(*Out);
}

} // namespace loom::codegen::detail
