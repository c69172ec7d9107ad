// Unit tests of the HLO text parser: both syntaxes, every shape form,
// literals, attributes, references, the semantic checks, located errors and
// robustness against random and mutated input.
#include "loom/hlo/ir/HloStructuralEquality.h"
#include "loom/hlo/parser/HloParser.h"

#include "HloTestUtil.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <random>

using namespace loom::hlo;

namespace {

using testutil::Parse;

/// The error message parsing `text` gives; fails the test if it parses.
std::string ParseError(llvm::StringRef text) {
  auto module = ParseHloModule(text);
  if (module) {
    ADD_FAILURE() << "parsed, expected an error:\n" << text.str();
    return "";
  }
  return llvm::toString(module.takeError());
}

HloInstruction *Find(const HloModule &m, llvm::StringRef name) {
  for (HloComputation *c : m.computations())
    if (HloInstruction *i = c->GetInstructionWithName(name))
      return i;
  return nullptr;
}

std::string ShapeText(llvm::StringRef text) {
  auto shape = ParseShape(text);
  if (!shape)
    return "error: " + llvm::toString(shape.takeError());
  return shape->ToString();
}

TEST(HloParser, ShortSyntax) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  ROOT a = f32[2] add(x, y)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name(), "m");
  HloComputation *e = m->entry_computation();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->name(), "e");
  EXPECT_EQ(e->instruction_count(), 3);
  HloInstruction *a = e->root_instruction();
  EXPECT_EQ(a->name(), "a");
  EXPECT_EQ(a->opcode(), HloOpcode::kAdd);
  ASSERT_EQ(a->operand_count(), 2);
  EXPECT_EQ(a->operand(0)->name(), "x");
  EXPECT_EQ(a->operand(1)->name(), "y");
  EXPECT_FALSE(a->shape().has_layout());
  EXPECT_EQ(e->num_parameters(), 2);
  EXPECT_EQ(e->parameter_instruction(1)->name(), "y");
  EXPECT_EQ(a->operand(0)->users().size(), 1u);
}

TEST(HloParser, LongSyntaxAsXlaDumpsIt) {
  auto m = Parse(R"(HloModule jit_f, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}, num_partitions=4

ENTRY %main.3 (Arg_0.1: f32[2,3]) -> f32[2,3] {
  %Arg_0.1 = f32[2,3]{1,0} parameter(0), sharding={devices=[2,2]0,1,2,3}
  ROOT %negate.2 = f32[2,3]{1,0} negate(f32[2,3]{1,0} %Arg_0.1), metadata={op_name="jit(f)/neg" source_file="a.py" source_line=3}
}
)");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->header_attributes().size(), 2u);
  EXPECT_EQ(m->header_attributes()[0].name, "entry_computation_layout");
  EXPECT_EQ(m->header_attributes()[0].value, "{(f32[2,3]{1,0})->f32[2,3]{1,0}}");
  EXPECT_EQ(m->num_partitions(), 4);
  HloInstruction *neg = Find(*m, "negate.2");
  ASSERT_TRUE(neg);
  EXPECT_EQ(neg->shape().ToString(), "f32[2,3]{1,0}");
  ASSERT_EQ(neg->attributes().size(), 1u);
  EXPECT_EQ(*neg->FindAttribute("metadata"),
            R"({op_name="jit(f)/neg" source_file="a.py" source_line=3})");
  EXPECT_EQ(*Find(*m, "Arg_0.1")->FindAttribute("sharding"), "{devices=[2,2]0,1,2,3}");
}

TEST(HloParser, EveryPrimitiveType) {
  auto is_array_type = [](PrimitiveType t) {
    return t != PrimitiveType::TUPLE && t != PrimitiveType::BUFFER &&
           t != PrimitiveType::TOKEN && t != PrimitiveType::OPAQUE_TYPE;
  };
#define LOOM_X(E, S, B)                                                        \
  if (is_array_type(PrimitiveType::E)) {                                       \
    EXPECT_EQ(ShapeText(S "[3,1]{0,1}"), S "[3,1]{0,1}");                      \
  }
  LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
  EXPECT_EQ(ShapeText("token[]"), "token[]");
  EXPECT_EQ(ShapeText("opaque[]"), "opaque[]");
}

TEST(HloParser, ShapeForms) {
  EXPECT_EQ(ShapeText("f32[]"), "f32[]");
  EXPECT_EQ(ShapeText("f32[]{}"), "f32[]{}");
  EXPECT_EQ(ShapeText("f32[2, 3]"), "f32[2,3]");
  EXPECT_EQ(ShapeText("f32[<=4,?,5]"), "f32[<=4,?,5]");
  EXPECT_EQ(ShapeText("bf16[8,128]{1,0:T(8,128)(2,1)E(4)S(1)}"),
            "bf16[8,128]{1,0:T(8,128)(2,1)E(4)S(1)}");
  EXPECT_EQ(ShapeText("s32[]{:T(128)}"), "s32[]{:T(128)}");
  EXPECT_EQ(ShapeText("f32[10,10]{1,0:D(D,C)P((s32[10]{0:T(100)}, f32[10]{0:T(100)}))}"),
            "f32[10,10]{1,0:D(D,C)P((s32[10]{0:T(100)}, f32[10]{0:T(100)}))}");
  EXPECT_EQ(ShapeText("()"), "()");
  EXPECT_EQ(ShapeText("(f32[2]{0}, (s32[], token[]), ())"), "(f32[2]{0}, (s32[], token[]), ())");
  EXPECT_EQ(ShapeText("(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[1])"),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[1])");
  EXPECT_EQ(ShapeText("b(s32[2,8]{1,0})"), "b(s32[2,8]{1,0})");

  auto shape = ParseShape("f32[<=4,?]{0,1}");
  ASSERT_TRUE(bool(shape));
  EXPECT_TRUE(shape->is_dynamic_dimension(0));
  EXPECT_EQ(shape->dimensions(0), 4);
  EXPECT_EQ(shape->dimensions(1), Shape::kUnboundedSize);
  EXPECT_EQ(llvm::ArrayRef<int64_t>(shape->layout()->minor_to_major), llvm::ArrayRef<int64_t>({0, 1}));
  auto tiled = ParseShape("f32[8]{0:T(8)}");
  ASSERT_TRUE(bool(tiled));
  EXPECT_EQ(tiled->layout()->attributes, "T(8)");
}

TEST(HloParser, BadShapes) {
  EXPECT_NE(ShapeText("f32[2").find("<shape>:1:6: expected ',' or ']'"), std::string::npos)
      << ShapeText("f32[2");
  EXPECT_NE(ShapeText("f33[2]").find("1:1: unknown element type 'f33'"), std::string::npos);
  EXPECT_NE(ShapeText("f32[-1]").find("expected a dimension size"), std::string::npos);
  EXPECT_NE(ShapeText("f32[2]{1,0").find("expected '}'"), std::string::npos);
  EXPECT_NE(ShapeText("token[2]").find("'token' shapes have no dimensions"), std::string::npos);
  EXPECT_NE(ShapeText("f32[2] x").find("unexpected text after the shape"), std::string::npos);
  EXPECT_NE(ShapeText("f32[99999999999999999999]").find("does not fit in 64 bits"),
            std::string::npos);
  EXPECT_NE(ShapeText("f32[9223372036854775807,4]").find("multiply past"), std::string::npos);
  EXPECT_NE(ShapeText("").find("expected a shape"), std::string::npos);
}

TEST(HloParser, ConstantsKeepTheirLiteralVerbatim) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[] constant(-inf)
  b = pred[] constant(true)
  c = s32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })
  d = c64[] constant((1, 0))
  e = (s32[], f32[2]) constant((1, {2.5, 3}))
  f = bf16[4] constant({1, 2, 3, 4})
  g = u64[] constant(18446744073709551615)
  h = f8e4m3fn[2] constant({0.5, -1})
  ROOT t = (f32[], pred[]) tuple(a, b)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(Find(*m, "a")->literal_text(), "-inf");
  EXPECT_EQ(Find(*m, "b")->literal_text(), "true");
  EXPECT_EQ(Find(*m, "c")->literal_text(), "{ { 1, 2 }, { 3, 4 } }");
  EXPECT_EQ(Find(*m, "d")->literal_text(), "(1, 0)");
  EXPECT_EQ(Find(*m, "e")->literal_text(), "(1, {2.5, 3})");
  EXPECT_EQ(Find(*m, "e")->shape().ToString(), "(s32[], f32[2])");
  EXPECT_EQ(Find(*m, "g")->literal_text(), "18446744073709551615");
  EXPECT_EQ(Find(*m, "h")->shape().element_type(), PrimitiveType::F8E4M3FN);
}

TEST(HloParser, AttributeValuesAreBalancedAndKeptInOrder) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="foo\"bar", backend_config="{\"a\":\"},(\"}", frontend_attributes={x="{",y="a,b"}, sharding={{devices=[2]0,1}, {replicated}}, window={size=2 pad=0_1}, dim_labels=b01f_01io->b01f, literal=s32[2]{0} {1, 2}
})");
  ASSERT_TRUE(m);
  HloInstruction *c = Find(*m, "c");
  std::vector<std::pair<std::string, std::string>> expected = {
      {"custom_call_target", R"("foo\"bar")"},
      {"backend_config", R"("{\"a\":\"},(\"}")"},
      {"frontend_attributes", R"({x="{",y="a,b"})"},
      {"sharding", "{{devices=[2]0,1}, {replicated}}"},
      {"window", "{size=2 pad=0_1}"},
      {"dim_labels", "b01f_01io->b01f"},
      {"literal", "s32[2]{0} {1, 2}"},
  };
  ASSERT_EQ(c->attributes().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(c->attributes()[i].name, expected[i].first);
    EXPECT_EQ(c->attributes()[i].value, expected[i].second);
  }
}

TEST(HloParser, MultiLineInstructionsAndComments) {
  auto m = Parse(R"(HloModule m // trailing comment
/* a block
   comment */
ENTRY e {
  // a line comment
  p = f32[10,15]{1,0} parameter(0)
  q = f32[15,10]{1,0} parameter(1)
  d = f32[10,10]{1,0} dot(p, /* inline */ q),
      lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT w = f32[10,10]{1,0} copy(d), backend_config=
      "{}"
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(*Find(*m, "d")->FindAttribute("rhs_contracting_dims"), "{0}");
  EXPECT_EQ(*Find(*m, "w")->FindAttribute("backend_config"), R"("{}")");
}

TEST(HloParser, AsyncSugarRoundTrips) {
  auto m = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT sum = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) negate-start(p), async_execution_thread="t"
  u = ((f32[4]), f32[4], s32[]) negate-update(s)
  d = f32[4] negate-done(u)
  ag = (f32[4], f32[8]) all-gather-start(p), dimensions={0}
  rs = ((f32[4]), f32[2]) reduce-scatter-start(p), dimensions={0}, to_apply=add
  ROOT t = (f32[4], (f32[4], f32[8]), ((f32[4]), f32[2])) tuple(d, ag, rs)
})");
  ASSERT_TRUE(m);
  HloInstruction *s = Find(*m, "s");
  EXPECT_EQ(s->opcode(), HloOpcode::kAsyncStart);
  EXPECT_EQ(s->async_wrapped_opcode(), HloOpcode::kNegate);
  EXPECT_EQ(s->OpcodeText(), "negate-start");
  EXPECT_EQ(Find(*m, "u")->opcode(), HloOpcode::kAsyncUpdate);
  EXPECT_EQ(Find(*m, "d")->opcode(), HloOpcode::kAsyncDone);
  EXPECT_EQ(Find(*m, "ag")->opcode(), HloOpcode::kAllGatherStart);
  EXPECT_FALSE(Find(*m, "ag")->async_wrapped_opcode());
  EXPECT_EQ(Find(*m, "rs")->async_wrapped_opcode(), HloOpcode::kReduceScatter);
  EXPECT_NE(m->ToString().find("reduce-scatter-start(f32[4] %p)"), std::string::npos);
}

TEST(HloParser, ControlPredecessors) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  c = f32[] exponential(a)
  ROOT d = f32[] add(b, c), control-predecessors={c, %b}, metadata={op_name="x"}
})");
  ASSERT_TRUE(m);
  HloInstruction *d = Find(*m, "d");
  ASSERT_EQ(d->control_predecessors().size(), 2u);
  EXPECT_EQ(d->control_predecessors()[0]->name(), "c");
  EXPECT_EQ(d->control_predecessors()[1]->name(), "b");
  EXPECT_EQ(Find(*m, "b")->control_successors().size(), 1u);
  ASSERT_EQ(d->attributes().size(), 2u);
  EXPECT_EQ(d->attributes()[0].kind, HloInstruction::AttributeKind::kControlPredecessors);
  EXPECT_NE(ParseError(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT d = f32[] negate(a), control-predecessors={later}
  later = f32[] negate(a)
})").find("4:51: instruction 'd': unknown control predecessor 'later'"),
            std::string::npos);
}

TEST(HloParser, ComputationsMayBeReferencedBeforeTheyAreDefined) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  i = s32[] constant(1)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=%sum
  ROOT c = f32[] conditional(i, r, r), branch_computations={%id, neg}
}
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
id {
  ROOT x1 = f32[] parameter(0)
}
neg {
  x2 = f32[] parameter(0)
  ROOT n = f32[] negate(x2)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry_computation()->name(), "e");
  EXPECT_EQ(Find(*m, "r")->CalledComputations("to_apply")[0]->name(), "sum");
  auto branches = Find(*m, "c")->CalledComputations("branch_computations");
  ASSERT_EQ(branches.size(), 2u);
  EXPECT_EQ(branches[0]->name(), "id");
  EXPECT_EQ(branches[1]->name(), "neg");
  // Callees print before callers.
  std::string text = m->ToString();
  EXPECT_LT(text.find("%sum ("), text.find("ENTRY %e"));
  EXPECT_NE(text.find("branch_computations={%id, %neg}"), std::string::npos);
}

TEST(HloParser, WithoutEntryTheLastComputationIsTheEntry) {
  auto m = Parse(R"(HloModule m
a {
  ROOT x = f32[] parameter(0)
}
b {
  ROOT y = f32[] parameter(0)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry_computation()->name(), "b");
  auto marked = Parse(R"(HloModule m
ENTRY a {
  ROOT x = f32[] parameter(0)
}
b {
  ROOT y = f32[] parameter(0)
})");
  ASSERT_TRUE(marked);
  EXPECT_EQ(marked->entry_computation()->name(), "a");
}

TEST(HloParser, WithoutRootTheLastInstructionIsTheRoot) {
  auto m = Parse("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] negate(x)\n}");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "y");
}

TEST(HloParser, InferredShapes) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  t = tuple(a, b)
  g = get-tuple-element(t), index=1
  d = dot(a, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = negate(d)
  c = compare(n, d), direction=LT
  ROOT s = select(c, n, d)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(Find(*m, "t")->shape().ToString(), "(f32[4,3], f32[3,5])");
  EXPECT_EQ(Find(*m, "g")->shape().ToString(), "f32[3,5]");
  EXPECT_EQ(Find(*m, "d")->shape().ToString(), "f32[4,5]");
  EXPECT_EQ(Find(*m, "c")->shape().ToString(), "pred[4,5]");
  EXPECT_EQ(Find(*m, "s")->shape().ToString(), "f32[4,5]");
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = convert(a)\n}")
                .find("4:12: instruction 'b': cannot infer the shape"),
            std::string::npos);
}

TEST(HloParser, InlineComputationsAndInPlaceOperands) {
  auto m = Parse(R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  f = f32[4] fusion(a), kind=kLoop, calls={
    a = f32[4] parameter(0)
    ROOT n = f32[4] negate(a)
  }
  ROOT r = f32[4] add(f, f32[4] broadcast(f32[] constant(1)))
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->computation_count(), 2);
  HloInstruction *f = Find(*m, "f");
  ASSERT_EQ(f->called_computations().size(), 1u);
  HloComputation *fused = f->called_computations()[0];
  EXPECT_EQ(fused->name(), "f.calls");
  // Names are unique across the module, as in XLA: the first in the text
  // keeps its name.
  EXPECT_EQ(m->entry_computation()->parameter_instruction(0)->name(), "a");
  EXPECT_EQ(fused->parameter_instruction(0)->name(), "a.1");
  HloInstruction *r = Find(*m, "r");
  EXPECT_EQ(r->operand(1)->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(r->operand(1)->operand(0)->opcode(), HloOpcode::kConstant);
  EXPECT_EQ(r->operand(1)->operand(0)->literal_text(), "1");
  EXPECT_FALSE(r->operand(1)->name().empty());
}

TEST(HloParser, InstructionNamesAreMadeUniqueAcrossTheModule) {
  auto m = Parse(R"(HloModule m
c1 {
  p = f32[] parameter(0)
  ROOT p.1 = f32[] negate(p)
}
ENTRY c2 {
  p = f32[] parameter(0)
  ROOT r = f32[] call(p), to_apply=c1
})");
  ASSERT_TRUE(m);
  std::vector<std::string> names;
  for (HloComputation *c : m->computations())
    for (HloInstruction *i : c->instructions())
      names.push_back(i->name().str());
  EXPECT_EQ(names, (std::vector<std::string>{"p", "p.1", "p.2", "r"}));
}

TEST(HloParser, HeaderTrailerAndStackFrames) {
  auto m = Parse(R"(HloModule m, entry_computation_layout={()->f32[]}, num_partitions=2,
origin_recovery_table={
  {"c"} : {"d"}
}

FileNames
1 "a.py"

StackFrames
1 {file_location_id=1 parent_frame_id=1}


%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}, execution_thread="host"

ENTRY %main () -> f32[] {
  ROOT %c = f32[] constant(1), metadata={stack_frame_id=1}
}
)");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->header_attributes().size(), 3u);
  EXPECT_EQ(m->header_attributes()[2].name, "origin_recovery_table");
  EXPECT_EQ(m->header_attributes()[2].value, "{\n  {\"c\"} : {\"d\"}\n}");
  EXPECT_EQ(m->stack_frame_index(),
            "FileNames\n1 \"a.py\"\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}");
  EXPECT_EQ(m->GetComputationWithName("add")->trailer(), ", execution_thread=\"host\"");
}

TEST(HloParser, OldStyleModuleNameWithColon) {
  auto m = Parse("HloModule m:\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name(), "m");
}

// ---- Errors -------------------------------------------------------------------

struct BadInput {
  const char *text;
  const char *message; // expected substring, with line:col
};

TEST(HloParser, ErrorsAreLocatedAndNameTheCulprit) {
  const BadInput cases[] = {
      {"", "<input>:1:1: expected 'HloModule'"},
      {"HloModule", "<input>:1:10: expected the module name"},
      {"HloModule m", "<input>:1:12: module 'm' has no computations"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n",
       "<input>:2:9: unterminated computation"},
      {"HloModule m\nENTRY e {\n  x = f32[2,] parameter(0)\n}",
       "<input>:3:13: instruction 'x': expected a dimension size"},
      {"HloModule m\nENTRY e {\n  x = f32[] frobnicate()\n}",
       "<input>:3:13: instruction 'x': unknown opcode 'frobnicate'"},
      {"HloModule m\nENTRY e {\n  ROOT x = f32[] negate(y)\n}",
       "<input>:3:25: instruction 'x': unknown operand 'y'"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  x = f32[] parameter(1)\n}",
       "<input>:4:3: duplicate instruction name 'x' in computation 'e'"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), "
       "to_apply=nowhere\n}",
       "<input>:4:36: instruction 'c' refers to unknown computation 'nowhere'"},
      {"HloModule m\nENTRY e {\n  x = f32[9223372036854775807,4] parameter(0)\n}",
       "<input>:3:7: instruction 'x': the dimensions of 'f32[9223372036854775807,4]' multiply "
       "past"},
      {"HloModule m\ne {\n  ROOT x = f32[] parameter(0)\n}\ne {\n  ROOT x = f32[] "
       "parameter(0)\n}",
       "<input>:5:1: duplicate computation name 'e'"},
      {"HloModule m\nENTRY a {\n  ROOT x = f32[] parameter(0)\n}\nENTRY b {\n  ROOT y = f32[] "
       "parameter(0)\n}",
       "<input>:5:1: computation 'b' is marked ENTRY but 'a' already is"},
      {"HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}",
       "<input>:4:3: computation 'e' has two ROOT instructions: 'x' and 'y'"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(0), metadata={op_name=\"a}\n}",
       "<input>:3:45: unterminated string"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(0), sharding={devices=[2)}\n}",
       "<input>:3:47: expected ']' to match '[' but found ')'"},
      {"HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(f32[3] x)\n}",
       "<input>:4:26: instruction 'y': operand 'x' is written as 'f32[3]' but its shape is "
       "f32[2]"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(99999)\n}",
       "<input>:3:23: instruction 'x': parameter number 99999 is out of range"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(0) /* open",
       "<input>:3:26: unterminated '/*' comment"},
      {"HloModule m\nENTRY e {\n  x = f32[] parameter(0), dimensions=\n}",
       "<input>:4:1: instruction 'x': expected a value for attribute 'dimensions'"},
      {"HloModule m\nENTRY e {\n}", "<input>:2:9: computation 'e' has no instructions"},
  };
  for (const BadInput &c : cases) {
    std::string message = ParseError(c.text);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "input:\n" << c.text << "\nexpected: " << c.message << "\ngot:      " << message;
  }
}

TEST(HloParser, FileNameIsUsedInErrors) {
  auto m = ParseHloModule("HloModule m\nbad", "dir/x.hlo");
  ASSERT_FALSE(m);
  EXPECT_EQ(llvm::toString(m.takeError()), "dir/x.hlo:2:4: expected '{' to open computation 'bad'");
}

TEST(HloParser, DeepNestingIsAnErrorNotACrash) {
  std::string deep_shape(10000, '(');
  deep_shape += "f32[]";
  deep_shape += std::string(10000, ')');
  std::string text = "HloModule m\nENTRY e {\n  ROOT x = " + deep_shape + " parameter(0)\n}";
  EXPECT_NE(ParseError(text).find("<input>:3:268: instruction 'x': shape nested deeper than 256"),
            std::string::npos)
      << ParseError(text);
  EXPECT_NE(ShapeText(deep_shape).find("nested deeper"), std::string::npos);

  std::string deep_attr = "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), backend_config=" +
                          std::string(10000, '{') + std::string(10000, '}') + "\n}";
  EXPECT_NE(ParseError(deep_attr).find("brackets nested deeper than 256"), std::string::npos);

  std::string deep_literal = "HloModule m\nENTRY e {\n  ROOT x = f32[] constant(" +
                             std::string(10000, '{') + std::string(10000, '}') + ")\n}";
  EXPECT_NE(ParseError(deep_literal).find("nested deeper"), std::string::npos);

  std::string deep_operand = "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n  ROOT y = ";
  for (int i = 0; i < 5000; ++i)
    deep_operand += "f32[] negate(";
  deep_operand += "x" + std::string(5000, ')') + "\n}";
  EXPECT_NE(ParseError(deep_operand).find("nested deeper"), std::string::npos);

  std::string deep_calls = "HloModule m\nENTRY e {\n";
  for (int i = 0; i < 1000; ++i)
    deep_calls += "  ROOT c" + std::to_string(i) + " = f32[] call(), to_apply={\n";
  deep_calls += "  ROOT x = f32[] parameter(0)\n" + std::string(1000, '}') + "\n}";
  EXPECT_NE(ParseError(deep_calls).find("nested deeper"), std::string::npos);
}

// ---- Robustness ---------------------------------------------------------------

const char kValidModule[] = R"(HloModule fuzz, is_scheduled=true, entry_computation_layout={(f32[4,8]{1,0}, s32[])->(f32[4,8]{1,0}, f32[])}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(f32[] %x, f32[] %y)
}

cond {
  t = (s32[], f32[4,8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  ROOT lt = pred[] compare(i, s32[] constant(4)), direction=LT
}

body {
  t = (s32[], f32[4,8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = f32[4,8] get-tuple-element(t), index=1
  n = f32[4,8]{1,0:T(8,128)} negate(v), metadata={op_name="a,b" source_file="f.py" source_line=7}
  ROOT r = (s32[], f32[4,8]) tuple(add(i, s32[] constant(1)), n)
}

ENTRY %main (p0: f32[4,8], p1: s32[]) -> (f32[4,8], f32[]) {
  %p0 = f32[4,8]{1,0} parameter(0), sharding={replicated}
  %p1 = s32[] parameter(1)
  %w = (s32[], f32[4,8]) while((s32[], f32[4,8]) tuple(%p1, %p0)), condition=cond, body=body
  %v = f32[4,8] get-tuple-element(%w), index=1
  %z = f32[] constant(0)
  %r = f32[] reduce(f32[4,8]{1,0} %p0, f32[] %z), dimensions={0,1}, to_apply=%sum
  %s = ((f32[4,8]), f32[4,8], s32[]) negate-start(%v), control-predecessors={%r}
  %d = f32[4,8] negate-done(%s)
  ROOT %out = (f32[4,8], /*index=1*/f32[]) tuple(%d, %r), backend_config="{\"k\": [1, 2]}"
}
)";

/// Parsing `text` must not crash; whatever parses must round-trip.
void CheckNoCrashAndRoundTrip(const std::string &text) {
  auto module = ParseHloModule(text);
  if (!module) {
    llvm::consumeError(module.takeError());
    return;
  }
  std::string printed = (*module)->ToString();
  auto again = ParseHloModule(printed);
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError()) << "\ninput:\n"
                           << text << "\nprinted:\n" << printed;
  std::string why;
  EXPECT_TRUE(StructurallyEqual(**module, **again, &why)) << why << "\ninput:\n" << text;
  EXPECT_EQ((*again)->ToString(), printed);
}

TEST(HloParser, ValidFuzzSeedRoundTrips) {
  auto m = Parse(kValidModule);
  ASSERT_TRUE(m);
  CheckNoCrashAndRoundTrip(kValidModule);
}

TEST(HloParser, RandomBytesAndMutationsNeverCrash) {
  std::mt19937 rng(20240601);
  const std::string alphabet = "%(){}[]<>=,:;/*\"\\ \n\tROOTENTRYHloModule-_.0123456789fs32[]";
  // Random bytes, then random strings over the HLO alphabet.
  for (int i = 0; i < 5000; ++i) {
    std::string text(rng() % 200, '\0');
    bool hlo_like = i % 2;
    for (char &c : text)
      c = hlo_like ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng() % 256);
    if (i % 4 == 1)
      text = "HloModule m\nENTRY e {\n" + text;
    CheckNoCrashAndRoundTrip(text);
  }
  // Mutations of a valid module: flips, insertions, deletions, truncation,
  // duplicated spans.
  const std::string seed = kValidModule;
  for (int i = 0; i < 20000; ++i) {
    std::string text = seed;
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t pos = rng() % text.size();
      switch (rng() % 5) {
      case 0:
        text[pos] = static_cast<char>(rng() % 256);
        break;
      case 1:
        text.insert(pos, 1, alphabet[rng() % alphabet.size()]);
        break;
      case 2:
        text.erase(pos, 1 + rng() % 8);
        break;
      case 3:
        text.resize(pos);
        break;
      default: {
        size_t len = std::min<size_t>(1 + rng() % 40, text.size() - pos);
        text.insert(rng() % text.size(), text.substr(pos, len));
      }
      }
    }
    CheckNoCrashAndRoundTrip(text);
  }
}

} // namespace

namespace {

// Shapes the parser fills in with ShapeInference, and XLA's normalizations:
// a scalar broadcast without dimensions= gets dimensions={} (first, as XLA
// prints it) and api_version=API_VERSION_ORIGINAL prints implicitly.
TEST(HloParser, InfersCallAndReduceShapesAndNormalizesLikeXla) {
  auto m = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
f {
  a = f32[2,3] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (f32[2,3], s32[]) tuple(a, b)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  b = s32[] parameter(1)
  init = f32[] constant(0)
  c = call(a, b), to_apply=f
  r = reduce(a, init), dimensions={0,1}, to_apply=add
  bc = f32[4] broadcast(init), metadata={op_name="x"}
  cc = f32[2,3] custom-call(a), custom_call_target="t", api_version=API_VERSION_ORIGINAL
  ROOT out = tuple(c, r, bc, cc)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(Find(*m, "c")->shape().ToString(false), "(f32[2,3], s32[])");
  EXPECT_EQ(Find(*m, "r")->shape().ToString(false), "f32[]");
  EXPECT_EQ(Find(*m, "out")->shape().ToString(false), "((f32[2,3], s32[]), f32[], f32[4], f32[2,3])");
  EXPECT_EQ(Find(*m, "bc")->ToString(),
            "%bc = f32[4] broadcast(f32[] %init), dimensions={}, metadata={op_name=\"x\"}");
  // (The entry's `a` is `a.1`: computation f named an `a` first.)
  EXPECT_EQ(Find(*m, "cc")->ToString(),
            "%cc = f32[2,3] custom-call(f32[2,3] %a.1), custom_call_target=\"t\"");
  // api_version takes XLA's enum names only.
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = f32[] "
                       "custom-call(a), custom_call_target=\"t\", api_version=2\n}")
                .find("unknown api_version '2'"),
            std::string::npos);
  // A shape the rule cannot give is an error saying why.
  EXPECT_NE(ParseError("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = "
                       "broadcast(a), dimensions={0}\n}")
                .find("cannot infer the shape (broadcast has no inference rule); write it"),
            std::string::npos);
}

} // namespace
