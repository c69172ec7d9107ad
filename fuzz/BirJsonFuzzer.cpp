//===- BirJsonFuzzer.cpp - BIR JSON: load, lower, save, reload ------------===//
//
// The first byte picks the load options (--lnc, --target) and the backend
// options; the rest is a program document. A document that loads goes
// through lnc_splitter, lower_local_collectives and insert_ptcom_flat; a pass
// may refuse the program with an error, but what a pass returns must verify.
// The result is saved, and the saved text must load again and save to the
// same bytes (docs/bir.md: saving a loaded program twice gives identical
// bytes).
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/PassManager.h"

using namespace loom;
using namespace loom::bir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  uint8_t Bits = fuzz::takeByte(Data, Size);
  LoadOptions Load;
  if (Bits & 1)
    Load.LncSize = (Bits & 2) ? 2 : 1;
  static constexpr Target Targets[] = {Target::Trn1, Target::Trn2,
                                       Target::Generic, Target::Trn2};
  if (Bits & 4)
    Load.Arch = Targets[(Bits >> 3) & 3];
  BackendOptions Opts;
  Opts.EnableRemoteSemaphoreDMA = Bits & 32;
  Opts.EnablePTCOM = Bits & 64;
  Opts.SendRecvEngine = (Bits & 128) ? SendRecvEngineChoice::CostModel
                                     : SendRecvEngineChoice::Budget;

  auto P = parseProgram(fuzz::asText(Data, Size), "fuzz.json", Load);
  if (!P) {
    fuzz::ignore(P.takeError());
    return 0;
  }
  PassManagerOptions PMOpts;
  PMOpts.VerifyEach = true;
  auto PM = PassManager::fromNames(
      {"lnc_splitter", "lower_local_collectives", "insert_ptcom_flat"}, Opts,
      PMOpts);
  if (!PM)
    fuzz::fail("a registered pass cannot be created",
               llvm::toString(PM.takeError()));
  if (llvm::Expected<bool> Changed = PM->run(*P); !Changed) {
    llvm::Error E = Changed.takeError();
    // A pass may refuse its input; a program that does not verify after a
    // pass is a bug.
    if (E.isA<PassVerifyError>())
      fuzz::fail("the program does not verify after a pass",
                 llvm::toString(std::move(E)) + "\n--- input:\n" +
                     std::string(fuzz::asText(Data, Size)));
    fuzz::ignore(std::move(E));
    return 0;
  }
  std::string Saved = formatProgram(*P);
  auto Again = parseProgram(Saved, "saved.json");
  if (!Again)
    fuzz::fail("a saved program does not load",
               llvm::toString(Again.takeError()) + "\n--- saved:\n" + Saved);
  std::string Resaved = formatProgram(*Again);
  if (Saved != Resaved)
    fuzz::fail("saving the reloaded program changed the bytes",
               "--- first:\n" + Saved + "--- second:\n" + Resaved);
  return 0;
}
