//===- DeviceThreadPool.cpp - Workers that run the devices of one step ----===//
#include "DeviceThreadPool.h"

#include <algorithm>

namespace loom::hlo {

DeviceThreadPool::DeviceThreadPool(int threads) {
  for (int i = 1; i < threads; ++i)
    workers_.emplace_back([this] { WorkerLoop(); });
}

DeviceThreadPool::~DeviceThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

int DeviceThreadPool::Resolve(int threads) {
  if (threads > 0)
    return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

void DeviceThreadPool::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (next_item_ < job_size_) {
    const size_t item = next_item_++;
    lock.unlock();
    job_(item);
    lock.lock();
    if (--items_left_ == 0)
      work_done_.notify_all();
  }
}

void DeviceThreadPool::WorkerLoop() {
  size_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_)
        return;
      seen = generation_;
    }
    Drain();
  }
}

void DeviceThreadPool::ParallelFor(size_t n, llvm::function_ref<void(size_t)> fn) {
  if (n == 0)
    return;
  if (workers_.empty() || n == 1) {
    for (size_t k = 0; k < n; ++k)
      fn(k);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = fn;
    job_size_ = n;
    next_item_ = 0;
    items_left_ = n;
    ++generation_;
  }
  work_ready_.notify_all();
  Drain();
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [&] { return items_left_ == 0; });
  job_size_ = 0;
}

} // namespace loom::hlo
