#include "loom/support/Parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace loom {

unsigned resolveThreadCount(unsigned Requested) {
  if (Requested != 0)
    return Requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallelFor(unsigned Threads, size_t Count, llvm::function_ref<void(size_t)> Fn) {
  size_t Workers = std::min<size_t>(Threads, Count);
  if (Workers <= 1) {
    for (size_t I = 0; I < Count; ++I)
      Fn(I);
    return;
  }
  // Indices one at a time from a shared counter: pieces differ in size
  // (one computation may hold most of a module), so a static split would
  // leave threads idle.
  std::atomic<size_t> Next{0};
  auto Drain = [&] {
    for (size_t I = Next.fetch_add(1, std::memory_order_relaxed); I < Count;
         I = Next.fetch_add(1, std::memory_order_relaxed))
      Fn(I);
  };
  std::vector<std::thread> Pool;
  Pool.reserve(Workers - 1);
  for (size_t W = 1; W < Workers; ++W)
    Pool.emplace_back(Drain);
  Drain();
  for (std::thread &T : Pool)
    T.join();
}

void parallelForOrdered(unsigned Threads, size_t Count, size_t Window,
                        llvm::function_ref<void(size_t)> Produce,
                        llvm::function_ref<void(size_t)> Consume) {
  Window = std::max<size_t>(Window, 1);
  // The caller mostly waits for pieces or for write(2): it is not counted.
  size_t Workers = Threads > 1 ? std::min<size_t>(Threads, Count) : 0;
  if (Workers == 0) {
    for (size_t I = 0; I < Count; ++I) {
      Produce(I);
      Consume(I);
    }
    return;
  }
  std::mutex Mutex;
  std::condition_variable Changed;
  std::vector<char> Done(Count, 0);
  size_t NextToProduce = 0; // guarded by Mutex
  size_t NextToConsume = 0; // guarded by Mutex
  auto Work = [&] {
    std::unique_lock<std::mutex> Lock(Mutex);
    while (true) {
      Changed.wait(Lock, [&] {
        return NextToProduce == Count || NextToProduce < NextToConsume + Window;
      });
      if (NextToProduce == Count)
        return;
      size_t I = NextToProduce++;
      Lock.unlock();
      Produce(I);
      Lock.lock();
      Done[I] = 1;
      Changed.notify_all();
    }
  };
  std::vector<std::thread> Pool;
  Pool.reserve(Workers);
  for (size_t W = 0; W < Workers; ++W)
    Pool.emplace_back(Work);
  for (size_t I = 0; I < Count; ++I) {
    {
      std::unique_lock<std::mutex> Lock(Mutex);
      Changed.wait(Lock, [&] { return Done[I] != 0; });
    }
    Consume(I);
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      NextToConsume = I + 1;
    }
    Changed.notify_all();
  }
  for (std::thread &T : Pool)
    T.join();
}

} // namespace loom
