//===- CFGTestUtils.h - Random CFGs, brute-force reachability ---*- C++ -*-===//
//
// Shared by the CFG analysis tests: a generator of small random CFGs that
// covers the awkward shapes (several exits, no exit at all, self loops, back
// edges, blocks unreachable from the entry, duplicate edges) and a reachability
// matrix to check the analyses against their definitions.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_UNITTESTS_BIR_CFGTESTUTILS_H
#define LOOM_UNITTESTS_BIR_CFGTESTUTILS_H

#include "loom/bir/analysis/CFGView.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace loom::bir::analysis::test {

inline CFGView makeCFG(unsigned NumBlocks,
                       std::vector<std::vector<unsigned>> Succs,
                       unsigned Entry = 0) {
  CFGView G;
  G.NumBlocks = NumBlocks;
  G.Entry = Entry;
  G.Succs = std::move(Succs);
  G.Succs.resize(NumBlocks);
  return G;
}

/// A random CFG of 1..MaxBlocks blocks. The shape parameters are drawn per
/// graph so that the sample mixes exit-rich, exit-free, sparse and dense
/// graphs instead of averaging them out.
inline CFGView makeRandomCFG(uint32_t Seed, unsigned MaxBlocks = 40) {
  std::mt19937 Rng(Seed);
  auto Below = [&](unsigned N) { return unsigned(Rng() % N); };
  auto Chance = [&](double P) {
    return std::uniform_real_distribution<double>(0, 1)(Rng) < P;
  };
  const double ExitP[] = {0.0, 0.05, 0.15, 0.3};
  const double BackP[] = {0.0, 0.1, 0.25, 0.5};
  const double SelfP[] = {0.0, 0.05, 0.15};
  double PExit = ExitP[Below(4)], PBack = BackP[Below(4)],
         PSelf = SelfP[Below(3)];
  unsigned MaxSuccs = 1 + Below(3);

  unsigned N = 1 + Below(MaxBlocks);
  CFGView G;
  G.NumBlocks = N;
  G.Entry = Chance(0.8) ? 0 : Below(N);
  G.Succs.resize(N);
  // Real functions usually end in a return; keeping the last block an exit
  // in most graphs yields plenty of CFGs where every block reaches an exit.
  bool LastIsExit = Chance(0.6);
  for (unsigned B = 0; B != N; ++B) {
    if (Chance(PExit) || (LastIsExit && B + 1 == N))
      continue;
    unsigned K = 1 + Below(MaxSuccs);
    for (unsigned I = 0; I != K; ++I) {
      unsigned S;
      if (Chance(PSelf))
        S = B;
      else if (Chance(PBack) || B + 1 == N)
        S = Below(B + 1);
      else if (Chance(0.7))
        S = B + 1 + Below(std::min(3u, N - B - 1)); // Mostly short hops.
      else
        S = B + 1 + Below(N - B - 1);
      G.Succs[B].push_back(S);
    }
  }
  return G;
}

inline std::string describe(const CFGView &G) {
  std::ostringstream OS;
  OS << "blocks=" << G.NumBlocks << " entry=" << G.Entry << " {";
  for (unsigned B = 0; B != G.NumBlocks; ++B) {
    OS << ' ' << B << "->[";
    for (size_t I = 0; I != G.Succs[B].size(); ++I)
      OS << (I ? "," : "") << G.Succs[B][I];
    OS << ']';
  }
  OS << " }";
  return OS.str();
}

/// Reach[A][B]: B can be reached from A by a path of zero or more edges.
inline std::vector<std::vector<bool>> reachability(const CFGView &G) {
  std::vector<std::vector<bool>> Reach(G.NumBlocks,
                                       std::vector<bool>(G.NumBlocks, false));
  for (unsigned A = 0; A != G.NumBlocks; ++A) {
    std::vector<unsigned> Work{A};
    Reach[A][A] = true;
    while (!Work.empty()) {
      unsigned B = Work.back();
      Work.pop_back();
      for (unsigned S : G.Succs[B])
        if (!Reach[A][S]) {
          Reach[A][S] = true;
          Work.push_back(S);
        }
    }
  }
  return Reach;
}

} // namespace loom::bir::analysis::test

#endif
