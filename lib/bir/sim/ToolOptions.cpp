#include "loom/bir/sim/ToolOptions.h"

#include "loom/support/Error.h"

namespace cl = llvm::cl;

namespace loom::bir::sim {

ToolOptions::ToolOptions(cl::OptionCategory &Cat, llvm::StringRef CostHelp)
    : LncSize("lnc",
              cl::desc("Set lnc_size of every module before verification: 1 "
                       "on trn1, 1 or 2 on trn2, 1 to 8 on generic (--target)"),
              cl::value_desc("N"), cl::cat(Cat)),
      TargetArch(
          "target",
          cl::desc("Set the target of every module before verification"),
          cl::values(
              clEnumValN(Target::Trn1, "trn1", "Trainium 1, lnc_size 1"),
              clEnumValN(Target::Trn2, "trn2", "Trainium 2, lnc_size 1 or 2"),
              clEnumValN(Target::Generic, "generic",
                         "trn2's memories, lnc_size 1 to 8 (for studies)")),
          cl::cat(Cat)),
      CostParams("cost", cl::desc(CostHelp), cl::value_desc("NAME=VALUE"),
                 cl::cat(Cat)) {}

LoadOptions ToolOptions::getLoadOptions() const {
  LoadOptions Opts;
  if (LncSize.getNumOccurrences())
    Opts.LncSize = LncSize;
  if (TargetArch.getNumOccurrences())
    Opts.Arch = TargetArch;
  return Opts;
}

llvm::Error ToolOptions::checkLncSize(Target Default) const {
  bool HasTarget = TargetArch.getNumOccurrences();
  Target T = HasTarget ? TargetArch.getValue() : Default;
  unsigned Max = getMaxLncSize(T);
  if (!LncSize.getNumOccurrences() || (LncSize >= 1 && LncSize <= Max))
    return llvm::Error::success();
  std::string On = HasTarget ? (" on " + enumName(T)).str() : "";
  return makeError("--lnc must be from 1 to " + llvm::Twine(Max) + On);
}

llvm::Error
ToolOptions::applyCostParams(analysis::CostModelParams &Cost) const {
  for (const std::string &C : CostParams)
    if (llvm::Error E = analysis::parseCostModelAssignment(Cost, C))
      return makeError("--cost " + C + ": " + llvm::toString(std::move(E)));
  return llvm::Error::success();
}

} // namespace loom::bir::sim
