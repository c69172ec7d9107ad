//===- LncSplitterTest.cpp - lnc_splitter and the pass registry -----------===//

#include "BirTestModules.h"

#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/LncSplitter.h"

#include "gtest/gtest.h"

using namespace loom::bir;
using namespace loom::bir::test;

namespace {

std::unique_ptr<Module> smallModule(unsigned Subgraph = 0, unsigned Lnc = 2) {
  std::unique_ptr<Module> M = buildSmallModule().M;
  M->getTargetOptions().LncSize = Lnc;
  if (Subgraph == 0)
    return M;
  // Same content under another subgraph id.
  llvm::json::Value V = moduleToJson(*M);
  (*V.getAsObject())["subgraph_id"] = Subgraph;
  return llvm::cantFail(moduleFromJson(V, "$"));
}

/// The saved form of M as if it ran on core 0.
std::string savedOnCore0(const Module &M) {
  llvm::json::Value V = moduleToJson(M);
  (*V.getAsObject())["neuron_core_id"] = 0;
  return llvm::formatv("{0:2}", V).str();
}

TEST(LncSplitter, OneModulePerCoreIdenticalButForTheCoreId) {
  Program P;
  P.push_back(smallModule());
  std::string Original = savedOnCore0(*P[0]);

  llvm::Expected<bool> Changed = LncSplitter().run(P);
  ASSERT_TRUE(bool(Changed)) << llvm::toString(Changed.takeError());
  EXPECT_TRUE(*Changed);
  ASSERT_EQ(P.size(), 2u);
  for (unsigned Core = 0; Core < 2; ++Core) {
    EXPECT_EQ(P[Core]->getNeuronCoreId(), Core);
    EXPECT_EQ(P[Core]->getName(), "m");
    EXPECT_EQ(savedOnCore0(*P[Core]), Original);
  }
  EXPECT_EQ(errorText(verifyProgram(P)), "");
}

// Core 0 keeps the module itself, so a split of L cores holds L modules at
// its peak rather than L + 1 (docs/bir.md, "lnc_splitter").
TEST(LncSplitter, CoreZeroKeepsTheModule) {
  Program P;
  P.push_back(smallModule(0, 4));
  P[0]->getTargetOptions().Arch = Target::Generic;
  const Module *Original = P[0].get();
  ASSERT_TRUE(llvm::cantFail(LncSplitter().run(P)));
  ASSERT_EQ(P.size(), 4u);
  EXPECT_EQ(P[0].get(), Original);
  for (unsigned Core = 1; Core < 4; ++Core) {
    EXPECT_NE(P[Core].get(), Original);
    EXPECT_EQ(P[Core]->getNeuronCoreId(), Core);
  }
}

TEST(LncSplitter, CopiesShareNoPointers) {
  Program P;
  P.push_back(smallModule());
  ASSERT_TRUE(llvm::cantFail(LncSplitter().run(P)));
  const MemoryLocationSet &Core0 = P[0]->getMemoryLocations();
  const MemoryLocationSet &Core1 = P[1]->getMemoryLocations();
  EXPECT_NE(Core0.getMemlocByName("a"), Core1.getMemlocByName("a"));
  EXPECT_EQ(Core1.getMemlocByTensorId(0), Core1.getMemlocByName("a"));
  const Instruction &Barrier = *P[1]->getBlock(1)->begin()->get();
  ASSERT_EQ(Barrier.dependencies().size(), 1u);
  EXPECT_EQ(Barrier.dependencies()[0]->getModule(), P[1].get());
}

TEST(LncSplitter, LncOneKeepsTheModule) {
  Program P;
  P.push_back(returnOnlyModule(TargetOptions{1, Target::Trn1}));
  Module *Before = P[0].get();
  EXPECT_FALSE(llvm::cantFail(LncSplitter().run(P)));
  ASSERT_EQ(P.size(), 1u);
  EXPECT_EQ(P[0].get(), Before);
}

TEST(LncSplitter, SplitProgramIsUnchanged) {
  Program P;
  P.push_back(smallModule());
  ASSERT_TRUE(llvm::cantFail(LncSplitter().run(P)));
  std::string Saved = formatProgram(P);
  Module *Core1 = P[1].get();
  EXPECT_FALSE(llvm::cantFail(LncSplitter().run(P)));
  EXPECT_EQ(P[1].get(), Core1);
  EXPECT_EQ(formatProgram(P), Saved);
}

TEST(LncSplitter, SplitsOnlyTheSubgraphsThatNeedIt) {
  // Subgraph 3 is split already, listed core 1 first; subgraph 7 is not.
  Program P;
  P.push_back(smallModule(3));
  P.back()->setNeuronCoreId(1);
  P.push_back(smallModule(7));
  P.push_back(smallModule(3));
  Module *Sub3Core1 = P[0].get();
  EXPECT_TRUE(llvm::cantFail(LncSplitter().run(P)));
  std::vector<std::pair<unsigned, unsigned>> Order;
  for (const auto &M : P)
    Order.push_back({M->getSubgraphId(), M->getNeuronCoreId()});
  EXPECT_EQ(Order, (std::vector<std::pair<unsigned, unsigned>>{
                       {3, 0}, {3, 1}, {7, 0}, {7, 1}}));
  EXPECT_EQ(P[1].get(), Sub3Core1);
}

TEST(LncSplitter, RefusesPartialSplitsUntouched) {
  Program P;
  P.push_back(smallModule());
  P.back()->setNeuronCoreId(1);
  P.push_back(smallModule(5));
  Module *First = P[0].get();
  EXPECT_EQ(errorText(LncSplitter().run(P).takeError()),
            "subgraph 0 has 1 module(s); expected one for core 0, or one for "
            "each of cores 0..1");
  ASSERT_EQ(P.size(), 2u);
  EXPECT_EQ(P[0].get(), First);
}

TEST(LncSplitter, RefusesDisagreeingLncSizes) {
  Program P;
  P.push_back(smallModule());
  P.push_back(smallModule(1, 1));
  EXPECT_EQ(errorText(LncSplitter().run(P).takeError()),
            "$.modules[1] has lnc_size 1, $.modules[0] 2");
}

TEST(BirPassRegistry, CreatesByName) {
  std::vector<llvm::StringRef> Names = getPassNames();
  EXPECT_TRUE(llvm::is_contained(Names, "lnc_splitter"));
  EXPECT_TRUE(llvm::is_sorted(Names));
  llvm::Expected<std::unique_ptr<BirPass>> P = createPass("lnc_splitter");
  ASSERT_TRUE(bool(P));
  EXPECT_EQ((*P)->name(), "lnc_splitter");
  EXPECT_EQ(errorText(createPass("lnc_spliter").takeError()),
            "unknown pass 'lnc_spliter'; valid passes: " +
                llvm::join(Names, ", "));
}

} // namespace
