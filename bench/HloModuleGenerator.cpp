//===- HloModuleGenerator.cpp - Writes a large dump-style HLO module ------===//
//
// HloModuleGenerator [--shape=loops|unrolled] [--instructions=N] [--seed=S] [-o FILE]
// writes the module of HloModuleGenerator.h (`loops`, the default: a chain
// of while loops) or of HloUnrolledGenerator.h (`unrolled`: one ENTRY
// computation holding every layer), default 100000 instructions, seed 1, to
// FILE or stdout.
//
//===----------------------------------------------------------------------===//
#include "HloModuleGenerator.h"
#include "HloUnrolledGenerator.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

int main(int argc, char **argv) {
  loom::hlo::bench::HloGeneratorOptions options;
  std::string out_file = "-";
  bool unrolled = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--shape=loops" || arg == "--shape=unrolled") {
      unrolled = arg == "--shape=unrolled";
    } else if (arg.consume_front("--instructions=")) {
      if (arg.getAsInteger(10, options.instructions))
        return std::fprintf(stderr, "bad --instructions\n"), 2;
    } else if (arg.consume_front("--seed=")) {
      if (arg.getAsInteger(10, options.seed))
        return std::fprintf(stderr, "bad --seed\n"), 2;
    } else if (arg == "-o" && i + 1 < argc) {
      out_file = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--shape=loops|unrolled] [--instructions=N] [--seed=S] [-o FILE]\n", argv[0]);
      return 2;
    }
  }
  std::string text =
      unrolled ? loom::hlo::bench::GenerateUnrolledHloModule(options.instructions, options.seed)
               : loom::hlo::bench::GenerateDumpStyleHloModule(options);
  std::error_code ec;
  llvm::raw_fd_ostream os(out_file, ec, llvm::sys::fs::OF_None);
  if (ec)
    return std::fprintf(stderr, "cannot write '%s': %s\n", out_file.c_str(),
                        ec.message().c_str()),
           1;
  os << text;
  os.close();
  if (os.has_error()) {
    os.clear_error();
    return std::fprintf(stderr, "cannot write '%s'\n", out_file.c_str()), 1;
  }
  return 0;
}
