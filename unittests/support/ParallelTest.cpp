// loom::parallelFor and parallelForOrdered (include/loom/support/Parallel.h):
// every index runs exactly once whatever the thread count, the ordered
// form consumes in increasing order, and no more than Window pieces are
// produced ahead of the consumer.
#include "loom/support/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace {

TEST(ParallelTest, EveryIndexOnceForAnyThreadCount) {
  for (unsigned threads : {0u, 1u, 2u, 3u, 8u}) {
    for (size_t count : {size_t(0), size_t(1), size_t(2), size_t(7), size_t(1000)}) {
      std::vector<std::atomic<int>> hits(count);
      loom::parallelFor(threads, count, [&](size_t i) { hits[i].fetch_add(1); });
      for (size_t i = 0; i < count; ++i)
        EXPECT_EQ(hits[i].load(), 1) << "threads " << threads << " count " << count << " i " << i;
    }
  }
}

TEST(ParallelTest, OrderedConsumesInOrderWithinTheWindow) {
  for (unsigned threads : {0u, 1u, 2u, 4u}) {
    for (size_t window : {size_t(1), size_t(3), size_t(16)}) {
      const size_t count = 500;
      std::mutex mutex;
      size_t produced_ahead = 0, max_ahead = 0;
      std::vector<int> produced(count, 0);
      std::vector<size_t> consumed;
      loom::parallelForOrdered(
          threads, count, window,
          [&](size_t i) {
            std::lock_guard<std::mutex> lock(mutex);
            produced[i] += 1;
            max_ahead = std::max(max_ahead, ++produced_ahead);
          },
          [&](size_t i) {
            std::lock_guard<std::mutex> lock(mutex);
            EXPECT_EQ(produced[i], 1) << "consumed before it was produced: " << i;
            --produced_ahead;
            consumed.push_back(i);
          });
      ASSERT_EQ(consumed.size(), count);
      for (size_t i = 0; i < count; ++i)
        EXPECT_EQ(consumed[i], i);
      EXPECT_LE(max_ahead, window) << "threads " << threads;
    }
  }
}

TEST(ParallelTest, ZeroMeansTheMachinesCores) {
  EXPECT_GE(loom::resolveThreadCount(0), 1u);
  EXPECT_EQ(loom::resolveThreadCount(3), 3u);
}

} // namespace
