//===- LowerLocalCollectivesPropTest.cpp - Lowered == unlowered, at random ===//
//
// Random programs of local collectives (the three kinds the pass lowers and
// three it keeps, the data types of the fold and accumulate paths, SB /
// PSUM / DRAM / SharedDRAM operands, in-place operands, groups in any order,
// 2 to 8 cores, collectives on POOL, SP or a DMA queue, loops whose
// iterations are ordered through POOL) are lowered and simulated
// against their unlowered form: same final state, no race, no deadlock, over
// random schedules. lnc_verifier accepts every split and every lowered
// program, and refuses each lowered one once a barrier of its last core has
// its id changed, is renamed, or is removed. The seeds are fixed; each case
// is small.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/json/BirJson.h"
#include "loom/bir/ir/Instructions.h"
#include "loom/bir/passes/LncVerifier.h"
#include "loom/bir/passes/LowerLocalCollectives.h"
#include "loom/bir/sim/Simulator.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <random>

using namespace loom::bir;
using namespace loom::bir::sim;
namespace json = llvm::json;

namespace {

class Generator {
public:
  explicit Generator(uint64_t Seed) : R(Seed) {}

  /// One unsplit program, and its lnc_size.
  std::string program(unsigned &Lnc, bool &Semaphores);

private:
  unsigned pick(unsigned N) { return std::uniform_int_distribution<unsigned>(0, N - 1)(R); }
  bool chance(double P) { return std::uniform_real_distribution<double>()(R) < P; }
  std::string loc(const char *Kind, const char *Type, unsigned Parts,
                  uint64_t Bytes) {
    std::string Name = "l" + std::to_string(Locs.size());
    Locs.push_back(json::Object{{"name", Name},
                                {"tensor_id", int64_t(Locs.size())},
                                {"kind", Kind},
                                {"dtype", Type},
                                {"partitions", Parts},
                                {"bytes_per_partition", int64_t(Bytes)}});
    return Name;
  }

  std::mt19937_64 R;
  json::Array Locs;
};

json::Object ap(const std::string &L, unsigned Parts, json::Array Pat) {
  return json::Object{{"memloc", L},
                      {"partitions", int64_t(Parts)},
                      {"pattern", std::move(Pat)}};
}

std::string Generator::program(unsigned &Lnc, bool &Semaphores) {
  static const char *Types[] = {"fp32", "bf16", "fp16", "int8", "int16",
                                "fp8e4m3"};
  static const unsigned Sizes[] = {4, 2, 2, 1, 2, 1};
  const unsigned LncChoices[] = {2, 2, 4, 8};
  Lnc = LncChoices[pick(4)];
  Semaphores = chance(0.3);
  std::vector<unsigned> Group(Lnc);
  for (unsigned C = 0; C < Lnc; ++C)
    Group[C] = C;
  if (chance(0.3))
    std::shuffle(Group.begin(), Group.end(), R);
  json::Array Entry, Body, Exit;
  unsigned N = 1 + pick(3);
  for (unsigned K = 0; K < N; ++K) {
    std::vector<std::string> Kinds = {"AllReduce", "AllReduce", "Permute",
                                      "PermuteReduce", "AllGather"};
    if (Lnc == 2)
      Kinds.insert(Kinds.end(), {"SendRecv", "SendRecv", "SendRecvCCE"});
    std::string Kind = Kinds[pick(Kinds.size())];
    unsigned T = pick(6);
    const char *Ops[] = {"Add", "Add", "Max", "Min"};
    std::string Op = Ops[pick(4)];
    bool Reduces = Kind == "AllReduce" || Kind == "PermuteReduce";
    const unsigned PartChoices[] = {128, 64, 8, 6};
    unsigned Parts = PartChoices[pick(4)];
    json::Array Pat;
    uint64_t Elems;
    switch (pick(3)) {
    case 0:
      Elems = 4u << pick(3);
      Pat.push_back(json::Array{1, int64_t(Elems)});
      break;
    case 1:
      Elems = 8;
      Pat.push_back(json::Array{4, 2});
      Pat.push_back(json::Array{1, 4});
      break;
    default:
      Elems = 3;
      Pat.push_back(json::Array{1, 3});
    }
    uint64_t Bytes = std::max<uint64_t>(Elems * Sizes[T], 8);
    bool Gather = Kind == "AllGather";
    uint64_t OutBytes = Gather ? Bytes * Lnc : Bytes;
    json::Array OutPat;
    if (Gather)
      OutPat.push_back(json::Array{1, int64_t(Elems * Lnc)});
    else
      OutPat = Pat;
    // Memories: the updates below run on POOL, so the loop's tiles are on
    // chip; straight-line collectives may use DRAM too.
    bool InLoop = chance(0.5);
    const char *InKind = chance(0.2) ? "PSUM" : "SB";
    const char *OutKind = "SB";
    if (!InLoop && Reduces && chance(0.3))
      OutKind = chance(0.5) ? "DRAM" : "SharedDRAM";
    if (!InLoop && !Reduces && chance(0.3))
      InKind = "DRAM";
    std::string Src = loc("DRAM", Types[T], Parts, Bytes);
    std::string A = loc(InKind, Types[T], Parts, Bytes);
    bool InPlace = !Gather && std::string(OutKind) == "SB" &&
                   std::string(InKind) == "SB" && chance(0.3);
    std::string B = InPlace ? A : loc(OutKind, Types[T], Parts, OutBytes);
    std::string Dst = loc("DRAM", Types[T], Parts, OutBytes);
    std::string Id = std::to_string(K);
    Entry.push_back(json::Object{{"name", "ld" + Id},
                                 {"type", "DMACopy"},
                                 {"engine", "DMA" + Id},
                                 {"inputs", json::Array{ap(Src, Parts, Pat)}},
                                 {"outputs", json::Array{ap(A, Parts, Pat)}}});
    // In a loop the collective runs on POOL with the update that orders
    // the iterations; elsewhere on any engine a collective can use.
    const char *Engines[] = {"POOL", "SP", "DMA12"};
    json::Object CC{{"name", "cc" + Id},
                    {"type", "CollectiveCompute"},
                    {"engine", InLoop ? "POOL" : Engines[pick(3)]},
                    {"kind", Kind},
                    {"local", true},
                    {"inputs", json::Array{ap(A, Parts, Pat)}},
                    {"outputs", json::Array{ap(B, Parts, OutPat)}},
                    {"deps", json::Array{"ld" + Id}}};
    std::vector<unsigned> G =
        Kind.rfind("SendRecv", 0) == 0 ? std::vector<unsigned>{0, 1} : Group;
    json::Array GroupJson;
    for (unsigned C : G)
      GroupJson.push_back(C);
    CC["group"] = std::move(GroupJson);
    if (Reduces)
      CC["reduce"] = Op;
    json::Array &Where = InLoop ? Body : Entry;
    Where.push_back(std::move(CC));
    std::string Last = "cc" + Id;
    if (InLoop && !Gather) {
      // Feeds the next iteration, in POOL order after the collective.
      Where.push_back(json::Object{
          {"name", "up" + Id},
          {"type", "TensorTensor"},
          {"engine", "POOL"},
          {"op", "Max"},
          {"inputs", json::Array{ap(B, Parts, Pat), ap(B, Parts, Pat)}},
          {"outputs", json::Array{ap(A, Parts, Pat)}},
          {"deps", json::Array{Last}}});
      Last = "up" + Id;
    }
    Exit.push_back(
        json::Object{{"name", "st" + Id},
                     {"type", "DMACopy"},
                     {"engine", "DMA" + std::to_string(8 + K)},
                     {"inputs", json::Array{ap(B, Parts, OutPat)}},
                     {"outputs", json::Array{ap(Dst, Parts, OutPat)}},
                     {"deps", json::Array{Last}}});
  }
  Entry.push_back(json::Object{
      {"name", "j"}, {"type", "Branch"}, {"engine", "SP"}, {"kind", "Jump"}});
  Body.push_back(json::Object{{"name", "lp"},
                              {"type", "Branch"},
                              {"engine", "SP"},
                              {"kind", "Loop"},
                              {"trip_count", 1 + pick(3)}});
  Exit.push_back(json::Object{
      {"name", "ret"}, {"type", "Branch"}, {"engine", "SP"}, {"kind", "Return"}});
  json::Object M{
      {"name", "p"},
      {"neuron_core_id", 0},
      {"subgraph_id", 0},
      {"pass_options", json::Object{{"lnc_size", Lnc}, {"target", "generic"}}},
      {"memory_locations", std::move(Locs)},
      {"blocks",
       json::Array{
           json::Object{{"name", "e"},
                        {"successors", json::Array{"b"}},
                        {"instructions", std::move(Entry)}},
           json::Object{{"name", "b"},
                        {"successors", json::Array{"b", "x"}},
                        {"instructions", std::move(Body)}},
           json::Object{{"name", "x"}, {"instructions", std::move(Exit)}}}}};
  json::Object Doc{{"version", 1}, {"modules", json::Array{std::move(M)}}};
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << json::Value(std::move(Doc));
  return OS.str();
}

/// lnc_verifier's problems with P, one per line; no warnings are expected
/// (every generated collective is local).
std::string lncProblems(Program &P) {
  LncVerifier V;
  V.setWarningHandler(
      [](llvm::StringRef W) { ADD_FAILURE() << "warning: " << W.str(); });
  llvm::Expected<bool> Changed = V.run(P);
  if (!Changed)
    return llvm::toString(Changed.takeError());
  EXPECT_FALSE(*Changed);
  return "";
}

/// The three barrier tamperings lnc_verifier must refuse, each applied to a
/// fresh copy of Lowered at the first barrier of its last module.
void expectTamperingsRefused(const Program &Lowered) {
  std::string Text = formatProgram(Lowered);
  for (int Kind = 0; Kind < 3; ++Kind) {
    Program P = llvm::cantFail(parseProgram(Text, "tampered"));
    InstCoreBarrier *CB = nullptr;
    unsigned MaxId = 0;
    for (const auto &BB : P.back()->blocks())
      for (const auto &I : *BB)
        if (auto *B = llvm::dyn_cast<InstCoreBarrier>(I.get())) {
          CB = CB ? CB : B;
          MaxId = std::max(MaxId, B->getId());
        }
    ASSERT_NE(CB, nullptr);
    if (Kind == 0) {
      CB->setId(MaxId + 1);
    } else if (Kind == 1) {
      CB->setName(CB->getName().str() + "_renamed");
    } else {
      std::vector<Instruction *> Users(CB->users().begin(), CB->users().end());
      std::vector<Instruction *> Deps(CB->dependencies().begin(),
                                      CB->dependencies().end());
      for (Instruction *U : Users)
        for (Instruction *D : Deps)
          U->addDependency(D);
      CB->getBasicBlock()->removeInstruction(CB);
    }
    EXPECT_NE(lncProblems(P), "") << "tampering " << Kind << " accepted";
  }
}

TEST(LowerLocalCollectivesProperty, LoweredSimulatesLikeUnlowered) {
  unsigned Lowered = 0;
  for (uint64_t Seed = 1; Seed <= 80; ++Seed) {
    Generator Gen(Seed);
    unsigned Lnc;
    bool Semaphores;
    std::string Text = Gen.program(Lnc, Semaphores);
    SCOPED_TRACE("seed " + std::to_string(Seed) + ": " + Text);
    llvm::Expected<Program> Before = parseProgram(Text, "before");
    ASSERT_TRUE(bool(Before)) << llvm::toString(Before.takeError());
    llvm::Expected<Program> After = parseProgram(Text, "after");
    ASSERT_TRUE(bool(After)) << llvm::toString(After.takeError());
    ASSERT_FALSE(bool(splitIfNeeded(*Before)));
    ASSERT_FALSE(bool(splitIfNeeded(*After)));
    EXPECT_EQ(lncProblems(*After), "");
    BackendOptions O;
    O.EnableRemoteSemaphoreDMA = Semaphores;
    llvm::Expected<bool> Changed = LowerLocalCollectives(O).run(*After);
    if (!Changed) {
      // Only the documented refusals: 32-bit integers are not generated.
      ADD_FAILURE() << llvm::toString(Changed.takeError());
      continue;
    }
    EXPECT_TRUE(*Changed);
    EXPECT_EQ(lncProblems(*After), "") << formatProgram(*After);
    expectTamperingsRefused(*After);
    SimOptions SO;
    SO.Seed = Seed;
    SO.Schedules = 3;
    std::string Log;
    llvm::raw_string_ostream LogOS(Log);
    llvm::Error E = checkEquivalence(*Before, *After, SO, LogOS);
    EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E)) << "\n"
                          << formatProgram(*After);
    ++Lowered;
  }
  EXPECT_EQ(Lowered, 80u);
}

// Lowering the lowered program again changes nothing, byte for byte: the
// second run finds no SendRecv, SendRecvCCE or AllReduce, and decides for
// every kept collective as the first run did (docs/local-collectives.md,
// "Idempotence").
TEST(LowerLocalCollectivesProperty, LoweringTwiceChangesNothing) {
  unsigned Lowered = 0;
  for (uint64_t Seed = 1; Seed <= 80; ++Seed) {
    Generator Gen(Seed);
    unsigned Lnc;
    bool Semaphores;
    std::string Text = Gen.program(Lnc, Semaphores);
    SCOPED_TRACE("seed " + std::to_string(Seed) + ": " + Text);
    llvm::Expected<Program> P = parseProgram(Text, "program");
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    ASSERT_FALSE(bool(splitIfNeeded(*P)));
    BackendOptions O;
    O.EnableRemoteSemaphoreDMA = Semaphores;
    llvm::Expected<bool> First = LowerLocalCollectives(O).run(*P);
    ASSERT_TRUE(bool(First)) << llvm::toString(First.takeError());
    std::string Once = formatProgram(*P);
    llvm::Expected<bool> Second = LowerLocalCollectives(O).run(*P);
    ASSERT_TRUE(bool(Second)) << llvm::toString(Second.takeError());
    EXPECT_FALSE(*Second);
    EXPECT_EQ(formatProgram(*P), Once);
    ++Lowered;
  }
  EXPECT_EQ(Lowered, 80u);
}

} // namespace
