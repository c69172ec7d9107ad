//===- BirSimFuzzer.cpp - bir-sim on small programs -----------------------===//
//
// A program that loads is split if needed and simulated with 10^4
// instruction executions per core and 64 MiB of storage; the first byte
// picks the seed, the race check and whether one random schedule runs too.
// Whatever the program, the simulation ends with a report or an error (race,
// deadlock, limit), never a crash or a hang.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/bir/json/BirJson.h"
#include "loom/bir/sim/Simulator.h"

using namespace loom;
using namespace loom::bir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  uint8_t Bits = fuzz::takeByte(Data, Size);
  auto P = parseProgram(fuzz::asText(Data, Size), "fuzz.json");
  if (!P) {
    fuzz::ignore(P.takeError());
    return 0;
  }
  if (llvm::Error E = sim::splitIfNeeded(*P)) {
    fuzz::ignore(std::move(E));
    return 0;
  }
  sim::SimOptions Opts;
  Opts.Seed = Bits & 7;
  Opts.RaceCheck = !(Bits & 8);
  Opts.Schedules = (Bits & 16) ? 1 : 0;
  Opts.MaxSteps = 10000;
  Opts.MaxWork = uint64_t(1) << 28;
  Opts.MaxMemory = uint64_t(64) << 20;
  Opts.RecordTrace = Bits & 32;
  auto R = sim::simulate(*P, Opts);
  if (!R) {
    fuzz::ignore(R.takeError());
    return 0;
  }
  std::string Report;
  llvm::raw_string_ostream OS(Report);
  sim::printReport(OS, *R, Bits & 64);
  if (Opts.RecordTrace)
    sim::writeTrace(OS, *R);
  for (const sim::LocationState &L : R->Final)
    (void)sim::toNpy(L);
  return 0;
}
