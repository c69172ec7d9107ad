//===- InsertPTCOMFlatTest.cpp - insert_ptcom_flat placement and waits ----===//
//
// Programs are built from a CFG description: every core gets the same
// blocks; in the writer blocks of a core, a DMACopy sends `src` to the
// peer's `out` through `out_remote_<peer>`. The tests check where
// identifyPTCOMBlocks puts the completions and what run() makes them wait
// for.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/InsertPTCOMFlat.h"

#include "gtest/gtest.h"

#include <map>
#include <set>

using namespace loom::bir;

namespace {

struct BlockSpec {
  std::string Name;
  std::vector<unsigned> Succs;
  BranchKind Kind;
  unsigned TripCount = 0;
  /// Cores whose module writes `out` of the next core in this block.
  std::set<unsigned> WritingCores = {};
};

MemoryLocation *addLoc(Module &M, std::string Name, uint64_t Id,
                       MemoryKind Kind = MemoryKind::SB) {
  return llvm::cantFail(
      M.getMemoryLocations().add(std::make_unique<MemoryLocation>(
          std::move(Name), Id, Kind, DataType::FP32, 128, 1024)));
}

AccessPattern whole(MemoryLocation *L) {
  return AccessPattern(L, 0, 128, 0, {{1, 256}}, DataType::FP32);
}

/// One module per core of a logical core of Lnc cores (generic target).
Program buildProgram(llvm::ArrayRef<BlockSpec> Blocks, unsigned Lnc = 2) {
  Program P;
  for (unsigned C = 0; C < Lnc; ++C) {
    auto M = std::make_unique<Module>(
        "t", C, 0, TargetOptions{Lnc, Lnc > 2 ? Target::Generic : Target::Trn2});
    unsigned Peer = (C + 1) % Lnc;
    MemoryLocation *Src = addLoc(*M, "src", 0);
    MemoryLocation *Out = addLoc(*M, "out", 1);
    Out->setIsWrittenByAnotherCore(true);
    addLoc(*M, "priv", 2);
    MemoryLocation *Remote = nullptr;
    if (Peer != C) {
      Remote = addLoc(*M, getRemoteLocationName("out", Peer), 3);
      Remote->setRemote(Peer, "out");
    }
    std::vector<BasicBlock *> BBs;
    for (const BlockSpec &S : Blocks)
      BBs.push_back(M->createBlock(S.Name));
    for (unsigned B = 0; B < Blocks.size(); ++B) {
      const BlockSpec &S = Blocks[B];
      for (unsigned Succ : S.Succs)
        BBs[B]->addSuccessor(BBs[Succ]);
      if (S.WritingCores.count(C)) {
        auto *Send = BBs[B]->append(std::make_unique<InstDMACopy>(
            "send_" + S.Name, Engine::DMA0, false));
        Send->addInput(whole(Src));
        Send->addOutput(whole(Remote ? Remote : Out));
      }
      BBs[B]->append(std::make_unique<InstBranch>("br_" + S.Name, Engine::SP,
                                                  S.Kind, S.TripCount));
    }
    P.push_back(std::move(M));
  }
  return P;
}

std::vector<const Module *> cores(const Program &P) {
  std::vector<const Module *> Cores;
  for (const auto &M : P)
    Cores.push_back(M.get());
  return Cores;
}

/// The blocks that get a completion for `out`; empty when it gets none.
std::vector<unsigned> placementOfOut(const Program &P) {
  auto Placements = identifyPTCOMBlocks(cores(P));
  EXPECT_TRUE(bool(Placements)) << llvm::toString(Placements.takeError());
  for (const PTCOMPlacement &Pl : *Placements) {
    EXPECT_EQ(Pl.Location, "out") << "only `out` is shared";
    return Pl.Blocks;
  }
  return {};
}

const InstTensorCompletion *findCompletion(const Module &M,
                                           llvm::StringRef Name) {
  for (const auto &B : M.blocks())
    for (const auto &I : *B)
      if (I->getName() == Name)
        return llvm::dyn_cast<InstTensorCompletion>(I.get());
  return nullptr;
}

std::vector<std::string> waitsOf(const InstTensorCompletion &TC) {
  std::vector<std::string> W;
  for (const CompletionWait &CW : TC.getWaits())
    W.push_back(std::to_string(CW.Core) + ":" + CW.Instruction);
  return W;
}

constexpr BranchKind Jump = BranchKind::Jump, Loop = BranchKind::Loop,
                     Ret = BranchKind::Return;

TEST(InsertPTCOMFlat, DiamondGoesToTheJoin) {
  Program P = buildProgram({{"entry", {1, 2}, Loop, 2},
                            {"left", {3}, Jump, 0, {0, 1}},
                            {"right", {3}, Jump, 0, {0, 1}},
                            {"join", {}, Ret}});
  EXPECT_EQ(placementOfOut(P), std::vector<unsigned>{3});
}

TEST(InsertPTCOMFlat, WriterBlockThatPostDominatesTheOthersGetsIt) {
  Program P = buildProgram({{"entry", {1, 2}, Loop, 2, {0}},
                            {"left", {2}, Jump, 0, {1}},
                            {"join", {3}, Jump, 0, {0, 1}},
                            {"exit", {}, Ret}});
  EXPECT_EQ(placementOfOut(P), std::vector<unsigned>{2});
}

TEST(InsertPTCOMFlat, HoistedPastNestedLoops) {
  Program P = buildProgram({{"entry", {1}, Jump},
                            {"outer", {2}, Jump},
                            {"inner", {2, 3}, Loop, 3, {0, 1}},
                            {"latch", {1, 4}, Loop, 2},
                            {"done", {5}, Jump},
                            {"exit", {}, Ret}});
  EXPECT_EQ(placementOfOut(P), std::vector<unsigned>{4});
}

TEST(InsertPTCOMFlat, SeveralExitsGetOneEach) {
  Program P = buildProgram({{"entry", {1, 2}, Loop, 2},
                            {"a", {}, Ret, 0, {0, 1}},
                            {"b", {3}, Jump, 0, {0, 1}},
                            {"b_exit", {}, Ret},
                            {"unrelated_exit", {}, Ret}});
  // The virtual exit: every exit the writers reach, not unrelated_exit.
  EXPECT_EQ(placementOfOut(P), (std::vector<unsigned>{1, 3}));
}

TEST(InsertPTCOMFlat, ExitAndInfiniteLoopReachOnlyTheExit) {
  // `w` either returns or goes into `spin`, which loops forever; both
  // write. Their first common post-dominator is the virtual exit, and of the
  // roots only the real exit gets a completion.
  Program P = buildProgram({{"entry", {1}, Jump},
                            {"w", {2, 3}, Loop, 2, {0, 1}},
                            {"spin", {2}, Jump, 0, {0, 1}},
                            {"exit", {}, Ret}});
  EXPECT_EQ(placementOfOut(P), std::vector<unsigned>{3});
}

TEST(InsertPTCOMFlat, WritesInAnInfiniteLoopGetNone) {
  Program P = buildProgram(
      {{"entry", {1}, Jump}, {"spin", {1}, Jump, 0, {0, 1}}});
  EXPECT_TRUE(placementOfOut(P).empty());
  llvm::Expected<bool> Changed = InsertPTCOMFlat({}).run(P);
  ASSERT_TRUE(bool(Changed)) << llvm::toString(Changed.takeError());
  EXPECT_FALSE(*Changed);
}

TEST(InsertPTCOMFlat, UnreachableWritersAreIgnored) {
  Program P = buildProgram({{"entry", {1}, Jump, 0, {0, 1}},
                            {"exit", {}, Ret},
                            {"dead", {1}, Jump, 0, {0, 1}}});
  EXPECT_EQ(placementOfOut(P), std::vector<unsigned>{0});
}

TEST(InsertPTCOMFlat, WaitsOnlyForWritesThatRun) {
  // Trip count 1: the entry branch takes its second successor, `right`.
  Program P = buildProgram({{"entry", {1, 2}, Loop, 1},
                            {"left", {3}, Jump, 0, {0, 1}},
                            {"right", {3}, Jump, 0, {0, 1}},
                            {"join", {}, Ret}});
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  for (const auto &M : P) {
    const InstTensorCompletion *TC = findCompletion(*M, "out-PTCOM");
    ASSERT_NE(TC, nullptr);
    EXPECT_EQ(TC->getBasicBlock()->getName(), "join");
    EXPECT_EQ(waitsOf(*TC),
              (std::vector<std::string>{"0:send_right", "1:send_right"}));
  }
  EXPECT_FALSE(bool(verifyProgram(P)));
}

TEST(InsertPTCOMFlat, BeyondTheTraceBoundEveryReachableWriteCounts) {
  // The run never ends (it spins in `spin`), so the trace gives up and takes
  // every reachable block as running, `w` included, though it never runs.
  Program P = buildProgram({{"entry", {1, 2}, Loop, 1},
                            {"w", {3}, Jump, 0, {0, 1}},
                            {"spin", {2}, Jump},
                            {"exit", {}, Ret}});
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  const InstTensorCompletion *TC = findCompletion(*P[0], "out-PTCOM");
  ASSERT_NE(TC, nullptr);
  EXPECT_EQ(TC->getBasicBlock()->getName(), "w");
  EXPECT_EQ(waitsOf(*TC), (std::vector<std::string>{"0:send_w", "1:send_w"}));
}

TEST(InsertPTCOMFlat, OnlyOneCoreWrites) {
  Program P = buildProgram({{"entry", {1}, Jump, 0, {1}}, {"exit", {}, Ret}});
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  for (const auto &M : P) {
    const InstTensorCompletion *TC = findCompletion(*M, "out-PTCOM");
    ASSERT_NE(TC, nullptr) << "core " << M->getNeuronCoreId();
    EXPECT_EQ(TC->getBasicBlock()->getName(), "entry");
    EXPECT_EQ(TC->getEngine(), Engine::SP);
    EXPECT_EQ(waitsOf(*TC), std::vector<std::string>{"1:send_entry"});
    // The whole of this core's own `out`, before the terminator.
    ASSERT_EQ(TC->inputs().size(), 1u);
    const AccessPattern &In = TC->inputs()[0];
    EXPECT_EQ(In.getLocation(),
              M->getMemoryLocations().getMemlocByName("out"));
    EXPECT_EQ(In.getNumPartitions(), 128u);
    EXPECT_EQ(In.getNumElementsPerPartition(), 256u);
    EXPECT_TRUE(std::next(TC->getIterator()) ==
                TC->getBasicBlock()->getFirstTerminator());
  }
}

TEST(InsertPTCOMFlat, EveryCoreOfAWideLogicalCore) {
  Program P = buildProgram(
      {{"entry", {1}, Jump, 0, {0, 1, 2, 3}}, {"exit", {}, Ret}}, 4);
  ASSERT_FALSE(bool(verifyProgram(P)));
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  for (const auto &M : P) {
    const InstTensorCompletion *TC = findCompletion(*M, "out-PTCOM");
    ASSERT_NE(TC, nullptr);
    EXPECT_EQ(waitsOf(*TC),
              (std::vector<std::string>{"0:send_entry", "1:send_entry",
                                        "2:send_entry", "3:send_entry"}));
  }
  EXPECT_FALSE(bool(verifyProgram(P)));
}

TEST(InsertPTCOMFlat, OneCoreStillGetsCompletionsForSharedDRAM) {
  // lnc_size 1 is not special: the core's SharedDRAM write is waited for.
  Program P = buildProgram({{"entry", {1}, Jump}, {"exit", {}, Ret}}, 1);
  MemoryLocation *Acc = addLoc(*P[0], "acc", 9, MemoryKind::SharedDRAM);
  BasicBlock *B = P[0]->getBlock(0);
  Instruction *St = B->insert(
      B->getFirstTerminator(),
      std::make_unique<InstDMACopy>("store", Engine::DMA0, false));
  St->addInput(whole(P[0]->getMemoryLocations().getMemlocByName("src")));
  St->addOutput(whole(Acc));
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  const InstTensorCompletion *TC = findCompletion(*P[0], "acc-PTCOM");
  ASSERT_NE(TC, nullptr);
  EXPECT_EQ(TC->getBasicBlock()->getName(), "entry");
  EXPECT_EQ(waitsOf(*TC), std::vector<std::string>{"0:store"});
}

/// Adds to block 0 of every core, before its branch, a second write of
/// `out`, a TensorCopy in between that depends on the first send, and makes
/// the second write depend on that copy.
void addChainedSecondWrite(Program &P) {
  for (auto &M : P) {
    BasicBlock *B = M->getBlock(0);
    Instruction *First = B->begin()->get();
    auto Pos = B->getFirstTerminator();
    MemoryLocation *Priv = M->getMemoryLocations().getMemlocByName("priv");
    Instruction *Mid = B->insert(
        Pos, std::make_unique<InstTensorCopy>("mid", Engine::ACT));
    Mid->addInput(whole(Priv));
    Mid->addOutput(whole(Priv));
    Mid->addDependency(First);
    Instruction *Second = B->insert(
        Pos, std::make_unique<InstDMACopy>("send_again", Engine(unsigned(Engine::DMA0) + 1), false));
    Second->addInput(First->inputs()[0]);
    Second->addOutput(First->outputs()[0]);
    Second->addDependency(Mid);
  }
}

TEST(InsertPTCOMFlat, AWriteCoveredThroughAnotherInstructionIsNotWaitedFor) {
  Program P = buildProgram({{"entry", {1}, Jump, 0, {0, 1}}, {"exit", {}, Ret}});
  addChainedSecondWrite(P);
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  const InstTensorCompletion *TC = findCompletion(*P[0], "out-PTCOM");
  ASSERT_NE(TC, nullptr);
  EXPECT_EQ(waitsOf(*TC),
            (std::vector<std::string>{"0:send_again", "1:send_again"}));
}

TEST(InsertPTCOMFlat, ADependencyOnABlockThatRanOnceBeforeCovers) {
  // entry and next each run once, entry first: send_next waits for the only
  // execution of send_entry, so only send_next is waited for.
  Program P = buildProgram({{"entry", {1}, Jump, 0, {0, 1}},
                            {"mid", {2}, Jump},
                            {"next", {3}, Jump, 0, {0, 1}},
                            {"exit", {}, Ret}});
  for (auto &M : P)
    M->getBlock(2)->begin()->get()->addDependency(
        M->getBlock(0)->begin()->get());
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  const InstTensorCompletion *TC = findCompletion(*P[1], "out-PTCOM");
  ASSERT_NE(TC, nullptr);
  EXPECT_EQ(TC->getBasicBlock()->getName(), "next");
  EXPECT_EQ(waitsOf(*TC),
            (std::vector<std::string>{"0:send_next", "1:send_next"}));
}

TEST(InsertPTCOMFlat, ADependencyIntoALoopCoversNothing) {
  // send_after depends on send_body, which runs three times: the dependency
  // names only its last execution, so send_body is waited for too.
  Program P = buildProgram({{"entry", {1}, Jump},
                            {"body", {1, 2}, Loop, 3, {0, 1}},
                            {"after", {3}, Jump, 0, {0, 1}},
                            {"exit", {}, Ret}});
  for (auto &M : P)
    M->getBlock(2)->begin()->get()->addDependency(
        M->getBlock(1)->begin()->get());
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  const InstTensorCompletion *TC = findCompletion(*P[0], "out-PTCOM");
  ASSERT_NE(TC, nullptr);
  EXPECT_EQ(TC->getBasicBlock()->getName(), "after");
  EXPECT_EQ(waitsOf(*TC),
            (std::vector<std::string>{"0:send_body", "0:send_after",
                                      "1:send_body", "1:send_after"}));
}

TEST(InsertPTCOMFlat, WithoutADependencyEveryBlocksWriteIsWaitedFor) {
  Program P = buildProgram({{"entry", {1}, Jump, 0, {0, 1}},
                            {"next", {2}, Jump, 0, {0, 1}},
                            {"exit", {}, Ret}});
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  const InstTensorCompletion *TC = findCompletion(*P[0], "out-PTCOM");
  ASSERT_NE(TC, nullptr);
  EXPECT_EQ(waitsOf(*TC),
            (std::vector<std::string>{"0:send_entry", "0:send_next",
                                      "1:send_entry", "1:send_next"}));
}

TEST(InsertPTCOMFlat, SecondRunChangesNothing) {
  Program P = buildProgram({{"entry", {1, 2}, Loop, 2},
                            {"a", {}, Ret, 0, {0, 1}},
                            {"b", {}, Ret, 0, {0, 1}}});
  ASSERT_TRUE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  std::string Once = formatProgram(P);
  EXPECT_FALSE(llvm::cantFail(InsertPTCOMFlat({}).run(P)));
  EXPECT_EQ(formatProgram(P), Once);
  EXPECT_NE(findCompletion(*P[0], "out-PTCOM"), nullptr);
  EXPECT_NE(findCompletion(*P[0], "out-PTCOM-1"), nullptr);
}

TEST(InsertPTCOMFlat, FailureLeavesTheProgramUntouched) {
  // Subgraph 0 could get its completion; subgraph 1's name is taken.
  Program P = buildProgram({{"entry", {1}, Jump, 0, {0, 1}}, {"exit", {}, Ret}});
  Program Q = buildProgram({{"entry", {1}, Jump, 0, {0, 1}}, {"exit", {}, Ret}});
  for (auto &M : Q) {
    llvm::json::Value V = moduleToJson(*M);
    (*V.getAsObject())["subgraph_id"] = 1;
    M = llvm::cantFail(moduleFromJson(V, "$"));
    M->getBlock(0)->begin()->get()->setName("out-PTCOM");
  }
  for (auto &M : Q)
    P.push_back(std::move(M));
  std::string Before = formatProgram(P);
  llvm::Expected<bool> Changed = InsertPTCOMFlat({}).run(P);
  ASSERT_FALSE(bool(Changed));
  EXPECT_EQ(llvm::toString(Changed.takeError()),
            "subgraph 1: core 0 already has an instruction 'out-PTCOM' that "
            "is not the completion of 'out'");
  EXPECT_EQ(formatProgram(P), Before);
}

TEST(InsertPTCOMFlat, SharedLocationMissingOnCore0IsAnError) {
  Program P = buildProgram({{"entry", {1}, Jump, 0, {1}}, {"exit", {}, Ret}});
  // Core 1 writes a SharedDRAM location that core 0 does not have.
  MemoryLocation *Only = addLoc(*P[1], "only_on_1", 9, MemoryKind::SharedDRAM);
  BasicBlock *B = P[1]->getBlock(0);
  Instruction *W = B->insert(B->getFirstTerminator(),
                             std::make_unique<InstMemset>("w", Engine::DVE, 0));
  W->addOutput(whole(Only));
  llvm::Expected<bool> Changed = InsertPTCOMFlat({}).run(P);
  ASSERT_FALSE(bool(Changed));
  EXPECT_EQ(llvm::toString(Changed.takeError()),
            "subgraph 0: shared location 'only_on_1' written on core 1 has no "
            "location of that name on core 0");
}

} // namespace
