//===- PostDominators.cpp - Post-dominator tree of a CFG ------------------===//
//
// Three steps: choose the roots (the blocks that branch to the virtual exit),
// compute immediate post-dominators on the reverse graph augmented with the
// virtual exit, then lay out the tree for O(1) post-dominance queries.
//
//===----------------------------------------------------------------------===//
#include "loom/bir/analysis/PostDominators.h"

#include "loom/bir/analysis/SCC.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace loom::bir::analysis;

namespace {

constexpr unsigned Undefined = std::numeric_limits<unsigned>::max();

/// Predecessor lists, stored contiguously: the reverse graph is walked
/// several times and vectors of vectors would scatter it over the heap.
class Predecessors {
public:
  explicit Predecessors(const CFGView &G) : Begin(G.NumBlocks + 1, 0) {
    for (const std::vector<unsigned> &Succs : G.Succs)
      for (unsigned S : Succs) {
        assert(S < G.NumBlocks && "successor out of range");
        ++Begin[S + 1];
      }
    for (unsigned B = 0; B != G.NumBlocks; ++B)
      Begin[B + 1] += Begin[B];
    List.resize(Begin.back());
    std::vector<unsigned> Fill(Begin.begin(), Begin.end() - 1);
    for (unsigned B = 0; B != G.NumBlocks; ++B)
      for (unsigned S : G.Succs[B])
        List[Fill[S]++] = B;
  }

  llvm::ArrayRef<unsigned> of(unsigned B) const {
    return llvm::makeArrayRef(List).slice(Begin[B], Begin[B + 1] - Begin[B]);
  }

private:
  std::vector<unsigned> Begin;
  std::vector<unsigned> List;
};

/// Chooses the roots of the tree: the exits, then one block of every region
/// that reaches no exit. The choice inside such a region decides its shape
/// (the chosen block is post-dominated by the virtual exit alone and the rest
/// of the region hangs below it), so it follows LLVM's rule exactly and trees
/// match what LLVM builds for the same CFG when blocks are numbered in layout
/// order. docs/bir-analyses.md states the rule.
class RootFinder {
public:
  RootFinder(const CFGView &G, const Predecessors &Preds)
      : G(G), Preds(Preds), Covered(G.NumBlocks, false),
        SeenIn(G.NumBlocks, 0) {}

  std::vector<unsigned> run() {
    std::vector<unsigned> Roots;
    for (unsigned B = 0; B != G.NumBlocks; ++B)
      if (G.Succs[B].empty()) {
        Roots.push_back(B);
        cover(B);
      }
    if (NumCovered == G.NumBlocks)
      return Roots;

    std::vector<unsigned> Candidates;
    for (unsigned B = 0; B != G.NumBlocks; ++B)
      if (!Covered[B]) {
        unsigned Furthest = findFurthestAway(B);
        Candidates.push_back(Furthest);
        cover(Furthest);
      }
    keepSinkCandidates(Candidates, Roots);
    std::sort(Roots.begin(), Roots.end());
    return Roots;
  }

private:
  /// Marks every block that reaches From. The covered set is always closed
  /// under predecessors, so the walk can stop at covered blocks.
  void cover(unsigned From) {
    assert(!Covered[From] && "a root is chosen among uncovered blocks");
    Covered[From] = true;
    ++NumCovered;
    Worklist.assign(1, From);
    while (!Worklist.empty()) {
      unsigned B = Worklist.back();
      Worklist.pop_back();
      for (unsigned P : Preds.of(B))
        if (!Covered[P]) {
          Covered[P] = true;
          ++NumCovered;
          Worklist.push_back(P);
        }
    }
  }

  /// The last block numbered by a preorder walk from Start over the
  /// uncovered blocks that pops successors in descending index order.
  unsigned findFurthestAway(unsigned Start) {
    ++Walk;
    unsigned Last = Start;
    Worklist.assign(1, Start);
    while (!Worklist.empty()) {
      unsigned B = Worklist.back();
      Worklist.pop_back();
      if (SeenIn[B] == Walk)
        continue;
      SeenIn[B] = Walk;
      Last = B;
      SortedSuccs.assign(G.Succs[B].begin(), G.Succs[B].end());
      std::sort(SortedSuccs.begin(), SortedSuccs.end());
      for (unsigned S : SortedSuccs)
        if (!Covered[S] && SeenIn[S] != Walk)
          Worklist.push_back(S);
    }
    return Last;
  }

  /// A candidate that can reach another candidate is redundant: the blocks
  /// that reach it reach the other one too. The survivors are exactly the
  /// candidates lying in a sink SCC (no edge leaves it), one per such SCC.
  void keepSinkCandidates(llvm::ArrayRef<unsigned> Candidates,
                          std::vector<unsigned> &Roots) const {
    SCCInfo SCCs(G);
    std::vector<bool> HasLeavingEdge(SCCs.getNumSCCs(), false);
    for (unsigned B = 0; B != G.NumBlocks; ++B)
      for (unsigned S : G.Succs[B])
        if (SCCs.getSCCForBB(S) != SCCs.getSCCForBB(B))
          HasLeavingEdge[SCCs.getSCCForBB(B)] = true;
    for (unsigned C : Candidates)
      if (!HasLeavingEdge[SCCs.getSCCForBB(C)])
        Roots.push_back(C);
  }

  const CFGView &G;
  const Predecessors &Preds;
  std::vector<bool> Covered;
  unsigned NumCovered = 0;
  /// SeenIn[B] == Walk iff the current furthest-away walk numbered B.
  std::vector<unsigned> SeenIn;
  unsigned Walk = 0;
  std::vector<unsigned> Worklist;
  std::vector<unsigned> SortedSuccs;
};

/// Immediate post-dominators by the iterative algorithm of Cooper, Harvey and
/// Kennedy ("A Simple, Fast Dominance Algorithm"), run as a dominator
/// computation on the reverse graph whose entry is the virtual exit V. The
/// reverse-graph predecessors of a block are its CFG successors, plus V for
/// a root. The result has NumBlocks + 1 entries; node NumBlocks is V.
class IPDomSolver {
public:
  IPDomSolver(const CFGView &G, const Predecessors &Preds,
              llvm::ArrayRef<unsigned> Roots)
      : G(G), Preds(Preds), Roots(Roots), V(G.NumBlocks),
        PostNum(G.NumBlocks + 1, Undefined), IsRoot(G.NumBlocks, false) {
    for (unsigned R : Roots)
      IsRoot[R] = true;
  }

  std::vector<unsigned> run() {
    numberPostorder();
    std::vector<unsigned> IPDom(V + 1, Undefined);
    IPDom[V] = V;
    // Reverse postorder visits a block after its reverse-graph DFS parent, so
    // the first sweep already sees a processed neighbour for every block;
    // further sweeps only refine across back edges.
    bool Changed = true;
    while (Changed) {
      Changed = false;
      for (auto It = Postorder.rbegin() + 1; It != Postorder.rend(); ++It) {
        unsigned B = *It;
        unsigned New = meetOfSuccessors(B, IPDom);
        if (IPDom[B] != New) {
          IPDom[B] = New;
          Changed = true;
        }
      }
    }
    return IPDom;
  }

private:
  /// Postorder of a DFS from V along reverse edges.
  void numberPostorder() {
    struct Frame {
      unsigned Node;
      unsigned NextEdge;
    };
    std::vector<bool> Visited(V + 1, false);
    std::vector<Frame> Stack{{V, 0}};
    Visited[V] = true;
    Postorder.reserve(V + 1);
    while (!Stack.empty()) {
      unsigned N = Stack.back().Node;
      llvm::ArrayRef<unsigned> Next = N == V ? Roots : Preds.of(N);
      if (Stack.back().NextEdge < Next.size()) {
        unsigned P = Next[Stack.back().NextEdge++];
        if (!Visited[P]) {
          Visited[P] = true;
          Stack.push_back({P, 0});
        }
        continue;
      }
      PostNum[N] = Postorder.size();
      Postorder.push_back(N);
      Stack.pop_back();
    }
    assert(Postorder.size() == V + 1 &&
           "every block reaches the virtual exit through a root");
    assert(Postorder.back() == V);
  }

  unsigned meetOfSuccessors(unsigned B,
                            const std::vector<unsigned> &IPDom) const {
    unsigned New = IsRoot[B] ? V : Undefined;
    for (unsigned S : G.Succs[B]) {
      // A self edge says nothing about the paths leaving B.
      if (S == B || IPDom[S] == Undefined)
        continue;
      New = New == Undefined ? S : intersect(S, New, IPDom);
    }
    assert(New != Undefined && "a successor precedes B in reverse postorder");
    return New;
  }

  /// The nearest common ancestor of A and B in the current tree.
  unsigned intersect(unsigned A, unsigned B,
                     const std::vector<unsigned> &IPDom) const {
    while (A != B) {
      while (PostNum[A] < PostNum[B])
        A = IPDom[A];
      while (PostNum[B] < PostNum[A])
        B = IPDom[B];
    }
    return A;
  }

  const CFGView &G;
  const Predecessors &Preds;
  llvm::ArrayRef<unsigned> Roots;
  const unsigned V;
  std::vector<unsigned> PostNum;
  std::vector<unsigned> Postorder;
  std::vector<bool> IsRoot;
};

} // namespace

PostDominatorTree::PostDominatorTree(const CFGView &G)
    : NumBlocks(G.NumBlocks) {
  assert(G.Succs.size() == G.NumBlocks && "one successor list per block");
  Predecessors Preds(G);
  Roots = RootFinder(G, Preds).run();
  IPDom = IPDomSolver(G, Preds, Roots).run();
  IPDom.pop_back(); // The virtual exit has no immediate post-dominator.
  buildTree();
}

void PostDominatorTree::buildTree() {
  const unsigned V = NumBlocks;
  ChildBegin.assign(V + 2, 0);
  for (unsigned B = 0; B != NumBlocks; ++B)
    ++ChildBegin[IPDom[B] + 1];
  for (unsigned N = 0; N <= V; ++N)
    ChildBegin[N + 1] += ChildBegin[N];
  ChildList.resize(NumBlocks);
  std::vector<unsigned> Fill(ChildBegin.begin(), ChildBegin.end() - 1);
  for (unsigned B = 0; B != NumBlocks; ++B)
    ChildList[Fill[IPDom[B]]++] = B;

  struct Frame {
    unsigned Node;
    unsigned NextChild;
  };
  Depth.assign(V + 1, 0);
  DFSIn.assign(V + 1, 0);
  DFSOut.assign(V + 1, 0);
  unsigned Clock = 0;
  std::vector<Frame> Stack{{V, ChildBegin[V]}};
  DFSIn[V] = Clock++;
  while (!Stack.empty()) {
    Frame &Top = Stack.back();
    if (Top.NextChild == ChildBegin[Top.Node + 1]) {
      DFSOut[Top.Node] = Clock++;
      Stack.pop_back();
      continue;
    }
    unsigned Child = ChildList[Top.NextChild++];
    Depth[Child] = Depth[Top.Node] + 1;
    DFSIn[Child] = Clock++;
    Stack.push_back({Child, ChildBegin[Child]});
  }
}

PostDomNode PostDominatorTree::getFirstCommonPostdominator(unsigned A,
                                                           unsigned B) const {
  assert(A < NumBlocks && B < NumBlocks && "block out of range");
  unsigned X = A, Y = B;
  while (X != Y) {
    if (Depth[X] < Depth[Y])
      Y = IPDom[Y];
    else
      X = IPDom[X];
  }
  return toNode(X);
}

PostDomNode PostDominatorTree::getFirstCommonPostdominator(
    llvm::ArrayRef<unsigned> Blocks) const {
  assert(!Blocks.empty() && "the common post-dominator of no block");
  PostDomNode Common = PostDomNode::block(Blocks.front());
  for (unsigned B : Blocks.drop_front()) {
    if (Common.isVirtualExit())
      break;
    Common = getFirstCommonPostdominator(Common.getBlock(), B);
  }
  return Common;
}

void PostDominatorTree::print(llvm::raw_ostream &OS) const {
  for (unsigned B = 0; B != NumBlocks; ++B) {
    OS << B << " -> ";
    if (IPDom[B] == NumBlocks)
      OS << "virtual-exit";
    else
      OS << IPDom[B];
    OS << '\n';
  }
}
