// Unit tests of the interpreter's control flow: while loops (also with a
// different trip count per device), conditionals with s32 and pred
// selectors, call and fusion, and the divergence rule: devices may take
// different paths unless a collective needs a device that went elsewhere.
#include "EvalTestUtil.h"

using namespace loom::hlo;
using namespace loom::hlo::evaltest;

namespace {

std::vector<std::string> RunAll(const std::string &text,
                                std::vector<std::vector<Literal>> args = {}) {
  std::vector<std::string> out;
  for (const Literal &lit : RunModule(text, std::move(args)))
    out.push_back(lit.ToString());
  return out;
}

using Strings = std::vector<std::string>;

const char *kSumLoop = R"(
HloModule m, replica_count=2

cond {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc1 = s32[] add(acc, i1)
  ROOT t = (s32[], s32[], s32[]) tuple(i1, acc1, n)
}

ENTRY e {
  zero = s32[] constant(0)
  r = u32[] replica-id()
  rs = s32[] convert(r)
  three = s32[] constant(3)
  m = s32[] multiply(rs, three)
  seven = s32[] constant(7)
  n = s32[] add(m, seven)
  init = (s32[], s32[], s32[]) tuple(zero, zero, n)
  w = (s32[], s32[], s32[]) while(init), condition=cond, body=body
  ROOT acc = s32[] get-tuple-element(w), index=1
}
)";

TEST(EvalControlFlowTest, WhileLoopsRunPerDeviceTripCounts) {
  // Replica 0 sums 1..7, replica 1 sums 1..10: no collective, no problem.
  EXPECT_EQ(RunAll(kSumLoop), (Strings{"s32[] 28", "s32[] 55"}));
}

TEST(EvalControlFlowTest, CollectivesInDivergedLoopsAreErrors) {
  std::string text = kSumLoop;
  // Put an all-reduce into the body: replica 0 leaves the loop first.
  text.replace(text.find("  acc1 = s32[] add(acc, i1)"), 27,
               "  sum = s32[] all-reduce(i1), replica_groups={}, to_apply=add\n"
               "  acc1 = s32[] add(acc, sum)");
  text.replace(text.find("cond {"), 6,
               "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
               "  ROOT s = s32[] add(a, b)\n}\n\ncond {");
  std::string err = RunError(text);
  EXPECT_NE(err.find("all-reduce 'sum'"), std::string::npos) << err;
  EXPECT_NE(err.find("diverged"), std::string::npos) << err;
  // With the same trip count everywhere the collective is fine.
  text.replace(text.find("  m = s32[] multiply(rs, three)"), 31,
               "  m = s32[] multiply(zero, three)");
  EXPECT_EQ(RunAll(text), (Strings{"s32[] 56", "s32[] 56"}));
}

TEST(EvalControlFlowTest, ConditionalSelectsBranches) {
  const char *text = R"(
HloModule m, replica_count=4

b0 {
  x = s32[] parameter(0)
  ROOT r = s32[] negate(x)
}
b1 {
  x = s32[] parameter(0)
  c = s32[] constant(100)
  ROOT r = s32[] add(x, c)
}
b2 {
  x = s32[] parameter(0)
  ROOT r = s32[] multiply(x, x)
}

ENTRY e {
  r = u32[] replica-id()
  i = s32[] convert(r)
  one = s32[] constant(1)
  sel = s32[] subtract(i, one)
  five = s32[] constant(5)
  ROOT c = s32[] conditional(sel, five, five, five), branch_computations={b0, b1, b2}
}
)";
  // Selectors -1, 0, 1, 2: out of range runs the last branch.
  EXPECT_EQ(RunAll(text), (Strings{"s32[] 25", "s32[] -5", "s32[] 105", "s32[] 25"}));
}

TEST(EvalControlFlowTest, PredConditionalAndCollectivesInBranches) {
  const char *text = R"(
HloModule m, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
yes {
  x = f32[] parameter(0)
  ROOT r = f32[] all-reduce(x), replica_groups={}, to_apply=add
}
no {
  x = f32[] parameter(0)
  ROOT r = f32[] negate(x)
}

ENTRY e {
  p = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(p, x, x), true_computation=yes, false_computation=no
}
)";
  auto args = [](bool p0, bool p1) {
    std::vector<std::vector<Literal>> a(2);
    a[0].push_back(Literal::CreateR0Bool(p0));
    a[0].push_back(Literal::CreateR0FromDouble(PrimitiveType::F32, 1.5));
    a[1].push_back(Literal::CreateR0Bool(p1));
    a[1].push_back(Literal::CreateR0FromDouble(PrimitiveType::F32, 2));
    return a;
  };
  EXPECT_EQ(RunAll(text, args(true, true)), (Strings{"f32[] 3.5", "f32[] 3.5"}));
  EXPECT_EQ(RunAll(text, args(false, false)), (Strings{"f32[] -1.5", "f32[] -2"}));
  std::string err = RunError(text, args(true, false));
  EXPECT_NE(err.find("all-reduce 'r'"), std::string::npos) << err;
  EXPECT_NE(err.find("diverged"), std::string::npos) << err;
}

TEST(EvalControlFlowTest, CallAndFusion) {
  const char *text = R"(
HloModule m

f {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT m = f32[2] multiply(a, b)
}
g {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}

ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  fu = f32[2] fusion(x, y), kind=kLoop, calls=f
  ROOT c = f32[2] call(fu), to_apply=g
}
)";
  EXPECT_EQ(Run1(text, {Vec(PrimitiveType::F32, {2, 3}), Vec(PrimitiveType::F32, {4, -5})}),
            "f32[2]{0} {-8, 15}");
}

TEST(EvalControlFlowTest, SelfCheckingModulePrintsTrue) {
  // The shape of the held-out tests: compute, compare with the expected
  // value, reduce to one pred.
  const char *text = R"(
HloModule m, num_partitions=2

and {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] and(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

ENTRY e {
  p = u32[] partition-id()
  f = f32[] convert(p)
  b = f32[2] broadcast(f), dimensions={}
  g = f32[4] all-gather(b), channel_id=1, use_global_device_ids=true, replica_groups={{0,1}}, dimensions={0}
  s = f32[4] all-reduce(g), channel_id=2, use_global_device_ids=true, replica_groups={{0,1}}, to_apply=add
  want = f32[4] constant({0, 0, 2, 2})
  eq = pred[4] compare(s, want), direction=EQ
  t = pred[] constant(true)
  ROOT ok = pred[] reduce(eq, t), dimensions={0}, to_apply=and
}
)";
  EXPECT_EQ(RunAll(text), (Strings{"pred[] true", "pred[] true"}));
}

TEST(EvalControlFlowTest, LoopsFreeTheirIterations) {
  // 1000 iterations over a 64 KiB buffer: memory stays at a few buffers.
  const char *text = R"(
HloModule m

cond {
  s = (s32[], f32[16384]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16384]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[16384] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  c = f32[] constant(1)
  cb = f32[16384] broadcast(c), dimensions={}
  v1 = f32[16384] add(v, cb)
  ROOT t = (s32[], f32[16384]) tuple(i1, v1)
}
ENTRY e {
  zero = s32[] constant(0)
  z = f32[] constant(0)
  v = f32[16384] broadcast(z), dimensions={}
  init = (s32[], f32[16384]) tuple(zero, v)
  w = (s32[], f32[16384]) while(init), condition=cond, body=body
  ROOT r = f32[16384] get-tuple-element(w), index=1
}
)";
  EvalStats stats;
  std::vector<Literal> out = RunModule(text, {}, &stats);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].GetAsDouble(16383), 1000.0);
  EXPECT_LE(stats.peak_live_bytes, 4 * 65536 + 1024);
  EXPECT_EQ(stats.final_live_bytes, 0);
}

TEST(EvalControlFlowTest, IterationLimit) {
  const char *text = R"(
HloModule m
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  ROOT s = s32[] parameter(0)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
)";
  EvalOptions options;
  options.max_while_iterations = 50;
  EXPECT_EQ(RunError(text, {}, options), "while 'w': more than 50 iterations");
}

} // namespace
