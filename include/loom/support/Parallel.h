//===- Parallel.h - Index loops spread over a few threads -----------------===//
//
// The tools parse, verify and print a large module a piece at a time on
// several threads (docs/performance.md, "Threads"). Each piece writes only
// its own slot and the caller combines the slots in index order, so what a
// tool prints never depends on the number of threads. Threads are started
// per call: a call is worth it only for work of milliseconds or more.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_PARALLEL_H
#define LOOM_SUPPORT_PARALLEL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>

namespace loom {

/// A thread count as the tools' --threads takes it: 0 is the machine's
/// cores; the result is at least 1.
unsigned resolveThreadCount(unsigned Requested);

/// Calls Fn(I) once for every I in [0, Count) on up to Threads threads, the
/// caller being one of them, and returns when every call has returned.
/// Indices are handed out in increasing order, one at a time. With
/// Threads <= 1 or Count <= 1 everything runs on the caller, in order.
void parallelFor(unsigned Threads, size_t Count, llvm::function_ref<void(size_t)> Fn);

/// Produce(I) for every I in [0, Count) on up to Threads worker threads,
/// and Consume(I) on the caller in increasing I, each as soon as Produce(I)
/// has returned: a producer/consumer pipeline whose output keeps its order
/// (the printer formats pieces while the caller writes the finished ones).
/// At most Window indices are produced ahead of the next one consumed, so a
/// caller that frees a piece in Consume holds at most Window pieces. With
/// Threads <= 1 both run on the caller: Produce(0), Consume(0), Produce(1)...
void parallelForOrdered(unsigned Threads, size_t Count, size_t Window,
                        llvm::function_ref<void(size_t)> Produce,
                        llvm::function_ref<void(size_t)> Consume);

} // namespace loom

#endif
