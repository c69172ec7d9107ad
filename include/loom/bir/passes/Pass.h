//===- Pass.h - Backend passes and their registry ---------------*- C++ -*-===//
//
// Every backend pass works on the whole program: once lnc_splitter has run,
// the per-core modules of a logical core are lowered together (a collective
// on core 0 and its copy on core 1 become one exchange), so the interface
// takes the vector of modules rather than one module.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_PASS_H
#define LOOM_BIR_PASSES_PASS_H

#include "loom/bir/ir/Module.h"
#include "loom/bir/passes/BackendOptions.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace loom::bir {

class BirPass {
public:
  virtual ~BirPass() = default;

  /// The name a pipeline uses, e.g. "lnc_splitter".
  virtual llvm::StringRef name() const = 0;

  /// Transforms the program in place; returns whether anything changed. On
  /// error the program may be left partly transformed.
  virtual llvm::Expected<bool> run(Program &Modules) = 0;
};

/// The registered pass names, sorted.
std::vector<llvm::StringRef> getPassNames();

/// A new instance of the pass called Name, configured by Opts; an unknown
/// name is an error that lists the valid ones.
llvm::Expected<std::unique_ptr<BirPass>>
createPass(llvm::StringRef Name, const BackendOptions &Opts = {});

} // namespace loom::bir

#endif
