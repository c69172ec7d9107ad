// Unit tests of the interpreter's collectives: participant groups in each of
// XLA's modes (explicit and iota replica groups), group order, rank-0
// pass-through, every collective and its async start/done pair, and the
// AwsNeuronCollectiveMatmul custom-call against the all-gather + dot it
// replaces (bitwise equal).
#include "EvalTestUtil.h"

using namespace loom::hlo;
using namespace loom::hlo::evaltest;

namespace {

/// Device d's single argument: s32[n] {100 d, 100 d + 1, ...}.
std::vector<std::vector<Literal>> PerDeviceArgs(int devices, int n) {
  std::vector<std::vector<Literal>> args(devices);
  for (int d = 0; d < devices; ++d) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
      v.push_back(100 * d + i);
    args[d].push_back(Vec(PrimitiveType::S32, v));
  }
  return args;
}

std::vector<std::string> RunAll(const std::string &text,
                                std::vector<std::vector<Literal>> args) {
  std::vector<std::string> out;
  for (const Literal &lit : RunModule(text, std::move(args)))
    out.push_back(lit.ToString());
  return out;
}

std::string Module(const std::string &header, const std::string &body,
                   const std::string &extra = "") {
  return "HloModule m, " + header + "\n" + extra + "\nENTRY e {\n" + body + "}\n";
}

const char *kAdd = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
})";

using Strings = std::vector<std::string>;

TEST(EvalCollectivesTest, AllGatherCrossReplica) {
  // No channel id: groups list replicas, one group per partition.
  std::string text = Module("replica_count=2, num_partitions=2",
                            "  p = s32[2] parameter(0)\n"
                            "  ROOT g = s32[4] all-gather(p), replica_groups={{0,1}}, "
                            "dimensions={0}\n");
  EXPECT_EQ(RunAll(text, PerDeviceArgs(4, 2)),
            (Strings{"s32[4]{0} {0, 1, 200, 201}", "s32[4]{0} {100, 101, 300, 301}",
                     "s32[4]{0} {0, 1, 200, 201}", "s32[4]{0} {100, 101, 300, 301}"}));
  // Empty groups: every replica; group order decides the concatenation.
  std::string reversed = Module("replica_count=2, num_partitions=2",
                                "  p = s32[2] parameter(0)\n"
                                "  ROOT g = s32[4] all-gather(p), replica_groups={{1,0}}, "
                                "dimensions={0}\n");
  EXPECT_EQ(RunAll(reversed, PerDeviceArgs(4, 2))[0], "s32[4]{0} {200, 201, 0, 1}");
  // Iota groups list replicas too: [2,2]<=[4] is {{0,1},{2,3}}.
  std::string iota = Module("replica_count=4, num_partitions=2",
                            "  p = s32[1] parameter(0)\n"
                            "  ROOT g = s32[2] all-gather(p), replica_groups=[2,2]<=[4], "
                            "dimensions={0}\n");
  EXPECT_EQ(RunAll(iota, PerDeviceArgs(8, 1)),
            (Strings{"s32[2]{0} {0, 200}", "s32[2]{0} {100, 300}", "s32[2]{0} {0, 200}",
                     "s32[2]{0} {100, 300}", "s32[2]{0} {400, 600}", "s32[2]{0} {500, 700}",
                     "s32[2]{0} {400, 600}", "s32[2]{0} {500, 700}"}));
}

TEST(EvalCollectivesTest, AllGatherCrossReplicaAndPartition) {
  // channel_id without use_global_device_ids: groups list replicas and
  // take every partition of them.
  std::string text = Module("replica_count=2, num_partitions=2",
                            "  p = s32[2] parameter(0)\n"
                            "  ROOT g = s32[4] all-gather(p), channel_id=1, "
                            "replica_groups={{0},{1}}, dimensions={0}\n");
  EXPECT_EQ(RunAll(text, PerDeviceArgs(4, 2)),
            (Strings{"s32[4]{0} {0, 1, 100, 101}", "s32[4]{0} {0, 1, 100, 101}",
                     "s32[4]{0} {200, 201, 300, 301}", "s32[4]{0} {200, 201, 300, 301}"}));
  std::string all = Module("replica_count=2, num_partitions=2",
                           "  p = s32[1] parameter(0)\n"
                           "  ROOT g = s32[4] all-gather(p), channel_id=1, replica_groups={}, "
                           "dimensions={0}\n");
  EXPECT_EQ(RunAll(all, PerDeviceArgs(4, 1))[3], "s32[4]{0} {0, 100, 200, 300}");
}

TEST(EvalCollectivesTest, AllGatherFlattenedIds) {
  std::string text = Module("replica_count=2, num_partitions=2",
                            "  p = s32[1] parameter(0)\n"
                            "  ROOT g = s32[2] all-gather(p), channel_id=1, "
                            "use_global_device_ids=true, replica_groups={{0,3},{2,1}}, "
                            "dimensions={0}\n");
  EXPECT_EQ(RunAll(text, PerDeviceArgs(4, 1)),
            (Strings{"s32[2]{0} {0, 300}", "s32[2]{0} {200, 100}", "s32[2]{0} {200, 100}",
                     "s32[2]{0} {0, 300}"}));
  // Iota groups: [2,2]<=[2,2]T(1,0) is {{0,2},{1,3}}.
  std::string iota = Module("num_partitions=4",
                            "  p = s32[1] parameter(0)\n"
                            "  ROOT g = s32[2] all-gather(p), channel_id=1, "
                            "use_global_device_ids=true, replica_groups=[2,2]<=[2,2]T(1,0), "
                            "dimensions={0}\n");
  EXPECT_EQ(RunAll(iota, PerDeviceArgs(4, 1)),
            (Strings{"s32[2]{0} {0, 200}", "s32[2]{0} {100, 300}", "s32[2]{0} {0, 200}",
                     "s32[2]{0} {100, 300}"}));
}

TEST(EvalCollectivesTest, AllGatherSeveralOperandsAndRankZeroPassThrough) {
  std::string text = Module("replica_count=2",
                            "  p = s32[1,2] parameter(0)\n"
                            "  s = s32[] parameter(1)\n"
                            "  q = s32[1,2] negate(p)\n"
                            "  ROOT g = (s32[1,4], s32[2,2], s32[]) all-gather(p, q, s), "
                            "replica_groups={{0,1}}, dimensions={1}\n");
  std::vector<std::vector<Literal>> args(2);
  for (int d = 0; d < 2; ++d) {
    args[d].push_back(Array(PrimitiveType::S32, {1, 2}, {10.0 * d, 10.0 * d + 1}));
    args[d].push_back(Literal::CreateR0FromInt64(PrimitiveType::S32, 7 + d));
  }
  // q gathers along dimension 1 too, but its result is declared [2,2]:
  // that is a shape error, reported rather than guessed.
  EXPECT_NE(RunError(text, args).find("does not match"), std::string::npos);
  std::string ok = Module("replica_count=2",
                          "  p = s32[1,2] parameter(0)\n"
                          "  s = s32[] parameter(1)\n"
                          "  ROOT g = (s32[1,4], s32[]) all-gather(p, s), "
                          "replica_groups={{0,1}}, dimensions={1}\n");
  EXPECT_EQ(RunAll(ok, args), (Strings{"(s32[1,4]{1,0}, s32[]) ({ { 0, 1, 10, 11 } }, 7)",
                                       "(s32[1,4]{1,0}, s32[]) ({ { 0, 1, 10, 11 } }, 8)"}));
}

TEST(EvalCollectivesTest, AllReduceFoldsInGroupOrder) {
  std::string text = Module("replica_count=2, num_partitions=2",
                            "  p = s32[2] parameter(0)\n"
                            "  ROOT r = s32[2] all-reduce(p), replica_groups={}, to_apply=add\n",
                            kAdd);
  EXPECT_EQ(RunAll(text, PerDeviceArgs(4, 2)),
            (Strings{"s32[2]{0} {200, 202}", "s32[2]{0} {400, 402}", "s32[2]{0} {200, 202}",
                     "s32[2]{0} {400, 402}"}));
  // subtract is not commutative: the fold runs in group order.
  const char *sub = R"(
sub {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] subtract(a, b)
})";
  std::string ordered = Module("replica_count=3",
                               "  p = s32[1] parameter(0)\n"
                               "  ROOT r = s32[1] all-reduce(p), replica_groups={{2,0,1}}, "
                               "to_apply=sub\n",
                               sub);
  EXPECT_EQ(RunAll(ordered, PerDeviceArgs(3, 1))[0], "s32[1]{0} {100}"); // 200 - 0 - 100
  std::string everyone = Module("replica_count=2, num_partitions=2",
                                "  p = s32[2] parameter(0)\n"
                                "  ROOT r = s32[2] all-reduce(p), channel_id=3, "
                                "replica_groups={{0,1}}, to_apply=add\n",
                                kAdd);
  EXPECT_EQ(RunAll(everyone, PerDeviceArgs(4, 2))[1], "s32[2]{0} {600, 604}");
}

TEST(EvalCollectivesTest, AllReduceWithGeneralToApply) {
  // max(a, b) + 1 is not one elementwise op: called per element.
  const char *f = R"(
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  m = s32[] maximum(a, b)
  one = s32[] constant(1)
  ROOT r = s32[] add(m, one)
})";
  std::string text = Module("replica_count=3",
                            "  p = s32[2] parameter(0)\n"
                            "  ROOT r = s32[2] all-reduce(p), replica_groups={}, to_apply=f\n", f);
  EXPECT_EQ(RunAll(text, PerDeviceArgs(3, 2))[2], "s32[2]{0} {201, 202}");
}

TEST(EvalCollectivesTest, ReduceScatter) {
  std::string text = Module("num_partitions=4",
                            "  p = s32[8] parameter(0)\n"
                            "  ROOT r = s32[2] reduce-scatter(p), channel_id=1, "
                            "use_global_device_ids=true, replica_groups={{0,1,2,3}}, "
                            "dimensions={0}, to_apply=add\n",
                            kAdd);
  EXPECT_EQ(RunAll(text, PerDeviceArgs(4, 8)),
            (Strings{"s32[2]{0} {600, 604}", "s32[2]{0} {608, 612}", "s32[2]{0} {616, 620}",
                     "s32[2]{0} {624, 628}"}));
  // Group order decides which shard a rank keeps.
  std::string reordered = Module("replica_count=2",
                                 "  p = s32[2] parameter(0)\n"
                                 "  ROOT r = s32[1] reduce-scatter(p), replica_groups={{1,0}}, "
                                 "dimensions={0}, to_apply=add\n",
                                 kAdd);
  EXPECT_EQ(RunAll(reordered, PerDeviceArgs(2, 2)),
            (Strings{"s32[1]{0} {102}", "s32[1]{0} {100}"}));
}

TEST(EvalCollectivesTest, CollectivePermute) {
  std::string partitions = Module("num_partitions=4",
                                  "  p = s32[1] parameter(0)\n"
                                  "  ROOT c = s32[1] collective-permute(p), channel_id=1, "
                                  "source_target_pairs={{0,1},{1,2},{2,3}}\n");
  EXPECT_EQ(RunAll(partitions, PerDeviceArgs(4, 1)),
            (Strings{"s32[1]{0} {0}", "s32[1]{0} {0}", "s32[1]{0} {100}", "s32[1]{0} {200}"}));
  // With a channel id the pairs are partition ids within each replica.
  std::string mixed = Module("replica_count=2, num_partitions=2",
                             "  p = s32[1] parameter(0)\n"
                             "  ROOT c = s32[1] collective-permute(p), channel_id=1, "
                             "source_target_pairs={{1,0}}\n");
  EXPECT_EQ(RunAll(mixed, PerDeviceArgs(4, 1)),
            (Strings{"s32[1]{0} {100}", "s32[1]{0} {0}", "s32[1]{0} {300}", "s32[1]{0} {0}"}));
  // Without one they are replica ids within each partition.
  std::string replicas = Module("replica_count=2, num_partitions=2",
                                "  p = s32[1] parameter(0)\n"
                                "  ROOT c = s32[1] collective-permute(p), "
                                "source_target_pairs={{0,1},{1,0}}\n");
  EXPECT_EQ(RunAll(replicas, PerDeviceArgs(4, 1)),
            (Strings{"s32[1]{0} {200}", "s32[1]{0} {300}", "s32[1]{0} {0}", "s32[1]{0} {100}"}));
}

TEST(EvalCollectivesTest, AllToAll) {
  std::string text = Module("replica_count=2",
                            "  p = s32[4] parameter(0)\n"
                            "  ROOT a = s32[4] all-to-all(p), replica_groups={{0,1}}, "
                            "dimensions={0}\n");
  EXPECT_EQ(RunAll(text, PerDeviceArgs(2, 4)),
            (Strings{"s32[4]{0} {0, 1, 100, 101}", "s32[4]{0} {2, 3, 102, 103}"}));
  std::string tuple = Module("replica_count=2",
                             "  p = s32[2] parameter(0)\n"
                             "  x = s32[1] slice(p), slice={[0:1]}\n"
                             "  y = s32[1] slice(p), slice={[1:2]}\n"
                             "  ROOT a = (s32[1], s32[1]) all-to-all(x, y), replica_groups={{0,1}}\n");
  EXPECT_EQ(RunAll(tuple, PerDeviceArgs(2, 2)),
            (Strings{"(s32[1]{0}, s32[1]{0}) ({0}, {100})", "(s32[1]{0}, s32[1]{0}) ({1}, {101})"}));
  // With a channel id: partitions within each replica.
  std::string partitions = Module("replica_count=2, num_partitions=2",
                                  "  p = s32[2] parameter(0)\n"
                                  "  ROOT a = s32[2] all-to-all(p), channel_id=1, "
                                  "replica_groups={{0,1}}, dimensions={0}\n");
  EXPECT_EQ(RunAll(partitions, PerDeviceArgs(4, 2))[3], "s32[2]{0} {201, 301}");
}

TEST(EvalCollectivesTest, AsyncStartDonePairs) {
  std::string text = Module(
      "replica_count=2",
      "  p = s32[2] parameter(0)\n"
      "  ags = (s32[2], s32[4]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}\n"
      "  agd = s32[4] all-gather-done(ags)\n"
      "  ars = s32[4] all-reduce-start(agd), replica_groups={}, to_apply=add\n"
      "  ard = s32[4] all-reduce-done(ars)\n"
      "  cps = (s32[4], s32[4], u32[], u32[]) collective-permute-start(ard), "
      "source_target_pairs={{0,1}}\n"
      "  cpd = s32[4] collective-permute-done(cps)\n"
      "  as = ((s32[2]), s32[4], s32[]) async-start(p), calls=wrapped\n"
      "  ad = s32[4] async-done(as)\n"
      "  ROOT t = (s32[4], s32[4]) tuple(cpd, ad)\n",
      std::string(kAdd) + R"(
wrapped {
  x = s32[2] parameter(0)
  ROOT g = s32[4] all-gather(x), replica_groups={{1,0}}, dimensions={0}
})");
  EXPECT_EQ(RunAll(text, PerDeviceArgs(2, 2)),
            (Strings{"(s32[4]{0}, s32[4]{0}) ({0, 0, 0, 0}, {100, 101, 0, 1})",
                     "(s32[4]{0}, s32[4]{0}) ({0, 2, 200, 202}, {100, 101, 0, 1})"}));
  std::string multi = Module(
      "replica_count=2",
      "  p = s32[1] parameter(0)\n"
      "  q = s32[1] negate(p)\n"
      "  s = ((s32[1], s32[1]), (s32[2], s32[2])) all-gather-start(p, q), "
      "replica_groups={{0,1}}, dimensions={0}\n"
      "  ROOT d = (s32[2], s32[2]) all-gather-done(s)\n");
  EXPECT_EQ(RunAll(multi, PerDeviceArgs(2, 1))[1], "(s32[2]{0}, s32[2]{0}) ({0, 100}, {0, -100})");
}

TEST(EvalCollectivesTest, AsyncSugarRunsTheWrappedOp) {
  std::string text = Module("replica_count=2",
                            "  p = s32[2] parameter(0)\n"
                            "  s = ((s32[2]), s32[2], s32[]) negate-start(p)\n"
                            "  u = ((s32[2]), s32[2], s32[]) negate-update(s)\n"
                            "  d = s32[2] negate-done(u)\n"
                            "  gs = ((s32[2]), s32[4], s32[]) all-gather-start(d), "
                            "replica_groups={{1,0}}, dimensions={0}\n"
                            "  ROOT gd = s32[4] all-gather-done(gs)\n");
  EXPECT_EQ(RunAll(text, PerDeviceArgs(2, 2))[0], "s32[4]{0} {-100, -101, 0, -1}");
}

TEST(EvalCollectivesTest, ReduceScatterRankZeroAndBroadcast) {
  std::string text = Module("replica_count=2",
                            "  p = s32[2] parameter(0)\n"
                            "  c = s32[] constant(5)\n"
                            "  rs = (s32[1], s32[]) reduce-scatter(p, c), replica_groups={{0,1}}, "
                            "dimensions={0}, to_apply=add\n"
                            "  b = s32[2] collective-broadcast(p), replica_groups={{1,0}}\n"
                            "  ROOT t = ((s32[1], s32[]), s32[2]) tuple(rs, b)\n",
                            kAdd);
  EXPECT_EQ(RunAll(text, PerDeviceArgs(2, 2)),
            (Strings{"((s32[1]{0}, s32[]), s32[2]{0}) (({100}, 5), {100, 101})",
                     "((s32[1]{0}, s32[]), s32[2]{0}) (({102}, 5), {100, 101})"}));
}

TEST(EvalCollectivesTest, ReplicaAndPartitionIds) {
  std::string text = Module("replica_count=2, num_partitions=3",
                            "  r = u32[] replica-id()\n"
                            "  p = u32[] partition-id()\n"
                            "  ROOT t = (u32[], u32[]) tuple(r, p)\n");
  Strings out = RunAll(text, {});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0], "(u32[], u32[]) (0, 0)");
  EXPECT_EQ(out[4], "(u32[], u32[]) (1, 1)");
  EXPECT_EQ(out[5], "(u32[], u32[]) (1, 2)");
}

TEST(EvalCollectivesTest, GroupErrors) {
  EXPECT_NE(RunError(Module("replica_count=2",
                            "  p = s32[1] parameter(0)\n"
                            "  ROOT g = s32[2] all-gather(p), replica_groups={{0,2}}, "
                            "dimensions={0}\n"),
                     PerDeviceArgs(2, 1))
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(RunError(Module("replica_count=2",
                            "  p = s32[1] parameter(0)\n"
                            "  ROOT g = s32[1] all-gather(p), replica_groups={{0}}, "
                            "dimensions={0}\n"),
                     PerDeviceArgs(2, 1))
                .find("device 1 is in no replica group"),
            std::string::npos);
  EXPECT_NE(RunError(Module("replica_count=2",
                            "  p = s32[1] parameter(0)\n"
                            "  ROOT g = s32[2] all-gather(p), use_global_device_ids=true, "
                            "replica_groups={{0,1}}, dimensions={0}\n"),
                     PerDeviceArgs(2, 1))
                .find("needs a channel_id"),
            std::string::npos);
}

// ---- AwsNeuronCollectiveMatmul --------------------------------------------------

/// Arguments: a bf16 local weight and an activation, different per device.
std::vector<std::vector<Literal>> MatmulArgs(int devices, std::vector<int64_t> weight_dims,
                                             std::vector<int64_t> act_dims) {
  std::vector<std::vector<Literal>> args(devices);
  for (int d = 0; d < devices; ++d) {
    Literal w(Shape(PrimitiveType::BF16, weight_dims));
    for (int64_t i = 0; i < w.element_count(); ++i)
      w.SetFromDouble(i, 0.37 * ((i * 7 + d * 13) % 17) - 2.9);
    Literal x(Shape(PrimitiveType::BF16, act_dims));
    for (int64_t i = 0; i < x.element_count(); ++i)
      x.SetFromDouble(i, 0.11 * ((i * 5 + d * 3) % 23) - 1.3);
    args[d].push_back(std::move(w));
    args[d].push_back(std::move(x));
  }
  return args;
}

std::string Attrs(const std::string &side, const std::string &lc, const std::string &rc,
                  const std::string &dim, const std::string &groups, const std::string &channel,
                  const std::string &global, const std::string &local,
                  const std::string &gathered, const std::string &operand) {
  std::string s = "frontend_attributes={loom_weight_side=\"" + side +
                  "\",loom_lhs_batch_dims=\"{}\",loom_rhs_batch_dims=\"{}\","
                  "loom_lhs_contracting_dims=\"" + lc + "\",loom_rhs_contracting_dims=\"" + rc +
                  "\",loom_all_gather_dimension=\"" + dim + "\",loom_replica_groups=\"" + groups +
                  "\",";
  if (!channel.empty())
    s += "loom_channel_id=\"" + channel + "\",";
  return s + "loom_use_global_device_ids=\"" + global + "\",loom_local_weight_shape=\"" + local +
         "\",loom_gathered_weight_shape=\"" + gathered + "\",loom_weight_operand_shape=\"" +
         operand + "\"}";
}

void ExpectSameResults(const std::string &reference, const std::string &fused,
                       std::vector<std::vector<Literal>> args) {
  std::vector<Literal> a = RunModule(reference, args);
  std::vector<Literal> b = RunModule(fused, args);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t d = 0; d < a.size(); ++d)
    EXPECT_EQ(a[d], b[d]) << "device " << d << ": " << a[d].ToString() << " vs "
                          << b[d].ToString();
}

TEST(EvalCollectivesTest, CollectiveMatmulMatchesAllGatherAndDot) {
  std::string reference = Module(
      "num_partitions=4",
      "  w = bf16[4,8] parameter(0)\n"
      "  x = bf16[3,16] parameter(1)\n"
      "  ag = bf16[16,8] all-gather(w), channel_id=1, use_global_device_ids=true, "
      "replica_groups={{0,1,2,3}}, dimensions={0}\n"
      "  ROOT d = f32[3,8] dot(x, ag), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  std::string fused = Module(
      "num_partitions=4",
      "  w = bf16[4,8] parameter(0)\n"
      "  x = bf16[3,16] parameter(1)\n"
      "  w2 = bf16[4,8] reshape(w)\n"
      "  ROOT cm = f32[3,8] custom-call(w2, x), custom_call_target=\"AwsNeuronCollectiveMatmul\", " +
          Attrs("rhs", "{1}", "{0}", "0", "{{0,1,2,3}}", "1", "true", "bf16[4,8]", "bf16[16,8]",
                "bf16[16,8]") +
          ", backend_config=\"rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=0\"\n");
  ExpectSameResults(reference, fused, MatmulArgs(4, {4, 8}, {3, 16}));
}

TEST(EvalCollectivesTest, CollectiveMatmulWeightOnTheLeftThroughReshapes) {
  // Local weight [2,3,4] gathered along dimension 1 over two groups of two
  // replicas, reshaped to [12,4] and used as the dot's lhs.
  std::string reference = Module(
      "replica_count=4",
      "  w = bf16[2,3,4] parameter(0)\n"
      "  x = bf16[4,5] parameter(1)\n"
      "  ag = bf16[2,6,4] all-gather(w), replica_groups={{0,2},{3,1}}, dimensions={1}\n"
      "  r = bf16[12,4] reshape(ag)\n"
      "  ROOT d = bf16[12,5] dot(r, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  std::string fused = Module(
      "replica_count=4",
      "  w = bf16[2,3,4] parameter(0)\n"
      "  x = bf16[4,5] parameter(1)\n"
      "  w2 = bf16[6,4] reshape(w)\n"
      "  ROOT cm = bf16[12,5] custom-call(w2, x), custom_call_target=\"AwsNeuronCollectiveMatmul\", " +
          Attrs("lhs", "{1}", "{0}", "1", "{{0,2},{3,1}}", "", "false", "bf16[2,3,4]",
                "bf16[2,6,4]", "bf16[12,4]") +
          ", backend_config=\"rhs_contracting_dim=0,tp_degree=2,num_groups=2,use_sb_to_sb=1\"\n");
  ExpectSameResults(reference, fused, MatmulArgs(4, {2, 3, 4}, {4, 5}));
}

TEST(EvalCollectivesTest, CollectiveMatmulErrorsNameTheInstruction) {
  std::string attrs = Attrs("rhs", "{1}", "{0}", "0", "{{0,1}}", "", "false", "f32[2,2]",
                            "f32[4,2]", "f32[4,2]");
  auto module_with = [&](const std::string &a) {
    return Module("replica_count=2",
                  "  w = f32[2,2] parameter(0)\n"
                  "  x = f32[3,4] parameter(1)\n"
                  "  ROOT cm = f32[3,2] custom-call(w, x), "
                  "custom_call_target=\"AwsNeuronCollectiveMatmul\", " +
                      a +
                      ", backend_config=\"rhs_contracting_dim=0,tp_degree=2,num_groups=1,"
                      "use_sb_to_sb=0\"\n");
  };
  std::vector<std::vector<Literal>> args(2);
  for (int d = 0; d < 2; ++d) {
    args[d].push_back(Array(PrimitiveType::F32, {2, 2}, {1, 2, 3, 4}));
    args[d].push_back(Array(PrimitiveType::F32, {3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1}));
  }
  std::vector<Literal> ok = RunModule(module_with(attrs), args);
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[0].ToString(), "f32[3,2]{1,0} { { 1, 2 }, { 3, 4 }, { 4, 6 } }");

  std::string missing = attrs;
  missing.replace(missing.find("loom_weight_side=\"rhs\","), 23, "");
  EXPECT_EQ(RunError(module_with(missing), args),
            "custom-call 'cm': missing frontend attribute loom_weight_side");
  std::string bad = attrs;
  bad.replace(bad.find("\"{{0,1}}\""), 9, "\"{{0,x}}\"");
  EXPECT_NE(RunError(module_with(bad), args)
                .find("custom-call 'cm': malformed frontend attribute loom_replica_groups"),
            std::string::npos);
  std::string wrong_shape = attrs;
  wrong_shape.replace(wrong_shape.find("loom_local_weight_shape=\"f32[2,2]\""), 34,
                      "loom_local_weight_shape=\"f32[5,2]\"");
  EXPECT_NE(RunError(module_with(wrong_shape), args).find("custom-call 'cm': operand 0"),
            std::string::npos);
}

} // namespace
