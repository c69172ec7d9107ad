//===- HloToBirFuzzer.cpp - hlo-to-bir --check on small modules -----------===//
//
// What `hlo-to-bir --check` does, on every module that verifies and that
// the interpreter runs under HloEvalFuzzer's small limits (every value at
// most 2^14 elements, 64 while iterations, 64 MiB live, at most 8
// devices): lower it at lnc 1 or 2 (bit 0 of the first byte), run the
// default backend pipeline on every device, verify the launch, simulate it
// and compare with the interpreter on the same inputs (seed: the first
// byte). A refusal by the code generator, and a simulation that stops at
// a limit, are allowed; a pass that fails on a generated program, a launch
// that does not verify, a race, a deadlock or a nondeterministic result in
// the simulation, an output not written, and outputs that differ from the
// interpreter's are findings: a wrong program (docs/robustness.md).
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/bir/ir/Launch.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/bir/passes/Pipeline.h"
#include "loom/bir/sim/Simulator.h"
#include "loom/codegen/Codegen.h"
#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/launch/LaunchRunner.h"

using namespace loom;

namespace {

hlo::EvalOptions smallLimits() {
  hlo::EvalOptions Limits;
  Limits.max_elements_per_value = int64_t{1} << 14;
  Limits.max_while_iterations = 64;
  Limits.max_live_bytes = int64_t{64} << 20;
  Limits.max_call_depth = 64;
  return Limits;
}

/// Whether the interpreter runs M within the limits: only then is the
/// module small enough to lower and simulate here, and a reference exists.
bool interpreterRuns(const hlo::HloModule &M, uint8_t Seed,
                     const hlo::EvalOptions &Limits) {
  hlo::SpmdLayout Layout = hlo::SpmdLayout::FromModule(M);
  if (Layout.replica_count < 1 || Layout.num_partitions < 1 ||
      Layout.num_devices() > 8)
    return false;
  auto Args = hlo::MakeRandomArguments(M, Seed, Limits);
  if (!Args) {
    fuzz::ignore(Args.takeError());
    return false;
  }
  auto Results = hlo::RunSpmd(M, *Args, Limits, /*stats=*/nullptr);
  if (!Results) {
    fuzz::ignore(Results.takeError());
    return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  uint8_t Bits = fuzz::takeByte(Data, Size);
  auto M = hlo::ParseHloModule(fuzz::asText(Data, Size), "fuzz.hlo");
  if (!M) {
    fuzz::ignore(M.takeError());
    return 0;
  }
  if (llvm::Error E = hlo::VerifyHloModule(**M)) {
    fuzz::ignore(std::move(E));
    return 0;
  }
  hlo::EvalOptions Limits = smallLimits();
  if (!interpreterRuns(**M, Bits, Limits))
    return 0;

  codegen::CodegenOptions CO;
  CO.LncSize = (Bits & 1) ? 2 : 1;
  auto L = codegen::lowerToLaunch(**M, CO);
  if (!L) {
    fuzz::ignore(L.takeError());
    return 0;
  }
  bir::BackendOptions BO;
  auto Entries = bir::buildDefaultPipeline(BO, CO.Arch);
  if (!Entries)
    fuzz::fail("the default pipeline does not build",
               llvm::toString(Entries.takeError()));
  auto PM = bir::PassManager::fromPipeline(*Entries, BO);
  if (!PM)
    fuzz::fail("the default pipeline does not instantiate",
               llvm::toString(PM.takeError()));
  if (llvm::Expected<bool> Changed = PM->runOnLaunch(*L); !Changed)
    fuzz::fail("the backend pipeline fails on a generated launch",
               llvm::toString(Changed.takeError()));
  if (llvm::Error E = bir::verifyLaunch(*L))
    fuzz::fail("a generated launch does not verify", llvm::toString(std::move(E)));

  launch::CheckOptions O;
  O.Seed = Bits;
  O.Sim.Seed = Bits;
  O.Sim.MaxSteps = 100000;
  O.Sim.MaxWork = uint64_t(1) << 28;
  O.Sim.MaxMemory = uint64_t(256) << 20;
  O.Sim.RecordTrace = false;
  O.Eval = Limits;
  std::string Printed;
  llvm::raw_string_ostream Out(Printed);
  llvm::Expected<bool> Same = launch::checkAgainstHlo(**M, *L, O, Out);
  if (!Same) {
    bool Fault = false;
    std::string Why;
    llvm::handleAllErrors(
        Same.takeError(),
        [&](const bir::sim::SimFailure &F) {
          using K = bir::sim::FailureKind;
          Fault = F.getKind() == K::Race || F.getKind() == K::Deadlock ||
                  F.getKind() == K::Nondeterminism;
          Why = F.getMessage();
        },
        [&](const llvm::ErrorInfoBase &E) {
          // The reference run was checked above; what else fails is the
          // launch's bindings or outputs (a byte not written, ...).
          Why = E.message();
          Fault = !llvm::StringRef(Why).startswith("the interpreter fails");
        });
    if (Fault)
      fuzz::fail("the simulation of a generated launch fails", Why);
    return 0;
  }
  if (!*Same)
    fuzz::fail("a generated launch's outputs differ from the interpreter's",
               Out.str());
  return 0;
}
