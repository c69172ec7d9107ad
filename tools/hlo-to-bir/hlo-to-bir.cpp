//===- hlo-to-bir.cpp - Compile an HLO module to a BIR launch -------------===//
//
// hlo-to-bir [--lnc=N] [--target=trn2|generic] [--pipeline=default|none]
//            [--replica-count=N] [--num-partitions=N] [--enable-ptcom]
//            [bir-opt's backend flags] MODULE.hlo -o LAUNCH.json
// hlo-to-bir --check [--seed=S] [--report[=text|json]] [--trace=FILE] ...
//
// Parses and verifies the module, lowers every device of its launch
// (docs/codegen.md), runs the backend pipeline on every device's program
// (docs/backend-pipeline.md) unless --pipeline=none, verifies the launch
// and writes it (docs/bir.md, "Launch documents"). Exit status: 0 success,
// 1 bad input (including an op that is not lowered), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Printer.h"
#include "loom/bir/json/LaunchJson.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/bir/passes/Pipeline.h"
#include "loom/bir/sim/BackendToolOptions.h"
#include "loom/codegen/Codegen.h"
#include "loom/codegen/DeviceGroups.h"
#include "loom/hlo/proto/HloModuleLoader.h"
#include "loom/launch/LaunchRunner.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/support/Error.h"
#include "loom/support/InputFile.h"
#include "loom/support/OutputFile.h"
#include "loom/tools/ToolErrors.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace loom;
using namespace loom::bir;
namespace cl = llvm::cl;

namespace {

using tools::ExitBadInput;
using tools::ExitBadUsage;
using tools::ExitSuccess;

const tools::ToolErrors Errors("hlo-to-bir");

cl::OptionCategory Category("hlo-to-bir options");

cl::opt<std::string> InputFilename(cl::Positional, cl::desc("<MODULE.hlo>"),
                                   cl::cat(Category));
cl::opt<std::string> OutputFilename(
    "o", cl::desc("Output launch document, replaced only on success"),
    cl::value_desc("LAUNCH.json"), cl::cat(Category));

cl::opt<unsigned> Lnc("lnc",
                      cl::desc("Cores per logical core (1; up to 2 on trn2, "
                               "8 on generic)"),
                      cl::init(1), cl::value_desc("N"), cl::cat(Category));
cl::opt<Target> TargetArch(
    "target", cl::desc("The chip"), cl::init(Target::Trn2),
    cl::values(clEnumValN(Target::Trn2, "trn2", "Trainium 2 (default)"),
               clEnumValN(Target::Generic, "generic",
                          "trn2's memories, lnc 1 to 8 (for studies)")),
    cl::cat(Category));

enum class PipelineName { Default, None };
cl::opt<PipelineName> PipelineOpt(
    "pipeline", cl::desc("What runs on every device's program"),
    cl::init(PipelineName::Default),
    cl::values(clEnumValN(PipelineName::Default, "default",
                          "the backend pipeline (docs/backend-pipeline.md)"),
               clEnumValN(PipelineName::None, "none",
                          "nothing: the programs as generated")),
    cl::cat(Category));

cl::opt<int64_t> ReplicaCount(
    "replica-count", cl::value_desc("N"),
    cl::desc("Compile for N replicas whatever the module header says"),
    cl::cat(Category));
cl::opt<int64_t> NumPartitions(
    "num-partitions", cl::value_desc("N"),
    cl::desc("Compile for N partitions whatever the module header says"),
    cl::cat(Category));

// bir-opt's backend flags, spelled as there.
sim::BackendToolOptions Backend(Category);

cl::opt<bool> Check(
    "check",
    cl::desc("Also simulate the launch on hlo-run's inputs and compare every "
             "output of every device with hlo-run's (bir-sim --against-hlo); "
             "-o is then optional"),
    cl::cat(Category));
cl::opt<uint64_t> Seed("seed",
                       cl::desc("--check: the seed of the inputs (hlo-run's "
                                "--seed)"),
                       cl::init(0), cl::value_desc("S"), cl::cat(Category));
enum class ReportKind { Text, Json };
cl::opt<ReportKind> Report(
    "report", cl::desc("--check: print the simulator's per-core report"),
    cl::values(clEnumValN(ReportKind::Text, "text", "text"),
               clEnumValN(ReportKind::Json, "json", "JSON")),
    cl::init(ReportKind::Text), cl::cat(Category));
cl::opt<std::string> TraceFile(
    "trace", cl::desc("--check: write the launch's Chrome trace there"),
    cl::value_desc("FILE.json"), cl::cat(Category));
cl::opt<uint64_t> MaxWork(
    "max-work",
    cl::desc("--check: cap on a core's simulated work (bir-sim --max-work)"),
    cl::init(sim::SimOptions().MaxWork), cl::cat(Category));
cl::opt<uint64_t> MaxMemory(
    "max-memory",
    cl::desc("--check: cap on the simulated storage (bir-sim --max-memory)"),
    cl::init(sim::SimOptions().MaxMemory), cl::cat(Category));

enum class EmitKind { Json, Text };
cl::opt<EmitKind>
    Emit("emit", cl::desc("Output form"), cl::init(EmitKind::Json),
         cl::values(clEnumValN(EmitKind::Json, "json",
                               "the launch document (default)"),
                    clEnumValN(EmitKind::Text, "text",
                               "every device's program in the text form, "
                               "for reading")),
         cl::cat(Category));

const char Overview[] =
    "compiles an HLO module to the BIR programs of its SPMD launch\n\n"
    "  Parses and verifies MODULE.hlo, lowers every device of its launch\n"
    "  (docs/codegen.md), runs the backend pipeline on every device's\n"
    "  program unless --pipeline=none, and writes the launch document\n"
    "  (docs/bir.md, \"Launch documents\").\n"
    "  Exit status: 0 success, 1 bad input or an op that is not lowered,\n"
    "  2 bad usage.\n";

void render(llvm::raw_ostream &OS, const Launch &L) {
  if (Emit == EmitKind::Json) {
    writeLaunch(OS, L);
    return;
  }
  for (const LaunchDevice &D : L.Devices) {
    OS << "// device " << D.Device << " (replica " << D.Replica
       << ", partition " << D.Partition << ")\n";
    auto index = [&](const LaunchBinding &B) {
      for (unsigned I : B.Index)
        OS << "_" << I;
    };
    for (const LaunchBinding &B : D.Parameters) {
      OS << "// parameter " << B.Parameter;
      index(B);
      OS << " " << B.Name << " " << B.Shape << " -> " << B.Memloc << "\n";
    }
    for (const LaunchBinding &B : D.Outputs) {
      OS << "// output";
      index(B);
      OS << " " << B.Shape << " -> " << B.Memloc << "\n";
    }
    printProgram(OS, D.Modules);
  }
}

/// Where lowering failed and the module's collectives do not fit the
/// launch it was compiled for, the smallest launch that fits them
/// (codegen::inferLaunchSize): XLA's tests set the launch size in code, so
/// many modules' headers do not give it.
std::string launchSizeHint(const hlo::HloModule &M,
                           const codegen::CodegenOptions &CO) {
  codegen::LaunchSize Now{CO.ReplicaCount ? CO.ReplicaCount : M.replica_count(),
                          CO.NumPartitions ? CO.NumPartitions
                                           : M.num_partitions()};
  if (llvm::Error E = codegen::checkLaunchFits(M, Now))
    llvm::consumeError(std::move(E));
  else
    return "";
  std::optional<codegen::LaunchSize> Fit = codegen::inferLaunchSize(M);
  if (!Fit)
    return "no launch of up to 1024 devices fits the module's collectives";
  return ("the smallest launch that fits the module's collectives is "
          "--replica-count=" + llvm::Twine(Fit->ReplicaCount) +
          " --num-partitions=" + llvm::Twine(Fit->NumPartitions))
      .str();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &OS) { OS << "hlo-to-bir (loom)\n"; });
  if (!Errors.parseCommandLine(argc, argv, Overview))
    return ExitBadUsage;
  if (InputFilename.empty())
    return Errors.failUsage("no input module");
  if (OutputFilename.empty() && !Check)
    return Errors.failUsage("no output; give -o LAUNCH.json (- for stdout)");
  if (!Check && (Report.getNumOccurrences() || !TraceFile.empty() ||
                 Seed.getNumOccurrences()))
    return Errors.failUsage("--report, --trace and --seed go with --check");
  if (Lnc < 1 || Lnc > getMaxLncSize(TargetArch))
    return Errors.failUsage("--lnc must be from 1 to " +
                     llvm::Twine(getMaxLncSize(TargetArch)) + " on " +
                     enumName(TargetArch.getValue()));
  if ((ReplicaCount.getNumOccurrences() && ReplicaCount < 1) ||
      (NumPartitions.getNumOccurrences() && NumPartitions < 1))
    return Errors.failUsage("--replica-count and --num-partitions must be at least 1");
  BackendOptions BO = Backend.getBackendOptions();

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Text =
      readInputBuffer(InputFilename);
  if (!Text)
    return Errors.failInput(Text.takeError());
  auto M = hlo::LoadHloModule(std::move(*Text), InputFilename);
  if (!M)
    return Errors.failInput(M.takeError());
  if (llvm::Error E = hlo::VerifyHloModule(**M))
    return Errors.failInput(makeError(InputFilename +
                                      ": the module does not verify:\n" +
                                      llvm::toString(std::move(E))));
  // The launch size given on the command line is the module's, as in
  // hlo-run: --check's reference run uses it too.
  if (ReplicaCount.getNumOccurrences())
    (*M)->SetHeaderAttribute("replica_count", std::to_string(ReplicaCount));
  if (NumPartitions.getNumOccurrences())
    (*M)->SetHeaderAttribute("num_partitions", std::to_string(NumPartitions));
  codegen::CodegenOptions CO;
  CO.LncSize = Lnc;
  CO.Arch = TargetArch;
  if (ReplicaCount.getNumOccurrences())
    CO.ReplicaCount = static_cast<unsigned>(ReplicaCount);
  if (NumPartitions.getNumOccurrences())
    CO.NumPartitions = static_cast<unsigned>(NumPartitions);
  llvm::Expected<Launch> L = codegen::lowerToLaunch(**M, CO);
  if (!L)
  {
    int Status = Errors.failInput(L.takeError());
    if (std::string Hint = launchSizeHint(**M, CO); !Hint.empty())
      Errors.printLabeled("note", Hint);
    return Status;
  }

  if (PipelineOpt == PipelineName::Default) {
    llvm::Expected<std::vector<PipelineEntry>> Entries =
        buildDefaultPipeline(BO, TargetArch);
    if (!Entries)
      return Errors.failInput(Entries.takeError());
    llvm::Expected<PassManager> PM = PassManager::fromPipeline(*Entries, BO);
    if (!PM)
      return Errors.failInput(PM.takeError());
    if (llvm::Expected<bool> Changed = PM->runOnLaunch(*L); !Changed)
      return Errors.failInput(Changed.takeError());
  }
  if (llvm::Error E = verifyLaunch(*L))
    return Errors.failInput(std::move(E),
                            "the generated launch does not verify: ");
  if (!OutputFilename.empty())
    if (llvm::Error E = writeOutputAtomically(
            OutputFilename, [&](llvm::raw_ostream &OS) { render(OS, *L); }))
      return Errors.failInput(std::move(E));
  if (!Check)
    return ExitSuccess;
  launch::CheckOptions LO;
  LO.Seed = Seed;
  LO.Sim.Seed = Seed;
  LO.Sim.MaxWork = MaxWork;
  LO.Sim.MaxMemory = MaxMemory;
  LO.Sim.FileName = InputFilename;
  LO.Sim.RecordTrace = false;
  LO.Report = Report.getNumOccurrences() > 0;
  LO.ReportJson = Report == ReportKind::Json;
  LO.TraceFile = TraceFile;
  llvm::Expected<bool> Same = launch::checkAgainstHlo(**M, *L, LO, llvm::outs());
  llvm::outs().flush();
  if (!Same)
    return Errors.failInput(Same.takeError());
  if (!*Same) {
    Errors.printErrorMessage("the launch of " + InputFilename +
                             " differs from hlo-run's outputs");
    return ExitBadInput;
  }
  return ExitSuccess;
}
