//===- LowerLocalCollectives.h - placeholder --------------------------------------*- C++ -*-===//
#ifndef LOOM_BIR_PASSES_LOWERLOCALCOLLECTIVES_H
#define LOOM_BIR_PASSES_LOWERLOCALCOLLECTIVES_H

#include "loom/bir/passes/Pass.h"

namespace loom::bir {

class LowerLocalCollectives : public BirPass {
public:
  explicit LowerLocalCollectives(const BackendOptions &Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "lower_local_collectives"; }
  llvm::Expected<bool> run(Program &Modules) override;

private:
  BackendOptions Opts;
};

} // namespace loom::bir

#endif
