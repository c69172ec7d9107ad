// Unit tests of the HLO printer: XLA's dump style, the round-trip contract
// (structural equality and byte-identical reprinting), printing order, and
// printing of what passes change (references, control dependencies).
#include "HloTestUtil.h"
#include "loom/hlo/ir/HloStructuralEquality.h"
#include "loom/hlo/parser/HloClone.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

using namespace loom::hlo;

namespace {

using testutil::Parse;

/// parse(print(m)) == m and print(parse(print(m))) == print(m).
void ExpectRoundTrip(llvm::StringRef text) {
  auto original = Parse(text);
  ASSERT_TRUE(original);
  std::string first = original->ToString();
  auto reparsed = Parse(first);
  ASSERT_TRUE(reparsed) << first;
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*original, *reparsed, &why)) << why << "\n" << first;
  EXPECT_EQ(reparsed->ToString(), first);
}

HloInstruction *Find(const HloModule &m, llvm::StringRef name) {
  for (HloComputation *c : m.computations())
    if (HloInstruction *i = c->GetInstructionWithName(name))
      return i;
  return nullptr;
}

TEST(HloPrinter, PrintsInXlaDumpStyle) {
  auto m = Parse(R"(HloModule m, is_scheduled=true
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[8]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->ToString(), R"(HloModule m, is_scheduled=true

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[8]) -> f32[] {
  %p = f32[8]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[8]{0} %p, f32[] %z), dimensions={0}, to_apply=%add
}
)");
  EXPECT_EQ(Find(*m, "r")->ToString(),
            "%r = f32[] reduce(f32[8]{0} %p, f32[] %z), dimensions={0}, to_apply=%add");
}

TEST(HloPrinter, LongOperandListsCarryIndexComments) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT t = (f32[], f32[], f32[], f32[], f32[], f32[], f32[]) tuple(a, a, a, a, a, a, a)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(Find(*m, "t")->ToString(),
            "%t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[]) tuple(f32[] %a, "
            "f32[] %a, f32[] %a, f32[] %a, f32[] %a, /*index=5*/f32[] %a, f32[] %a)");
}

TEST(HloPrinter, SignatureIsRegenerated) {
  // Parameters print by number; the written signature is not trusted.
  auto m = Parse(R"(HloModule m
ENTRY %e (wrong: s32[]) -> s32[] {
  %b = f32[2]{0} parameter(1)
  %a = (f32[2]{0}, s32[]) parameter(0)
  ROOT %r = f32[2]{0} negate(%b)
})");
  ASSERT_TRUE(m);
  std::string text = m->ToString();
  EXPECT_NE(text.find("ENTRY %e (a: (f32[2], s32[]), b: f32[2]) -> f32[2] {"), std::string::npos)
      << text;
}

TEST(HloPrinter, LayoutsArePrintedAsRead) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3]{0,1:T(2,128)} copy(a)
  ROOT c = f32[2,3]{1,0} copy(b)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(Find(*m, "b")->ToString(), "%b = f32[2,3]{0,1:T(2,128)} copy(f32[2,3] %a)");
  EXPECT_EQ(Find(*m, "c")->ToString(), "%c = f32[2,3]{1,0} copy(f32[2,3]{0,1:T(2,128)} %b)");
}

TEST(HloPrinter, OperandsAndControlPredecessorsPrintBeforeUsers) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
})");
  ASSERT_TRUE(m);
  HloComputation *e = m->entry_computation();
  HloInstruction *n = Find(*m, "n");
  // An instruction appended after its user still prints before it.
  HloInstruction *c = e->AddInstruction(
      HloInstruction::Create(HloOpcode::kConstant, Shape(PrimitiveType::F32, {}), {}, "c"));
  c->set_literal_text("2");
  ASSERT_FALSE(bool(n->ReplaceOperandWith(0, c)));
  HloInstruction *late = e->AddInstruction(
      HloInstruction::Create(HloOpcode::kNegate, Shape(PrimitiveType::F32, {}), {Find(*m, "a")},
                             "late"));
  late->AddControlDependencyTo(n);
  std::string text = m->ToString();
  EXPECT_LT(text.find("%c = "), text.find("ROOT %n"));
  EXPECT_LT(text.find("%late = "), text.find("ROOT %n"));
  EXPECT_NE(text.find("ROOT %n = f32[] negate(f32[] %c), control-predecessors={%late}"),
            std::string::npos)
      << text;
  ExpectRoundTrip(text);
}

TEST(HloPrinter, ControlPredecessorsPrintFromTheDependencies) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  ROOT c = f32[] exponential(a), control-predecessors={b}, metadata={op_name="x"}
})");
  ASSERT_TRUE(m);
  HloInstruction *b = Find(*m, "b"), *c = Find(*m, "c");
  EXPECT_EQ(c->ToString(),
            "%c = f32[] exponential(f32[] %a), control-predecessors={%b}, "
            "metadata={op_name=\"x\"}");
  b->RemoveControlDependencyTo(c);
  EXPECT_EQ(c->ToString(), "%c = f32[] exponential(f32[] %a), metadata={op_name=\"x\"}");
}

TEST(HloPrinter, ComputationReferencesPrintFromPointers) {
  auto m = Parse(R"(HloModule m
f {
  ROOT x = f32[] parameter(0)
}
g {
  ROOT y = f32[] parameter(0)
}
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=f
})");
  ASSERT_TRUE(m);
  HloInstruction *c = Find(*m, "c");
  c->ReplaceCalledComputation(m->GetComputationWithName("f"), m->GetComputationWithName("g"));
  m->GetComputationWithName("g")->SetName("renamed");
  EXPECT_EQ(c->ToString(), "%c = f32[] call(f32[] %p), to_apply=%renamed");
  ExpectRoundTrip(m->ToString());
}

TEST(HloPrinter, CalleesPrintBeforeCallers) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=outer
}
outer {
  q = f32[] parameter(0)
  ROOT d = f32[] call(q), to_apply=inner
}
inner {
  ROOT r = f32[] parameter(0)
})");
  ASSERT_TRUE(m);
  std::string text = m->ToString();
  EXPECT_LT(text.find("%inner ("), text.find("%outer ("));
  EXPECT_LT(text.find("%outer ("), text.find("ENTRY %e ("));
}

TEST(HloPrinter, RoundTripExamples) {
  const char *examples[] = {
      // Short style, inferred shapes, in-place operands.
      R"(HloModule a
ENTRY e {
  x = f32[2,3] parameter(0)
  t = tuple(x, x)
  g = get-tuple-element(t), index=0
  ROOT r = f32[2,3] add(g, f32[2,3] negate(f32[2,3] abs(x)))
})",
      // Header attributes over several lines, trailer, stack frames.
      R"(HloModule b, num_partitions=2,
frontend_attributes={a="1"}

FileNames
1 "x.py"

%c (p: f32[]) -> f32[] {
  ROOT %p = f32[] parameter(0)
}, execution_thread="host"

ENTRY %e () -> f32[] {
  %k = f32[] constant(1)
  ROOT %r = f32[] call(f32[] %k), to_apply=%c
})",
      // Async sugar, buffers, dynamic shapes, tuples with index comments.
      R"(HloModule c
ENTRY e {
  p = f32[<=4,?] parameter(0)
  b = b(f32[<=4,?]) custom-call(p), custom_call_target="Pin"
  s = ((f32[<=4,?]), f32[<=4,?], s32[]) copy-start(p)
  d = f32[<=4,?] copy-done(s)
  a = ((f32[<=4,?]), f32[<=4,?], s32[]) abs-start(d)
  ROOT z = f32[<=4,?] abs-done(a)
})",
      // Inline computation and conditional branches.
      R"(HloModule d
ENTRY e {
  i = s32[] parameter(0)
  x = f32[4] parameter(1)
  f = f32[4] fusion(x), kind=kLoop, calls={
    y = f32[4] parameter(0)
    ROOT n = f32[4] negate(y)
  }
  ROOT c = f32[4] conditional(i, f, x), branch_computations={b0, b1}
}
b0 {
  ROOT q = f32[4] parameter(0)
}
b1 {
  q = f32[4] parameter(0)
  ROOT w = f32[4] sqrt(q)
})",
  };
  for (const char *text : examples)
    ExpectRoundTrip(text);
}

TEST(HloPrinter, CloneIsEqualAndIndependent) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a), metadata={op_name="n"}
})");
  ASSERT_TRUE(m);
  std::unique_ptr<HloModule> clone = llvm::cantFail(CloneModule(*m));
  std::string why;
  EXPECT_TRUE(StructurallyEqual(*m, *clone, &why)) << why;
  Find(*clone, "n")->SetAttribute("metadata", "{op_name=\"changed\"}");
  EXPECT_FALSE(StructurallyEqual(*m, *clone, &why));
  EXPECT_NE(why.find("attribute 'metadata' differs"), std::string::npos) << why;
  EXPECT_EQ(*Find(*m, "n")->FindAttribute("metadata"), "{op_name=\"n\"}");
}

// A module whose printed text cannot parse back (an operand taken from
// another computation, which only a pass bypassing the IR's API makes) is an
// error naming the module, not an abort.
TEST(HloPrinter, CloneOfABrokenModuleIsAnError) {
  testutil::TestModule f;
  HloComputation *other = f.module->AddComputation(std::make_unique<HloComputation>("other"));
  other->AddInstruction(
      HloInstruction::Create(HloOpcode::kNegate, testutil::F32({2}), {f.p0}, "stray"));
  llvm::Expected<std::unique_ptr<HloModule>> clone = CloneModule(*f.module);
  ASSERT_FALSE(clone);
  std::string message = llvm::toString(clone.takeError());
  EXPECT_NE(message.find("module 'm' does not parse back from its printed text: "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("unknown operand 'p0'"), std::string::npos) << message;
}

TEST(HloPrinter, StructuralEqualityFindsDifferences) {
  const char *base = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
})";
  struct Variant {
    const char *text;
    const char *why;
  } variants[] = {
      {"HloModule x\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}",
       "module names differ"},
      {"HloModule m\nENTRY e {\n  a = f32[2]{0} parameter(0)\n  ROOT n = f32[2] negate(a)\n}",
       "shapes differ"},
      {"HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] abs(a)\n}",
       "opcodes differ"},
      {"HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT m = f32[2] negate(a)\n}",
       "roots differ"},
      {"HloModule m, is_scheduled=true\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}",
       "header attribute counts differ"},
  };
  auto m = Parse(base);
  ASSERT_TRUE(m);
  for (const Variant &v : variants) {
    auto other = Parse(v.text);
    ASSERT_TRUE(other);
    std::string why;
    EXPECT_FALSE(StructurallyEqual(*m, *other, &why)) << v.text;
    EXPECT_NE(why.find(v.why), std::string::npos) << why;
  }
}

} // namespace
