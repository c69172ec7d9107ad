// Unit tests of the tools library (include/loom/tools): every line of an
// error's message is printed with the tool's prefix and empty lines are
// dropped (under "error" or a tool's own label, and for notes), a usage
// error and a command line the parser refuses point at --help, the exit
// codes are 1 and 2, and --threads is parsed, resolved and checked in one
// place.
#include "loom/support/Error.h"
#include "loom/support/Parallel.h"
#include "loom/tools/ThreadsOption.h"
#include "loom/tools/ToolErrors.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <string>

using namespace loom;

namespace {

TEST(ToolErrors, EveryLineOfAMessageHasThePrefix) {
  std::string text;
  llvm::raw_string_ostream os(text);
  tools::ToolErrors errors("some-tool", os);
  int code = errors.failInput(makeError("first problem\n\nsecond problem\n"), "f.hlo: ");
  EXPECT_EQ(code, tools::ExitBadInput);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(os.str(), "some-tool: error: f.hlo: first problem\n"
                      "some-tool: error: f.hlo: second problem\n");
}

TEST(ToolErrors, EveryErrorOfAListIsPrinted) {
  std::string text;
  llvm::raw_string_ostream os(text);
  tools::ToolErrors errors("t", os);
  errors.printError(llvm::joinErrors(makeError("a"), makeError("b")));
  EXPECT_EQ(os.str(), "t: error: a\nt: error: b\n");
}

TEST(ToolErrors, AUsageErrorPointsAtHelp) {
  std::string text;
  llvm::raw_string_ostream os(text);
  tools::ToolErrors errors("some-tool", os);
  EXPECT_EQ(errors.failUsage("no input file"), tools::ExitBadUsage);
  EXPECT_EQ(tools::ExitBadUsage, 2);
  EXPECT_EQ(os.str(), "some-tool: error: no input file\n"
                      "Try 'some-tool --help' for usage.\n");
  EXPECT_EQ(errors.getToolName(), "some-tool");
}

TEST(ToolErrors, ALabelAndANoteHaveThePrefixOnEveryLine) {
  std::string text;
  llvm::raw_string_ostream os(text);
  tools::ToolErrors errors("sim", os);
  errors.printLabeled("deadlock", "f.json: stuck\n  core 0: at 'b'\n");
  EXPECT_EQ(os.str(), "sim: deadlock: f.json: stuck\n"
                      "sim: deadlock:   core 0: at 'b'\n");
  std::string notes;
  llvm::raw_string_ostream notes_os(notes);
  errors.printNote(notes_os, "2 runs\n\nequivalent\n");
  EXPECT_EQ(notes_os.str(), "sim: 2 runs\nsim: equivalent\n");
}

TEST(ToolErrors, ARefusedCommandLinePointsAtHelp) {
  // Static: the parser keeps a registered option for the rest of the run.
  static llvm::cl::opt<bool> flag("tool-errors-test-flag");
  std::string text;
  llvm::raw_string_ostream os(text);
  tools::ToolErrors errors("some-tool", os);
  const char *good[] = {"some-tool", "--tool-errors-test-flag"};
  EXPECT_TRUE(errors.parseCommandLine(2, good, ""));
  EXPECT_TRUE(flag);
  EXPECT_EQ(os.str(), "");

  llvm::cl::ResetAllOptionOccurrences();
  // The parser's own messages come first, as it words them.
  const char *bad[] = {"some-tool", "--no-such-tool-errors-test-flag"};
  EXPECT_FALSE(errors.parseCommandLine(2, bad, ""));
  EXPECT_NE(os.str().find("Unknown command line argument '--no-such-tool-errors-test-flag'"),
            std::string::npos)
      << os.str();
  EXPECT_TRUE(llvm::StringRef(os.str()).endswith("Try 'some-tool --help' for usage.\n"))
      << os.str();
  llvm::cl::ResetAllOptionOccurrences();
}

TEST(ThreadsOption, ParsedResolvedAndChecked) {
  llvm::cl::OptionCategory category("test options");
  tools::addThreadsOptionToCategory(category);
  EXPECT_EQ(llvm::cl::getRegisteredOptions().count("threads"), 1u);

  const char *three[] = {"t", "--threads=3"};
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(2, three, "", &llvm::nulls()));
  EXPECT_EQ(tools::getThreadsOption(), 3);
  EXPECT_EQ(tools::getThreadCount(), 3u);
  EXPECT_EQ(tools::getThreadsOptionProblem(), "");

  llvm::cl::ResetAllOptionOccurrences();
  const char *zero[] = {"t", "--threads=0"};
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(2, zero, "", &llvm::nulls()));
  EXPECT_EQ(tools::getThreadsOption(), 0);
  EXPECT_EQ(tools::getThreadCount(), resolveThreadCount(0));

  llvm::cl::ResetAllOptionOccurrences();
  const char *negative[] = {"t", "--threads=-1"};
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(2, negative, "", &llvm::nulls()));
  EXPECT_EQ(tools::getThreadsOptionProblem(), "--threads must not be negative");
  llvm::cl::ResetAllOptionOccurrences();
}

} // namespace
