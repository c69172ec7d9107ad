//===- FuzzCommon.h - What every loom fuzz target shares ------------------===//
//
// A fuzz target feeds one input to loom the way a tool would and checks the
// promises docs/robustness.md lists: an error is a value, never a crash, and
// a round trip gives back what it was given. A broken promise is reported on
// stderr and ends the run with abort(), which libFuzzer records as a crash
// together with the input.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_FUZZ_FUZZCOMMON_H
#define LOOM_FUZZ_FUZZCOMMON_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

namespace loom::fuzz {

/// Ends the run: Check failed for this input.
[[noreturn]] inline void fail(llvm::StringRef What, llvm::StringRef Detail = {}) {
  llvm::errs() << "fuzz check failed: " << What << "\n";
  if (!Detail.empty())
    llvm::errs() << Detail << "\n";
  llvm::errs().flush();
  std::abort();
}

/// Drops an error the input was allowed to cause.
inline void ignore(llvm::Error E) { llvm::consumeError(std::move(E)); }

/// Takes the first byte of the input as option bits (0 when empty).
inline uint8_t takeByte(const uint8_t *&Data, size_t &Size) {
  if (Size == 0)
    return 0;
  uint8_t B = *Data;
  ++Data;
  --Size;
  return B;
}

inline llvm::StringRef asText(const uint8_t *Data, size_t Size) {
  return llvm::StringRef(reinterpret_cast<const char *>(Data), Size);
}

} // namespace loom::fuzz

#endif
