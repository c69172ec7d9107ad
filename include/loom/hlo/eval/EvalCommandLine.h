//===- EvalCommandLine.h - The interpreter's limits as flags --------------===//
//
// The flags every tool that runs the interpreter shares, spelled once:
//   --max-steps=N    executed instructions summed over all devices
//                    (EvalOptions::max_steps)
//   --max-work=N     elements computed by one device, a dot's multiply-adds
//                    (max_work: the limit is per device)
//   --max-memory=N   bytes held by the live values of all devices (max_live_bytes)
// They register when a tool links EvalOptionsFromCommandLine() and belong to
// the "interpreter options" category. docs/interpreter.md explains them.
// The threads (EvalOptions::threads) are the tool's --threads, which is
// every tool's option, not the interpreter's (loom/tools/ThreadsOption.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_EVAL_EVALCOMMANDLINE_H
#define LOOM_HLO_EVAL_EVALCOMMANDLINE_H

#include "loom/hlo/eval/Interpreter.h"

#include "llvm/Support/CommandLine.h"

namespace loom::hlo {

/// The category of the flags above, for cl::HideUnrelatedOptions.
llvm::cl::OptionCategory &EvalOptionCategory();

/// EvalOptions with the defaults, overridden by the flags given; `threads`
/// stays at its default.
EvalOptions EvalOptionsFromCommandLine();

/// An error message when a flag holds a value out of range (a negative
/// count), empty when they are all usable.
std::string EvalCommandLineProblem();

} // namespace loom::hlo

#endif
