//===- Codegen.cpp - HLO module to the BIR programs of a launch -----------===//
//
// Every HLO array value lives in a SharedDRAM location of the device (one
// row, its elements in row-major order). Each op reads its operands from
// DRAM and writes its result there:
//
//   elementwise:  DMA chunk -> SB tile; ACT/DVE/POOL op; DMA SB tile -> DRAM
//   data movement (transpose, broadcast, slice, concatenate, pad):
//                 DMA DRAM -> DRAM with access patterns
//   dot:          DMA to [B][K][M] and [B][K][N]; per 128x512 output tile,
//                 Matmul per 128-row K tile accumulating into PSUM, TensorCopy
//                 PSUM -> SB (the result type), DMA SB -> DRAM
//   collectives:  non-local CollectiveCompute DRAM -> DRAM over device ids
//
// docs/codegen.md gives the rules and the reasons.
//
//===----------------------------------------------------------------------===//

#include "DeviceLowering.h"

#include "loom/hlo/ir/IdentityCustomCalls.h"

namespace loom::codegen {

namespace detail {

std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> Shape) {
  std::vector<int64_t> S(Shape.size(), 1);
  for (size_t I = Shape.size(); I-- > 1;)
    S[I - 1] = S[I] * Shape[I];
  return S;
}

/// Drops count-1 dimensions and merges dimensions that walk on
/// contiguously; the same elements in the same order.
Dims normalize(const Dims &In) {
  Dims Out;
  for (const PatternDim &D : In) {
    if (D.Count == 1)
      continue;
    if (!Out.empty() &&
        Out.back().Step == D.Step * static_cast<int64_t>(D.Count)) {
      Out.back() = {D.Step, Out.back().Count * D.Count};
      continue;
    }
    Out.push_back(D);
  }
  if (Out.empty())
    Out.push_back({1, 1});
  return Out;
}

uint64_t countOf(const Dims &D) {
  uint64_t N = 1;
  for (const PatternDim &P : D)
    N *= P.Count;
  return N;
}

bool isDefaultLayout(const Shape &S) {
  if (!S.has_layout())
    return true;
  const auto &M2M = S.layout()->minor_to_major;
  for (size_t I = 0; I < M2M.size(); ++I)
    if (M2M[I] != static_cast<int64_t>(M2M.size() - 1 - I))
      return false;
  return true;
}

std::vector<Chunk> chunks(uint64_t N, uint64_t F) {
  std::vector<Chunk> Out;
  uint64_t E = 0;
  while (E < N) {
    uint64_t Rem = N - E;
    if (Rem >= 128 * F) {
      Out.push_back({E, 128, F});
    } else {
      // What is left, spread over the partitions: rows of ceil(Rem / 128),
      // then the last partial row.
      uint64_t Row = (Rem + 127) / 128;
      if (Rem / Row > 0)
        Out.push_back({E, static_cast<unsigned>(Rem / Row), Row});
      else
        Out.push_back({E, 1, Rem});
    }
    E += Out.back().Parts * Out.back().Free;
  }
  return Out;
}

// ---- Instructions and computations -------------------------------------------------

/// The ops lowerElementwise lowers.
bool isElementwiseOpcode(HloOpcode Op) {
  switch (Op) {
  case HloOpcode::kAdd:
  case HloOpcode::kSubtract:
  case HloOpcode::kMultiply:
  case HloOpcode::kMaximum:
  case HloOpcode::kMinimum:
  case HloOpcode::kExp:
  case HloOpcode::kTanh:
  case HloOpcode::kNegate:
  case HloOpcode::kConvert:
  case HloOpcode::kDivide:
  case HloOpcode::kPower:
  case HloOpcode::kRemainder:
  case HloOpcode::kAnd:
  case HloOpcode::kOr:
  case HloOpcode::kXor:
  case HloOpcode::kCompare:
  case HloOpcode::kSelect:
  case HloOpcode::kLog:
  case HloOpcode::kSqrt:
  case HloOpcode::kRsqrt:
  case HloOpcode::kLogistic:
  case HloOpcode::kSin:
  case HloOpcode::kCos:
  case HloOpcode::kAbs:
  case HloOpcode::kNot:
    return true;
  default:
    return false;
  }
}

llvm::Expected<Val>
DeviceLowering::lower(const HloInstruction &I,
                      llvm::DenseMap<const HloInstruction *, Val> &Vals) {
  std::vector<Val> Ops;
  for (const HloInstruction *O : I.operands())
    Ops.push_back(Vals.lookup(O));
  auto arrayOps = [&]() -> llvm::Error {
    for (size_t K = 0; K < Ops.size(); ++K)
      if (Ops[K].Buf < 0)
        return notLowered(I, "operand " + llvm::Twine(K) + " is not an array");
    return llvm::Error::success();
  };
  if (Lanes > 0) {
    // A variadic reduce's to_apply, every scalar Lanes elements wide: its
    // elementwise ops, tuples and scalar constants (broadcast to the lanes).
    switch (I.opcode()) {
    case HloOpcode::kConstant: {
      if (!I.shape().IsArray() || I.shape().rank() != 0)
        return notLowered(I, "a constant that is not a scalar in a reduce's to_apply");
      uint64_t Wide = Lanes;
      Lanes = 0;
      llvm::Expected<Val> V = lowerConstant(I);
      Lanes = Wide;
      if (!V)
        return V.takeError();
      int B = newBuffer((I.name() + ".lanes").str(), Bufs[V->Buf].T, Wide);
      move(I, V->Buf, 0, {{0, Wide}}, B, 0, {{1, Wide}});
      barrier(I.name());
      return arrayVal(B, V->Const);
    }
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
      break;
    default:
      if (!isElementwiseOpcode(I.opcode()))
        return notLowered(I, "not lowered in a variadic reduce's to_apply");
    }
  }
  if (isElementwiseOpcode(I.opcode())) {
    if (llvm::Error E = arrayOps())
      return E;
    llvm::Expected<Val> V = lowerElementwise(I, Ops);
    if (V)
      V->Const = foldInteger(I, Ops);
    return V;
  }
  switch (I.opcode()) {
  case HloOpcode::kConstant:
    return lowerConstant(I);
  case HloOpcode::kTranspose:
  case HloOpcode::kBroadcast:
  case HloOpcode::kSlice:
  case HloOpcode::kConcatenate:
  case HloOpcode::kPad:
    if (llvm::Error E = arrayOps())
      return E;
    if (llvm::Error E = typeOf(I, I.shape()).takeError())
      return E;
    if (I.opcode() == HloOpcode::kBroadcast) {
      llvm::Expected<Val> V = lowerDataMovement(I, Ops);
      if (V)
        V->Const = Ops[0].Const;
      return V;
    }
    return lowerDataMovement(I, Ops);
  case HloOpcode::kReshape:
  case HloOpcode::kCopy:
    if (llvm::Error E = arrayOps())
      return E;
    if (I.shape().IsArray() && I.operand(0)->shape().IsArray() &&
        I.shape().element_count() == I.operand(0)->shape().element_count())
      return Ops[0]; // row-major elements are already in order
    return notLowered(I, "the shapes differ in element count");
  case HloOpcode::kBitcast:
    if (llvm::Error E = arrayOps())
      return E;
    if (I.shape().element_type() != I.operand(0)->shape().element_type() ||
        I.shape().element_count() != I.operand(0)->shape().element_count())
      return notLowered(I, "a bitcast that changes the element type");
    if (!isDefaultLayout(I.shape()) || !isDefaultLayout(I.operand(0)->shape()))
      return lowerBitcastLayouts(I, Ops[0]);
    return Ops[0];
  case HloOpcode::kDot:
    if (llvm::Error E = arrayOps())
      return E;
    if (llvm::Error E = checkDotFits(I))
      return E;
    return lowerDot(I, Ops);
  case HloOpcode::kTuple: {
    Val V;
    V.IsTuple = true;
    V.Elems = Ops;
    return V;
  }
  case HloOpcode::kGetTupleElement: {
    llvm::Expected<int64_t> Index = hlo::GetTupleIndex(I);
    if (!Index)
      return Index.takeError();
    if (!Ops[0].IsTuple || *Index >= static_cast<int64_t>(Ops[0].Elems.size()))
      return notLowered(I, "operand is not a tuple of that size");
    return Ops[0].Elems[*Index];
  }
  case HloOpcode::kPartitionId:
  case HloOpcode::kReplicaId: {
    llvm::Expected<int> Out = resultBuffer(I, I.shape());
    if (!Out)
      return Out.takeError();
    // Each device is compiled on its own: the id is a constant.
    double Id = I.opcode() == HloOpcode::kPartitionId ? Partition : Replica;
    fill(I, *Out, Id);
    barrier(I.name());
    return arrayVal(*Out, Id);
  }
  case HloOpcode::kAfterAll:
    return Val();
  case HloOpcode::kAddDependency:
  case HloOpcode::kOptimizationBarrier:
    return Ops[0];
  case HloOpcode::kCall:
  case HloOpcode::kFusion: {
    llvm::ArrayRef<HloComputation *> C = I.CalledComputations(
        I.opcode() == HloOpcode::kCall ? "to_apply" : "calls");
    if (C.size() != 1)
      return notLowered(I, "no called computation");
    if (Depth > 64)
      return notLowered(I, "calls nested deeper than 64");
    ++Depth;
    llvm::Expected<Val> R = lowerComputation(*C[0], Ops);
    --Depth;
    return R;
  }
  case HloOpcode::kCustomCall: {
    std::string Target = hlo::GetCustomCallTarget(I);
    if (hlo::IsIdentityCustomCallTarget(Target)) {
      // A marker hands its operand on; values are kept logically (a layout
      // is not an order in memory here), so only the type and dimensions
      // must agree, as the interpreter requires.
      if (Ops.size() != 1 ||
          !I.operand(0)->shape().Compatible(I.shape()))
        return notLowered(I, "custom-call target '" + Target +
                                 "' is a value-preserving marker: it needs one "
                                 "operand of its result's shape");
      return Ops[0];
    }
    if (hlo::collective_matmul::IsCollectiveMatmul(I)) {
      if (llvm::Error E = arrayOps())
        return E;
      return lowerCollectiveMatmul(I, Ops);
    }
    return notLowered(I, "custom-call target '" + Target + "'");
  }
  case HloOpcode::kAllGather:
  case HloOpcode::kAllReduce:
  case HloOpcode::kReduceScatter:
  case HloOpcode::kAllToAll:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerCollective(I, I.shape(), Ops);
  case HloOpcode::kCollectivePermute:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerPermute(I, I.shape(), Ops[0]);
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kCollectivePermuteStart:
  case HloOpcode::kAsyncStart:
    return lowerStart(I, Ops);
  case HloOpcode::kAllGatherDone:
  case HloOpcode::kAllReduceDone:
  case HloOpcode::kCollectivePermuteDone:
  case HloOpcode::kAsyncDone:
    // The start already holds the result; all-reduce-start is the result
    // (a tuple of results when it combines several operands).
    if (!Ops[0].IsTuple || I.opcode() == HloOpcode::kAllReduceDone)
      return Ops[0];
    if (Ops[0].Elems.size() < 2)
      return notLowered(I, "the start has no result element");
    return Ops[0].Elems[1];
  case HloOpcode::kAsyncUpdate:
    return Ops[0];
  case HloOpcode::kReduce:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerReduce(I, Ops);
  case HloOpcode::kIota:
    return lowerIota(I);
  case HloOpcode::kDynamicSlice:
  case HloOpcode::kDynamicUpdateSlice:
    if (llvm::Error E = arrayOps())
      return E;
    if (llvm::Error E = typeOf(I, I.shape()).takeError())
      return E;
    return lowerDynamicSlice(I, Ops);
  case HloOpcode::kWhile:
    return lowerWhile(I, Ops);
  case HloOpcode::kGather:
    if (llvm::Error E = arrayOps())
      return E;
    if (llvm::Error E = typeOf(I, I.shape()).takeError())
      return E;
    return lowerGather(I, Ops);
  case HloOpcode::kScatter:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerScatter(I, Ops);
  default:
    return notLowered(I, "no lowering for this opcode yet");
  }
}

/// A dot's multiply-adds: its output elements times the size of its
/// contracted dimensions.
static double dotMultiplyAdds(const HloInstruction &I) {
  double Macs = static_cast<double>(I.shape().element_count());
  llvm::Expected<hlo::DotDimensionNumbers> DN = hlo::GetDotDimensionNumbers(I);
  if (!DN) {
    llvm::consumeError(DN.takeError());
    return Macs;
  }
  for (int64_t D : DN->lhs_contracting_dimensions)
    Macs *= static_cast<double>(I.operand(0)->shape().dimensions(D));
  return Macs;
}

/// Refuses, before emitting any of it, a dot whose Matmuls alone would take
/// a core past its budget (CoreBudget): one Matmul does at most 128 x 128 x
/// 512 multiply-adds, and the cores share a dot's work at best evenly. The
/// message gives the core's share of the multiply-adds, which is what the
/// simulator's --max-work counts for the dot (docs/codegen.md, "Limits").
llvm::Error DeviceLowering::checkDotFits(const HloInstruction &I) {
  double PerCore = dotMultiplyAdds(I) / static_cast<double>(L);
  double MinMatmuls = PerCore / (128.0 * 128.0 * 512.0);
  uint64_t Emitted = 0;
  for (const CoreEmitter &E : Cores)
    Emitted = std::max<uint64_t>(Emitted, E.numEmitted());
  if (static_cast<double>(Emitted) + MinMatmuls <=
      static_cast<double>(CoreBudget))
    return llvm::Error::success();
  return notLowered(
      I, "the program of a core would exceed " + llvm::Twine(CoreBudget) +
             " instructions: at least " +
             llvm::Twine(static_cast<uint64_t>(MinMatmuls)) +
             " Matmuls for this dot, " +
             llvm::Twine(static_cast<uint64_t>(PerCore)) +
             " multiply-adds per core");
}

llvm::Expected<Val> DeviceLowering::lowerComputation(const HloComputation &C,
                                                     llvm::ArrayRef<Val> Args) {
  llvm::DenseMap<const HloInstruction *, Val> Vals;
  for (const HloInstruction *P : C.parameter_instructions()) {
    if (P->parameter_number() >= static_cast<int64_t>(Args.size()))
      return notLowered(*P, "no argument for this parameter");
    Vals[P] = Args[P->parameter_number()];
  }
  for (const HloInstruction *I : C.MakeInstructionPostOrder()) {
    if (I->opcode() == HloOpcode::kParameter)
      continue;
    llvm::Expected<Val> V = lower(*I, Vals);
    if (!V)
      return V.takeError();
    Vals[I] = std::move(*V);
    for (const CoreEmitter &E : Cores)
      if (E.numEmitted() > CoreBudget)
        return notLowered(*I, "the program of a core would exceed " +
                                  llvm::Twine(CoreBudget) + " instructions (" +
                                  llvm::Twine(MaxInstructionsPerCore) +
                                  " per core, " +
                                  llvm::Twine(MaxInstructionsPerLaunch) +
                                  " shared by the launch's " +
                                  llvm::Twine(LS.ReplicaCount *
                                              LS.NumPartitions * L) +
                                  " cores)");
  }
  return Vals.lookup(C.root_instruction());
}

/// The array leaves of a value with their tuple index paths.
void leaves(const Val &V, const Shape &S, std::vector<unsigned> &Path,
            std::vector<std::tuple<std::vector<unsigned>, int, const Shape *>> &Out) {
  if (S.IsTuple()) {
    for (int64_t K = 0; K < S.tuple_shapes_size(); ++K) {
      Path.push_back(static_cast<unsigned>(K));
      leaves(K < static_cast<int64_t>(V.Elems.size()) ? V.Elems[K] : Val(),
             S.tuple_shapes(K), Path, Out);
      Path.pop_back();
    }
    return;
  }
  if (S.IsArray())
    Out.emplace_back(Path, V.Buf, &S);
}

llvm::Expected<LaunchDevice> DeviceLowering::run() {
  const HloComputation *Entry = HM.entry_computation();
  LaunchDevice D;
  D.Device = static_cast<unsigned>(Device);
  D.Replica = static_cast<unsigned>(Replica);
  D.Partition = static_cast<unsigned>(Partition);
  std::vector<Val> Args;
  for (const HloInstruction *P : Entry->parameter_instructions()) {
    llvm::Expected<Val> V = newValue(*P, P->shape());
    if (!V)
      return V.takeError();
    std::vector<unsigned> Path;
    std::vector<std::tuple<std::vector<unsigned>, int, const Shape *>> Ls;
    leaves(*V, P->shape(), Path, Ls);
    for (auto &[Index, Buf, S] : Ls)
      D.Parameters.push_back({static_cast<unsigned>(P->parameter_number()),
                              P->name().str(), Index, S->ToString(false), 0,
                              Bufs[Buf].PerCore[0]->getName().str(),
                              hlo::IsReplicatedParameter(*P)});
    Args.push_back(std::move(*V));
  }
  llvm::Expected<Val> Root = lowerComputation(*Entry, Args);
  if (!Root)
    return Root.takeError();
  std::vector<unsigned> Path;
  std::vector<std::tuple<std::vector<unsigned>, int, const Shape *>> Ls;
  leaves(*Root, Entry->root_instruction()->shape(), Path, Ls);
  for (auto &[Index, Buf, S] : Ls) {
    if (Buf < 0)
      return notLowered(*Entry->root_instruction(), "an output leaf has no data");
    D.Outputs.push_back({0, "", Index, S->ToString(false), 0,
                         Bufs[Buf].PerCore[0]->getName().str()});
  }
  for (CoreEmitter &E : Cores) {
    E.finish();
    D.Modules.push_back(E.take());
  }
  return D;
}

} // namespace detail

using namespace detail;

llvm::Expected<Launch> lowerToLaunch(const hlo::HloModule &M,
                                     const CodegenOptions &Opts) {
  LaunchSize LS{Opts.ReplicaCount ? Opts.ReplicaCount : M.replica_count(),
                Opts.NumPartitions ? Opts.NumPartitions : M.num_partitions()};
  if (Opts.LncSize < 1 || Opts.LncSize > getMaxLncSize(Opts.Arch))
    return makeError("lnc_size " + llvm::Twine(Opts.LncSize) +
                     " is outside the target's range 1.." +
                     llvm::Twine(getMaxLncSize(Opts.Arch)));
  if (!M.entry_computation())
    return makeError("the module has no entry computation");
  Launch L;
  L.HloModule = M.name();
  L.ReplicaCount = static_cast<unsigned>(LS.ReplicaCount);
  L.NumPartitions = static_cast<unsigned>(LS.NumPartitions);
  L.LncSize = Opts.LncSize;
  L.Arch = Opts.Arch;
  for (int64_t D = 0; D < LS.ReplicaCount * LS.NumPartitions; ++D) {
    DeviceLowering DL(M, LS, D, Opts);
    llvm::Expected<LaunchDevice> Dev = DL.run();
    if (!Dev)
      return Dev.takeError();
    L.Devices.push_back(std::move(*Dev));
  }
  return L;
}

} // namespace loom::codegen
