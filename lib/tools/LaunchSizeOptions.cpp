#include "loom/tools/LaunchSizeOptions.h"

namespace loom::tools {
namespace {

llvm::cl::opt<int64_t> ReplicaCountFlag("replica-count", llvm::cl::value_desc("N"));
llvm::cl::opt<int64_t> NumPartitionsFlag("num-partitions", llvm::cl::value_desc("N"));

// The descriptions outlive the options' registration (cl::opt keeps a view).
std::string ReplicaCountDesc, NumPartitionsDesc;

std::optional<int64_t> Given(const llvm::cl::opt<int64_t> &Flag) {
  if (!Flag.getNumOccurrences())
    return std::nullopt;
  return Flag.getValue();
}

} // namespace

void addLaunchSizeOptionsToCategory(llvm::cl::OptionCategory &Category, llvm::StringRef Purpose,
                                    llvm::StringRef Detail) {
  std::string Suffix = Detail.empty() ? "" : (" " + Detail).str();
  ReplicaCountDesc = (Purpose + " N replicas whatever the module header says" + Suffix).str();
  NumPartitionsDesc = (Purpose + " N partitions whatever the module header says" + Suffix).str();
  ReplicaCountFlag.setDescription(ReplicaCountDesc);
  NumPartitionsFlag.setDescription(NumPartitionsDesc);
  ReplicaCountFlag.addCategory(Category);
  NumPartitionsFlag.addCategory(Category);
}

std::optional<int64_t> getReplicaCountOption() { return Given(ReplicaCountFlag); }
std::optional<int64_t> getNumPartitionsOption() { return Given(NumPartitionsFlag); }

std::string getLaunchSizeOptionsProblem() {
  if ((ReplicaCountFlag.getNumOccurrences() && ReplicaCountFlag < 1) ||
      (NumPartitionsFlag.getNumOccurrences() && NumPartitionsFlag < 1))
    return "--replica-count and --num-partitions must be at least 1";
  return "";
}

std::string getLaunchSizeHint(bool HeaderDeclaresSize, llvm::StringRef Message) {
  if (HeaderDeclaresSize)
    return "";
  // Only where the run failed for want of devices: a collective naming ids
  // or stacking shards the one device cannot supply.
  if (!Message.contains(" id ") && !Message.contains(" does not match ") &&
      !Message.contains(" over 1 device"))
    return "";
  return " (the module header declares neither replica_count nor num_partitions, so it runs "
         "on 1 device; give the launch size with --replica-count / --num-partitions)";
}

} // namespace loom::tools
