//===- HloPassesFuzzer.cpp - Both Neuron passes under every option --------===//
//
// The first byte picks the options the NEURON_* variables set
// (loom/hlo/passes/NeuronEnv.h): bit 0 NEURON_COLLECTIVE_MATMUL_NXD, bit 1
// NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE, bits 2-3 the sb_to_sb threshold
// (default, 0, 1 MiB, huge), bit 4 --neuron-compat, bit 5 the order of the
// two passes. The rest is a module; when it verifies, both passes run, the
// result must verify and print, and the printed text must parse again.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"
#include "loom/hlo/passes/NeuronLoopedEinsumTokenReplacer.h"

#include <memory>

using namespace loom;
using namespace loom::hlo;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  uint8_t Bits = fuzz::takeByte(Data, Size);
  CollectiveMatmulOptions Opts;
  Opts.nxd = Bits & 1;
  Opts.permute_aggressive = Bits & 2;
  static constexpr int64_t Thresholds[] = {kDefaultSbToSbThresholdInMb, 0, 1,
                                           int64_t{1} << 40};
  Opts.sb_to_sb_threshold_in_mb = Thresholds[(Bits >> 2) & 3];
  Opts.compat = Bits & 16;

  auto M = ParseHloModule(fuzz::asText(Data, Size), "fuzz.hlo");
  if (!M) {
    fuzz::ignore(M.takeError());
    return 0;
  }
  if (llvm::Error E = VerifyHloModule(**M)) {
    fuzz::ignore(std::move(E));
    return 0;
  }
  std::unique_ptr<HloPassInterface> Passes[2] = {
      std::make_unique<NeuronLoopedEinsumReplacer>(Opts),
      std::make_unique<NeuronLoopedEinsumTokenReplacer>(Opts)};
  if (Bits & 32)
    std::swap(Passes[0], Passes[1]);
  for (auto &P : Passes) {
    llvm::Expected<bool> Changed = P->Run(**M);
    if (!Changed) {
      // A pass may refuse a module, with an error.
      fuzz::ignore(Changed.takeError());
      return 0;
    }
    if (llvm::Error E = VerifyHloModule(**M))
      fuzz::fail(("the module does not verify after " + P->name()).str(),
                 llvm::toString(std::move(E)) + "\n--- module:\n" +
                     (*M)->ToString());
  }
  std::string Text = (*M)->ToString();
  auto Again = ParseHloModule(Text, "after-passes.hlo");
  if (!Again)
    fuzz::fail("the module after the passes prints to text that does not parse",
               llvm::toString(Again.takeError()) + "\n--- printed:\n" + Text);
  return 0;
}
