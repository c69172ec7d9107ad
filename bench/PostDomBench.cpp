//===- PostDomBench.cpp - Cost of the CFG analyses on a large CFG ---------===//
//
// Builds the post-dominator tree and the SCCs of a 100k-block CFG shaped like
// a long function: a chain of blocks with if/else diamonds, loops of a few
// blocks, nested back edges and an early return every so often.
//
//===----------------------------------------------------------------------===//
#include "loom/bir/analysis/PostDominators.h"
#include "loom/bir/analysis/SCC.h"

#include <benchmark/benchmark.h>

using namespace loom::bir::analysis;

namespace {

/// Without an exit the last block branches back to the first, so the whole
/// function is one infinite loop (a server loop) and the roots come from the
/// infinite-loop rule.
CFGView makeLongFunction(unsigned NumBlocks, bool WithExit = true) {
  CFGView G;
  G.NumBlocks = NumBlocks;
  G.Succs.resize(NumBlocks);
  for (unsigned B = 0; B + 1 < NumBlocks; ++B) {
    std::vector<unsigned> &Succs = G.Succs[B];
    Succs.push_back(B + 1);
    if (B % 7 == 0 && B + 3 < NumBlocks)
      Succs.push_back(B + 3); // Skip over the other arm of a diamond.
    if (B % 10 == 9)
      Succs.push_back(B - 5); // Latch of a small loop.
    if (B % 100 == 99)
      Succs.push_back(B - 60); // Outer loop around several small ones.
    if (B % 1000 == 500)
      Succs.push_back(NumBlocks - 1); // Early return.
  }
  if (!WithExit)
    G.Succs[NumBlocks - 1].push_back(0);
  return G;
}

void BM_PostDominatorTree(benchmark::State &State) {
  CFGView G = makeLongFunction(State.range(0), State.range(1));
  for (auto _ : State) {
    PostDominatorTree PDT(G);
    benchmark::DoNotOptimize(PDT.getRoots().data());
  }
  State.SetItemsProcessed(State.iterations() * G.NumBlocks);
}
BENCHMARK(BM_PostDominatorTree)
    ->ArgNames({"blocks", "exit"})
    ->Args({100000, 1})
    ->Args({100000, 0})
    ->Unit(benchmark::kMillisecond);

void BM_SCCInfo(benchmark::State &State) {
  CFGView G = makeLongFunction(State.range(0));
  for (auto _ : State) {
    SCCInfo SCCs(G);
    benchmark::DoNotOptimize(SCCs.getNumSCCs());
  }
  State.SetItemsProcessed(State.iterations() * G.NumBlocks);
}
BENCHMARK(BM_SCCInfo)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_FirstCommonPostdominator(benchmark::State &State) {
  CFGView G = makeLongFunction(State.range(0));
  PostDominatorTree PDT(G);
  unsigned Far = G.NumBlocks - 2;
  for (auto _ : State)
    benchmark::DoNotOptimize(
        PDT.getFirstCommonPostdominator({0, Far / 2, Far}));
}
BENCHMARK(BM_FirstCommonPostdominator)->Arg(100000);

} // namespace

BENCHMARK_MAIN();
