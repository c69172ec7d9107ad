//===- LaunchRunner.h - Run a launch on hlo-run's inputs, compare outputs -*- C++ -*-===//
//
// The layer above both halves: a launch document (loom/bir/ir/Launch.h) is
// the BIR program of every device compiled from an HLO module. This library
// gives its entry parameters exactly the values `hlo-run --seed=S` gives the
// module (lib/hlo/eval's generator and per-device rules), places them in the
// bound SharedDRAM locations, simulates every core of every device together
// (bir::sim::simulateLaunch), reads the outputs back as HLO literals, writes
// them as `hlo-run --output-dir` does, and compares them with the
// interpreter's. `bir-sim LAUNCH.json` and `hlo-to-bir --check` are built on
// it. docs/simulator.md, "Running a launch", says every choice.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LAUNCH_LAUNCHRUNNER_H
#define LOOM_LAUNCH_LAUNCHRUNNER_H

#include "loom/bir/ir/Launch.h"
#include "loom/bir/sim/Simulator.h"
#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/eval/NumericsCheck.h"
#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::launch {

/// One `--input DEVICE:PARAM=FILE.npy`, spelled as hlo-run spells it: DEVICE
/// is a number or `*` (every device), PARAM a parameter number or name.
struct ParameterInput {
  std::optional<unsigned> Device;
  std::string Param;
  std::string Path;
};
/// None when Text is not DEVICE:PARAM=FILE.
std::optional<ParameterInput> parseParameterInput(llvm::StringRef Text);

struct LaunchOptions {
  /// hlo-run's --seed and --same-inputs.
  uint64_t Seed = 0;
  bool SameInputs = false;
  std::vector<ParameterInput> Inputs;
  /// The simulation (limits, cost, schedules, race check, trace, FileName).
  /// Its Inputs are replaced by the parameters.
  bir::sim::SimOptions Sim;
  /// The interpreter's limits (for the generator's size checks and for the
  /// reference run).
  hlo::EvalOptions Eval;
};

/// Args[device][parameter], the values hlo-run gives. With the module:
/// MakeRandomArguments exactly (replicated parameters and SameInputs
/// included). Without it, from the launch's bindings: each parameter's
/// shape from its leaves, MakeRandomLiteral per (seed, device, parameter),
/// device 0's values everywhere under SameInputs; a parameter annotated
/// sharding={replicated} is not visible in the launch, so without the
/// module it gets per-device values. Then the --input files, as hlo-run
/// applies them. Errors name the bad input.
llvm::Expected<std::vector<std::vector<hlo::Literal>>>
makeLaunchArguments(const bir::Launch &L, const hlo::HloModule *Module,
                    const LaunchOptions &O);

/// One output leaf of one device: the binding's tuple index path and value.
struct OutputLeaf {
  std::vector<unsigned> Index;
  hlo::Literal Value;
};

struct LaunchRun {
  bir::sim::SimResult Sim;
  /// Outputs[device]: every bound output leaf, in binding order.
  std::vector<std::vector<OutputLeaf>> Outputs;
};

/// Splits every device's program if needed (in place), places Args in the
/// bound locations (the leaf's bytes from byte 0, the rest of the location
/// zero) and simulates the launch. A failure of the simulation is returned
/// as the simulator's SimFailure; Partial, when given, receives the run up
/// to it (for a trace). An output whose bytes were not all written is an
/// error naming it.
llvm::Expected<LaunchRun> runLaunch(bir::Launch &L,
                                    const std::vector<std::vector<hlo::Literal>> &Args,
                                    const LaunchOptions &O,
                                    bir::sim::SimResult *Partial = nullptr);

/// Writes every device's outputs as `hlo-run --output-dir` does:
/// DIR/device<d>.npy for an array result, DIR/device<d>_<i>[_<j>...].npy for
/// tuple leaves, the same dtypes and bytes (WriteNpyFile of loom/hlo/eval/NpyLiteral.h).
llvm::Error writeOutputs(llvm::StringRef Dir, const LaunchRun &Run);

/// Whether output leaf `TopIndex` (the tuple element of the entry's result,
/// or -1 for an array result) may be fed by a sum whose order the HLO does
/// not fix: it depends on an all-reduce or reduce-scatter, or on a dot or a
/// collective matmul whose contraction the code generator splits between
/// the cores at this lnc_size (codegen::splitsContraction). Those outputs
/// are compared within hlo-run's per-type tolerances; every other one bit
/// for bit.
bool isFedBySum(const hlo::HloModule &M, int TopIndex, unsigned LncSize);
/// Whether it depends on a split contraction (isFedBySum's third case).
bool isFedBySplitContraction(const hlo::HloModule &M, int TopIndex,
                             unsigned LncSize);

/// Compares every output leaf of every device of Run with the interpreter's
/// results Reference (one literal per device). The summary counts every
/// element of every bound leaf; its first mismatch reads as hlo-run's
/// (`device 0, output {1}, element 3 (index [0,3]): reference ..., candidate
/// ... (f32: rtol 1e-05, atol 1e-06)`). Magnitudes, when given, are the
/// module's outputs on the inputs' absolute values: an output fed by a split
/// contraction may then differ by the per-type tolerance of that magnitude
/// (docs/simulator.md, "Tolerances").
llvm::Expected<hlo::ComparisonSummary>
compareWithReference(const hlo::HloModule &M, const bir::Launch &L,
                     const std::vector<hlo::Literal> &Reference,
                     const LaunchRun &Run,
                     const std::vector<hlo::Literal> *Magnitudes = nullptr);

struct CheckOptions : LaunchOptions {
  /// Print the simulator's per-core report (text or JSON) to Out.
  bool Report = false;
  bool ReportJson = false;
  /// Write the Chrome trace of the launch there (also of a failed run).
  std::string TraceFile;
};

/// The check of `bir-sim --against-hlo` and `hlo-to-bir --check`: runs M in
/// the interpreter and L in the simulator on the same inputs (hlo-run's for
/// O.Seed) and compares every output of every device. Prints to Out
/// `compared N elements on D devices: M differ` and, on a mismatch, `first
/// difference: ...`. Returns true when nothing differs, false on a mismatch;
/// an error when an input is bad, a run fails or the launch does not fit the
/// module.
llvm::Expected<bool> checkAgainstHlo(const hlo::HloModule &M, bir::Launch &L,
                                     const CheckOptions &O, llvm::raw_ostream &Out);

} // namespace loom::launch

#endif
