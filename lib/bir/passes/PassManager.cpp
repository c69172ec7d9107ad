//===- PassManager.cpp - Runs backend passes over a program ---------------===//
//
// The loop every tool used to write itself: run, report a failure with the
// pass's name, print, verify; plus timing, remarks and statistics, which
// the passes reach through their PassContext.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/passes/PassManager.h"

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Printer.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>

namespace loom::bir {

// The helpers of BirPass live here, next to the context they write to.

bool BirPass::wantsRemarks() const {
  return Context && Context->getRemarkStream();
}

void BirPass::remark(const Instruction &I, const llvm::Twine &Text) {
  if (!wantsRemarks())
    return;
  const Module *M = I.getModule();
  llvm::raw_ostream &OS = *Context->getRemarkStream();
  OS << name() << ": ";
  if (M)
    OS << M->getName() << "/core" << M->getNeuronCoreId() << "/";
  OS << I.getName() << ": " << Text << "\n";
}

void BirPass::remark(const llvm::Twine &Text) {
  if (wantsRemarks())
    *Context->getRemarkStream() << name() << ": " << Text << "\n";
}

void BirPass::addStatistic(llvm::StringRef Description, uint64_t N) {
  if (Context)
    Context->addStatistic(name(), Description, N);
}

char PassVerifyError::ID = 0;

void PassVerifyError::log(llvm::raw_ostream &OS) const { OS << Message; }

void PassContext::addStatistic(llvm::StringRef Pass,
                               llvm::StringRef Description, uint64_t N) {
  Stats[{Pass.str(), Description.str()}] += N;
}

void PassContext::printStatistics(llvm::raw_ostream &OS) const {
  if (Stats.empty())
    return;
  size_t ValueWidth = 1, NameWidth = 1;
  for (const auto &[Key, Value] : Stats) {
    ValueWidth = std::max(ValueWidth, std::to_string(Value).size());
    NameWidth = std::max(NameWidth, Key.first.size());
  }
  std::string Rule = "===" + std::string(73, '-') + "===\n";
  OS << Rule << "                          ... Statistics Collected ...\n"
     << Rule << "\n";
  for (const auto &[Key, Value] : Stats)
    OS << llvm::right_justify(std::to_string(Value), ValueWidth) << " "
       << llvm::left_justify(Key.first, NameWidth) << " - " << Key.second
       << "\n";
  OS << "\n";
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point Start) {
  return std::chrono::duration<double>(Clock::now() - Start).count();
}

/// LLVM's -time-passes layout, wall clock only (as hlo-opt's).
void printTimingReport(
    llvm::raw_ostream &OS,
    llvm::ArrayRef<std::pair<std::string, double>> Rows) {
  double Total = 0;
  for (const auto &Row : Rows)
    Total += Row.second;
  std::string Title = "BIR pass execution timing report";
  std::string Rule = "===" + std::string(73, '-') + "===\n";
  OS << Rule;
  OS.indent((79 - Title.size()) / 2) << Title << "\n";
  OS << Rule;
  OS << llvm::format("  Total Execution Time: %.4f seconds (wall clock)\n\n",
                     Total);
  OS << "   ---Wall Time---  --- Name ---\n";
  auto Line = [&](double Seconds, llvm::StringRef Name) {
    double Percent = Total > 0 ? 100.0 * Seconds / Total : 0.0;
    OS << llvm::format("  %8.4f (%5.1f%%)  ", Seconds, Percent) << Name
       << "\n";
  };
  for (const auto &Row : Rows)
    Line(Row.second, Row.first);
  Line(Total, "Total");
  OS << "\n";
  OS.flush();
}

/// Every instruction of the program as "subgraph:core:name", which is
/// unique (names are unique in a module), for counting what a pass added
/// and removed.
llvm::StringSet<> instructionKeys(const Program &P) {
  llvm::StringSet<> Keys;
  for (const auto &M : P) {
    std::string Prefix = std::to_string(M->getSubgraphId()) + ":" +
                         std::to_string(M->getNeuronCoreId()) + ":";
    M->walk([&](Instruction &I) { Keys.insert(Prefix + I.getName().str()); });
  }
  return Keys;
}

} // namespace

PassManager::PassManager(PassManagerOptions O)
    : Opts(std::move(O)),
      Context(std::make_unique<PassContext>(Opts.RemarkStream)) {}

llvm::Expected<PassManager>
PassManager::fromNames(llvm::ArrayRef<std::string> Names,
                       const BackendOptions &Backend, PassManagerOptions Opts) {
  PassManager PM(std::move(Opts));
  for (const std::string &Name : Names) {
    llvm::Expected<std::unique_ptr<BirPass>> P = createPass(Name, Backend);
    if (!P)
      return P.takeError();
    PM.addPass(std::move(*P));
  }
  return PM;
}

llvm::Expected<PassManager>
PassManager::fromPipeline(llvm::ArrayRef<PipelineEntry> Pipeline,
                          const BackendOptions &Backend,
                          PassManagerOptions Opts) {
  llvm::Expected<std::vector<std::unique_ptr<BirPass>>> Passes =
      createPipelinePasses(Pipeline, Backend);
  if (!Passes)
    return Passes.takeError();
  PassManager PM(std::move(Opts));
  for (std::unique_ptr<BirPass> &P : *Passes)
    PM.addPass(std::move(P));
  return PM;
}

llvm::Expected<bool> PassManager::runOnLaunch(Launch &L) {
  bool Changed = false;
  for (LaunchDevice &D : L.Devices) {
    llvm::Expected<bool> DeviceChanged = run(D.Modules);
    if (!DeviceChanged)
      return makeError("device " + llvm::Twine(D.Device) + ": " +
                       llvm::toString(DeviceChanged.takeError()));
    Changed |= *DeviceChanged;
  }
  return Changed;
}

llvm::Expected<bool> PassManager::run(Program &P) {
  llvm::raw_ostream &PrintOS = Opts.PrintStream ? *Opts.PrintStream
                                                : llvm::errs();
  llvm::raw_ostream &TimingOS = Opts.TimingStream ? *Opts.TimingStream
                                                  : llvm::errs();
  std::vector<std::pair<std::string, double>> Rows;
  double VerifySeconds = 0;
  // The report is printed on every way out: a slow pass that then fails is
  // exactly when the numbers matter.
  auto Finish = [&](llvm::Expected<bool> Result) -> llvm::Expected<bool> {
    if (Opts.TimePasses) {
      if (Opts.VerifyEach || Opts.VerifyAtEnd)
        Rows.push_back({"bir-verifier", VerifySeconds});
      printTimingReport(TimingOS, Rows);
    }
    return Result;
  };
  auto Verify = [&]() {
    Clock::time_point Start = Clock::now();
    llvm::Error E = verifyProgram(P);
    VerifySeconds += secondsSince(Start);
    return E;
  };

  bool Changed = false;
  for (const std::unique_ptr<BirPass> &Pass : Passes) {
    if (llvm::is_contained(Opts.PrintBefore, Pass->name())) {
      PrintOS << "// -----// IR before " << Pass->name() << " //----- //\n";
      printProgram(PrintOS, P);
    }
    std::optional<llvm::StringSet<>> Before;
    if (Opts.Statistics)
      Before = instructionKeys(P);
    Pass->setContext(Context.get());
    Clock::time_point Start = Clock::now();
    llvm::Expected<bool> PassChanged = Pass->run(P);
    Rows.push_back({Pass->name().str(), secondsSince(Start)});
    Pass->setContext(nullptr);
    if (!PassChanged)
      return Finish(makeError("pass '" + Pass->name() + "' failed: " +
                              llvm::toString(PassChanged.takeError())));
    Changed |= *PassChanged;
    if (Before) {
      llvm::StringSet<> After = instructionKeys(P);
      uint64_t Added = 0, Removed = 0;
      for (const auto &K : After)
        Added += !Before->count(K.getKey());
      for (const auto &K : *Before)
        Removed += !After.count(K.getKey());
      if (Added)
        Context->addStatistic(Pass->name(), "instructions added", Added);
      if (Removed)
        Context->addStatistic(Pass->name(), "instructions removed", Removed);
    }
    if (Opts.PrintAfterAll) {
      PrintOS << "// -----// IR after " << Pass->name()
              << (*PassChanged ? " (changed)" : " (no change)")
              << " //----- //\n";
      printProgram(PrintOS, P);
    }
    if (Opts.VerifyEach)
      if (llvm::Error E = Verify())
        return Finish(llvm::make_error<PassVerifyError>(
            ("after pass '" + Pass->name() + "': " +
             llvm::toString(std::move(E)))
                .str()));
  }
  // --verify-each has already checked the result of the last pass.
  if (!Passes.empty() && !Opts.VerifyEach && Opts.VerifyAtEnd)
    if (llvm::Error E = Verify())
      return Finish(llvm::make_error<PassVerifyError>(
          "after the passes: " + llvm::toString(std::move(E))));
  return Finish(Changed);
}

} // namespace loom::bir
