#include "loom/bir/ir/MemoryLocation.h"

#include "loom/support/Error.h"

namespace loom::bir {

std::string getRemoteLocationName(llvm::StringRef Name, unsigned Core) {
  return (Name + "_remote_" + llvm::Twine(Core)).str();
}

llvm::Expected<MemoryLocation *>
MemoryLocationSet::add(std::unique_ptr<MemoryLocation> Loc) {
  if (ByName.count(Loc->getName()))
    return makeError("duplicate memory location name '" + Loc->getName() + "'");
  if (ByTensorId.count(Loc->getTensorId()))
    return makeError("tensor id " + llvm::Twine(Loc->getTensorId()) + " of '" +
                     Loc->getName() + "' is already used by '" +
                     ByTensorId[Loc->getTensorId()]->getName() + "'");
  MemoryLocation *L = Loc.get();
  ByName[L->getName()] = L;
  ByTensorId[L->getTensorId()] = L;
  Locations.push_back(std::move(Loc));
  return L;
}

MemoryLocation *MemoryLocationSet::getMemlocByName(llvm::StringRef Name) const {
  return ByName.lookup(Name);
}

MemoryLocation *
MemoryLocationSet::getMemlocByTensorId(uint64_t TensorId) const {
  auto It = ByTensorId.find(TensorId);
  return It == ByTensorId.end() ? nullptr : It->second;
}

bool MemoryLocationSet::contains(const MemoryLocation *Loc) const {
  return Loc && getMemlocByName(Loc->getName()) == Loc;
}

} // namespace loom::bir
