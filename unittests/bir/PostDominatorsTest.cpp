//===- PostDominatorsTest.cpp - Post-dominator tree tests -----------------===//
//
// Hand-written CFGs pin the expected trees down, including the choice of root
// inside infinite loops. A randomized test checks thousands of CFGs against
// the path definition of post-dominance and against LLVM's generic
// post-dominator tree run on the same graph.
//
//===----------------------------------------------------------------------===//
#include "loom/bir/analysis/PostDominators.h"

#include "CFGTestUtils.h"

#include "llvm/ADT/GraphTraits.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/GenericDomTree.h"
#include "llvm/Support/GenericDomTreeConstruction.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <memory>
#include <optional>

using namespace loom::bir::analysis;
using namespace loom::bir::analysis::test;

//===----------------------------------------------------------------------===//
// LLVM's post-dominator tree over a CFGView, as an independent oracle for the
// choice of roots inside infinite loops.
//===----------------------------------------------------------------------===//

namespace {

struct OracleGraph;

struct OracleNode {
  OracleGraph *Parent = nullptr;
  unsigned Id = 0;
  std::vector<OracleNode *> Succs;
  std::vector<OracleNode *> Preds;

  OracleGraph *getParent() const { return Parent; }
  void printAsOperand(llvm::raw_ostream &OS, bool) const { OS << Id; }
};

/// Nodes are listed in block index order, which LLVM treats as the layout
/// order of the function.
struct OracleGraph {
  std::vector<std::unique_ptr<OracleNode>> Storage;
  std::vector<OracleNode *> Nodes;
  OracleNode *Entry = nullptr;

  explicit OracleGraph(const CFGView &G) {
    for (unsigned B = 0; B != G.NumBlocks; ++B) {
      Storage.push_back(std::make_unique<OracleNode>());
      Storage.back()->Parent = this;
      Storage.back()->Id = B;
      Nodes.push_back(Storage.back().get());
    }
    for (unsigned B = 0; B != G.NumBlocks; ++B)
      for (unsigned S : G.Succs[B]) {
        Nodes[B]->Succs.push_back(Nodes[S]);
        Nodes[S]->Preds.push_back(Nodes[B]);
      }
    Entry = Nodes.empty() ? nullptr : Nodes[G.Entry];
  }
};

} // namespace

namespace llvm {
template <> struct GraphTraits<OracleNode *> {
  using NodeRef = OracleNode *;
  using ChildIteratorType = std::vector<OracleNode *>::iterator;
  static NodeRef getEntryNode(NodeRef N) { return N; }
  static ChildIteratorType child_begin(NodeRef N) { return N->Succs.begin(); }
  static ChildIteratorType child_end(NodeRef N) { return N->Succs.end(); }
};

template <> struct GraphTraits<Inverse<OracleNode *>> {
  using NodeRef = OracleNode *;
  using ChildIteratorType = std::vector<OracleNode *>::iterator;
  static NodeRef getEntryNode(Inverse<NodeRef> N) { return N.Graph; }
  static ChildIteratorType child_begin(NodeRef N) { return N->Preds.begin(); }
  static ChildIteratorType child_end(NodeRef N) { return N->Preds.end(); }
};

template <>
struct GraphTraits<OracleGraph *> : public GraphTraits<OracleNode *> {
  using nodes_iterator = std::vector<OracleNode *>::iterator;
  static NodeRef getEntryNode(OracleGraph *G) { return G->Entry; }
  static nodes_iterator nodes_begin(OracleGraph *G) { return G->Nodes.begin(); }
  static nodes_iterator nodes_end(OracleGraph *G) { return G->Nodes.end(); }
  static unsigned size(OracleGraph *G) { return G->Nodes.size(); }
};
} // namespace llvm

namespace {

/// LLVM's immediate post-dominator of every block; nullopt for the virtual
/// root.
std::vector<std::optional<unsigned>> llvmIPDoms(const CFGView &G) {
  OracleGraph OG(G);
  llvm::PostDomTreeBase<OracleNode> PDT;
  PDT.recalculate(OG);
  std::vector<std::optional<unsigned>> Result;
  for (OracleNode *N : OG.Nodes) {
    OracleNode *IDom = PDT.getNode(N)->getIDom()->getBlock();
    Result.push_back(IDom ? std::optional<unsigned>(IDom->Id) : std::nullopt);
  }
  return Result;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

PostDomNode blockNode(unsigned B) { return PostDomNode::block(B); }
const PostDomNode Exit = PostDomNode::virtualExit();

std::string str(PostDomNode N) {
  return N.isVirtualExit() ? "virtual-exit" : std::to_string(N.getBlock());
}

/// The immediate post-dominators as strings, for readable expectations.
std::vector<std::string> ipdoms(const PostDominatorTree &PDT) {
  std::vector<std::string> Result;
  for (unsigned B = 0; B != PDT.getNumBlocks(); ++B)
    Result.push_back(str(PDT.getImmediatePostdominator(B)));
  return Result;
}

using Strings = std::vector<std::string>;
using Blocks = std::vector<unsigned>;

Blocks roots(const PostDominatorTree &PDT) {
  return Blocks(PDT.getRoots().begin(), PDT.getRoots().end());
}

//===----------------------------------------------------------------------===//
// Hand-written CFGs
//===----------------------------------------------------------------------===//

TEST(PostDominatorsTest, Diamond) {
  CFGView G = makeCFG(4, {{1, 2}, {3}, {3}, {}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"3", "3", "3", "virtual-exit"}));
  EXPECT_EQ(roots(PDT), (Blocks{3}));
  EXPECT_TRUE(PDT.postDominates(3, 0));
  EXPECT_TRUE(PDT.postDominates(0, 0));
  EXPECT_FALSE(PDT.properlyPostDominates(0, 0));
  EXPECT_FALSE(PDT.postDominates(1, 0));
  EXPECT_FALSE(PDT.postDominates(0, 3));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({1, 2}), blockNode(3));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({1}), blockNode(1));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({0, 3}), blockNode(3));
  EXPECT_EQ(PDT.getDepth(Exit), 0u);
  EXPECT_EQ(PDT.getDepth(blockNode(3)), 1u);
  EXPECT_EQ(PDT.getDepth(blockNode(0)), 2u);
  EXPECT_EQ(Blocks(PDT.getChildren(blockNode(3)).vec()), (Blocks{0, 1, 2}));
}

TEST(PostDominatorsTest, SeveralExits) {
  CFGView G = makeCFG(4, {{1, 2}, {}, {3}, {}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT),
            (Strings{"virtual-exit", "virtual-exit", "3", "virtual-exit"}));
  EXPECT_EQ(roots(PDT), (Blocks{1, 3}));
  EXPECT_FALSE(PDT.isRoot(0)); // Its ipdom is the virtual exit all the same.
  EXPECT_EQ(Blocks(PDT.getChildren(Exit).vec()), (Blocks{0, 1, 3}));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({1, 3}), Exit);
  EXPECT_TRUE(PDT.getFirstCommonPostdominator({0, 2}).isVirtualExit());
  EXPECT_EQ(PDT.getFirstCommonPostdominator({2, 3}), blockNode(3));
}

TEST(PostDominatorsTest, LoopWithExit) {
  CFGView G = makeCFG(4, {{1}, {2, 3}, {1}, {}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"1", "3", "1", "virtual-exit"}));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({2, 0}), blockNode(1));
}

TEST(PostDominatorsTest, InfiniteLoopRootIsFurthestFromTheFirstBlock) {
  // The walk from block 0 ends at block 2, the latch; the rest of the loop
  // hangs below it.
  CFGView G = makeCFG(3, {{1}, {2}, {1}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"1", "2", "virtual-exit"}));
  EXPECT_EQ(roots(PDT), (Blocks{2}));
}

TEST(PostDominatorsTest, BranchIntoInfiniteLoop) {
  // The infinite loop counts as a way out, so the real exit 1 does not
  // post-dominate block 0.
  CFGView G = makeCFG(3, {{1, 2}, {}, {2}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT),
            (Strings{"virtual-exit", "virtual-exit", "virtual-exit"}));
  EXPECT_EQ(roots(PDT), (Blocks{1, 2}));
  EXPECT_FALSE(PDT.postDominates(1, 0));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({1, 2}), Exit);
}

TEST(PostDominatorsTest, TwoInfiniteLoops) {
  CFGView G = makeCFG(5, {{1, 3}, {2}, {1}, {4}, {3}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"virtual-exit", "2", "virtual-exit", "4",
                                  "virtual-exit"}));
  EXPECT_EQ(roots(PDT), (Blocks{2, 4}));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({1, 3}), Exit);
}

TEST(PostDominatorsTest, CandidateThatReachesAnotherLoopIsDropped) {
  // The walk from block 0 visits 3 first and ends at 2, but the loop {1, 2}
  // leads to the self loop at 3, which is the only region nothing leaves.
  CFGView G = makeCFG(4, {{1, 3}, {2}, {1, 3}, {3}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"3", "2", "3", "virtual-exit"}));
  EXPECT_EQ(roots(PDT), (Blocks{3}));
}

TEST(PostDominatorsTest, SelfLoop) {
  CFGView G = makeCFG(3, {{1}, {1, 2}, {}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"1", "2", "virtual-exit"}));
}

TEST(PostDominatorsTest, UnreachableBlocksGetPostDominators) {
  // Blocks 2, 3 and 4 are unreachable from the entry; 3 and 4 reach no exit.
  CFGView G = makeCFG(5, {{1}, {}, {1}, {3}, {3}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT),
            (Strings{"1", "virtual-exit", "1", "virtual-exit", "3"}));
  EXPECT_EQ(roots(PDT), (Blocks{1, 3}));
  EXPECT_TRUE(PDT.postDominates(1, 2));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({0, 2}), blockNode(1));
  EXPECT_EQ(PDT.getFirstCommonPostdominator({2, 4}), Exit);
}

TEST(PostDominatorsTest, EntryIsAnExit) {
  PostDominatorTree Single(makeCFG(1, {{}}));
  EXPECT_EQ(ipdoms(Single), (Strings{"virtual-exit"}));
  EXPECT_EQ(Single.getFirstCommonPostdominator({0}), blockNode(0));

  PostDominatorTree WithRest(makeCFG(3, {{}, {2}, {}}));
  EXPECT_EQ(ipdoms(WithRest), (Strings{"virtual-exit", "2", "virtual-exit"}));
  EXPECT_EQ(roots(WithRest), (Blocks{0, 2}));
}

TEST(PostDominatorsTest, EntryIsIrrelevant) {
  CFGView G = makeCFG(4, {{1, 2}, {3}, {3}, {}});
  CFGView Moved = G;
  Moved.Entry = 2;
  EXPECT_EQ(ipdoms(PostDominatorTree(G)), ipdoms(PostDominatorTree(Moved)));
}

TEST(PostDominatorsTest, NestedLoops) {
  CFGView G = makeCFG(6, {{1}, {2}, {3}, {2, 4}, {1, 5}, {}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"1", "2", "3", "4", "5", "virtual-exit"}));
  EXPECT_EQ(PDT.getDepth(blockNode(0)), 6u);
  EXPECT_EQ(PDT.getFirstCommonPostdominator({0, 2, 3}), blockNode(3));
}

TEST(PostDominatorsTest, DuplicateEdges) {
  CFGView G = makeCFG(3, {{1, 1}, {2, 2}, {}});
  PostDominatorTree PDT(G);
  EXPECT_EQ(ipdoms(PDT), (Strings{"1", "2", "virtual-exit"}));
}

TEST(PostDominatorsTest, EmptyGraph) {
  PostDominatorTree PDT(makeCFG(0, {}));
  EXPECT_EQ(PDT.getNumBlocks(), 0u);
  EXPECT_TRUE(PDT.getRoots().empty());
}

TEST(PostDominatorsTest, Print) {
  PostDominatorTree PDT(makeCFG(3, {{1, 2}, {}, {1}}));
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  PDT.print(OS);
  EXPECT_EQ(OS.str(), "0 -> 1\n1 -> virtual-exit\n2 -> 1\n");
}

TEST(PostDominatorsTest, LongChainsDoNotRecurse) {
  const unsigned N = 100000;
  CFGView Chain = makeCFG(N, {});
  for (unsigned B = 0; B + 1 < N; ++B)
    Chain.Succs[B] = {B + 1};
  PostDominatorTree PDT(Chain);
  EXPECT_EQ(PDT.getDepth(blockNode(0)), N);
  EXPECT_EQ(PDT.getFirstCommonPostdominator({0, N / 2}), blockNode(N / 2));

  // The same chain closed into one infinite loop: the root is the last block.
  Chain.Succs[N - 1] = {0};
  PostDominatorTree Loop(Chain);
  EXPECT_EQ(roots(Loop), (Blocks{N - 1}));
  EXPECT_EQ(Loop.getImmediatePostdominator(0), blockNode(1));
}

//===----------------------------------------------------------------------===//
// Randomized comparison with the definitions
//===----------------------------------------------------------------------===//

/// Post-dominance by its path definition on the CFG augmented with the
/// virtual exit V (node NumBlocks) and an edge to V from each block in Roots.
/// PDom[A][B]: every path from B to V passes through A.
std::vector<std::vector<bool>>
bruteForcePostDominance(const CFGView &G, llvm::ArrayRef<unsigned> Roots) {
  const unsigned N = G.NumBlocks, V = N;
  std::vector<std::vector<unsigned>> Preds(N + 1);
  for (unsigned B = 0; B != N; ++B)
    for (unsigned S : G.Succs[B])
      Preds[S].push_back(B);
  for (unsigned R : Roots)
    Preds[V].push_back(R);

  std::vector<std::vector<bool>> PDom(N, std::vector<bool>(N, false));
  for (unsigned A = 0; A != N; ++A) {
    // The blocks that reach V without passing through A.
    std::vector<bool> Escapes(N + 1, false);
    std::vector<unsigned> Work{V};
    Escapes[V] = true;
    while (!Work.empty()) {
      unsigned X = Work.back();
      Work.pop_back();
      for (unsigned P : Preds[X])
        if (P != A && !Escapes[P]) {
          Escapes[P] = true;
          Work.push_back(P);
        }
    }
    for (unsigned B = 0; B != N; ++B)
      PDom[A][B] = B == A || !Escapes[B];
  }
  return PDom;
}

/// The common post-dominator of Set that all others post-dominate; nullopt
/// when the only one is the virtual exit.
std::optional<unsigned>
bruteForceNearestCommon(const std::vector<std::vector<bool>> &PDom,
                        const Blocks &Set) {
  Blocks Common;
  for (unsigned A = 0; A != PDom.size(); ++A) {
    bool All = true;
    for (unsigned B : Set)
      All = All && PDom[A][B];
    if (All)
      Common.push_back(A);
  }
  std::optional<unsigned> Nearest;
  for (unsigned C : Common) {
    bool Lowest = true;
    for (unsigned D : Common)
      Lowest = Lowest && PDom[D][C];
    if (Lowest) {
      EXPECT_FALSE(Nearest) << "two nearest common post-dominators";
      Nearest = C;
    }
  }
  EXPECT_TRUE(Common.empty() || Nearest) << "no nearest common post-dominator";
  return Nearest;
}

/// Counts of the shapes the random sample produced, so the test can show it
/// exercised each of them.
struct Coverage {
  unsigned AllReachExit = 0;
  unsigned SeveralExits = 0;
  unsigned NoExit = 0;
  unsigned LoopRoots = 0;
  unsigned SeveralLoopRoots = 0;
  unsigned UnreachableFromEntry = 0;
  unsigned VirtualCommonPostdominator = 0;
};

/// The roots must be the exits plus exactly one block of every other sink
/// SCC (a cycle that no edge leaves).
void checkRootsAreOnePerSinkSCC(const CFGView &G, const PostDominatorTree &PDT,
                                const std::vector<std::vector<bool>> &Reach) {
  const unsigned N = G.NumBlocks;
  auto InSinkSCC = [&](unsigned B) {
    for (unsigned C = 0; C != N; ++C)
      if (Reach[B][C] && !Reach[C][B])
        return false;
    return true;
  };
  for (unsigned B = 0; B != N; ++B) {
    if (G.Succs[B].empty()) {
      EXPECT_TRUE(PDT.isRoot(B)) << "exit " << B << " is not a root";
    }
    if (!InSinkSCC(B)) {
      EXPECT_FALSE(PDT.isRoot(B)) << "root " << B << " is not in a sink SCC";
      continue;
    }
    unsigned RootsInSCC = 0;
    for (unsigned C = 0; C != N; ++C)
      RootsInSCC += Reach[B][C] && Reach[C][B] && PDT.isRoot(C);
    EXPECT_EQ(RootsInSCC, 1u) << "sink SCC of block " << B;
  }
}

void checkAgainstDefinitions(const CFGView &G, std::mt19937 &Rng,
                             Coverage &Cov) {
  const unsigned N = G.NumBlocks;
  PostDominatorTree PDT(G);
  std::string Tree;
  llvm::raw_string_ostream TreeOS(Tree);
  PDT.print(TreeOS);
  SCOPED_TRACE("tree:\n" + TreeOS.str());
  std::vector<std::vector<bool>> Reach = reachability(G);
  checkRootsAreOnePerSinkSCC(G, PDT, Reach);

  // Same roots and tree as LLVM builds for this CFG.
  std::vector<std::optional<unsigned>> Expected = llvmIPDoms(G);
  for (unsigned B = 0; B != N; ++B) {
    PostDomNode IPDom = PDT.getImmediatePostdominator(B);
    std::optional<unsigned> Got;
    if (!IPDom.isVirtualExit())
      Got = IPDom.getBlock();
    EXPECT_EQ(Got, Expected[B])
        << "ipdom of block " << B << " differs from LLVM";
  }

  Blocks Roots = roots(PDT);
  std::vector<std::vector<bool>> PDom = bruteForcePostDominance(G, Roots);

  // Without infinite loops the plain definition applies: every path from B to
  // an exit passes through A.
  bool AllReachExit = true;
  Blocks Exits;
  for (unsigned B = 0; B != N; ++B)
    if (G.Succs[B].empty())
      Exits.push_back(B);
  for (unsigned B = 0; B != N; ++B) {
    bool Reaches = false;
    for (unsigned E : Exits)
      Reaches = Reaches || Reach[B][E];
    AllReachExit = AllReachExit && Reaches;
  }
  if (AllReachExit) {
    EXPECT_EQ(Roots, Exits);
    EXPECT_EQ(PDom, bruteForcePostDominance(G, Exits));
  }

  for (unsigned A = 0; A != N; ++A)
    for (unsigned B = 0; B != N; ++B)
      EXPECT_EQ(PDT.postDominates(A, B), PDom[A][B])
          << "postDominates(" << A << ", " << B << ")";

  for (unsigned B = 0; B != N; ++B) {
    PostDomNode IPDom = PDT.getImmediatePostdominator(B);
    if (PDT.isRoot(B)) {
      EXPECT_TRUE(IPDom.isVirtualExit()) << "root " << B;
    }
    bool HasStrict = false;
    for (unsigned A = 0; A != N; ++A)
      HasStrict = HasStrict || (A != B && PDom[A][B]);
    if (IPDom.isVirtualExit()) {
      EXPECT_FALSE(HasStrict) << "block " << B << " has a real post-dominator";
      EXPECT_EQ(PDT.getDepth(blockNode(B)), 1u);
      continue;
    }
    unsigned P = IPDom.getBlock();
    EXPECT_NE(P, B);
    EXPECT_TRUE(PDom[P][B]) << "ipdom " << P << " of " << B;
    for (unsigned A = 0; A != N; ++A)
      if (A != B && PDom[A][B]) {
        EXPECT_TRUE(PDom[A][P])
            << A << " post-dominates " << B << " but not its ipdom " << P;
      }
    EXPECT_EQ(PDT.getDepth(blockNode(B)), PDT.getDepth(IPDom) + 1);
    llvm::ArrayRef<unsigned> Siblings = PDT.getChildren(IPDom);
    EXPECT_TRUE(llvm::is_contained(Siblings, B));
  }

  for (unsigned Trial = 0; Trial != 8; ++Trial) {
    Blocks Set;
    unsigned Size = 1 + Rng() % 4;
    for (unsigned I = 0; I != Size; ++I)
      Set.push_back(Rng() % N);
    std::optional<unsigned> Nearest = bruteForceNearestCommon(PDom, Set);
    PostDomNode Got = PDT.getFirstCommonPostdominator(Set);
    EXPECT_EQ(Got.isVirtualExit(), !Nearest);
    if (Nearest && !Got.isVirtualExit()) {
      EXPECT_EQ(Got.getBlock(), *Nearest);
    }
    Cov.VirtualCommonPostdominator += !Nearest;
  }

  unsigned LoopRoots = Roots.size() - Exits.size();
  Cov.AllReachExit += AllReachExit;
  Cov.SeveralExits += Exits.size() > 1;
  Cov.NoExit += Exits.empty();
  Cov.LoopRoots += LoopRoots > 0;
  Cov.SeveralLoopRoots += LoopRoots > 1;
  for (unsigned B = 0; B != N; ++B)
    if (!Reach[G.Entry][B]) {
      ++Cov.UnreachableFromEntry;
      break;
    }
}

TEST(PostDominatorsTest, RandomCFGsMatchTheDefinition) {
  const unsigned NumGraphs = 2000;
  Coverage Cov;
  for (uint32_t Seed = 1; Seed <= NumGraphs; ++Seed) {
    CFGView G = makeRandomCFG(Seed);
    std::mt19937 Rng(Seed * 7919u);
    SCOPED_TRACE("seed " + std::to_string(Seed) + ": " + describe(G));
    checkAgainstDefinitions(G, Rng, Cov);
    if (HasFailure())
      break; // One graph in the log is enough to debug.
  }
  EXPECT_GE(Cov.AllReachExit, 200u);
  EXPECT_GE(Cov.SeveralExits, 200u);
  EXPECT_GE(Cov.NoExit, 200u);
  EXPECT_GE(Cov.LoopRoots, 200u);
  EXPECT_GE(Cov.SeveralLoopRoots, 50u);
  EXPECT_GE(Cov.UnreachableFromEntry, 200u);
  EXPECT_GE(Cov.VirtualCommonPostdominator, 200u);
}

} // namespace
