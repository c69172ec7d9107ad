//===- BenchUtil.h - Helpers shared by the benchmark programs -------------===//
#ifndef LOOM_BENCH_BENCHUTIL_H
#define LOOM_BENCH_BENCHUTIL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <utility>

namespace loom::bench {

/// CPU time of this process: phases run on one thread, and on a shared
/// machine CPU time varies far less than wall time.
inline double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/// Lines of `text` counted with memchr: the cost of reading the text once,
/// the baseline the HLO benchmarks measure themselves against.
inline size_t CountLines(llvm::StringRef text) {
  size_t lines = 0;
  const char *p = text.data(), *end = p + text.size();
  while (const void *nl = std::memchr(p, '\n', end - p)) {
    ++lines;
    p = static_cast<const char *>(nl) + 1;
  }
  return lines;
}

/// The value, or the error on stderr and exit 1: a benchmark's input is its
/// own, so a failure is a bug to stop at.
template <typename T> T Check(llvm::Expected<T> value) {
  if (!value) {
    llvm::errs() << llvm::toString(value.takeError()) << "\n";
    std::exit(1);
  }
  return std::move(*value);
}
inline void Check(llvm::Error error) {
  if (error) {
    llvm::errs() << llvm::toString(std::move(error)) << "\n";
    std::exit(1);
  }
}

} // namespace loom::bench

#endif
