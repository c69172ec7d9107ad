//===- ToolErrors.h - Exit codes and error printing of the tools ----------===//
//
// Every loom tool ends the same way: exit code 0 on success, 1 on bad input
// (an unreadable file, a syntax or verification error, a failing pass or
// check, an unwritable output), 2 on bad usage (an unknown option or pass, a
// missing or extra input, a value out of range). Errors are llvm::Error
// values up to the tool, which prints them here: every line of a message on
// its own, prefixed with the tool's name, so each problem of a report with
// many (the verifiers') stands alone and greps alone:
//
//   hlo-opt: error: m.hlo: computation 'main', instruction 'a': ...
//   hlo-opt: error: m.hlo: computation 'main', instruction 'b': ...
//
// A usage error adds the line that points at --help, and so does an error
// of the command line parser. A tool whose failures come in kinds (the
// simulator's races and deadlocks) prints them the same way under its own
// label ("bir-sim: deadlock: ..."), and a tool's notes as "<tool>: <line>".
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TOOLS_TOOLERRORS_H
#define LOOM_TOOLS_TOOLERRORS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace loom::tools {

/// The exit codes of every loom tool.
enum ExitCode : int {
  ExitSuccess = 0,
  /// Bad input, a failing pass or check, an unwritable output.
  ExitBadInput = 1,
  /// Bad usage: an unknown option or pass, a missing or extra input, an
  /// option value out of range.
  ExitBadUsage = 2,
};

/// How one tool prints its errors (on stderr unless told otherwise).
class ToolErrors {
public:
  explicit ToolErrors(llvm::StringRef ToolName, llvm::raw_ostream &OS = llvm::errs())
      : ToolName(ToolName.str()), OS(OS) {}

  /// Prints every line of `Message` as "<tool>: error: <Prefix><line>";
  /// empty lines are dropped.
  void printErrorMessage(llvm::StringRef Message, llvm::StringRef Prefix = "") const;
  /// Prints every line of `Message` as "<tool>: <Label>: <Prefix><line>";
  /// empty lines are dropped.
  void printLabeled(llvm::StringRef Label, llvm::StringRef Message,
                    llvm::StringRef Prefix = "") const;
  /// Prints every line of `Text` as "<tool>: <line>" on `NoteOS` (a
  /// summary that is not an error); empty lines are dropped.
  void printNote(llvm::raw_ostream &NoteOS, llvm::StringRef Text) const;
  /// printErrorMessage of `E`'s message (every error of a list).
  void printError(llvm::Error E, llvm::StringRef Prefix = "") const;
  /// printError, and the exit code of bad input.
  int failInput(llvm::Error E, llvm::StringRef Prefix = "") const;
  /// "<tool>: error: <Msg>", then "Try '<tool> --help' for usage.", and the
  /// exit code of bad usage.
  int failUsage(const llvm::Twine &Msg) const;
  /// llvm::cl::ParseCommandLineOptions; on an error, its messages as it
  /// words them, then "Try '<tool> --help' for usage.", and false.
  bool parseCommandLine(int Argc, const char *const *Argv,
                        llvm::StringRef Overview) const;

  /// "<tool>: warning: <Msg>": a problem that does not stop the tool (an
  /// option that does nothing in the given combination).
  void printWarning(const llvm::Twine &Msg) const;

  llvm::StringRef getToolName() const { return ToolName; }

private:
  std::string ToolName;
  llvm::raw_ostream &OS;
};

/// Hides the options LLVM's Support library registers in every program
/// (--color, --rng-seed, --stats, ...): they do nothing in a loom tool, so
/// --help does not offer them.
void hideLlvmInternalOptions();

} // namespace loom::tools

#endif
