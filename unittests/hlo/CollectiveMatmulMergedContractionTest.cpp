// Unit tests of provenance mode's merged contractions in
// neuron_looped_einsum_replacer: the activation is reshaped to one
// contracting dimension, the custom-call records the merged dimension numbers
// (batch dimensions after the merged ones shift down) and computes exactly
// what the dot did (CheckNumerics); without the mode nothing folds.
#include "HloTestUtil.h"
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"

#include "loom/hlo/eval/NumericsCheck.h"
#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/parser/HloClone.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <memory>
#include <string>

using namespace loom::hlo;

namespace {

// lhs [c=2, c=3, b=4, m=5] . rhs [b=4, c=2, c=3, n=4]: contracting {0,1} with
// {1,2}, batch {2} with {0}; the weight is gathered along its dimension 3.
const char kBatched[] = R"(
HloModule merged, num_partitions=2

ENTRY %main (x: f32[2,3,4,5], w: f32[4,2,3,2]) -> f32[4,5,4] {
  %x = f32[2,3,4,5] parameter(0)
  %w = f32[4,2,3,2] parameter(1)
  %w.c = f32[4,2,3,2] copy(%w)
  %ag = f32[4,2,3,4] all-gather(%w.c), channel_id=1, replica_groups={{0,1}}, dimensions={3}, use_global_device_ids=true
  ROOT %d = f32[4,5,4] dot(%x, %ag), lhs_batch_dims={2}, lhs_contracting_dims={0,1}, rhs_batch_dims={0}, rhs_contracting_dims={1,2}
}
)";

using testutil::Parse;

struct Folded {
  std::unique_ptr<HloModule> module;
  std::string remarks;
  bool changed = false;
};

Folded Fold(const HloModule &original, bool provenance) {
  Folded result;
  result.module = llvm::cantFail(CloneModule(original));
  CollectiveMatmulOptions options;
  options.provenance = provenance;
  NeuronLoopedEinsumReplacer pass(options);
  llvm::raw_string_ostream stream(result.remarks);
  pass.SetRemarkStream(&stream);
  auto changed = pass.Run(*result.module);
  EXPECT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  result.changed = changed && *changed;
  stream.flush();
  return result;
}

TEST(CollectiveMatmulMergedContraction, BatchDimensionsShiftAndNumericsHold) {
  auto module = Parse(kBatched);
  ASSERT_TRUE(module);
  Folded folded = Fold(*module, /*provenance=*/true);
  ASSERT_TRUE(folded.changed) << folded.remarks;
  ASSERT_FALSE(static_cast<bool>(VerifyHloModule(*folded.module)));
  EXPECT_EQ(folded.remarks,
            "main/d: fused (MatchAllGatherInDotRhs, tp_degree=2, num_groups=1, "
            "rhs_contracting_dim=1, use_sb_to_sb=1, merged lhs_contracting_dims={0,1} "
            "rhs_contracting_dims={1,2}, weight=rhs via entry parameter %w)\n");
  const HloInstruction *call = folded.module->entry_computation()->root_instruction();
  ASSERT_EQ(call->opcode(), HloOpcode::kCustomCall);
  EXPECT_EQ(call->shape().ToString(false), "f32[4,5,4]");
  const HloInstruction *activation = call->operand(1);
  ASSERT_EQ(activation->opcode(), HloOpcode::kReshape);
  EXPECT_EQ(activation->shape().ToString(false), "f32[6,4,5]");
  auto attrs = GetFrontendAttributes(*call);
  ASSERT_TRUE(static_cast<bool>(attrs));
  auto loom = collective_matmul::DecodeLoomAttributes(*attrs);
  ASSERT_TRUE(static_cast<bool>(loom)) << llvm::toString(loom.takeError());
  ASSERT_TRUE(loom->has_value());
  const collective_matmul::LoomAttributes &decoded = **loom;
  EXPECT_EQ(decoded.dnums.lhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(decoded.dnums.rhs_contracting_dimensions, std::vector<int64_t>{1});
  EXPECT_EQ(decoded.dnums.lhs_batch_dimensions, std::vector<int64_t>{1});
  EXPECT_EQ(decoded.dnums.rhs_batch_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(decoded.weight_operand_shape.ToString(false), "f32[4,6,4]");
  NumericsCheckOptions numerics;
  numerics.seed = 7;
  llvm::Error error = CheckNumerics(*module, *folded.module, numerics, llvm::nulls());
  EXPECT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
}

TEST(CollectiveMatmulMergedContraction, DefaultModeDoesNotMerge) {
  auto module = Parse(kBatched);
  ASSERT_TRUE(module);
  Folded folded = Fold(*module, /*provenance=*/false);
  EXPECT_FALSE(folded.changed);
  EXPECT_EQ(folded.remarks,
            "main/d: missed: lhs has two contracting dimensions {0,1} (needs exactly 1)\n");
}

TEST(CollectiveMatmulMergedContraction, GatheredContractingDimensionIsNotMerged) {
  std::string text = kBatched;
  // Gather along dimension 2, one of the rhs contracting dimensions.
  size_t at = text.find("f32[4,2,3,4] all-gather");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "f32[4,2,6,2]");
  text.replace(text.find("dimensions={3}"), 14, "dimensions={2}");
  text.replace(text.find("f32[4,5,4] dot"), 10, "f32[4,5,2]");
  text.replace(text.find("-> f32[4,5,4]"), 13, "-> f32[4,5,2]");
  // The lhs contracting sizes follow the rhs's (2, 6).
  text.replace(text.find("x: f32[2,3,4,5]"), 15, "x: f32[2,6,4,5]");
  text.replace(text.find("%x = f32[2,3,4,5]"), 17, "%x = f32[2,6,4,5]");
  auto module = Parse(text.c_str());
  ASSERT_TRUE(module);
  Folded folded = Fold(*module, /*provenance=*/true);
  EXPECT_FALSE(folded.changed);
  EXPECT_EQ(folded.remarks,
            "main/d: missed: lhs has two contracting dimensions {0,1} (needs exactly 1); not "
            "merged: the all-gather dimension 2 is one of the rhs contracting dimensions "
            "{1,2}\n");
}

} // namespace
