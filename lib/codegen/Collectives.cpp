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
  std::vector<unsigned> Group;
  for (const auto &G : *Groups)
    if (llvm::is_contained(G, Device))
      Group.assign(G.begin(), G.end());
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
  for (const HloInstruction *O : I.operands())
    if (RO == ReduceOp::Add && O->shape().IsArray() &&
        !hlo::IsFloatingPointType(O->shape().element_type()))
      return notLowered(I, "an integer sum wraps in HLO, CollectiveCompute "
                           "saturates");
  std::optional<int64_t> Dim;
  if (Gather || Scatter || (ToAll && I.operand_count() == 1)) {
    llvm::Expected<int64_t> D = hlo::GetCollectiveDimension(I);
    if (!D)
      return notLowered(I, llvm::toString(D.takeError()));
    Dim = *D;
  }
  if (!Reduce && !(ToAll && !Dim) && I.operand_count() != 1)
    return notLowered(I, "a combined collective of several operands");
  // The module header may not give the launch size the shapes were
  // written for: the result must have the elements the group implies.
  for (size_t K = 0; K < I.operands().size(); ++K) {
    const Shape &OS = I.operand(K)->shape();
    const Shape &RS = Result.IsTuple() && !(ToAll && !Dim)
                          ? Result.tuple_shapes(std::min<int64_t>(
                                K, Result.tuple_shapes_size() - 1))
                          : Result;
    if (!OS.IsArray() || !RS.IsArray())
      return notLowered(I, "operands and results must be arrays");
    uint64_t In = OS.element_count(), Want = In;
    if (Gather)
      Want = In * n;
    else if (Scatter)
      Want = In % n ? 0 : In / n;
    if (static_cast<uint64_t>(RS.element_count()) != Want ||
        (Scatter && In % n))
      return notLowered(I, "its shapes do not fit its group of " +
                               llvm::Twine(n) +
                               " device(s); give the launch size with "
                               "--replica-count / --num-partitions");
  }
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
  auto collective = [&](int In, int Out, uint64_t InElems, llvm::StringRef Tag) {
    uint64_t OutElems = Bufs[Out].Elems;
    if (n == 1) {
      move(I, In, 0, {{1, InElems}}, Out, 0, {{1, OutElems}});
      return;
    }
    // Blocks: the data splits into `Blocks` blocks of `Block` elements; a
    // core takes the same share of each block.
    uint64_t InBlocks = (Scatter || ToAll) ? n : 1;
    uint64_t OutBlocks = (Gather || ToAll) ? n : 1;
    uint64_t InBlock = InElems / InBlocks, OutBlock = OutElems / OutBlocks;
    bool Split = L > 1 && InBlock % L == 0 && OutBlock % L == 0 &&
                 InBlock / L > 0 && InBlock == OutBlock;
    unsigned Parts = Split ? L : 1;
    for (unsigned C = 0; C < Parts; ++C) {
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
      Cores[C].emit(std::make_unique<InstCollectiveCompute>(
                        Cores[C].uniqueName(N), Engine::POOL, Kind, Group, RO,
                        /*Local=*/false),
                    {dram(In, C, C * Share, ID)},
                    {dram(Out, C, C * (OutBlock / Parts), OD)});
    }
  };
  if (Reduce) {
    for (size_t K = 0; K < Ops.size(); ++K)
      collective(Ops[K].Buf, Outs[K], Bufs[Ops[K].Buf].Elems,
                 Ops.size() > 1 ? "." + std::to_string(K) : "");
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
    collective(In, Recv, n * E, "");
    barrier((I.name() + ".recv").str());
    for (size_t K = 0; K < n; ++K)
      move(I, Recv, K * E, {{1, E}}, Outs[K], 0, {{1, E}});
  } else {
    if (Ops.size() != 1)
      return notLowered(I, "a combined collective of several operands");
    const Shape &OS = I.operand(0)->shape();
    int64_t D = *Dim;
    uint64_t Outer = 1, Inner = 1;
    for (int64_t K = 0; K < OS.rank(); ++K)
      (K < D ? Outer : Inner) *= OS.dimensions(K);
    int In = Ops[0].Buf;
    uint64_t E = Bufs[In].Elems;
    DataType T = Bufs[In].T;
    if (Gather) {
      // out viewed as [Outer][n][Inner] from the gathered [n][Outer*Inner].
      if (Outer == 1) {
        collective(In, Outs[0], E, "");
      } else {
        int G = newBuffer((I.name() + ".gathered").str(), T, n * E);
        collective(In, G, E, "");
        barrier((I.name() + ".gathered").str());
        move(I, G, 0,
             {{static_cast<int64_t>(Inner), Outer},
              {static_cast<int64_t>(E), n},
              {1, Inner}},
             Outs[0], 0, {{1, n * E}});
      }
    } else {
      // Scatter and array all-to-all: the operand as [n][Outer][Inner / n],
      // block j being the part of dimension D that member j owns.
      if (Inner % n)
        return notLowered(I, "dimension does not split over the group");
      uint64_t Part = Inner / n;
      int Blocks = In;
      if (Outer != 1) {
        Blocks = newBuffer((I.name() + ".blocks").str(), T, E);
        move(I, In, 0,
             {{static_cast<int64_t>(Part), n},
              {static_cast<int64_t>(Inner), Outer},
              {1, Part}},
             Blocks, 0, {{1, E}});
        barrier((I.name() + ".blocks").str());
      }
      if (Scatter) {
        collective(Blocks, Outs[0], E, "");
      } else if (Outer == 1) {
        collective(Blocks, Outs[0], E, "");
      } else {
        int Recv = newBuffer((I.name() + ".recv").str(), T, E);
        collective(Blocks, Recv, E, "");
        barrier((I.name() + ".recv").str());
        // Received block j goes to part j of dimension D.
        move(I, Recv, 0,
             {{static_cast<int64_t>(Part), Outer},
              {static_cast<int64_t>(Outer * Part), n},
              {1, Part}},
             Outs[0], 0, {{1, E}});
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
  if (C != -1) {
    const std::vector<unsigned> &G = Comps[C];
    uint64_t E = Bufs[Op.Buf].Elems;
    int Recv = Zero ? newBuffer((I.name() + ".discard").str(), Bufs[*Out].T, E)
                    : *Out;
    if (G.size() == 1) {
      move(I, Op.Buf, 0, {{1, E}}, Recv, 0, {{1, E}});
    } else {
      bool Split = L > 1 && E % L == 0;
      unsigned Parts = Split ? L : 1;
      for (unsigned K = 0; K < Parts; ++K) {
        uint64_t Share = E / Parts;
        Cores[K].emit(std::make_unique<InstCollectiveCompute>(
                          Cores[K].uniqueName((I.name() + ".c" + llvm::Twine(C)).str()),
                          Engine::POOL, CollectiveKind::Permute, G,
                          ReduceOp::None, false),
                      {dram(Op.Buf, K, K * Share, {{1, Share}})},
                      {dram(Recv, K, K * Share, {{1, Share}})});
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
    for (const HloInstruction *O : Inner->operands())
      if (O->opcode() != HloOpcode::kParameter)
        return notLowered(I, "the wrapped computation is more than one "
                             "collective of its parameters");
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
  V.Elems.push_back(std::move(*R));
  for (int64_t K = 2; K < S.tuple_shapes_size(); ++K)
    V.Elems.push_back(Val()); // a context: no data
  return V;
}

} // namespace loom::codegen::detail
