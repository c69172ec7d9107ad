//===- CoreBarriers.h - Inserting and numbering core barriers ---*- C++ -*-===//
//
// The fences of the collective lowering. insertCoreBarrier places one
// CoreBarrier; renumberCoreBarriers gives every barrier of a subgraph an id
// that is the same on every core for the same barrier name and different
// for different names (neuronx-cc's renumberCoreBarriers after lowering).
// getPrecedingCoreBarrierOrLocalCCMap records, per local collective, the
// nearest earlier CoreBarrier or local collective of its block, from which
// precededByLocalCC tells whether the collective is already fenced.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_COREBARRIERS_H
#define LOOM_BIR_PASSES_COREBARRIERS_H

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Module.h"

#include "llvm/ADT/MapVector.h"

#include <string>
#include <vector>

namespace loom::bir {

/// A new barrier named Name over Cores, inserted before Pos. Its id is a
/// placeholder until renumberCoreBarriers.
InstCoreBarrier *insertCoreBarrier(BasicBlock &BB, BasicBlock::iterator Pos,
                                   std::string Name,
                                   std::vector<unsigned> Cores, Engine Eng);

/// Numbers the barriers of subgraph Subgraph by name: walking the modules by
/// core and each module in program order (blocks in order, instructions in
/// order), the first barrier of a new name gets the next id from 0, and every
/// barrier of that name on any core the same id. Returns whether an id
/// changed.
bool renumberCoreBarriers(Program &P, unsigned Subgraph);

/// For each local collective of M, the nearest earlier instruction of its
/// block that is a CoreBarrier or a local collective, or null.
using PrecedingMap = llvm::MapVector<const InstCollectiveCompute *,
                                     const Instruction *>;
PrecedingMap getPrecedingCoreBarrierOrLocalCCMap(const Module &M);

/// True if CC needs no barrier before it: the instruction recorded for it
/// sits directly before it, CC waits on it, that instruction waits for
/// every other dependency of CC (directly or through other dependencies,
/// among its nearest 4096 ancestors), and it is either a CoreBarrier over at
/// least CC's group or a local collective over at least CC's group, whose
/// lowering ends with a barrier over that group. For CC on a DMA queue, the
/// queue's previous instruction in the block is covered the same way.
bool precededByLocalCC(const InstCollectiveCompute &CC,
                       const PrecedingMap &Map);

/// True if CC is fenced after: a CoreBarrier over at least CC's group
/// waits on CC, and every other user of CC waits on that barrier.
bool followedByCoreBarrier(const InstCollectiveCompute &CC);

} // namespace loom::bir

#endif
