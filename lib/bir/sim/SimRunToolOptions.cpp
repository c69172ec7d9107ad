#include "loom/bir/sim/SimRunToolOptions.h"

#include "loom/bir/sim/Simulator.h"

#include "llvm/ADT/StringExtras.h"

namespace cl = llvm::cl;

namespace loom::bir::sim {

/// "Text" alone, or "--check: text" after a prefix.
static std::string describe(llvm::StringRef Prefix, llvm::StringRef Text) {
  std::string S = Prefix.str();
  S += Text.str();
  if (!Prefix.empty() && S.size() > Prefix.size())
    S[Prefix.size()] = llvm::toLower(S[Prefix.size()]);
  return S;
}

SimRunToolOptions::SimRunToolOptions(cl::OptionCategory &Cat,
                                     llvm::StringRef Prefix)
    : MaxWorkHelp(describe(Prefix, "Cap on a core's work: bytes its executions "
                                   "read and write, plus matmul multiply-adds")),
      MaxMemoryHelp(describe(Prefix, "Cap on the simulated storage, in bytes")),
      TraceHelp(describe(Prefix,
                         "Write the timeline in the Chrome trace event format")),
      ReportHelp(describe(Prefix, "Per-core report on stdout")),
      MaxWork("max-work", cl::desc(MaxWorkHelp),
              cl::init(SimOptions().MaxWork), cl::value_desc("BYTES"),
              cl::cat(Cat)),
      MaxMemory("max-memory", cl::desc(MaxMemoryHelp),
                cl::init(SimOptions().MaxMemory), cl::value_desc("BYTES"),
                cl::cat(Cat)),
      TraceFile("trace", cl::desc(TraceHelp), cl::value_desc("FILE.json"),
                cl::cat(Cat)),
      Report("report", cl::desc(ReportHelp),
             cl::values(clEnumValN(ReportKind::Text, "text", "text (default)"),
                        clEnumValN(ReportKind::Json, "json", "JSON")),
             cl::init(ReportKind::Text), cl::cat(Cat)) {}

bool SimRunToolOptions::anyGiven() const {
  return MaxWork.getNumOccurrences() || MaxMemory.getNumOccurrences() ||
         TraceFile.getNumOccurrences() || Report.getNumOccurrences();
}

} // namespace loom::bir::sim
