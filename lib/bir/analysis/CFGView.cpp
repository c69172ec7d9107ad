#include "loom/bir/analysis/CFGView.h"

#include "loom/bir/ir/Module.h"

#include "llvm/ADT/DenseMap.h"

namespace loom::bir::analysis {

CFGView getCFGView(const Module &M) {
  llvm::DenseMap<const BasicBlock *, unsigned> Index;
  for (unsigned I = 0; I < M.getNumBlocks(); ++I)
    Index[M.getBlock(I)] = I;
  CFGView G;
  G.NumBlocks = M.getNumBlocks();
  G.Entry = 0;
  G.Succs.resize(M.getNumBlocks());
  for (unsigned I = 0; I < M.getNumBlocks(); ++I)
    for (const BasicBlock *S : M.getBlock(I)->successors())
      if (auto It = Index.find(S); It != Index.end())
        G.Succs[I].push_back(It->second);
  return G;
}

} // namespace loom::bir::analysis
