//===- RaceDetector.h - Happens-before races over byte intervals -*- C++ -*-===//
//
// The simulator's race checker (docs/race-detection.md). Every engine of every
// core is a thread; the simulator keeps one vector clock per thread, joins the
// clocks along the happens-before edges (engine order, dependencies, barriers,
// completions, semaphores, collective rendezvous) and reports each memory
// access here. Two accesses to overlapping bytes of one storage, at least one
// a write, whose clocks are not ordered, are a race.
//
// Accesses are decomposed into partition ranges times byte runs, and the
// shadow state is an interval map of such runs, so the cost grows with the
// number of accesses and runs, never with the bytes touched.
//
// Contract with the caller (the simulator): the clock an access is reported
// with has, in its own thread's component, a value that no earlier execution
// on that thread reported (tick the component once per instruction
// execution), and every other component comes from joining clocks published
// by the instructions this one is ordered after. The accesses of one
// instruction execution may all use the same clock.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_SIM_RACEDETECTOR_H
#define LOOM_LIB_BIR_SIM_RACEDETECTOR_H

#include "loom/bir/ir/AccessPattern.h"
#include "loom/bir/ir/Instruction.h"
#include "loom/bir/ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace loom::bir::sim {

/// A dense vector clock, one component per thread; thread = core *
/// ThreadsPerCore + engine (threadOf).
class VectorClock {
public:
  /// Engines per core: PE, ACT, DVE, POOL, SP and the 16 DMA queues.
  static constexpr unsigned ThreadsPerCore =
      static_cast<unsigned>(Engine::DMALast) + 1;
  static unsigned threadOf(unsigned Core, Engine Eng) {
    return Core * ThreadsPerCore + static_cast<unsigned>(Eng);
  }

  VectorClock() = default;
  explicit VectorClock(unsigned NumThreads) : C(NumThreads, 0) {}

  unsigned size() const { return static_cast<unsigned>(C.size()); }
  uint64_t get(unsigned T) const { return C[T]; }
  void set(unsigned T, uint64_t V) { C[T] = V; }
  /// Adds one to thread T's component.
  void tick(unsigned T) { ++C[T]; }
  /// Component-wise maximum with Other (same size).
  void join(const VectorClock &Other);
  /// True when every component is <= Later's: this clock's events all happen
  /// before (or are) Later's.
  bool happensBefore(const VectorClock &Later) const;

  friend bool operator==(const VectorClock &A, const VectorClock &B) {
    return A.C == B.C;
  }

private:
  std::vector<uint64_t> C;
};

/// Who accessed: the instruction, its core and engine, and which execution of
/// it (1 for the first).
struct AccessSite {
  unsigned Core = 0;
  Engine Eng = Engine::PE;
  const Instruction *Inst = nullptr;
  uint64_t Execution = 0;
  /// The device of a launch; -1 outside launches (then not printed).
  int Device = -1;
};

/// Two unordered accesses to overlapping bytes, First the earlier reported.
/// The bytes [BeginByte, EndByte) are the first overlap found, in partitions
/// [Partition, Partition + NumPartitions).
struct RaceReport {
  AccessSite First, Second;
  bool FirstWrite = false, SecondWrite = false;
  std::string Storage;
  unsigned Partition = 0;
  unsigned NumPartitions = 1;
  uint64_t BeginByte = 0, EndByte = 0;
  /// Set when one of the accesses had too many runs and was widened to its
  /// bounding byte range (docs/race-detection.md, "Limits").
  bool Approximate = false;

  /// One line, e.g. "write-write race on 'st_out' partition 0 bytes [0, 512):
  /// 'store' (core 0, DMA3, execution 1, write) and 'store' (core 1, DMA3,
  /// execution 1, write) are not ordered".
  std::string describe() const;
};

class RaceDetector {
public:
  /// Accesses with more byte runs per partition than this are widened to
  /// their bounding byte range.
  static constexpr uint64_t MaxRunsPerAccess = uint64_t(1) << 20;

  explicit RaceDetector(unsigned NumThreads, unsigned MaxReports = 100);
  ~RaceDetector();
  RaceDetector(const RaceDetector &) = delete;
  RaceDetector &operator=(const RaceDetector &) = delete;

  /// One access of the elements AP selects. StorageId names one physical
  /// buffer (one core's location, or a SharedDRAM location of the logical
  /// core); StorageName is kept from the first access and used in reports.
  /// AP's location is not looked at: only its partitions, offset, pattern and
  /// data type. Thread is the accessing engine's thread, VC its clock.
  void access(unsigned StorageId, llvm::StringRef StorageName,
              const AccessPattern &AP, bool IsWrite, const AccessSite &Site,
              unsigned Thread, const VectorClock &VC);

  /// The same for the bytes [BeginByte, EndByte) of partitions
  /// [StartPartition, StartPartition + NumPartitions).
  void accessRange(unsigned StorageId, llvm::StringRef StorageName,
                   unsigned StartPartition, unsigned NumPartitions,
                   uint64_t BeginByte, uint64_t EndByte, bool IsWrite,
                   const AccessSite &Site, unsigned Thread,
                   const VectorClock &VC);

  /// The reports kept (at most MaxReports), in the order found; each distinct
  /// race (pair of instructions, storage) once.
  llvm::ArrayRef<RaceReport> races() const { return Reports; }
  /// Distinct races found, including those beyond MaxReports.
  uint64_t numRaces() const { return NumDistinctRaces; }
  bool hasRaces() const { return NumDistinctRaces != 0; }

  /// Forgets every access and report (the same detector for a new run).
  void reset();

  /// Size figures, for tests and benchmarks.
  struct Stats {
    uint64_t Accesses = 0;       ///< calls of access/accessRange
    uint64_t Runs = 0;           ///< byte runs processed
    uint64_t ApproximatedAccesses = 0; ///< widened to their bounding range
    uint64_t Segments = 0;       ///< byte intervals currently stored
    uint64_t Cells = 0;          ///< (byte interval, partition range) cells
    uint64_t Reads = 0;          ///< read epochs stored over all cells
  };
  Stats stats() const;

  /// A half-open byte range [Begin, End) of one partition.
  struct Run {
    uint64_t Begin, End;
  };
  // Implementation types, defined in RaceDetector.cpp.
  struct Shadow;    ///< one storage's interval map
  struct NewAccess; ///< the access being checked

private:

  Shadow &shadowFor(unsigned StorageId, llvm::StringRef StorageName);
  void applyRuns(Shadow &S, unsigned PBegin, unsigned PEnd,
                 llvm::ArrayRef<Run> Runs, const NewAccess &A);
  void report(const Shadow &S, const AccessSite &First, bool FirstWrite,
              const NewAccess &A, unsigned PBegin, unsigned PEnd,
              uint64_t Begin, uint64_t End, bool FirstApproximate);

  unsigned NumThreads;
  unsigned MaxReports;
  llvm::DenseMap<unsigned, std::unique_ptr<Shadow>> Shadows;
  std::vector<RaceReport> Reports;
  uint64_t NumDistinctRaces = 0;
  /// (first instruction, second instruction, storage) already reported.
  llvm::DenseSet<std::tuple<const Instruction *, const Instruction *,
                            unsigned>>
      Reported;
  std::vector<Run> Scratch;
  uint64_t NumAccesses = 0, NumRuns = 0, NumApproximated = 0;
};

/// The byte runs AP touches in each of its partitions, sorted, disjoint and
/// not adjacent, appended to Out (cleared first). Returns false, leaving the
/// bounding range as the only run, when there would be more than MaxRuns.
bool decomposeAccessPattern(const AccessPattern &AP,
                            std::vector<RaceDetector::Run> &Out,
                            uint64_t MaxRuns = RaceDetector::MaxRunsPerAccess);

} // namespace loom::bir::sim

#endif
