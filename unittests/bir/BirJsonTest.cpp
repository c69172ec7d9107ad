//===- BirJsonTest.cpp - Loading and saving BIR programs ------------------===//

#include "BirTestModules.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/json/JsonDocument.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

using namespace loom::bir;
using namespace loom::bir::test;

namespace {

// The JSON form of buildSmallModule(), written the way people write it:
// defaults left out.
const char SmallDoc[] = R"({"version": 1, "modules": [{
  "name": "m", "neuron_core_id": 0, "subgraph_id": 0,
  "pass_options": {"lnc_size": 2, "target": "trn2"},
  "memory_locations": [
    {"name": "a", "tensor_id": 0, "kind": "SB", "dtype": "fp32", "partitions": 128, "bytes_per_partition": 1024},
    {"name": "b", "tensor_id": 1, "kind": "SB", "dtype": "fp32", "partitions": 128, "bytes_per_partition": 1024}],
  "blocks": [
    {"name": "entry", "successors": ["exit"], "instructions": [
      {"name": "copy", "type": "TensorCopy", "engine": "DVE",
       "inputs": [{"memloc": "a", "partitions": 128, "pattern": [[1, 256]]}],
       "outputs": [{"memloc": "b", "partitions": 128, "pattern": [[1, 256]]}]},
      {"name": "double", "type": "TensorTensor", "engine": "DVE", "op": "Add",
       "inputs": [{"memloc": "b", "partitions": 128, "pattern": [[1, 256]]},
                  {"memloc": "b", "partitions": 128, "pattern": [[1, 256]]}],
       "outputs": [{"memloc": "a", "partitions": 128, "pattern": [[1, 256]]}],
       "deps": ["copy"]},
      {"name": "jump", "type": "Branch", "engine": "SP", "kind": "Jump"}]},
    {"name": "exit", "instructions": [
      {"name": "cb", "type": "CoreBarrier", "engine": "POOL", "id": 0, "cores": [0, 1], "deps": ["double"]},
      {"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})";

std::string compact(const Module &M) {
  return llvm::formatv("{0}", moduleToJson(M)).str();
}

std::string replaceOnce(std::string Text, const std::string &From,
                        const std::string &To) {
  size_t At = Text.find(From);
  EXPECT_NE(At, std::string::npos) << From;
  return At == std::string::npos ? Text : Text.replace(At, From.size(), To);
}

std::string loadError(const std::string &Text) {
  return errorText(parseProgram(Text, "doc.json").takeError());
}

TEST(BirJson, LoadsWhatTheBuilderBuilds) {
  llvm::Expected<Program> P = parseProgram(SmallDoc, "doc.json");
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  Program Built;
  Built.push_back(buildSmallModule().M);
  EXPECT_EQ(formatProgram(*P), formatProgram(Built));
}

TEST(BirJson, SecondSaveIsIdentical) {
  llvm::Expected<Program> P = parseProgram(SmallDoc, "doc.json");
  ASSERT_TRUE(bool(P));
  std::string First = formatProgram(*P);
  llvm::Expected<Program> Again = parseProgram(First, "first.json");
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  EXPECT_EQ(formatProgram(*Again), First);
}

TEST(BirJson, EveryAttributeSurvives) {
  SmallModule S = buildSmallModule();
  Module &M = *S.M;
  MemoryLocation *P =
      addLocation(M, "p", 9, MemoryKind::PSUM, DataType::FP32, 128, 2048);
  MemoryLocation *D =
      addLocation(M, "d", 3, MemoryKind::SharedDRAM, DataType::BF16, 4, 64);
  D->setIsWrittenByAnotherCore(true);
  D->setIsAllocated(true);
  auto Add = [&](std::unique_ptr<Instruction> I) {
    return S.Entry->insert(S.Entry->getFirstTerminator(), std::move(I));
  };
  Add(std::make_unique<InstMatmul>("mm", Engine::PE, true))
      ->addDependency(S.Copy);
  Add(std::make_unique<InstActivation>("act", Engine::ACT, ActivationFunc::Tanh,
                                       0.1));
  Add(std::make_unique<InstMemset>("ms", Engine::POOL, -2.5));
  Add(std::make_unique<InstDMACopy>("dma", Engine::DMALast, true));
  Add(std::make_unique<InstGPSIMDSB2SB>("sb2sb", Engine::POOL, true));
  Add(std::make_unique<InstCollectiveCompute>(
      "cc", Engine::SP, CollectiveKind::PermuteReduceImplicit,
      std::vector<unsigned>{3, 1}, ReduceOp::Min, false));
  Add(std::make_unique<InstTensorCompletion>("tc", Engine::SP))
      ->addInput(AccessPattern(D, 1, 3, 2, {{-1, 2}, {4, 3}}, DataType::BF16));
  Add(std::make_unique<InstTensorTensor>("cmp", Engine::POOL,
                                         ArithOp::GreaterEqual));
  Add(std::make_unique<InstActivation>("lnot", Engine::ACT,
                                       ActivationFunc::LogicalNot, 1));
  Add(std::make_unique<InstMemset>("ninf", Engine::POOL, -HUGE_VAL));
  Add(std::make_unique<InstSelect>("sel", Engine::DVE));
  Add(std::make_unique<InstTensorConvert>("cvt", Engine::POOL));
  Add(std::make_unique<InstTensorReduce>("red", Engine::POOL, ArithOp::Or,
                                         true, NAN));
  Add(std::make_unique<InstIota>("iota", Engine::POOL, -9, 128,
                                 std::vector<int64_t>{0, 1, 4}));
  D->setInitialData({0, 1, 2, 250, 251, 252, 253, 254, 255});
  S.Entry->getFirstTerminator()->get()->addInput(
      AccessPattern(P, 0, 1, 0, {}, DataType::FP32));
  // The module need not verify: the JSON form carries whatever the IR holds.
  std::string Compact =
      compact(*llvm::cantFail(moduleFromJson(moduleToJson(M), "$")));
  EXPECT_EQ(Compact, compact(M));
  for (const char *Needle :
       {"\"accumulate\":true", "\"func\":\"Tanh\"",
        "\"scale\":0.10000000000000001", "\"value\":-2.5",
        "\"engine\":\"DMA15\"", "\"lowered\":true",
        "\"kind\":\"PermuteReduceImplicit\"", "\"group\":[3,1]",
        "\"reduce\":\"Min\"", "\"local\":false", "\"kind\":\"SharedDRAM\"",
        "\"written_by_another_core\":true", "\"allocated\":true",
        "\"pattern\":[[-1,2],[4,3]]", "\"pattern\":[]", "\"opcode\":94",
        "\"op\":\"GreaterEqual\"", "\"func\":\"LogicalNot\"",
        "\"value\":\"-inf\"", "\"type\":\"Select\"", "\"opcode\":208",
        "\"opcode\":209", "\"opcode\":210", "\"opcode\":211",
        "\"op\":\"Or\"", "\"init\":\"nan\"", "\"multipliers\":[0,1,4]",
        "\"partition_step\":128", "\"start\":-9",
        "\"initial_data\":\"AAEC+vv8/f7/\""})
    EXPECT_NE(Compact.find(Needle), std::string::npos) << Needle;
}

TEST(BirJson, InitialDataRoundTripsByteForByte) {
  // Every byte value, in lengths that leave 0, 1 and 2 bytes over a group
  // of three (the padding cases of base64).
  for (uint64_t Bytes : {255u, 256u, 257u}) {
    Program P;
    P.push_back(returnOnlyModule(TargetOptions{1, Target::Trn2}));
    MemoryLocation *L = addLocation(*P[0], "c", 0, MemoryKind::DRAM,
                                    DataType::UINT8, 1, Bytes);
    std::vector<uint8_t> Data(Bytes);
    for (uint64_t I = 0; I < Bytes; ++I)
      Data[I] = uint8_t(255 - I);
    L->setInitialData(Data);
    std::string Text = formatProgram(P);
    llvm::Expected<Program> Loaded = parseProgram(Text, "doc.json");
    ASSERT_TRUE(bool(Loaded)) << llvm::toString(Loaded.takeError());
    const MemoryLocation *Back =
        (*Loaded)[0]->getMemoryLocations().getMemlocByName("c");
    EXPECT_EQ(std::vector<uint8_t>(Back->getInitialData().begin(),
                                   Back->getInitialData().end()),
              Data);
    EXPECT_EQ(formatProgram(*Loaded), Text);
  }
  // A location without initial data has no field.
  EXPECT_EQ(formatProgram(llvm::cantFail(parseProgram(SmallDoc, "doc.json")))
                .find("initial_data"),
            std::string::npos);
}

TEST(BirJson, NewFieldsAreChecked) {
  std::string WithData = replaceOnce(
      SmallDoc, "\"kind\": \"SB\", \"dtype\": \"fp32\"",
      "\"kind\": \"SB\", \"initial_data\": \"AAAA\", \"dtype\": \"fp32\"");
  EXPECT_EQ(loadError(WithData),
            "doc.json: $.modules[0].memory_locations[0].initial_data: only a "
            "DRAM or SharedDRAM location of its own has initial data; 'a' is "
            "in SB");
  EXPECT_EQ(loadError(replaceOnce(WithData, "AAAA", "AAA")),
            "doc.json: $.modules[0].memory_locations[0].initial_data: not "
            "base64: the length 3 is not a multiple of 4 (at character 3)");
  EXPECT_EQ(loadError(replaceOnce(WithData, "AAAA", "AA*A")),
            "doc.json: $.modules[0].memory_locations[0].initial_data: not "
            "base64: '*' is not a base64 character (at character 2)");
  EXPECT_EQ(loadError(replaceOnce(WithData, "AAAA", "AB==")),
            "doc.json: $.modules[0].memory_locations[0].initial_data: not "
            "base64: non-zero padding bits (not canonical base64) (at "
            "character 1)");
  EXPECT_EQ(loadError(replaceOnce(WithData, "\"AAAA\"", "\"\"")),
            "doc.json: $.modules[0].memory_locations[0].initial_data: empty "
            "initial data; leave the field out instead");
  EXPECT_EQ(loadError(replaceOnce(WithData, "\"AAAA\"", "7")),
            "doc.json: $.modules[0].memory_locations[0].initial_data: expected "
            "a string");
  std::string Reduce = replaceOnce(
      SmallDoc, "\"type\": \"TensorCopy\", \"engine\": \"DVE\"",
      "\"type\": \"TensorReduce\", \"engine\": \"DVE\", \"op\": \"Max\", "
      "\"init\": \"-inf\"");
  llvm::Expected<Program> R = parseProgram(Reduce, "doc.json");
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  const auto *TR = llvm::cast<InstTensorReduce>(
      (*R)[0]->getBlock(0)->begin()->get());
  EXPECT_EQ(TR->getOp(), ArithOp::Max);
  EXPECT_FALSE(TR->isAccumulate());
  EXPECT_EQ(TR->getInit(), -HUGE_VAL);
  EXPECT_EQ(loadError(replaceOnce(Reduce, "\"-inf\"", "\"minus\"")),
            "doc.json: $.modules[0].blocks[0].instructions[0].init: expected a "
            "number, \"inf\", \"-inf\" or \"nan\"");
  EXPECT_EQ(loadError(replaceOnce(Reduce, "\"op\": \"Max\", ", "")),
            "doc.json: $.modules[0].blocks[0].instructions[0]: missing field "
            "'op'");
  std::string Iota = replaceOnce(
      SmallDoc,
      "\"type\": \"TensorCopy\", \"engine\": \"DVE\",\n       \"inputs\": "
      "[{\"memloc\": \"a\", \"partitions\": 128, \"pattern\": [[1, 256]]}],",
      "\"type\": \"Iota\", \"engine\": \"POOL\", \"multipliers\": [1.5],");
  EXPECT_EQ(loadError(Iota),
            "doc.json: $.modules[0].blocks[0].instructions[0].multipliers[0]: "
            "expected a 64-bit signed integer");
  llvm::Expected<Program> I =
      parseProgram(replaceOnce(Iota, "[1.5]", "[2]"), "doc.json");
  ASSERT_TRUE(bool(I)) << llvm::toString(I.takeError());
  const auto *IO = llvm::cast<InstIota>((*I)[0]->getBlock(0)->begin()->get());
  EXPECT_EQ(IO->getStart(), 0);
  EXPECT_EQ(IO->getPartitionStep(), 0);
  EXPECT_EQ(IO->getMultipliers().vec(), std::vector<int64_t>{2});
}

TEST(BirJson, LoadOptionsApplyBeforeVerification) {
  // lnc_size 1 would put the barrier's core 1 outside the logical core.
  std::string Lnc1 =
      replaceOnce(SmallDoc, "\"lnc_size\": 2", "\"lnc_size\": 1");
  EXPECT_EQ(loadError(Lnc1), "doc.json: $.modules[0].blocks[1].instructions[0]."
                             "cores[1]: core 1 is outside the logical core "
                             "(lnc_size 1)");
  LoadOptions Opts;
  Opts.LncSize = 2;
  llvm::Expected<Program> P = parseProgram(Lnc1, "doc.json", Opts);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ((*P)[0]->getTargetOptions().LncSize, 2u);
  Opts.Arch = Target::Trn1;
  EXPECT_EQ(errorText(parseProgram(SmallDoc, "doc.json", Opts).takeError()),
            "doc.json: $.modules[0].pass_options.lnc_size: lnc_size 2 is not "
            "supported by trn1 (1 to 1)");
}

TEST(BirJson, SyntaxErrorsAreLocated) {
  EXPECT_EQ(loadError(""), "doc.json: empty document");
  EXPECT_EQ(loadError(" \n "), "doc.json: empty document");
  EXPECT_EQ(loadError("{\"version\": 1,\n  \"modules\": [}"),
            "doc.json:2:16: not valid JSON: Invalid JSON value");
  EXPECT_EQ(loadError("[]"), "doc.json: $: expected an object");
}

struct Malformed {
  const char *From;
  const char *To;
  const char *Error;
};

class BirJsonMalformed : public testing::TestWithParam<Malformed> {};

TEST_P(BirJsonMalformed, IsRefusedWithItsPath) {
  const Malformed &M = GetParam();
  EXPECT_EQ(loadError(replaceOnce(SmallDoc, M.From, M.To)),
            std::string("doc.json: ") + M.Error);
}

const Malformed MalformedCases[] = {
    {"\"version\": 1", "\"version\": 2",
     "$.version: version 2 is not 1, the one loom reads"},
    {"\"version\": 1, ", "", "$: missing field 'version'"},
    {"\"successors\": [\"exit\"]", "\"successors\": \"exit\"",
     "$.modules[0].blocks[0].successors: expected an array"},
    {"\"neuron_core_id\": 0", "\"neuron_core_id\": -1",
     "$.modules[0].neuron_core_id: expected an integer from 0 to 4294967295"},
    {"\"target\": \"trn2\"", "\"target\": \"trn3\"",
     "$.modules[0].pass_options.target: unknown value 'trn3'; expected one of "
     "trn1, trn2, generic"},
    {"\"partitions\": 128, \"bytes_per_partition\": 1024}]",
     "\"partitions\": 129, \"bytes_per_partition\": 1024}]",
     "$.modules[0].memory_locations[1].partitions: SB location 'b' has 129 "
     "partitions; SB has 128"},
    {"\"tensor_id\": 1", "\"tensor_id\": 0",
     "$.modules[0].memory_locations[1]: tensor id 0 of 'b' is already used by "
     "'a'"},
    {"\"kind\": \"SB\"", "\"kind\": \"SBUF\"",
     "$.modules[0].memory_locations[0].kind: unknown value 'SBUF'; expected "
     "one of SB, PSUM, DRAM, SharedDRAM"},
    {"\"dtype\": \"fp32\"", "\"dtype\": 4",
     "$.modules[0].memory_locations[0].dtype: expected a string"},
    {"\"successors\": [\"exit\"]", "\"successors\": [\"exlt\"]",
     "$.modules[0].blocks[0].successors[0]: no block named 'exlt' in this "
     "module"},
    {"{\"name\": \"exit\"", "{\"name\": \"entry\"",
     "$.modules[0].blocks[1].name: duplicate block name 'entry'"},
    {"\"type\": \"TensorCopy\"", "\"type\": \"Copy\"",
     "$.modules[0].blocks[0].instructions[0].type: unknown instruction type "
     "'Copy'; expected one of GPSIMDSB2SB, CollectiveCompute, CoreBarrier, "
     "TensorCompletion, Matmul, Activation, TensorTensor, TensorCopy, Memset, "
     "DMACopy, Branch, SemaphoreWait, Select, TensorReduce, Iota, "
     "TensorConvert, IndirectDMACopy"},
    {"\"engine\": \"DVE\"", "\"engine\": \"DVE\", \"opcode\": 33",
     "$.modules[0].blocks[0].instructions[0].opcode: opcode 33 is not "
     "TensorCopy's (203)"},
    {"\"engine\": \"DVE\"", "\"engine\": \"DVE\", \"op\": \"Add\"",
     "$.modules[0].blocks[0].instructions[0].op: unknown field; expected one "
     "of "
     "name, type, opcode, engine, inputs, outputs, deps"},
    {"{\"memloc\": \"a\"", "{\"memloc\": \"c\"",
     "$.modules[0].blocks[0].instructions[0].inputs[0].memloc: no memory "
     "location named 'c' in this module"},
    {"\"pattern\": [[1, 256]]", "\"pattern\": [[1, 256, 1]]",
     "$.modules[0].blocks[0].instructions[0].inputs[0].pattern[0]: expected a "
     "[step, count] pair"},
    {"\"pattern\": [[1, 256]]", "\"pattern\": [[1.5, 256]]",
     "$.modules[0].blocks[0].instructions[0].inputs[0].pattern[0][0]: expected "
     "a 64-bit signed integer"},
    {"\"pattern\": [[1, 256]]", "\"pattern\": [[1, 256]], \"offset\": 8",
     "$.modules[0].blocks[0].instructions[0].inputs[0]: bytes [8, 1032) are "
     "outside the 1024 bytes per partition of 'a'"},
    {"\"deps\": [\"copy\"]", "\"deps\": [\"cb\"]",
     "$.modules[0].blocks[0].instructions[1].deps: dependency cycle: 'double' "
     "-> 'cb' -> 'double'"},
    {"\"deps\": [\"copy\"]", "\"deps\": [\"copy\", \"copy\"]",
     "$.modules[0].blocks[0].instructions[1].deps[1]: 'copy' is listed twice"},
    {"\"deps\": [\"double\"]", "\"deps\": [\"dub\"]",
     "$.modules[0].blocks[1].instructions[0].deps[0]: no instruction named "
     "'dub' in this module"},
    {"\"name\": \"cb\"", "\"name\": \"copy\"",
     "$.modules[0].blocks[1].instructions[0].name: duplicate instruction name "
     "'copy'"},
    {"\"cores\": [0, 1]", "\"cores\": [0, 2]",
     "$.modules[0].blocks[1].instructions[0].cores[1]: core 2 is outside the "
     "logical core (lnc_size 2)"},
    {"\"kind\": \"Return\"", "\"kind\": \"Return\", \"trip_count\": 2",
     "$.modules[0].blocks[1].instructions[1].trip_count: only a Loop has a "
     "trip count"},
    {"\"kind\": \"Jump\"", "\"kind\": \"Loop\"",
     "$.modules[0].blocks[0].instructions[2]: missing field 'trip_count'"},
    {"\"op\": \"Add\"", "\"op\": true",
     "$.modules[0].blocks[0].instructions[1].op: expected a string"},
};

INSTANTIATE_TEST_SUITE_P(Cases, BirJsonMalformed,
                         testing::ValuesIn(MalformedCases));

/// Calls F with a copy of Root in which the value at each position in turn
/// is replaced by Replacement.
void forEachReplacement(const llvm::json::Value &Root,
                        const llvm::json::Value &Replacement,
                        llvm::function_ref<void(const llvm::json::Value &)> F) {
  // Positions are numbered in a preorder walk; the walk of a copy finds the
  // same numbering.
  std::function<bool(llvm::json::Value &, unsigned &, unsigned)> Replace =
      [&](llvm::json::Value &V, unsigned &Counter, unsigned Target) {
        if (Counter++ == Target) {
          V = Replacement;
          return true;
        }
        if (auto *O = V.getAsObject())
          for (auto &KV : *O)
            if (Replace(KV.second, Counter, Target))
              return true;
        if (auto *A = V.getAsArray())
          for (auto &E : *A)
            if (Replace(E, Counter, Target))
              return true;
        return false;
      };
  for (unsigned Target = 0;; ++Target) {
    llvm::json::Value Copy = Root;
    unsigned Counter = 0;
    if (!Replace(Copy, Counter, Target))
      return;
    F(Copy);
  }
}

// Loading is validation: any value of any type anywhere gives a program or
// an error, never a crash.
TEST(BirJson, NoReplacedValueCrashes) {
  llvm::json::Value Root = llvm::cantFail(llvm::json::parse(SmallDoc));
  const llvm::json::Value Replacements[] = {nullptr,
                                            true,
                                            "x",
                                            -1,
                                            0,
                                            4294967296LL,
                                            1.5,
                                            llvm::json::Array{},
                                            llvm::json::Object{}};
  unsigned Refused = 0;
  for (const llvm::json::Value &R : Replacements)
    forEachReplacement(Root, R, [&](const llvm::json::Value &Doc) {
      std::string Text = llvm::formatv("{0}", Doc).str();
      llvm::Expected<Program> P = parseProgram(Text, "doc.json");
      if (!P) {
        ++Refused;
        EXPECT_EQ(llvm::toString(P.takeError()).rfind("doc.json: $", 0), 0u);
      }
    });
  EXPECT_GT(Refused, 500u);
}

TEST(BirJson, NoTruncationCrashes) {
  std::string Doc = SmallDoc;
  for (size_t Len = 0; Len < Doc.size(); ++Len)
    EXPECT_FALSE(bool(parseProgram(Doc.substr(0, Len), "doc.json")))
        << "prefix of " << Len << " bytes";
}

// --- The parser against llvm::json::parse, which loading used before. ---

// Each parser's result as text: "ok" and a dump of the value (kinds,
// strings, numbers through every getter), or "error at <byte>: <message>".

std::string describeNumber(std::optional<uint64_t> U, std::optional<int64_t> I,
                           std::optional<double> D) {
  std::string S = "n(";
  S += U ? std::to_string(*U) : "-";
  S += ",";
  S += I ? std::to_string(*I) : "-";
  S += ",";
  S += D ? llvm::formatv("{0:e}", *D).str() : "-";
  return S + ")";
}

std::string describe(JsonRef V) {
  if (V.isNull())
    return "null";
  if (std::optional<bool> B = V.getAsBoolean())
    return *B ? "true" : "false";
  if (std::optional<llvm::StringRef> S = V.getAsString())
    return "s\"" + llvm::utohexstr(S->size()) + ":" + S->str() + "\"";
  if (V.isArray()) {
    std::string Out = "[";
    for (JsonRef E = V.firstElement(); E; E = E.next())
      Out += describe(E) + ",";
    return Out + "]";
  }
  if (V.isObject()) {
    // Sorted, the last of a repeated key, as an llvm::json::Object holds it.
    std::map<std::string, std::string> Members;
    size_t Count = 0;
    V.forEachMember([&](llvm::StringRef K, JsonRef M) {
      Members[K.str()] = describe(M);
      ++Count;
    });
    EXPECT_EQ(V.size(), Count);
    std::string Out = "{";
    for (auto &[K, M] : Members) {
      EXPECT_EQ(describe(V.get(K)), M) << K;
      Out += K + ":" + M + ",";
    }
    return Out + "}";
  }
  return describeNumber(V.getAsUINT64(), V.getAsInteger(), V.getAsNumber());
}

std::string describe(const llvm::json::Value &V) {
  if (V.getAsNull())
    return "null";
  if (auto B = V.getAsBoolean())
    return *B ? "true" : "false";
  if (auto S = V.getAsString())
    return "s\"" + llvm::utohexstr(S->size()) + ":" + S->str() + "\"";
  if (const llvm::json::Array *A = V.getAsArray()) {
    std::string Out = "[";
    for (const llvm::json::Value &E : *A)
      Out += describe(E) + ",";
    return Out + "]";
  }
  if (const llvm::json::Object *O = V.getAsObject()) {
    std::map<std::string, std::string> Members;
    for (const auto &KV : *O)
      Members[KV.first.str()] = describe(KV.second);
    std::string Out = "{";
    for (auto &[K, M] : Members)
      Out += K + ":" + M + ",";
    return Out + "}";
  }
  auto U = V.getAsUINT64();
  auto I = V.getAsInteger();
  auto D = V.getAsNumber();
  return describeNumber(U ? std::optional<uint64_t>(*U) : std::nullopt,
                        I ? std::optional<int64_t>(*I) : std::nullopt,
                        D ? std::optional<double>(*D) : std::nullopt);
}

std::string parseWithLoom(llvm::StringRef Text) {
  JsonDocument Doc;
  if (std::optional<JsonDocument::SyntaxError> E = Doc.parse(Text))
    return "error at " + std::to_string(E->Offset) + ": " + E->Message;
  return "ok " + describe(Doc.root());
}

std::string parseWithLLVM(llvm::StringRef Text) {
  llvm::Expected<llvm::json::Value> V = llvm::json::parse(Text);
  if (V)
    return "ok " + describe(*V);
  // "[line:column, byte=N]: message"
  llvm::StringRef Report;
  std::string Msg = llvm::toString(V.takeError());
  Report = Msg;
  Report = Report.drop_until([](char C) { return C == '='; }).drop_front();
  size_t Offset = 0;
  Report.consumeInteger(10, Offset);
  Report.consume_front("]: ");
  return "error at " + std::to_string(Offset) + ": " + Report.str();
}

TEST(JsonDocument, AgreesWithLLVMJsonOnCraftedTexts) {
  const char *Texts[] = {
      "",
      " ",
      "1",
      "-",
      "+5",
      "-0",
      "007",
      "1.5",
      "1.",
      ".5",
      "1e5",
      "1E+2",
      "1e",
      "1-2",
      "1.5.5",
      "e",
      "--1",
      "9223372036854775807",
      "-9223372036854775808",
      "-9223372036854775809",
      "1e400",
      "-1e400",
      "123456789012345678",
      "1234567890123456789",
      "3.0",
      "-3.0",
      "null",
      "nul",
      "nulx",
      "n",
      "true",
      "tru",
      "t",
      "false",
      "fals",
      "f",
      "\"abc\"",
      "\"abc",
      "\"ab\\",
      "\"a\\\"b\"",
      "\"a\\\\b\"",
      "\"\\/\"",
      "\"\\b\\f\\n\\r\\t\"",
      "\"\\x\"",
      "\"\\u0041\"",
      "\"\\u00e9\"",
      "\"\\u20AC\"",
      "\"\\uD83D\\uDE00\"",
      "\"\\uD83D\"",
      "\"\\uD83Dx\"",
      "\"\\uD83D\\u0041\"",
      "\"\\uDE00\"",
      "\"\\uD83D\\uD83D\\uDE00\"",
      "\"\\u12\"",
      "\"\\u12G4\"",
      "\"\\u\"",
      "\"a\tb\"",
      "\"a\nb\"",
      "\"\x7f\"",
      "\"\xc3\xa9\"",
      "\"\xc3\"",
      "\"\xff\"",
      "[\xe2\x82]",
      "[]",
      "[ ]",
      "[1,]",
      "[,1]",
      "[1 2]",
      "[1,2",
      "[",
      "]",
      "[[[]]]",
      "[[[]]",
      "{}",
      "{ }",
      "{\"a\":1}",
      "{\"a\" 1}",
      "{\"a\":}",
      "{\"a\"}",
      "{a:1}",
      "{\"a\":1,}",
      "{\"a\":1 \"b\":2}",
      "{\"a\":1,\"a\":2}",
      "{\"a\":1,\"b\":{\"a\":[1,{\"c\":null}]},\"a\":[3]}",
      "{",
      "}",
      "{\"a\":1",
      "1 2",
      "[] x",
      "\t\r\n [ \t\r\n 1 \t\r\n ] \t\r\n ",
      "{\"\":0}",
      "{\"k\\u0000\":1}",
      "\"\\u0000\"",
      "[true,false,null]",
      "[1e5,-2,3.25,\"x\",{},[]]",
      "\"\x01\"",
      "\x01",
      "[\"a\",\x01]",
  };
  for (const char *T : Texts)
    EXPECT_EQ(parseWithLoom(T), parseWithLLVM(T)) << T;
  // The one difference: LLVM 14 clamps an integer beyond int64_t to its
  // range, so a uint64_t field saved as 2^63 loaded as 2^63 - 1. Such an
  // integer is read exactly up to 2^64 - 1 and is a double otherwise.
  EXPECT_EQ(parseWithLLVM("9223372036854775808"),
            "ok n(9223372036854775807,9223372036854775807,9.223372e+18)");
  EXPECT_EQ(parseWithLoom("9223372036854775808"),
            "ok n(9223372036854775808,-,9.223372e+18)");
  EXPECT_EQ(parseWithLoom("18446744073709551615"),
            "ok n(18446744073709551615,-,1.844674e+19)");
  EXPECT_EQ(parseWithLoom("18446744073709551616"), "ok n(-,-,1.844674e+19)");
  EXPECT_EQ(parseWithLLVM("-99999999999999999999"),
            "ok n(-,-9223372036854775808,-9.223372e+18)");
  EXPECT_EQ(parseWithLoom("-99999999999999999999"), "ok n(-,-,-1.000000e+20)");
}

// Every prefix of a document and every document with one byte replaced
// parse the same, or fail at the same byte with the same message.
TEST(JsonDocument, AgreesWithLLVMJsonOnDamagedDocuments) {
  std::string Doc = SmallDoc;
  Doc += " ";
  for (size_t Len = 0; Len <= Doc.size(); ++Len)
    EXPECT_EQ(parseWithLoom(Doc.substr(0, Len)),
              parseWithLLVM(Doc.substr(0, Len)))
        << Len;
  const char Bytes[] = {'"',  '\\',   '[',    ']', '{', '}', ',',
                        ':',  '1',    '-',    '.', 'e', 'n', ' ',
                        '\n', '\x01', '\xff', 'u', 'x'};
  std::mt19937 Rng(7);
  for (unsigned Trial = 0; Trial < 3000; ++Trial) {
    std::string D = Doc;
    D[Rng() % D.size()] = Bytes[Rng() % sizeof(Bytes)];
    if (Trial % 3 == 0)
      D[Rng() % D.size()] = Bytes[Rng() % sizeof(Bytes)];
    EXPECT_EQ(parseWithLoom(D), parseWithLLVM(D)) << D;
  }
}

TEST(JsonDocument, NestingUsesNoStack) {
  // Far deeper than a recursive parser survives; the loader refuses such a
  // document earlier (256 levels), the parser itself needs no limit.
  std::string Deep = std::string(1000000, '[') + std::string(1000000, ']');
  JsonDocument Doc;
  EXPECT_FALSE(Doc.parse(Deep).has_value());
  EXPECT_TRUE(Doc.root().firstElement().isArray());
  std::string Unclosed = std::string(1000000, '[');
  std::optional<JsonDocument::SyntaxError> E = Doc.parse(Unclosed);
  ASSERT_TRUE(E.has_value());
  EXPECT_EQ(E->Offset, 1000000u);
  EXPECT_EQ(E->Message, "Unexpected EOF");
}

// --- The writer against a plain implementation of the saved layout. ---

/// The saved layout written the obvious way, from an llvm::json tree: a
/// value goes on one line if its compact form fits from its column to
/// column 120, else one member per line.
void printReference(llvm::raw_ostream &OS, const llvm::json::Value &V,
                    unsigned Indent, size_t Column) {
  std::string Compact = llvm::formatv("{0}", V).str();
  const llvm::json::Object *O = V.getAsObject();
  const llvm::json::Array *A = V.getAsArray();
  if ((!O && !A) || Column + Compact.size() <= 120) {
    OS << Compact;
    return;
  }
  unsigned Inner = Indent + 2;
  if (A) {
    OS << "[\n";
    for (size_t I = 0; I < A->size(); ++I) {
      OS.indent(Inner);
      printReference(OS, (*A)[I], Inner, Inner);
      OS << (I + 1 < A->size() ? ",\n" : "\n");
    }
    OS.indent(Indent) << ']';
    return;
  }
  std::vector<std::string> Keys;
  for (const auto &KV : *O)
    Keys.push_back(KV.first.str());
  llvm::sort(Keys);
  OS << "{\n";
  for (size_t I = 0; I < Keys.size(); ++I) {
    std::string Key = llvm::formatv("{0}", llvm::json::Value(Keys[I])).str();
    OS.indent(Inner) << Key << ": ";
    printReference(OS, *O->get(Keys[I]), Inner, Inner + Key.size() + 2);
    OS << (I + 1 < Keys.size() ? ",\n" : "\n");
  }
  OS.indent(Indent) << '}';
}

/// The small module with one instruction of every opcode and every
/// optional field set, and names of NameLength characters.
Program everyOpcode(size_t NameLength) {
  SmallModule S = buildSmallModule();
  Module &M = *S.M;
  std::string Long(NameLength, 'n');
  MemoryLocation *D = addLocation(M, "d" + Long, 3, MemoryKind::SharedDRAM,
                                  DataType::BF16, 4, 64);
  D->setIsWrittenByAnotherCore(true);
  D->setIsAllocated(true);
  addLocation(M, "r", 4, MemoryKind::SB, DataType::FP32, 128, 1024)
      ->setRemote(1, "a");
  auto Add = [&](std::unique_ptr<Instruction> I) {
    return S.Entry->insert(S.Entry->getFirstTerminator(), std::move(I));
  };
  Add(std::make_unique<InstMatmul>("mm" + Long, Engine::PE, true))
      ->addDependency(S.Copy);
  Add(std::make_unique<InstActivation>("act", Engine::ACT, ActivationFunc::Exp,
                                       0.1));
  Add(std::make_unique<InstMemset>("ms", Engine::POOL, -2.5));
  auto *Dma = static_cast<InstDMACopy *>(
      Add(std::make_unique<InstDMACopy>("dma", Engine::DMALast, true)));
  Dma->setSignal(1, "sem" + Long);
  Dma->addInput(
      AccessPattern(D, 1, 3, 2, {{-1, 2}, {4, 3}, {1, 1}}, DataType::BF16));
  Dma->addOutput(AccessPattern(D, 0, 4, 0,
                               std::vector<PatternDim>(NameLength % 9, {1, 2}),
                               DataType::BF16));
  Add(std::make_unique<InstGPSIMDSB2SB>("sb2sb", Engine::POOL, true));
  Add(std::make_unique<InstCollectiveCompute>(
      "cc", Engine::SP, CollectiveKind::AllGather,
      std::vector<unsigned>{3, 1, 0, 2}, ReduceOp::Max, true));
  auto *TC = static_cast<InstTensorCompletion *>(
      Add(std::make_unique<InstTensorCompletion>("tc", Engine::SP)));
  TC->addWait({1, "copy" + Long});
  TC->addWait({0, "q\"\\\t\n\x01\xc3\xa9"});
  Add(std::make_unique<InstSemaphoreWait>("sw", Engine::POOL, "sem" + Long, 3));
  Add(std::make_unique<InstTensorTensor>("tt", Engine::DVE, ArithOp::Min));
  Add(std::make_unique<InstSelect>("sel", Engine::POOL));
  Add(std::make_unique<InstTensorConvert>("cvt", Engine::ACT));
  Add(std::make_unique<InstTensorReduce>("red", Engine::DVE, ArithOp::Max,
                                         false, -HUGE_VAL));
  Add(std::make_unique<InstIota>("iota", Engine::POOL, -3, 7,
                                 std::vector<int64_t>{1, -2}));
  std::vector<uint8_t> Bytes(4 * 64);
  for (size_t I = 0; I < Bytes.size(); ++I)
    Bytes[I] = uint8_t(I * 37 + NameLength);
  D->setInitialData(Bytes);
  Program P;
  P.push_back(std::move(S.M));
  P.push_back(returnOnlyModule(TargetOptions{2, Target::Trn2}, 1));
  return P;
}

TEST(BirJsonWriter, MatchesTheReferenceLayout) {
  // Name lengths move every line across column 120 somewhere.
  for (size_t Length = 0; Length < 140; Length += 3) {
    Program P = everyOpcode(Length);
    std::string Expected;
    llvm::raw_string_ostream OS(Expected);
    printReference(OS, programToJson(P), 0, 0);
    OS << '\n';
    ASSERT_EQ(formatProgram(P), OS.str()) << "names of " << Length;
  }
}

TEST(BirJsonWriter, CompactModuleIsLLVMsCompactForm) {
  Program P = everyOpcode(10);
  EXPECT_EQ(formatModule(*P[0]), compact(*P[0]));
}

// The saved form has each object's keys sorted; the writer emits them in
// that order without sorting, so every field of every opcode is checked.
TEST(BirJsonWriter, KeysAreSorted) {
  std::string Text = formatModule(*everyOpcode(1)[0]);
  JsonDocument Doc;
  ASSERT_FALSE(Doc.parse(Text).has_value());
  unsigned Objects = 0;
  std::function<void(JsonRef)> Check = [&](JsonRef V) {
    if (V.isObject()) {
      ++Objects;
      std::optional<std::string> Last;
      V.forEachMember([&](llvm::StringRef K, JsonRef M) {
        if (Last) {
          EXPECT_LT(*Last, K.str());
        }
        Last = K.str();
        Check(M);
      });
    }
    for (JsonRef E = V.isArray() ? V.firstElement() : JsonRef(); E;
         E = E.next())
      Check(E);
  };
  Check(Doc.root());
  EXPECT_GT(Objects, 30u);
}

TEST(BirJsonWriter, EscapedNamesSurviveSavingAndLoading) {
  Program P;
  P.push_back(returnOnlyModule(TargetOptions{1, Target::Trn2}));
  P[0]->getBlock(0)->begin()->get()->setName("r\"\\/\t\n\r\x01\x1f\xc3\xa9");
  std::string First = formatProgram(P);
  EXPECT_NE(First.find(R"("r\"\\/\t\n\r\u0001\u001fé")"), std::string::npos)
      << First;
  llvm::Expected<Program> Again = parseProgram(First, "doc.json");
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  EXPECT_EQ((*Again)[0]->getBlock(0)->begin()->get()->getName(),
            "r\"\\/\t\n\r\x01\x1f\xc3\xa9");
  EXPECT_EQ(formatProgram(*Again), First);
}

// --- Module text and llvm::json values. ---

TEST(BirJson, ModuleTextRoundTrips) {
  Program P = everyOpcode(5);
  std::string Text = formatModule(*P[0]);
  llvm::Expected<std::unique_ptr<Module>> M = parseModule(Text, "$.modules[0]");
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(formatModule(**M), Text);
  EXPECT_EQ(errorText(parseModule("{\"name\": [}", "$.modules[3]").takeError()),
            "$.modules[3]: not valid JSON at byte 11: Invalid JSON value");
  EXPECT_EQ(errorText(parseModule("{\"name\": 1}", "$.modules[3]").takeError()),
            "$.modules[3].name: expected a string");
}

TEST(BirJson, ValuesKeepTheirNumberTypes) {
  llvm::json::Value Root = llvm::cantFail(llvm::json::parse(SmallDoc));
  llvm::json::Value &Module = (*Root.getAsObject()->getArray("modules"))[0];
  llvm::json::Object &Loc =
      *(*Module.getAsObject()->getArray("memory_locations"))[0].getAsObject();
  // An integral double is not an integer for a loader given a Value, as
  // before; the same number as JSON text is.
  Loc["tensor_id"] = 7.0;
  EXPECT_EQ(errorText(moduleFromJson(Module, "$.modules[0]").takeError()),
            "$.modules[0].memory_locations[0].tensor_id: expected an integer "
            "from 0 to 18446744073709551615");
  Loc["tensor_id"] = uint64_t(18446744073709551615ULL);
  EXPECT_TRUE(bool(moduleFromJson(Module, "$.modules[0]")));
  Loc["partitions"] = -3.0;
  EXPECT_EQ(errorText(moduleFromJson(Module, "$.modules[0]").takeError()),
            "$.modules[0].memory_locations[0].partitions: expected an "
            "integer from 0 to 4294967295");

  // A value that is no finite number is written as a string that loads
  // back, not as text that does not load.
  Program P;
  P.push_back(returnOnlyModule(TargetOptions{1, Target::Trn2}));
  BasicBlock &BB = *P[0]->getBlock(0);
  BB.insert(BB.begin(), std::make_unique<InstMemset>("ms", Engine::POOL, NAN))
      ->addOutput(AccessPattern(
          addLocation(*P[0], "a", 0, MemoryKind::SB, DataType::FP32, 1, 4), 0,
          1, 0, {{1, 1}}, DataType::FP32));
  auto FromValue =
      moduleFromJson(moduleToJson(*P[0]), "$");
  ASSERT_TRUE(bool(FromValue)) << llvm::toString(FromValue.takeError());
  EXPECT_TRUE(std::isnan(
      llvm::cast<InstMemset>((*FromValue)->getBlock(0)->begin()->get())
          ->getValue()));
  std::string Text = formatModule(*P[0]);
  EXPECT_NE(Text.find("\"value\":\"nan\""), std::string::npos) << Text;
  auto FromText = parseModule(Text, "$");
  ASSERT_TRUE(bool(FromText)) << llvm::toString(FromText.takeError());
  EXPECT_EQ(formatModule(**FromText), Text);
  // A number that JSON cannot spell is still refused where a number is
  // the only form (the scale of an Activation).
  std::string Bad = Text;
  Bad.replace(Bad.find("\"nan\""), 5, "\"big\"");
  EXPECT_EQ(errorText(parseModule(Bad, "$").takeError()),
            "$.blocks[0].instructions[0].value: expected a number, \"inf\", "
            "\"-inf\" or \"nan\"");
}

} // namespace
