//===- ThreadsOption.h - The --threads option every tool shares -----------===//
//
// --threads=N: the worker threads of a tool, for whatever it does in
// parallel (parse, verify and print a large module; run the devices of an
// SPMD launch between collectives). 0, the default, is the machine's cores
// (loom::resolveThreadCount). A tool's output never depends on N. The
// option is spelled, described and checked here once; each tool says under
// which heading its --help lists it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TOOLS_THREADSOPTION_H
#define LOOM_TOOLS_THREADSOPTION_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace loom::tools {

/// Lists --threads under `Category` in --help (call before parsing the
/// command line).
void addThreadsOptionToCategory(llvm::cl::OptionCategory &Category);

/// --threads as given: 0 for the machine's cores.
int getThreadsOption();

/// --threads resolved: the machine's cores for 0.
unsigned getThreadCount();

/// "--threads must not be negative" when it is, else empty.
std::string getThreadsOptionProblem();

} // namespace loom::tools

#endif
