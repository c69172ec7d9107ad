//===- Collectives.cpp - Collectives across devices -------------------------===//

#include "DeviceLowering.h"

#include <numeric>

namespace loom::codegen::detail {

// ---- Collectives -------------------------------------------------------------------

llvm::Expected<ReduceOp> reduceOpOf(const HloInstruction &I) {
  llvm::ArrayRef<HloComputation *> C = I.CalledComputations("to_apply");
  if (C.size() != 1)
    return makeError("no to_apply computation");
  const HloInstruction *Root = C[0]->root_instruction();
  if (C[0]->parameter_instructions().size() != 2 || Root->operand_count() != 2 ||
      Root->operand(0)->opcode() != HloOpcode::kParameter ||
      Root->operand(1)->opcode() != HloOpcode::kParameter)
    return makeError("to_apply is not one op of its two parameters");
  switch (Root->opcode()) {
  case HloOpcode::kAdd:
    return ReduceOp::Add;
  case HloOpcode::kMaximum:
    return ReduceOp::Max;
  case HloOpcode::kMinimum:
    return ReduceOp::Min;
  default:
    return makeError("to_apply is " + Root->OpcodeText() +
                     ", not add, maximum or minimum");
  }
}

llvm::Expected<Val> DeviceLowering::lowerCollective(const HloInstruction &I,
                                                    const Shape &Result,
                                                    llvm::ArrayRef<Val> Ops) {
  HloOpcode Op = I.opcode();
  bool Gather = Op == HloOpcode::kAllGather || Op == HloOpcode::kAllGatherStart;
  bool Reduce = Op == HloOpcode::kAllReduce || Op == HloOpcode::kAllReduceStart;
  bool Scatter = Op == HloOpcode::kReduceScatter;
  bool ToAll = Op == HloOpcode::kAllToAll;
  llvm::Expected<std::vector<std::vector<int64_t>>> Groups =
      getDeviceGroups(I, LS);
  if (!Groups)
    return notLowered(I, llvm::toString(Groups.takeError()));
  std::vector<unsigned> Group = groupContaining(*Groups, Device);
  if (Group.empty())
    return notLowered(I, "the device is in no replica group");
  uint64_t n = Group.size();
  ReduceOp RO = ReduceOp::None;
  if (Reduce || Scatter) {
    llvm::Expected<ReduceOp> R = reduceOpOf(I);
    if (!R)
      return notLowered(I, llvm::toString(R.takeError()));
    RO = *R;
  }
  // An integer sum wraps in HLO and saturates in CollectiveCompute: it is
  // gathered (all-gather, or all-to-all of the blocks for reduce-scatter)
  // and folded on the device by TensorReduce, whose integer Add wraps.
  auto intSum = [&](size_t K) {
    return RO == ReduceOp::Add && n > 1 && I.operand(K)->shape().IsArray() &&
           !hlo::IsFloatingPointType(I.operand(K)->shape().element_type());
  };
  std::optional<int64_t> Dim;
  if (Gather || Scatter || (ToAll && I.HasAttribute("dimensions"))) {
    llvm::Expected<int64_t> D = hlo::GetCollectiveDimension(I);
    if (!D)
      return notLowered(I, llvm::toString(D.takeError()));
    Dim = *D;
  }
  // A combined all-gather or reduce-scatter is one per operand; a rank-0
  // operand (torch-xla's token-like scalar) passes through unchanged, as in
  // the interpreter.
  if (ToAll && Dim && I.operand_count() != 1)
    return notLowered(I, "a combined array all-to-all of several operands");
  // The module header may not give the launch size the shapes were
  // written for: the result must have the elements the group implies.
  if (llvm::Error E = checkGroupShapes(I, Result, n))
    return notLowered(I, llvm::toString(std::move(E)));
  llvm::Expected<Val> Res = newValue(I, Result);
  if (!Res)
    return Res.takeError();
  std::vector<int> Outs;
  if (Res->IsTuple)
    for (const Val &E : Res->Elems)
      Outs.push_back(E.Buf);
  else
    Outs.push_back(Res->Buf);
  CollectiveKind Kind = Reduce    ? CollectiveKind::AllReduce
                        : Scatter ? CollectiveKind::ReduceScatter
                        : Gather  ? CollectiveKind::AllGather
                                  : CollectiveKind::AllToAll;
  // One CollectiveCompute moving In (n-block layout for scatter / to-all
  // inputs, gather / to-all outputs) to Out; at lnc > 1 each core carries
  // the same share of every block.
  auto collective = [&](int In, int Out, uint64_t InElems, llvm::StringRef Tag,
                        CollectiveKind K, ReduceOp KO) {
    uint64_t OutElems = Bufs[Out].Elems;
    // An empty array moves nothing (a CollectiveCompute walks at least one
    // element).
    if (InElems == 0 || OutElems == 0)
      return;
    if (n == 1) {
      move(I, In, 0, {{1, InElems}}, Out, 0, {{1, OutElems}});
      return;
    }
    // Blocks: the data splits into `Blocks` blocks of `Block` elements; a
    // core takes the same share of each block.
    bool KScatter = K == CollectiveKind::ReduceScatter;
    bool KGather = K == CollectiveKind::AllGather;
    bool KToAll = K == CollectiveKind::AllToAll;
    uint64_t InBlocks = (KScatter || KToAll) ? n : 1;
    uint64_t OutBlocks = (KGather || KToAll) ? n : 1;
    uint64_t InBlock = InElems / InBlocks, OutBlock = OutElems / OutBlocks;
    bool Split = L > 1 && InBlock % L == 0 && OutBlock % L == 0 &&
                 InBlock / L > 0 && InBlock == OutBlock;
    unsigned Parts = Split ? L : 1;
    // Unsplit at lnc > 1, every core still runs the collective, on the
    // whole data: a split program has each instruction on every core
    // (lower_local_collectives fences a non-local collective over all cores,
    // docs/local-collectives.md). Core 0 writes the result; the others
    // write a scratch copy of their own that nothing reads.
    std::vector<int> Discard(L, -1);
    if (!Split)
      for (unsigned C = 1; C < L; ++C)
        Discard[C] = newBuffer((I.name() + Tag + ".discard" + llvm::Twine(C)).str(),
                               Bufs[Out].T, OutElems);
    for (unsigned C = 0; C < L; ++C) {
      if (C >= Parts && Split)
        break;
      uint64_t Share = InBlock / Parts;
      Dims ID = InBlocks > 1 ? Dims{{static_cast<int64_t>(InBlock), InBlocks},
                                    {1, Share}}
                             : Dims{{1, Share}};
      Dims OD = OutBlocks > 1 ? Dims{{static_cast<int64_t>(OutBlock), OutBlocks},
                                     {1, OutBlock / Parts}}
                              : Dims{{1, OutBlock / Parts}};
      if (!Split) {
        ID = {{1, InElems}};
        OD = {{1, OutElems}};
      }
      std::string N = (I.name() + Tag).str();
      bool Scratch = !Split && C > 0;
      Cores[C].emit(std::make_unique<InstCollectiveCompute>(
                        Cores[C].uniqueName(N), Engine::POOL, K, Group, KO,
                        /*Local=*/false),
                    {dram(In, C, Split ? C * Share : 0, ID)},
                    {dram(Scratch ? Discard[C] : Out, C,
                          Split ? C * (OutBlock / Parts) : 0, OD)});
    }
  };
  // Received [n][Elems] blocks (block j from member j) folded in member
  // order into Out: laid out as [Elems][n] first, then one TensorReduce Add
  // per group of n, which wraps on integers as HLO's sum does.
  auto foldRanks = [&](int Recv, int Out, uint64_t Elems, llvm::StringRef Tag) {
    if (Elems == 0)
      return;
    std::string Base = (I.name() + Tag).str();
    barrier(Base + ".recv");
    DataType T = Bufs[Recv].T;
    int Ranks = newBuffer(Base + ".ranks", T, n * Elems);
    move(I, Recv, 0, {{1, Elems}, {static_cast<int64_t>(Elems), n}}, Ranks, 0,
         {{1, n * Elems}});
    barrier(Base + ".ranks");
    foldGroups(I, Ranks, Out, T, Elems, n, ArithOp::Add, 0.0, -1);
  };
  if (Reduce) {
    for (size_t K = 0; K < Ops.size(); ++K) {
      std::string Tag = Ops.size() > 1 ? "." + std::to_string(K) : "";
      uint64_t E = Bufs[Ops[K].Buf].Elems;
      if (!intSum(K)) {
        collective(Ops[K].Buf, Outs[K], E, Tag, Kind, RO);
        continue;
      }
      int Recv = newBuffer((I.name() + Tag + ".gathered").str(),
                           Bufs[Ops[K].Buf].T, n * E);
      collective(Ops[K].Buf, Recv, E, Tag, CollectiveKind::AllGather,
                 ReduceOp::None);
      foldRanks(Recv, Outs[K], E, Tag);
    }
  } else if (ToAll && !Dim) {
    // Tuple form: operand j goes to member j; result j comes from member j.
    uint64_t E = Bufs[Ops[0].Buf].Elems;
    if (Ops.size() != n)
      return notLowered(I, "a tuple all-to-all needs one operand per member");
    int In = newBuffer((I.name() + ".send").str(), Bufs[Ops[0].Buf].T, n * E);
    int Recv = newBuffer((I.name() + ".recv").str(), Bufs[Ops[0].Buf].T, n * E);
    for (size_t K = 0; K < n; ++K)
      move(I, Ops[K].Buf, 0, {{1, E}}, In, K * E, {{1, E}});
    barrier((I.name() + ".send").str());
    collective(In, Recv, n * E, "", Kind, RO);
    barrier((I.name() + ".recv").str());
    for (size_t K = 0; K < n; ++K)
      move(I, Recv, K * E, {{1, E}}, Outs[K], 0, {{1, E}});
  } else {
    for (size_t Op = 0; Op < Ops.size(); ++Op) {
      const Shape &OS = I.operand(Op)->shape();
      std::string Tag = Ops.size() > 1 ? "." + std::to_string(Op) : "";
      if (OS.rank() == 0) {
        move(I, Ops[Op].Buf, 0, {{1, 1}}, Outs[Op], 0, {{1, 1}});
        continue;
      }
      int64_t D = *Dim;
      uint64_t Outer = 1, Inner = 1;
      for (int64_t K = 0; K < OS.rank(); ++K)
        (K < D ? Outer : Inner) *= OS.dimensions(K);
      int In = Ops[Op].Buf;
      uint64_t E = Bufs[In].Elems;
      DataType T = Bufs[In].T;
      if (Gather) {
        // out viewed as [Outer][n][Inner] from the gathered [n][Outer*Inner].
        if (Outer == 1) {
          collective(In, Outs[Op], E, Tag, Kind, RO);
        } else {
          int G = newBuffer((I.name() + Tag + ".gathered").str(), T, n * E);
          collective(In, G, E, Tag, Kind, RO);
          barrier((I.name() + Tag + ".gathered").str());
          move(I, G, 0,
               {{static_cast<int64_t>(Inner), Outer},
                {static_cast<int64_t>(E), n},
                {1, Inner}},
               Outs[Op], 0, {{1, n * E}});
        }
      } else {
        // Scatter and array all-to-all: the operand as [n][Outer][Inner / n],
        // block j being the part of dimension D that member j owns.
        if (Inner % n)
          return notLowered(I, "dimension does not split over the group");
        uint64_t Part = Inner / n;
        int Blocks = In;
        if (Outer != 1) {
          Blocks = newBuffer((I.name() + Tag + ".blocks").str(), T, E);
          move(I, In, 0,
               {{static_cast<int64_t>(Part), n},
                {static_cast<int64_t>(Inner), Outer},
                {1, Part}},
               Blocks, 0, {{1, E}});
          barrier((I.name() + Tag + ".blocks").str());
        }
        if (Scatter && intSum(Op)) {
          int Recv = newBuffer((I.name() + Tag + ".recv").str(), T, E);
          collective(Blocks, Recv, E, Tag, CollectiveKind::AllToAll,
                     ReduceOp::None);
          foldRanks(Recv, Outs[Op], E / n, Tag);
        } else if (Scatter || Outer == 1) {
          collective(Blocks, Outs[Op], E, Tag, Kind, RO);
        } else {
          int Recv = newBuffer((I.name() + Tag + ".recv").str(), T, E);
          collective(Blocks, Recv, E, Tag, Kind, RO);
          barrier((I.name() + Tag + ".recv").str());
          // Received block j goes to part j of dimension D.
          move(I, Recv, 0,
               {{static_cast<int64_t>(Part), Outer},
                {static_cast<int64_t>(Outer * Part), n},
                {1, Part}},
               Outs[Op], 0, {{1, E}});
        }
      }
    }
    }
  barrier(I.name());
  return *Res;
}

llvm::Expected<Val> DeviceLowering::lowerPermute(const HloInstruction &I,
                                                 const Shape &Result,
                                                 const Val &Op) {
  if (I.operand_count() != 1 || !Result.IsArray())
    return notLowered(I, "a combined collective-permute of several operands");
  llvm::Expected<std::vector<std::pair<int64_t, int64_t>>> Pairs =
      getDevicePairs(I, LS);
  if (!Pairs)
    return notLowered(I, llvm::toString(Pairs.takeError()));
  int64_t ND = LS.ReplicaCount * LS.NumPartitions;
  std::vector<int64_t> Next(ND, -1), Prev(ND, -1);
  for (auto [S, T] : *Pairs) {
    if (Next[S] != -1 || Prev[T] != -1)
      return notLowered(I, "a device is twice a source or twice a target");
    Next[S] = T;
    Prev[T] = S;
  }
  // The components, in the order of their smallest device (docs/bir.md,
  // "collective-permute").
  std::vector<int> CompOf(ND, -1);
  std::vector<std::vector<unsigned>> Comps;
  std::vector<bool> IsChain;
  for (int64_t D = 0; D < ND; ++D) {
    if (CompOf[D] != -1 || (Next[D] == -1 && Prev[D] == -1))
      continue;
    // Walk back to a chain's head (or once around a cycle).
    int64_t Head = D;
    while (Prev[Head] != -1 && Prev[Head] != D)
      Head = Prev[Head];
    bool Chain = Prev[Head] == -1;
    if (!Chain)
      Head = D; // the smallest id of the cycle: the walk started there
    std::vector<unsigned> G;
    int64_t X = Head;
    do {
      G.push_back(static_cast<unsigned>(X));
      CompOf[X] = static_cast<int>(Comps.size());
      X = Next[X];
    } while (X != -1 && X != Head);
    Comps.push_back(G);
    IsChain.push_back(Chain);
  }
  llvm::Expected<int> Out = resultBuffer(I, Result);
  if (!Out)
    return Out.takeError();
  int C = CompOf[Device];
  bool Zero = C == -1 || (IsChain[C] && Comps[C][0] == Device);
  uint64_t E = Bufs[Op.Buf].Elems;
  if (C != -1 && E > 0) {
    const std::vector<unsigned> &G = Comps[C];
    int Recv = Zero ? newBuffer((I.name() + ".discard").str(), Bufs[*Out].T, E)
                    : *Out;
    if (G.size() == 1) {
      move(I, Op.Buf, 0, {{1, E}}, Recv, 0, {{1, E}});
    } else {
      bool Split = L > 1 && E % L == 0;
      unsigned Parts = Split ? L : 1;
      // Unsplit at lnc > 1, the other cores run it too into a scratch copy
      // (as for the other collectives above).
      std::vector<int> Discard(L, -1);
      if (!Split)
        for (unsigned K = 1; K < L; ++K)
          Discard[K] = newBuffer((I.name() + ".c" + llvm::Twine(C) + ".discard" +
                                  llvm::Twine(K)).str(),
                                 Bufs[*Out].T, E);
      for (unsigned K = 0; K < L; ++K) {
        if (K >= Parts && Split)
          break;
        uint64_t Share = E / Parts;
        bool Scratch = !Split && K > 0;
        Cores[K].emit(std::make_unique<InstCollectiveCompute>(
                          Cores[K].uniqueName((I.name() + ".c" + llvm::Twine(C)).str()),
                          Engine::POOL, CollectiveKind::Permute, G,
                          ReduceOp::None, false),
                      {dram(Op.Buf, K, Split ? K * Share : 0, {{1, Share}})},
                      {dram(Scratch ? Discard[K] : Recv, K, Split ? K * Share : 0,
                            {{1, Share}})});
      }
    }
  }
  if (Zero)
    fill(I, *Out, 0);
  barrier(I.name());
  return arrayVal(*Out);
}

/// all-gather-start, all-reduce-start, collective-permute-start and
/// async-start: the collective runs at the start (BIR's CollectiveCompute
/// overlaps by its dependencies, not by a start and a done); the start's
/// value is (operands, result, context...) with no data for the context.
llvm::Expected<Val> DeviceLowering::lowerStart(const HloInstruction &I,
                                               llvm::ArrayRef<Val> Ops) {
  const Shape &S = I.shape();
  const HloInstruction *Inner = &I;
  if (I.opcode() == HloOpcode::kAsyncStart) {
    if (I.async_wrapped_opcode())
      return notLowered(I, "async sugar of " +
                               hlo::HloOpcodeString(*I.async_wrapped_opcode()));
    llvm::ArrayRef<HloComputation *> C = I.CalledComputations("calls");
    if (C.size() != 1)
      return notLowered(I, "no wrapped computation");
    Inner = C[0]->root_instruction();
    bool OneOp = llvm::all_of(Inner->operands(), [](const HloInstruction *O) {
      return O->opcode() == HloOpcode::kParameter;
    });
    if (!OneOp || !isCollectiveOpcode(Inner->opcode())) {
      // Any other wrapped computation (several collectives, a call) runs
      // as a call at the start: its dependencies give the overlap.
      if (Depth > 64)
        return notLowered(I, "calls nested deeper than 64");
      ++Depth;
      llvm::Expected<Val> R = lowerComputation(*C[0], Ops);
      --Depth;
      if (!R)
        return R.takeError();
      return startValue(I, Ops, std::move(*R));
    }
  }
  bool Wrapped = !(I.opcode() == HloOpcode::kAllReduceStart) && S.IsTuple() &&
                 S.tuple_shapes_size() >= 2;
  const Shape &Result = Wrapped ? S.tuple_shapes(1) : S;
  std::vector<Val> InnerOps;
  for (const HloInstruction *O : Inner->operands())
    InnerOps.push_back(Inner == &I ? Ops[InnerOps.size()]
                                   : Ops[O->parameter_number()]);
  llvm::Expected<Val> R = [&]() -> llvm::Expected<Val> {
    switch (Inner->opcode()) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
      return lowerCollective(*Inner, Result, InnerOps);
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
      return lowerPermute(*Inner, Result, InnerOps[0]);
    default:
      return notLowered(I, "wraps " + Inner->OpcodeText());
    }
  }();
  if (!R || !Wrapped)
    return R;
  return startValue(I, Ops, std::move(*R));
}

/// A start's value (operands, result, context...): the context has no data.
Val DeviceLowering::startValue(const HloInstruction &I, llvm::ArrayRef<Val> Ops,
                               Val Result) {
  const Shape &S = I.shape();
  Val V;
  V.IsTuple = true;
  if (Ops.size() == 1)
    V.Elems.push_back(Ops[0]);
  else {
    Val Operands;
    Operands.IsTuple = true;
    Operands.Elems.assign(Ops.begin(), Ops.end());
    V.Elems.push_back(std::move(Operands));
  }
  V.Elems.push_back(std::move(Result));
  for (int64_t K = 2; K < S.tuple_shapes_size(); ++K)
    V.Elems.push_back(Val()); // a context: no data
  return V;
}

} // namespace loom::codegen::detail
