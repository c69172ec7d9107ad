//===- SimulatorExecution.cpp - What an execution does to memory ------------===//
//
// The element effect of an execution (docs/bir.md, "What each instruction
// reads and writes"; Semantics.cpp computes, this file gathers the operands
// and scatters the results), the reference semantics of a collective's
// round once every member has arrived, the race-detector accesses of both,
// and the uninitialized-read check.
//
//===----------------------------------------------------------------------===//

#include "SimulatorImpl.h"

#include "Semantics.h"


#include <cstring>

namespace loom::bir::sim::detail {

std::string storageLabel(const Storage &S) {
  if (S.Device)
    return S.Owner ? (S.Name + " (device " + llvm::Twine(*S.Device) +
                      " core " + llvm::Twine(*S.Owner) + ")")
                         .str()
                   : (S.Name + " (device " + llvm::Twine(*S.Device) + ")")
                         .str();
  return S.Owner ? (S.Name + " (core " + llvm::Twine(*S.Owner) + ")").str()
                 : S.Name;
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

void SubgraphSim::raceAccess(CoreSim &C, StaticInst &S, uint64_t Exec,
                             const OperandInfo &Op, bool Write, uint32_t VC) {
  if (!Races)
    return;
  AccessSite Site{C.Core, S.I->getEngine(), S.I, Exec};
  if (Launch)
    Site.Device = int(C.Device);
  Races->access(Op.S->Id, storageLabel(*Op.S), *Op.AP, Write, Site,
                thread(C, S.Eng), Pool[VC]);
}

bool SubgraphSim::gatherChecked(CoreSim &C, const StaticInst &S,
                                const OperandInfo &Op,
                                std::vector<uint8_t> &Buf) {
  std::optional<uint64_t> Bad = gather(*Op.S, Op.Shape, Buf);
  if (!Bad)
    return true;
  reportUninit(C, S, Op, *Bad);
  return false;
}

// Messages here are built with Twine, not formatv: gcc 12 warns
// (-Wmaybe-uninitialized) inside LLVM 14's integer formatter when it is
// inlined into this file.

void SubgraphSim::reportUninit(const CoreSim &C, const StaticInst &S,
                               const OperandInfo &Op, uint64_t Byte) {
  if (!Failed) {
    uint64_t P = Byte / Op.S->BytesPerPartition;
    uint64_t B = Byte % Op.S->BytesPerPartition;
    Failed = {FailureKind::Error,
              (O.FileName + ": uninitialized read: '" + S.I->getName() +
               "' on " + coreName(C) + " reads '" + storageLabel(*Op.S) +
               "' partition " + llvm::Twine(P) + " byte " + llvm::Twine(B) +
               ", which nothing wrote and which is not an input")
                  .str()};
  }
}

void SubgraphSim::copyOperands(CoreSim &C, const StaticInst &S,
                               const OperandInfo &In, const OperandInfo &Out) {
  if (!S.Accumulate && In.S != Out.S) {
    // Different buffers: nothing read can be overwritten first.
    if (std::optional<uint64_t> Bad =
            copyRuns(*In.S, In.Shape, *Out.S, Out.Shape, RunScratch))
      reportUninit(C, S, In, *Bad);
    return;
  }
  if (!gatherChecked(C, S, In, Buf0))
    return;
  if (S.Accumulate) {
    if (!gatherChecked(C, S, Out, Buf1))
      return;
    accumulate(Out.AP->getType(), Buf0.data(), Buf1.data(),
               Out.AP->getNumElements());
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  scatter(*Out.S, Out.Shape, Buf0.data());
}

void SubgraphSim::execute(CoreSim &C, StaticInst &S, uint64_t Exec,
                          uint32_t VC) {
  const Instruction &I = *S.I;
  if (I.getType() == InstructionType::IndirectDMACopy)
    return executeIndirect(C, S, Exec, VC);
  if (RaceCheck && I.getType() != InstructionType::TensorCompletion) {
    for (const OperandInfo &Op : S.In)
      raceAccess(C, S, Exec, Op, false, VC);
    // An accumulating write also reads its bytes; the write alone already
    // conflicts with everything the read would.
    for (const OperandInfo &Op : S.Out)
      raceAccess(C, S, Exec, Op, true, VC);
  }
  switch (I.getType()) {
  case InstructionType::DMACopy:
  case InstructionType::GPSIMDSB2SB:
    copyOperands(C, S, S.In[0], S.Out[0]);
    return;
  case InstructionType::TensorCopy: {
    const OperandInfo &In = S.In[0], &Out = S.Out[0];
    if (In.AP->getType() == Out.AP->getType() && In.S != Out.S) {
      if (std::optional<uint64_t> Bad =
              copyRuns(*In.S, In.Shape, *Out.S, Out.Shape, RunScratch))
        reportUninit(C, S, In, *Bad);
      return;
    }
    if (!gatherChecked(C, S, In, Buf0))
      return;
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    convertElements(In.AP->getType(), Buf0.data(), Out.AP->getType(),
                    Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::Memset: {
    const OperandInfo &Out = S.Out[0];
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    memsetElements(llvm::cast<InstMemset>(I).getValue(), Out.AP->getType(),
                   Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::Activation: {
    auto &A = llvm::cast<InstActivation>(I);
    const OperandInfo &In = S.In[0], &Out = S.Out[0];
    if (!gatherChecked(C, S, In, Buf0))
      return;
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    activation(A.getFunc(), A.getScale(), In.AP->getType(), Buf0.data(),
               Out.AP->getType(), Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::TensorTensor: {
    auto &T = llvm::cast<InstTensorTensor>(I);
    const OperandInfo &In0 = S.In[0], &In1 = S.In[1], &Out = S.Out[0];
    if (!gatherChecked(C, S, In0, Buf0) || !gatherChecked(C, S, In1, Buf2))
      return;
    uint64_t N = Out.AP->getNumElements();
    Buf1.resize(N * getDataTypeSize(Out.AP->getType()));
    tensorTensor(T.getOp(), In0.AP->getType(), Buf0.data(), In1.AP->getType(),
                 Buf2.data(), Out.AP->getType(), Buf1.data(), N);
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::Matmul: {
    const OperandInfo &In0 = S.In[0], &In1 = S.In[1], &Out = S.Out[0];
    if (!gatherChecked(C, S, In0, Buf0) || !gatherChecked(C, S, In1, Buf2))
      return;
    uint64_t K = In0.AP->getNumPartitions();
    uint64_t M = In0.AP->getNumElementsPerPartition();
    uint64_t N = In1.AP->getNumElementsPerPartition();
    if (S.Accumulate) {
      if (!gatherChecked(C, S, Out, Buf1))
        return;
    } else {
      Buf1.assign(M * N * 4, 0);
    }
    matmul(In0.AP->getType(), Buf0.data(), In1.AP->getType(), Buf2.data(), K,
           M, N, S.Accumulate, reinterpret_cast<float *>(Buf1.data()));
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  case InstructionType::Select:
  case InstructionType::TensorConvert:
  case InstructionType::TensorReduce:
  case InstructionType::Iota: {
    std::vector<uint8_t> *InBufs[] = {&Buf0, &Buf2, &Buf3};
    const uint8_t *In[3] = {};
    for (size_t K = 0; K < S.In.size(); ++K) {
      if (!gatherChecked(C, S, S.In[K], *InBufs[K]))
        return;
      In[K] = InBufs[K]->data();
    }
    const OperandInfo &Out = S.Out[0];
    if (S.Accumulate) {
      if (!gatherChecked(C, S, Out, Buf1))
        return;
    } else {
      Buf1.resize(Out.AP->getNumElements() * getDataTypeSize(Out.AP->getType()));
    }
    computeElements(I, llvm::ArrayRef(In, S.In.size()), Buf1.data());
    scatter(*Out.S, Out.Shape, Buf1.data());
    return;
  }
  default:
    return;
  }
}

void SubgraphSim::executeCollective(Round &R) {
  // The members in rank order of the first arrival's group.
  const auto &CC0 =
      llvm::cast<InstCollectiveCompute>(*Cores[R.A[0].Core].Insts[R.A[0].S].I);
  llvm::ArrayRef<unsigned> Group = CC0.getGroup();
  unsigned N = Group.size();
  // A local group lists cores of the device, a remote one devices (whose
  // members are all on the same core).
  bool Remote = !CC0.isLocal();
  llvm::SmallVector<const Arrival *, 8> Member(N, nullptr);
  for (const Arrival &A : R.A)
    for (unsigned Rk = 0; Rk < N; ++Rk)
      if (Group[Rk] == (Remote ? Cores[A.Core].Device : Cores[A.Core].Core))
        Member[Rk] = &A;
  auto Fail = [&](const llvm::Twine &Why) {
    if (!Failed)
      Failed = {FailureKind::Error, (O.FileName + ": collective '" +
                                     CC0.getName() + "': " + Why)
                                        .str()};
  };
  for (unsigned Rk = 0; Rk < N; ++Rk) {
    const auto &CC = llvm::cast<InstCollectiveCompute>(
        *Cores[Member[Rk]->Core].Insts[Member[Rk]->S].I);
    if (CC.getKind() != CC0.getKind() || CC.getGroup() != Group ||
        CC.getReduceOp() != CC0.getReduceOp())
      return Fail(coreName(Cores[Member[Rk]->Core]) + " and " +
                  coreName(Cores[Member[0]->Core]) +
                  " disagree on its kind, group or reduce op");
  }
  auto StaticOf = [&](unsigned Rk) -> StaticInst & {
    return Cores[Member[Rk]->Core].Insts[Member[Rk]->S];
  };
  DataType T = StaticOf(0).In[0].AP->getType();
  unsigned Size = getDataTypeSize(T);
  uint64_t NIn = StaticOf(0).In[0].AP->getNumElements();
  uint64_t NOut = StaticOf(0).Out[0].AP->getNumElements();
  for (unsigned Rk = 0; Rk < N; ++Rk) {
    StaticInst &S = StaticOf(Rk);
    if (S.In[0].AP->getType() != T || S.In[0].AP->getNumElements() != NIn ||
        S.Out[0].AP->getNumElements() != NOut)
      return Fail(coreName(Cores[Member[Rk]->Core]) +
                  " has other operand types or sizes than " +
                  coreName(Cores[Member[0]->Core]));
  }
  CollectiveKind K = CC0.getKind();
  ReduceOp Op = CC0.getReduceOp();
  bool ReadsOut =
      K == CollectiveKind::PermuteReduce || K == CollectiveKind::PermuteReduceImplicit;
  uint64_t Expected = NIn;
  switch (K) {
  case CollectiveKind::AllGather: Expected = NIn * N; break;
  case CollectiveKind::ReduceScatter:
    if (NIn % N)
      return Fail("its input does not split into the group");
    Expected = NIn / N;
    break;
  case CollectiveKind::AllToAll:
    if (NIn % N)
      return Fail("its input does not split into the group");
    break;
  case CollectiveKind::SendRecv:
  case CollectiveKind::SendRecvCCE:
    if (N != 2)
      return Fail("SendRecv needs a group of 2");
    break;
  default: break;
  }
  if (NOut != Expected)
    return Fail("its output has " + llvm::Twine(NOut) + " elements, " +
                llvm::Twine(Expected) + " expected");
  // Race accesses: every member reads its input (and its output when
  // reducing into it) and writes its output, after every member arrived.
  if (RaceCheck) {
    uint32_t Joined = allocVC();
    Pool[Joined] = Pool[R.A.front().VC];
    for (const Arrival &A : R.A)
      Pool[Joined].join(Pool[A.VC]);
    for (unsigned Rk = 0; Rk < N; ++Rk) {
      CoreSim &C = Cores[Member[Rk]->Core];
      StaticInst &S = StaticOf(Rk);
      uint64_t Exec = S.Finished + 1;
      raceAccess(C, S, Exec, S.In[0], false, Joined);
      raceAccess(C, S, Exec, S.Out[0], true, Joined);
    }
    freeVC(Joined);
  }
  CollBufs.resize(2 * N);
  for (unsigned Rk = 0; Rk < N; ++Rk) {
    if (!gatherChecked(Cores[Member[Rk]->Core], StaticOf(Rk), StaticOf(Rk).In[0],
                       CollBufs[Rk]))
      return;
    if (ReadsOut) {
      if (!gatherChecked(Cores[Member[Rk]->Core], StaticOf(Rk),
                         StaticOf(Rk).Out[0], CollBufs[N + Rk]))
        return;
    } else {
      CollBufs[N + Rk].resize(NOut * Size);
    }
  }
  auto In = [&](unsigned Rk) { return CollBufs[Rk].data(); };
  auto Out = [&](unsigned Rk) { return CollBufs[N + Rk].data(); };
  switch (K) {
  case CollectiveKind::SendRecv:
  case CollectiveKind::SendRecvCCE:
    std::memcpy(Out(0), In(1), NIn * Size);
    std::memcpy(Out(1), In(0), NIn * Size);
    break;
  case CollectiveKind::AllReduce:
    std::memcpy(Out(0), In(0), NIn * Size);
    for (unsigned J = 1; J < N; ++J)
      reduceInto(Op, T, In(J), Out(0), NIn);
    for (unsigned Rk = 1; Rk < N; ++Rk)
      std::memcpy(Out(Rk), Out(0), NIn * Size);
    break;
  case CollectiveKind::ReduceScatter: {
    uint64_t M = NIn / N;
    for (unsigned Rk = 0; Rk < N; ++Rk) {
      std::memcpy(Out(Rk), In(0) + Rk * M * Size, M * Size);
      for (unsigned J = 1; J < N; ++J)
        reduceInto(Op, T, In(J) + Rk * M * Size, Out(Rk), M);
    }
    break;
  }
  case CollectiveKind::AllGather:
    for (unsigned Rk = 0; Rk < N; ++Rk)
      for (unsigned J = 0; J < N; ++J)
        std::memcpy(Out(Rk) + J * NIn * Size, In(J), NIn * Size);
    break;
  case CollectiveKind::AllToAll: {
    uint64_t M = NIn / N;
    for (unsigned Rk = 0; Rk < N; ++Rk)
      for (unsigned J = 0; J < N; ++J)
        std::memcpy(Out(Rk) + J * M * Size, In(J) + Rk * M * Size, M * Size);
    break;
  }
  case CollectiveKind::Permute:
  case CollectiveKind::PermuteImplicit:
    for (unsigned Rk = 0; Rk < N; ++Rk)
      std::memcpy(Out((Rk + 1) % N), In(Rk), NIn * Size);
    break;
  case CollectiveKind::PermuteReduce:
  case CollectiveKind::PermuteReduceImplicit:
    for (unsigned Rk = 0; Rk < N; ++Rk)
      reduceInto(Op, T, In(Rk), Out((Rk + 1) % N), NIn);
    break;
  case CollectiveKind::AllToAllV:
    break;
  }
  for (unsigned Rk = 0; Rk < N; ++Rk)
    scatter(*StaticOf(Rk).Out[0].S, StaticOf(Rk).Out[0].Shape, Out(Rk));
}

} // namespace loom::bir::sim::detail
