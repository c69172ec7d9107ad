//===- CollectiveMatmulContractTest.cpp - The custom-call's contract ------===//
//
// Encoding and strict decoding of backend_config and the loom_* attributes,
// what Resolve() makes of a custom-call (geometry from backend_config), and
// the disagreements Verify() reports.
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/ir/CollectiveMatmulContract.h"

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/parser/HloParser.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <string>

namespace loom::hlo {
namespace {

using namespace collective_matmul;

std::string DecodeError(llvm::StringRef text) {
  llvm::Expected<BackendConfig> c = DecodeBackendConfig(text);
  if (c)
    return "<decoded>";
  return llvm::toString(c.takeError());
}

TEST(CollectiveMatmulContract, BackendConfigRoundTrips) {
  BackendConfig c;
  c.rhs_contracting_dim = 1;
  c.tp_degree = 8;
  c.num_groups = 2;
  c.use_sb_to_sb = true;
  std::string text = EncodeBackendConfig(c);
  EXPECT_EQ(text, "rhs_contracting_dim=1,tp_degree=8,num_groups=2,use_sb_to_sb=1");
  BackendConfig d = llvm::cantFail(DecodeBackendConfig(text));
  EXPECT_EQ(d.rhs_contracting_dim, 1);
  EXPECT_EQ(d.tp_degree, 8);
  EXPECT_EQ(d.num_groups, 2);
  EXPECT_TRUE(d.use_sb_to_sb);
}

TEST(CollectiveMatmulContract, BackendConfigDecodingIsStrict) {
  EXPECT_EQ(DecodeError("rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=0"),
            "<decoded>");
  // Order and spelling.
  EXPECT_NE(DecodeError("tp_degree=4,rhs_contracting_dim=0,num_groups=1,use_sb_to_sb=0")
                .find("expected key 'rhs_contracting_dim='"),
            std::string::npos);
  EXPECT_NE(DecodeError("rhs_contracting_dim=0,tp_degrees=4,num_groups=1,use_sb_to_sb=0")
                .find("expected key 'tp_degree='"),
            std::string::npos);
  EXPECT_NE(DecodeError("rhs_contracting_dim=0,tp_degree=4,num_groups=1")
                .find("expected ',' before key 'use_sb_to_sb'"),
            std::string::npos);
  EXPECT_NE(DecodeError("rhs_contracting_dim=0, tp_degree=4,num_groups=1,use_sb_to_sb=0")
                .find("expected key 'tp_degree='"),
            std::string::npos);
  EXPECT_NE(DecodeError("rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=0,")
                .find("unexpected text ','"),
            std::string::npos);
  EXPECT_NE(DecodeError("").find("expected key 'rhs_contracting_dim='"), std::string::npos);
  // Values: decimal digits only; use_sb_to_sb 0 or 1; degrees at least 1.
  for (const char *value : {"-1", "+4", " 4", "4 ", "0x4", "4.0", "", "four",
                            "99999999999999999999"})
    EXPECT_EQ(DecodeError(std::string("rhs_contracting_dim=0,tp_degree=") + value +
                          ",num_groups=1,use_sb_to_sb=0"),
              std::string("backend_config key 'tp_degree': '") + value +
                  "' is not a decimal integer")
        << value;
  EXPECT_EQ(DecodeError("rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=2"),
            "backend_config key 'use_sb_to_sb': '2' is neither 0 nor 1");
  EXPECT_EQ(DecodeError("rhs_contracting_dim=0,tp_degree=0,num_groups=1,use_sb_to_sb=0"),
            "backend_config key 'tp_degree': must be at least 1");
  EXPECT_EQ(DecodeError("rhs_contracting_dim=0,tp_degree=2,num_groups=0,use_sb_to_sb=0"),
            "backend_config key 'num_groups': must be at least 1");
}

TEST(CollectiveMatmulContract, LoomAttributesRoundTripAndNameTheMissingKey) {
  LoomAttributes a;
  a.weight_side = WeightSide::kRhs;
  a.dnums.lhs_contracting_dimensions = {1};
  a.dnums.rhs_contracting_dimensions = {0};
  a.all_gather_dimension = 2;
  a.replica_groups = {{0, 1}, {2, 3}};
  a.channel_id = 7;
  a.use_global_device_ids = true;
  a.local_weight_shape = Shape(PrimitiveType::BF16, {4, 2, 3});
  a.gathered_weight_shape = Shape(PrimitiveType::BF16, {4, 2, 6});
  a.weight_operand_shape = Shape(PrimitiveType::BF16, {4, 12});
  auto encoded = EncodeLoomAttributes(a);
  ASSERT_EQ(encoded.size(), 12u);
  EXPECT_EQ(encoded[0].first, "loom_weight_side");
  EXPECT_EQ(encoded[6].second, "{{0,1},{2,3}}");
  EXPECT_EQ(encoded[9].second, "bf16[4,2,3]");
  std::optional<LoomAttributes> b = llvm::cantFail(DecodeLoomAttributes(encoded));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->weight_side, WeightSide::kRhs);
  EXPECT_EQ(b->all_gather_dimension, 2);
  EXPECT_EQ(b->replica_groups, a.replica_groups);
  EXPECT_EQ(b->channel_id, std::optional<int64_t>(7));
  EXPECT_TRUE(b->use_global_device_ids);
  EXPECT_EQ(b->weight_operand_shape, a.weight_operand_shape);

  // No loom_* key: nothing to decode (Neuron's own form).
  std::vector<std::pair<std::string, std::string>> other = {{"keep", "1"}};
  EXPECT_FALSE(llvm::cantFail(DecodeLoomAttributes(other)));
  // One key missing or malformed: the error names it.
  auto without = encoded;
  without.erase(without.begin() + 5);
  auto missing = DecodeLoomAttributes(without);
  ASSERT_FALSE(missing);
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "missing frontend attribute loom_all_gather_dimension");
  auto bad = encoded;
  bad[10].second = "bf16[4,2,6]{2,1,0}";
  auto malformed = DecodeLoomAttributes(bad);
  ASSERT_FALSE(malformed);
  EXPECT_NE(llvm::toString(malformed.takeError())
                .find("malformed frontend attribute loom_gathered_weight_shape"),
            std::string::npos);
}

/// What the pass wrote before EncodeFrontendAttributes: the dot's entries
/// without loom_* keys, then EncodeLoomAttributes, through
/// SetFrontendAttributes.
std::string SetFrontendAttributesText(
    const std::vector<std::pair<std::string, std::string>> &own, const LoomAttributesRef &a) {
  std::vector<std::pair<std::string, std::string>> all;
  for (const auto &kv : own)
    if (!IsLoomKey(kv.first))
      all.push_back(kv);
  for (auto &kv : EncodeLoomAttributes(a))
    all.push_back(std::move(kv));
  auto inst = HloInstruction::Create(HloOpcode::kCustomCall, Shape(PrimitiveType::F32, {}), {});
  SetFrontendAttributes(*inst, all);
  return inst->FindAttribute("frontend_attributes")->str();
}

TEST(CollectiveMatmulContract, FrontendAttributesAreSetFrontendAttributesByteForByte) {
  LoomAttributes a;
  a.weight_side = WeightSide::kLhs;
  a.dnums.lhs_batch_dimensions = {0};
  a.dnums.rhs_batch_dimensions = {0};
  a.dnums.lhs_contracting_dimensions = {2};
  a.dnums.rhs_contracting_dimensions = {1};
  a.all_gather_dimension = 1;
  a.replica_groups = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  a.use_global_device_ids = false;
  a.local_weight_shape = Shape(PrimitiveType::BF16, {2, 4, 1234567890123});
  a.gathered_weight_shape = Shape(PrimitiveType::F8E4M3FN, {2, 16, 3});
  Shape dynamic(PrimitiveType::F32, {8, 3});
  dynamic.set_dynamic_dimension(0, true);
  a.weight_operand_shape = dynamic; // not static: through the printer
  const std::vector<std::pair<std::string, std::string>> owns[] = {
      {},
      {{"loom_weight_side", "stale"}},
      {{"_xla_stream", "1"}, {"k", "v \"q\" \\ \n\t\r"}, {"loom_old", "x"}, {"", ""}}};
  for (std::optional<int64_t> channel : {std::optional<int64_t>(), std::optional<int64_t>(-7),
                                         std::optional<int64_t>(INT64_MAX)}) {
    a.channel_id = channel;
    for (const auto &own : owns) {
      llvm::SmallString<512> text;
      EncodeFrontendAttributes(own, a, text);
      EXPECT_EQ(std::string(text.str()), SetFrontendAttributesText(own, a));
    }
  }
  a.replica_groups = {};
  a.dnums = {};
  llvm::SmallString<512> text("stale");
  EncodeFrontendAttributes({}, a, text);
  EXPECT_EQ(std::string(text.str()), SetFrontendAttributesText({}, a));
}

TEST(CollectiveMatmulContract, ArrayShapesAreStatic) {
  EXPECT_EQ(llvm::cantFail(DecodeArrayShape("f32[]")), Shape(PrimitiveType::F32, {}));
  EXPECT_EQ(llvm::cantFail(DecodeArrayShape("s8[3,0,2]")), Shape(PrimitiveType::S8, {3, 0, 2}));
  for (const char *text : {"f32", "f32[<=2]", "f32[?]", "(f32[2])", "token[]", "f32[2,]",
                           "f32[2] ", "q32[2]"})
    EXPECT_FALSE(static_cast<bool>(DecodeArrayShape(text))) << text;
  llvm::consumeError(DecodeArrayShape("f32").takeError());
}

/// The fold of `dot(all-gather(w), x)` over one group of 4, as the pass
/// writes it; `config` replaces its backend_config.
std::string Module(const std::string &config, const std::string &result = "f32[1,8,5]",
                   const std::string &groups = "{{0,1,2,3}}") {
  return "HloModule m, replica_count=4\n"
         "ENTRY e {\n"
         "  w = f32[2,8] parameter(0)\n"
         "  x = f32[8,5] parameter(1)\n"
         "  ROOT cm = " + result + " custom-call(w, x), custom_call_target=\"AwsNeuronCollectiveMatmul\", "
         "frontend_attributes={loom_weight_side=\"lhs\",loom_lhs_batch_dims=\"{}\","
         "loom_rhs_batch_dims=\"{}\",loom_lhs_contracting_dims=\"{2}\",loom_rhs_contracting_dims=\"{0}\","
         "loom_all_gather_dimension=\"1\",loom_replica_groups=\"" + groups + "\","
         "loom_use_global_device_ids=\"false\",loom_local_weight_shape=\"f32[1,2,8]\","
         "loom_gathered_weight_shape=\"f32[1,8,8]\",loom_weight_operand_shape=\"f32[1,8,8]\"}, "
         "backend_config=\"" + config + "\"\n"
         "}\n";
}

std::string VerifyMessage(const std::string &text) {
  auto module = ParseHloModule(text);
  if (!module)
    return "parse: " + llvm::toString(module.takeError());
  const HloInstruction *cm = (*module)->entry_computation()->root_instruction();
  if (llvm::Error e = Verify(*cm))
    return llvm::toString(std::move(e));
  return "ok";
}

constexpr const char kGood[] = "rhs_contracting_dim=0,tp_degree=4,num_groups=1,use_sb_to_sb=0";

TEST(CollectiveMatmulContract, VerifyAcceptsThePassOutput) {
  EXPECT_EQ(VerifyMessage(Module(kGood)), "ok");
}

TEST(CollectiveMatmulContract, VerifyNamesEachDisagreement) {
  EXPECT_EQ(VerifyMessage(Module("rhs_contracting_dim=0,tp_degree=2,num_groups=1,use_sb_to_sb=0")),
            "backend_config says tp_degree=2, num_groups=1 but loom_replica_groups is "
            "{{0,1,2,3}}");
  EXPECT_EQ(VerifyMessage(Module("rhs_contracting_dim=0,tp_degree=4,num_groups=2,use_sb_to_sb=0")),
            "backend_config says tp_degree=4, num_groups=2 but loom_replica_groups is "
            "{{0,1,2,3}}");
  EXPECT_EQ(VerifyMessage(Module("rhs_contracting_dim=1,tp_degree=4,num_groups=1,use_sb_to_sb=0")),
            "backend_config says rhs_contracting_dim=1 but the dot's rhs contracting "
            "dimensions (loom_rhs_contracting_dims) are {0}");
  // Groups of the right sizes that do not name devices 0..3 once.
  EXPECT_EQ(VerifyMessage(Module("rhs_contracting_dim=0,tp_degree=2,num_groups=2,use_sb_to_sb=0",
                                 "f32[1,8,5]", "{{0,1},{1,3}}")),
            "loom_replica_groups {{0,1},{1,3}} must name each of the devices 0..3 once");
  // Groups of 2: the gathered shape records 4 shards.
  EXPECT_EQ(VerifyMessage(Module("rhs_contracting_dim=0,tp_degree=2,num_groups=2,use_sb_to_sb=0",
                                 "f32[1,8,5]", "{{0,1},{2,3}}")),
            "loom_gathered_weight_shape f32[1,8,8] must be loom_local_weight_shape f32[1,2,8] "
            "with dimension 1 multiplied by the group size 2 (tp_degree=2): f32[1,4,8]");
  EXPECT_EQ(VerifyMessage(Module(kGood, "f32[8,5]")),
            "result f32[8,5] is not the recorded dot's f32[1,8,5]");
  EXPECT_EQ(VerifyMessage(Module("tp_degree=4")),
            "backend_config \"tp_degree=4\": expected key 'rhs_contracting_dim=' (the keys are "
            "rhs_contracting_dim, tp_degree, num_groups, use_sb_to_sb, in this order)");
}

TEST(CollectiveMatmulContract, ResolveTakesTheGeometryFromBackendConfig) {
  auto module = llvm::cantFail(ParseHloModule(Module(kGood)));
  HloInstruction *cm = module->entry_computation()->root_instruction();
  Meaning m = llvm::cantFail(Resolve(*cm));
  EXPECT_TRUE(m.from_loom_attributes);
  EXPECT_EQ(m.groups, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}}));
  EXPECT_EQ(m.dnums.rhs_contracting_dimensions, std::vector<int64_t>{0});
  // The kernel's key wins over loom_rhs_contracting_dims (which the verifier
  // checks against it).
  cm->SetAttribute("backend_config",
                   "\"rhs_contracting_dim=1,tp_degree=4,num_groups=1,use_sb_to_sb=0\"");
  m = llvm::cantFail(Resolve(*cm));
  EXPECT_EQ(m.dnums.rhs_contracting_dimensions, std::vector<int64_t>{1});
}

TEST(CollectiveMatmulContract, NaturalFormFollowsFromTheShapes) {
  auto module = llvm::cantFail(ParseHloModule(
      "HloModule m, replica_count=4\n"
      "ENTRY e {\n"
      "  w = bf16[2,3,8] parameter(0)\n"
      "  x = bf16[5,8] parameter(1)\n"
      "  ROOT cm = f32[2,6,5] custom-call(w, x), custom_call_target=\"AwsNeuronCollectiveMatmul\", "
      "backend_config=\"rhs_contracting_dim=1,tp_degree=2,num_groups=2,use_sb_to_sb=0\"\n"
      "}\n"));
  HloInstruction *cm = module->entry_computation()->root_instruction();
  Meaning m = llvm::cantFail(Resolve(*cm));
  EXPECT_FALSE(m.from_loom_attributes);
  EXPECT_EQ(m.weight_side, WeightSide::kLhs);
  EXPECT_EQ(m.local_weight_shape, Shape(PrimitiveType::BF16, {6, 8}));
  EXPECT_EQ(m.gathered_weight_shape, Shape(PrimitiveType::BF16, {12, 8}));
  EXPECT_EQ(m.dot_shape, Shape(PrimitiveType::F32, {12, 5}));
  EXPECT_EQ(m.groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_TRUE(m.use_global_device_ids);
  EXPECT_FALSE(m.channel_id);
  EXPECT_FALSE(static_cast<bool>(Verify(*cm)));
  // 12 x 5 products cannot fill a 24 x 5 result: the message names the fact.
  *cm->mutable_shape() = Shape(PrimitiveType::F32, {24, 5});
  llvm::Error e = Verify(*cm);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e))
                .find("no loom_* frontend attributes, and the kernel's product f32[12,5] does "
                      "not reshape to the result f32[24,5]"),
            std::string::npos);
}

} // namespace
} // namespace loom::hlo
