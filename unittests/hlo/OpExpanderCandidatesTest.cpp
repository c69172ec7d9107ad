// Unit tests of OpExpanderPass's candidate filter and its one walk over the
// module: only candidates reach InstructionMatchesPattern, in each
// computation's post order (also when text order is not one), computations
// callees first (also when the module lists a caller first), fusion bodies
// never; and the token pass, which has nothing to say without
// NEURON_COLLECTIVE_MATMUL_NXD and remarks, leaves such a module alone.
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/pass/OpExpanderPass.h"
#include "loom/hlo/passes/NeuronLoopedEinsumTokenReplacer.h"

#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

Shape F32(std::initializer_list<int64_t> dims) { return Shape(PrimitiveType::F32, dims); }

HloInstruction *Param(HloComputation *comp, int64_t n, const char *name) {
  auto p = HloInstruction::Create(HloOpcode::kParameter, F32({2}), {}, name);
  p->set_parameter_number(n);
  return comp->AddInstruction(std::move(p));
}

HloInstruction *Op(HloComputation *comp, HloOpcode opcode,
                   std::vector<HloInstruction *> operands, const char *name) {
  return comp->AddInstruction(HloInstruction::Create(opcode, F32({2}), operands, name));
}

/// Offers negates only and records what the driver asks about; expands
/// nothing.
class RecordingExpander : public OpExpanderPass {
public:
  llvm::StringRef name() const override { return "recording-expander"; }
  std::vector<std::string> asked;

protected:
  bool IsCandidate(const HloInstruction *inst) const override {
    return inst->opcode() == HloOpcode::kNegate;
  }
  bool InstructionMatchesPattern(HloInstruction *inst) override {
    asked.push_back(inst->name().str());
    return false;
  }
  llvm::Expected<HloInstruction *> ExpandInstruction(HloInstruction *inst) override {
    return inst;
  }
};

std::vector<std::string> Asked(HloModule &module) {
  RecordingExpander pass;
  llvm::Expected<bool> changed = pass.Run(module);
  EXPECT_TRUE(bool(changed));
  EXPECT_FALSE(changed && *changed);
  return pass.asked;
}

TEST(OpExpanderCandidates, OnlyCandidatesInPostOrderEvenWhenTextOrderIsNotOne) {
  HloModule module("m");
  HloComputation *main = module.AddComputation(std::make_unique<HloComputation>("main"));
  module.set_entry_computation(main);
  HloInstruction *p0 = Param(main, 0, "p0");
  HloInstruction *late_user = Op(main, HloOpcode::kNegate, {p0}, "late_user");
  HloInstruction *exp = Op(main, HloOpcode::kExp, {p0}, "exp");
  HloInstruction *operand = Op(main, HloOpcode::kNegate, {exp}, "operand");
  // late_user now reads an instruction that comes after it in the text.
  ASSERT_FALSE(bool(late_user->ReplaceOperandWith(0, operand)));
  main->set_root_instruction(late_user);
  EXPECT_EQ(Asked(module), (std::vector<std::string>{"operand", "late_user"}));
}

TEST(OpExpanderCandidates, CalleesFirstWhenTheModuleListsTheCallerFirst) {
  HloModule module("m");
  HloComputation *main = module.AddComputation(std::make_unique<HloComputation>("main"));
  module.set_entry_computation(main);
  // Added after the entry: the module order is main, callee, other.
  HloComputation *callee = module.AddComputation(std::make_unique<HloComputation>("callee"));
  HloComputation *other = module.AddComputation(std::make_unique<HloComputation>("other"));
  for (HloComputation *c : {callee, other}) {
    HloInstruction *p = Param(c, 0, c == callee ? "callee.p" : "other.p");
    c->set_root_instruction(
        Op(c, HloOpcode::kNegate, {p}, c == callee ? "callee.neg" : "other.neg"));
  }
  HloInstruction *p0 = Param(main, 0, "p0");
  HloInstruction *main_neg = Op(main, HloOpcode::kNegate, {p0}, "main.neg");
  HloInstruction *call = Op(main, HloOpcode::kCall, {main_neg}, "call");
  call->SetCalledComputation("to_apply", callee);
  main->set_root_instruction(call);
  // The same order as HloModule::MakeNonfusionComputations.
  std::vector<std::string> expected;
  for (HloComputation *c : module.MakeNonfusionComputations())
    for (HloInstruction *i : c->MakeInstructionPostOrder())
      if (i->opcode() == HloOpcode::kNegate)
        expected.push_back(i->name().str());
  EXPECT_EQ(expected, (std::vector<std::string>{"callee.neg", "main.neg", "other.neg"}));
  EXPECT_EQ(Asked(module), expected);
}

TEST(OpExpanderCandidates, FusionBodiesAreNotOffered) {
  HloModule module("m");
  HloComputation *fused = module.AddComputation(std::make_unique<HloComputation>("fused"));
  HloInstruction *fp = Param(fused, 0, "fused.p");
  fused->set_root_instruction(Op(fused, HloOpcode::kNegate, {fp}, "fused.neg"));
  HloComputation *main = module.AddComputation(std::make_unique<HloComputation>("main"));
  module.set_entry_computation(main);
  HloInstruction *p0 = Param(main, 0, "p0");
  HloInstruction *fusion = Op(main, HloOpcode::kFusion, {p0}, "fusion");
  fusion->SetCalledComputation("calls", fused);
  main->set_root_instruction(Op(main, HloOpcode::kNegate, {fusion}, "main.neg"));
  EXPECT_EQ(Asked(module), (std::vector<std::string>{"main.neg"}));
}

TEST(OpExpanderCandidates, NoCandidateNoQuestion) {
  HloModule module("m");
  HloComputation *main = module.AddComputation(std::make_unique<HloComputation>("main"));
  module.set_entry_computation(main);
  HloInstruction *p0 = Param(main, 0, "p0");
  main->set_root_instruction(Op(main, HloOpcode::kExp, {p0}, "exp"));
  EXPECT_TRUE(Asked(module).empty());
}

/// main: (f32[2], f32[]) all-gather(w, t); its rank-0 get-tuple-element is
/// the root.
std::unique_ptr<HloModule> TokenModule() {
  auto module = std::make_unique<HloModule>("m");
  HloComputation *main = module->AddComputation(std::make_unique<HloComputation>("main"));
  module->set_entry_computation(main);
  HloInstruction *w = Param(main, 0, "w");
  auto t = HloInstruction::Create(HloOpcode::kParameter, Shape(PrimitiveType::F32, {}), {}, "t");
  t->set_parameter_number(1);
  HloInstruction *token = main->AddInstruction(std::move(t));
  Shape tuple = Shape::MakeTuple({F32({8}), Shape(PrimitiveType::F32, {})});
  auto ag = HloInstruction::Create(HloOpcode::kAllGather, tuple, {w, token}, "ag");
  ag->SetAttribute("dimensions", "{0}");
  HloInstruction *all_gather = main->AddInstruction(std::move(ag));
  auto gte = HloInstruction::Create(HloOpcode::kGetTupleElement, Shape(PrimitiveType::F32, {}),
                                    {all_gather}, "tok");
  gte->SetAttribute("index", "1");
  main->set_root_instruction(main->AddInstruction(std::move(gte)));
  return module;
}

TEST(OpExpanderCandidates, TokenPassWithoutNxdNeedsRemarksToLook) {
  CollectiveMatmulOptions off;
  off.nxd = false;
  std::unique_ptr<HloModule> module = TokenModule();
  NeuronLoopedEinsumTokenReplacer quiet(off);
  llvm::Expected<bool> changed = quiet.Run(*module);
  ASSERT_TRUE(bool(changed));
  EXPECT_FALSE(*changed);

  std::string remarks;
  llvm::raw_string_ostream os(remarks);
  NeuronLoopedEinsumTokenReplacer told(off);
  told.SetRemarkStream(&os);
  changed = told.Run(*module);
  ASSERT_TRUE(bool(changed));
  EXPECT_FALSE(*changed);
  EXPECT_EQ(os.str(), "main/tok: missed: NEURON_COLLECTIVE_MATMUL_NXD is not set to 1 (it "
                      "gates neuron_looped_einsum_token_replacer)\n");

  CollectiveMatmulOptions on;
  on.nxd = true;
  NeuronLoopedEinsumTokenReplacer active(on);
  changed = active.Run(*module);
  ASSERT_TRUE(bool(changed));
  EXPECT_TRUE(*changed);
  EXPECT_EQ(module->entry_computation()->root_instruction()->name(), "t");
}

} // namespace
