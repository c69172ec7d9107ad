//===- IndirectDMATest.cpp - DMA with offsets read at run time -------------===//
//
// IndirectDMACopy (docs/bir.md): the clamp of every index value, both
// sides, the race detector seeing the bytes an execution touches (not the
// pattern at delta 0), the cost model's extra fixed cost, the JSON and text
// forms, the verifier's bounds over every index value, and a bounded fuzz
// of the reader: no mutation of a valid document crashes the loader.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/analysis/CostModel.h"
#include "loom/bir/ir/Printer.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <random>

using namespace loom;
using namespace loom::bir;
using namespace loom::bir::sim;

namespace {

// src holds 16 fp32 values; idx two int32 indices; dst 4 fp32.
const char *Locs = R"(
  {"name": "src", "tensor_id": 0, "kind": "DRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64},
  {"name": "idx", "tensor_id": 1, "kind": "DRAM", "dtype": "int32", "partitions": 1, "bytes_per_partition": 8},
  {"name": "dst", "tensor_id": 2, "kind": "DRAM", "dtype": "fp32", "partitions": 1, "bytes_per_partition": 64})";

std::string program(const std::string &Insts) {
  return llvm::formatv(R"({{"version": 1, "modules": [{{
    "name": "t", "neuron_core_id": 0, "subgraph_id": 0,
    "pass_options": {{"lnc_size": 1, "target": "trn2"},
    "memory_locations": [{0}], "blocks": [{{"name": "entry", "instructions": [{1},
      {{"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})",
                       Locs, Insts)
      .str();
}

/// An IndirectDMACopy named Name moving 4 elements (a 2 x 2 window with
/// row stride 4 on the dynamic side): rows by idx[0] (stride 4, limit
/// RowLimit), columns by idx[1] (stride 1, limit 2).
std::string indirect(const char *Name, const char *Side, unsigned RowLimit = 2,
                     const char *Deps = "", const char *Eng = "DMA0") {
  bool In = std::strcmp(Side, "in") == 0;
  std::string Window = R"({"memloc": "%s", "partitions": 1, "pattern": [[4, 2], [1, 2]]})";
  std::string Packed = R"({"memloc": "%s", "partitions": 1, "pattern": [[1, 4]]})";
  auto At = [](std::string T, const char *Loc) {
    return T.replace(T.find("%s"), 2, Loc);
  };
  std::string Src = In ? At(Window, "src") : At(Packed, "src");
  std::string Dst = In ? At(Packed, "dst") : At(Window, "dst");
  return llvm::formatv(
             R"({{"name": "{0}", "type": "IndirectDMACopy", "engine": "{5}", "dynamic": "{1}",
      "offsets": [{{"stride": 4, "limit": {2}}, {{"stride": 1, "limit": 2}],
      "inputs": [{3}, {{"memloc": "idx", "partitions": 1, "pattern": [[1, 1]]},
                 {{"memloc": "idx", "partitions": 1, "offset": 4, "pattern": [[1, 1]]}],
      "outputs": [{4}], "deps": [{6}]})",
             Name, Side, std::to_string(RowLimit), Src, Dst, Eng, Deps)
      .str();
}

llvm::Expected<Program> parse(const std::string &Text) {
  return parseProgram(Text, "t.json");
}

NpyArray array(const char *Descr, std::vector<int32_t> Ints,
               std::vector<float> Floats) {
  NpyArray A;
  A.Descr = Descr;
  if (!Ints.empty()) {
    A.Shape = {1, int64_t(Ints.size())};
    A.Data.assign(reinterpret_cast<const char *>(Ints.data()), 4 * Ints.size());
  } else {
    A.Shape = {1, int64_t(Floats.size())};
    A.Data.assign(reinterpret_cast<const char *>(Floats.data()), 4 * Floats.size());
  }
  return A;
}

/// Runs Text with idx = I and src = 0..15, dst = -1; dst afterwards.
std::vector<float> run(const std::string &Text, std::vector<int32_t> I) {
  llvm::Expected<Program> P = parse(Text);
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  SimOptions O;
  std::vector<float> Src(16), Dst(16, -1);
  for (unsigned K = 0; K < 16; ++K)
    Src[K] = float(K);
  O.Inputs.push_back({std::nullopt, "idx", array("<i4", I, {})});
  O.Inputs.push_back({std::nullopt, "src", array("<f4", {}, Src)});
  O.Inputs.push_back({std::nullopt, "dst", array("<f4", {}, Dst)});
  llvm::Expected<SimResult> R = simulate(*P, O);
  if (!R) {
    ADD_FAILURE() << llvm::toString(R.takeError());
    return {};
  }
  const LocationState *L = R->find(0, 0, "dst");
  std::vector<float> Out(16);
  std::memcpy(Out.data(), L->Data.data(), 64);
  return Out;
}

TEST(IndirectDMATest, InputSideClampsEveryIndex) {
  std::string Text = program(indirect("g", "in"));
  // Row 1, column 1: elements 5, 6, 9, 10.
  std::vector<float> Out = run(Text, {1, 1});
  EXPECT_EQ(std::vector<float>(Out.begin(), Out.begin() + 4),
            (std::vector<float>{5, 6, 9, 10}));
  // -3 clamps to 0, 99 to the limit 2: row 0, column 2.
  Out = run(Text, {-3, 99});
  EXPECT_EQ(std::vector<float>(Out.begin(), Out.begin() + 4),
            (std::vector<float>{2, 3, 6, 7}));
  EXPECT_EQ(Out[4], -1); // nothing else written
}

TEST(IndirectDMATest, OutputSideWritesTheWindowItSelects) {
  std::vector<float> Out = run(program(indirect("s", "out")), {2, 0});
  // Row 2, column 0 of dst: elements 8, 9, 12, 13 get src[0..3].
  for (unsigned K = 0; K < 16; ++K) {
    float Want = K == 8 ? 0 : K == 9 ? 1 : K == 12 ? 2 : K == 13 ? 3 : -1;
    EXPECT_EQ(Out[K], Want) << "element " << K;
  }
}

/// indirect() in the skip mode.
std::string skipping(const char *Name, const char *Side) {
  std::string T = indirect(Name, Side);
  std::string From = R"("dynamic": ")";
  return T.replace(T.find(From), From.size(), R"("bounds": "skip", "dynamic": ")");
}

TEST(IndirectDMATest, SkipModeMovesNothingOutOfRange) {
  std::string Text = program(skipping("s", "out"));
  // In range: as the clamping copy.
  EXPECT_EQ(run(Text, {2, 0}), run(program(indirect("s", "out")), {2, 0}));
  // Any index outside [0, limit] leaves dst as it was, on either side.
  for (std::vector<int32_t> I : {std::vector<int32_t>{-1, 0}, {0, 3}, {3, 2}})
    EXPECT_EQ(run(Text, I), std::vector<float>(16, -1)) << I[0] << "," << I[1];
  EXPECT_EQ(run(program(skipping("g", "in")), {1, 3}), std::vector<float>(16, -1));
  // The text and JSON forms keep the mode.
  llvm::Expected<Program> P = parse(Text);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  std::string Saved = formatProgram(*P);
  EXPECT_NE(Saved.find(R"("bounds": "skip")"), std::string::npos) << Saved;
  EXPECT_EQ(formatProgram(P->clone()), Saved);
  std::string Printed;
  llvm::raw_string_ostream OS(Printed);
  printProgram(OS, *P);
  EXPECT_NE(Printed.find("offsets=(4:2,1:2) bounds=skip out="), std::string::npos)
      << Printed;
}

TEST(IndirectDMATest, RaceDetectorSeesTheBytesTouched) {
  // Two unordered writes to dst on two queues: one plain DMACopy of
  // elements 0..3, one IndirectDMACopy whose window depends on idx.
  std::string Plain = R"({"name": "p", "type": "DMACopy", "engine": "DMA1",
      "inputs": [{"memloc": "src", "partitions": 1, "pattern": [[1, 4]]}],
      "outputs": [{"memloc": "dst", "partitions": 1, "pattern": [[1, 4]]}]})";
  std::string Text = program(Plain + "," + indirect("s", "out"));
  llvm::Expected<Program> P = parse(Text);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  auto Simulate = [&](std::vector<int32_t> I) {
    SimOptions O;
    O.Inputs.push_back({std::nullopt, "idx", array("<i4", I, {})});
    return simulate(*P, O);
  };
  // Row 2: bytes [32, 56) of dst, disjoint from [0, 16): no race.
  llvm::Expected<SimResult> Apart = Simulate({2, 0});
  EXPECT_TRUE(bool(Apart)) << llvm::toString(Apart.takeError());
  // Row 0, column 1: elements 1, 2 overlap: a race on the bytes touched.
  llvm::Expected<SimResult> Overlap = Simulate({0, 1});
  ASSERT_FALSE(bool(Overlap));
  std::string Msg = llvm::toString(Overlap.takeError());
  EXPECT_NE(Msg.find("write-write race on 'dst (core 0)' partition 0 bytes [4, 12)"), std::string::npos) << Msg;
}

TEST(IndirectDMATest, CostIsADMACopyAndOneMoreFetch) {
  llvm::Expected<Program> P = parse(program(indirect("g", "in")));
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  const Instruction &I = **(*P)[0]->getBlock(0)->begin();
  InstDMACopy Plain("c", Engine::DMA0, false);
  Plain.addInput(I.inputs()[0]);
  Plain.addOutput(I.outputs()[0]);
  analysis::CostModel Cost;
  EXPECT_DOUBLE_EQ(Cost.instructionNs(I),
                   Cost.instructionNs(Plain) + Cost.params().DmaFixedNs);
}

TEST(IndirectDMATest, JsonAndTextForms) {
  llvm::Expected<Program> P = parse(program(indirect("g", "in")));
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  std::string Saved = formatProgram(*P);
  EXPECT_NE(Saved.find(R"("dynamic": "in")"), std::string::npos) << Saved;
  EXPECT_NE(Saved.find(R"("offsets": [{"limit":2,"stride":4},{"limit":2,"stride":1}])"),
            std::string::npos)
      << Saved;
  EXPECT_NE(Saved.find(R"("opcode": 220)"), std::string::npos);
  llvm::Expected<Program> Again = parse(Saved);
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  EXPECT_EQ(formatProgram(*Again), Saved);
  EXPECT_EQ(formatProgram(Again->clone()), Saved);
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printProgram(OS, *P);
  EXPECT_NE(Text.find("%g = IndirectDMACopy[DMA0] dynamic=in offsets=(4:2,1:2) "
                      "out=dst[0:1, +0, (1,4), fp32] in=src[0:1, +0, (4,2)(1,2), fp32], "
                      "idx[0:1, +0, (1,1), int32], idx[0:1, +4, (1,1), int32]"),
            std::string::npos)
      << Text;
}

std::string errorOf(const std::string &Text) {
  llvm::Expected<Program> P = parse(Text);
  if (P)
    return "";
  return llvm::toString(P.takeError());
}

TEST(IndirectDMATest, VerifierBoundsEveryIndexValue) {
  // Row limit 2 keeps the window (rows r, r+1) inside src's 4 rows; limit 3
  // reaches row 4, past the end.
  std::string E = errorOf(program(indirect("g", "in", 3)));
  EXPECT_NE(E.find("instructions[0].inputs[0]: with its offsets it may touch "
                   "bytes [0, 80), outside the 64 bytes per partition of 'src'"),
            std::string::npos)
      << E;
  std::string Good = program(indirect("g", "in"));
  auto Replace = [&](std::string From, std::string To) {
    std::string T = Good;
    size_t At = T.find(From);
    EXPECT_NE(At, std::string::npos) << From;
    return T.replace(At, From.size(), To);
  };
  EXPECT_NE(errorOf(Replace(R"(, {"stride": 1, "limit": 2}])", "]"))
                .find("with 1 offset(s) has 2 inputs"),
            std::string::npos);
  EXPECT_NE(errorOf(Replace(R"("stride": 4, "limit": 2)",
                            R"("stride": 4, "limit": 1099511627776)"))
                .find("reaches 2^40 elements"),
            std::string::npos);
  EXPECT_NE(errorOf(Replace(R"("dynamic": "in")", R"("dynamic": "up")"))
                .find("dynamic"),
            std::string::npos);
  EXPECT_NE(errorOf(Replace(R"("offset": 4, "pattern": [[1, 1]])",
                            R"("pattern": [[1, 2]])"))
                .find("an index is one element, not 2"),
            std::string::npos);
  EXPECT_NE(errorOf(Replace(R"("engine": "DMA0")", R"("engine": "DVE")")),
            "");
  EXPECT_NE(errorOf(Replace(R"("offsets": [)", R"("offsets": [{"stride": 1}, )"))
                .find("limit"),
            std::string::npos);
  EXPECT_EQ(errorOf(Good), "");
}

TEST(IndirectDMATest, ReaderSurvivesMutations) {
  // Every number and every quoted word of a valid document replaced by
  // others, one at a time: the loader answers with a program or an error,
  // never a crash. LOOM_FUZZ_ITERATIONS runs a longer random sample.
  std::string Good = program(indirect("g", "in"));
  const char *Env = std::getenv("LOOM_FUZZ_ITERATIONS");
  unsigned Iterations = Env ? unsigned(std::atoi(Env)) : 300;
  const char *Values[] = {"0", "-1", "2", "4294967296", "-9223372036854775808",
                          "18446744073709551615", "1e300", "\"in\"", "\"out\"",
                          "null", "[]", "{}", "true", "\"idx\"", "\"src\""};
  std::mt19937_64 Rng(7);
  std::vector<std::pair<size_t, size_t>> Tokens;
  for (size_t I = 0; I < Good.size();) {
    if (std::isdigit(static_cast<unsigned char>(Good[I])) || Good[I] == '"') {
      size_t J = I + 1;
      if (Good[I] == '"')
        J = Good.find('"', J) + 1;
      else
        while (J < Good.size() && std::isdigit(static_cast<unsigned char>(Good[J])))
          ++J;
      Tokens.push_back({I, J - I});
      I = J;
    } else {
      ++I;
    }
  }
  unsigned Loaded = 0;
  for (unsigned K = 0; K < Iterations; ++K) {
    auto [At, Len] = Tokens[Rng() % Tokens.size()];
    std::string T = Good;
    T.replace(At, Len, Values[Rng() % std::size(Values)]);
    llvm::Expected<Program> P = parse(T);
    if (!P) {
      llvm::consumeError(P.takeError());
      continue;
    }
    ++Loaded;
    // A program that loads also simulates without a crash.
    llvm::Expected<SimResult> R = simulate(*P, SimOptions());
    if (!R)
      llvm::consumeError(R.takeError());
  }
  EXPECT_GT(Loaded, 0u);
}

} // namespace
