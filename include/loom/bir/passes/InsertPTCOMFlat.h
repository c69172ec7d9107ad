//===- InsertPTCOMFlat.h - placeholder --------------------------------------*- C++ -*-===//
#ifndef LOOM_BIR_PASSES_INSERTPTCOMFLAT_H
#define LOOM_BIR_PASSES_INSERTPTCOMFLAT_H

#include "loom/bir/passes/Pass.h"

namespace loom::bir {

class InsertPTCOMFlat : public BirPass {
public:
  explicit InsertPTCOMFlat(const BackendOptions &Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "insert_ptcom_flat"; }
  llvm::Expected<bool> run(Program &Modules) override;

private:
  BackendOptions Opts;
};

} // namespace loom::bir

#endif
