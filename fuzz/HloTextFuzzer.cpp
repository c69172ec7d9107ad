//===- HloTextFuzzer.cpp - HLO text: parse, verify, print, re-parse -------===//
//
// Any text either fails to parse with an error or gives a module. A module
// that passes the verifier must print to text that parses again and prints
// identically (docs/hlo-text-format.md, the round-trip contract).
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto M = hlo::ParseHloModule(fuzz::asText(Data, Size), "fuzz.hlo");
  if (!M) {
    fuzz::ignore(M.takeError());
    return 0;
  }
  if (llvm::Error E = hlo::VerifyHloModule(**M)) {
    fuzz::ignore(std::move(E));
    // An unverified module must still print without crashing.
    (void)(*M)->ToString();
    return 0;
  }
  std::string First = (*M)->ToString();
  auto Again = hlo::ParseHloModule(First, "printed.hlo");
  if (!Again)
    fuzz::fail("a verified module printed to text that does not parse",
               llvm::toString(Again.takeError()) + "\n--- printed:\n" + First);
  std::string Second = (*Again)->ToString();
  if (First != Second)
    fuzz::fail("printing the re-parsed module changed the text",
               "--- first:\n" + First + "--- second:\n" + Second);
  return 0;
}
