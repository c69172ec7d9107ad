//===- Emitter.h - Appending one core's BIR with its dependencies -*- C++ -*-===//
//
// The code generator writes each core's module straight through: an
// instruction is appended with its operands, and the emitter adds the
// dependencies (semaphores between engines) that its reads and writes need
// against every earlier access of the same bytes, so a program it builds is
// free of races by construction (docs/codegen.md, "Dependencies").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_CODEGEN_EMITTER_H
#define LOOM_LIB_CODEGEN_EMITTER_H

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Module.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::codegen {

/// Bytes per partition of one SB working tile (docs/codegen.md, "Tiles").
constexpr uint64_t SlotBytes = 8192;
/// Working tiles per data type and core: enough to overlap the loads of
/// the next chunk with the compute of this one.
constexpr unsigned SlotsPerType = 6;
/// PSUM tiles, one 2 KiB bank each (512 fp32 per partition).
constexpr unsigned PsumTiles = 4;
constexpr uint64_t PsumBankBytes = 2048;

class CoreEmitter {
public:
  explicit CoreEmitter(std::unique_ptr<bir::Module> M);

  bir::Module &module() { return *M; }
  std::unique_ptr<bir::Module> take() { return std::move(M); }
  unsigned core() const { return M->getNeuronCoreId(); }

  /// An instruction name unique in the module, from Base.
  std::string uniqueName(llvm::StringRef Base) {
    return unique(InstNames, Base);
  }
  /// A location name unique in the module, from Base.
  std::string uniqueLocationName(llvm::StringRef Base) {
    return unique(LocNames, Base);
  }
  /// Adds a location with the next tensor id.
  bir::MemoryLocation *addLocation(const std::string &Name, bir::MemoryKind K,
                                   bir::DataType T, unsigned Partitions,
                                   uint64_t Bytes);

  /// Appends I with these operands and the dependencies they need.
  bir::Instruction *emit(std::unique_ptr<bir::Instruction> I,
                         std::vector<bir::AccessPattern> Ins,
                         std::vector<bir::AccessPattern> Outs);
  /// Appends an instruction that orders everything: it waits for every
  /// outstanding access and every later access waits for it (a barrier).
  bir::Instruction *emitFence(std::unique_ptr<bir::Instruction> I);

  /// The instructions emitted so far (fences not counted).
  uint64_t numEmitted() const { return NextSeq; }

  /// The next DMA queue, round robin over the 16. emit() then moves a DMA
  /// to the queue where it would start first in an estimate of the
  /// schedule (by the cost model), ties going round robin.
  bir::Engine nextDma();
  /// The next SB working tile of type T (128 partitions x SlotBytes).
  bir::MemoryLocation *nextSlot(bir::DataType T);
  /// The next PSUM tile (128 partitions x one bank of fp32).
  bir::MemoryLocation *nextPsum();
  /// The SB bytes per partition the working tiles take.
  uint64_t sbBytesPerPartition() const;

  /// Starts a new block after the current one (Jump into it); returns it.
  bir::BasicBlock *current() { return BB; }
  void setCurrent(bir::BasicBlock *B) { BB = B; }

  /// Appends the final Return.
  void finish();

private:
  struct Access {
    uint64_t Lo, Hi;
    bir::Instruction *I;
    bool Write;
    /// I's place in emission order: a fence lists its dependencies in it,
    /// so the output does not depend on where the locations are in memory.
    uint64_t Seq;
  };
  void addDeps(bir::Instruction *I, const bir::AccessPattern &AP, bool Write);
  void record(bir::Instruction *I, const bir::AccessPattern &AP, bool Write);

  std::unique_ptr<bir::Module> M;
  bir::BasicBlock *BB;
  uint64_t NextTensorId = 0;
  uint64_t NextSeq = 0;
  unsigned NextDmaQueue = 0;
  /// An estimate of the schedule, by the cost model: when each engine is
  /// next free and when each instruction finishes (dependencies included,
  /// other cores' barriers not), for placing DMAs.
  double EngineFreeNs[256] = {};
  llvm::DenseMap<const bir::Instruction *, double> FinishNs;
  void schedule(bir::Instruction *I);
  struct NameSet {
    llvm::StringMap<unsigned> Counts;
    llvm::StringSet<> Used;
  };
  static std::string unique(NameSet &S, llvm::StringRef Base);
  NameSet InstNames, LocNames;
  /// Pending accesses by first byte, and the longest of them, so that
  /// finding the ones a range overlaps does not walk them all (a dot's
  /// thousands of tile loads from one operand).
  struct AccessMap {
    std::multimap<uint64_t, Access> ByLo;
    uint64_t MaxLen = 0;
  };
  /// A location's reads and writes apart: a read waits only for writes.
  struct LocAccesses {
    AccessMap Reads, Writes;
  };
  void overlapping(const AccessMap &M, uint64_t Lo, uint64_t Hi,
                   const bir::Instruction *I);
  llvm::DenseMap<const bir::MemoryLocation *, LocAccesses> Accesses;
  std::vector<std::pair<uint64_t, bir::Instruction *>> Found;
  /// Adds Dep to I's dependencies unless it is one already.
  void depend(bir::Instruction *I, bir::Instruction *Dep);
  /// The dependencies of DepSetOwner, once it has many: an instruction that
  /// reads what thousands of others wrote (the store of a dot's result)
  /// would otherwise search its list once per dependency.
  llvm::DenseSet<const bir::Instruction *> DepSet;
  const bir::Instruction *DepSetOwner = nullptr;
  /// The last fence: every access after it waits for it.
  bir::Instruction *LastFence = nullptr;
  std::map<bir::DataType, std::pair<std::vector<bir::MemoryLocation *>, unsigned>>
      Slots;
  std::vector<bir::MemoryLocation *> Psums;
  unsigned NextPsumTile = 0;
};

} // namespace loom::codegen

#endif
