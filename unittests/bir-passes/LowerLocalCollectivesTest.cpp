//===- LowerLocalCollectivesTest.cpp - lower_local_collectives and helpers ===//
//
// What the lit tests cannot reach through bir-opt: programs built in memory
// that the verifier would refuse on loading (the pass must refuse them too,
// and leave them as they were), the conditions of the GPSIMD compatibility
// check that a valid swap cannot fail alone, and the helpers' arithmetic.
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/CoreBarriers.h"
#include "loom/bir/passes/LowerLocalCollectives.h"
#include "loom/bir/passes/PartialAccessPatterns.h"
#include "loom/bir/passes/RemoteLocations.h"

#include "gtest/gtest.h"

#include <functional>

using namespace loom::bir;

namespace {

MemoryLocation *addLoc(Module &M, std::string Name, MemoryKind K, DataType T,
                       unsigned Parts = 128, uint64_t Bytes = 1024) {
  uint64_t Id = getFreshTensorId(M);
  return llvm::cantFail(M.getMemoryLocations().add(
      std::make_unique<MemoryLocation>(std::move(Name), Id, K, T, Parts,
                                       Bytes)));
}

AccessPattern tile(MemoryLocation *L, uint64_t N, unsigned Parts = 128,
                   int64_t Step = 1) {
  return AccessPattern(L, 0, Parts, 0, {{Step, N}}, L->getType());
}

/// One module per core 0..Cores-1 of a logical core of Lnc cores; each has
/// SB locations a and b and a block: init (Memset a), the collective made by
/// MakeCC(core) unless it returns null, return.
Program buildProgram(
    unsigned Lnc, unsigned Cores, Target T,
    const std::function<std::unique_ptr<InstCollectiveCompute>(unsigned)>
        &MakeCC) {
  Program P;
  for (unsigned C = 0; C < Cores; ++C) {
    auto M = std::make_unique<Module>("m", C, 0, TargetOptions{Lnc, T});
    MemoryLocation *A = addLoc(*M, "a", MemoryKind::SB, DataType::FP32);
    MemoryLocation *B = addLoc(*M, "b", MemoryKind::SB, DataType::FP32);
    BasicBlock *BB = M->createBlock("entry");
    Instruction *Init =
        BB->append(std::make_unique<InstMemset>("init", Engine::DVE, 1.0));
    Init->addOutput(tile(A, 64));
    if (std::unique_ptr<InstCollectiveCompute> CC = MakeCC(C)) {
      CC->addInput(tile(A, 64));
      CC->addOutput(tile(B, 64));
      CC->addDependency(Init);
      BB->append(std::move(CC));
    }
    BB->append(
        std::make_unique<InstBranch>("ret", Engine::SP, BranchKind::Return));
    P.push_back(std::move(M));
  }
  return P;
}

std::unique_ptr<InstCollectiveCompute>
makeCC(CollectiveKind K, std::vector<unsigned> Group,
       ReduceOp Op = ReduceOp::None, std::string Name = "cc") {
  return std::make_unique<InstCollectiveCompute>(std::move(Name), Engine::POOL,
                                                 K, std::move(Group), Op,
                                                 /*Local=*/true);
}

/// Runs the pass; returns its error text ("" on success) and checks that a
/// failure left the program exactly as it was.
std::string runExpectingUnchangedOnError(Program &P,
                                         const BackendOptions &O = {}) {
  std::string Before = formatProgram(P);
  LowerLocalCollectives Pass(O);
  llvm::Expected<bool> R = Pass.run(P);
  if (R)
    return "";
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_EQ(formatProgram(P), Before) << "a failing run changed the program";
  return Msg;
}

TEST(LowerLocalCollectives, SwapOfThreeCoresIsRefused) {
  Program P = buildProgram(4, 4, Target::Generic, [](unsigned C) {
    return C < 3 ? makeCC(CollectiveKind::SendRecv, {0, 1, 2}) : nullptr;
  });
  EXPECT_EQ(runExpectingUnchangedOnError(P),
            "SendRecv 'cc' on core 0: a swap needs a group of 2 cores, not 3 "
            "[0,1,2]");
}

TEST(LowerLocalCollectives, AllReduceWithoutReduceOpIsRefused) {
  Program P = buildProgram(2, 2, Target::Trn2, [](unsigned) {
    return makeCC(CollectiveKind::AllReduce, {0, 1}, ReduceOp::None);
  });
  EXPECT_EQ(runExpectingUnchangedOnError(P),
            "AllReduce 'cc' on core 0: an AllReduce needs a reduce op");
}

TEST(LowerLocalCollectives, ErrorLeavesEarlierGroupsUntouched) {
  // A valid swap first, then a bad AllReduce: nothing is lowered.
  Program P = buildProgram(2, 2, Target::Trn2, [](unsigned) {
    return makeCC(CollectiveKind::SendRecv, {0, 1}, ReduceOp::None, "swap");
  });
  for (unsigned C = 0; C < 2; ++C) {
    Module &M = *P[C];
    BasicBlock &BB = *M.getBlock(0);
    auto CC = makeCC(CollectiveKind::AllReduce, {0, 1}, ReduceOp::None, "ar");
    CC->addInput(tile(M.getMemoryLocations().getMemlocByName("b"), 64));
    CC->addOutput(tile(M.getMemoryLocations().getMemlocByName("a"), 64));
    BB.insert(BB.getFirstTerminator(), std::move(CC));
  }
  EXPECT_EQ(runExpectingUnchangedOnError(P),
            "AllReduce 'ar' on core 0: an AllReduce needs a reduce op");
}

TEST(LowerLocalCollectives, RemoteOperandNamingMissingCoreIsRefused) {
  Program P = buildProgram(2, 2, Target::Trn2, [](unsigned) {
    return makeCC(CollectiveKind::SendRecv, {0, 1});
  });
  // Core 0's output becomes a remote location of core 3, which is not in
  // the subgraph.
  Module &M = *P[0];
  MemoryLocation *R = addLoc(M, "b_remote_3", MemoryKind::SB, DataType::FP32);
  R->setRemote(3, "b");
  auto *CC = llvm::cast<InstCollectiveCompute>(
      std::next(M.getBlock(0)->begin())->get());
  CC->outputs()[0].setLocation(R);
  EXPECT_EQ(runExpectingUnchangedOnError(P),
            "collective 'cc' on core 0: remote location 'b_remote_3': there "
            "is no module for core 3 in this subgraph");
}

TEST(LowerLocalCollectives, RemoteOperandNamingMissingLocationIsRefused) {
  Program P = buildProgram(2, 2, Target::Trn2, [](unsigned) {
    return makeCC(CollectiveKind::AllGather, {0, 1});
  });
  Module &M = *P[1];
  MemoryLocation *R = addLoc(M, "z_remote_0", MemoryKind::SB, DataType::FP32);
  R->setRemote(0, "z");
  auto *CC = llvm::cast<InstCollectiveCompute>(
      std::next(M.getBlock(0)->begin())->get());
  CC->inputs()[0].setLocation(R);
  EXPECT_EQ(runExpectingUnchangedOnError(P),
            "collective 'cc' on core 1: remote location 'z_remote_0': core 0 "
            "has no memory location named 'z'");
}

TEST(LowerLocalCollectives, MissingCopyIsRefused) {
  Program P = buildProgram(2, 2, Target::Trn2, [](unsigned C) {
    return C == 1 ? makeCC(CollectiveKind::SendRecv, {0, 1}) : nullptr;
  });
  EXPECT_EQ(runExpectingUnchangedOnError(P),
            "collective 'cc' (group [0,1]) is on core 1 but missing on core 0");
}

TEST(LowerLocalCollectives, LncOneChangesNothing) {
  Program P = buildProgram(1, 1, Target::Trn2, [](unsigned) {
    return makeCC(CollectiveKind::AllReduce, {0}, ReduceOp::Add);
  });
  std::string Before = formatProgram(P);
  LowerLocalCollectives Pass({});
  llvm::Expected<bool> R = Pass.run(P);
  ASSERT_TRUE(bool(R));
  EXPECT_FALSE(*R);
  EXPECT_EQ(formatProgram(P), Before);
}

TEST(LowerLocalCollectives, SwapLoweringVerifiesAndRemovesTheCollective) {
  Program P = buildProgram(2, 2, Target::Trn2, [](unsigned) {
    return makeCC(CollectiveKind::SendRecv, {0, 1});
  });
  LowerLocalCollectives Pass({});
  llvm::Expected<bool> R = Pass.run(P);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_TRUE(*R);
  ASSERT_FALSE(bool(verifyProgram(P)));
  for (const auto &M : P) {
    std::vector<std::string> Names;
    for (const auto &I : *M->getBlock(0))
      Names.push_back(I->getName().str());
    EXPECT_EQ(Names, (std::vector<std::string>{"init", "cc_cb_begin",
                                               "cc_copy", "cc_cb_0_1",
                                               "cc_cb_end", "ret"}));
    EXPECT_TRUE(
        M->getMemoryLocations().getMemlocByName("b")->isWrittenByAnotherCore());
  }
  // Running again changes nothing.
  std::string Once = formatProgram(P);
  llvm::Expected<bool> Again = LowerLocalCollectives({}).run(P);
  ASSERT_TRUE(bool(Again));
  EXPECT_FALSE(*Again);
  EXPECT_EQ(formatProgram(P), Once);
}

TEST(LowerLocalCollectives, NamesAvoidExistingInstructions) {
  // A user instruction already called cc_cb_begin on core 1 only: the
  // barrier takes a free name, the same on both cores.
  Program P = buildProgram(2, 2, Target::Trn2, [](unsigned) {
    return makeCC(CollectiveKind::SendRecvCCE, {0, 1});
  });
  P[1]->getBlock(0)->begin()->get()->setName("cc_cb_begin");
  ASSERT_TRUE(bool(LowerLocalCollectives({}).run(P)));
  ASSERT_FALSE(bool(verifyProgram(P)));
  for (const auto &M : P) {
    auto It = std::next(M->getBlock(0)->begin());
    EXPECT_EQ((*It)->getName(), "cc_cb_begin.1");
  }
}

TEST(GPSIMDCompatibility, EachCondition) {
  Module M("m", 0, 0, TargetOptions{2, Target::Trn2});
  MemoryLocation *S = addLoc(M, "s", MemoryKind::SB, DataType::FP32);
  MemoryLocation *D = addLoc(M, "d", MemoryKind::SB, DataType::FP32);
  MemoryLocation *H = addLoc(M, "h", MemoryKind::SB, DataType::FP16);
  MemoryLocation *R = addLoc(M, "r", MemoryKind::DRAM, DataType::FP32);
  MemoryLocation *Q = addLoc(M, "q", MemoryKind::PSUM, DataType::FP32);
  EXPECT_TRUE(InstGPSIMDSB2SB::isCompatible(2, tile(S, 64), tile(D, 64)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(1, tile(S, 64), tile(D, 64)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(4, tile(S, 64), tile(D, 64)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(2, tile(S, 64), tile(R, 64)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(2, tile(Q, 64), tile(D, 64)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(2, tile(S, 64), tile(H, 64)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(2, tile(S, 64, 64), tile(D, 64)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(2, tile(S, 64), tile(D, 32)));
  EXPECT_FALSE(InstGPSIMDSB2SB::isCompatible(2, tile(S, 64), tile(D, 64, 128, 2)));
  // The same layout written two ways is compatible.
  AccessPattern Split(D, 0, 128, 0, {{32, 2}, {1, 32}}, DataType::FP32);
  EXPECT_TRUE(InstGPSIMDSB2SB::isCompatible(2, tile(S, 64), Split));
}

TEST(PartialAccessPatterns, ScatterDimension) {
  Module M("m", 0, 0, TargetOptions{2, Target::Trn2});
  MemoryLocation *L = addLoc(M, "l", MemoryKind::SB, DataType::FP32);
  AccessPattern AP(L, 0, 128, 0, {{64, 3}, {16, 4}, {1, 16}}, DataType::FP32);
  EXPECT_EQ(getScatterDimension(AP, 2), 1u);
  EXPECT_EQ(getScatterDimension(AP, 4), 1u);
  EXPECT_EQ(getScatterDimension(AP, 8), 2u);
  EXPECT_EQ(getScatterDimension(AP, 3), std::nullopt);
  AccessPattern Empty(L, 0, 128, 0, {}, DataType::FP32);
  EXPECT_EQ(getScatterDimension(Empty, 2), std::nullopt);
}

TEST(PartialAccessPatterns, Slices) {
  Module M("m", 0, 0, TargetOptions{2, Target::Trn2});
  MemoryLocation *L = addLoc(M, "l", MemoryKind::SB, DataType::BF16);
  AccessPattern AP(L, 0, 128, 8, {{64, 3}, {1, 8}}, DataType::BF16);
  AccessPattern S = createPartialAP(AP, {TensorSplit::Kind::FreeDim, 1, 4}, 3);
  EXPECT_EQ(S.getOffset(), 8u + 3 * 2 * 2);
  EXPECT_EQ(S.getPattern(), (llvm::ArrayRef<PatternDim>{{64, 3}, {1, 2}}));
  AccessPattern Neg(L, 0, 128, 100, {{-2, 8}}, DataType::BF16);
  AccessPattern N = createPartialAP(Neg, {TensorSplit::Kind::FreeDim, 0, 2}, 1);
  EXPECT_EQ(N.getOffset(), 100u - 4 * 2 * 2);
  AccessPattern P = createPartialAP(AP, {TensorSplit::Kind::Partitions, 0, 4}, 2);
  EXPECT_EQ(P.getStartPartition(), 64u);
  EXPECT_EQ(P.getNumPartitions(), 32u);
  EXPECT_EQ(P.getOffset(), 8u);
}

TEST(PartialAccessPatterns, NormalizeDenseOverlap) {
  EXPECT_EQ(normalizePattern({{32, 2}, {1, 32}}),
            (std::vector<PatternDim>{{1, 64}}));
  EXPECT_EQ(normalizePattern({{5, 1}, {2, 4}}),
            (std::vector<PatternDim>{{2, 4}}));
  EXPECT_EQ(normalizePattern({{64, 3}, {1, 32}}),
            (std::vector<PatternDim>{{64, 3}, {1, 32}}));
  Module M("m", 0, 0, TargetOptions{2, Target::Trn2});
  MemoryLocation *L = addLoc(M, "l", MemoryKind::SB, DataType::FP32);
  AccessPattern AP(L, 0, 128, 0, {{64, 3}, {2, 5}}, DataType::FP32);
  EXPECT_EQ(densePattern(AP), (std::vector<PatternDim>{{5, 3}, {1, 5}}));
  AccessPattern A(L, 0, 64, 0, {{1, 16}}, DataType::FP32);
  AccessPattern B(L, 64, 64, 0, {{1, 16}}, DataType::FP32);
  AccessPattern C(L, 0, 128, 64, {{1, 16}}, DataType::FP32);
  AccessPattern D(L, 0, 128, 60, {{1, 16}}, DataType::FP32);
  EXPECT_FALSE(mayOverlap(A, B));
  EXPECT_FALSE(mayOverlap(A, C));
  EXPECT_TRUE(mayOverlap(A, D));
}

TEST(RemoteLocations, MintedOncePerCoreAndMarked) {
  Module M0("m", 0, 0, TargetOptions{2, Target::Trn2});
  Module M1("m", 1, 0, TargetOptions{2, Target::Trn2});
  MemoryLocation *B0 = addLoc(M0, "b", MemoryKind::SB, DataType::FP32);
  MemoryLocation *B1 = addLoc(M1, "b", MemoryKind::SB, DataType::FP32);
  MemoryLocation *S0 = addLoc(M0, "s", MemoryKind::SharedDRAM, DataType::FP32);
  MemoryLocation *S1 = addLoc(M1, "s", MemoryKind::SharedDRAM, DataType::FP32);
  RemoteLocations R;
  MemoryLocation *Read = R.getMemoryLocation(M0, M1, *B1, false);
  EXPECT_EQ(Read->getName(), "b_remote_1");
  EXPECT_EQ(Read->getRemote()->Core, 1u);
  EXPECT_EQ(Read->getTensorId(), 2u);
  EXPECT_FALSE(B1->isWrittenByAnotherCore());
  EXPECT_EQ(R.getMemoryLocation(M0, M1, *B1, true), Read);
  EXPECT_TRUE(B1->isWrittenByAnotherCore());
  EXPECT_EQ(M0.getMemoryLocations().size(), 3u);
  EXPECT_EQ(R.getMemoryLocation(M0, M0, *B0, true), B0);
  EXPECT_EQ(R.getMemoryLocation(M1, M0, *S0, true), S1);
  EXPECT_EQ(getRemoteCores({0, 1, 2, 3}, 2), (std::vector<unsigned>{0, 1, 3}));
}

TEST(CoreBarriers, RenumberByNameAcrossCores) {
  Program P;
  for (unsigned C = 0; C < 2; ++C) {
    auto M = std::make_unique<Module>("m", C, 0, TargetOptions{2, Target::Trn2});
    BasicBlock *BB = M->createBlock("entry");
    // Core 1 lists its barriers with clashing, stale ids.
    insertCoreBarrier(*BB, BB->end(), "x", {0, 1}, Engine::POOL)->setId(7);
    insertCoreBarrier(*BB, BB->end(), "y", {0, 1}, Engine::POOL)->setId(7 * C);
    BB->append(
        std::make_unique<InstBranch>("ret", Engine::SP, BranchKind::Return));
    P.push_back(std::move(M));
  }
  EXPECT_TRUE(renumberCoreBarriers(P, 0));
  for (const auto &M : P) {
    auto It = M->getBlock(0)->begin();
    EXPECT_EQ(llvm::cast<InstCoreBarrier>(It->get())->getId(), 0u);
    EXPECT_EQ(llvm::cast<InstCoreBarrier>(std::next(It)->get())->getId(), 1u);
  }
  EXPECT_FALSE(renumberCoreBarriers(P, 0));
}

} // namespace
