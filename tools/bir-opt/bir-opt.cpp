//===- bir-opt.cpp - Run backend passes over a BIR program ----------------===//
//
// bir-opt [options] <program.json | ->
//
// Loads and verifies a program (or a launch document: every device's
// program), runs the passes of --passes in order, verifies the result and
// writes it as JSON or as the text form. Exit status: 0
// on success, 1 for bad input (including a pass that fails on it), 2 for bad
// usage.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Printer.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/json/LaunchJson.h"
#include "loom/bir/passes/Pass.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/bir/passes/Pipeline.h"
#include "loom/bir/sim/BackendToolOptions.h"
#include "loom/bir/sim/Simulator.h"
#include "loom/bir/sim/ToolOptions.h"
#include "loom/support/Error.h"
#include "loom/support/InputFile.h"
#include "loom/support/OutputFile.h"
#include "loom/tools/ToolErrors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace loom;
using namespace loom::bir;
namespace cl = llvm::cl;

namespace {

using tools::ExitBadUsage;
using tools::ExitSuccess;

const tools::ToolErrors Errors("bir-opt");

enum class EmitKind { Json, Text };

cl::OptionCategory BirOptCategory("bir-opt options");

cl::opt<std::string> InputFilename(cl::Positional,
                                   cl::desc("<program.json | ->"),
                                   cl::cat(BirOptCategory));

cl::list<std::string> PassList("passes", cl::desc("Passes to run, in order"),
                               cl::value_desc("a,b,..."), cl::CommaSeparated,
                               cl::cat(BirOptCategory));

sim::ToolOptions
    Common(BirOptCategory,
           "Set a cost-model parameter for --sendrecv-engine=cost-model, as "
           "bir-sim's --cost (docs/cost-model.md)");

// The backend passes' options, spelled as neuronx-cc spells them.
sim::BackendToolOptions Backend(BirOptCategory);

cl::opt<std::string> OutputFilename(
    "o", cl::desc("Output file, replaced only on success (default: stdout)"),
    cl::value_desc("file"), cl::init("-"), cl::cat(BirOptCategory));

cl::opt<EmitKind>
    Emit("emit", cl::desc("Output form"), cl::init(EmitKind::Json),
         cl::values(clEnumValN(EmitKind::Json, "json",
                               "JSON, the interchange form (default)"),
                    clEnumValN(EmitKind::Text, "text",
                               "the text form, for reading")),
         cl::cat(BirOptCategory));

cl::opt<bool> VerifyEach("verify-each",
                         cl::desc("Verify the program after every pass"),
                         cl::cat(BirOptCategory));

cl::opt<bool>
    PrintAfterAll("print-after-all",
                  cl::desc("Print the text form to stderr after every pass"),
                  cl::cat(BirOptCategory));

cl::list<std::string> PrintBefore(
    "print-before",
    cl::desc("Print the text form to stderr before every run of this pass"),
    cl::value_desc("pass"), cl::CommaSeparated, cl::cat(BirOptCategory));

cl::opt<bool> TimePasses("time-passes",
                         cl::desc("Print the wall time of every pass (and "
                                  "of the verifier) to stderr at the end"),
                         cl::cat(BirOptCategory));

cl::opt<bool> Remarks(
    "remarks",
    cl::desc("Print one line per decision of the passes to stderr (the "
             "engine of each SendRecv, each barrier skipped, each "
             "completion's block, and why)"),
    cl::cat(BirOptCategory));

cl::opt<bool> ListPasses("list-passes",
                         cl::desc("Print the available passes and exit"),
                         cl::cat(BirOptCategory));

enum class PipelineName { Default };

cl::opt<PipelineName> PipelineOpt(
    "pipeline", cl::desc("Run a named pipeline instead of --passes"),
    cl::values(clEnumValN(PipelineName::Default, "default",
                          "the backend pipeline (docs/backend-pipeline.md)")),
    cl::cat(BirOptCategory));

cl::opt<bool> PrintPipeline(
    "print-pipeline",
    cl::desc("Print the default pipeline for the given options, with its "
             "order numbers, and exit"),
    cl::cat(BirOptCategory));

cl::opt<bool> CheckEquivalence(
    "check-equivalence",
    cl::desc("Simulate the program before and after the passes on the same "
             "seeded inputs and fail unless every location of the input "
             "program ends the same on every core, with no race or deadlock "
             "in either (docs/simulator.md)"),
    cl::cat(BirOptCategory));

cl::opt<uint64_t> CheckEquivalenceSeed(
    "check-equivalence-seed", cl::init(0), cl::value_desc("n"),
    cl::desc("Seed of the inputs and schedules of --check-equivalence"),
    cl::cat(BirOptCategory));

cl::opt<unsigned> CheckEquivalenceSchedules(
    "check-equivalence-schedules", cl::init(0), cl::value_desc("n"),
    cl::desc("Random legal schedules each program of --check-equivalence "
             "also runs, all required to agree (default 0)"),
    cl::cat(BirOptCategory));

const char Overview[] =
    "runs backend (BIR) passes over a program\n\n"
    "  Loads a program in the JSON form of docs/bir.md, applies --lnc and\n"
    "  --target, verifies it, runs --passes in order (or the pipeline of\n"
    "  --pipeline), verifies the result and writes it. A launch document\n"
    "  has the passes run on every device's program.\n"
    "  Exit status: 0 success, 1 bad input or a failing pass, 2 bad usage.\n";

/// The backend options of the command line; --cost values were checked by
/// checkUsage.
BackendOptions getBackendOptions() {
  BackendOptions Opts = Backend.getBackendOptions();
  llvm::consumeError(Common.applyCostParams(Opts.Cost));
  return Opts;
}

/// Checks what the option parser cannot: --passes and --pipeline are not
/// combined, an input is named (unless only the pipeline is printed), and
/// --lnc fits the target.
llvm::Error checkUsage() {
  if (PipelineOpt.getNumOccurrences() && PassList.getNumOccurrences())
    return makeError("--pipeline and --passes cannot be combined; choose the "
                     "passes with one of them");
  if (PrintPipeline && PassList.getNumOccurrences())
    return makeError("--print-pipeline prints the default pipeline; it cannot "
                     "be combined with --passes");
  if (InputFilename.empty() && !PrintPipeline)
    return makeError("no input file; name one, or - for stdin");
  analysis::CostModelParams Cost;
  if (llvm::Error E = Common.applyCostParams(Cost))
    return E;
  // Without --target the modules keep their own, checked on loading.
  return Common.checkLncSize(Target::Trn2);
}

PassManagerOptions getPassManagerOptions() {
  PassManagerOptions O;
  O.VerifyEach = VerifyEach;
  O.PrintAfterAll = PrintAfterAll;
  O.PrintBefore.assign(PrintBefore.begin(), PrintBefore.end());
  O.TimePasses = TimePasses;
  O.RemarkStream = Remarks ? &llvm::errs() : nullptr;
  O.Statistics = llvm::AreStatisticsEnabled();
  return O;
}

/// The passes of --passes, every name checked before the input is read;
/// --print-before names too.
llvm::Expected<PassManager> createPassList() {
  for (const std::string &Name : PrintBefore)
    if (!llvm::is_contained(getPassNames(), Name))
      return makeError("--print-before: unknown pass '" + Name +
                       "'; valid passes: " + llvm::join(getPassNames(), ", "));
  std::vector<std::string> Names(PassList.begin(), PassList.end());
  return PassManager::fromNames(Names, getBackendOptions(),
                                getPassManagerOptions());
}

/// The active passes of the default pipeline for the program's target.
llvm::Expected<PassManager> createDefaultPipeline(Target T) {
  BackendOptions Opts = getBackendOptions();
  llvm::Expected<std::vector<PipelineEntry>> Entries =
      buildDefaultPipeline(Opts, T);
  if (!Entries)
    return Entries.takeError();
  return PassManager::fromPipeline(*Entries, Opts, getPassManagerOptions());
}

/// --check-equivalence: the simulator runs the program before and after the
/// passes on the same seeded inputs (an unsplit input is split in memory,
/// as the pipeline's lnc_splitter would) and compares every location of the
/// input program on every core. A summary goes to stderr, so stdout keeps
/// carrying only the result.
llvm::Error checkEquivalenceAround(Program &Before, const Program &After,
                                   llvm::StringRef FileName) {
  if (llvm::Error E = sim::splitIfNeeded(Before))
    return E;
  sim::SimOptions Opts;
  Opts.Seed = CheckEquivalenceSeed;
  Opts.Schedules = CheckEquivalenceSchedules;
  Opts.FileName = FileName.str();
  std::string Log;
  llvm::raw_string_ostream LogStream(Log);
  if (llvm::Error E = sim::checkEquivalence(Before, After, Opts, LogStream))
    return makeError("--check-equivalence: " + llvm::toString(std::move(E)));
  Errors.printNote(llvm::errs(), LogStream.str());
  return llvm::Error::success();
}

/// Streams the output straight into the file: a large program is never
/// held a second time as one string.
void render(llvm::raw_ostream &OS, const Program &P) {
  if (Emit == EmitKind::Json)
    writeProgram(OS, P);
  else
    printProgram(OS, P);
}

/// The text form of a launch: every device's program under a header line.
void renderLaunch(llvm::raw_ostream &OS, const Launch &L) {
  if (Emit == EmitKind::Json) {
    writeLaunch(OS, L);
    return;
  }
  for (const LaunchDevice &D : L.Devices) {
    if (D.Device != 0)
      OS << "\n";
    OS << "// device " << D.Device << " (replica " << D.Replica
       << ", partition " << D.Partition << ")\n";
    printProgram(OS, D.Modules);
  }
}

/// A launch document: the passes run on every device's program in device
/// order, then the launch is verified again (its bindings name locations of
/// the programs the passes changed) and written as a launch.
int runOnLaunch(llvm::StringRef Text, llvm::StringRef FileName,
                const LoadOptions &Opts, bool UsePipeline, PassManager &Passes) {
  std::string InputPrefix = (FileName + ": ").str();
  if (CheckEquivalence)
    return Errors.failUsage("--check-equivalence compares two programs; it "
                            "does not take a launch document");
  llvm::Expected<Launch> L = parseLaunch(Text, FileName, Opts);
  if (!L)
    return Errors.failInput(L.takeError());
  if (UsePipeline) {
    llvm::Expected<PassManager> PM = createDefaultPipeline(L->Arch);
    if (!PM)
      return Errors.failInput(PM.takeError(), InputPrefix);
    Passes = std::move(*PM);
  }
  // A failing pass names its device ("device D: ..."); the counters are
  // printed either way.
  llvm::Expected<bool> Changed = Passes.runOnLaunch(*L);
  if (llvm::AreStatisticsEnabled())
    Passes.getContext().printStatistics(llvm::errs());
  if (!Changed)
    return Errors.failInput(Changed.takeError(), InputPrefix);
  if (!Passes.empty())
    if (llvm::Error E = verifyLaunch(*L))
      return Errors.failInput(std::move(E), InputPrefix + "after the passes: ");
  if (llvm::Error E = writeOutputAtomically(
          OutputFilename, [&](llvm::raw_ostream &OS) { renderLaunch(OS, *L); }))
    return Errors.failInput(std::move(E));
  return ExitSuccess;
}

} // namespace

/// LLVM's Support library owns the --stats flag (llvm::AreStatisticsEnabled);
/// bir-opt gives it its own meaning and lists it with its options.
void adoptStatsOption() {
  llvm::StringMap<cl::Option *> &Options = cl::getRegisteredOptions();
  auto It = Options.find("stats");
  if (It == Options.end())
    return;
  It->second->setDescription(
      "Print the passes' counters to stderr at the end (instructions added "
      "and removed, barriers inserted and skipped, bytes per engine)");
  It->second->addCategory(BirOptCategory);
  It->second->setHiddenFlag(cl::NotHidden);
}

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  adoptStatsOption();
  cl::HideUnrelatedOptions(BirOptCategory);
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &OS) { OS << "bir-opt (loom)\n"; });
  if (!Errors.parseCommandLine(argc, argv, Overview))
    return ExitBadUsage;
  if (ListPasses) {
    for (llvm::StringRef Name : getPassNames())
      llvm::outs() << Name << "\n";
    return ExitSuccess;
  }
  if (llvm::Error E = checkUsage())
    return Errors.failUsage(llvm::toString(std::move(E)));
  if (PrintPipeline) {
    // Without --target the pipeline is the one for trn2, BIR's default.
    Target T = Common.TargetArch.getNumOccurrences()
                   ? Common.TargetArch.getValue()
                   : TargetOptions().Arch;
    llvm::Expected<std::vector<PipelineEntry>> Entries =
        buildDefaultPipeline(getBackendOptions(), T);
    if (!Entries)
      return Errors.failUsage(llvm::toString(Entries.takeError()));
    printPipeline(llvm::outs(), *Entries);
    return ExitSuccess;
  }
  bool UsePipeline = PipelineOpt.getNumOccurrences();
  // Every name is checked before the input is read; the pipeline's passes
  // depend on the program's target and are created once it is loaded.
  llvm::Expected<PassManager> Passes = createPassList();
  if (!Passes)
    return Errors.failUsage(llvm::toString(Passes.takeError()));

  llvm::Expected<std::string> Text = readInput(InputFilename);
  if (!Text)
    return Errors.failInput(Text.takeError());
  LoadOptions Opts = Common.getLoadOptions();
  llvm::StringRef FileName =
      InputFilename == "-" ? llvm::StringRef("<stdin>") : InputFilename;
  std::string InputPrefix = (FileName + ": ").str();
  if (getDocumentKind(*Text) == DocumentKind::Launch)
    return runOnLaunch(*Text, FileName, Opts, UsePipeline, *Passes);
  llvm::Expected<Program> P = parseProgram(*Text, FileName, Opts);
  if (!P)
    return Errors.failInput(P.takeError());

  Target T = P->front()->getTargetOptions().Arch;
  if (UsePipeline) {
    llvm::Expected<PassManager> L = createDefaultPipeline(T);
    if (!L)
      return Errors.failInput(L.takeError(), InputPrefix);
    *Passes = std::move(*L);
  }
  // The program as it was loaded, kept for the comparison.
  std::optional<Program> Before;
  if (CheckEquivalence)
    Before = P->clone();
  // The program owns copies of everything it read: the text goes before the
  // passes double the modules (docs/robustness.md, "Large BIR programs").
  std::string().swap(*Text);
  llvm::Expected<bool> Changed = Passes->run(*P);
  if (llvm::AreStatisticsEnabled())
    Passes->getContext().printStatistics(llvm::errs());
  if (!Changed)
    return Errors.failInput(Changed.takeError(), InputPrefix);
  if (CheckEquivalence)
    if (llvm::Error E = checkEquivalenceAround(*Before, *P, FileName))
      return Errors.failInput(std::move(E), InputPrefix);
  if (llvm::Error E = writeOutputAtomically(
          OutputFilename, [&](llvm::raw_ostream &OS) { render(OS, *P); }))
    return Errors.failInput(std::move(E));
  return ExitSuccess;
}
