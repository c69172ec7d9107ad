//===- HloEvalFuzzer.cpp - The interpreter (hlo-run) on small modules -----===//
//
// A module that verifies runs on seeded random inputs under small limits:
// every value at most 2^14 elements, 64 while iterations, 64 MiB live, call
// depth 64, at most 8 devices. Whatever the module, the run must end, with
// results or with an error. The first byte is the input seed.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"

using namespace loom;
using namespace loom::hlo;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  uint8_t Seed = fuzz::takeByte(Data, Size);
  auto M = ParseHloModule(fuzz::asText(Data, Size), "fuzz.hlo");
  if (!M) {
    fuzz::ignore(M.takeError());
    return 0;
  }
  if (llvm::Error E = VerifyHloModule(**M)) {
    fuzz::ignore(std::move(E));
    return 0;
  }
  SpmdLayout Layout = SpmdLayout::FromModule(**M);
  if (Layout.replica_count < 1 || Layout.num_partitions < 1 ||
      Layout.replica_count > 8 || Layout.num_partitions > 8 ||
      Layout.num_devices() > 8)
    return 0;
  EvalOptions Limits;
  Limits.max_elements_per_value = int64_t{1} << 14;
  Limits.max_while_iterations = 64;
  Limits.max_live_bytes = int64_t{64} << 20;
  Limits.max_call_depth = 64;
  auto Args = MakeRandomArguments(**M, Seed, Limits);
  if (!Args) {
    fuzz::ignore(Args.takeError());
    return 0;
  }
  EvalStats Stats;
  auto Results = RunSpmd(**M, *Args, Limits, &Stats);
  if (!Results) {
    fuzz::ignore(Results.takeError());
    return 0;
  }
  for (const Literal &L : *Results)
    (void)L.ToString(16);
  return 0;
}
