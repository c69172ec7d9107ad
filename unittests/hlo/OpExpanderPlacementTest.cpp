// Unit tests of where OpExpanderPass leaves the instructions an expansion
// adds: neuron_looped_einsum_replacer's fused call takes the dot's place in
// text order (before the dot's first user, where the printer's depth-first
// post order printed the call when it was appended), so the text order stays
// a post order; a chain of fused dots comes out in the order that walk gives;
// and HloComputation::MoveInstructions, which does the move in one pass.
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"

#include "HloTestUtil.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

using testutil::F32;
using testutil::Find;
using testutil::Parse;
using testutil::RunPassAndVerify;

std::vector<const HloInstruction *> TextOrder(const HloComputation &comp) {
  std::vector<const HloInstruction *> order;
  for (const HloInstruction *inst : comp.instructions())
    order.push_back(inst);
  return order;
}

std::vector<std::string> Names(const std::vector<const HloInstruction *> &order) {
  std::vector<std::string> names;
  for (const HloInstruction *inst : order)
    names.push_back(inst->name().str());
  return names;
}

/// Every instruction's slot holds it, and slots grow along the text order
/// (removed ones before the first move stay empty, as after any removal).
void ExpectSlotsAreConsistent(const HloComputation &comp) {
  size_t next = 0;
  for (const HloInstruction *inst : comp.instructions()) {
    EXPECT_GE(inst->text_order_slot(), next) << inst->name().str();
    EXPECT_EQ(comp.instruction_in_slot(inst->text_order_slot()), inst) << inst->name().str();
    next = inst->text_order_slot() + 1;
  }
  EXPECT_EQ(comp.slot_count(), next);
}

// An instruction unrelated to the dot sits between the dot and its user.
const char kMiddle[] = R"(
HloModule middle, num_partitions=4
ENTRY %main (x: f32[8,32], w: f32[32,2,16], b: f32[8,8,16]) -> f32[8,8,16] {
  %x = f32[8,32]{1,0} parameter(0)
  %w = f32[32,2,16]{2,1,0} parameter(1)
  %b = f32[8,8,16]{2,1,0} parameter(2)
  %ag = f32[32,8,16]{2,1,0} all-gather(%w), channel_id=3, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  %dot = f32[8,8,16]{2,1,0} dot(%x, %ag), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %other = f32[8,8,16]{2,1,0} negate(%b)
  %use = f32[8,8,16]{2,1,0} add(%dot, %other)
  ROOT %out = f32[8,8,16]{2,1,0} tanh(%use)
}
)";

TEST(OpExpanderPlacement, FusedCallTakesTheDotsPlaceInTextOrder) {
  auto module = Parse(kMiddle);
  ASSERT_TRUE(module);
  NeuronLoopedEinsumReplacer pass{CollectiveMatmulOptions{}};
  ASSERT_TRUE(RunPassAndVerify(pass, *module));
  const HloComputation &entry = *module->entry_computation();
  const HloInstruction *use = Find(*module, "use");
  ASSERT_TRUE(use);
  const HloInstruction *call = use->operand(0);
  ASSERT_EQ(call->opcode(), HloOpcode::kCustomCall);
  const HloInstruction *reshape = call->operand(0);
  ASSERT_EQ(reshape->opcode(), HloOpcode::kReshape);
  // Not appended after the root: right before the dot's first user, after
  // the instructions that came before the dot.
  EXPECT_EQ(Names(TextOrder(entry)),
            (std::vector<std::string>{"x", "w", "b", "other", reshape->name().str(),
                                      call->name().str(), "use", "out"}));
  EXPECT_TRUE(entry.TextOrderIsPostOrder());
  ExpectSlotsAreConsistent(entry);
  std::vector<HloInstruction *> post_order = entry.MakeInstructionPostOrder();
  EXPECT_EQ(TextOrder(entry),
            std::vector<const HloInstruction *>(post_order.begin(), post_order.end()));
}

// dot2 reads dot1: both fuse, the second call reads the first.
const char kChain[] = R"(
HloModule chain, num_partitions=4
ENTRY %main (x: f32[8,32], w1: f32[32,2,16], w2: f32[16,2,16], b: f32[8,8,8,16]) -> f32[8,8,8,16] {
  %x = f32[8,32]{1,0} parameter(0)
  %w1 = f32[32,2,16]{2,1,0} parameter(1)
  %w2 = f32[16,2,16]{2,1,0} parameter(2)
  %b = f32[8,8,8,16]{3,2,1,0} parameter(3)
  %ag1 = f32[32,8,16]{2,1,0} all-gather(%w1), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  %dot1 = f32[8,8,16]{2,1,0} dot(%x, %ag1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %ag2 = f32[16,8,16]{2,1,0} all-gather(%w2), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  %dot2 = f32[8,8,8,16]{3,2,1,0} dot(%dot1, %ag2), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  %neg = f32[8,8,8,16]{3,2,1,0} negate(%b)
  ROOT %add = f32[8,8,8,16]{3,2,1,0} add(%dot2, %neg)
}
)";

TEST(OpExpanderPlacement, ChainOfFusedDotsInThePrintersPostOrder) {
  auto module = Parse(kChain);
  ASSERT_TRUE(module);
  NeuronLoopedEinsumReplacer pass{CollectiveMatmulOptions{}};
  ASSERT_TRUE(RunPassAndVerify(pass, *module));
  const HloComputation &entry = *module->entry_computation();
  const HloInstruction *add = entry.root_instruction();
  const HloInstruction *call2 = add->operand(0);
  ASSERT_EQ(call2->opcode(), HloOpcode::kCustomCall);
  const HloInstruction *reshape2 = call2->operand(0);
  const HloInstruction *call1 = call2->operand(1);
  ASSERT_EQ(call1->opcode(), HloOpcode::kCustomCall);
  const HloInstruction *reshape1 = call1->operand(0);
  // The depth-first walk from %add (the first instruction that reads a new
  // one) meets call2's operands in order: reshape2, then call1 with its
  // reshape1; the first call's place is the second's, not dot1's.
  EXPECT_EQ(TextOrder(entry), (std::vector<const HloInstruction *>{
                                  Find(*module, "x"), Find(*module, "w1"), Find(*module, "w2"),
                                  Find(*module, "b"), Find(*module, "neg"), reshape2, reshape1,
                                  call1, call2, add}));
  EXPECT_TRUE(entry.TextOrderIsPostOrder());
  ExpectSlotsAreConsistent(entry);
}

TEST(OpExpanderPlacement, MoveInstructionsKeepsTheRestInOrder) {
  HloModule module("m");
  HloComputation *comp = module.AddComputation(std::make_unique<HloComputation>("c"));
  module.set_entry_computation(comp);
  auto make = [&](HloOpcode opcode, std::vector<HloInstruction *> operands, const char *name) {
    auto inst = HloInstruction::Create(opcode, F32({2}), operands, name);
    if (opcode == HloOpcode::kParameter)
      inst->set_parameter_number(0);
    return comp->AddInstruction(std::move(inst));
  };
  HloInstruction *p = make(HloOpcode::kParameter, {}, "p");
  HloInstruction *a = make(HloOpcode::kNegate, {p}, "a");
  HloInstruction *dead = make(HloOpcode::kNegate, {p}, "dead");
  HloInstruction *b = make(HloOpcode::kTanh, {a}, "b");
  HloInstruction *n1 = make(HloOpcode::kExp, {p}, "n1");
  HloInstruction *n2 = make(HloOpcode::kAbs, {n1}, "n2");
  HloInstruction *n3 = make(HloOpcode::kCopy, {p}, "n3");
  comp->set_root_instruction(b);
  ASSERT_FALSE(bool(comp->RemoveInstruction(dead)));
  // n1 and n2 before b, in that order; n3 to the end (it is there already).
  comp->MoveInstructions({{n1, b}, {n2, b}, {n3, nullptr}});
  EXPECT_EQ(TextOrder(*comp),
            (std::vector<const HloInstruction *>{p, a, n1, n2, b, n3}));
  ExpectSlotsAreConsistent(*comp);
  EXPECT_TRUE(comp->TextOrderIsPostOrder());
  // Before the first instruction: the unchanged prefix is empty.
  comp->MoveInstructions({{n3, p}});
  EXPECT_EQ(TextOrder(*comp),
            (std::vector<const HloInstruction *>{n3, p, a, n1, n2, b}));
  ExpectSlotsAreConsistent(*comp);
  EXPECT_FALSE(comp->TextOrderIsPostOrder());
}

TEST(OpExpanderPlacement, MoveInstructionsFillsEmptySlotsNearby) {
  HloModule module("m");
  HloComputation *comp = module.AddComputation(std::make_unique<HloComputation>("c"));
  module.set_entry_computation(comp);
  auto make = [&](HloOpcode opcode, std::vector<HloInstruction *> operands, const char *name) {
    auto inst = HloInstruction::Create(opcode, F32({2}), operands, name);
    if (opcode == HloOpcode::kParameter)
      inst->set_parameter_number(0);
    return comp->AddInstruction(std::move(inst));
  };
  HloInstruction *p = make(HloOpcode::kParameter, {}, "p");
  HloInstruction *dead1 = make(HloOpcode::kNegate, {p}, "dead1");
  HloInstruction *a = make(HloOpcode::kNegate, {p}, "a");
  HloInstruction *dead2 = make(HloOpcode::kNegate, {p}, "dead2");
  HloInstruction *b = make(HloOpcode::kAdd, {a, a}, "b");
  HloInstruction *dead3 = make(HloOpcode::kNegate, {p}, "dead3");
  HloInstruction *c = make(HloOpcode::kAdd, {b, b}, "c");
  HloInstruction *n1 = make(HloOpcode::kExp, {p}, "n1");
  HloInstruction *n2 = make(HloOpcode::kAbs, {n1}, "n2");
  HloInstruction *n3 = make(HloOpcode::kCopy, {p}, "n3");
  comp->set_root_instruction(c);
  for (HloInstruction *dead : {dead1, dead2, dead3})
    ASSERT_FALSE(bool(comp->RemoveInstruction(dead)));
  const size_t b_slot = b->text_order_slot(), c_slot = c->text_order_slot();
  // Two before b (the empty slots of dead1 and dead2, a packed down), one
  // before c (dead3's): b and c keep their slots, the end is dropped.
  comp->MoveInstructions({{n3, c}, {n1, b}, {n2, b}});
  EXPECT_EQ(TextOrder(*comp), (std::vector<const HloInstruction *>{p, a, n1, n2, b, n3, c}));
  ExpectSlotsAreConsistent(*comp);
  EXPECT_EQ(b->text_order_slot(), b_slot);
  EXPECT_EQ(c->text_order_slot(), c_slot);
  EXPECT_EQ(comp->slot_count(), c_slot + 1);
  // No empty slot before p: the full pass, the same order it gives.
  comp->MoveInstructions({{n3, p}});
  EXPECT_EQ(TextOrder(*comp), (std::vector<const HloInstruction *>{n3, p, a, n1, n2, b, c}));
  ExpectSlotsAreConsistent(*comp);
}

} // namespace
