//===- SCCTest.cpp - Strongly connected component tests -------------------===//
//
// Hand-written CFGs plus a randomized comparison with mutual reachability.
//
//===----------------------------------------------------------------------===//
#include "loom/bir/analysis/SCC.h"

#include "CFGTestUtils.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace loom::bir::analysis;
using namespace loom::bir::analysis::test;

namespace {

using Blocks = std::vector<unsigned>;

Blocks blocksOf(const SCCInfo &SCCs, unsigned B) {
  return SCCs.getBlocks(SCCs.getSCCForBB(B)).vec();
}

TEST(SCCTest, ChainHasOnlyTrivialSCCs) {
  SCCInfo SCCs(makeCFG(3, {{1}, {2}, {}}));
  EXPECT_EQ(SCCs.getNumSCCs(), 3u);
  for (unsigned B = 0; B != 3; ++B) {
    EXPECT_FALSE(SCCs.isInNonTrivialSCC(B));
    EXPECT_EQ(blocksOf(SCCs, B), Blocks{B});
  }
  // Reverse topological ids: the exit completes first.
  EXPECT_EQ(SCCs.getSCCForBB(2), 0u);
  EXPECT_EQ(SCCs.getSCCForBB(0), 2u);
}

TEST(SCCTest, SelfLoopIsNonTrivial) {
  SCCInfo SCCs(makeCFG(3, {{1}, {1, 2}, {}}));
  EXPECT_FALSE(SCCs.isInNonTrivialSCC(0));
  EXPECT_TRUE(SCCs.isInNonTrivialSCC(1));
  EXPECT_FALSE(SCCs.isInNonTrivialSCC(2));
  EXPECT_EQ(blocksOf(SCCs, 1), Blocks{1});
}

TEST(SCCTest, NestedLoopsFormOneSCC) {
  SCCInfo SCCs(makeCFG(6, {{1}, {2}, {3}, {2, 4}, {1, 5}, {}}));
  EXPECT_EQ(blocksOf(SCCs, 3), (Blocks{1, 2, 3, 4}));
  EXPECT_TRUE(SCCs.isInNonTrivialSCC(1));
  EXPECT_TRUE(SCCs.isInNonTrivialSCC(4));
  EXPECT_FALSE(SCCs.isInNonTrivialSCC(0));
  EXPECT_FALSE(SCCs.isInNonTrivialSCC(5));
  EXPECT_EQ(SCCs.getNumSCCs(), 3u);
}

TEST(SCCTest, UnreachableBlocksAreCovered) {
  // Blocks 2 and 3 form a loop that the entry does not reach.
  SCCInfo SCCs(makeCFG(4, {{1}, {}, {3}, {2, 1}}));
  EXPECT_EQ(blocksOf(SCCs, 2), (Blocks{2, 3}));
  EXPECT_TRUE(SCCs.isInNonTrivialSCC(3));
  EXPECT_EQ(SCCs.getNumSCCs(), 3u);
}

TEST(SCCTest, TwoLoopsInSequence) {
  SCCInfo SCCs(makeCFG(5, {{1}, {0, 2}, {3}, {2, 4}, {}}));
  EXPECT_EQ(blocksOf(SCCs, 0), (Blocks{0, 1}));
  EXPECT_EQ(blocksOf(SCCs, 3), (Blocks{2, 3}));
  EXPECT_GT(SCCs.getSCCForBB(0), SCCs.getSCCForBB(2));
}

TEST(SCCTest, EmptyGraph) {
  SCCInfo SCCs(makeCFG(0, {}));
  EXPECT_EQ(SCCs.getNumSCCs(), 0u);
}

TEST(SCCTest, LongChainsDoNotRecurse) {
  const unsigned N = 100000;
  CFGView G = makeCFG(N, {});
  for (unsigned B = 0; B + 1 < N; ++B)
    G.Succs[B] = {B + 1};
  EXPECT_EQ(SCCInfo(G).getNumSCCs(), N);
  G.Succs[N - 1] = {0};
  SCCInfo Loop(G);
  EXPECT_EQ(Loop.getNumSCCs(), 1u);
  EXPECT_TRUE(Loop.isInNonTrivialSCC(N / 2));
}

void checkAgainstReachability(const CFGView &G) {
  const unsigned N = G.NumBlocks;
  SCCInfo SCCs(G);
  std::vector<std::vector<bool>> Reach = reachability(G);
  ASSERT_EQ(SCCs.getNumBlocks(), N);

  for (unsigned A = 0; A != N; ++A)
    for (unsigned B = 0; B != N; ++B)
      EXPECT_EQ(SCCs.getSCCForBB(A) == SCCs.getSCCForBB(B),
                Reach[A][B] && Reach[B][A])
          << "blocks " << A << " and " << B;

  unsigned Listed = 0;
  for (unsigned Id = 0; Id != SCCs.getNumSCCs(); ++Id) {
    llvm::ArrayRef<unsigned> Members = SCCs.getBlocks(Id);
    ASSERT_FALSE(Members.empty());
    EXPECT_TRUE(std::is_sorted(Members.begin(), Members.end()));
    for (unsigned B : Members)
      EXPECT_EQ(SCCs.getSCCForBB(B), Id);
    Listed += Members.size();
  }
  EXPECT_EQ(Listed, N);

  for (unsigned B = 0; B != N; ++B) {
    bool SelfEdge = llvm::is_contained(G.Succs[B], B);
    bool Cycle = SelfEdge;
    for (unsigned C = 0; C != N; ++C)
      Cycle = Cycle || (C != B && Reach[B][C] && Reach[C][B]);
    EXPECT_EQ(SCCs.isInNonTrivialSCC(B), Cycle) << "block " << B;
    for (unsigned S : G.Succs[B])
      EXPECT_GE(SCCs.getSCCForBB(B), SCCs.getSCCForBB(S))
          << "ids are not reverse topological on edge " << B << "->" << S;
  }
}

TEST(SCCTest, RandomCFGsMatchMutualReachability) {
  const unsigned NumGraphs = 2000;
  for (uint32_t Seed = 1; Seed <= NumGraphs; ++Seed) {
    CFGView G = makeRandomCFG(Seed);
    SCOPED_TRACE("seed " + std::to_string(Seed) + ": " + describe(G));
    checkAgainstReachability(G);
    if (HasFailure())
      break; // One graph in the log is enough to debug.
  }
}

} // namespace
