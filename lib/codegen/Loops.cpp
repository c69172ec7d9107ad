//===- Loops.cpp - while loops as BIR Loop branches -------------------------===//
//
// A while loop whose trip count is found at compile time (an induction
// variable stepped by values known at compile time, compared with one) and
// that is either long or whose body's addresses do not depend on the
// iteration becomes one copy of its body in a block that a Loop branch
// repeats (docs/codegen.md, "Loops"). The loop's state lives in locations
// of its own: the body reads them, its results are copied back at the end
// of every iteration. Iterations are ordered by a barrier on SP at the top
// of the body, which engine order puts after the previous iteration's
// Loop branch, and that branch waits for every access of the body.
//
//===----------------------------------------------------------------------===//

#include "DeviceLowering.h"

namespace loom::codegen::detail {

namespace {

/// At most this many iterations are counted at compile time.
constexpr int64_t MaxCountedTrips = 1 << 20;
/// And at most this many instruction evaluations spent counting.
constexpr uint64_t MaxCountingWork = 20000000;

/// The values known at compile time of a computation's instructions for
/// one argument: no instruction is emitted (the fold of
/// docs/codegen.md, "Values known at compile time").
struct Folder {
  int64_t Partition = 0, Replica = 0;
  uint64_t Work = 0;
  llvm::DenseMap<const HloComputation *, std::vector<HloInstruction *>> Orders;

  Val eval(const HloComputation &C, const Val &Arg) {
    auto [It, New] = Orders.try_emplace(&C);
    if (New)
      It->second = C.MakeInstructionPostOrder();
    llvm::DenseMap<const HloInstruction *, Val> Vals;
    for (const HloInstruction *I : It->second) {
      ++Work;
      Val V;
      switch (I->opcode()) {
      case HloOpcode::kParameter:
        V = Arg;
        break;
      case HloOpcode::kTuple:
        V.IsTuple = true;
        for (const HloInstruction *O : I->operands())
          V.Elems.push_back(Vals.lookup(O));
        break;
      case HloOpcode::kGetTupleElement: {
        llvm::Expected<int64_t> K = hlo::GetTupleIndex(*I);
        const Val &T = Vals[I->operand(0)];
        if (!K) {
          llvm::consumeError(K.takeError());
          break;
        }
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
        V = Vals.lookup(I->operand(0));
        break;
      case HloOpcode::kBroadcast:
        V.Const = Vals.lookup(I->operand(0)).Const;
        break;
      case HloOpcode::kPartitionId:
        V.Const = Partition;
        break;
      case HloOpcode::kReplicaId:
        V.Const = Replica;
        break;
      default: {
        std::vector<Val> Ops;
        for (const HloInstruction *O : I->operands())
          Ops.push_back(Vals.lookup(O));
        V.Const = foldInteger(*I, Ops);
        break;
      }
      }
      Vals[I] = std::move(V);
    }
    return Vals.lookup(C.root_instruction());
  }
};

/// Keeps only the numbers of a value, without its buffers.
Val constsOf(const Val &V) {
  Val C;
  C.IsTuple = V.IsTuple;
  C.Const = V.Const;
  for (const Val &E : V.Elems)
    C.Elems.push_back(constsOf(E));
  return C;
}

/// Whether a computation (or one it calls) reads memory at addresses it
/// computes: a loop body with one of these has addresses that depend on
/// the iteration when its state feeds them.
bool hasComputedAddresses(const HloComputation &C, unsigned Depth = 0) {
  if (Depth > 64)
    return true;
  for (const HloInstruction *I : C.MakeInstructionPostOrder()) {
    switch (I->opcode()) {
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:
      return true;
    default:
      break;
    }
    for (llvm::StringRef Role : {"calls", "to_apply", "body", "condition"})
      for (const HloComputation *Sub : I->CalledComputations(Role))
        if (hasComputedAddresses(*Sub, Depth + 1))
          return true;
  }
  return false;
}

} // namespace

std::optional<int64_t> DeviceLowering::countTrips(const HloComputation &Cond,
                                                  const HloComputation &Body,
                                                  const Val &Init) {
  Folder F;
  F.Partition = Partition;
  F.Replica = Replica;
  Val State = constsOf(Init);
  for (int64_t Trip = 0; Trip <= MaxCountedTrips; ++Trip) {
    Val Go = F.eval(Cond, State);
    if (!Go.Const || F.Work > MaxCountingWork)
      return std::nullopt;
    if (*Go.Const == 0)
      return Trip;
    State = F.eval(Body, State);
  }
  return std::nullopt;
}

bool DeviceLowering::wantsLoopBranch(const HloComputation &Body,
                                     int64_t Trips) {
  return Trips > MaxUnrolledTrips ||
         (Trips > 1 && !hasComputedAddresses(Body));
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

llvm::Expected<Val> DeviceLowering::lowerLoopBranch(const HloInstruction &I,
                                                    const HloComputation &Body,
                                                    const Val &Init,
                                                    int64_t Trips) {
  // The state's own locations, filled from the initial value.
  std::vector<int> InitLeaves, State;
  arrayLeaves(Init, InitLeaves);
  for (size_t K = 0; K < InitLeaves.size(); ++K) {
    // (newBuffer grows Bufs: no reference into it is kept.)
    DataType T = Bufs[InitLeaves[K]].T;
    uint64_t E = Bufs[InitLeaves[K]].Elems;
    int S = newBuffer((I.name() + ".state." + llvm::Twine(K)).str(), T, E);
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
  llvm::Expected<Val> Result = lowerComputation(Body, {StateVal});
  if (!Result)
    return Result.takeError();
  std::vector<int> Out;
  arrayLeaves(*Result, Out);
  if (Out.size() != State.size())
    return notLowered(I, "the body's result has another number of arrays");
  // A result that is another state location would be overwritten before
  // it is read: such a permutation of the state is unrolled instead.
  for (size_t K = 0; K < Out.size(); ++K)
    if (Out[K] != State[K] && llvm::is_contained(State, Out[K]))
      return notLowered(I, "the body permutes its state");
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
        static_cast<unsigned>(Trips)));
    E.setCurrent(ExitBB[C]);
  }
  return StateVal;
}

} // namespace loom::codegen::detail
