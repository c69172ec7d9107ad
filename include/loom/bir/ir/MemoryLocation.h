//===- MemoryLocation.h - Named tensors in SBUF, PSUM or DRAM ---*- C++ -*-===//
//
// A memory location is a tensor's storage: a number of partitions (the rows
// the engines process in parallel) times a number of bytes per partition.
// Passes find a location either by name (names are what survive the JSON
// clone between cores) or by tensor id (the same tensor on another core).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_MEMORYLOCATION_H
#define LOOM_BIR_IR_MEMORYLOCATION_H

#include "loom/bir/ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace loom::bir {

/// The memory a remote location stands for: location MemLoc of core Core's
/// module (same subgraph).
struct RemoteRef {
  unsigned Core;
  std::string MemLoc;
};

/// "<Name>_remote_<Core>", the name of the location through which a core
/// reaches location Name of core Core (neuronx-cc mints the same suffix).
std::string getRemoteLocationName(llvm::StringRef Name, unsigned Core);

class MemoryLocation {
public:
  MemoryLocation(std::string Name, uint64_t TensorId, MemoryKind Kind,
                 DataType Type, unsigned NumPartitions,
                 uint64_t BytesPerPartition)
      : Name(std::move(Name)), TensorId(TensorId), Kind(Kind), Type(Type),
        NumPartitions(NumPartitions), BytesPerPartition(BytesPerPartition) {}

  llvm::StringRef getName() const { return Name; }
  uint64_t getTensorId() const { return TensorId; }
  MemoryKind getKind() const { return Kind; }
  DataType getType() const { return Type; }
  unsigned getNumPartitions() const { return NumPartitions; }
  uint64_t getBytesPerPartition() const { return BytesPerPartition; }

  /// Set on a location that a peer core writes, so allocation keeps the
  /// cross-core writer in mind.
  bool isWrittenByAnotherCore() const { return WrittenByAnotherCore; }
  void setIsWrittenByAnotherCore(bool V) { WrittenByAnotherCore = V; }

  bool isAllocated() const { return Allocated; }
  void setIsAllocated(bool V) { Allocated = V; }

  /// Set on a location that names another core's memory: it has no storage
  /// of its own, its bytes are those of the referenced location.
  const std::optional<RemoteRef> &getRemote() const { return Remote; }
  bool isRemote() const { return Remote.has_value(); }
  void setRemote(unsigned Core, std::string MemLoc) {
    Remote = RemoteRef{Core, std::move(MemLoc)};
  }

  /// The bytes a DRAM or SharedDRAM location holds when the program starts
  /// (a constant), partition after partition: exactly NumPartitions *
  /// BytesPerPartition of them, or none (empty) for a location without.
  llvm::ArrayRef<uint8_t> getInitialData() const { return InitialData; }
  bool hasInitialData() const { return !InitialData.empty(); }
  void setInitialData(std::vector<uint8_t> Bytes) {
    InitialData = std::move(Bytes);
  }

private:
  std::string Name;
  uint64_t TensorId;
  MemoryKind Kind;
  DataType Type;
  unsigned NumPartitions;
  uint64_t BytesPerPartition;
  bool WrittenByAnotherCore = false;
  bool Allocated = false;
  std::optional<RemoteRef> Remote;
  std::vector<uint8_t> InitialData;
};

/// The locations of one module; names and tensor ids are unique within it.
class MemoryLocationSet {
public:
  using Storage = std::vector<std::unique_ptr<MemoryLocation>>;

  /// Takes ownership; fails if the name or the tensor id is already used.
  llvm::Expected<MemoryLocation *> add(std::unique_ptr<MemoryLocation> Loc);

  MemoryLocation *getMemlocByName(llvm::StringRef Name) const;
  MemoryLocation *getMemlocByTensorId(uint64_t TensorId) const;

  /// True if Loc is owned by this set.
  bool contains(const MemoryLocation *Loc) const;

  const Storage &locations() const { return Locations; }
  size_t size() const { return Locations.size(); }

private:
  Storage Locations;
  llvm::StringMap<MemoryLocation *> ByName;
  std::unordered_map<uint64_t, MemoryLocation *> ByTensorId;
};

} // namespace loom::bir

#endif
