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
#include "loom/bir/sim/SimRunToolOptions.h"
#include "loom/codegen/Codegen.h"
#include "loom/codegen/DeviceGroups.h"
#include "loom/hlo/proto/HloModuleLoader.h"
#include "loom/launch/LaunchRunner.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/support/Error.h"
#include "loom/support/InputFile.h"
#include "loom/support/OutputFile.h"
#include "loom/tools/LaunchSizeOptions.h"
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

cl::opt<std::string> InputFilename(cl::Positional,
                                   cl::desc("<MODULE.hlo | MODULE.pb | ->"),
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
// bir-sim's run options, spelled as there.
sim::SimRunToolOptions Run(Category, "--check: ");

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
  tools::addLaunchSizeOptionsToCategory(Category, "Compile for");
  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &OS) { OS << "hlo-to-bir (loom)\n"; });
  if (!Errors.parseCommandLine(argc, argv, Overview))
    return ExitBadUsage;
  if (InputFilename.empty())
    return Errors.failUsage("no input module");
  if (OutputFilename.empty() && !Check)
    return Errors.failUsage("no output; give -o LAUNCH.json (- for stdout)");
  if (!Check && (Run.anyGiven() || Seed.getNumOccurrences()))
    return Errors.failUsage(
        "--report, --trace, --seed, --max-work and --max-memory go with --check");
  if (Lnc < 1 || Lnc > getMaxLncSize(TargetArch))
    return Errors.failUsage("--lnc must be from 1 to " +
                     llvm::Twine(getMaxLncSize(TargetArch)) + " on " +
                     enumName(TargetArch.getValue()));
  if (std::string Problem = tools::getLaunchSizeOptionsProblem(); !Problem.empty())
    return Errors.failUsage(Problem);
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
  if (std::optional<int64_t> Replicas = tools::getReplicaCountOption())
    (*M)->SetHeaderAttribute("replica_count", std::to_string(*Replicas));
  if (std::optional<int64_t> Partitions = tools::getNumPartitionsOption())
    (*M)->SetHeaderAttribute("num_partitions", std::to_string(*Partitions));
  codegen::CodegenOptions CO;
  CO.LncSize = Lnc;
  CO.Arch = TargetArch;
  if (std::optional<int64_t> Replicas = tools::getReplicaCountOption())
    CO.ReplicaCount = static_cast<unsigned>(*Replicas);
  if (std::optional<int64_t> Partitions = tools::getNumPartitionsOption())
    CO.NumPartitions = static_cast<unsigned>(*Partitions);
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
    // verifyLaunch below checks every device's program once, after the
    // pipeline, with the bindings: verifying at the pipeline's end too
    // would do the same work twice (a third of a large launch's lowering).
    PassManagerOptions PMO;
    PMO.VerifyAtEnd = false;
    llvm::Expected<PassManager> PM =
        PassManager::fromPipeline(*Entries, BO, std::move(PMO));
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
  LO.Sim.MaxWork = Run.MaxWork;
  LO.Sim.MaxMemory = Run.MaxMemory;
  LO.Sim.FileName = InputFilename;
  LO.Sim.RecordTrace = false;
  LO.Report = Run.reportGiven();
  LO.ReportJson = Run.reportJson();
  LO.TraceFile = Run.TraceFile;
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
