//===- PostDominators.h - Post-dominator tree of a CFG ----------*- C++ -*-===//
//
// A block A post-dominates a block B when every path from B to the end of the
// function passes through A. Passes use this to find a single place that runs
// after all of a set of blocks, e.g. the point where a completion token can be
// emitted once every block that writes a memory location has run.
//
// A function can end in several exit blocks, and some blocks may reach no exit
// at all (infinite loops). The tree therefore has a virtual exit as its root:
// every exit branches to it, and so does one chosen block of each region that
// reaches no exit, following the rule LLVM uses for its post-dominator trees.
// See docs/bir-analyses.md for the exact rule.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_ANALYSIS_POSTDOMINATORS_H
#define LOOM_BIR_ANALYSIS_POSTDOMINATORS_H

#include "loom/bir/analysis/CFGView.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace loom::bir::analysis {

/// A node of the post-dominator tree: either a block or the virtual exit.
/// The virtual exit is not a block, so getBlock() asserts on it; callers that
/// can receive it must test isVirtualExit() first.
class PostDomNode {
public:
  static constexpr PostDomNode virtualExit() { return PostDomNode(VirtualId); }
  static constexpr PostDomNode block(unsigned B) {
    assert(B != VirtualId && "block id collides with the virtual exit");
    return PostDomNode(B);
  }

  constexpr bool isVirtualExit() const { return Id == VirtualId; }
  constexpr unsigned getBlock() const {
    assert(!isVirtualExit() && "the virtual exit is not a block");
    return Id;
  }

  friend constexpr bool operator==(PostDomNode A, PostDomNode B) {
    return A.Id == B.Id;
  }
  friend constexpr bool operator!=(PostDomNode A, PostDomNode B) {
    return A.Id != B.Id;
  }

private:
  static constexpr unsigned VirtualId = std::numeric_limits<unsigned>::max();
  constexpr explicit PostDomNode(unsigned Id) : Id(Id) {}
  unsigned Id;
};

/// The post-dominator tree of a CFGView.
///
/// Every block is in the tree, including blocks unreachable from the entry:
/// post-dominance only looks at paths leaving a block, so the entry plays no
/// role. The tree is computed on the CFG augmented with a virtual exit and an
/// edge to it from every root: each exit (block without successors) and one
/// block of each region that reaches no exit. The virtual exit post-dominates
/// every block. Its children in the tree are the roots plus every block whose
/// paths leave through several roots (a branch to two exits, say). For a block
/// that can reach both an exit and an infinite loop, the loop's root counts
/// as a way out, so the real exit does not post-dominate it.
///
/// Construction is the iterative algorithm of Cooper, Harvey and Kennedy on
/// the reverse graph; every walk keeps its own stack, so a 100k-block chain
/// does not overflow the native stack. postDominates() is O(1) through
/// DFS intervals of the tree.
class PostDominatorTree {
public:
  explicit PostDominatorTree(const CFGView &G);

  unsigned getNumBlocks() const { return NumBlocks; }

  /// The blocks with an edge to the virtual exit, in ascending order: every
  /// exit plus the chosen block of each region that reaches no exit.
  llvm::ArrayRef<unsigned> getRoots() const { return Roots; }

  /// True if B has an edge to the virtual exit. Its immediate post-dominator
  /// is then the virtual exit, but the converse does not hold.
  bool isRoot(unsigned B) const {
    assert(B < NumBlocks && "block out of range");
    return std::binary_search(Roots.begin(), Roots.end(), B);
  }

  /// The nearest strict post-dominator of B: a block, or the virtual exit
  /// when no other block post-dominates B (always the case for a root).
  PostDomNode getImmediatePostdominator(unsigned B) const {
    assert(B < NumBlocks && "block out of range");
    return toNode(IPDom[B]);
  }

  /// True if every path from B to the virtual exit passes through A. Every
  /// block post-dominates itself.
  bool postDominates(unsigned A, unsigned B) const {
    assert(A < NumBlocks && B < NumBlocks && "block out of range");
    return DFSIn[A] <= DFSIn[B] && DFSOut[B] <= DFSOut[A];
  }

  bool properlyPostDominates(unsigned A, unsigned B) const {
    return A != B && postDominates(A, B);
  }

  /// The common post-dominator of A and B that every other common
  /// post-dominator post-dominates. It is the virtual exit when no block
  /// post-dominates both.
  PostDomNode getFirstCommonPostdominator(unsigned A, unsigned B) const;

  /// The nearest common post-dominator of a non-empty set of blocks; the
  /// virtual exit when no block post-dominates them all.
  PostDomNode
  getFirstCommonPostdominator(llvm::ArrayRef<unsigned> Blocks) const;

  /// The blocks whose immediate post-dominator is N, in ascending order.
  llvm::ArrayRef<unsigned> getChildren(PostDomNode N) const {
    unsigned Id = toId(N);
    return llvm::makeArrayRef(ChildList).slice(
        ChildBegin[Id], ChildBegin[Id + 1] - ChildBegin[Id]);
  }

  /// The distance from the virtual exit: 0 for it, 1 for the roots.
  unsigned getDepth(PostDomNode N) const { return Depth[toId(N)]; }

  /// Prints "block -> ipdom" lines, one per block; for test failures and
  /// debugging.
  void print(llvm::raw_ostream &OS) const;

private:
  /// Inside the tree the virtual exit is node NumBlocks.
  PostDomNode toNode(unsigned Id) const {
    return Id == NumBlocks ? PostDomNode::virtualExit()
                           : PostDomNode::block(Id);
  }
  unsigned toId(PostDomNode N) const {
    if (N.isVirtualExit())
      return NumBlocks;
    assert(N.getBlock() < NumBlocks && "block out of range");
    return N.getBlock();
  }

  void buildTree();

  unsigned NumBlocks = 0;
  std::vector<unsigned> Roots;
  /// Immediate post-dominator of each block; NumBlocks for the virtual exit.
  std::vector<unsigned> IPDom;
  /// ChildList[ChildBegin[N] .. ChildBegin[N + 1]) are the children of node N.
  std::vector<unsigned> ChildBegin;
  std::vector<unsigned> ChildList;
  std::vector<unsigned> Depth;
  /// Preorder entry and exit times of a walk over the tree: A is an ancestor
  /// of B iff A's interval contains B's.
  std::vector<unsigned> DFSIn;
  std::vector<unsigned> DFSOut;
};

} // namespace loom::bir::analysis

#endif
