//===- ProgramTest.cpp - Program, Module::clone and walk ------------------===//

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Program.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

using namespace loom::bir;

namespace {

Program load(const std::string &File) {
  auto Buf = llvm::MemoryBuffer::getFile(File);
  EXPECT_TRUE(bool(Buf)) << File;
  if (!Buf)
    return Program();
  llvm::Expected<Program> P = parseProgram((*Buf)->getBuffer(), File);
  EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
  return P ? std::move(*P) : Program();
}

std::unique_ptr<Module> emptyModule(unsigned Subgraph, unsigned Core) {
  TargetOptions O;
  O.LncSize = 2;
  auto M = std::make_unique<Module>("m", Core, Subgraph, O);
  BasicBlock *BB = M->createBlock("entry");
  BB->append(std::make_unique<InstBranch>("ret", Engine::SP,
                                          BranchKind::Return));
  return M;
}

// A clone saves to the same bytes and shares no object with its original:
// every pointer of the copy (locations of access patterns, successors,
// dependencies, users) points into the copy.
TEST(Program, CloneIsDeep) {
  Program P = load(LOOM_SOURCE_DIR "/examples/bir/lnc2_matmul_allreduce.json");
  ASSERT_FALSE(P.empty());
  Program C = P.clone();
  EXPECT_EQ(formatProgram(C), formatProgram(P));
  for (size_t I = 0; I < P.size(); ++I) {
    llvm::DenseSet<const void *> Original;
    for (const auto &L : P[I]->getMemoryLocations().locations())
      Original.insert(L.get());
    for (const auto &BB : P[I]->blocks())
      Original.insert(BB.get());
    P[I]->walk([&](Instruction &X) { Original.insert(&X); });
    unsigned Seen = 0;
    C[I]->walk([&](BasicBlock &BB, Instruction &X) {
      ++Seen;
      EXPECT_FALSE(Original.count(&X));
      EXPECT_EQ(X.getModule(), C[I].get());
      for (const BasicBlock *S : BB.successors())
        EXPECT_FALSE(Original.count(S));
      for (const Instruction *D : X.dependencies())
        EXPECT_EQ(D->getModule(), C[I].get());
      for (const Instruction *U : X.users())
        EXPECT_EQ(U->getModule(), C[I].get());
      for (const AccessPattern &AP : X.inputs())
        EXPECT_TRUE(C[I]->getMemoryLocations().contains(AP.getLocation()));
      for (const AccessPattern &AP : X.outputs())
        EXPECT_TRUE(C[I]->getMemoryLocations().contains(AP.getLocation()));
    });
    EXPECT_GT(Seen, 0u);
  }
  // Changing the copy leaves the original alone.
  std::string Before = formatProgram(P);
  C[0]->setNeuronCoreId(1);
  C[0]->getBlock(0)->removeInstruction(C[0]->getBlock(0)->begin()->get());
  EXPECT_EQ(formatProgram(P), Before);
}

// Every field of the newer opcodes and a location's initial data survive a
// clone (Module::clone has a case per opcode).
TEST(Program, CloneKeepsTheNewOpcodesAndInitialData) {
  for (const char *Name : {"select", "tensor-reduce", "iota", "tensor-convert",
                           "activation-funcs", "tensor-tensor-ops",
                           "initial-data"}) {
    Program P = load(std::string(LOOM_SOURCE_DIR "/test/bir/sim/Inputs/") +
                     Name + ".json");
    ASSERT_FALSE(P.empty()) << Name;
    EXPECT_EQ(formatProgram(P.clone()), formatProgram(P)) << Name;
  }
}

// subgraphs() groups by first appearance and orders each subgraph by core,
// whatever the order of the list.
TEST(Program, SubgraphsIndexModulesByCore) {
  Program P;
  P.push_back(emptyModule(7, 1));
  P.push_back(emptyModule(3, 0));
  P.push_back(emptyModule(7, 0));
  std::vector<Subgraph> S = P.subgraphs();
  ASSERT_EQ(S.size(), 2u);
  EXPECT_EQ(S[0].getId(), 7u);
  EXPECT_EQ(S[0].getModule(0), P[2].get());
  EXPECT_EQ(S[0].getModule(1), P[0].get());
  EXPECT_EQ(S[0].getModule(2), nullptr);
  EXPECT_EQ(S[0].indices(), llvm::ArrayRef<unsigned>({2, 0}));
  EXPECT_TRUE(S[0].isSplit(2));
  EXPECT_EQ(S[1].getId(), 3u);
  EXPECT_FALSE(S[1].isSplit(2));
  EXPECT_TRUE(S[1].isSplit(1));
}

// The documented order is enforced: by subgraph, then by core.
TEST(Program, VerifierRequiresSubgraphThenCoreOrder) {
  Program Cores;
  Cores.push_back(emptyModule(0, 1));
  Cores.push_back(emptyModule(0, 0));
  llvm::Error E = verifyProgram(Cores);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "$.modules[1]: core 0 of subgraph 0 comes after core 1; a "
            "program lists its modules by subgraph, then by core");

  Program Split;
  Split.push_back(emptyModule(0, 0));
  Split.push_back(emptyModule(1, 0));
  Split.push_back(emptyModule(0, 1));
  E = verifyProgram(Split);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "$.modules[2]: subgraph 0 appears again after subgraph 1; a "
            "program lists its modules by subgraph, then by core");

  // Subgraphs need not be in ascending order.
  Program Ordered;
  Ordered.push_back(emptyModule(1, 0));
  Ordered.push_back(emptyModule(0, 0));
  Ordered.push_back(emptyModule(0, 1));
  EXPECT_FALSE(bool(verifyProgram(Ordered)));
}

} // namespace
