//===- bir-sim.cpp - Simulate a BIR program on the cores of a logical core ===//
//
// bir-sim [options] PROGRAM.json        ('-': standard input)
// bir-sim --check-equivalence BEFORE.json AFTER.json
// bir-sim [options] LAUNCH.json [--input=DEVICE:PARAM=FILE.npy]... [--output-dir=DIR]
// bir-sim --against-hlo=MODULE.hlo LAUNCH.json
//
// Loads and verifies the program like bir-opt, splits it per core with
// lnc_splitter when it is not split yet, simulates it (docs/simulator.md)
// and prints the per-core report. A launch document runs every core of every
// device together, its entry parameters given hlo-run's values
// (lib/launch). Races, deadlocks, uninitialized reads,
// exceeded limits and differing random schedules fail the run. Exit status:
// 0 success, 1 bad input or a failed check, 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/json/BirJson.h"
#include "loom/bir/json/LaunchJson.h"
#include "loom/bir/sim/Simulator.h"
#include "loom/hlo/proto/HloModuleLoader.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/launch/LaunchRunner.h"
#include "loom/bir/sim/SimRunToolOptions.h"
#include "loom/bir/sim/ToolOptions.h"
#include "loom/support/Error.h"
#include "loom/support/Npy.h"
#include "loom/support/InputFile.h"
#include "loom/support/OutputFile.h"
#include "loom/tools/ToolErrors.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace loom;
using namespace loom::bir;
namespace cl = llvm::cl;

namespace {

using tools::ExitBadInput;
using tools::ExitBadUsage;
using tools::ExitSuccess;

const tools::ToolErrors Errors("bir-sim");

cl::OptionCategory Cat("bir-sim options");

cl::list<std::string> Inputs(
    cl::Positional,
    cl::desc("<program.json | -> (--check-equivalence: <BEFORE.json> <AFTER.json>)"),
    cl::cat(Cat));
cl::opt<bool> CheckEquivalence(
    "check-equivalence",
    cl::desc("Compare BEFORE.json and AFTER.json: run both on the same "
             "inputs and compare every location of BEFORE at exit"),
    cl::cat(Cat));
sim::ToolOptions Common(Cat, "Set a cost-model parameter");
cl::opt<uint64_t> Seed("seed",
                       cl::desc("Seed of the random inputs and schedules"),
                       cl::init(0), cl::cat(Cat));
cl::list<std::string>
    InputValues("input",
                cl::desc("Initial value of a location: NAME=FILE.npy (every "
                         "core) or C:NAME=FILE.npy (core C); for a launch, "
                         "of an entry parameter: DEVICE:PARAM=FILE.npy "
                         "(DEVICE a number or *, PARAM a number or name), "
                         "as hlo-run takes it"),
                cl::value_desc("[C:]NAME=FILE"), cl::cat(Cat));
cl::opt<std::string> AgainstHlo(
    "against-hlo",
    cl::desc("Launch only: run MODULE.hlo in hlo-run's interpreter and the "
             "launch on the same inputs and compare every output of every "
             "device"),
    cl::value_desc("MODULE.hlo"), cl::cat(Cat));
cl::opt<std::string> HloModuleFile(
    "hlo",
    cl::desc("Launch only: the module the launch was compiled from, so that "
             "parameters get hlo-run's values exactly (sharding={replicated} "
             "included)"),
    cl::value_desc("MODULE.hlo"), cl::cat(Cat));
cl::opt<bool> SameInputs(
    "same-inputs",
    cl::desc("Launch only: every parameter gets device 0's values on every "
             "device (hlo-run --same-inputs)"),
    cl::cat(Cat));
cl::opt<std::string> OutputDir(
    "output-dir",
    cl::desc("Launch only: write every device's HLO outputs as hlo-run "
             "--output-dir does"),
    cl::value_desc("DIR"), cl::cat(Cat));
cl::list<std::string>
    Dumps("dump",
          cl::desc("Write a location's final contents as .npy: NAME (every "
                   "core, to core<C>.NAME.npy), C:NAME, or [C:]NAME=FILE"),
          cl::value_desc("[C:]NAME[=FILE]"), cl::cat(Cat));
cl::opt<std::string> DumpAll("dump-all",
                             cl::desc("Write every location's final contents "
                                      "into DIR"),
                             cl::value_desc("DIR"), cl::cat(Cat));
cl::opt<unsigned> Schedules("schedules",
                            cl::desc("Random legal interleavings to run "
                                     "besides the deterministic one"),
                            cl::init(0), cl::cat(Cat));
cl::opt<bool> NoRaceCheck("no-race-check", cl::desc("Skip race detection"),
                          cl::cat(Cat));
cl::opt<uint64_t> MaxSteps("max-steps",
                           cl::desc("Instruction executions per core before "
                                    "giving up"),
                           cl::init(sim::SimOptions().MaxSteps), cl::cat(Cat));
sim::SimRunToolOptions SimRun(Cat, "");
/// The --cost help: every parameter's name and unit.
const std::string &costHelp() {
  static const std::string Help = [] {
    std::string S = "Set a cost-model parameter (docs/cost-model.md):";
    for (const analysis::CostModelParamInfo &I :
         analysis::getCostModelParamInfos())
      S += (" " + I.Name + " (" + I.Unit + "),").str();
    S.pop_back();
    return S;
  }();
  return Help;
}

cl::list<std::string>
    CollectiveNames("collective",
                    cl::desc("Attribute instructions named NAME_... to "
                             "collective NAME in the report"),
                    cl::value_desc("NAME"), cl::cat(Cat));

const char Overview[] =
    "simulates a BIR program on the cores of its logical core\n\n"
    "  Runs every core's module with exact element semantics, checks for\n"
    "  races, deadlocks and uninitialized reads, and prints the per-core\n"
    "  report (docs/simulator.md). With --check-equivalence, compares a\n"
    "  program before and after a lowering. A launch document (hlo-to-bir's\n"
    "  output) runs every core of every device together on hlo-run's inputs;\n"
    "  --against-hlo compares its outputs with hlo-run's.\n"
    "  Exit status: 0 success, 1 bad input or a failed check, 2 bad usage.\n";

/// Prints every error under its kind's label ("bir-sim: race: ...",
/// "bir-sim: deadlock: ...", otherwise "bir-sim: error: ..."), every line
/// of a message on its own.
int failRun(llvm::Error E) {
  llvm::handleAllErrors(
      std::move(E),
      [](const sim::SimFailure &F) {
        const char *Label = "error";
        switch (F.getKind()) {
        case sim::FailureKind::Race: Label = "race"; break;
        case sim::FailureKind::Deadlock: Label = "deadlock"; break;
        case sim::FailureKind::Nondeterminism: Label = "nondeterminism"; break;
        default: break;
        }
        Errors.printLabeled(Label, F.getMessage());
      },
      [](const llvm::ErrorInfoBase &EI) {
        Errors.printErrorMessage(EI.message());
      });
  return ExitBadInput;
}

/// "C:REST" -> (C, REST); "REST" -> (none, REST).
std::pair<std::optional<unsigned>, llvm::StringRef>
splitCore(llvm::StringRef S) {
  auto [Head, Tail] = S.split(':');
  unsigned C;
  if (!Tail.empty() && !Head.getAsInteger(10, C))
    return {C, Tail};
  return {std::nullopt, S};
}

llvm::Expected<Program> load(llvm::StringRef Path,
                             std::optional<std::string> Read = std::nullopt) {
  llvm::Expected<std::string> Text =
      Read ? llvm::Expected<std::string>(std::move(*Read)) : readInput(Path);
  if (!Text)
    return Text.takeError();
  LoadOptions Opts = Common.getLoadOptions();
  llvm::StringRef Name = Path == "-" ? llvm::StringRef("<stdin>") : Path;
  llvm::Expected<Program> P = parseProgram(*Text, Name, Opts);
  if (!P)
    return P.takeError();
  if (llvm::Error E = sim::splitIfNeeded(*P))
    return makeError(Name + ": " + llvm::toString(std::move(E)));
  return P;
}

std::string dumpName(const sim::LocationState &L) {
  std::string Prefix =
      L.Subgraph ? ("sg" + llvm::Twine(L.Subgraph) + ".").str() : "";
  if (!L.Core)
    return Prefix + "shared." + L.Name + ".npy";
  return (Prefix + "core" + llvm::Twine(*L.Core) + "." + L.Name + ".npy").str();
}

llvm::Error writeNpy(llvm::StringRef Path, const sim::LocationState &L) {
  return writeOutputAtomically(Path, serializeNpy(sim::toNpy(L)));
}

llvm::Error writeDumps(const sim::SimResult &R) {
  for (llvm::StringRef D : Dumps) {
    auto [Spec, File] = D.split('=');
    auto [Core, Name] = splitCore(Spec);
    if (Core && *Core >= R.NumCores)
      return makeError("--dump " + D + ": core " + llvm::Twine(*Core) +
                       " does not exist: the program has " + llvm::Twine(R.NumCores) +
                       (R.NumCores == 1 ? " core" : " cores"));
    bool Found = false;
    for (const sim::LocationState &L : R.Final) {
      if (L.Name != Name || (Core && L.Core && *L.Core != *Core))
        continue;
      if (!File.empty() && !Core && L.Core && *L.Core != 0)
        continue; // NAME=FILE names core 0's location
      Found = true;
      if (llvm::Error E = writeNpy(File.empty() ? dumpName(L) : File.str(), L))
        return E;
      if (!File.empty())
        break;
    }
    if (!Found)
      return makeError("--dump " + D + ": no such location");
  }
  if (!DumpAll.empty()) {
    if (std::error_code EC = llvm::sys::fs::create_directories(DumpAll))
      return makeError("--dump-all " + DumpAll + ": " + EC.message());
    for (const sim::LocationState &L : R.Final) {
      llvm::SmallString<256> Path(DumpAll);
      llvm::sys::path::append(Path, dumpName(L));
      if (llvm::Error E = writeNpy(Path, L))
        return E;
    }
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<hlo::HloModule>>
loadModule(llvm::StringRef Path, const Launch &L) {
  // Text or a serialized HloModuleProto, told apart by content
  // (docs/hlo-proto.md).
  auto M = hlo::LoadHloModuleFile(Path);
  if (!M)
    return M.takeError();
  // The launch was compiled for its size, which may override the header's
  // (hlo-to-bir --replica-count / --num-partitions, as in hlo-run).
  (*M)->SetHeaderAttribute("replica_count", std::to_string(L.ReplicaCount));
  (*M)->SetHeaderAttribute("num_partitions", std::to_string(L.NumPartitions));
  if (llvm::Error E = hlo::VerifyHloModule(**M))
    return makeError(Path + ": the module does not verify:\n" +
                     llvm::toString(std::move(E)));
  return M;
}

/// --trace: the run's timeline (up to a failure, which it explains).
llvm::Error writeTraceFile(const sim::SimResult &R) {
  if (SimRun.TraceFile.empty())
    return llvm::Error::success();
  std::string S;
  llvm::raw_string_ostream OS(S);
  sim::writeTrace(OS, R);
  return writeOutputAtomically(SimRun.TraceFile, OS.str());
}

/// A --collective that no instruction is named after does nothing: say so.
void warnUnusedCollectives(llvm::ArrayRef<const Program *> Programs) {
  for (const std::string &Name :
       sim::collectivesNamingNothing(
           Programs, std::vector<std::string>(CollectiveNames.begin(),
                                              CollectiveNames.end())))
    Errors.printWarning("--collective=" + Name + " names no collective: no "
                        "instruction is named " + Name + " or " + Name +
                        "_... (it does nothing)");
}

/// bir-sim LAUNCH.json: the launch mode (docs/simulator.md, "Running a
/// launch").
int runLaunchDocument(std::string Text, const sim::SimOptions &Opts) {
  llvm::StringRef Name = Opts.FileName;
  llvm::Expected<Launch> L = parseLaunch(Text, Name, Common.getLoadOptions());
  if (!L)
    return failRun(L.takeError());
  if (!Dumps.empty() || !DumpAll.empty())
    return Errors.failUsage("--dump and --dump-all take a program document, not a "
                     "launch (use --output-dir)");
  if (!AgainstHlo.empty() && !OutputDir.empty())
    return Errors.failUsage("--output-dir cannot be used with --against-hlo");
  std::vector<const Program *> Programs;
  for (const LaunchDevice &D : L->Devices)
    Programs.push_back(&D.Modules);
  warnUnusedCollectives(Programs);
  launch::CheckOptions LO;
  LO.Seed = Seed;
  LO.SameInputs = SameInputs;
  LO.Sim = Opts;
  for (llvm::StringRef In : InputValues) {
    std::optional<launch::ParameterInput> P = launch::parseParameterInput(In);
    if (!P)
      return Errors.failUsage("bad --input '" + In +
                       "': expected DEVICE:PARAM=FILE.npy for a launch");
    LO.Inputs.push_back(std::move(*P));
  }
  std::unique_ptr<hlo::HloModule> Module;
  llvm::StringRef ModulePath = !AgainstHlo.empty() ? llvm::StringRef(AgainstHlo)
                                                   : llvm::StringRef(HloModuleFile);
  if (!ModulePath.empty()) {
    auto M = loadModule(ModulePath, *L);
    if (!M)
      return failRun(M.takeError());
    Module = std::move(*M);
  }
  if (!AgainstHlo.empty()) {
    LO.Report = SimRun.reportGiven();
    LO.ReportJson = SimRun.reportJson();
    LO.TraceFile = SimRun.TraceFile;
    LO.Sim.RecordTrace = false;
    llvm::Expected<bool> Same =
        launch::checkAgainstHlo(*Module, *L, LO, llvm::outs());
    llvm::outs().flush();
    if (!Same)
      return failRun(Same.takeError());
    if (!*Same) {
      Errors.printErrorMessage((Name + " differs from " + AgainstHlo).str());
      return ExitBadInput;
    }
    return ExitSuccess;
  }
  auto Args = launch::makeLaunchArguments(*L, Module.get(), LO);
  if (!Args)
    return failRun(makeError(Name + ": " + llvm::toString(Args.takeError())));
  sim::SimResult Partial;
  llvm::Expected<launch::LaunchRun> Run =
      launch::runLaunch(*L, *Args, LO, &Partial);
  if (!Run) {
    if (!Partial.Slices.empty())
      if (llvm::Error E = writeTraceFile(Partial))
        llvm::consumeError(std::move(E));
    return failRun(Run.takeError());
  }
  if (!OutputDir.empty())
    if (llvm::Error E = launch::writeOutputs(OutputDir, *Run))
      return failRun(std::move(E));
  if (llvm::Error E = writeTraceFile(Run->Sim))
    return failRun(std::move(E));
  sim::printReport(llvm::outs(), Run->Sim, SimRun.reportJson());
  return ExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Cat);
  // The parameter table is another file's static data: read it once main runs.
  Common.CostParams.setDescription(costHelp());
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &OS) { OS << "bir-sim (loom)\n"; });
  if (!Errors.parseCommandLine(argc, argv, Overview))
    return ExitBadUsage;
  unsigned Want = CheckEquivalence ? 2 : 1;
  if (Inputs.size() != Want)
    return Errors.failUsage(CheckEquivalence
                         ? "--check-equivalence needs BEFORE.json and AFTER.json"
                         : "name one program (or - for stdin)");
  if (llvm::Error E = Common.checkLncSize(Target::Generic))
    return Errors.failUsage(llvm::toString(std::move(E)));

  sim::SimOptions Opts;
  Opts.Seed = Seed;
  Opts.Schedules = Schedules;
  Opts.RaceCheck = !NoRaceCheck;
  Opts.MaxSteps = MaxSteps;
  Opts.MaxMemory = SimRun.MaxMemory;
  Opts.MaxWork = SimRun.MaxWork;
  Opts.RecordTrace = !SimRun.TraceFile.empty();
  for (const std::string &C : CollectiveNames)
    Opts.CollectiveNames.push_back(C);
  if (llvm::Error E = Common.applyCostParams(Opts.Cost))
    return Errors.failUsage(llvm::toString(std::move(E)));
  // A launch document takes the launch mode; a program the options below.
  std::optional<std::string> Text;
  if (!CheckEquivalence) {
    llvm::Expected<std::string> T = readInput(Inputs[0]);
    bool LaunchFlags = !AgainstHlo.empty() || !OutputDir.empty() ||
                       SameInputs || !HloModuleFile.empty();
    if (T)
      Text = std::move(*T);
    else if (LaunchFlags)
      return failRun(T.takeError());
    else
      llvm::consumeError(T.takeError()); // load() reports it below
    Opts.FileName = Inputs[0] == "-" ? "<stdin>" : Inputs[0];
    if (Text && getDocumentKind(*Text) == DocumentKind::Launch)
      return runLaunchDocument(std::move(*Text), Opts);
  }
  if (!AgainstHlo.empty() || !OutputDir.empty() || SameInputs ||
      !HloModuleFile.empty())
    return Errors.failUsage("--against-hlo, --hlo, --output-dir and --same-inputs "
                     "need a launch document");
  for (llvm::StringRef In : InputValues) {
    auto [Spec, File] = In.split('=');
    if (File.empty() || Spec.empty())
      return Errors.failUsage("--input " + In + ": expected [C:]NAME=FILE.npy");
    auto [Core, Name] = splitCore(Spec);
    llvm::Expected<std::string> Bytes = readInput(File);
    if (!Bytes)
      return failRun(Bytes.takeError());
    llvm::Expected<NpyArray> A = parseNpy(*Bytes);
    if (!A)
      return failRun(makeError(File + ": " + llvm::toString(A.takeError())));
    Opts.Inputs.push_back({Core, Name.str(), std::move(*A)});
  }

  if (CheckEquivalence) {
    llvm::Expected<Program> Before = load(Inputs[0]);
    if (!Before)
      return failRun(Before.takeError());
    llvm::Expected<Program> After = load(Inputs[1]);
    if (!After)
      return failRun(After.takeError());
    warnUnusedCollectives({&*Before, &*After});
    Opts.FileName = Inputs[1];
    std::string Log;
    llvm::raw_string_ostream LogStream(Log);
    if (llvm::Error E = sim::checkEquivalence(*Before, *After, Opts, LogStream))
      return failRun(std::move(E));
    Errors.printNote(llvm::outs(), LogStream.str());
    return ExitSuccess;
  }

  llvm::Expected<Program> P = load(Inputs[0], std::move(Text));
  if (!P)
    return failRun(P.takeError());
  warnUnusedCollectives({&*P});
  sim::SimResult Partial;
  llvm::Expected<sim::SimResult> R = sim::simulate(*P, Opts, &Partial);
  if (!R) {
    // The timeline up to a race or a deadlock is what explains it.
    if (!Partial.Slices.empty())
      if (llvm::Error E = writeTraceFile(Partial))
        llvm::consumeError(std::move(E));
    return failRun(R.takeError());
  }
  if (llvm::Error E = writeDumps(*R))
    return failRun(std::move(E));
  if (llvm::Error E = writeTraceFile(*R))
    return failRun(std::move(E));
  sim::printReport(llvm::outs(), *R, SimRun.reportJson());
  return ExitSuccess;
}
