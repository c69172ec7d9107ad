//===- Launch.h - The BIR programs of every device of an SPMD launch -*- C++ -*-===//
//
// An HLO module runs on replica_count * num_partitions devices. A launch is
// what the code generator makes of it: for every device its BIR program
// (the modules of the device's logical core) and where each HLO entry
// parameter and output lives in that program. docs/bir.md ("Launch
// documents") gives the meaning and the JSON form.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_LAUNCH_H
#define LOOM_BIR_IR_LAUNCH_H

#include "loom/bir/ir/Module.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::bir {

/// One array leaf of an HLO entry parameter or of the entry's result, and
/// the SharedDRAM location of the device's program that holds it: the leaf's
/// elements in row-major order of its logical shape, from byte 0.
struct LaunchBinding {
  /// Parameters: the parameter number. Unused for outputs.
  unsigned Parameter = 0;
  /// Parameters: the parameter instruction's name. Empty for outputs.
  std::string Name;
  /// The tuple index path of the leaf inside the parameter or the result;
  /// empty for an array.
  std::vector<unsigned> Index;
  /// The HLO shape of the leaf without layout, e.g. "bf16[8,128]".
  std::string Shape;
  /// The subgraph and the SharedDRAM location name holding the leaf.
  unsigned Subgraph = 0;
  std::string Memloc;
  /// Parameters: the HLO parameter is `sharding={replicated}` (every device
  /// holds the same value, so a run gives every device device 0's values,
  /// as hlo-run does). False for outputs.
  bool Replicated = false;
};

struct LaunchDevice {
  /// replica * num_partitions + partition, as the HLO interpreter numbers
  /// devices (XLA's flattened global device id).
  unsigned Device = 0;
  unsigned Replica = 0;
  unsigned Partition = 0;
  /// Array leaves only: tokens have no data and no location.
  std::vector<LaunchBinding> Parameters;
  std::vector<LaunchBinding> Outputs;
  /// The device's logical core: one module per subgraph before
  /// lnc_splitter, one per subgraph and core after it.
  Program Modules;
};

struct Launch {
  std::string HloModule;
  unsigned ReplicaCount = 1;
  unsigned NumPartitions = 1;
  unsigned LncSize = 1;
  Target Arch = Target::Trn2;
  /// Devices 0 .. ReplicaCount * NumPartitions - 1, in order.
  std::vector<LaunchDevice> Devices;
};

/// The BIR element type of an HLO element type name ("f32" -> fp32, "pred"
/// -> uint8 holding 0 or 1, ...), or none for a type that is not lowered.
std::optional<DataType> getBirTypeOfHloType(llvm::StringRef HloType);

/// Checks what the IR alone can check of a launch: the device numbering,
/// every device's program (verifyProgram) with the launch's lnc_size and
/// target, and every binding naming a SharedDRAM location of its subgraph's
/// module(s) of the shape's type, large enough for the leaf. Errors are
/// "$.launch.devices[D]...: <what>".
llvm::Error verifyLaunch(const Launch &L);

} // namespace loom::bir

#endif
