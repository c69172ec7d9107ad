//===- BirJsonTest.cpp - Loading and saving BIR programs ------------------===//

#include "BirTestModules.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"

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
        "\"pattern\":[[-1,2],[4,3]]", "\"pattern\":[]", "\"opcode\":94"})
    EXPECT_NE(Compact.find(Needle), std::string::npos) << Needle;
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
  EXPECT_EQ((*P)[0]->getPassOptions().LncSize, 2u);
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
     "DMACopy, Branch, SemaphoreWait"},
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

} // namespace
