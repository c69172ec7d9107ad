//===- RemoteLocations.h - Reaching a peer core's memory --------*- C++ -*-===//
//
// A core reads or writes another core's memory through a remote location
// of its own module, "<NAME>_remote_<C>" (docs/bir.md, "Remote
// locations"). RemoteLocations mints them on demand, one per (user core,
// peer location), caches them per core, and marks the peer's location
// written_by_another_core when the access is a write (neuronx-cc's
// getMemoryLocation / createRemoteAP and its vnc_remote_addr_map).
//
// SharedDRAM needs no remote location: the same name is the same bytes on
// every core, so an access goes to the user's own location of that name.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_REMOTELOCATIONS_H
#define LOOM_BIR_PASSES_REMOTELOCATIONS_H

#include "loom/bir/ir/AccessPattern.h"
#include "loom/bir/ir/Module.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <map>
#include <vector>

namespace loom::bir {

/// The cores of Group other than Self, in group order: the peers a core
/// exchanges with (neuronx-cc's getRemoteCores, over a collective's group).
std::vector<unsigned> getRemoteCores(llvm::ArrayRef<unsigned> Group,
                                     unsigned Self);

/// Checks that User could receive a remote location for Target of module
/// Owner: a location of that name is either absent or already the right
/// remote location.
llvm::Error checkRemoteNameFree(const Module &User, const Module &Owner,
                                const MemoryLocation &Target);

class RemoteLocations {
public:
  /// The location of User through which it reaches Target, a location of
  /// module Owner: Target itself when User is Owner, User's location of the
  /// same name for SharedDRAM, otherwise the remote location, minted on
  /// first use. IsWrite marks Target written_by_another_core.
  /// checkRemoteNameFree must have accepted (User, Owner, Target).
  MemoryLocation *getMemoryLocation(Module &User, Module &Owner,
                                    MemoryLocation &Target, bool IsWrite);

  /// OwnerAP, an access pattern of module Owner, rebound to the location of
  /// User that reaches the same bytes.
  AccessPattern createRemoteAP(const AccessPattern &OwnerAP, Module &User,
                               Module &Owner, bool IsWrite);

  /// A tensor id unused in M: its largest plus one the first time, then one
  /// more at every call (for the locations the lowering adds to M).
  uint64_t takeTensorId(const Module &M);

private:
  llvm::DenseMap<const Module *, uint64_t> NextTensorId;
  /// Per user module: peer location -> the user's remote location.
  llvm::DenseMap<const Module *,
                 llvm::DenseMap<const MemoryLocation *, MemoryLocation *>>
      Cache;
};

/// The largest tensor id of M plus one.
uint64_t getFreshTensorId(const Module &M);

} // namespace loom::bir

#endif
