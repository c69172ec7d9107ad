#include "loom/bir/ir/Module.h"

#include "llvm/ADT/DenseMap.h"

namespace loom::bir {

BasicBlock *Module::createBlock(std::string BlockName) {
  Blocks.push_back(std::make_unique<BasicBlock>(std::move(BlockName), this));
  return Blocks.back().get();
}

analysis::CFGView Module::cfgView() const {
  llvm::DenseMap<const BasicBlock *, unsigned> Index;
  for (unsigned I = 0; I < Blocks.size(); ++I)
    Index[Blocks[I].get()] = I;
  analysis::CFGView G;
  G.NumBlocks = Blocks.size();
  G.Entry = 0;
  G.Succs.resize(Blocks.size());
  for (unsigned I = 0; I < Blocks.size(); ++I)
    for (const BasicBlock *S : Blocks[I]->successors())
      if (auto It = Index.find(S); It != Index.end())
        G.Succs[I].push_back(It->second);
  return G;
}

} // namespace loom::bir
