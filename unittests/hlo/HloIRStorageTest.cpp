// Unit tests of how the HLO IR stores a parsed module (docs/performance.md,
// "How a module is stored"): texts are views into the module's source and
// copies own their bytes; instructions share one Shape per shape text and
// copy it before a change; the name table answers exactly like a set of
// strings; the cached "text order is a post order" is dropped by the edits
// that can break it.
#include "HloTestUtil.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/ir/HloNameTable.h"
#include "loom/hlo/ir/HloText.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "gtest/gtest.h"

#include <random>
#include <string>

using namespace loom::hlo;

namespace {

using testutil::Parse;

using testutil::Find;

bool InText(llvm::StringRef text, llvm::StringRef within) {
  return text.begin() >= within.begin() && text.end() <= within.end();
}

constexpr const char *kModule = R"(HloModule m

ENTRY main {
  p0 = f32[4,8]{1,0} parameter(0), metadata={op_name="a"}
  p1 = f32[4,8]{1,0} parameter(1)
  add.1 = f32[4,8]{1,0} add(p0, p1), metadata={op_name="b"}
  ROOT neg.2 = f32[4,8]{1,0} negate(add.1)
}
)";

TEST(HloText, ViewsAndOwnedCopies) {
  std::string source = "metadata";
  HloText view = HloText::View(source);
  EXPECT_FALSE(view.owned());
  EXPECT_EQ(view.data(), source.data());
  HloText copy = view;
  EXPECT_TRUE(copy.owned());
  EXPECT_NE(copy.data(), source.data());
  EXPECT_EQ(copy, "metadata");
  HloText moved = std::move(copy);
  EXPECT_TRUE(moved.owned());
  EXPECT_TRUE(copy.empty());
  moved = "other";
  EXPECT_EQ(moved.ref(), "other");
  EXPECT_EQ(std::string(moved), "other");
}

TEST(HloIRStorage, ParsedTextsAreViewsOfTheSource) {
  auto m = Parse(kModule);
  ASSERT_TRUE(m);
  llvm::StringRef source = m->source();
  HloInstruction *add = Find(*m, "add.1");
  ASSERT_TRUE(add);
  EXPECT_TRUE(InText(add->name(), source));
  ASSERT_EQ(add->attributes().size(), 1u);
  EXPECT_TRUE(InText(add->attributes()[0].value, source));
  EXPECT_FALSE(add->attributes()[0].value.owned());
  // A copied attribute owns its bytes: it may outlive the module.
  HloInstruction::Attribute copy = add->attributes()[0];
  m.reset();
  EXPECT_EQ(copy.value.ref(), "{op_name=\"b\"}");
  EXPECT_EQ(copy.name.ref(), "metadata");
}

TEST(HloIRStorage, SetTextsAreOwned) {
  auto m = Parse(kModule);
  ASSERT_TRUE(m);
  HloInstruction *add = Find(*m, "add.1");
  std::string value = "{op_name=\"c\"}";
  add->SetAttribute("metadata", value);
  value.assign(value.size(), 'x');
  EXPECT_EQ(add->FindAttribute("metadata")->ref(), "{op_name=\"c\"}");
  add->SetName("renamed");
  EXPECT_EQ(add->name(), "renamed");
  EXPECT_FALSE(InText(add->name(), m->source()));
}

TEST(HloIRStorage, EqualShapeTextsShareOneShapeUntilChanged) {
  auto m = Parse(kModule);
  ASSERT_TRUE(m);
  HloInstruction *p0 = Find(*m, "p0"), *p1 = Find(*m, "p1"), *neg = Find(*m, "neg.2");
  EXPECT_EQ(&p0->shape(), &p1->shape());
  EXPECT_EQ(&p0->shape(), &neg->shape());
  // Copy on write: the others keep the shape they had.
  p1->mutable_shape()->set_dimensions(0, 16);
  EXPECT_NE(&p0->shape(), &p1->shape());
  EXPECT_EQ(p1->shape().ToString(), "f32[16,8]{1,0}");
  EXPECT_EQ(p0->shape().ToString(), "f32[4,8]{1,0}");
  EXPECT_EQ(neg->shape().ToString(), "f32[4,8]{1,0}");
}

TEST(HloIRStorage, ShapesPrintTheSameWhenShared) {
  auto m = Parse(kModule);
  ASSERT_TRUE(m);
  auto again = Parse(m->ToString());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->ToString(), m->ToString());
}

TEST(HloIRStorage, PostOrderIsRecomputedAfterAnEditThatBreaksIt) {
  auto m = Parse(kModule);
  ASSERT_TRUE(m);
  HloComputation *c = m->entry_computation();
  // Text order is a post order, and is cached as one.
  std::vector<HloInstruction *> before = c->MakeInstructionPostOrder();
  ASSERT_EQ(before.size(), 4u);
  // A new instruction at the end now feeds an earlier one.
  HloInstruction *add = Find(*m, "add.1");
  HloInstruction *p0 = Find(*m, "p0");
  HloInstruction *late = c->AddInstruction(
      HloInstruction::Create(HloOpcode::kNegate, p0->shape(), {p0}, "late"));
  ASSERT_FALSE(llvm::errorToBool(add->ReplaceOperandWith(1, late)));
  std::vector<HloInstruction *> after = c->MakeInstructionPostOrder();
  auto pos = [&](HloInstruction *i) { return llvm::find(after, i) - after.begin(); };
  ASSERT_EQ(after.size(), 5u);
  EXPECT_LT(pos(late), pos(add));
  EXPECT_LT(pos(p0), pos(late));
}

TEST(HloNameTable, AnswersLikeASetOfStrings) {
  // Names of every shape the table splits differently: bare, `base.N`,
  // leading zeros, long suffixes, sparse and dense N, dots inside.
  std::vector<std::string> names = {
      "add",        "add.1",     "add.01",   "add.0",     "add.",     "add.1.2",
      "a.b",        "add.999999999", "add.1234567890", "x.67108863", "p0",
      "fusion.3",   ".1",        "",         "dot.12",    "dot.13",   "dot.014"};
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i)
    names.push_back("m" + std::to_string(rng() % 5) + "." + std::to_string(rng() % 100000));
  HloNameTable table;
  llvm::StringSet<> reference;
  for (const std::string &n : names) {
    bool fresh = reference.insert(n).second;
    EXPECT_EQ(table.Insert(n), fresh) << n;
  }
  EXPECT_EQ(table.size(), reference.size());
  for (const std::string &n : names)
    EXPECT_TRUE(table.Contains(n)) << n;
  for (const char *n : {"add.2", "add.001", "a", "x.67108862", "m1.100000", "dot.14", "add.1.3"})
    EXPECT_EQ(table.Contains(n), reference.count(n) != 0) << n;
}

TEST(HloNameTable, UniqueNamesAfterParsing) {
  auto m = Parse(kModule);
  ASSERT_TRUE(m);
  // `add.1` is taken by the text, so the first free `add.N` is add.2.
  EXPECT_EQ(m->UniqueInstructionName("add"), "add");
  EXPECT_EQ(m->UniqueInstructionName("add"), "add.2");
  EXPECT_EQ(m->UniqueInstructionName("neg"), "neg");
  EXPECT_EQ(m->UniqueInstructionName("neg"), "neg.1");
  EXPECT_EQ(m->UniqueInstructionName("neg"), "neg.3");
  EXPECT_EQ(m->UniqueInstructionName("p0"), "p0.1");
}

} // namespace
