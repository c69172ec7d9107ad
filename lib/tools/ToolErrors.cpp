#include "loom/tools/ToolErrors.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace loom::tools {

namespace {

/// Every non-empty line of `Text` as "<Lead><Prefix><line>".
void printLines(llvm::raw_ostream &OS, const llvm::Twine &Lead, llvm::StringRef Prefix,
                llvm::StringRef Text) {
  llvm::SmallVector<llvm::StringRef, 8> Lines;
  Text.split(Lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string LeadText = Lead.str();
  for (llvm::StringRef Line : Lines)
    OS << LeadText << Prefix << Line << "\n";
}

} // namespace

void ToolErrors::printErrorMessage(llvm::StringRef Message, llvm::StringRef Prefix) const {
  printLabeled("error", Message, Prefix);
}

void ToolErrors::printLabeled(llvm::StringRef Label, llvm::StringRef Message,
                              llvm::StringRef Prefix) const {
  printLines(OS, ToolName + ": " + Label + ": ", Prefix, Message);
}

void ToolErrors::printNote(llvm::raw_ostream &NoteOS, llvm::StringRef Text) const {
  printLines(NoteOS, ToolName + ": ", "", Text);
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

bool ToolErrors::parseCommandLine(int Argc, const char *const *Argv,
                                  llvm::StringRef Overview) const {
  std::string Messages;
  llvm::raw_string_ostream MessageStream(Messages);
  if (llvm::cl::ParseCommandLineOptions(Argc, Argv, Overview, &MessageStream))
    return true;
  OS << MessageStream.str() << "Try '" << ToolName << " --help' for usage.\n";
  return false;
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
