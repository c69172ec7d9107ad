//===- bir-sim.cpp - Simulate a BIR program on the cores of a logical core ===//
//
// bir-sim [options] PROGRAM.json
// bir-sim --check-equivalence BEFORE.json AFTER.json
//
// Loads and verifies the program like bir-opt, splits it per core with
// lnc_splitter when it is not split yet, simulates it (docs/simulator.md)
// and prints the per-core report. Races, deadlocks, uninitialized reads,
// exceeded limits and differing random schedules fail the run. Exit status:
// 0 success, 1 bad input or a failed check, 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/json/BirJson.h"
#include "loom/bir/sim/Simulator.h"
#include "loom/bir/sim/ToolOptions.h"
#include "loom/support/Error.h"
#include "loom/support/Npy.h"
#include "loom/support/InputFile.h"
#include "loom/support/OutputFile.h"

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

constexpr int ExitBadInput = 1;
constexpr int ExitBadUsage = 2;

cl::OptionCategory Cat("bir-sim options");

cl::list<std::string> Inputs(cl::Positional, cl::desc("<program.json>"),
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
                         "core) or C:NAME=FILE.npy (core C)"),
                cl::value_desc("[C:]NAME=FILE"), cl::cat(Cat));
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
cl::opt<uint64_t> MaxMemory("max-memory",
                            cl::desc("Cap on the simulated storage, in bytes"),
                            cl::init(sim::SimOptions().MaxMemory),
                            cl::cat(Cat));
cl::opt<uint64_t> MaxWork(
    "max-work",
    cl::desc("Cap on a core's work: bytes its executions read and write, "
             "plus matmul multiply-adds"),
    cl::init(sim::SimOptions().MaxWork), cl::cat(Cat));
cl::opt<std::string> TraceFile("trace",
                               cl::desc("Write the timeline in the Chrome "
                                        "trace event format"),
                               cl::value_desc("FILE.json"), cl::cat(Cat));
enum class ReportKind { Text, Json };
cl::opt<ReportKind> Report(
    "report", cl::desc("Per-core report on stdout"),
    cl::values(clEnumValN(ReportKind::Text, "text", "text (default)"),
               clEnumValN(ReportKind::Json, "json", "JSON")),
    cl::init(ReportKind::Text), cl::cat(Cat));
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
    "  program before and after a lowering.\n"
    "  Exit status: 0 success, 1 bad input or a failed check, 2 bad usage.\n";

int failUsage(const llvm::Twine &Msg) {
  llvm::errs() << "bir-sim: error: " << Msg << "\n"
               << "Try 'bir-sim --help' for usage.\n";
  return ExitBadUsage;
}

/// Prints every error with its kind's prefix.
int failRun(llvm::Error E) {
  llvm::handleAllErrors(
      std::move(E),
      [](const sim::SimFailure &F) {
        const char *Prefix = "error";
        switch (F.getKind()) {
        case sim::FailureKind::Race: Prefix = "race"; break;
        case sim::FailureKind::Deadlock: Prefix = "deadlock"; break;
        case sim::FailureKind::Nondeterminism: Prefix = "nondeterminism"; break;
        default: break;
        }
        if (F.getKind() == sim::FailureKind::Race) {
          llvm::SmallVector<llvm::StringRef, 4> Lines;
          llvm::StringRef(F.getMessage()).split(Lines, '\n');
          for (llvm::StringRef L : Lines)
            llvm::errs() << "bir-sim: " << Prefix << ": " << L << "\n";
          return;
        }
        llvm::errs() << "bir-sim: " << Prefix << ": " << F.getMessage() << "\n";
      },
      [](const llvm::ErrorInfoBase &EI) {
        llvm::errs() << "bir-sim: error: " << EI.message() << "\n";
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

llvm::Expected<Program> load(llvm::StringRef Path) {
  llvm::Expected<std::string> Text = readInput(Path);
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

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Cat);
  // The parameter table is another file's static data: read it once main runs.
  Common.CostParams.setDescription(costHelp());
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &OS) { OS << "bir-sim (loom)\n"; });
  std::string ParseErrors;
  llvm::raw_string_ostream ParseErrorStream(ParseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, Overview, &ParseErrorStream)) {
    llvm::errs() << ParseErrorStream.str()
                 << "Try 'bir-sim --help' for usage.\n";
    return ExitBadUsage;
  }
  unsigned Want = CheckEquivalence ? 2 : 1;
  if (Inputs.size() != Want)
    return failUsage(CheckEquivalence
                         ? "--check-equivalence needs BEFORE.json and AFTER.json"
                         : "name one program (or - for stdin)");
  if (llvm::Error E = Common.checkLncSize(Target::Generic))
    return failUsage(llvm::toString(std::move(E)));

  sim::SimOptions Opts;
  Opts.Seed = Seed;
  Opts.Schedules = Schedules;
  Opts.RaceCheck = !NoRaceCheck;
  Opts.MaxSteps = MaxSteps;
  Opts.MaxMemory = MaxMemory;
  Opts.MaxWork = MaxWork;
  Opts.RecordTrace = !TraceFile.empty();
  for (const std::string &C : CollectiveNames)
    Opts.CollectiveNames.push_back(C);
  if (llvm::Error E = Common.applyCostParams(Opts.Cost))
    return failUsage(llvm::toString(std::move(E)));
  for (llvm::StringRef In : InputValues) {
    auto [Spec, File] = In.split('=');
    if (File.empty() || Spec.empty())
      return failUsage("--input " + In + ": expected [C:]NAME=FILE.npy");
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
    Opts.FileName = Inputs[1];
    std::string Log;
    llvm::raw_string_ostream LogStream(Log);
    if (llvm::Error E = sim::checkEquivalence(*Before, *After, Opts, LogStream))
      return failRun(std::move(E));
    llvm::SmallVector<llvm::StringRef, 4> Lines;
    llvm::StringRef(LogStream.str()).split(Lines, '\n', -1, false);
    for (llvm::StringRef Line : Lines)
      llvm::outs() << "bir-sim: " << Line << '\n';
    return 0;
  }

  llvm::Expected<Program> P = load(Inputs[0]);
  if (!P)
    return failRun(P.takeError());
  Opts.FileName = Inputs[0] == "-" ? "<stdin>" : Inputs[0];
  auto WriteTrace = [&](const sim::SimResult &R) -> llvm::Error {
    if (TraceFile.empty())
      return llvm::Error::success();
    std::string S;
    llvm::raw_string_ostream OS(S);
    sim::writeTrace(OS, R);
    return writeOutputAtomically(TraceFile, OS.str());
  };
  sim::SimResult Partial;
  llvm::Expected<sim::SimResult> R = sim::simulate(*P, Opts, &Partial);
  if (!R) {
    // The timeline up to a race or a deadlock is what explains it.
    if (!Partial.Slices.empty())
      if (llvm::Error E = WriteTrace(Partial))
        llvm::consumeError(std::move(E));
    return failRun(R.takeError());
  }
  if (llvm::Error E = writeDumps(*R))
    return failRun(std::move(E));
  if (llvm::Error E = WriteTrace(*R))
    return failRun(std::move(E));
  sim::printReport(llvm::outs(), *R, Report == ReportKind::Json);
  return 0;
}
