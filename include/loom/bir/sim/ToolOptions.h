//===- ToolOptions.h - Options bir-opt and bir-sim share --------*- C++ -*-===//
//
// bir-opt and bir-sim load programs the same way and take the same cost
// model, so --lnc, --target and --cost are spelled once, here. Each tool
// makes one ToolOptions in its own option category (which --help shows) and
// reads the values through it. The options that only one tool has stay in
// that tool.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_SIM_TOOLOPTIONS_H
#define LOOM_BIR_SIM_TOOLOPTIONS_H

#include "loom/bir/analysis/CostModel.h"
#include "loom/bir/json/BirJson.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace loom::bir::sim {

class ToolOptions {
public:
  /// Registers the options in Cat; CostHelp is the --cost description (a
  /// literal, or a string that outlives the option).
  ToolOptions(llvm::cl::OptionCategory &Cat, llvm::StringRef CostHelp);

  /// --lnc: set lnc_size of every module before verification.
  llvm::cl::opt<unsigned> LncSize;
  /// --target: set the target of every module before verification.
  llvm::cl::opt<Target> TargetArch;
  /// --cost NAME=VALUE, any number of times (docs/cost-model.md).
  llvm::cl::list<std::string> CostParams;

  /// The --lnc and --target given, for parseProgram.
  LoadOptions getLoadOptions() const;
  /// Checks --lnc against --target's maximum, or Default's without one:
  /// "--lnc must be from 1 to N[ on TARGET]".
  llvm::Error checkLncSize(Target Default) const;
  /// Applies every --cost to Cost; an error names the option.
  llvm::Error applyCostParams(analysis::CostModelParams &Cost) const;
};

} // namespace loom::bir::sim

#endif
