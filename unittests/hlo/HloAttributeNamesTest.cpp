// The known-attribute lists are sorted and duplicate-free (the lookup is a
// binary search), every name the tree's own code reads or writes is in
// them, and the "did you mean" names the closest.
#include "loom/hlo/ir/HloAttributeNames.h"

#include <gtest/gtest.h>

namespace loom::hlo {
namespace {

void ExpectStrictlySorted(llvm::ArrayRef<llvm::StringRef> names) {
  for (size_t i = 1; i < names.size(); ++i)
    EXPECT_LT(names[i - 1], names[i]) << "at " << names[i].str();
}

TEST(HloAttributeNamesTest, ListsAreSortedWithoutDuplicates) {
  ExpectStrictlySorted(KnownInstructionAttributeNames());
  ExpectStrictlySorted(KnownModuleAttributeNames());
}

TEST(HloAttributeNamesTest, KnowsWhatRealDumpsCarry) {
  for (const char *name : {"frontend_attributes", "sharding", "metadata", "backend_config",
                           "operand_precision", "control-predecessors", "custom_call_target",
                           "replica_groups", "to_apply", "lhs_contracting_dims"})
    EXPECT_TRUE(IsKnownInstructionAttribute(name)) << name;
  for (const char *name : {"entry_computation_layout", "replica_count", "num_partitions",
                           "is_scheduled", "input_output_alias"})
    EXPECT_TRUE(IsKnownModuleAttribute(name)) << name;
  // The two lists are apart: a header name is no instruction attribute.
  EXPECT_FALSE(IsKnownInstructionAttribute("num_partitions"));
  EXPECT_FALSE(IsKnownModuleAttribute("dimensions"));
  EXPECT_FALSE(IsKnownInstructionAttribute("frobnicate"));
  EXPECT_FALSE(IsKnownInstructionAttribute(""));
}

TEST(HloAttributeNamesTest, ClosestIsByEditDistance) {
  EXPECT_EQ(ClosestKnownName("lhs_contracting_dim", KnownInstructionAttributeNames()),
            "lhs_contracting_dims");
  EXPECT_EQ(ClosestKnownName("rhs_batch_dim", KnownInstructionAttributeNames()),
            "rhs_batch_dims");
  EXPECT_EQ(ClosestKnownName("num_partition", KnownModuleAttributeNames()), "num_partitions");
  EXPECT_EQ(ClosestKnownName("replica_cnt", KnownModuleAttributeNames()), "replica_count");
  EXPECT_EQ(ClosestKnownName("x", {}), "");
}

} // namespace
} // namespace loom::hlo
