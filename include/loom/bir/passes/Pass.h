//===- Pass.h - Backend passes and their registry ---------------*- C++ -*-===//
//
// Every backend pass works on the whole program: once lnc_splitter has run,
// the per-core modules of a logical core are lowered together (a collective
// on core 0 and its copy on core 1 become one exchange), so the interface
// takes the program rather than one module.
//
// A pass explains its decisions with remark() and counts what it did with
// addStatistic(); both write to the PassContext that the pass manager
// (PassManager.h) sets before running it, and do nothing without one, so a
// pass run on its own, or one that never calls them, works the same.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_PASS_H
#define LOOM_BIR_PASSES_PASS_H

#include "loom/bir/ir/Program.h"
#include "loom/bir/passes/BackendOptions.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace loom::bir {

class Instruction;
class Module;
class PassContext;

class BirPass {
public:
  virtual ~BirPass() = default;

  /// The name a pipeline uses, e.g. "lnc_splitter".
  virtual llvm::StringRef name() const = 0;

  /// Transforms the program in place; returns whether anything changed. On
  /// error the program may be left partly transformed.
  virtual llvm::Expected<bool> run(Program &Modules) = 0;

  /// Where remarks and statistics go; null (the default) drops them.
  void setContext(PassContext *C) { Context = C; }
  PassContext *getContext() const { return Context; }

protected:
  /// Whether remark() writes anything, to skip building a costly text.
  bool wantsRemarks() const;
  /// One line, "<pass>: <module>/core<C>/<instruction>: <Text>".
  void remark(const Instruction &I, const llvm::Twine &Text);
  /// One line about the whole program, "<pass>: <Text>".
  void remark(const llvm::Twine &Text);
  /// Adds N to the counter Description of this pass (--stats).
  void addStatistic(llvm::StringRef Description, uint64_t N = 1);

private:
  PassContext *Context = nullptr;
};

/// The registered pass names, sorted.
std::vector<llvm::StringRef> getPassNames();

/// A new instance of the pass called Name, configured by Opts; an unknown
/// name is an error that lists the valid ones.
llvm::Expected<std::unique_ptr<BirPass>>
createPass(llvm::StringRef Name, const BackendOptions &Opts = {});

} // namespace loom::bir

#endif
