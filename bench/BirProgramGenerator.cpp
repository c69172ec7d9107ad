//===- BirProgramGenerator.cpp - Writes a large LNC=2 BIR program ---------===//
//
// BirProgramGenerator [--instructions=N] [--seed=S] [-o FILE]
// writes the program of BirProgramGenerator.h (default 100000 instructions,
// seed 1) in the saved JSON form to FILE or stdout, after verifying it.
//
//===----------------------------------------------------------------------===//
#include "BirProgramGenerator.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace loom::bir;

int main(int argc, char **argv) {
  bench::BirGeneratorOptions Opts;
  std::string OutFile = "-";
  for (int I = 1; I < argc; ++I) {
    llvm::StringRef Arg = argv[I];
    if (Arg.consume_front("--instructions=")) {
      if (Arg.getAsInteger(10, Opts.Instructions))
        return std::fprintf(stderr, "bad --instructions\n"), 2;
    } else if (Arg.consume_front("--seed=")) {
      if (Arg.getAsInteger(10, Opts.Seed))
        return std::fprintf(stderr, "bad --seed\n"), 2;
    } else if (Arg == "-o" && I + 1 < argc) {
      OutFile = argv[++I];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--instructions=N] [--seed=S] [-o FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (llvm::Error E = bench::writeGeneratedProgram(Opts, OutFile)) {
    llvm::errs() << llvm::toString(std::move(E)) << "\n";
    return 1;
  }
  return 0;
}
