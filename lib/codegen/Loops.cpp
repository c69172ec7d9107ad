//===- Loops.cpp - while loops: trip counts, Loop branches, unrolling ------===//
//
// A while loop's trip count is found by folding its condition and body at
// compile time on the values known there (docs/codegen.md, "Loops"). A
// counted loop of two or more iterations becomes one copy of its body in a
// block that a Loop branch repeats: the loop's state lives in locations of
// its own, which the body reads and into which its results are copied back
// at the end of every iteration, so the body's values derived from the
// state are unknown at compile time (offsets computed from the induction
// variable are read when the DMA runs, IndirectDMACopy). Iterations are
// ordered by a barrier on SP at the top of the body, which engine order
// puts after the previous iteration's Loop branch, and that branch waits
// for every access of the body. A body that needs the state's values at
// compile time (a nested loop whose trip count depends on the iteration)
// is unrolled instead, up to MaxUnrolledTrips iterations.
//
//===----------------------------------------------------------------------===//

#include "DeviceLowering.h"

#include "loom/bir/ir/IndirectDMACopy.h"

namespace loom::codegen::detail {

namespace {

/// At most this many iterations are counted at compile time.
constexpr int64_t MaxCountedTrips = 1 << 20;
/// And at most this many instruction evaluations spent counting.
constexpr uint64_t MaxCountingWork = 20000000;
/// Calls and nested loops are followed this deep.
constexpr unsigned MaxFoldDepth = 64;

/// Keeps only the numbers of a value, without its buffers.
Val constsOf(const Val &V) {
  Val C;
  C.IsTuple = V.IsTuple;
  C.Const = V.Const;
  for (const Val &E : V.Elems)
    C.Elems.push_back(constsOf(E));
  return C;
}

/// Whether two values of one loop state carry the same numbers.
bool sameConsts(const Val &A, const Val &B) {
  if (A.IsTuple != B.IsTuple || A.Const != B.Const ||
      A.Elems.size() != B.Elems.size())
    return false;
  for (size_t K = 0; K < A.Elems.size(); ++K)
    if (!sameConsts(A.Elems[K], B.Elems[K]))
      return false;
  return true;
}

/// A, keeping only the numbers B agrees with (B of the same structure).
Val commonConsts(const Val &A, const Val &B) {
  Val C;
  C.IsTuple = A.IsTuple;
  if (A.Const && B.Const && *A.Const == *B.Const && !B.IsTuple)
    C.Const = A.Const;
  for (size_t K = 0; K < A.Elems.size(); ++K)
    C.Elems.push_back(K < B.Elems.size() && B.IsTuple
                          ? commonConsts(A.Elems[K], B.Elems[K])
                          : constsOf(Val()));
  return C;
}

/// V (buffers) with the numbers of C (the same structure).
Val withConsts(const Val &V, const Val &C) {
  Val R = V;
  R.Const = V.IsTuple ? std::nullopt : C.Const;
  for (size_t K = 0; K < R.Elems.size(); ++K)
    R.Elems[K] = withConsts(V.Elems[K],
                            K < C.Elems.size() ? C.Elems[K] : Val());
  return R;
}

/// The values known at compile time of a computation's instructions for
/// given arguments: no instruction is emitted (the fold of docs/codegen.md,
/// "Values known at compile time", followed into calls, fusions and
/// nested loops).
struct LoopFolder {
  int64_t Partition = 0, Replica = 0;
  uint64_t Work = 0;
  unsigned Depth = 0;
  /// Set when the lowering would need a value this fold does not know: a
  /// nested loop without a trip count, a slice with more run-time starts
  /// than an IndirectDMACopy takes.
  bool NeedsMore = false;
  llvm::DenseMap<const HloComputation *, std::vector<HloInstruction *>> Orders;

  Val eval(const HloComputation &C, llvm::ArrayRef<Val> Args);
  TripCount count(const HloComputation &Cond, const HloComputation &Body,
                  const Val &Init);

private:
  void checkOffsets(const HloInstruction &I, llvm::ArrayRef<Val> Ops);
};

Val LoopFolder::eval(const HloComputation &C, llvm::ArrayRef<Val> Args) {
  auto [It, New] = Orders.try_emplace(&C);
  if (New)
    It->second = C.MakeInstructionPostOrder();
  // (Orders may grow below: the order is copied out of the map.)
  std::vector<HloInstruction *> Order = It->second;
  llvm::DenseMap<const HloInstruction *, Val> Vals;
  for (const HloInstruction *I : Order) {
    ++Work;
    Val V;
    std::vector<Val> Ops;
    for (const HloInstruction *O : I->operands())
      Ops.push_back(Vals.lookup(O));
    switch (I->opcode()) {
    case HloOpcode::kParameter:
      if (I->parameter_number() >= 0 &&
          I->parameter_number() < static_cast<int64_t>(Args.size()))
        V = Args[I->parameter_number()];
      break;
    case HloOpcode::kTuple:
      V.IsTuple = true;
      V.Elems = std::move(Ops);
      break;
    case HloOpcode::kGetTupleElement: {
      llvm::Expected<int64_t> K = hlo::GetTupleIndex(*I);
      if (!K) {
        llvm::consumeError(K.takeError());
        break;
      }
      const Val &T = Ops[0];
      if (T.IsTuple && *K >= 0 && *K < static_cast<int64_t>(T.Elems.size()))
        V = T.Elems[*K];
      break;
    }
    case HloOpcode::kConstant:
      if (I->shape().IsArray() && I->shape().element_count() == 1)
        if (std::optional<std::vector<double>> L =
                parseLiteral(I->literal_text()))
          if (L->size() == 1)
            V.Const = (*L)[0];
      break;
    case HloOpcode::kCopy:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
      V = Ops[0];
      break;
    case HloOpcode::kBroadcast:
      V.Const = Ops[0].Const;
      break;
    case HloOpcode::kPartitionId:
      V.Const = Partition;
      break;
    case HloOpcode::kReplicaId:
      V.Const = Replica;
      break;
    case HloOpcode::kCall:
    case HloOpcode::kFusion: {
      llvm::ArrayRef<HloComputation *> Sub = I->CalledComputations(
          I->opcode() == HloOpcode::kCall ? "to_apply" : "calls");
      if (Sub.size() != 1 || Depth >= MaxFoldDepth) {
        NeedsMore = true;
        break;
      }
      ++Depth;
      V = eval(*Sub[0], Ops);
      --Depth;
      break;
    }
    case HloOpcode::kWhile: {
      llvm::ArrayRef<HloComputation *> Cond = I->CalledComputations("condition");
      llvm::ArrayRef<HloComputation *> Body = I->CalledComputations("body");
      if (Cond.size() != 1 || Body.size() != 1 || Depth >= MaxFoldDepth ||
          Ops.empty()) {
        NeedsMore = true;
        break;
      }
      ++Depth;
      TripCount T = count(*Cond[0], *Body[0], Ops[0]);
      --Depth;
      if (T.Kind == TripCount::Found)
        V = std::move(T.Final);
      else
        NeedsMore = true;
      break;
    }
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
      checkOffsets(*I, Ops);
      break;
    default:
      V.Const = foldInteger(*I, Ops);
      break;
    }
    Vals[I] = std::move(V);
  }
  return Vals.lookup(C.root_instruction());
}

void LoopFolder::checkOffsets(const HloInstruction &I, llvm::ArrayRef<Val> Ops) {
  bool Update = I.opcode() == HloOpcode::kDynamicUpdateSlice;
  const Shape &S = I.operand(0)->shape();
  if (!S.IsArray())
    return;
  std::vector<int64_t> Sizes;
  if (Update) {
    if (I.operand_count() < 2 || !I.operand(1)->shape().IsArray())
      return;
    llvm::ArrayRef<int64_t> U = I.operand(1)->shape().dimensions();
    Sizes.assign(U.begin(), U.end());
  } else {
    llvm::Expected<std::vector<int64_t>> Sz = hlo::GetDynamicSliceSizes(I);
    if (!Sz) {
      llvm::consumeError(Sz.takeError());
      return;
    }
    Sizes = *Sz;
  }
  size_t First = Update ? 2 : 1;
  unsigned RunTime = 0;
  for (size_t K = 0; K < Sizes.size() && First + K < Ops.size() &&
                     static_cast<int64_t>(K) < S.rank();
       ++K)
    if (!Ops[First + K].Const && S.dimensions()[K] > Sizes[K])
      ++RunTime;
  if (RunTime > InstIndirectDMACopy::MaxOffsets)
    NeedsMore = true;
}

TripCount LoopFolder::count(const HloComputation &Cond,
                            const HloComputation &Body, const Val &Init) {
  Val State = constsOf(Init);
  for (int64_t Trip = 0; Trip <= MaxCountedTrips; ++Trip) {
    Val Go = eval(Cond, {State});
    if (Work > MaxCountingWork)
      return {TripCount::TooLong, Trip, {}};
    if (!Go.Const)
      return {TripCount::Unknown, Trip, {}};
    if (*Go.Const == 0)
      return {TripCount::Found, Trip, std::move(State)};
    Val Next = eval(Body, {State});
    // The condition held on numbers that the body leaves as they were:
    // it holds on every later iteration too.
    if (sameConsts(Next, State))
      return {TripCount::Endless, Trip, {}};
    State = std::move(Next);
  }
  return {TripCount::TooLong, MaxCountedTrips, {}};
}

} // namespace

TripCount DeviceLowering::countTrips(const HloComputation &Cond,
                                     const HloComputation &Body,
                                     const Val &Init) {
  LoopFolder F;
  F.Partition = Partition;
  F.Replica = Replica;
  return F.count(Cond, Body, Init);
}

/// The numbers of the state known at the top of every iteration: those of
/// the initial value that every iteration leaves as they were (a fixed
/// point: an element the body changes is dropped, and the body folded
/// again, until nothing changes).
static Val invariantState(LoopFolder &F, const HloComputation &Body,
                          const Val &Init) {
  Val S = constsOf(Init);
  for (;;) {
    Val Next = F.eval(Body, {S});
    Val Kept = commonConsts(S, Next);
    if (sameConsts(Kept, S))
      return S;
    S = std::move(Kept);
  }
}

/// The array leaves of a value, in order.
static void arrayLeaves(const Val &V, std::vector<int> &Out) {
  if (V.IsTuple) {
    for (const Val &E : V.Elems)
      arrayLeaves(E, Out);
    return;
  }
  if (V.Buf >= 0)
    Out.push_back(V.Buf);
}

/// V with its array leaves replaced, in order, by Bufs.
static Val withLeaves(const Val &V, llvm::ArrayRef<int> Bufs, size_t &Next) {
  Val R;
  R.IsTuple = V.IsTuple;
  if (V.IsTuple) {
    for (const Val &E : V.Elems)
      R.Elems.push_back(withLeaves(E, Bufs, Next));
    return R;
  }
  if (V.Buf >= 0)
    R.Buf = Bufs[Next++];
  return R;
}

llvm::Expected<Val> DeviceLowering::lowerWhile(const HloInstruction &I,
                                               llvm::ArrayRef<Val> Ops) {
  llvm::ArrayRef<HloComputation *> Cond = I.CalledComputations("condition");
  llvm::ArrayRef<HloComputation *> Body = I.CalledComputations("body");
  if (Cond.size() != 1 || Body.size() != 1 || Ops.size() != 1)
    return notLowered(I, "no condition or body");
  Val State = Ops[0];
  TripCount T = countTrips(*Cond[0], *Body[0], State);
  switch (T.Kind) {
  case TripCount::Endless:
    return notLowered(I, "the loop never ends: its condition holds on values "
                         "known at compile time that the body leaves as they "
                         "were");
  case TripCount::TooLong:
    return notLowered(I, "no trip count within " +
                             llvm::Twine(MaxCountedTrips) +
                             " iterations and " +
                             llvm::Twine(MaxCountingWork) +
                             " folded instructions");
  case TripCount::Found:
    if (T.Trips > 1) {
      LoopFolder F;
      F.Partition = Partition;
      F.Replica = Replica;
      Val Inv = invariantState(F, *Body[0], State);
      F.NeedsMore = false;
      F.eval(*Body[0], {Inv});
      if (!F.NeedsMore)
        return lowerLoopBranch(I, *Body[0], State, Inv, T);
      if (T.Trips > MaxUnrolledTrips)
        return notLowered(
            I, llvm::Twine(T.Trips) +
                   " iterations whose body needs the loop's state at compile "
                   "time (a nested loop whose trip count depends on the "
                   "iteration, or more than " +
                   llvm::Twine(InstIndirectDMACopy::MaxOffsets) +
                   " start indices computed on the device); such loops are "
                   "unrolled up to " +
                   llvm::Twine(MaxUnrolledTrips) + " iterations");
    }
    break;
  case TripCount::Unknown:
    break;
  }
  // Unrolled: the condition is lowered and folded before every iteration.
  for (int64_t Trip = 0;; ++Trip) {
    llvm::Expected<Val> Go = lowerComputation(*Cond[0], {State});
    if (!Go)
      return Go.takeError();
    if (!Go->Const)
      return notLowered(I, "no trip count: the condition depends on data, "
                           "not only on values known at compile time");
    if (*Go->Const == 0)
      break;
    if (Trip == MaxUnrolledTrips)
      return notLowered(I, "more than " + llvm::Twine(MaxUnrolledTrips) +
                               " iterations; loops are unrolled up to " +
                               llvm::Twine(MaxUnrolledTrips));
    llvm::Expected<Val> Next = lowerComputation(*Body[0], {State});
    if (!Next)
      return Next.takeError();
    State = std::move(*Next);
  }
  return State;
}

llvm::Expected<Val> DeviceLowering::lowerLoopBranch(const HloInstruction &I,
                                                    const HloComputation &Body,
                                                    const Val &Init,
                                                    const Val &Invariant,
                                                    const TripCount &T) {
  // The state's own locations, filled from the initial value.
  std::vector<int> InitLeaves, State;
  arrayLeaves(Init, InitLeaves);
  for (size_t K = 0; K < InitLeaves.size(); ++K) {
    // (newBuffer grows Bufs: no reference into it is kept.)
    DataType Ty = Bufs[InitLeaves[K]].T;
    uint64_t E = Bufs[InitLeaves[K]].Elems;
    int S = newBuffer((I.name() + ".state." + llvm::Twine(K)).str(), Ty, E);
    State.push_back(S);
    move(I, InitLeaves[K], 0, {{1, E}}, S, 0, {{1, E}});
  }
  barrier((I.name() + ".init").str());
  size_t Next = 0;
  Val StateVal = withLeaves(Init, State, Next);
  // The body block, entered by a Jump; the exit block after it.
  std::vector<unsigned> All(L);
  std::iota(All.begin(), All.end(), 0);
  std::vector<BasicBlock *> BodyBB, ExitBB;
  for (unsigned C = 0; C < L; ++C) {
    CoreEmitter &E = Cores[C];
    BasicBlock *From = E.current();
    BasicBlock *B = E.module().createBlock(E.uniqueName((I.name() + ".body").str()));
    BasicBlock *X = E.module().createBlock(E.uniqueName((I.name() + ".exit").str()));
    From->addSuccessor(B);
    E.emitFence(std::make_unique<InstBranch>(E.uniqueName((I.name() + ".enter").str()),
                                             Engine::SP, BranchKind::Jump));
    E.setCurrent(B);
    BodyBB.push_back(B);
    ExitBB.push_back(X);
    // The top of every iteration: after the previous iteration's branch
    // (SP's order), before everything of this one.
    E.emitFence(std::make_unique<InstCoreBarrier>(
        E.uniqueName((I.name() + ".iter").str()), Engine::SP, NextBarrier, All));
  }
  ++NextBarrier;
  // In the body, the state's invariant numbers are known, the others not.
  llvm::Expected<Val> Result =
      lowerComputation(Body, {withConsts(StateVal, Invariant)});
  if (!Result)
    return Result.takeError();
  std::vector<int> Out;
  arrayLeaves(*Result, Out);
  if (Out.size() != State.size())
    return notLowered(I, "the body's result has another number of arrays");
  // A result that is another state element (the body permutes its state)
  // would be overwritten before it is read: it is first copied aside.
  bool Aside = false;
  for (size_t K = 0; K < Out.size(); ++K)
    if (Out[K] != State[K] && llvm::is_contained(State, Out[K])) {
      DataType Ty = Bufs[Out[K]].T;
      uint64_t E = Bufs[Out[K]].Elems;
      int Tmp = newBuffer((I.name() + ".aside." + llvm::Twine(K)).str(), Ty, E);
      move(I, Out[K], 0, {{1, E}}, Tmp, 0, {{1, E}});
      Out[K] = Tmp;
      Aside = true;
    }
  if (Aside)
    barrier((I.name() + ".aside").str());
  for (size_t K = 0; K < Out.size(); ++K)
    if (Out[K] != State[K]) {
      uint64_t E = Bufs[State[K]].Elems;
      move(I, Out[K], 0, {{1, E}}, State[K], 0, {{1, E}});
    }
  barrier((I.name() + ".next").str());
  for (unsigned C = 0; C < L; ++C) {
    CoreEmitter &E = Cores[C];
    E.current()->addSuccessor(BodyBB[C]);
    E.current()->addSuccessor(ExitBB[C]);
    // The branch waits for every access of the iteration.
    E.emitFence(std::make_unique<InstBranch>(
        E.uniqueName((I.name() + ".loop").str()), Engine::SP, BranchKind::Loop,
        static_cast<unsigned>(T.Trips)));
    E.setCurrent(ExitBB[C]);
  }
  // After the loop, the state holds the numbers the count ended with.
  return withConsts(StateVal, T.Final);
}

} // namespace loom::codegen::detail
