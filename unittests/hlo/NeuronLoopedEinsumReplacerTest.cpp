// Unit tests of the two collective-matmul passes driven through their
// options struct (no flags, no environment): the rewrite and its exact
// attributes, the "changed" flag, remarks, every option, and the
// NEURON_* environment readers.
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"
#include "loom/hlo/passes/NeuronLoopedEinsumTokenReplacer.h"

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"

#include "HloTestUtil.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <memory>
#include <string>

using namespace loom::hlo;

namespace {

using testutil::Parse;

using testutil::RunPassAndVerify;

const HloInstruction *FindCall(const HloModule &module) {
  for (HloComputation *comp : module.computations())
    for (HloInstruction *inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kCustomCall)
        return inst;
  return nullptr;
}

std::string Attribute(const HloInstruction &inst, llvm::StringRef key) {
  auto attrs = GetFrontendAttributes(inst);
  if (!attrs) {
    ADD_FAILURE() << llvm::toString(attrs.takeError());
    return "";
  }
  for (const auto &kv : *attrs)
    if (kv.first == key)
      return kv.second;
  return "<absent>";
}

const char kRhs[] = R"(
HloModule rhs, num_partitions=4
ENTRY %main (x: f32[8,32], w: f32[32,2,16]) -> f32[8,8,16] {
  %x = f32[8,32]{1,0} parameter(0)
  %w = f32[32,2,16]{2,1,0} parameter(1)
  %ag = f32[32,8,16]{2,1,0} all-gather(%w), channel_id=3, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  ROOT %dot = f32[8,8,16]{2,1,0} dot(%x, %ag), lhs_contracting_dims={1}, rhs_contracting_dims={0}, frontend_attributes={keep="me"}, metadata={op_name="proj"}
}
)";

TEST(NeuronLoopedEinsumReplacer, RewritesRhsWeightIntoTheContractForm) {
  auto module = Parse(kRhs);
  ASSERT_TRUE(module);
  NeuronLoopedEinsumReplacer pass{CollectiveMatmulOptions{}};
  EXPECT_EQ(pass.name(), "neuron_looped_einsum_replacer");
  EXPECT_TRUE(RunPassAndVerify(pass, *module));

  HloComputation *entry = module->entry_computation();
  const HloInstruction *call = entry->root_instruction();
  ASSERT_EQ(call, FindCall(*module));
  EXPECT_EQ(GetCustomCallTarget(*call), "AwsNeuronCollectiveMatmul");
  EXPECT_EQ(GetBackendConfig(*call),
            "rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=1");
  auto api = GetCustomCallApiVersion(*call);
  ASSERT_TRUE(bool(api));
  EXPECT_EQ(*api, 1);
  EXPECT_FALSE(call->HasAttribute("api_version"));
  EXPECT_EQ(call->shape().ToString(), "f32[8,8,16]{2,1,0}");
  ASSERT_EQ(call->operand_count(), 2);
  const HloInstruction *weight = call->operand(0);
  EXPECT_EQ(weight->opcode(), HloOpcode::kReshape);
  EXPECT_EQ(weight->shape().ToString(), "f32[64,16]{1,0}");
  EXPECT_EQ(weight->operand(0)->name(), "w");
  EXPECT_EQ(call->operand(1)->name(), "x");

  auto attrs = GetFrontendAttributes(*call);
  ASSERT_TRUE(bool(attrs));
  std::vector<std::string> keys;
  for (const auto &kv : *attrs)
    keys.push_back(kv.first);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "keep", "loom_weight_side", "loom_lhs_batch_dims", "loom_rhs_batch_dims",
                      "loom_lhs_contracting_dims", "loom_rhs_contracting_dims",
                      "loom_all_gather_dimension", "loom_replica_groups", "loom_channel_id",
                      "loom_use_global_device_ids", "loom_local_weight_shape",
                      "loom_gathered_weight_shape", "loom_weight_operand_shape"}));
  EXPECT_EQ(Attribute(*call, "keep"), "me");
  EXPECT_EQ(Attribute(*call, "loom_weight_side"), "rhs");
  EXPECT_EQ(Attribute(*call, "loom_rhs_contracting_dims"), "{0}");
  EXPECT_EQ(Attribute(*call, "loom_lhs_batch_dims"), "{}");
  EXPECT_EQ(Attribute(*call, "loom_all_gather_dimension"), "1");
  EXPECT_EQ(Attribute(*call, "loom_replica_groups"), "{{0,1,2,3}}");
  EXPECT_EQ(Attribute(*call, "loom_channel_id"), "3");
  EXPECT_EQ(Attribute(*call, "loom_use_global_device_ids"), "true");
  EXPECT_EQ(Attribute(*call, "loom_local_weight_shape"), "f32[32,2,16]");
  EXPECT_EQ(Attribute(*call, "loom_gathered_weight_shape"), "f32[32,8,16]");
  EXPECT_EQ(Attribute(*call, "loom_weight_operand_shape"), "f32[32,8,16]");
  ASSERT_TRUE(call->FindAttribute("metadata"));
  EXPECT_EQ(*call->FindAttribute("metadata"), "{op_name=\"proj\"}");
  // The all-gather died with the dot.
  for (HloInstruction *inst : entry->instructions())
    EXPECT_NE(inst->opcode(), HloOpcode::kAllGather);

  // A second run finds nothing to do and says so.
  EXPECT_FALSE(RunPassAndVerify(pass, *module));
}

TEST(NeuronLoopedEinsumReplacer, RemarksOneLinePerDot) {
  auto module = Parse(kRhs);
  ASSERT_TRUE(module);
  NeuronLoopedEinsumReplacer pass{CollectiveMatmulOptions{}};
  std::string remarks;
  EXPECT_TRUE(RunPassAndVerify(pass, *module, &remarks));
  EXPECT_EQ(remarks, "main/dot: fused (MatchAllGatherInDotRhs, tp_degree=4, "
                     "num_groups=1, rhs_contracting_dim=0, use_sb_to_sb=1, weight=rhs)\n");
}

TEST(NeuronLoopedEinsumReplacer, ThresholdOptionPicksTheKernelVariant) {
  // The gathered weight is 32*8*16 f32 = 16 KiB; doubled, 1/32 MiB.
  for (int64_t threshold : {0, -1}) {
    auto module = Parse(kRhs);
    ASSERT_TRUE(module);
    CollectiveMatmulOptions options;
    options.sb_to_sb_threshold_in_mb = threshold;
    NeuronLoopedEinsumReplacer pass(options);
    EXPECT_TRUE(RunPassAndVerify(pass, *module));
    EXPECT_EQ(GetBackendConfig(*FindCall(*module)),
              "rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=0");
  }
}

const char kComputedRhs[] = R"(
HloModule computed, num_partitions=2
ENTRY %main (x: f32[8,32], v: f32[32,2,16]) -> f32[8,4,16] {
  %x = f32[8,32] parameter(0)
  %v = f32[32,2,16] parameter(1)
  %w = f32[32,2,16] negate(%v)
  %ag = f32[32,4,16] all-gather(%w), replica_groups={{0,1}}, dimensions={1}
  ROOT %dot = f32[8,4,16] dot(%x, %ag), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(NeuronLoopedEinsumReplacer, AggressiveOptionFoldsUnprovenRhsWeights) {
  auto module = Parse(kComputedRhs);
  ASSERT_TRUE(module);
  NeuronLoopedEinsumReplacer strict{CollectiveMatmulOptions{}};
  std::string remarks;
  EXPECT_FALSE(RunPassAndVerify(strict, *module, &remarks));
  EXPECT_EQ(remarks, "main/dot: missed: weight side not a parameter, set "
                     "NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE=1 to fold anyway\n");
  CollectiveMatmulOptions options;
  options.permute_aggressive = true;
  NeuronLoopedEinsumReplacer aggressive(options);
  EXPECT_TRUE(RunPassAndVerify(aggressive, *module));
  const HloInstruction *call = FindCall(*module);
  ASSERT_TRUE(call);
  // Without a channel id the groups are replica ids: cross-replica.
  EXPECT_EQ(Attribute(*call, "loom_channel_id"), "<absent>");
  EXPECT_EQ(Attribute(*call, "loom_use_global_device_ids"), "false");
  EXPECT_EQ(call->operand(0)->shape().ToString(), "f32[64,16]");
}

const char kRhsRS[] = R"(
HloModule rhs_rs, num_partitions=4
ENTRY %main (x: f32[8,64], w: f32[4,4,16]) -> f32[8,16] {
  %x = f32[8,64] parameter(0)
  %w = f32[4,4,16] parameter(1)
  %ag = f32[16,4,16] all-gather(%w), replica_groups={{0,1,2,3}}, dimensions={0}
  %rs = f32[64,16] reshape(%ag)
  ROOT %dot = f32[8,16] dot(%x, %rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(NeuronLoopedEinsumReplacer, RhsRSFoldsTheGatheredSideUnlessCompat) {
  auto module = Parse(kRhsRS);
  ASSERT_TRUE(module);
  CollectiveMatmulOptions compat_options;
  compat_options.compat = true;
  NeuronLoopedEinsumReplacer compat(compat_options);
  std::string remarks;
  EXPECT_FALSE(RunPassAndVerify(compat, *module, &remarks));
  EXPECT_EQ(remarks, "main/dot: missed: (--neuron-compat) RhsRS: operand 0 reaches no all-gather\n");

  NeuronLoopedEinsumReplacer loom{CollectiveMatmulOptions{}};
  EXPECT_TRUE(RunPassAndVerify(loom, *module, &remarks));
  EXPECT_EQ(remarks, "main/dot: fused (MatchAllGatherInDotRhsRS, tp_degree=4, "
                     "num_groups=1, rhs_contracting_dim=0, use_sb_to_sb=1, weight=rhs)\n");
  const HloInstruction *call = FindCall(*module);
  ASSERT_TRUE(call);
  EXPECT_EQ(Attribute(*call, "loom_weight_operand_shape"), "f32[64,16]");
  EXPECT_EQ(Attribute(*call, "loom_gathered_weight_shape"), "f32[16,4,16]");
}

const char kStrided[] = R"(
HloModule strided, num_partitions=4
ENTRY %main (x: f32[8,32], w: f32[32,2,16]) -> f32[8,4,16] {
  %x = f32[8,32] parameter(0)
  %w = f32[32,2,16] parameter(1)
  %ag = f32[32,4,16] all-gather(%w), channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={1}, use_global_device_ids=true
  ROOT %dot = f32[8,4,16] dot(%x, %ag), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(NeuronLoopedEinsumReplacer, NonContiguousGroupsOnlyFoldInCompat) {
  auto module = Parse(kStrided);
  ASSERT_TRUE(module);
  NeuronLoopedEinsumReplacer loom{CollectiveMatmulOptions{}};
  std::string remarks;
  EXPECT_FALSE(RunPassAndVerify(loom, *module, &remarks));
  EXPECT_EQ(remarks, "main/dot: missed: non-contiguous replica groups {{0,2},{1,3}}: "
                     "tp_degree/num_groups cannot express them\n");
  CollectiveMatmulOptions options;
  options.compat = true;
  NeuronLoopedEinsumReplacer compat(options);
  EXPECT_TRUE(RunPassAndVerify(compat, *module));
  const HloInstruction *call = FindCall(*module);
  ASSERT_TRUE(call);
  EXPECT_EQ(GetBackendConfig(*call),
            "rhs_contracting_dim=0,tp_degree=2,num_groups=2,use_sb_to_sb=1");
  EXPECT_EQ(Attribute(*call, "loom_replica_groups"), "{{0,2},{1,3}}");
}

const char kSixOperands[] = R"(
HloModule six, num_partitions=2
ENTRY %main (a: f32[1,2,8], b: f32[1,8], x: f32[8,3]) -> f32[4,3] {
  %a = f32[1,2,8] parameter(0)
  %b = f32[1,8] parameter(1)
  %x = f32[8,3] parameter(2)
  %ag = (f32[2,2,8], f32[2,8], f32[2,8], f32[2,8], f32[2,8], f32[2,8]) all-gather(%a, %b, %b, %b, %b, %b), replica_groups={{0,1}}, dimensions={0}
  %g = f32[2,2,8] get-tuple-element(%ag), index=0
  %r = f32[4,8] reshape(%g)
  ROOT %dot = f32[4,3] dot(%r, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(NeuronLoopedEinsumReplacer, NxdOptionRefusesMoreThanFiveOperands) {
  auto module = Parse(kSixOperands);
  ASSERT_TRUE(module);
  CollectiveMatmulOptions options;
  options.nxd = true;
  NeuronLoopedEinsumReplacer nxd(options);
  std::string remarks;
  EXPECT_FALSE(RunPassAndVerify(nxd, *module, &remarks));
  EXPECT_EQ(remarks, "main/dot: missed: more than 5 all-gather operands under "
                     "NEURON_COLLECTIVE_MATMUL_NXD (%ag has 6)\n");
  NeuronLoopedEinsumReplacer plain{CollectiveMatmulOptions{}};
  EXPECT_TRUE(RunPassAndVerify(plain, *module, &remarks));
  EXPECT_EQ(remarks, "main/dot: fused (MatchAllGatherInDotLhsNxD, tp_degree=2, "
                     "num_groups=1, rhs_contracting_dim=0, use_sb_to_sb=1, weight=lhs)\n");
}

const char kToken[] = R"(
HloModule token, num_partitions=2
ENTRY %main (w: f32[1,2,8], t: f32[], b: f32[1,8]) -> (f32[2,2,8], f32[], f32[]) {
  %w = f32[1,2,8] parameter(0)
  %t = f32[] parameter(1)
  %b = f32[1,8] parameter(2)
  %ag = (f32[2,2,8], f32[]) all-gather(%w, %t), replica_groups={{0,1}}, dimensions={0}
  %g = f32[2,2,8] get-tuple-element(%ag), index=0
  %tok = f32[] get-tuple-element(%ag), index=1
  %ag3 = (f32[2,2,8], f32[2,8], f32[]) all-gather(%w, %b, %t), replica_groups={{0,1}}, dimensions={0}
  %tok3 = f32[] get-tuple-element(%ag3), index=2
  ROOT %out = (f32[2,2,8], f32[], f32[]) tuple(%g, %tok, %tok3)
}
)";

TEST(NeuronLoopedEinsumTokenReplacer, GatedOnNxd) {
  auto module = Parse(kToken);
  ASSERT_TRUE(module);
  NeuronLoopedEinsumTokenReplacer off{CollectiveMatmulOptions{}};
  EXPECT_EQ(off.name(), "neuron_looped_einsum_token_replacer");
  std::string remarks;
  EXPECT_FALSE(RunPassAndVerify(off, *module, &remarks));
  EXPECT_NE(remarks.find("main/tok: missed: NEURON_COLLECTIVE_MATMUL_NXD is not set to 1"),
            std::string::npos);
}

TEST(NeuronLoopedEinsumTokenReplacer, ReturnsTheOperandAtTheIndex) {
  auto module = Parse(kToken);
  ASSERT_TRUE(module);
  CollectiveMatmulOptions options;
  options.nxd = true;
  NeuronLoopedEinsumTokenReplacer pass(options);
  std::string remarks;
  EXPECT_TRUE(RunPassAndVerify(pass, *module, &remarks));
  const HloInstruction *root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(1)->name(), "t");
  EXPECT_EQ(root->operand(2)->name(), "t");
  // %ag3 lost its only user; %ag still feeds %g.
  EXPECT_EQ(module->entry_computation()->GetInstructionWithName("ag3"), nullptr);
  EXPECT_NE(module->entry_computation()->GetInstructionWithName("ag"), nullptr);
  EXPECT_EQ(remarks, "main/tok: replaced by %t\nmain/tok3: replaced by %t\n");
  EXPECT_FALSE(RunPassAndVerify(pass, *module));
}

TEST(NeuronLoopedEinsumTokenReplacer, CompatTakesOperandOneAndDeclinesMismatches) {
  auto module = Parse(kToken);
  ASSERT_TRUE(module);
  CollectiveMatmulOptions options;
  options.nxd = true;
  options.compat = true;
  NeuronLoopedEinsumTokenReplacer pass(options);
  std::string remarks;
  EXPECT_TRUE(RunPassAndVerify(pass, *module, &remarks));
  const HloInstruction *root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(1)->name(), "t");
  EXPECT_EQ(root->operand(2)->name(), "tok3");
  // Misses are written while matching, replacements when they happen.
  EXPECT_EQ(remarks, "main/tok3: missed: all-gather operand 1 is f32[1,8], not f32[] "
                     "(--neuron-compat uses operand 1)\n"
                     "main/tok: replaced by %t\n");
}

/// Sets an environment variable for the scope of one test.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::string old_;
  bool had_ = false;
};

TEST(NeuronEnv, SetToOneMeansExactlyOne) {
  const char *name = "LOOM_TEST_NEURON_FLAG";
  {
    ScopedEnv env(name, nullptr);
    EXPECT_FALSE(EnvVarSetToOne(name));
  }
  for (const char *no : {"", "0", "true", "yes", " 1", "1 ", "01", "2"}) {
    ScopedEnv env(name, no);
    EXPECT_FALSE(EnvVarSetToOne(name)) << "'" << no << "'";
  }
  ScopedEnv env(name, "1");
  EXPECT_TRUE(EnvVarSetToOne(name));
}

TEST(NeuronEnv, IntegersMustBeWholeDecimals) {
  const char *name = "LOOM_TEST_NEURON_INT";
  struct Case {
    const char *text;
    bool ok;
    int64_t value;
  } cases[] = {{"16", true, 16},  {"0", true, 0},      {"-3", true, -3},   {"007", true, 7},
               {"", false, 0},    {"16MB", false, 0},  {" 16", false, 0},  {"16 ", false, 0},
               {"0x10", false, 0}, {"+16", false, 0}, {"1.5", false, 0},
               {"99999999999999999999", false, 0}};
  for (const Case &c : cases) {
    ScopedEnv env(name, c.text);
    int64_t out = 12345;
    EXPECT_EQ(ReadEnvVarAsInt(name, &out), c.ok) << "'" << c.text << "'";
    EXPECT_EQ(out, c.ok ? c.value : 12345) << "'" << c.text << "'";
  }
  ScopedEnv env(name, nullptr);
  int64_t out = 1;
  EXPECT_FALSE(ReadEnvVarAsInt(name, &out));
}

TEST(NeuronEnv, OptionsComeFromTheEnvironmentWithoutFlags) {
  {
    ScopedEnv nxd(kNeuronCollectiveMatmulNxdEnv, "1");
    ScopedEnv aggressive(kNeuronCollectivePermuteAggressiveEnv, "true");
    ScopedEnv threshold(kNeuronSbToSbThresholdEnv, "3");
    CollectiveMatmulOptions options = CollectiveMatmulOptions::FromFlagsAndEnvironment();
    EXPECT_TRUE(options.nxd);
    EXPECT_FALSE(options.permute_aggressive);
    EXPECT_EQ(options.sb_to_sb_threshold_in_mb, 3);
    EXPECT_FALSE(options.compat);
  }
  ScopedEnv nxd(kNeuronCollectiveMatmulNxdEnv, nullptr);
  ScopedEnv aggressive(kNeuronCollectivePermuteAggressiveEnv, "1");
  ScopedEnv threshold(kNeuronSbToSbThresholdEnv, "lots");
  CollectiveMatmulOptions options = CollectiveMatmulOptions::FromFlagsAndEnvironment();
  EXPECT_FALSE(options.nxd);
  EXPECT_TRUE(options.permute_aggressive);
  EXPECT_EQ(options.sb_to_sb_threshold_in_mb, kDefaultSbToSbThresholdInMb);
  EXPECT_EQ(kDefaultSbToSbThresholdInMb, 16);
}

} // namespace
