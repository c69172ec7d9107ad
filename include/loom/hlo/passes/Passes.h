//===- Passes.h - Register every HLO pass loom has ------------------------===//
//
// Tools call RegisterAllHloPasses() once before looking passes up by name
// (loom/hlo/pass/PassRegistry.h). Calling it also pulls every pass's object
// file, and with it the pass's command-line options, into the tool.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASSES_PASSES_H
#define LOOM_HLO_PASSES_PASSES_H

namespace loom::hlo {

/// Registers every pass under its name(); calling it again is harmless.
void RegisterAllHloPasses();

} // namespace loom::hlo

#endif
