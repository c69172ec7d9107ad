#include "loom/hlo/ir/IdentityCustomCalls.h"

#include "llvm/ADT/STLExtras.h"

namespace loom::hlo {

llvm::ArrayRef<llvm::StringRef> getIdentityCustomCallTargets() {
  static const llvm::StringRef Targets[] = {
      "Sharding",
      "ShardBarrierFrom",
      "ShardBarrierTo",
      "SPMDFullToShardShape",
      "SPMDShardToFullShape",
      "MoveToHost",
      "MoveToDevice",
      "PinToDevice",
      "PinToDeviceSram",
      "annotate_device_placement",
      "xla.sdy.FuncResultSharding",
      "AwsNeuronTransferWithStaticRing",
      "TorchNeuronStartBackward"};
  return Targets;
}

bool IsIdentityCustomCallTarget(llvm::StringRef target) {
  return llvm::is_contained(getIdentityCustomCallTargets(), target);
}

} // namespace loom::hlo
