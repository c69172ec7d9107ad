#include "loom/bir/passes/RemoteLocations.h"

#include "loom/support/Error.h"

#include <cassert>

namespace loom::bir {

std::vector<unsigned> getRemoteCores(llvm::ArrayRef<unsigned> Group,
                                     unsigned Self) {
  std::vector<unsigned> Peers;
  for (unsigned Core : Group)
    if (Core != Self)
      Peers.push_back(Core);
  return Peers;
}

static bool sameStorageShape(const MemoryLocation &A, const MemoryLocation &B) {
  return A.getKind() == B.getKind() && A.getType() == B.getType() &&
         A.getNumPartitions() == B.getNumPartitions() &&
         A.getBytesPerPartition() == B.getBytesPerPartition();
}

llvm::Error checkRemoteNameFree(const Module &User, const Module &Owner,
                                const MemoryLocation &Target) {
  if (&User == &Owner || Target.getKind() == MemoryKind::SharedDRAM)
    return llvm::Error::success();
  unsigned Core = Owner.getNeuronCoreId();
  std::string Name = getRemoteLocationName(Target.getName(), Core);
  const MemoryLocation *L = User.getMemoryLocations().getMemlocByName(Name);
  if (!L)
    return llvm::Error::success();
  const std::optional<RemoteRef> &R = L->getRemote();
  if (!R || R->Core != Core || R->MemLoc != Target.getName() ||
      !sameStorageShape(*L, Target))
    return makeError("core " + llvm::Twine(User.getNeuronCoreId()) +
                     " already has a location '" + Name +
                     "' that is not the remote location of '" +
                     Target.getName() + "' on core " + llvm::Twine(Core));
  return llvm::Error::success();
}

uint64_t getFreshTensorId(const Module &M) {
  uint64_t Max = 0;
  bool Any = false;
  for (const auto &L : M.getMemoryLocations().locations()) {
    Max = std::max(Max, L->getTensorId());
    Any = true;
  }
  return Any ? Max + 1 : 0;
}

uint64_t RemoteLocations::takeTensorId(const Module &M) {
  auto [It, New] = NextTensorId.try_emplace(&M);
  if (New)
    It->second = getFreshTensorId(M);
  return It->second++;
}

MemoryLocation *RemoteLocations::getMemoryLocation(Module &User, Module &Owner,
                                                   MemoryLocation &Target,
                                                   bool IsWrite) {
  if (&User == &Owner)
    return &Target;
  if (Target.getKind() == MemoryKind::SharedDRAM) {
    MemoryLocation *Same =
        User.getMemoryLocations().getMemlocByName(Target.getName());
    assert(Same && "SharedDRAM location missing on a core");
    return Same;
  }
  if (IsWrite)
    Target.setIsWrittenByAnotherCore(true);
  MemoryLocation *&Slot = Cache[&User][&Target];
  if (Slot)
    return Slot;
  unsigned Core = Owner.getNeuronCoreId();
  std::string Name = getRemoteLocationName(Target.getName(), Core);
  if (MemoryLocation *Existing =
          User.getMemoryLocations().getMemlocByName(Name))
    return Slot = Existing;
  auto L = std::make_unique<MemoryLocation>(
      Name, takeTensorId(User), Target.getKind(), Target.getType(),
      Target.getNumPartitions(), Target.getBytesPerPartition());
  L->setRemote(Core, Target.getName().str());
  llvm::Expected<MemoryLocation *> Added =
      User.getMemoryLocations().add(std::move(L));
  // The name was checked free and the tensor id is fresh.
  if (!Added) {
    llvm::consumeError(Added.takeError());
    assert(false && "remote location could not be added");
    return nullptr;
  }
  return Slot = *Added;
}

AccessPattern RemoteLocations::createRemoteAP(const AccessPattern &OwnerAP,
                                              Module &User, Module &Owner,
                                              bool IsWrite) {
  AccessPattern AP = OwnerAP.clone();
  AP.setLocation(
      getMemoryLocation(User, Owner, *OwnerAP.getLocation(), IsWrite));
  return AP;
}

} // namespace loom::bir
