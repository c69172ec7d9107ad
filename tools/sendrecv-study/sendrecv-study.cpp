//===- sendrecv-study.cpp - GPSIMD vs DMA for a SendRecv swap --------------===//
//
// sendrecv-study [--cost NAME=VALUE]... [--partitions=P] [--max-elems=N]
// sendrecv-study --simulate [--cost NAME=VALUE]...
//
// The data behind the study in docs/local-collectives.md. For every BIR data type and
// every tile of 1..N elements per partition (P partitions), the table gives
// the cost model's time of the swap's copy on each engine
// lower_local_collectives can pick: one GPSIMDSB2SB (possible up to 256
// elements per partition, 1024 effective bytes) or one DMACopy on one
// queue, plus what neuronx-cc's budget rule (GPSIMD iff the effective bytes
// per partition are at most --sendrecv-to-gpsimd-max-bpp = 1024) picks and
// whether that is the faster engine. The rest of the lowering (the
// barriers) is the same for both engines, so the copy decides.
//
// --simulate confirms points end to end: it builds a two-core SendRecv
// program, lowers it with lnc_splitter + lower_local_collectives with the
// engine forced each way and with both --sendrecv-engine choices, simulates
// each lowering with bir-sim's simulator and prints the makespans next to
// the model's prediction of their difference.
//
// scripts/sendrecv-study.sh runs both and draws the plot.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/analysis/CostModel.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace loom;
using namespace loom::bir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory Cat("sendrecv-study options");
cl::list<std::string> CostParams("cost",
                                 cl::desc("Set a cost-model parameter (docs/cost-model.md)"),
                                 cl::value_desc("NAME=VALUE"), cl::cat(Cat));
cl::opt<unsigned> Partitions("partitions", cl::desc("Partitions of the swapped tile"),
                             cl::init(128), cl::cat(Cat));
cl::opt<unsigned> MaxElems("max-elems", cl::desc("Largest tile, in elements per partition"),
                           cl::init(4096), cl::cat(Cat));
cl::opt<bool> Simulate("simulate",
                       cl::desc("Lower and simulate a few tiles instead of printing the table"),
                       cl::cat(Cat));

constexpr DataType AllTypes[] = {DataType::FP32,   DataType::BF16,    DataType::FP16,
                                 DataType::FP8E4M3, DataType::FP8E5M2, DataType::INT8,
                                 DataType::INT16,  DataType::INT32,   DataType::UINT8,
                                 DataType::UINT16, DataType::UINT32};

struct Point {
  double GpsimdNs; ///< NaN when one GPSIMDSB2SB cannot carry the tile
  double DmaNs;
  bool BudgetPicksGpsimd;
};

Point evaluate(const analysis::CostModel &M, DataType T, uint64_t Elems, unsigned P) {
  uint64_t Size = getDataTypeSize(T);
  uint64_t Effective = InstGPSIMDSB2SB::getEffectiveBytesPerPartition(Elems * Size, T);
  bool Fits = Effective <= InstGPSIMDSB2SB::MaxBytesPerPartition;
  Point Pt;
  Pt.GpsimdNs = Fits ? M.sb2sbNs(Effective, P) : std::nan("");
  // The swap's DMACopy moves P contiguous rows: one descriptor per partition.
  Pt.DmaNs = M.dmaCopyNs(Elems * Size * P, P, false);
  Pt.BudgetPicksGpsimd = Fits && Effective <= BackendOptions().SendRecvToGpsimdMaxBpp;
  return Pt;
}

int printTable(const analysis::CostModel &M) {
  llvm::outs() << "# sendrecv-study: cost model time of a SendRecv swap's copy, " << Partitions
               << " partitions\n"
               << "# columns: dtype bytes elems gpsimd_ns dma_ns budget_pick faster budget_ok\n"
               << "# gpsimd_ns is '-' where one GPSIMDSB2SB cannot carry the tile "
                  "(more than 1024 effective bytes per partition)\n";
  for (DataType T : AllTypes) {
    for (uint64_t N = 1; N <= MaxElems; ++N) {
      Point Pt = evaluate(M, T, N, Partitions);
      bool GpsimdFaster = !std::isnan(Pt.GpsimdNs) && Pt.GpsimdNs < Pt.DmaNs;
      bool Ok = Pt.BudgetPicksGpsimd == GpsimdFaster ||
                (!std::isnan(Pt.GpsimdNs) && Pt.GpsimdNs == Pt.DmaNs);
      llvm::outs() << enumName(T) << " " << getDataTypeSize(T) << " " << N << " "
                   << (std::isnan(Pt.GpsimdNs) ? std::string("-")
                                               : llvm::formatv("{0:f1}", Pt.GpsimdNs).str())
                   << " " << llvm::formatv("{0:f1}", Pt.DmaNs) << " "
                   << (Pt.BudgetPicksGpsimd ? "gpsimd" : "dma") << " "
                   << (GpsimdFaster ? "gpsimd" : "dma") << " " << (Ok ? "yes" : "no") << "\n";
    }
    llvm::outs() << "\n\n"; // a gnuplot data block per type
  }
  // Summary: where the budget rule is wrong, per element size.
  llvm::outs() << "# summary (per element size; every type of one size behaves the same)\n";
  for (unsigned Size : {4u, 2u, 1u}) {
    DataType T = Size == 4 ? DataType::FP32 : Size == 2 ? DataType::BF16 : DataType::INT8;
    uint64_t FirstWrong = 0, LastWrong = 0, Wrong = 0;
    double WorstLoss = 0;
    uint64_t WorstAt = 0;
    for (uint64_t N = 1; N <= MaxElems; ++N) {
      Point Pt = evaluate(M, T, N, Partitions);
      double Picked = Pt.BudgetPicksGpsimd ? Pt.GpsimdNs : Pt.DmaNs;
      double Best = std::isnan(Pt.GpsimdNs) ? Pt.DmaNs : std::min(Pt.GpsimdNs, Pt.DmaNs);
      if (Picked > Best) {
        ++Wrong;
        FirstWrong = FirstWrong ? FirstWrong : N;
        LastWrong = N;
        if (Picked - Best > WorstLoss) {
          WorstLoss = Picked - Best;
          WorstAt = N;
        }
      }
    }
    llvm::outs() << "# " << Size << "-byte types: budget rule slower at " << Wrong << " of "
                 << MaxElems << " sizes";
    if (Wrong)
      llvm::outs() << ", elements " << FirstWrong << ".." << LastWrong << "; worst at "
                   << WorstAt << ": " << llvm::formatv("{0:f0}", WorstLoss) << " ns lost";
    llvm::outs() << "\n";
  }
  return 0;
}

/// A two-core program whose only work is the swap of a P x N tile.
std::string swapProgram(DataType T, uint64_t N, unsigned P) {
  std::string Type = enumName(T).str(), Parts = std::to_string(P);
  std::string Bpp = std::to_string(N * getDataTypeSize(T));
  auto Tile = [&](const std::string &Loc) {
    return "{\"memloc\": \"" + Loc + "\", \"partitions\": " + Parts + ", \"pattern\": [[1, " +
           std::to_string(N) + "]]}";
  };
  auto Location = [&](const std::string &Name, unsigned Id, bool Remote) {
    return "{\"name\": \"" + Name + "\", \"tensor_id\": " + std::to_string(Id) +
           ", \"kind\": \"SB\", \"dtype\": \"" + Type + "\", \"partitions\": " + Parts +
           ", \"bytes_per_partition\": " + Bpp +
           (Remote ? ", \"written_by_another_core\": true}" : "}");
  };
  return R"({"version": 1, "modules": [{"name": "study", "neuron_core_id": 0, "subgraph_id": 0,
  "pass_options": {"lnc_size": 2, "target": "trn2"},
  "memory_locations": [)" +
         Location("mine", 0, false) + ", " + Location("peer", 1, true) + R"(],
  "blocks": [{"name": "entry", "instructions": [
    {"name": "swap", "type": "CollectiveCompute", "engine": "POOL", "kind": "SendRecv",
     "group": [0, 1], "local": true, "inputs": [)" +
         Tile("mine") + "], \"outputs\": [" + Tile("peer") + R"(]},
    {"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})";
}

/// Lowers the swap with Opts and simulates it; the makespan over both cores.
llvm::Expected<double> simulateSwap(DataType T, uint64_t N, const BackendOptions &Opts,
                                    const analysis::CostModelParams &Cost, bool &UsedGpsimd) {
  auto Prog = parseProgram(swapProgram(T, N, Partitions), "<study>");
  if (!Prog)
    return Prog.takeError();
  auto PM = PassManager::fromNames({"lnc_splitter", "lower_local_collectives"},
                                  Opts);
  if (!PM)
    return PM.takeError();
  if (auto Changed = PM->run(*Prog); !Changed)
    return Changed.takeError();
  UsedGpsimd = false;
  Prog->walk([&](Instruction &I) {
    UsedGpsimd |= llvm::isa<InstGPSIMDSB2SB>(I);
  });
  sim::SimOptions SO;
  SO.Cost = Cost;
  SO.FileName = "<study>";
  auto R = sim::simulate(*Prog, SO);
  if (!R)
    return R.takeError();
  double Makespan = 0;
  for (const sim::CoreReport &C : R->Cores)
    Makespan = std::max(Makespan, C.MakespanNs);
  return Makespan;
}

int simulatePoints(const analysis::CostModel &M) {
  llvm::outs() << "# sendrecv-study --simulate: makespan (ns) of the lowered swap, " << Partitions
               << " partitions\n"
               << "# columns: dtype elems gpsimd_makespan dma_makespan model_difference "
                  "simulated_difference budget_engine budget_makespan cost_model_engine "
                  "cost_model_makespan\n";
  BackendOptions ForceGpsimd, ForceDma, Budget, ByCost;
  ForceGpsimd.SendRecvToGpsimdMaxBpp = InstGPSIMDSB2SB::MaxBytesPerPartition;
  ForceDma.SendRecvToGpsimdMaxBpp = 0;
  ByCost.SendRecvEngine = SendRecvEngineChoice::CostModel;
  int Status = 0;
  for (DataType T : {DataType::FP32, DataType::BF16, DataType::INT8}) {
    for (uint64_t N : {1, 16, 64, 96, 128, 160, 200, 256}) {
      Point Pt = evaluate(M, T, N, Partitions);
      bool G1 = false, G2 = false, GB = false, GC = false;
      auto Gp = simulateSwap(T, N, ForceGpsimd, M.params(), G1);
      auto Dm = simulateSwap(T, N, ForceDma, M.params(), G2);
      auto Bu = simulateSwap(T, N, Budget, M.params(), GB);
      auto Co = simulateSwap(T, N, ByCost, M.params(), GC);
      for (llvm::Expected<double> *E : {&Gp, &Dm, &Bu, &Co})
        if (!*E) {
          llvm::errs() << "sendrecv-study: error: " << enumName(T) << " x " << N << ": "
                       << llvm::toString(E->takeError()) << "\n";
          Status = 1;
        }
      if (Status)
        return Status;
      llvm::outs() << enumName(T) << " " << N << " "
                   << llvm::formatv("{0:f1} {1:f1} {2:f1} {3:f1} ", *Gp, *Dm,
                                    Pt.GpsimdNs - Pt.DmaNs, *Gp - *Dm)
                   << (GB ? "gpsimd " : "dma ") << llvm::formatv("{0:f1} ", *Bu)
                   << (GC ? "gpsimd " : "dma ") << llvm::formatv("{0:f1}", *Co) << "\n";
      if (!G1 || G2) {
        llvm::errs() << "sendrecv-study: error: the forced lowerings did not use the forced "
                        "engines\n";
        return 1;
      }
    }
  }
  return Status;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Cat);
  cl::ParseCommandLineOptions(argc, argv,
                              "GPSIMD vs DMA for a SendRecv swap under loom's cost model\n\n"
                              "  Prints the table behind the study in docs/local-collectives.md, or with\n"
                              "  --simulate lowers and simulates a few tiles.\n");
  analysis::CostModelParams Params;
  for (const std::string &C : CostParams)
    if (llvm::Error E = analysis::parseCostModelAssignment(Params, C)) {
      llvm::errs() << "sendrecv-study: error: --cost " << C << ": "
                   << llvm::toString(std::move(E)) << "\n";
      return 2;
    }
  if (Partitions < 1 || Partitions > MaxOnChipPartitions || MaxElems < 1) {
    llvm::errs() << "sendrecv-study: error: --partitions must be 1..128 and --max-elems at "
                    "least 1\n";
    return 2;
  }
  analysis::CostModel M(Params);
  return Simulate ? simulatePoints(M) : printTable(M);
}
