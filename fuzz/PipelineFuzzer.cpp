//===- PipelineFuzzer.cpp - --passes= lists and the backend pipeline ------===//
//
// The first byte picks the backend options and the target; the rest is the
// value of a `--passes=` flag, split at commas as the tools' option parser
// splits it. Every name is looked up in both registries (bir-opt's and
// hlo-opt's): an unknown name is an error listing the valid ones. The passes
// found then run in the given order, repeats included, on a small fixed
// program and a small fixed module (examples/bir/sendrecv_swap.json and
// fuzz/inputs/pipeline.hlo); a pass may refuse its input, but what it
// returns must verify. The default pipeline for the options is built,
// printed and instantiated too.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/bir/passes/Pipeline.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace loom;

static std::string BirText, HloText;

static std::string readOrDie(const char *Path) {
  auto B = llvm::MemoryBuffer::getFile(Path);
  if (!B)
    fuzz::fail((llvm::Twine("cannot read ") + Path).str());
  return (*B)->getBuffer().str();
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  hlo::RegisterAllHloPasses();
  BirText = readOrDie(LOOM_SOURCE_DIR "/examples/bir/sendrecv_swap.json");
  HloText = readOrDie(LOOM_SOURCE_DIR "/fuzz/inputs/pipeline.hlo");
  return 0;
}

static void runBir(llvm::ArrayRef<llvm::StringRef> Names,
                   const bir::BackendOptions &Opts) {
  std::vector<std::string> NameList(Names.begin(), Names.end());
  bir::PassManagerOptions PMOpts;
  PMOpts.VerifyEach = true;
  auto PM = bir::PassManager::fromNames(NameList, Opts, PMOpts);
  if (!PM) {
    fuzz::ignore(PM.takeError());
    return;
  }
  auto Prog = bir::parseProgram(BirText, "sendrecv_swap.json");
  if (!Prog)
    fuzz::fail("the fixed program does not load",
               llvm::toString(Prog.takeError()));
  if (llvm::Expected<bool> Changed = PM->run(*Prog); !Changed) {
    llvm::Error E = Changed.takeError();
    if (E.isA<bir::PassVerifyError>())
      fuzz::fail("the program does not verify after a pass",
                 llvm::toString(std::move(E)));
    fuzz::ignore(std::move(E));
  }
}

static void runHlo(llvm::ArrayRef<llvm::StringRef> Names) {
  auto M = hlo::ParseHloModule(HloText, "pipeline.hlo");
  if (!M)
    fuzz::fail("the fixed module does not parse",
               llvm::toString(M.takeError()));
  for (llvm::StringRef Name : Names) {
    if (Name.empty()) // `--passes=` means no pass in hlo-opt
      continue;
    auto P = hlo::CreateHloPass(Name);
    if (!P) {
      fuzz::ignore(P.takeError());
      return;
    }
    llvm::Expected<bool> Changed = (*P)->Run(**M);
    if (!Changed) {
      fuzz::ignore(Changed.takeError());
      return;
    }
    if (llvm::Error E = hlo::VerifyHloModule(**M))
      fuzz::fail(("the module does not verify after " + Name).str(),
                 llvm::toString(std::move(E)));
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  uint8_t Bits = fuzz::takeByte(Data, Size);
  bir::BackendOptions Opts;
  Opts.EnableRemoteSemaphoreDMA = Bits & 1;
  Opts.EnablePTCOM = Bits & 2;
  Opts.RunSharedAllocationBeforePostSched = Bits & 4;
  Opts.SendRecvEngine = (Bits & 8) ? bir::SendRecvEngineChoice::CostModel
                                   : bir::SendRecvEngineChoice::Budget;
  static constexpr uint64_t Budgets[] = {1024, 0, 1, UINT64_MAX};
  Opts.SendRecvToGpsimdMaxBpp = Budgets[(Bits >> 4) & 3];
  static constexpr bir::Target Targets[] = {bir::Target::Trn2, bir::Target::Trn1,
                                            bir::Target::Generic,
                                            bir::Target::Trn2};
  bir::Target T = Targets[(Bits >> 6) & 3];

  auto Entries = bir::buildDefaultPipeline(Opts, T);
  if (Entries) {
    std::string Printed;
    llvm::raw_string_ostream OS(Printed);
    bir::printPipeline(OS, *Entries);
    auto PM = bir::PassManager::fromPipeline(*Entries, Opts);
    if (!PM)
      fuzz::fail("the default pipeline names a pass that cannot be created",
                 llvm::toString(PM.takeError()));
  } else {
    fuzz::ignore(Entries.takeError());
  }

  // A list of a few hundred passes is plenty; longer ones only repeat.
  llvm::SmallVector<llvm::StringRef, 16> Names;
  fuzz::asText(Data, std::min<size_t>(Size, 512))
      .split(Names, ',', /*MaxSplit=*/64, /*KeepEmpty=*/true);
  runBir(Names, Opts);
  runHlo(Names);
  return 0;
}
