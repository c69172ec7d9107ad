//===- DeviceThreadPool.h - Workers that run the devices of one step ------===//
//
// Internal to lib/hlo/eval. The evaluator is lock step: one instruction for
// every device of the set, then the next. Between collectives the devices
// are independent, so the per-device work of one instruction is spread over
// a few threads; each device's result lands in its own slot and the caller
// reads them in device order, so results and errors do not depend on the
// number of threads (docs/interpreter.md, "Threads").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_EVAL_DEVICETHREADPOOL_H
#define LOOM_LIB_HLO_EVAL_DEVICETHREADPOOL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace loom::hlo {

class DeviceThreadPool {
public:
  /// `threads` counts the caller: threads - 1 workers are started.
  explicit DeviceThreadPool(int threads);
  ~DeviceThreadPool();
  DeviceThreadPool(const DeviceThreadPool &) = delete;
  DeviceThreadPool &operator=(const DeviceThreadPool &) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  /// Calls fn(k) once for every k in [0, n) on the caller and the workers;
  /// returns when every call has returned. Not reentrant: fn must not call
  /// ParallelFor.
  void ParallelFor(size_t n, llvm::function_ref<void(size_t)> fn);

  /// EvalOptions::threads resolved: 0 is the machine's cores (at least 1).
  static int Resolve(int threads);

private:
  void WorkerLoop();
  /// Runs items of the current job until none is left.
  void Drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  llvm::function_ref<void(size_t)> job_;
  size_t job_size_ = 0;
  size_t next_item_ = 0;
  size_t items_left_ = 0;
  /// Bumped per job so a worker takes each job once.
  size_t generation_ = 0;
  bool stopping_ = false;
};

} // namespace loom::hlo

#endif
