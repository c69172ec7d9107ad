//===- Report.cpp - The per-core report, .npy dumps and the trace ---------===//

#include "loom/bir/sim/Simulator.h"

#include "ChromeTrace.h"
#include "Semantics.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <map>

namespace loom::bir::sim {

/// The launch's makespan: subgraphs run one after another, each until its
/// slowest core finishes.
static double launchMakespan(const SimResult &R) {
  std::map<unsigned, double> PerSubgraph;
  for (const CoreReport &C : R.Cores)
    PerSubgraph[C.Subgraph] = std::max(PerSubgraph[C.Subgraph], C.MakespanNs);
  double Sum = 0;
  for (auto &[S, T] : PerSubgraph)
    Sum += T;
  return Sum;
}

void printReport(llvm::raw_ostream &OS, const SimResult &R, bool Json) {
  if (Json) {
    llvm::json::Array Cores;
    for (const CoreReport &C : R.Cores) {
      llvm::json::Object Engines;
      for (unsigned E = 0; E < NumEngines; ++E) {
        const EngineStats &S = C.Engines[E];
        if (!S.Executions)
          continue;
        Engines[enumName(static_cast<Engine>(E))] = llvm::json::Object{
            {"busy_ns", S.BusyNs},
            {"bytes", int64_t(S.Bytes)},
            {"executions", int64_t(S.Executions)}};
      }
      llvm::json::Object Colls;
      for (auto &[Name, Bytes] : C.CollectiveBytes)
        Colls[Name] = int64_t(Bytes);
      llvm::json::Object Core{
          {"subgraph", int64_t(C.Subgraph)},
          {"core", int64_t(C.Core)},
          {"makespan_ns", C.MakespanNs},
          {"executions", int64_t(C.Executions)},
          {"engines", std::move(Engines)},
          {"bytes_to_other_cores", int64_t(C.BytesToOtherCores)},
          {"bytes_from_other_cores", int64_t(C.BytesFromOtherCores)},
          {"bytes_to_from_other_cores",
           int64_t(C.BytesToOtherCores + C.BytesFromOtherCores)},
          {"collectives", std::move(Colls)}};
      if (R.NumDevices)
        Core["device"] = int64_t(C.Device);
      Cores.push_back(std::move(Core));
    }
    llvm::json::Object Top{{"cores", std::move(Cores)}};
    if (R.NumDevices) {
      Top["devices"] = int64_t(R.NumDevices);
      Top["makespan_ns"] = launchMakespan(R);
    }
    OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Top))) << "\n";
    return;
  }
  if (R.NumDevices)
    OS << "launch: " << R.NumDevices << " device(s) of " << R.NumCores
       << " core(s), makespan " << llvm::format("%.1f", launchMakespan(R))
       << " ns\n";
  for (const CoreReport &C : R.Cores) {
    if (R.NumDevices)
      OS << "device " << C.Device << " ";
    OS << "subgraph " << C.Subgraph << " core " << C.Core << ": makespan "
       << llvm::format("%.1f", C.MakespanNs) << " ns, " << C.Executions
       << " executions\n";
    for (unsigned E = 0; E < NumEngines; ++E) {
      const EngineStats &S = C.Engines[E];
      if (!S.Executions)
        continue;
      OS << "  engine " << llvm::left_justify(enumName(static_cast<Engine>(E)), 5)
         << " busy " << llvm::format("%12.1f", S.BusyNs) << " ns  bytes "
         << llvm::format_decimal(int64_t(S.Bytes), 10) << "  executions "
         << S.Executions << "\n";
    }
    OS << "  bytes written to other cores " << C.BytesToOtherCores
       << ", read from other cores " << C.BytesFromOtherCores << ", total "
       << C.BytesToOtherCores + C.BytesFromOtherCores << "\n";
    for (auto &[Name, Bytes] : C.CollectiveBytes)
      OS << "  collective " << Name << ": " << Bytes << " bytes\n";
  }
}

NpyArray toNpy(const LocationState &L) {
  NpyArray A;
  unsigned Size = getDataTypeSize(L.Type);
  uint64_t PerP = L.BytesPerPartition / Size;
  A.Shape = {int64_t(L.Partitions), int64_t(PerP)};
  static const char *Descr[] = {"<f4", "<f4", "<f2", "<f4", "<f4", "|i1",
                                "<i2", "<i4", "|u1", "<u2", "<u4", "<i8",
                                "<u8"};
  A.Descr = Descr[unsigned(L.Type)];
  bool Widen = L.Type == DataType::BF16 || L.Type == DataType::FP8E4M3 ||
               L.Type == DataType::FP8E5M2;
  unsigned OutSize = Widen ? 4 : Size;
  A.Data.assign(uint64_t(L.Partitions) * PerP * OutSize, '\0');
  for (unsigned P = 0; P < L.Partitions; ++P)
    for (uint64_t E = 0; E < PerP; ++E) {
      uint64_t Off = uint64_t(P) * L.BytesPerPartition + E * Size;
      if (!L.isInit(Off))
        continue;
      char *Dst = A.Data.data() + (uint64_t(P) * PerP + E) * OutSize;
      if (Widen) {
        float F = loadF32(L.Type, L.Data.data() + Off);
        std::memcpy(Dst, &F, 4);
      } else {
        std::memcpy(Dst, L.Data.data() + Off, Size);
      }
    }
  return A;
}

void writeTrace(llvm::raw_ostream &OS, const SimResult &R) {
  std::vector<TraceSlice> Slices;
  Slices.reserve(R.Slices.size());
  for (const TimelineSlice &S : R.Slices)
    Slices.push_back({S.Core, S.Eng, S.Name, S.StartNs, S.DurNs, S.Device, S.Details});
  std::vector<TraceFlow> Flows;
  Flows.reserve(R.Flows.size());
  for (const TimelineFlow &F : R.Flows)
    Flows.push_back({F.FromCore, F.FromEng, F.FromNs, F.ToCore, F.ToEng,
                     F.ToNs, F.Name, F.FromDevice, F.ToDevice});
  writeChromeTrace(OS, Slices, Flows, R.NumCores, R.NumDevices);
}

} // namespace loom::bir::sim
