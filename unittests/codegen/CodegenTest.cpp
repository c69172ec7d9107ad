//===- CodegenTest.cpp - The code generator on modules built from text ----===//

#include "loom/bir/json/LaunchJson.h"
#include "loom/codegen/Codegen.h"
#include "loom/codegen/DeviceGroups.h"
#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/parser/HloParser.h"

#include "gtest/gtest.h"

using namespace loom;

namespace {

const hlo::HloInstruction *findInst(const hlo::HloModule &M, llvm::StringRef Name) {
  for (const hlo::HloInstruction *I : M.entry_computation()->instructions())
    if (I->name() == Name)
      return I;
  ADD_FAILURE() << "no instruction " << Name.str();
  return nullptr;
}

std::unique_ptr<hlo::HloModule> parse(llvm::StringRef Text) {
  auto M = hlo::ParseHloModuleOwned(Text.str(), "test.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : llvm::toString(M.takeError()));
  return M ? std::move(*M) : nullptr;
}

TEST(Codegen, DevicesAndBindings) {
  auto M = parse(R"(HloModule copy, replica_count=2, num_partitions=3

ENTRY main {
  x = bf16[4,8] parameter(0)
  p = (f32[2], token[]) parameter(1)
  y = bf16[4,8] add(x, x)
  e = f32[2] get-tuple-element(p), index=0
  i = (f32[2], bf16[4,8]) tuple(e, x)
  ROOT t = (bf16[4,8], (f32[2], bf16[4,8])) tuple(y, i)
}
)");
  ASSERT_TRUE(M);
  codegen::CodegenOptions O;
  O.LncSize = 2;
  llvm::Expected<bir::Launch> L = codegen::lowerToLaunch(*M, O);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  EXPECT_EQ(llvm::toString(bir::verifyLaunch(*L)), "");
  ASSERT_EQ(L->Devices.size(), 6u);
  EXPECT_EQ(L->Devices[4].Replica, 1u);
  EXPECT_EQ(L->Devices[4].Partition, 1u);
  const bir::LaunchDevice &D = L->Devices[4];
  // Two cores, written split.
  ASSERT_EQ(D.Modules.size(), 2u);
  EXPECT_EQ(D.Modules[1]->getNeuronCoreId(), 1u);
  // The token leaf has no binding.
  ASSERT_EQ(D.Parameters.size(), 2u);
  EXPECT_EQ(D.Parameters[1].Parameter, 1u);
  EXPECT_EQ(D.Parameters[1].Index, std::vector<unsigned>{0});
  EXPECT_EQ(D.Parameters[1].Shape, "f32[2]");
  ASSERT_EQ(D.Outputs.size(), 3u);
  EXPECT_EQ(D.Outputs[0].Memloc, "y");
  EXPECT_EQ(D.Outputs[1].Index, (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(D.Outputs[1].Memloc, D.Parameters[1].Memloc);
  EXPECT_EQ(D.Outputs[2].Memloc, "x");
  // Saving and loading keeps everything.
  std::string Text = bir::formatLaunch(*L);
  llvm::Expected<bir::Launch> Back = bir::parseLaunch(Text, "l.json");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(bir::formatLaunch(*Back), Text);
}

TEST(Codegen, NotLoweredNamesTheInstruction) {
  auto M = parse(R"(HloModule m

ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] reverse(x), dimensions={0}
}
)");
  ASSERT_TRUE(M);
  llvm::Expected<bir::Launch> L = codegen::lowerToLaunch(*M, {});
  ASSERT_FALSE(bool(L));
  EXPECT_EQ(llvm::toString(L.takeError()),
            "main/r: reverse is not lowered (no lowering for this opcode yet)");
}

TEST(Codegen, DeviceGroupsFollowXlasModes) {
  auto M = parse(R"(HloModule m, replica_count=2, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[4] parameter(0)
  r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  rp = f32[4] all-reduce(x), replica_groups={{0,1}}, channel_id=1, to_apply=add
  g = f32[4] all-reduce(x), replica_groups=[2,2]<=[4], channel_id=2, use_global_device_ids=true, to_apply=add
  a2a = f32[4] all-to-all(x), replica_groups={{0,1}}, channel_id=3, dimensions={0}
  cp = f32[4] collective-permute(x), source_target_pairs={{0,1}}
  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(r, rp, g, a2a, cp)
}
)");
  ASSERT_TRUE(M);
  codegen::LaunchSize LS{2, 2};
  auto groupsOf = [&](llvm::StringRef Name) {
    const hlo::HloInstruction *I = findInst(*M, Name);
    if (!I)
      return std::vector<std::vector<int64_t>>{};
    auto G = codegen::getDeviceGroups(*I, LS);
    EXPECT_TRUE(bool(G));
    return G ? *G : std::vector<std::vector<int64_t>>{};
  };
  using Groups = std::vector<std::vector<int64_t>>;
  // Cross-replica: one group per partition.
  EXPECT_EQ(groupsOf("r"), (Groups{{0, 2}, {1, 3}}));
  // A channel without global ids: replicas times every partition.
  EXPECT_EQ(groupsOf("rp"), (Groups{{0, 1, 2, 3}}));
  // Flattened ids, iota form.
  EXPECT_EQ(groupsOf("g"), (Groups{{0, 1}, {2, 3}}));
  // all-to-all with a channel: partitions, one group per replica.
  EXPECT_EQ(groupsOf("a2a"), (Groups{{0, 1}, {2, 3}}));
  const hlo::HloInstruction *CP = findInst(*M, "cp");
  ASSERT_TRUE(CP);
  auto Pairs = codegen::getDevicePairs(*CP, LS);
  ASSERT_TRUE(bool(Pairs));
  // Replica ids without a channel: one set of pairs per partition.
  EXPECT_EQ(*Pairs, (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 3}}));
}

/// The smallest launch that fits: ids name replicas without a channel and
/// partitions with one; a group of every id takes its size from the
/// shapes; of launches of one size, the most partitions.
TEST(Codegen, InferLaunchSizeFitsIdsAndShapes) {
  auto launchOf = [&](llvm::StringRef Body) -> std::optional<codegen::LaunchSize> {
    auto M = parse(("HloModule m\n\nadd {\n  a = f32[] parameter(0)\n"
                    "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
                    "ENTRY main {\n  x = f32[4,8] parameter(0)\n" + Body + "}\n")
                       .str());
    if (!M)
      return std::nullopt;
    return codegen::inferLaunchSize(*M);
  };
  auto eq = [](std::optional<codegen::LaunchSize> L, int64_t R, int64_t P) {
    return L && L->ReplicaCount == R && L->NumPartitions == P;
  };
  // No collective: one device.
  EXPECT_TRUE(eq(launchOf("  ROOT n = f32[4,8] negate(x)\n"), 1, 1));
  // Replica ids up to 3 without a channel.
  EXPECT_TRUE(eq(launchOf("  ROOT r = f32[4,8] all-reduce(x), "
                          "replica_groups={{0,1},{2,3}}, to_apply=add\n"),
                 4, 1));
  // Partition ids with a channel.
  EXPECT_TRUE(eq(launchOf("  ROOT r = f32[4,8] all-reduce(x), channel_id=1, "
                          "replica_groups={{0,1,2}}, use_global_device_ids=true, "
                          "to_apply=add\n"),
                 1, 3));
  // A group of every replica: the gathered shape gives its size.
  EXPECT_TRUE(eq(launchOf("  ROOT g = f32[4,64] all-gather(x), replica_groups={}, "
                          "dimensions={1}\n"),
                 8, 1));
  // A reduce-scatter of every partition.
  EXPECT_TRUE(eq(launchOf("  ROOT s = f32[4,2] reduce-scatter(x), channel_id=1, "
                          "replica_groups={}, dimensions={1}, to_apply=add\n"),
                 1, 4));
  // collective-permute pairs of partitions, and of replicas.
  EXPECT_TRUE(eq(launchOf("  ROOT c = f32[4,8] collective-permute(x), channel_id=1, "
                          "source_target_pairs={{0,5}}\n"),
                 1, 6));
  EXPECT_TRUE(eq(launchOf("  ROOT c = f32[4,8] collective-permute(x), "
                          "source_target_pairs={{1,0}}\n"),
                 2, 1));
  // Shapes that no group size fits: no launch.
  EXPECT_FALSE(launchOf("  ROOT g = f32[4,9] all-gather(x), replica_groups={}, "
                        "dimensions={1}\n"));
}

} // namespace
