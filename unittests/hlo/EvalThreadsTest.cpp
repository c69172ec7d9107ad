//===- EvalThreadsTest.cpp - Devices on threads give one thread's results -===//
//
// EvalOptions::threads spreads the devices of each instruction over a pool;
// results, stats and errors must be those of one thread, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "EvalTestUtil.h"

#include "../../lib/hlo/eval/DeviceThreadPool.h"
#include "../../lib/hlo/eval/Evaluator.h"

#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"
#include "loom/support/Error.h"

#include <atomic>

namespace loom::hlo {
namespace {

using evaltest::Parse;

/// A tensor-parallel MLP layer (examples/hlo/tp_mlp_while.hlo at 4 devices)
/// with values large enough that every heavy instruction runs on the pool.
std::string MlpModule() {
  return R"(HloModule tp_mlp, num_partitions=4
cond {
  cp = (s32[], f32[32,256], f32[256,1,128], f32[1,128,256]) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(2)
  ROOT more = pred[] compare(i, n), direction=LT
}
body {
  bp = (s32[], f32[32,256], f32[256,1,128], f32[1,128,256]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  x = f32[32,256] get-tuple-element(bp), index=1
  wu = f32[256,1,128] get-tuple-element(bp), index=2
  wd = f32[1,128,256] get-tuple-element(bp), index=3
  xb = bf16[32,256] convert(x)
  wub = bf16[256,1,128] convert(wu)
  up.w = bf16[256,4,128] all-gather(wub), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  up = bf16[32,4,128] dot(xb, up.w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = bf16[] constant(0)
  zeros = bf16[32,4,128] broadcast(zero), dimensions={}
  relu = bf16[32,4,128] maximum(up, zeros)
  h = bf16[32,512] reshape(relu)
  wdb = bf16[1,128,256] convert(wd)
  down.g = bf16[4,128,256] all-gather(wdb), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  down.w = bf16[512,256] reshape(down.g)
  down = bf16[32,256] dot(h, down.w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[32,256] convert(down)
  e = f32[32,256] exponential(y)
  t = f32[32,256] tanh(e)
  x.next = f32[32,256] add(x, t)
  one = s32[] constant(1)
  i.next = s32[] add(i, one)
  ROOT s = (s32[], f32[32,256], f32[256,1,128], f32[1,128,256]) tuple(i.next, x.next, wu, wd)
}
ENTRY main {
  x0 = f32[32,256] parameter(0)
  wu0 = f32[256,1,128] parameter(1)
  wd0 = f32[1,128,256] parameter(2)
  zero = s32[] constant(0)
  s0 = (s32[], f32[32,256], f32[256,1,128], f32[1,128,256]) tuple(zero, x0, wu0, wd0)
  loop = (s32[], f32[32,256], f32[256,1,128], f32[1,128,256]) while(s0), condition=cond, body=body
  xo = f32[32,256] get-tuple-element(loop), index=1
  zero.f = f32[] constant(0)
  r = f32[256] reduce(xo, zero.f), dimensions={0}, to_apply=sum
  sl = f32[16,256] slice(xo), slice={[0:16], [0:256]}
  tr = f32[256,16] transpose(sl), dimensions={1,0}
  ROOT out = (f32[32,256], f32[256], f32[256,16]) tuple(xo, r, tr)
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";
}

struct Outcome {
  std::vector<Literal> results;
  EvalStats stats;
  std::string error;
};

Outcome RunWithThreads(const HloModule &module, int threads) {
  auto args = MakeRandomArguments(module, /*seed=*/7);
  EXPECT_TRUE(static_cast<bool>(args));
  if (!args)
    return {{}, {}, llvm::toString(args.takeError())};
  EvalOptions options;
  options.threads = threads;
  Outcome outcome;
  auto results = RunSpmd(module, *args, options, &outcome.stats);
  if (!results)
    outcome.error = llvm::toString(results.takeError());
  else
    outcome.results = std::move(*results);
  return outcome;
}

void ExpectSameAsOneThread(const HloModule &module) {
  Outcome one = RunWithThreads(module, 1);
  ASSERT_EQ(one.error, "");
  ASSERT_EQ(one.results.size(), 4u);
  for (int threads : {2, 4, 0}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    Outcome many = RunWithThreads(module, threads);
    ASSERT_EQ(many.error, "");
    ASSERT_EQ(many.results.size(), one.results.size());
    for (size_t d = 0; d < one.results.size(); ++d)
      EXPECT_TRUE(many.results[d] == one.results[d]) << "device " << d;
    EXPECT_EQ(many.stats.steps, one.stats.steps);
    EXPECT_EQ(many.stats.work, one.stats.work);
    EXPECT_EQ(many.stats.instructions_evaluated, one.stats.instructions_evaluated);
    EXPECT_EQ(many.stats.peak_live_bytes, one.stats.peak_live_bytes);
    EXPECT_EQ(many.stats.final_live_bytes, 0);
  }
}

TEST(EvalThreadsTest, MlpMatchesOneThread) {
  auto module = Parse(MlpModule());
  ASSERT_TRUE(module);
  ExpectSameAsOneThread(*module);
}

TEST(EvalThreadsTest, FusedMlpMatchesOneThread) {
  // The collective-matmul custom-calls the Neuron pass makes run their
  // per-device dots on the pool too.
  auto module = Parse(MlpModule());
  ASSERT_TRUE(module);
  RegisterAllHloPasses();
  auto pass = CreateHloPass("neuron_looped_einsum_replacer");
  ASSERT_TRUE(static_cast<bool>(pass)) << llvm::toString(pass.takeError());
  auto changed = (*pass)->Run(*module);
  ASSERT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  ASSERT_TRUE(*changed);
  ASSERT_NE(module->ToString().find("AwsNeuronCollectiveMatmul"), std::string::npos);
  ExpectSameAsOneThread(*module);
}

TEST(EvalThreadsTest, ErrorsMatchOneThread) {
  // The dot's result shape is wrong on every device: the message is the
  // one a single thread gives.
  auto module = Parse(R"(HloModule m, num_partitions=4
ENTRY e {
  a = f32[128,256] parameter(0)
  b = f32[256,128] parameter(1)
  ROOT d = f32[128,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_TRUE(module);
  Outcome one = RunWithThreads(*module, 1);
  ASSERT_NE(one.error, "");
  for (int threads : {2, 4})
    EXPECT_EQ(RunWithThreads(*module, threads).error, one.error);
}

TEST(EvalThreadsTest, RunPerDeviceReportsTheFirstFailingDevice) {
  DeviceThreadPool pool(4);
  for (int round = 0; round < 50; ++round) {
    llvm::Expected<DeviceValues> out =
        RunPerDevice(&pool, 8, [&](size_t k) -> llvm::Expected<Literal> {
          if (k == 3 || k == 6)
            return makeError("device " + std::to_string(k) + " failed");
          return Literal::CreateR0FromInt64(PrimitiveType::S32, static_cast<int64_t>(k));
        });
    ASSERT_FALSE(static_cast<bool>(out));
    EXPECT_EQ(llvm::toString(out.takeError()), "device 3 failed");
  }
  llvm::Expected<DeviceValues> out =
      RunPerDevice(&pool, 8, [&](size_t k) -> llvm::Expected<Literal> {
        return Literal::CreateR0FromInt64(PrimitiveType::S32, static_cast<int64_t>(k));
      });
  ASSERT_TRUE(static_cast<bool>(out));
  for (size_t k = 0; k < 8; ++k)
    EXPECT_EQ((*out)[k].GetAsInt64(0), static_cast<int64_t>(k));
}

TEST(EvalThreadsTest, ParallelForRunsEveryItemOnce) {
  for (int threads : {1, 2, 3, 8}) {
    DeviceThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (size_t n : {0, 1, 2, 7, 64, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      for (int round = 0; round < 20; ++round)
        pool.ParallelFor(n, [&](size_t k) { hits[k].fetch_add(1); });
      for (size_t k = 0; k < n; ++k)
        EXPECT_EQ(hits[k].load(), 20) << "threads " << threads << " n " << n << " item " << k;
    }
  }
  EXPECT_GE(DeviceThreadPool::Resolve(0), 1);
  EXPECT_EQ(DeviceThreadPool::Resolve(3), 3);
}

} // namespace
} // namespace loom::hlo
