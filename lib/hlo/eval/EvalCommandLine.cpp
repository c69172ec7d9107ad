//===- EvalCommandLine.cpp - The interpreter's limits as flags ----------===//

#include "loom/hlo/eval/EvalCommandLine.h"

#include <string>

namespace loom::hlo {

llvm::cl::OptionCategory &EvalOptionCategory() {
  static llvm::cl::OptionCategory category("interpreter options");
  return category;
}

namespace {

const EvalOptions kDefaults;

llvm::cl::opt<int64_t> max_steps_flag(
    "max-steps", llvm::cl::value_desc("N"),
    llvm::cl::desc("Stop with an error after N executed instructions summed over all "
                   "devices: an instruction that runs on n devices counts n (default 2^25)"),
    llvm::cl::init(kDefaults.max_steps), llvm::cl::cat(EvalOptionCategory()));
llvm::cl::opt<int64_t> max_work_flag(
    "max-work", llvm::cl::value_desc("N"),
    llvm::cl::desc("Stop with an error when one device would compute more than N elements "
                   "(the limit is per device); a dot counts its multiply-adds (default 2^34)"),
    llvm::cl::init(kDefaults.max_work), llvm::cl::cat(EvalOptionCategory()));
llvm::cl::opt<int64_t> max_memory_flag(
    "max-memory", llvm::cl::value_desc("BYTES"),
    llvm::cl::desc("Stop with an error when the live values of all devices together hold "
                   "more than BYTES (default 4 GiB)"),
    llvm::cl::init(kDefaults.max_live_bytes), llvm::cl::cat(EvalOptionCategory()));

} // namespace

EvalOptions EvalOptionsFromCommandLine() {
  EvalOptions options;
  options.max_steps = max_steps_flag;
  options.max_work = max_work_flag;
  options.max_live_bytes = max_memory_flag;
  return options;
}

std::string EvalCommandLineProblem() {
  if (max_steps_flag < 0 || max_work_flag < 0 || max_memory_flag < 0)
    return "--max-steps, --max-work and --max-memory must not be negative";
  return "";
}

} // namespace loom::hlo
