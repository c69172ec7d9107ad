//===- ChromeTrace.h - A simulated timeline as Chrome trace JSON ----------===//
//
// `bir-sim --trace FILE.json` writes the Chrome trace event format, which
// Perfetto (ui.perfetto.dev) and chrome://tracing load: one process per core,
// one thread (track) per engine (for a launch: one process per device, one
// track per core and engine), every executed instruction a complete ("X")
// event, and every cross-core ordering (a barrier, a completion, a semaphore)
// a flow arrow ("s" -> "f") from the event that released it to the one it
// released. An instruction's event carries its opcode, bytes read and
// written, locations and collective in "args" (Perfetto shows them when the
// slice is selected). Times are nanoseconds here and microseconds in the
// file, as the format requires; the output is always valid JSON.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_SIM_CHROMETRACE_H
#define LOOM_LIB_BIR_SIM_CHROMETRACE_H

#include "loom/bir/ir/Types.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace loom::bir::sim {

/// One execution of an instruction: [StartNs, StartNs + DurNs) on engine Eng
/// of core Core.
struct TraceSlice {
  unsigned Core;
  Engine Eng;
  std::string Name;
  double StartNs;
  double DurNs;
  unsigned Device = 0; ///< in a launch
  /// The event's "args"; none are written when Details.Opcode is empty.
  SliceDetails Details = {};
};

/// An arrow from a point of one track to a point of another. Each end should
/// lie inside a slice of its track (Perfetto binds a flow to the enclosing
/// slice); the "f" end binds to the slice enclosing ToNs.
struct TraceFlow {
  unsigned FromCore;
  Engine FromEng;
  double FromNs;
  unsigned ToCore;
  Engine ToEng;
  double ToNs;
  std::string Name;
  unsigned FromDevice = 0, ToDevice = 0; ///< in a launch
};

/// Writes {"traceEvents": [...], "displayTimeUnit": "ns"}: process_name
/// "core C" (pid C) for C < NumCores (and for any core a slice or flow names),
/// thread_name = the engine's name (tid = the engine's ordinal), the slices as
/// "X" events, each flow as an "s" / "f" pair with a shared id. Events are in
/// a deterministic order: metadata, then slices and flows as given.
///
/// With NumDevices > 0 (a launch) the layout is a process per device
/// (process_name "device D", pid D) and a thread per core and engine
/// (thread_name "core C ENGINE", tid = C * 21 + the engine's ordinal), so
/// Perfetto shows every device of the launch with its cores' engines.
void writeChromeTrace(llvm::raw_ostream &OS, llvm::ArrayRef<TraceSlice> Slices,
                      llvm::ArrayRef<TraceFlow> Flows, unsigned NumCores,
                      unsigned NumDevices = 0);

} // namespace loom::bir::sim

#endif
