#include "loom/bir/ir/Module.h"

namespace loom::bir {

Module::~Module() {
  for (const auto &BB : Blocks)
    for (const auto &I : *BB)
      I->dropEdgesForModuleTeardown(this);
}

BasicBlock *Module::createBlock(std::string BlockName) {
  Blocks.push_back(std::make_unique<BasicBlock>(std::move(BlockName), this));
  return Blocks.back().get();
}

} // namespace loom::bir
