//===- BackendToolOptions.h - The backend flags of the tools ----*- C++ -*-===//
//
// bir-opt and hlo-to-bir run the same backend pipeline and take the same
// flags for it, spelled as neuronx-cc spells them (BackendOptions.h): they
// are declared once, here. Each tool makes one BackendToolOptions in its own
// option category (which --help shows) and reads the values through it.
// --cost, which only bir-opt takes for these passes, stays in ToolOptions.h.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_SIM_BACKENDTOOLOPTIONS_H
#define LOOM_BIR_SIM_BACKENDTOOLOPTIONS_H

#include "loom/bir/passes/BackendOptions.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>

namespace loom::bir::sim {

class BackendToolOptions {
public:
  /// Registers the options in Cat.
  explicit BackendToolOptions(llvm::cl::OptionCategory &Cat);

  llvm::cl::opt<uint64_t> SendRecvToGpsimdMaxBpp;
  llvm::cl::opt<bool> EnableRemoteSemaphoreDMA;
  llvm::cl::opt<bool> EnablePTCOM;
  llvm::cl::opt<bool> RunSharedAllocationBeforePostSched;
  llvm::cl::opt<SendRecvEngineChoice> SendRecvEngine;

  /// The options given; the cost model keeps its defaults.
  BackendOptions getBackendOptions() const;
};

} // namespace loom::bir::sim

#endif
