//===- Equivalence.cpp - Compare a program before and after lowering ------===//
//
// Both programs run on the same seeded inputs (the seed depends only on the
// seed, the location's name and its core, so the locations the lowering
// adds do not shift the others' values). Observable are the non-remote
// locations of BEFORE, on every core; locations only AFTER has are scratch.
// docs/simulator.md, "Equivalence", gives the tolerances.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/sim/Simulator.h"

#include "Semantics.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace loom::bir::sim {

namespace {

struct Tolerance {
  double Rel, Abs;
};

/// Per data type, used when more than two cores fold a reduction (the
/// lowering may then reduce in another order than the reference).
Tolerance toleranceOf(DataType T) {
  switch (T) {
  case DataType::FP32: return {1e-5, 1e-6};
  case DataType::FP16: return {4e-3, 1e-4};
  case DataType::BF16: return {3.2e-2, 1e-2};
  case DataType::FP8E4M3: return {0.25, 0.0625};
  case DataType::FP8E5M2: return {0.5, 0.125};
  default: return {0, 0};
  }
}

std::string where(const LocationState &L, unsigned Core) {
  return L.Core ? ("core " + llvm::Twine(Core)).str()
                : ("core " + llvm::Twine(Core) + " (SharedDRAM)").str();
}

} // namespace

llvm::Error checkEquivalence(const Program &Before, const Program &After,
                             const SimOptions &Opts, llvm::raw_ostream &Log) {
  SimOptions BO = Opts, AO = Opts;
  BO.FileName = Opts.FileName + " (before)";
  AO.FileName = Opts.FileName + " (after)";
  // The report of AFTER attributes lowered instructions to BEFORE's
  // collectives.
  for (const auto &M : Before)
    for (const auto &B : M->blocks())
      for (const auto &I : *B)
        if (llvm::isa<InstCollectiveCompute>(I.get()))
          AO.CollectiveNames.push_back(I->getName().str());
  llvm::Expected<SimResult> RB = simulate(Before, BO);
  if (!RB)
    return RB.takeError();
  llvm::Expected<SimResult> RA = simulate(After, AO);
  if (!RA)
    return RA.takeError();

  llvm::StringMap<const LocationState *> AfterIndex;
  auto Key = [](unsigned Sg, std::optional<unsigned> Core, llvm::StringRef N) {
    return (llvm::Twine(Sg) + ":" + (Core ? llvm::Twine(*Core) : llvm::Twine("s")) +
            ":" + N)
        .str();
  };
  for (const LocationState &L : RA->Final)
    AfterIndex[Key(L.Subgraph, L.Core, L.Name)] = &L;

  unsigned MaxCores = 1;
  for (const auto &M : Before)
    MaxCores = std::max(MaxCores, M->getTargetOptions().LncSize);
  bool Exact = MaxCores <= 2;
  uint64_t Compared = 0, Bytes = 0;
  llvm::DenseSet<const LocationState *> Seen;
  bool Tolerated = false;
  for (const auto &M : Before) {
    unsigned Sg = M->getSubgraphId(), Core = M->getNeuronCoreId();
    for (const auto &Loc : M->getMemoryLocations().locations()) {
      if (Loc->isRemote())
        continue;
      const LocationState *B = RB->find(Sg, Core, Loc->getName());
      if (!B)
        continue;
      // A SharedDRAM location is compared once.
      if (!Seen.insert(B).second)
        continue;
      auto It = AfterIndex.find(Key(Sg, B->Core, B->Name));
      if (It == AfterIndex.end())
        return makeFailure(FailureKind::Mismatch,
                           llvm::formatv("{0}: location '{1}' on {2} is "
                                         "missing after the lowering",
                                         Opts.FileName, B->Name, where(*B, Core))
                               .str());
      const LocationState &A = *It->second;
      if (A.Type != B->Type || A.Partitions != B->Partitions ||
          A.BytesPerPartition != B->BytesPerPartition)
        return makeFailure(FailureKind::Mismatch,
                           llvm::formatv("{0}: location '{1}' on {2} changed "
                                         "its type or shape in the lowering",
                                         Opts.FileName, B->Name, where(*B, Core))
                               .str());
      unsigned Size = getDataTypeSize(B->Type);
      uint64_t PerP = B->BytesPerPartition / Size;
      Tolerance Tol = toleranceOf(B->Type);
      ++Compared;
      for (unsigned P = 0; P < B->Partitions; ++P)
        for (uint64_t E = 0; E < PerP; ++E) {
          uint64_t Off = uint64_t(P) * B->BytesPerPartition + E * Size;
          if (!B->isInit(Off))
            continue;
          Bytes += Size;
          const uint8_t *VB = B->Data.data() + Off, *VA = A.Data.data() + Off;
          bool Same = A.isInit(Off) && std::memcmp(VA, VB, Size) == 0;
          if (!Same && A.isInit(Off) && !Exact && isFloatType(B->Type)) {
            double X = loadValue(B->Type, VB), Y = loadValue(B->Type, VA);
            Same = (std::isnan(X) && std::isnan(Y)) || X == Y ||
                   (std::isfinite(X) && std::isfinite(Y) &&
                    std::fabs(X - Y) <= Tol.Abs + Tol.Rel * std::fabs(X));
          }
          if (Same) {
            Tolerated |= std::memcmp(VA, VB, Size) != 0;
            continue;
          }
          std::string VAs = A.isInit(Off) ? formatElement(B->Type, VA)
                                        : std::string("uninitialized");
          return makeFailure(
              FailureKind::Mismatch,
              llvm::formatv("{0}: mismatch in location '{1}' on {2}, element "
                            "{3} (partition {4}, element {5}): {6} before, {7} "
                            "after",
                            Opts.FileName, B->Name, where(*B, Core),
                            uint64_t(P) * PerP + E, P, E,
                            formatElement(B->Type, VB), VAs)
                  .str());
        }
    }
  }
  Log << llvm::formatv("equivalent: {0} location(s), {1} initialized "
                       "byte(s) compared ({2})\n",
                       Compared, Bytes,
                       Tolerated ? "within the per-type tolerance"
                                 : "bit-exact");
  return llvm::Error::success();
}

} // namespace loom::bir::sim
