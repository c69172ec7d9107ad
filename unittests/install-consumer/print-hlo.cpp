// Parses a small HLO module, verifies it and prints it, through the
// headers and libraries of an installed loom (loom::hlo).
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"

#include "llvm/Support/raw_ostream.h"

int main() {
  const char *text = R"(HloModule consumer, num_partitions=1

ENTRY main {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  ROOT sum = f32[2] add(x, y)
}
)";
  auto module = loom::hlo::ParseHloModule(text, "consumer.hlo");
  if (!module) {
    llvm::errs() << "print-hlo: " << llvm::toString(module.takeError()) << "\n";
    return 1;
  }
  if (llvm::Error err = loom::hlo::VerifyHloModule(**module)) {
    llvm::errs() << "print-hlo: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  llvm::outs() << (*module)->ToString();
  return 0;
}
