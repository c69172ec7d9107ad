//===- EvalLimitsTest.cpp - Bounded work, empty shapes, wide and deep input ===//
//
// max_steps, max_work and max_live_bytes stop a run with an error naming
// the instruction and the limit; shapes with no elements cost nothing;
// wide operand lists and deep call chains neither take quadratic time nor
// overflow the stack.
//
//===----------------------------------------------------------------------===//

#include "EvalTestUtil.h"

#include "../../lib/hlo/eval/EvalInternal.h"

#include "loom/hlo/eval/RandomInputs.h"

#include <limits>

namespace loom::hlo {
namespace {

using evaltest::Parse;
using evaltest::RunError;
using evaltest::RunModule;

/// A `while` whose condition is the constant true, with `body_op` computing
/// the new state from the old one (`s`).
std::string EndlessLoop(const std::string &shape, const std::string &body_op) {
  return "HloModule m\ncond {\n  c = " + shape +
         " parameter(0)\n  ROOT t = pred[] constant(true)\n}\nbody {\n  s = " + shape +
         " parameter(0)\n  ROOT n = " + shape + " " + body_op + "\n}\nENTRY e {\n  x = " + shape +
         " parameter(0)\n  ROOT w = " + shape + " while(x), condition=cond, body=body\n}\n";
}

std::string RunErrorWith(const std::string &text, const EvalOptions &options) {
  auto module = Parse(text);
  if (!module)
    return "<parse error>";
  auto args = MakeRandomArguments(*module, 0, options);
  if (!args)
    return llvm::toString(args.takeError());
  auto result = RunSpmd(*module, *args, options, nullptr);
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

TEST(EvalLimitsTest, StepLimitStopsAnEndlessLoop) {
  EvalOptions options;
  options.max_steps = 1000;
  std::string err = RunErrorWith(EndlessLoop("f32[]", "add(s, s)"), options);
  EXPECT_NE(err.find("the run exceeds the step limit of 1000 executed instructions summed over all devices (--max-steps)"),
            std::string::npos)
      << err;
  // The instruction that would exceed the limit is named.
  EXPECT_TRUE(err.rfind("constant 't': ", 0) == 0 || err.rfind("add 'n': ", 0) == 0) << err;
}

TEST(EvalLimitsTest, StepsCountEveryDevice) {
  EvalStats one, four;
  RunModule("HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  ROOT b = f32[] add(a, a)\n}\n",
            {}, &one);
  RunModule("HloModule m, num_partitions=4\nENTRY e {\n  a = f32[] constant(1)\n"
            "  ROOT b = f32[] add(a, a)\n}\n",
            {}, &four);
  EXPECT_EQ(one.steps, 2);
  EXPECT_EQ(four.steps, 8);
  // Work is per device: the same on one device as on four.
  EXPECT_EQ(one.work, 2);
  EXPECT_EQ(four.work, 2);
}

TEST(EvalLimitsTest, WorkLimitStopsADotLoopBeforeTheDot) {
  EvalOptions options;
  options.max_work = int64_t{100} << 20;
  EvalStats stats;
  auto module = Parse(EndlessLoop(
      "f32[256,256]", "dot(s, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_TRUE(module);
  auto args = MakeRandomArguments(*module, 0);
  ASSERT_TRUE(static_cast<bool>(args));
  auto result = RunSpmd(*module, *args, options, &stats);
  ASSERT_FALSE(static_cast<bool>(result));
  std::string err = llvm::toString(result.takeError());
  // 256^3 multiply-adds per dot: the seventh would pass 100 Mi.
  EXPECT_EQ(err, "dot 'n': the run exceeds the work limit of 104857600 elements computed per "
                 "device (--max-work): device 0 computed 100663304 and this instruction needs "
                 "16777216");
  EXPECT_LE(stats.work, options.max_work);
}

TEST(EvalLimitsTest, WorkCountsDotMultiplyAdds) {
  EvalStats stats;
  std::vector<std::vector<Literal>> args(1);
  args[0].push_back(Literal(Shape(PrimitiveType::F32, {8, 16})));
  args[0].push_back(Literal(Shape(PrimitiveType::F32, {16, 4})));
  RunModule(
      "HloModule m\nENTRY e {\n  a = f32[8,16] parameter(0)\n  b = f32[16,4] parameter(1)\n"
      "  ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
      std::move(args), &stats);
  EXPECT_EQ(stats.work, 8 * 4 * 16);
}

TEST(EvalLimitsTest, MemoryLimitRefusesAValueBeforeAllocatingIt) {
  EvalOptions options;
  options.max_live_bytes = 1 << 20;
  EvalStats stats;
  auto module = Parse("HloModule m\nENTRY e {\n  z = f32[] constant(0)\n"
                      "  ROOT b = f32[268435456] broadcast(z), dimensions={}\n}\n");
  ASSERT_TRUE(module);
  auto result = RunSpmd(*module, {{}}, options, &stats);
  ASSERT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(llvm::toString(result.takeError()),
            "broadcast 'b': live values exceed the memory limit of 1048576 bytes of all devices together (--max-memory)");
  EXPECT_LT(stats.peak_live_bytes, 1 << 20);
}

TEST(EvalLimitsTest, EmptyShapesCostNothing) {
  // No elements, whatever the other dimensions; 2^40 * 2^40 * 0 must not
  // overflow into a count.
  const std::pair<const char *, const char *> kCases[] = {
      {"s8[100000,100000,100000,0]", "{}"}, {"f32[0,100000,100000,100000]", "{  }"}};
  for (const auto &[shape, expected] : kCases) {
    SCOPED_TRACE(shape);
    std::string text = std::string("HloModule m\nENTRY e {\n  p = ") + shape +
                       " parameter(0)\n  ROOT n = " + shape + " negate(p)\n}\n";
    auto module = Parse(text);
    ASSERT_TRUE(module);
    auto args = MakeRandomArguments(*module, 0);
    ASSERT_TRUE(static_cast<bool>(args)) << llvm::toString(args.takeError());
    EvalStats stats;
    auto result = RunSpmd(*module, *args, EvalOptions(), &stats);
    ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
    EXPECT_EQ((*result)[0].element_count(), 0);
    EXPECT_EQ(stats.peak_live_bytes, 0);
    // Too many braces to print: `{}`; a leading 0 prints XLA's `{  }`. Both
    // parse back.
    std::string printed = (*result)[0].ValuesToString();
    EXPECT_EQ(printed, expected);
    auto parsed = ParseLiteral((*result)[0].shape(), printed);
    ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
    EXPECT_TRUE(*parsed == (*result)[0]);
  }
  // 2^40 * 2^40 * 0 must not overflow into a count (the HLO parser refuses
  // such a shape; the interpreter's own counts do not).
  const Shape huge(PrimitiveType::S8, {int64_t{1} << 40, int64_t{1} << 40, 0});
  EXPECT_EQ(ElementCountOf(huge), 0);
  EXPECT_EQ(ElementCountOf(Shape(PrimitiveType::S8, {int64_t{1} << 40, int64_t{1} << 40})),
            std::numeric_limits<int64_t>::max());
  Literal empty(huge);
  EXPECT_EQ(empty.element_count(), 0);
  EXPECT_EQ(empty.ValuesToString(), "{}");
  auto reread = ParseLiteral(huge, "{}");
  ASSERT_TRUE(static_cast<bool>(reread)) << llvm::toString(reread.takeError());
  EXPECT_TRUE(*reread == empty);
  // A few braces print as before.
  EXPECT_EQ(Literal(Shape(PrimitiveType::F32, {2, 0})).ValuesToString(), "{ {}, {} }");
  auto parsed = ParseLiteral(Shape(PrimitiveType::F32, {2, 0}), "{ {}, {} }");
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  // A scalar filling an empty array is still checked.
  auto bad = ParseLiteral(Shape(PrimitiveType::S8, {0}), "1000");
  EXPECT_FALSE(static_cast<bool>(bad));
  llvm::consumeError(bad.takeError());
}

TEST(EvalLimitsTest, WideConcatenate) {
  // 10^5 operands: the plan is linear in the operand list.
  const int n = 100000;
  std::string text = "HloModule m\nENTRY e {\n  p = f32[1] parameter(0)\n  ROOT c = f32[" +
                     std::to_string(n) + "] concatenate(";
  for (int i = 0; i < n; ++i)
    text += i ? ", p" : "p";
  text += "), dimensions={0}\n}\n";
  std::vector<std::vector<Literal>> args(1);
  args[0].push_back(evaltest::Vec(PrimitiveType::F32, {2.5}));
  std::vector<Literal> out = RunModule(text, std::move(args));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].element_count(), n);
  EXPECT_EQ(out[0].GetAsDouble(n - 1), 2.5);
}

TEST(EvalLimitsTest, DeepCallChainIsALocatedError) {
  // 300 computations each calling the next: past max_call_depth the error
  // names the call that goes one level too deep.
  const int n = 300;
  std::string text = "HloModule m\n";
  text += "c" + std::to_string(n) + " {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n";
  for (int i = n - 1; i >= 1; --i)
    text += "c" + std::to_string(i) + " {\n  p = f32[] parameter(0)\n  ROOT call." +
            std::to_string(i) + " = f32[] call(p), to_apply=c" + std::to_string(i + 1) + "\n}\n";
  text += "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT top = f32[] call(x), to_apply=c1\n}\n";
  std::string err = RunError(text, {{Literal::CreateR0FromDouble(PrimitiveType::F32, 1)}});
  EXPECT_EQ(err, "call 'call.255': calls nest deeper than the limit of 256 (computation 'c256')");
  EvalOptions deep;
  deep.max_call_depth = 400;
  EXPECT_EQ(RunError(text, {{Literal::CreateR0FromDouble(PrimitiveType::F32, 1)}}, deep), "");
}

} // namespace
} // namespace loom::hlo
