#include "loom/tools/ThreadsOption.h"

#include "loom/support/Parallel.h"

namespace loom::tools {
namespace {

llvm::cl::opt<int> ThreadsFlag(
    "threads", llvm::cl::value_desc("N"),
    llvm::cl::desc("Use N worker threads: to run the devices between collectives, and "
                   "to parse, verify and print a large module; 0 (the default) uses every "
                   "core. Results and output do not depend on N"),
    llvm::cl::init(0));

} // namespace

void addThreadsOptionToCategory(llvm::cl::OptionCategory &Category) {
  ThreadsFlag.addCategory(Category);
}

int getThreadsOption() { return ThreadsFlag; }

unsigned getThreadCount() {
  return resolveThreadCount(static_cast<unsigned>(ThreadsFlag < 0 ? 0 : int(ThreadsFlag)));
}

std::string getThreadsOptionProblem() {
  if (ThreadsFlag < 0)
    return "--threads must not be negative";
  return "";
}

} // namespace loom::tools
