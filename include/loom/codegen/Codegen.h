//===- Codegen.h - HLO module to the BIR programs of a launch ---*- C++ -*-===//
//
// The code generator: an HLO module, verified, becomes a launch
// (loom/bir/ir/Launch.h), one BIR program per device of its SPMD launch.
// Each device is compiled on its own, so partition-id and replica-id are
// constants there. docs/codegen.md gives the machine model: where values
// live, how work is tiled and split between the cores of a logical core, and
// which ops are lowered.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_CODEGEN_CODEGEN_H
#define LOOM_CODEGEN_CODEGEN_H

#include "loom/bir/ir/Launch.h"
#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"

namespace loom::codegen {

struct CodegenOptions {
  /// Cores per logical core; at lnc > 1 the programs are written split, one
  /// module per core (docs/codegen.md, "Work split").
  unsigned LncSize = 1;
  bir::Target Arch = bir::Target::Trn2;
  /// The launch size; 0 takes the module header's (as hlo-run does).
  unsigned ReplicaCount = 0;
  unsigned NumPartitions = 0;
};

/// Lowers every device of the launch. An op or type the generator does not
/// lower is the error "<computation>/<instruction>: <opcode> is not lowered
/// (<why>)"; no partial program is returned.
llvm::Expected<bir::Launch> lowerToLaunch(const hlo::HloModule &M,
                                          const CodegenOptions &Opts);

/// Whether lowering I (a dot, or an AwsNeuronCollectiveMatmul) at lnc_size
/// Lnc splits its contraction between the cores, which then add their
/// partial sums in another order than the interpreter's k upwards
/// (docs/codegen.md, "Work split"). The launch check compares what such a
/// sum feeds within tolerances (docs/simulator.md, "Tolerances").
bool splitsContraction(const hlo::HloInstruction &I, unsigned Lnc);

} // namespace loom::codegen

#endif
