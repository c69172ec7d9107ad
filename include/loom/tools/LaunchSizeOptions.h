//===- LaunchSizeOptions.h - --replica-count and --num-partitions ---------===//
//
// The launch size of a module that runs on the interpreter: how many
// replicas and partitions, whatever its header says. XLA's tests set the
// size in code, so their modules name more devices than the header
// declares; these options give it. hlo-run runs on it, hlo-opt
// --check-numerics checks on it. The options are spelled, described and
// checked here once, as is the hint an error gets when a module declares
// no size and failed for want of devices (docs/hlo-run.md).
//
// Only strings and numbers cross this interface: the tools library
// includes neither the HLO nor the BIR half (test/bir/layering.test); the
// tool applies the sizes to its module (HloModule::SetHeaderAttribute).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TOOLS_LAUNCHSIZEOPTIONS_H
#define LOOM_TOOLS_LAUNCHSIZEOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace loom::tools {

/// Lists --replica-count and --num-partitions under `Category` in --help,
/// described as "<Purpose> N replicas whatever the module header says
/// <Detail>" (Purpose says what the size is for: "Run on"); call before
/// parsing the command line.
void addLaunchSizeOptionsToCategory(llvm::cl::OptionCategory &Category, llvm::StringRef Purpose,
                                    llvm::StringRef Detail = "");

/// The values given, nullopt when an option is absent.
std::optional<int64_t> getReplicaCountOption();
std::optional<int64_t> getNumPartitionsOption();

/// "--replica-count and --num-partitions must be at least 1" when one is
/// below 1, else empty.
std::string getLaunchSizeOptionsProblem();

/// What to append to the error of a failed run: when the module header
/// declares neither replica_count nor num_partitions and `Message` says the
/// run lacked devices (a collective naming device ids or stacking shards
/// one device cannot supply), a hint to give the size with these options;
/// else empty.
std::string getLaunchSizeHint(bool HeaderDeclaresSize, llvm::StringRef Message);

} // namespace loom::tools

#endif
