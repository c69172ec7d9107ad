//===- SCC.h - Strongly connected components of a CFG -----------*- C++ -*-===//
//
// Passes that must not place code inside a loop (a completion token has to
// fire once, after the producing region, not on every iteration) ask whether a
// block lies in a cycle of the CFG. A cycle is exactly a strongly connected
// component with more than one block, or a single block that branches to
// itself; this analysis computes the components with Tarjan's algorithm.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_ANALYSIS_SCC_H
#define LOOM_BIR_ANALYSIS_SCC_H

#include "loom/bir/analysis/CFGView.h"

#include "llvm/ADT/ArrayRef.h"

#include <cassert>
#include <vector>

namespace loom::bir::analysis {

/// The strongly connected components of a CFGView.
///
/// Every block belongs to exactly one SCC, blocks unreachable from the entry
/// included: the walk starts from every block, in index order, that no earlier
/// walk reached. SCC ids are the order in which Tarjan's algorithm completes
/// the components, which is a reverse topological order of the condensation:
/// an edge from a block of SCC X to a block of a different SCC Y implies
/// X > Y. So sink components (nothing leaves them) come first.
///
/// The walk keeps its own stack, so a 100k-block chain does not overflow the
/// native stack. Time and memory are O(blocks + edges).
class SCCInfo {
public:
  explicit SCCInfo(const CFGView &G);

  unsigned getNumBlocks() const { return SCCOfBlock.size(); }
  unsigned getNumSCCs() const { return SCCBegin.size() - 1; }

  /// The id of the SCC that contains block B.
  unsigned getSCCForBB(unsigned B) const {
    assert(B < getNumBlocks() && "block out of range");
    return SCCOfBlock[B];
  }

  /// The blocks of SCC Id, in ascending order.
  llvm::ArrayRef<unsigned> getBlocks(unsigned Id) const {
    assert(Id < getNumSCCs() && "SCC out of range");
    return llvm::makeArrayRef(Members).slice(SCCBegin[Id],
                                             SCCBegin[Id + 1] - SCCBegin[Id]);
  }

  /// True if SCC Id is a cycle: more than one block, or one block with an
  /// edge to itself.
  bool isNonTrivial(unsigned Id) const {
    assert(Id < getNumSCCs() && "SCC out of range");
    return NonTrivial[Id];
  }

  /// True if block B lies on a cycle of the CFG.
  bool isInNonTrivialSCC(unsigned B) const {
    return isNonTrivial(getSCCForBB(B));
  }

private:
  std::vector<unsigned> SCCOfBlock;
  /// Members[SCCBegin[I] .. SCCBegin[I + 1]) are the blocks of SCC I.
  std::vector<unsigned> SCCBegin;
  std::vector<unsigned> Members;
  std::vector<bool> NonTrivial;
};

} // namespace loom::bir::analysis

#endif
