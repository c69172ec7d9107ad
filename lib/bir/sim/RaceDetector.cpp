//===- RaceDetector.cpp - Happens-before races over byte intervals --------===//
//
// The shadow state of one storage is an interval map keyed by byte: each
// segment [Begin, End) holds a short list of partition ranges, and each
// (segment, partition range) cell holds the last write and the reads since
// it, every one as an epoch (thread, clock) with its site. A read epoch is
// dropped once a later read is ordered after it, so a cell holds at most one
// read per thread, and usually one (FastTrack's read epoch; the list is its
// read vector clock, kept sparse). docs/race-detection.md has the algorithm.
//
//===----------------------------------------------------------------------===//
#include "RaceDetector.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>

using namespace loom::bir;
using namespace loom::bir::sim;

//===----------------------------------------------------------------------===//
// VectorClock
//===----------------------------------------------------------------------===//

void VectorClock::join(const VectorClock &Other) {
  assert(Other.C.size() == C.size() && "clocks of different sizes");
  uint64_t *D = C.data();
  const uint64_t *S = Other.C.data();
  for (size_t I = 0, N = C.size(); I < N; ++I)
    D[I] = D[I] < S[I] ? S[I] : D[I];
}

bool VectorClock::happensBefore(const VectorClock &Later) const {
  assert(Later.C.size() == C.size() && "clocks of different sizes");
  for (size_t I = 0, N = C.size(); I < N; ++I)
    if (C[I] > Later.C[I])
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Decomposition of an access pattern into byte runs
//===----------------------------------------------------------------------===//

namespace {
using Run = RaceDetector::Run;
using u128 = unsigned __int128;
using i128 = __int128;

/// Offsets {0, Stride, ..., Stride * (Count - 1)}.
struct Progression {
  uint64_t Stride;
  uint64_t Count;
};
} // namespace

/// Sorts, then merges overlapping and adjacent runs in place.
static void normalizeRuns(std::vector<Run> &Runs, bool Sorted) {
  if (!Sorted)
    std::sort(Runs.begin(), Runs.end(),
              [](const Run &A, const Run &B) { return A.Begin < B.Begin; });
  size_t Out = 0;
  for (size_t I = 0; I < Runs.size(); ++I) {
    if (Out && Runs[I].Begin <= Runs[Out - 1].End) {
      Runs[Out - 1].End = std::max(Runs[Out - 1].End, Runs[I].End);
      continue;
    }
    Runs[Out++] = Runs[I];
  }
  Runs.resize(Out);
}

bool loom::bir::sim::decomposeAccessPattern(const AccessPattern &AP,
                                            std::vector<Run> &Out,
                                            uint64_t MaxRuns) {
  Out.clear();
  const uint64_t Size = getDataTypeSize(AP.getType());
  // The set of bytes does not depend on the order of the elements, so every
  // dimension becomes a positive step in bytes: a negative step walks the
  // same elements as its mirror from the lowest one, a zero step or a count
  // of 1 adds nothing.
  i128 Base = AP.getOffset();
  i128 Extent = Size; // bytes from Base to one past the highest byte
  llvm::SmallVector<Progression, 8> Dims;
  for (const PatternDim &D : AP.getPattern()) {
    if (D.Count == 0)
      return true; // no element (the verifier rejects it)
    if (D.Count == 1 || D.Step == 0)
      continue;
    i128 Step = i128(D.Step) * Size;
    i128 Span = Step * i128(D.Count - 1);
    if (Step < 0) {
      Base += Span;
      Step = -Step;
      Span = -Span;
    }
    Extent += Span;
    if (Step > i128(UINT64_MAX)) {
      // Only an out-of-bounds pattern gets here; give it everything.
      Out.push_back({0, UINT64_MAX});
      return false;
    }
    Dims.push_back({uint64_t(Step), D.Count});
  }
  if (Base < 0 || Base + Extent > i128(UINT64_MAX)) {
    Out.push_back({0, UINT64_MAX});
    return false;
  }
  const uint64_t Lo = uint64_t(Base);
  const uint64_t Hi = uint64_t(Base + Extent);

  // Smallest step first; equal steps fold into one progression.
  std::sort(Dims.begin(), Dims.end(),
            [](const Progression &A, const Progression &B) {
              return A.Stride < B.Stride;
            });
  // The innermost contiguous run: a dimension whose step is at most the run
  // so far extends it to Run + Step * (Count - 1) bytes.
  uint64_t RunBytes = Size;
  size_t I = 0;
  for (; I < Dims.size() && Dims[I].Stride <= RunBytes; ++I)
    RunBytes += Dims[I].Stride * (Dims[I].Count - 1);
  // The outer dimensions place copies of that run. A dimension whose step is
  // a multiple k of the previous progression's stride, with k at most its
  // count, extends that progression ({0..n-1} * g + {0..c-1} * k * g is
  // {0..n-1+k(c-1)} * g); the others multiply the number of runs.
  llvm::SmallVector<Progression, 8> Outer;
  for (; I < Dims.size(); ++I) {
    const Progression &D = Dims[I];
    if (!Outer.empty()) {
      Progression &P = Outer.back();
      if (D.Stride % P.Stride == 0 && D.Stride / P.Stride <= P.Count) {
        P.Count += (D.Stride / P.Stride) * (D.Count - 1);
        continue;
      }
    }
    Outer.push_back(D);
  }
  u128 NumRuns = 1;
  for (const Progression &P : Outer) {
    NumRuns *= P.Count;
    if (NumRuns > MaxRuns) {
      Out.push_back({Lo, Hi});
      return false;
    }
  }
  Out.reserve(size_t(NumRuns));
  // Odometer over the outer progressions, the first (smallest stride) the
  // fastest.
  llvm::SmallVector<uint64_t, 8> Idx(Outer.size(), 0);
  uint64_t Start = Lo;
  bool Sorted = true;
  while (true) {
    if (!Out.empty() && Start < Out.back().Begin)
      Sorted = false;
    Out.push_back({Start, Start + RunBytes});
    size_t K = 0;
    for (; K < Outer.size(); ++K) {
      if (++Idx[K] < Outer[K].Count) {
        Start += Outer[K].Stride;
        break;
      }
      Start -= Outer[K].Stride * (Outer[K].Count - 1);
      Idx[K] = 0;
    }
    if (K == Outer.size())
      break;
  }
  normalizeRuns(Out, Sorted);
  return true;
}

//===----------------------------------------------------------------------===//
// Shadow state
//===----------------------------------------------------------------------===//

namespace {
/// One recorded access: its epoch and where it came from.
struct Access {
  uint64_t Clock = 0;
  unsigned Thread = 0;
  bool Approximate = false;
  AccessSite Site;

  bool sameAs(const Access &O) const {
    return Clock == O.Clock && Thread == O.Thread &&
           Approximate == O.Approximate && Site.Inst == O.Site.Inst &&
           Site.Execution == O.Site.Execution && Site.Core == O.Site.Core &&
           Site.Eng == O.Site.Eng;
  }
};

/// The last write and the reads since it, of the bytes of one cell. Reads
/// are sorted by thread, one per thread at most.
struct Cell {
  bool HasWrite = false;
  Access Write;
  llvm::SmallVector<Access, 1> Reads;

  bool sameAs(const Cell &O) const {
    if (HasWrite != O.HasWrite || Reads.size() != O.Reads.size())
      return false;
    if (HasWrite && !Write.sameAs(O.Write))
      return false;
    for (size_t I = 0; I < Reads.size(); ++I)
      if (!Reads[I].sameAs(O.Reads[I]))
        return false;
    return true;
  }
};

/// Partitions [PBegin, PEnd) of a segment.
struct PartEntry {
  unsigned PBegin, PEnd;
  Cell C;
};

struct Segment {
  uint64_t End;
  /// Sorted, disjoint; partitions not listed were never accessed.
  llvm::SmallVector<PartEntry, 1> Parts;

  bool sameAs(const Segment &O) const {
    if (Parts.size() != O.Parts.size())
      return false;
    for (size_t I = 0; I < Parts.size(); ++I)
      if (Parts[I].PBegin != O.Parts[I].PBegin ||
          Parts[I].PEnd != O.Parts[I].PEnd || !Parts[I].C.sameAs(O.Parts[I].C))
        return false;
    return true;
  }
};
} // namespace

struct RaceDetector::Shadow {
  unsigned Id;
  std::string Name;
  /// Keyed by the segment's first byte; segments are disjoint.
  std::map<uint64_t, Segment> Map;
};

struct RaceDetector::NewAccess {
  unsigned StorageId;
  bool IsWrite;
  Access Rec;
  const VectorClock *VC;

  /// A recorded access happens before this one.
  bool after(const Access &Old) const {
    return Old.Clock <= VC->get(Old.Thread);
  }
};

RaceDetector::RaceDetector(unsigned NumThreads, unsigned MaxReports)
    : NumThreads(NumThreads), MaxReports(MaxReports) {}

RaceDetector::~RaceDetector() = default;

void RaceDetector::reset() {
  Shadows.clear();
  Reports.clear();
  Reported.clear();
  NumDistinctRaces = 0;
  NumAccesses = NumRuns = NumApproximated = 0;
}

RaceDetector::Stats RaceDetector::stats() const {
  Stats S;
  S.Accesses = NumAccesses;
  S.Runs = NumRuns;
  S.ApproximatedAccesses = NumApproximated;
  for (const auto &KV : Shadows) {
    S.Segments += KV.second->Map.size();
    for (const auto &Seg : KV.second->Map) {
      S.Cells += Seg.second.Parts.size();
      for (const PartEntry &E : Seg.second.Parts)
        S.Reads += E.C.Reads.size();
    }
  }
  return S;
}

RaceDetector::Shadow &RaceDetector::shadowFor(unsigned StorageId,
                                              llvm::StringRef StorageName) {
  std::unique_ptr<Shadow> &S = Shadows[StorageId];
  if (!S) {
    S = std::make_unique<Shadow>();
    S->Id = StorageId;
    S->Name = StorageName.str();
  }
  return *S;
}

void RaceDetector::report(const Shadow &S, const AccessSite &First,
                          bool FirstWrite, const NewAccess &A, unsigned PBegin,
                          unsigned PEnd, uint64_t Begin, uint64_t End,
                          bool FirstApproximate) {
  if (!Reported.insert({First.Inst, A.Rec.Site.Inst, S.Id}).second)
    return;
  ++NumDistinctRaces;
  if (Reports.size() >= MaxReports)
    return;
  RaceReport R;
  R.First = First;
  R.Second = A.Rec.Site;
  R.FirstWrite = FirstWrite;
  R.SecondWrite = A.IsWrite;
  R.Storage = S.Name;
  R.Partition = PBegin;
  R.NumPartitions = PEnd - PBegin;
  R.BeginByte = Begin;
  R.EndByte = End;
  R.Approximate = FirstApproximate || A.Rec.Approximate;
  Reports.push_back(std::move(R));
}

/// Checks A against cell C (the bytes [Begin, End) of partitions
/// [PBegin, PEnd)), reporting conflicts through Report, then records A.
template <typename ReportFn>
static void visitCell(Cell &C, const RaceDetector::NewAccess &A,
                      ReportFn &&Report) {
  if (C.HasWrite && !A.after(C.Write))
    Report(C.Write, /*FirstWrite=*/true);
  if (A.IsWrite) {
    for (const Access &R : C.Reads)
      if (!A.after(R))
        Report(R, /*FirstWrite=*/false);
    C.HasWrite = true;
    C.Write = A.Rec;
    C.Reads.clear();
    return;
  }
  // A read: drop the reads ordered before it (a later access ordered after
  // A is ordered after them too), then add A in thread order.
  size_t Out = 0;
  size_t InsertAt = SIZE_MAX;
  for (size_t I = 0; I < C.Reads.size(); ++I) {
    if (A.after(C.Reads[I]))
      continue;
    if (InsertAt == SIZE_MAX && C.Reads[I].Thread > A.Rec.Thread)
      InsertAt = Out;
    C.Reads[Out++] = C.Reads[I];
  }
  C.Reads.resize(Out);
  if (InsertAt == SIZE_MAX)
    C.Reads.push_back(A.Rec);
  else
    C.Reads.insert(C.Reads.begin() + InsertAt, A.Rec);
}

static Cell freshCell(const RaceDetector::NewAccess &A) {
  Cell C;
  if (A.IsWrite) {
    C.HasWrite = true;
    C.Write = A.Rec;
  } else {
    C.Reads.push_back(A.Rec);
  }
  return C;
}

void RaceDetector::applyRuns(Shadow &S, unsigned P0, unsigned P1,
                             llvm::ArrayRef<Run> Runs, const NewAccess &A) {
  auto &Map = S.Map;
  const Cell Fresh = freshCell(A);
  llvm::SmallVector<PartEntry, 4> NewParts;

  // Updates the partitions [P0, P1) of segment Seg = [SB, Seg.End).
  auto UpdateSegment = [&](uint64_t SB, Segment &Seg) {
    auto ReportCell = [&](unsigned PB, unsigned PE) {
      return [&, PB, PE](const Access &Old, bool FirstWrite) {
        report(S, Old.Site, FirstWrite, A, PB, PE, SB, Seg.End,
               Old.Approximate);
      };
    };
    // Fast path: the segment is exactly the accessed partitions.
    if (Seg.Parts.size() == 1 && Seg.Parts[0].PBegin == P0 &&
        Seg.Parts[0].PEnd == P1) {
      visitCell(Seg.Parts[0].C, A, ReportCell(P0, P1));
      return;
    }
    NewParts.clear();
    unsigned Cur = P0; // first partition of [P0, P1) not yet placed
    for (PartEntry &E : Seg.Parts) {
      if (E.PEnd <= P0 || E.PBegin >= P1) {
        if (E.PBegin >= P1 && Cur < P1) {
          NewParts.push_back({Cur, P1, Fresh});
          Cur = P1;
        }
        NewParts.push_back(std::move(E));
        continue;
      }
      if (E.PBegin < P0)
        NewParts.push_back({E.PBegin, P0, E.C});
      if (Cur < E.PBegin)
        NewParts.push_back({Cur, E.PBegin, Fresh});
      unsigned IB = std::max(E.PBegin, P0), IE = std::min(E.PEnd, P1);
      Cell Inside = E.C;
      visitCell(Inside, A, ReportCell(IB, IE));
      NewParts.push_back({IB, IE, std::move(Inside)});
      if (E.PEnd > P1)
        NewParts.push_back({P1, E.PEnd, std::move(E.C)});
      Cur = IE;
    }
    if (Cur < P1)
      NewParts.push_back({Cur, P1, Fresh});
    // Merge neighbours that became equal.
    Seg.Parts.clear();
    for (PartEntry &E : NewParts) {
      if (!Seg.Parts.empty() && Seg.Parts.back().PEnd == E.PBegin &&
          Seg.Parts.back().C.sameAs(E.C)) {
        Seg.Parts.back().PEnd = E.PEnd;
        continue;
      }
      Seg.Parts.push_back(std::move(E));
    }
  };

  auto NewSegment = [&](uint64_t B, uint64_t E) {
    Segment Seg;
    Seg.End = E;
    Seg.Parts.push_back({P0, P1, Fresh});
    return Map.emplace_hint(Map.lower_bound(B), B, std::move(Seg));
  };

  for (const Run &R : Runs) {
    if (R.Begin >= R.End)
      continue;
    // The first segment that ends after R.Begin.
    auto It = Map.upper_bound(R.Begin);
    if (It != Map.begin()) {
      auto Prev = std::prev(It);
      if (Prev->second.End > R.Begin)
        It = Prev;
    }
    uint64_t FirstKey = R.Begin;
    if (It != Map.end() && It->first < R.Begin)
      FirstKey = It->first;
    uint64_t Cur = R.Begin;
    while (Cur < R.End) {
      if (It == Map.end() || It->first >= R.End) {
        It = std::next(NewSegment(Cur, R.End));
        Cur = R.End;
        break;
      }
      if (It->first > Cur) {
        uint64_t GapEnd = It->first;
        NewSegment(Cur, GapEnd);
        Cur = GapEnd;
        continue;
      }
      if (It->first < Cur) { // split off [It->first, Cur)
        Segment Tail = It->second;
        It->second.End = Cur;
        It = Map.emplace_hint(std::next(It), Cur, std::move(Tail));
      }
      if (It->second.End > R.End) { // split off [R.End, End)
        Segment Tail = It->second;
        It->second.End = R.End;
        Map.emplace_hint(std::next(It), R.End, std::move(Tail));
      }
      UpdateSegment(It->first, It->second);
      Cur = It->second.End;
      ++It;
    }
    // Merge equal neighbours from the segment before the run to the one
    // after it.
    auto M = Map.find(FirstKey);
    if (M == Map.end())
      M = Map.lower_bound(FirstKey);
    if (M != Map.begin())
      --M;
    while (M != Map.end() && M->first <= R.End) {
      auto Next = std::next(M);
      if (Next == Map.end())
        break;
      if (M->second.End == Next->first && M->second.sameAs(Next->second)) {
        M->second.End = Next->second.End;
        Map.erase(Next);
        continue;
      }
      M = Next;
    }
  }
}

void RaceDetector::access(unsigned StorageId, llvm::StringRef StorageName,
                          const AccessPattern &AP, bool IsWrite,
                          const AccessSite &Site, unsigned Thread,
                          const VectorClock &VC) {
  assert(VC.size() == NumThreads && Thread < NumThreads && "bad thread");
  ++NumAccesses;
  bool Exact = decomposeAccessPattern(AP, Scratch);
  if (!Exact)
    ++NumApproximated;
  NumRuns += Scratch.size();
  if (Scratch.empty() || AP.getNumPartitions() == 0)
    return;
  NewAccess A{StorageId, IsWrite, {VC.get(Thread), Thread, !Exact, Site}, &VC};
  Shadow &S = shadowFor(StorageId, StorageName);
  unsigned P0 = AP.getStartPartition();
  applyRuns(S, P0, P0 + AP.getNumPartitions(), Scratch, A);
}

void RaceDetector::accessRange(unsigned StorageId, llvm::StringRef StorageName,
                               unsigned StartPartition, unsigned NumPartitions,
                               uint64_t BeginByte, uint64_t EndByte,
                               bool IsWrite, const AccessSite &Site,
                               unsigned Thread, const VectorClock &VC) {
  assert(VC.size() == NumThreads && Thread < NumThreads && "bad thread");
  ++NumAccesses;
  ++NumRuns;
  if (BeginByte >= EndByte || NumPartitions == 0)
    return;
  NewAccess A{StorageId, IsWrite, {VC.get(Thread), Thread, false, Site}, &VC};
  Shadow &S = shadowFor(StorageId, StorageName);
  Run R{BeginByte, EndByte};
  applyRuns(S, StartPartition, StartPartition + NumPartitions, R, A);
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

static void printSite(llvm::raw_ostream &OS, const AccessSite &S, bool Write) {
  OS << '\'' << (S.Inst ? S.Inst->getName() : llvm::StringRef("?")) << "' (";
  if (S.Device >= 0)
    OS << "device " << S.Device << ' ';
  OS << "core " << S.Core << ", " << enumName(S.Eng) << ", execution "
     << S.Execution << ", " << (Write ? "write" : "read") << ')';
}

std::string RaceReport::describe() const {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  OS << (FirstWrite ? "write" : "read") << '-'
     << (SecondWrite ? "write" : "read") << " race on '" << Storage << "' ";
  if (NumPartitions == 1)
    OS << "partition " << Partition;
  else
    OS << "partitions [" << Partition << ", " << Partition + NumPartitions
       << ')';
  OS << " bytes [" << BeginByte << ", " << EndByte << "): ";
  printSite(OS, First, FirstWrite);
  OS << " and ";
  printSite(OS, Second, SecondWrite);
  OS << " are not ordered";
  if (Approximate)
    OS << " (an access had more than " << RaceDetector::MaxRunsPerAccess
       << " byte runs and was widened to its bounding range)";
  return OS.str();
}
