#include "loom/tools/ToolErrors.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"

namespace loom::tools {

void ToolErrors::printErrorMessage(llvm::StringRef Message, llvm::StringRef Prefix) const {
  llvm::SmallVector<llvm::StringRef, 8> Lines;
  Message.split(Lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef Line : Lines)
    OS << ToolName << ": error: " << Prefix << Line << "\n";
}

void ToolErrors::printError(llvm::Error E, llvm::StringRef Prefix) const {
  printErrorMessage(llvm::toString(std::move(E)), Prefix);
}

int ToolErrors::failInput(llvm::Error E, llvm::StringRef Prefix) const {
  printError(std::move(E), Prefix);
  return ExitBadInput;
}

int ToolErrors::failUsage(const llvm::Twine &Msg) const {
  OS << ToolName << ": error: " << Msg << "\n"
     << "Try '" << ToolName << " --help' for usage.\n";
  return ExitBadUsage;
}

void ToolErrors::printWarning(const llvm::Twine &Msg) const {
  OS << ToolName << ": warning: " << Msg << "\n";
}

void hideLlvmInternalOptions() {
  static const char *const Internal[] = {
      "color",          "crash-diagnostics-dir", "debug-counter",
      "disable-symbolication", "info-output-file", "print-all-options",
      "print-debug-counter", "print-options",   "rng-seed",
      "sort-timers",    "stats",                 "stats-json",
      "track-memory",   "treat-scalable-fixed-error-as-warning"};
  llvm::StringMap<llvm::cl::Option *> &Options = llvm::cl::getRegisteredOptions();
  for (const char *Name : Internal) {
    auto It = Options.find(Name);
    if (It != Options.end())
      It->second->setHiddenFlag(llvm::cl::ReallyHidden);
  }
}

} // namespace loom::tools
