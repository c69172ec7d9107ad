// Unit tests of the HLO IR: use lists, replacement, removal, post order,
// name uniquing, shapes and the typed attribute decoders.
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloModule.h"

#include "HloTestUtil.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

using namespace loom::hlo;

namespace {

using testutil::F32;
using testutil::TestModule;

TEST(HloIR, UsersAreUniqueAndFollowReplacement) {
  TestModule f;
  HloInstruction *sum = f.Add(f.p0, f.p0);
  ASSERT_EQ(f.p0->users().size(), 1u);
  HloInstruction *neg = f.comp->AddInstruction(
      HloInstruction::Create(HloOpcode::kNegate, F32({2}), {sum}));
  f.comp->set_root_instruction(neg);

  ASSERT_FALSE(llvm::errorToBool(f.p0->ReplaceAllUsesWith(f.p1)));
  EXPECT_EQ(sum->operand(0), f.p1);
  EXPECT_EQ(sum->operand(1), f.p1);
  EXPECT_TRUE(f.p0->users().empty());
  EXPECT_EQ(f.p1->users().size(), 1u);

  ASSERT_FALSE(llvm::errorToBool(neg->ReplaceAllUsesWith(sum)));
  EXPECT_EQ(f.comp->root_instruction(), sum);
}

TEST(HloIR, ReplaceRefusesIncompatibleShapes) {
  TestModule f;
  HloInstruction *sum = f.Add(f.p0, f.p1);
  auto scalar = HloInstruction::Create(HloOpcode::kParameter, F32({}), {}, "s");
  scalar->set_parameter_number(2);
  HloInstruction *s = f.comp->AddInstruction(std::move(scalar));
  llvm::Error err = sum->ReplaceOperandWith(0, s);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("not compatible"), std::string::npos);
}

TEST(HloIR, RemoveInstructionAndUnusedOperandsTakesTheDeadChain) {
  TestModule f;
  HloInstruction *a = f.Add(f.p0, f.p1);
  HloInstruction *b = f.comp->AddInstruction(
      HloInstruction::Create(HloOpcode::kNegate, F32({2}), {a}));
  HloInstruction *shared = f.comp->AddInstruction(
      HloInstruction::Create(HloOpcode::kExp, F32({2}), {f.p0}));
  HloInstruction *c = f.Add(b, shared);
  HloInstruction *root = f.comp->AddInstruction(
      HloInstruction::Create(HloOpcode::kNegate, F32({2}), {shared}));
  f.comp->set_root_instruction(root);
  ASSERT_EQ(f.comp->instruction_count(), 7);
  f.comp->RemoveInstructionAndUnusedOperands(c);
  // c, b and a die; `shared` still feeds the root; parameters stay.
  EXPECT_EQ(f.comp->instruction_count(), 4);
  EXPECT_EQ(f.comp->GetInstructionWithName(shared->name()), shared);
}

TEST(HloIR, RemoveInstructionRefusesLiveOnes) {
  TestModule f;
  HloInstruction *a = f.Add(f.p0, f.p1);
  f.comp->set_root_instruction(a);
  EXPECT_TRUE(llvm::errorToBool(f.comp->RemoveInstruction(a)));
  EXPECT_TRUE(llvm::errorToBool(f.comp->RemoveInstruction(f.p0)));
}

TEST(HloIR, RemoveDeadInstructionsKeepsRootsAndSideEffects) {
  TestModule f;
  HloInstruction *dead = f.Add(f.p0, f.p1);
  f.Add(dead, dead);
  auto cc = HloInstruction::Create(HloOpcode::kCustomCall, F32({2}), {f.p0}, "effect");
  cc->SetAttribute("custom_call_has_side_effect", "true");
  f.comp->AddInstruction(std::move(cc));
  HloInstruction *root = f.Add(f.p0, f.p0);
  f.comp->set_root_instruction(root);
  EXPECT_TRUE(f.comp->RemoveDeadInstructions());
  EXPECT_EQ(f.comp->instruction_count(), 4);
  EXPECT_FALSE(f.comp->RemoveDeadInstructions());
}

TEST(HloIR, PostOrderPutsOperandsFirstAndKeepsTextOrder) {
  TestModule f;
  // Build a user before its operand exists in the list, as a pass would.
  HloInstruction *late = f.Add(f.p0, f.p1);
  HloInstruction *user = f.Add(late, f.p0);
  auto early = HloInstruction::Create(HloOpcode::kNegate, F32({2}), {f.p1});
  HloInstruction *neg = f.comp->AddInstruction(std::move(early));
  ASSERT_FALSE(llvm::errorToBool(user->ReplaceOperandWith(1, neg)));
  std::vector<HloInstruction *> order = f.comp->MakeInstructionPostOrder();
  auto pos = [&](HloInstruction *i) {
    return std::find(order.begin(), order.end(), i) - order.begin();
  };
  ASSERT_EQ(order.size(), 5u);
  EXPECT_LT(pos(neg), pos(user));
  EXPECT_LT(pos(late), pos(user));
  EXPECT_LT(pos(f.p0), pos(f.p1));
}

TEST(HloIR, PostOrderHandlesLongChainsWithoutRecursion) {
  TestModule f;
  HloInstruction *cur = f.p0;
  for (int i = 0; i < 200000; ++i)
    cur = f.comp->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({2}), {cur}));
  f.comp->set_root_instruction(cur);
  EXPECT_EQ(f.comp->MakeInstructionPostOrder().size(), 200002u);
}

TEST(HloIR, ManyUsersStayUniqueAndRemovable) {
  TestModule f;
  std::vector<HloInstruction *> adds;
  for (int i = 0; i < 1000; ++i)
    adds.push_back(f.Add(f.p0, f.p0));
  ASSERT_EQ(f.p0->user_count(), 1000);
  ASSERT_FALSE(llvm::errorToBool(adds[10]->ReplaceOperandWith(0, f.p1)));
  EXPECT_EQ(f.p0->user_count(), 1000) << "adds[10] still uses p0 as operand 1";
  ASSERT_FALSE(llvm::errorToBool(adds[10]->ReplaceOperandWith(1, f.p1)));
  EXPECT_EQ(f.p0->user_count(), 999);
  EXPECT_FALSE(llvm::is_contained(f.p0->users(), adds[10]));
  for (int i = 0; i < 500; ++i)
    ASSERT_FALSE(llvm::errorToBool(f.comp->RemoveInstruction(adds[i + 500])));
  EXPECT_EQ(f.p0->user_count(), 499);
  ASSERT_FALSE(llvm::errorToBool(f.p0->ReplaceAllUsesWith(f.p1)));
  EXPECT_EQ(f.p0->user_count(), 0);
  EXPECT_EQ(f.p1->user_count(), 500);
}

TEST(HloIR, UniqueNamesAvoidEveryTakenName) {
  HloModule m("m");
  m.ReserveInstructionName("add");
  m.ReserveInstructionName("add.1");
  EXPECT_EQ(m.UniqueInstructionName("add"), "add.2");
  EXPECT_EQ(m.UniqueInstructionName("add"), "add.3");
  EXPECT_EQ(m.UniqueInstructionName("dot"), "dot");
  EXPECT_EQ(m.UniqueInstructionName("dot"), "dot.1");
}

TEST(HloIR, ControlDependenciesAreSymmetric) {
  TestModule f;
  HloInstruction *a = f.Add(f.p0, f.p1);
  HloInstruction *b = f.Add(f.p1, f.p0);
  a->AddControlDependencyTo(b);
  a->AddControlDependencyTo(b);
  ASSERT_EQ(b->control_predecessors().size(), 1u);
  a->DropAllControlDeps();
  EXPECT_TRUE(b->control_predecessors().empty());
  EXPECT_TRUE(a->control_successors().empty());
}

TEST(Shape, ElementCountsAndOverflow) {
  EXPECT_EQ(*F32({2, 3}).ElementsIn(), 6);
  EXPECT_EQ(*F32({}).ElementsIn(), 1);
  EXPECT_FALSE(F32({INT64_MAX, 4}).ElementsIn().has_value());
  EXPECT_EQ(*Shape(PrimitiveType::BF16, {4, 4}).ByteSizeOf(), 32);
  EXPECT_EQ(*Shape(PrimitiveType::S4, {3}).ByteSizeOf(), 2);
}

TEST(Shape, PrintsLikeXla) {
  Shape s = F32({2, 3});
  EXPECT_EQ(s.ToString(), "f32[2,3]");
  Layout l = Shape::DefaultLayout(2);
  l.attributes = "T(8,128)";
  s.set_layout(l);
  EXPECT_EQ(s.ToString(), "f32[2,3]{1,0:T(8,128)}");
  s.set_dynamic_dimension(0, true);
  EXPECT_EQ(s.ToString(false), "f32[<=2,3]");
  std::vector<Shape> elems(6, F32({}));
  EXPECT_EQ(Shape::MakeTuple(elems).ToString(),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])");
}

TEST(HloAttributes, ReplicaGroupsExplicitAndIota) {
  auto explicit_groups = ParseReplicaGroups("{{0,1},{2,3}}");
  ASSERT_TRUE(bool(explicit_groups));
  EXPECT_EQ(explicit_groups->groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_FALSE(explicit_groups->was_iota);

  auto iota = ParseReplicaGroups("[2,4]<=[8]");
  ASSERT_TRUE(bool(iota));
  EXPECT_EQ(iota->groups, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));

  auto transposed = ParseReplicaGroups("[4,2]<=[2,4]T(1,0)");
  ASSERT_TRUE(bool(transposed));
  EXPECT_EQ(transposed->groups,
            (std::vector<std::vector<int64_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));

  auto empty = ParseReplicaGroups("{}");
  ASSERT_TRUE(bool(empty));
  EXPECT_TRUE(empty->groups.empty());

  for (const char *bad : {"{{0,1}", "[2,3]<=[8]", "[2,4]<=[8]T(0,0)", "{{0,x}}", "[2,2]<=[2,2]T(0)"}) {
    auto groups = ParseReplicaGroups(bad);
    EXPECT_FALSE(bool(groups)) << bad;
    if (!groups)
      llvm::consumeError(groups.takeError());
  }
}

// The mesh-axes form XLA prints for MeshAxesReplicaGroupList: devices
// row-major over the mesh, grouped over the axes in braces, the groups
// indexed by the other axes; the expected groups are worked out by hand.
TEST(HloAttributes, ReplicaGroupsMeshAxes) {
  using Groups = std::vector<std::vector<int64_t>>;
  auto expect = [](const char *text, const Groups &want) {
    auto groups = ParseReplicaGroups(text);
    ASSERT_TRUE(bool(groups)) << text << ": " << llvm::toString(groups.takeError());
    EXPECT_EQ(groups->groups, want) << text;
  };
  expect("mesh['a'=4,'b'=2] {'a'}", {{0, 2, 4, 6}, {1, 3, 5, 7}});
  expect("mesh['a'=4,'b'=2] {'b'}", {{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  expect("mesh['a'=4,'b'=2] {'b','a'}", {{0, 2, 4, 6, 1, 3, 5, 7}});
  expect("mesh['a'=4,'b'=2] {}", {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}});
  expect("mesh['a'=8] {'a':(1)2}", {{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  expect("mesh['a'=8] {'a':(2)2}", {{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  expect("mesh['a'=8] {'a':(4)2,'a':(1)2}", {{0, 4, 1, 5}, {2, 6, 3, 7}});
  expect("mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'a'}", {{3, 1}, {2, 0}});
  for (const char *bad :
       {"mesh['a'=4] {'c'}", "mesh['a'=4] {'a':(3)2}", "mesh['a'=4,'a'=2] {'a'}",
        "mesh['a'=2], device_ids=(0,0) {'a'}", "mesh['a'=4]", "mesh['a'=4] {'a','a'}",
        "mesh['a'=0] {'a'}", "mesh[a=4] {'a'}", "mesh['a'=4] {'a'} x"}) {
    auto groups = ParseReplicaGroups(bad);
    EXPECT_FALSE(bool(groups)) << bad;
    if (!groups)
      llvm::consumeError(groups.takeError());
  }
}

TEST(HloAttributes, DotDimensionNumbersRoundTrip) {
  TestModule f;
  HloInstruction *dot = f.comp->AddInstruction(
      HloInstruction::Create(HloOpcode::kDot, F32({}), {f.p0, f.p1}));
  dot->SetAttribute("lhs_contracting_dims", "{0}");
  dot->SetAttribute("rhs_contracting_dims", "{0}");
  auto d = GetDotDimensionNumbers(*dot);
  ASSERT_TRUE(bool(d));
  EXPECT_EQ(d->lhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_TRUE(d->lhs_batch_dimensions.empty());
  d->lhs_batch_dimensions = {1};
  SetDotDimensionNumbers(*dot, *d);
  EXPECT_EQ(*dot->FindAttribute("lhs_batch_dims"), "{1}");
}

TEST(HloAttributes, FrontendAttributesAndStrings) {
  TestModule f;
  HloInstruction *a = f.Add(f.p0, f.p1);
  SetFrontendAttributes(*a, {{"k", "v \"q\""}, {"x", "{1,2}"}});
  EXPECT_EQ(*a->FindAttribute("frontend_attributes"), R"({k="v \"q\"",x="{1,2}"})");
  auto attrs = GetFrontendAttributes(*a);
  ASSERT_TRUE(bool(attrs));
  ASSERT_EQ(attrs->size(), 2u);
  EXPECT_EQ((*attrs)[0].second, "v \"q\"");
  EXPECT_EQ((*attrs)[1].second, "{1,2}");
  EXPECT_EQ(UnquoteString(QuoteString("a\\b\"c")).value(), "a\\b\"c");
}

TEST(HloAttributes, SliceAndPadding) {
  TestModule f;
  HloInstruction *s = f.comp->AddInstruction(
      HloInstruction::Create(HloOpcode::kSlice, F32({1}), {f.p0}));
  s->SetAttribute("slice", "{[0:2:2], [1:3]}");
  auto cfg = GetSliceConfig(*s);
  ASSERT_TRUE(bool(cfg));
  EXPECT_EQ(cfg->strides, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(cfg->limits, (std::vector<int64_t>{2, 3}));
  s->SetAttribute("padding", "0_1x2_3_1");
  auto pad = GetPaddingConfig(*s);
  ASSERT_TRUE(bool(pad));
  EXPECT_EQ((*pad)[1].interior, 1);
  s->SetAttribute("padding", "0_x");
  auto bad = GetPaddingConfig(*s);
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

} // namespace
