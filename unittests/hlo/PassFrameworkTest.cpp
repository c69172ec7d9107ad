// Unit tests of the pass framework: the OpExpanderPass driver (new or
// existing replacement, dead-chain removal, truthful "changed"), the
// pipeline options and the pass registry.
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/OpExpanderPass.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/HloDCE.h"
#include "loom/hlo/passes/Passes.h"
#include "loom/support/Error.h"

#include "HloTestUtil.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

using testutil::F32;
using testutil::RunPass;
using testutil::TestModule;

/// An expander for negate whose expansion is a callback.
class ToyExpander : public OpExpanderPass {
public:
  using Expand = std::function<llvm::Expected<HloInstruction *>(HloInstruction *)>;
  explicit ToyExpander(Expand expand) : expand_(std::move(expand)) {}
  llvm::StringRef name() const override { return "toy-expander"; }
  int expansions = 0;

protected:
  bool InstructionMatchesPattern(HloInstruction *inst) override {
    return inst->opcode() == HloOpcode::kNegate;
  }
  llvm::Expected<HloInstruction *> ExpandInstruction(HloInstruction *inst) override {
    ++expansions;
    return expand_(inst);
  }

private:
  Expand expand_;
};


// ---- OpExpanderPass ------------------------------------------------------------------

TEST(OpExpanderPass, ReplacesWithANewInstructionAndRemovesTheDeadChain) {
  TestModule f;
  // root = add(negate(exp(p0)), p1): the negate becomes copy(p1), so the
  // negate and the exp it alone used both go.
  HloInstruction *exp = f.Op(HloOpcode::kExp, {f.p0}, "exp");
  HloInstruction *neg = f.Op(HloOpcode::kNegate, {exp}, "neg");
  HloInstruction *root = f.Op(HloOpcode::kAdd, {neg, f.p1}, "root");
  f.comp->set_root_instruction(root);
  HloInstruction *added = nullptr;
  ToyExpander pass([&](HloInstruction *inst) -> llvm::Expected<HloInstruction *> {
    added = inst->parent()->AddInstruction(
        HloInstruction::Create(HloOpcode::kCopy, F32({2}), {f.p1}, "copy"));
    return added;
  });
  EXPECT_TRUE(RunPass(pass, *f.module));
  EXPECT_EQ(root->operand(0), added);
  EXPECT_FALSE(f.HasName("neg"));
  EXPECT_FALSE(f.HasName("exp"));
  EXPECT_TRUE(f.Has(f.p0)); // parameters stay
  EXPECT_EQ(f.comp->instruction_count(), 4);
  EXPECT_FALSE(llvm::errorToBool(VerifyHloModule(*f.module)));
}

TEST(OpExpanderPass, ReplacesWithAnExistingOperand) {
  TestModule f;
  // Token-pass style: the replacement already exists; nothing is added.
  HloInstruction *exp = f.Op(HloOpcode::kExp, {f.p0}, "exp");
  HloInstruction *neg = f.Op(HloOpcode::kNegate, {exp}, "neg");
  f.comp->set_root_instruction(neg);
  ToyExpander pass([](HloInstruction *inst) -> llvm::Expected<HloInstruction *> {
    return inst->mutable_operand(0);
  });
  EXPECT_TRUE(RunPass(pass, *f.module));
  EXPECT_EQ(f.comp->root_instruction(), exp);
  EXPECT_FALSE(f.HasName("neg"));
  EXPECT_EQ(f.comp->instruction_count(), 3);
}

TEST(OpExpanderPass, ReturningItselfIsNoChange) {
  TestModule f;
  HloInstruction *neg = f.Op(HloOpcode::kNegate, {f.p0}, "neg");
  f.comp->set_root_instruction(neg);
  ToyExpander pass([](HloInstruction *inst) -> llvm::Expected<HloInstruction *> { return inst; });
  EXPECT_FALSE(RunPass(pass, *f.module));
  EXPECT_EQ(pass.expansions, 1);
  EXPECT_TRUE(f.Has(neg));
}

TEST(OpExpanderPass, KeepingTheInstructionButAddingOthersIsAChange) {
  TestModule f;
  f.comp->set_root_instruction(f.Op(HloOpcode::kNegate, {f.p0}, "neg"));
  ToyExpander pass([](HloInstruction *inst) -> llvm::Expected<HloInstruction *> {
    inst->parent()->AddInstruction(
        HloInstruction::Create(HloOpcode::kCopy, F32({2}), {inst->mutable_operand(0)}, "extra"));
    return inst;
  });
  EXPECT_TRUE(RunPass(pass, *f.module));
  EXPECT_TRUE(f.HasName("extra"));
}

TEST(OpExpanderPass, NoMatchIsNoChange) {
  TestModule f;
  f.comp->set_root_instruction(f.Op(HloOpcode::kExp, {f.p0}, "exp"));
  ToyExpander pass([](HloInstruction *inst) -> llvm::Expected<HloInstruction *> { return inst; });
  EXPECT_FALSE(RunPass(pass, *f.module));
  EXPECT_EQ(pass.expansions, 0);
}

TEST(OpExpanderPass, AnOperandThatStillHasUsersStays) {
  TestModule f;
  // exp feeds both the negate and the root: replacing the negate must not
  // take the exp with it (an all-gather with other users stays).
  HloInstruction *exp = f.Op(HloOpcode::kExp, {f.p0}, "exp");
  HloInstruction *neg = f.Op(HloOpcode::kNegate, {exp}, "neg");
  HloInstruction *root = f.Op(HloOpcode::kAdd, {neg, exp}, "root");
  f.comp->set_root_instruction(root);
  ToyExpander pass([&](HloInstruction *) -> llvm::Expected<HloInstruction *> { return f.p1; });
  EXPECT_TRUE(RunPass(pass, *f.module));
  EXPECT_FALSE(f.HasName("neg"));
  EXPECT_TRUE(f.Has(exp));
  EXPECT_EQ(root->operand(0), f.p1);
  EXPECT_EQ(root->operand(1), exp);
}

TEST(OpExpanderPass, MovesControlDependenciesToTheReplacement) {
  TestModule f;
  HloInstruction *before = f.Op(HloOpcode::kExp, {f.p0}, "before");
  HloInstruction *neg = f.Op(HloOpcode::kNegate, {f.p0}, "neg");
  HloInstruction *after = f.Op(HloOpcode::kExp, {f.p1}, "after");
  before->AddControlDependencyTo(neg);
  neg->AddControlDependencyTo(after);
  HloInstruction *root = f.Op(HloOpcode::kAdd, {neg, after}, "root");
  HloInstruction *root2 = f.Op(HloOpcode::kAdd, {root, before}, "root2");
  f.comp->set_root_instruction(root2);
  HloInstruction *added = nullptr;
  ToyExpander pass([&](HloInstruction *inst) -> llvm::Expected<HloInstruction *> {
    added = inst->parent()->AddInstruction(
        HloInstruction::Create(HloOpcode::kCopy, F32({2}), {f.p0}, "copy"));
    return added;
  });
  EXPECT_TRUE(RunPass(pass, *f.module));
  ASSERT_EQ(added->control_predecessors().size(), 1u);
  EXPECT_EQ(added->control_predecessors()[0], before);
  ASSERT_EQ(added->control_successors().size(), 1u);
  EXPECT_EQ(added->control_successors()[0], after);
  EXPECT_FALSE(f.HasName("neg"));
}

TEST(OpExpanderPass, AMatchRemovedWithAnEarlierDeadChainIsNotExpanded) {
  TestModule f;
  // Two independent matches. Expanding the first rewires it onto the second
  // and replaces it with copy(p0): the second then dies with the first's
  // dead chain and must not be expanded afterwards.
  HloInstruction *first = f.Op(HloOpcode::kNegate, {f.p0}, "first");
  HloInstruction *second = f.Op(HloOpcode::kNegate, {f.p1}, "second");
  f.comp->set_root_instruction(first);
  std::vector<std::string> expanded;
  ToyExpander pass([&](HloInstruction *inst) -> llvm::Expected<HloInstruction *> {
    expanded.push_back(inst->name().str());
    if (inst != first)
      return inst;
    if (llvm::Error err = inst->ReplaceOperandWith(0, second))
      return err;
    return inst->parent()->AddInstruction(
        HloInstruction::Create(HloOpcode::kCopy, F32({2}), {f.p0}, "copy"));
  });
  EXPECT_TRUE(RunPass(pass, *f.module));
  EXPECT_EQ(expanded, std::vector<std::string>{"first"});
  EXPECT_FALSE(f.HasName("second"));
}

TEST(OpExpanderPass, ExpansionErrorsPropagate) {
  TestModule f;
  f.comp->set_root_instruction(f.Op(HloOpcode::kNegate, {f.p0}, "neg"));
  ToyExpander pass([](HloInstruction *) -> llvm::Expected<HloInstruction *> {
    return loom::makeError("cannot expand");
  });
  llvm::Expected<bool> changed = pass.Run(*f.module);
  ASSERT_FALSE(bool(changed));
  EXPECT_EQ(llvm::toString(changed.takeError()), "cannot expand");
}

TEST(OpExpanderPass, WalksEveryComputationCalleesFirst) {
  TestModule f;
  auto callee = std::make_unique<HloComputation>("callee");
  HloComputation *c = f.module->AddEmbeddedComputation(std::move(callee));
  auto cp = HloInstruction::Create(HloOpcode::kParameter, F32({2}), {}, "c.p");
  cp->set_parameter_number(0);
  HloInstruction *cparam = c->AddInstruction(std::move(cp));
  c->set_root_instruction(
      c->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, F32({2}), {cparam}, "c.neg")));
  HloInstruction *call = f.Op(HloOpcode::kCall, {f.p0}, "call");
  call->SetCalledComputation("to_apply", c);
  f.comp->set_root_instruction(f.Op(HloOpcode::kNegate, {call}, "main.neg"));
  std::vector<std::string> order;
  ToyExpander pass([&](HloInstruction *inst) -> llvm::Expected<HloInstruction *> {
    order.push_back(inst->name().str());
    return inst;
  });
  RunPass(pass, *f.module);
  EXPECT_EQ(order, (std::vector<std::string>{"c.neg", "main.neg"}));
}

// ---- HloPassPipeline -------------------------------------------------------------------

/// A pass that records its runs and returns a fixed answer, optionally
/// after doing something to the module.
class RecordingPass : public HloPassInterface {
public:
  RecordingPass(std::string name, std::vector<std::string> *log, bool changes,
                std::function<void(HloModule &)> action = nullptr)
      : name_(std::move(name)), log_(log), changes_(changes), action_(std::move(action)) {}
  llvm::StringRef name() const override { return name_; }
  llvm::Expected<bool> Run(HloModule &module) override {
    log_->push_back(name_);
    if (remark_stream())
      *remark_stream() << name_ << ": remark\n";
    if (action_)
      action_(module);
    return changes_;
  }

private:
  std::string name_;
  std::vector<std::string> *log_;
  bool changes_;
  std::function<void(HloModule &)> action_;
};

TEST(HloPassPipeline, RunsPassesInOrderAndOrsChanged) {
  TestModule f;
  f.comp->set_root_instruction(f.p0);
  std::vector<std::string> log;
  HloPassPipeline pipeline;
  pipeline.AddPass<RecordingPass>("a", &log, false);
  pipeline.AddPass<RecordingPass>("b", &log, true);
  pipeline.AddPass<RecordingPass>("c", &log, false);
  EXPECT_EQ(pipeline.pass_count(), 3);
  EXPECT_TRUE(RunPass(pipeline, *f.module));
  EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "c"}));

  HloPassPipeline quiet;
  quiet.AddPass<RecordingPass>("a", &log, false);
  EXPECT_FALSE(RunPass(quiet, *f.module));
}

TEST(HloPassPipeline, VerifyEachNamesThePassThatBrokeTheModule) {
  TestModule f;
  f.comp->set_root_instruction(f.p0);
  std::vector<std::string> log;
  HloPassPipelineOptions options;
  options.verify_each = true;
  HloPassPipeline pipeline("p", options);
  pipeline.AddPass<RecordingPass>("fine", &log, false);
  pipeline.AddPass<RecordingPass>("breaker", &log, true, [&](HloModule &) {
    // Two parameters numbered 0 break the numbering rule.
    auto p = HloInstruction::Create(HloOpcode::kParameter, F32({2}), {}, "dup");
    p->set_parameter_number(0);
    f.comp->AddInstruction(std::move(p));
  });
  pipeline.AddPass<RecordingPass>("never", &log, false);
  llvm::Expected<bool> changed = pipeline.Run(*f.module);
  ASSERT_FALSE(bool(changed));
  std::string msg = llvm::toString(changed.takeError());
  EXPECT_EQ(msg.rfind("after pass 'breaker': computation 'main', instruction 'dup'", 0), 0u)
      << msg;
  EXPECT_EQ(log, (std::vector<std::string>{"fine", "breaker"}));
}

TEST(HloPassPipeline, WithoutVerifyEachABrokenModuleGoesThrough) {
  TestModule f;
  f.comp->set_root_instruction(f.p0);
  std::vector<std::string> log;
  HloPassPipeline pipeline;
  pipeline.AddPass<RecordingPass>("breaker", &log, true, [&](HloModule &) {
    auto p = HloInstruction::Create(HloOpcode::kParameter, F32({2}), {}, "dup");
    p->set_parameter_number(0);
    f.comp->AddInstruction(std::move(p));
  });
  EXPECT_TRUE(RunPass(pipeline, *f.module));
}

TEST(HloPassPipeline, PassErrorsNameThePass) {
  TestModule f;
  f.comp->set_root_instruction(f.Op(HloOpcode::kNegate, {f.p0}, "neg"));
  HloPassPipeline pipeline;
  pipeline.AddPass<ToyExpander>([](HloInstruction *) -> llvm::Expected<HloInstruction *> {
    return loom::makeError("no luck");
  });
  llvm::Expected<bool> changed = pipeline.Run(*f.module);
  ASSERT_FALSE(bool(changed));
  EXPECT_EQ(llvm::toString(changed.takeError()), "pass 'toy-expander' failed: no luck");
}

TEST(HloPassPipeline, PrintAfterAllWritesAHeaderPerPass) {
  TestModule f;
  f.comp->set_root_instruction(f.p0);
  std::vector<std::string> log;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  HloPassPipelineOptions options;
  options.print_after_all = true;
  options.print_stream = &os;
  HloPassPipeline pipeline("p", options);
  pipeline.AddPass<RecordingPass>("a", &log, false);
  pipeline.AddPass<RecordingPass>("b", &log, true);
  RunPass(pipeline, *f.module);
  os.flush();
  size_t a = printed.find("// -----// IR after a (no change) //----- //\n");
  size_t b = printed.find("// -----// IR after b (changed) //----- //\n");
  ASSERT_NE(a, std::string::npos) << printed;
  ASSERT_NE(b, std::string::npos) << printed;
  EXPECT_LT(a, b);
  EXPECT_NE(printed.find("HloModule m"), std::string::npos) << printed;
}

TEST(HloPassPipeline, TimePassesPrintsOneRowPerPass) {
  TestModule f;
  f.comp->set_root_instruction(f.p0);
  std::vector<std::string> log;
  std::string report;
  llvm::raw_string_ostream os(report);
  HloPassPipelineOptions options;
  options.time_passes = true;
  options.verify_each = true;
  options.timing_stream = &os;
  HloPassPipeline pipeline("p", options);
  pipeline.AddPass<RecordingPass>("first-pass", &log, false);
  pipeline.AddPass<RecordingPass>("second-pass", &log, false);
  RunPass(pipeline, *f.module);
  os.flush();
  EXPECT_NE(report.find("HLO pass execution timing report"), std::string::npos) << report;
  EXPECT_NE(report.find("Total Execution Time:"), std::string::npos) << report;
  size_t first = report.find("first-pass");
  size_t second = report.find("second-pass");
  ASSERT_NE(first, std::string::npos) << report;
  ASSERT_NE(second, std::string::npos) << report;
  EXPECT_LT(first, second);
  EXPECT_NE(report.find("hlo_verifier (after each pass)"), std::string::npos) << report;
  EXPECT_NE(report.find("(100.0%)  Total"), std::string::npos) << report;
}

TEST(HloPassPipeline, HandsItsRemarkStreamToEveryPass) {
  TestModule f;
  f.comp->set_root_instruction(f.p0);
  std::vector<std::string> log;
  std::string remarks;
  llvm::raw_string_ostream os(remarks);
  HloPassPipeline pipeline;
  pipeline.AddPass<RecordingPass>("a", &log, false);
  pipeline.AddPass<RecordingPass>("b", &log, false);
  pipeline.SetRemarkStream(&os);
  RunPass(pipeline, *f.module);
  EXPECT_EQ(os.str(), "a: remark\nb: remark\n");

  // Without a stream no pass gets one.
  HloPassPipeline silent;
  HloPassInterface &pass = silent.AddPass<RecordingPass>("c", &log, false);
  RunPass(silent, *f.module);
  EXPECT_EQ(pass.remark_stream(), nullptr);
}

// ---- Registry and the stock passes ---------------------------------------------------

TEST(PassRegistry, CreatesRegisteredPassesByName) {
  RegisterAllHloPasses();
  std::vector<std::string> names = RegisteredHloPassNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "hlo_verifier"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "hlo_dce"), names.end());
  llvm::Expected<std::unique_ptr<HloPassInterface>> pass = CreateHloPass("hlo_dce");
  ASSERT_TRUE(bool(pass)) << llvm::toString(pass.takeError());
  EXPECT_EQ((*pass)->name(), "hlo_dce");
  // Each call is a new instance.
  llvm::Expected<std::unique_ptr<HloPassInterface>> again = CreateHloPass("hlo_dce");
  ASSERT_TRUE(bool(again));
  EXPECT_NE(pass->get(), again->get());
}

TEST(PassRegistry, HyphensStandForUnderscores) {
  RegisterAllHloPasses();
  for (const char *name : {"hlo-dce", "hlo-verifier", "neuron-looped-einsum-replacer"}) {
    llvm::Expected<std::unique_ptr<HloPassInterface>> pass = CreateHloPass(name);
    ASSERT_TRUE(bool(pass)) << name << ": " << llvm::toString(pass.takeError());
    std::string underscored = name;
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    EXPECT_EQ((*pass)->name(), underscored);
  }
  // Every registered name has one spelling, with underscores.
  for (const std::string &name : RegisteredHloPassNames()) {
    if (name.rfind("zz-", 0) != 0) {
      EXPECT_EQ(name.find('-'), std::string::npos) << name;
    }
  }
}

TEST(PassRegistry, UnknownNamesListTheValidOnes) {
  RegisterAllHloPasses();
  RegisterHloPass("zz-test-pass", [] {
    return std::make_unique<ToyExpander>(
        [](HloInstruction *i) -> llvm::Expected<HloInstruction *> { return i; });
  });
  llvm::Expected<std::unique_ptr<HloPassInterface>> pass = CreateHloPass("no-such-pass");
  ASSERT_FALSE(bool(pass));
  std::string msg = llvm::toString(pass.takeError());
  EXPECT_EQ(msg.rfind("unknown pass 'no-such-pass'; valid passes: ", 0), 0u) << msg;
  size_t dce = msg.find("hlo_dce, ");
  size_t verifier = msg.find("hlo_verifier");
  size_t zz = msg.find("zz-test-pass");
  ASSERT_NE(dce, std::string::npos) << msg;
  ASSERT_NE(verifier, std::string::npos) << msg;
  ASSERT_NE(zz, std::string::npos) << msg;
  EXPECT_LT(dce, verifier);
  EXPECT_LT(verifier, zz);
}

TEST(HloDCE, RemovesOnlyDeadInstructions) {
  TestModule f;
  f.Op(HloOpcode::kExp, {f.p0}, "dead");
  HloInstruction *live = f.Op(HloOpcode::kNegate, {f.p1}, "live");
  f.comp->set_root_instruction(live);
  HloDCE dce;
  EXPECT_TRUE(RunPass(dce, *f.module));
  EXPECT_FALSE(f.HasName("dead"));
  EXPECT_TRUE(f.Has(live));
  EXPECT_TRUE(f.Has(f.p0)); // parameters stay even when unused
  EXPECT_FALSE(RunPass(dce, *f.module));
}

} // namespace

namespace {

/// Remarks every negate twice while matching and once more while expanding.
class RemarkingExpander : public OpExpanderPass {
public:
  llvm::StringRef name() const override { return "remarking-expander"; }

protected:
  bool InstructionMatchesPattern(HloInstruction *inst) override {
    if (inst->opcode() != HloOpcode::kNegate)
      return false;
    Remark(*inst, "first");
    Remark(*inst, "second");
    return true;
  }
  llvm::Expected<HloInstruction *> ExpandInstruction(HloInstruction *inst) override {
    EXPECT_FALSE(WantsRemark(*inst));
    Remark(*inst, "third");
    return inst;
  }
};

// The framework's remark helper: `<computation>/<instruction>: <text>`, one
// line per instruction per run, and nothing without a stream.
TEST(PassRemarks, OneLinePerInstructionPerRun) {
  TestModule f;
  f.Op(HloOpcode::kNegate, {f.p0}, "n0");
  f.comp->set_root_instruction(f.Op(HloOpcode::kNegate, {f.p1}, "n1"));
  RemarkingExpander pass;
  EXPECT_FALSE(RunPass(pass, *f.module)); // no stream: nothing written, nothing changed
  std::string text;
  llvm::raw_string_ostream os(text);
  pass.SetRemarkStream(&os);
  RunPass(pass, *f.module);
  EXPECT_EQ(os.str(), "main/n0: first\nmain/n1: first\n");
  // A second run may remark again.
  RunPass(pass, *f.module);
  EXPECT_EQ(os.str(), "main/n0: first\nmain/n1: first\nmain/n0: first\nmain/n1: first\n");
}

} // namespace
