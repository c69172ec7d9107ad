//===- Simulator.h - Multi-core simulation of BIR programs ------*- C++ -*-===//
//
// Runs the per-core modules of a program together: every engine of every
// core is an in-order queue, instructions start when their dependencies'
// most recent executions have finished (docs/bir.md, "Execution model"),
// cores meet at barriers, collectives, completions and semaphores. Every
// instruction has its exact element semantics, collectives that are still
// present run by their reference semantics, every access goes through the
// happens-before race detector, and a state where no core can progress is
// reported as a deadlock. docs/simulator.md describes every choice.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_SIM_SIMULATOR_H
#define LOOM_BIR_SIM_SIMULATOR_H

#include "loom/bir/analysis/CostModel.h"
#include "loom/bir/ir/Module.h"
#include "loom/support/Npy.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace loom::bir::sim {

/// What went wrong in a simulation; the tool prints Race as "race:",
/// Deadlock as "deadlock:", Nondeterminism as "nondeterminism:" and the
/// others as "error:".
enum class FailureKind { Error, Race, Deadlock, Nondeterminism, Mismatch };

class SimFailure : public llvm::ErrorInfo<SimFailure> {
public:
  static char ID;
  SimFailure(FailureKind Kind, std::string Msg)
      : Kind(Kind), Msg(std::move(Msg)) {}
  FailureKind getKind() const { return Kind; }
  const std::string &getMessage() const { return Msg; }
  void log(llvm::raw_ostream &OS) const override { OS << Msg; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  FailureKind Kind;
  std::string Msg;
};

llvm::Error makeFailure(FailureKind Kind, const llvm::Twine &Msg);

/// The initial value of a location: on every core (Core unset) or one; in a
/// launch on every device (Device unset) or one.
struct InputValue {
  std::optional<unsigned> Core;
  std::string Name;
  NpyArray Array;
  std::optional<unsigned> Device = std::nullopt;
};

struct SimOptions {
  /// Seeds the random inputs and the random schedules.
  uint64_t Seed = 0;
  /// Random legal interleavings run after the deterministic one; all must
  /// leave the same state.
  unsigned Schedules = 0;
  bool RaceCheck = true;
  /// Instruction executions per core.
  uint64_t MaxSteps = 10000000;
  /// Bytes of simulated storage (the sum of every location's bytes).
  uint64_t MaxMemory = uint64_t(4) << 30;
  /// Work of a core's executions in all: every execution's operand bytes
  /// (read and written), plus a Matmul's K x M x N multiply-adds
  /// (docs/simulator.md, "Limits"). Checked on the block walk before the
  /// run, so a program over it fails at once instead of simulating for
  /// hours under MaxSteps.
  uint64_t MaxWork = uint64_t(16) << 30;
  analysis::CostModelParams Cost;
  std::vector<InputValue> Inputs;
  /// Names of collectives whose lowered instructions (named "<name>_...")
  /// the report attributes to them, besides the CollectiveCompute
  /// instructions of the program itself.
  std::vector<std::string> CollectiveNames;
  /// Keep the slices and flows of the deterministic run for a trace.
  bool RecordTrace = false;
  /// The name of the program in messages.
  std::string FileName = "<program>";
};

constexpr unsigned NumEngines = static_cast<unsigned>(Engine::DMALast) + 1;

struct EngineStats {
  double BusyNs = 0;
  uint64_t Bytes = 0;
  uint64_t Executions = 0;
};

/// One core's figures in the deterministic schedule.
struct CoreReport {
  unsigned Subgraph = 0;
  unsigned Core = 0;
  /// The device of a launch; 0 for a single program.
  unsigned Device = 0;
  double MakespanNs = 0;
  uint64_t Executions = 0;
  std::array<EngineStats, NumEngines> Engines;
  /// Bytes written into storage of another core (through remote locations).
  uint64_t BytesToOtherCores = 0;
  /// Bytes read from storage of another core (through remote locations).
  uint64_t BytesFromOtherCores = 0;
  /// Bytes written by each collective (its reference execution, or the
  /// instructions named after it), in order of first appearance.
  std::vector<std::pair<std::string, uint64_t>> CollectiveBytes;
};

/// Which bytes of a storage are initialized (written, seeded or an input).
/// Init has one flag per byte; it is empty when AllInit holds or no byte is
/// initialized, so a storage seeded, given as input or written whole keeps
/// no flags. Read it through isInit.
struct InitFlags {
  std::vector<uint8_t> Init;
  bool AllInit = false;

  bool isInit(uint64_t Off) const {
    return AllInit || (!Init.empty() && Init[Off]);
  }
};

/// The contents of one storage at exit. Core is unset for SharedDRAM.
struct LocationState : InitFlags {
  /// The device of a launch; 0 for a single program.
  unsigned Device = 0;
  unsigned Subgraph = 0;
  std::optional<unsigned> Core;
  std::string Name;
  MemoryKind Kind = MemoryKind::SB;
  DataType Type = DataType::FP32;
  unsigned Partitions = 0;
  uint64_t BytesPerPartition = 0;
  std::vector<uint8_t> Data;
};

/// What one execution did, for the trace's "args" (docs/simulator.md,
/// "The trace"): the instruction's opcode, the bytes it read and wrote (as
/// the report counts them), the locations it read and wrote (a location of
/// another core as "NAME (core C)"), and the collective the report
/// attributes it to (empty when none).
struct SliceDetails {
  std::string Opcode;
  uint64_t BytesRead = 0;
  uint64_t BytesWritten = 0;
  std::vector<std::string> Reads, Writes;
  std::string Collective;
};

/// A slice of the timeline (one execution) and a synchronization arrow.
struct TimelineSlice {
  unsigned Core;
  Engine Eng;
  std::string Name;
  double StartNs;
  double DurNs;
  unsigned Device = 0;
  SliceDetails Details;
};
struct TimelineFlow {
  unsigned FromCore;
  Engine FromEng;
  double FromNs;
  unsigned ToCore;
  Engine ToEng;
  double ToNs;
  std::string Name;
  unsigned FromDevice = 0, ToDevice = 0;
};

struct SimResult {
  std::vector<CoreReport> Cores;
  std::vector<LocationState> Final;
  std::vector<TimelineSlice> Slices;
  std::vector<TimelineFlow> Flows;
  /// Cores per device (the most of any subgraph).
  unsigned NumCores = 1;
  /// 0 for a single program (simulate); the launch's devices otherwise
  /// (simulateLaunch): the report, the trace and messages then name them.
  unsigned NumDevices = 0;

  /// The storage location Name of core Core sees (SharedDRAM is the same on
  /// every core); null if the module has no such non-remote location.
  const LocationState *find(unsigned Subgraph, unsigned Core,
                            llvm::StringRef Name) const;
  /// The same on device Device of a launch.
  const LocationState *find(unsigned Device, unsigned Subgraph, unsigned Core,
                            llvm::StringRef Name) const;
};

/// Simulates a split program (one module per core of each subgraph). The
/// subgraphs run one after another with independent state. When the
/// deterministic run fails (a race, a deadlock, an uninitialized read) and
/// Partial is given, it receives what that run did up to the failure (the
/// subgraphs so far, the state and timeline at the failure), for a trace.
llvm::Expected<SimResult> simulate(const Program &P, const SimOptions &Opts,
                                   SimResult *Partial = nullptr);

/// Simulates a launch: the split programs of its devices, device d being
/// Devices[d], every core of every device together (docs/simulator.md,
/// "Launches"). A collective that is not local lists device ids and meets
/// the instances on the same core of the other devices of its group;
/// SharedDRAM is per device. The devices must have the same subgraphs and
/// lnc_size. Subgraph s of every device runs together, after subgraph s-1
/// of every device. Messages name "device D core C".
llvm::Expected<SimResult> simulateLaunch(llvm::ArrayRef<const Program *> Devices,
                                         const SimOptions &Opts,
                                         SimResult *Partial = nullptr);

/// Splits an unsplit program in memory with lnc_splitter.
llvm::Error splitIfNeeded(Program &P);

/// Runs Before and After on the same seeded inputs and compares every
/// non-remote location of Before on every core at exit (docs/simulator.md,
/// "Equivalence"). Log receives a line per compared subgraph.
llvm::Error checkEquivalence(const Program &Before, const Program &After,
                             const SimOptions &Opts, llvm::raw_ostream &Log);

/// The per-core report, as text or as JSON.
void printReport(llvm::raw_ostream &OS, const SimResult &R, bool Json);

/// The final contents of a location as .npy: shape [partitions, elements];
/// bf16 and fp8 widen exactly to <f4; bytes never written read as 0.
NpyArray toNpy(const LocationState &L);

/// Writes the deterministic run's timeline in the Chrome trace format.
void writeTrace(llvm::raw_ostream &OS, const SimResult &R);

} // namespace loom::bir::sim

#endif
