//===- SimulatorIndirect.cpp - Executing an IndirectDMACopy ----------------===//
//
// An IndirectDMACopy reads its index values when it starts, like every
// other read of an execution, then moves the data of the pattern its
// offsets select (docs/bir.md, "IndirectDMACopy"). The race detector sees
// the index reads and the bytes this execution actually touches, not the
// pattern at delta 0. In the skip mode an index outside its range makes
// the execution touch no data at all.
//
//===----------------------------------------------------------------------===//

#include "SimulatorImpl.h"

namespace loom::bir::sim::detail {

void SubgraphSim::executeIndirect(CoreSim &C, StaticInst &S, uint64_t Exec,
                                  uint32_t VC) {
  const auto &I = llvm::cast<InstIndirectDMACopy>(*S.I);
  llvm::SmallVector<int64_t, InstIndirectDMACopy::MaxOffsets> Values;
  for (size_t K = 1; K < S.In.size(); ++K) {
    const OperandInfo &Ix = S.In[K];
    if (RaceCheck)
      raceAccess(C, S, Exec, Ix, false, VC);
    if (!gatherChecked(C, S, Ix, Buf3))
      return;
    Values.push_back(readIndexValue(Ix.AP->getType(), Buf3.data()));
  }
  // A skipping copy with an index out of its range moves nothing: it has
  // read its indices and touches no data byte.
  if (!I.moves(Values))
    return;
  // The verifier bounded every delta inside the location.
  const AccessPattern &D = I.getDynamicOperand();
  AccessPattern Moved = D.clone();
  Moved.setOffset(D.getOffset() + I.getDelta(Values) * int64_t(getDataTypeSize(D.getType())));
  bool InSide = I.getSide() == IndirectSide::In;
  const OperandInfo &Static = InSide ? S.In[0] : S.Out[0];
  OperandInfo Dyn{Static.S, &Moved, RunShape(Moved, Static.S->BytesPerPartition),
                  Static.Bytes};
  const OperandInfo &In = InSide ? Dyn : S.In[0];
  const OperandInfo &Out = InSide ? S.Out[0] : Dyn;
  if (RaceCheck) {
    raceAccess(C, S, Exec, In, false, VC);
    raceAccess(C, S, Exec, Out, true, VC);
  }
  copyOperands(C, S, In, Out);
}

} // namespace loom::bir::sim::detail
