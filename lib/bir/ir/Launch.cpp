#include "loom/bir/ir/Launch.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

namespace loom::bir {

std::optional<DataType> getBirTypeOfHloType(llvm::StringRef HloType) {
  // docs/bir.md, "Launch documents": the HLO types loom lowers; pred is a
  // byte holding 0 or 1, as XLA stores it.
  return llvm::StringSwitch<std::optional<DataType>>(HloType)
      .Case("f32", DataType::FP32)
      .Case("bf16", DataType::BF16)
      .Case("f16", DataType::FP16)
      .Case("f8e4m3fn", DataType::FP8E4M3)
      .Case("f8e5m2", DataType::FP8E5M2)
      .Case("s8", DataType::INT8)
      .Case("s16", DataType::INT16)
      .Case("s32", DataType::INT32)
      .Case("u8", DataType::UINT8)
      .Case("u16", DataType::UINT16)
      .Case("u32", DataType::UINT32)
      .Case("s64", DataType::INT64)
      .Case("u64", DataType::UINT64)
      .Case("pred", DataType::UINT8)
      .Default(std::nullopt);
}

namespace {

/// The element type and element count of a shape string "type[d0,...]";
/// none when it is not one.
std::optional<std::pair<DataType, uint64_t>> parseLeafShape(llvm::StringRef S) {
  size_t Open = S.find('[');
  if (Open == llvm::StringRef::npos || !S.endswith("]"))
    return std::nullopt;
  std::optional<DataType> T = getBirTypeOfHloType(S.take_front(Open));
  if (!T)
    return std::nullopt;
  llvm::StringRef Dims = S.drop_front(Open + 1).drop_back();
  uint64_t Count = 1;
  while (!Dims.empty()) {
    auto [D, Rest] = Dims.split(',');
    uint64_t N;
    if (D.getAsInteger(10, N))
      return std::nullopt;
    if (N != 0 && Count > UINT64_MAX / N / 8)
      return std::nullopt;
    Count *= N;
    if (Rest.empty() && Dims.endswith(","))
      return std::nullopt;
    Dims = Rest;
  }
  return std::make_pair(*T, Count);
}

llvm::Error checkBinding(const LaunchBinding &B, const Program &P,
                         const std::string &Path) {
  std::optional<std::pair<DataType, uint64_t>> Leaf = parseLeafShape(B.Shape);
  if (!Leaf)
    return makeError(Path + ".shape: '" + B.Shape +
                     "' is not an array shape of a lowered element type");
  const Module *Owner = nullptr;
  for (const auto &M : P)
    if (M->getSubgraphId() == B.Subgraph) {
      Owner = M.get();
      break;
    }
  if (!Owner)
    return makeError(Path + ".subgraph: the device has no subgraph " +
                     llvm::Twine(B.Subgraph));
  const MemoryLocation *L =
      Owner->getMemoryLocations().getMemlocByName(B.Memloc);
  if (!L)
    return makeError(Path + ".memloc: subgraph " + llvm::Twine(B.Subgraph) +
                     " has no location '" + B.Memloc + "'");
  if (L->getKind() != MemoryKind::SharedDRAM)
    return makeError(Path + ".memloc: '" + B.Memloc + "' is " +
                     enumName(L->getKind()) + ", not SharedDRAM");
  if (L->getType() != Leaf->first)
    return makeError(Path + ".memloc: '" + B.Memloc + "' holds " +
                     enumName(L->getType()) + ", the shape " + B.Shape +
                     " needs " + enumName(Leaf->first));
  uint64_t Size = getDataTypeSize(L->getType());
  uint64_t Bytes = uint64_t(L->getNumPartitions()) * L->getBytesPerPartition();
  if (Bytes / Size < Leaf->second)
    return makeError(Path + ".memloc: '" + B.Memloc + "' holds " +
                     llvm::Twine(Bytes / Size) + " elements, the shape " +
                     B.Shape + " has " + llvm::Twine(Leaf->second));
  return llvm::Error::success();
}

} // namespace

llvm::Error verifyLaunch(const Launch &L) {
  if (L.ReplicaCount == 0 || L.NumPartitions == 0)
    return makeError("$.launch: replica_count and num_partitions must be at "
                     "least 1");
  uint64_t NumDevices = uint64_t(L.ReplicaCount) * L.NumPartitions;
  if (L.Devices.size() != NumDevices)
    return makeError("$.launch.devices: " + llvm::Twine(L.Devices.size()) +
                     " devices; replica_count * num_partitions is " +
                     llvm::Twine(NumDevices));
  for (size_t D = 0; D < L.Devices.size(); ++D) {
    const LaunchDevice &Dev = L.Devices[D];
    std::string Path = "$.launch.devices[" + std::to_string(D) + "]";
    if (Dev.Device != D || Dev.Replica != D / L.NumPartitions ||
        Dev.Partition != D % L.NumPartitions)
      return makeError(Path + ": device " + llvm::Twine(Dev.Device) +
                       ", replica " + llvm::Twine(Dev.Replica) +
                       ", partition " + llvm::Twine(Dev.Partition) +
                       "; entry " + llvm::Twine(D) + " must be device " +
                       llvm::Twine(D) + ", replica " +
                       llvm::Twine(D / L.NumPartitions) + ", partition " +
                       llvm::Twine(D % L.NumPartitions));
    if (Dev.Modules.empty())
      return makeError(Path + ".modules: a device needs at least one module");
    for (size_t I = 0; I < Dev.Modules.size(); ++I) {
      const TargetOptions &O = Dev.Modules[I]->getTargetOptions();
      if (O.LncSize != L.LncSize || O.Arch != L.Arch)
        return makeError(Path + ".modules[" + std::to_string(I) +
                         "].pass_options: lnc_size " + llvm::Twine(O.LncSize) +
                         ", target " + enumName(O.Arch) +
                         "; the launch has lnc_size " + llvm::Twine(L.LncSize) +
                         ", target " + enumName(L.Arch));
    }
    if (llvm::Error E = verifyProgram(Dev.Modules)) {
      // The verifier names modules as a program document does; here they
      // sit inside the device.
      std::string Msg = llvm::toString(std::move(E));
      llvm::StringRef Text(Msg);
      if (Text.consume_front("$."))
        return makeError(Path + "." + Text);
      return makeError(Path + ": " + Text);
    }
    for (size_t I = 0; I < Dev.Parameters.size(); ++I)
      if (llvm::Error E =
              checkBinding(Dev.Parameters[I], Dev.Modules,
                           Path + ".parameters[" + std::to_string(I) + "]"))
        return E;
    for (size_t I = 0; I < Dev.Outputs.size(); ++I)
      if (llvm::Error E =
              checkBinding(Dev.Outputs[I], Dev.Modules,
                           Path + ".outputs[" + std::to_string(I) + "]"))
        return E;
  }
  return llvm::Error::success();
}

} // namespace loom::bir
