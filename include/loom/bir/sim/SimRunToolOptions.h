//===- SimRunToolOptions.h - How bir-sim and hlo-to-bir run a launch -*- C++ -*-===//
//
// bir-sim runs programs and launches; hlo-to-bir --check runs the launch it
// has just compiled in the same simulator. Both take the same limits and the
// same outputs of a run (--max-work, --max-memory, --report, --trace), so
// they are declared once, here, with the simulator's defaults. Each tool
// makes one SimRunToolOptions in its own option category; hlo-to-bir gives
// a prefix ("--check: ") that its --help shows before each description.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_SIM_SIMRUNTOOLOPTIONS_H
#define LOOM_BIR_SIM_SIMRUNTOOLOPTIONS_H

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace loom::bir::sim {

enum class ReportKind { Text, Json };

class SimRunToolOptions {
public:
  /// Registers the options in Cat; Prefix goes before every description.
  SimRunToolOptions(llvm::cl::OptionCategory &Cat, llvm::StringRef Prefix);

private:
  // The descriptions, built before the options that point into them.
  std::string MaxWorkHelp, MaxMemoryHelp, TraceHelp, ReportHelp;

public:
  llvm::cl::opt<uint64_t> MaxWork;
  llvm::cl::opt<uint64_t> MaxMemory;
  llvm::cl::opt<std::string> TraceFile;
  llvm::cl::opt<ReportKind> Report;

  /// Whether --report was given (the report is printed only then).
  bool reportGiven() const { return Report.getNumOccurrences() > 0; }
  bool reportJson() const { return Report == ReportKind::Json; }
  /// Whether any of these options was given.
  bool anyGiven() const;
};

} // namespace loom::bir::sim

#endif
