//===- BirIRTest.cpp - The BIR classes ------------------------------------===//

#include "BirTestModules.h"

#include "loom/bir/analysis/CFGView.h"
#include "loom/bir/ir/Printer.h"

#include "gtest/gtest.h"

using namespace loom::bir;
using namespace loom::bir::test;

namespace {

TEST(BirTypes, DataTypeSizesAndNames) {
  struct Expect {
    DataType T;
    unsigned Size;
    const char *Name;
  } Table[] = {
      {DataType::FP32, 4, "fp32"},       {DataType::BF16, 2, "bf16"},
      {DataType::FP16, 2, "fp16"},       {DataType::FP8E4M3, 1, "fp8e4m3"},
      {DataType::FP8E5M2, 1, "fp8e5m2"}, {DataType::INT8, 1, "int8"},
      {DataType::INT16, 2, "int16"},     {DataType::INT32, 4, "int32"},
      {DataType::UINT8, 1, "uint8"},     {DataType::UINT16, 2, "uint16"},
      {DataType::UINT32, 4, "uint32"},   {DataType::INT64, 8, "int64"},
      {DataType::UINT64, 8, "uint64"}};
  // The ordinals are a contract (docs/bir.md, "Data types").
  EXPECT_EQ(static_cast<unsigned>(DataType::UINT32), 10u);
  EXPECT_EQ(static_cast<unsigned>(DataType::INT64), 11u);
  EXPECT_EQ(static_cast<unsigned>(DataType::UINT64), 12u);
  ASSERT_EQ(enumNames<DataType>().size(), std::size(Table));
  for (const Expect &E : Table) {
    EXPECT_EQ(getDataTypeSize(E.T), E.Size) << E.Name;
    EXPECT_EQ(enumName(E.T), E.Name);
    EXPECT_EQ(parseEnum<DataType>(E.Name), E.T);
  }
  EXPECT_TRUE(isFloatType(DataType::FP8E5M2));
  EXPECT_FALSE(isFloatType(DataType::INT8));
  EXPECT_EQ(parseEnum<DataType>("fp64"), std::nullopt);
}

TEST(BirTypes, EnginesAndOrdinals) {
  EXPECT_EQ(enumName(Engine::DMA0), "DMA0");
  EXPECT_EQ(enumName(Engine::DMALast), "DMA15");
  EXPECT_EQ(parseEnum<Engine>("DMA7"),
            static_cast<Engine>(int(Engine::DMA0) + 7));
  EXPECT_TRUE(isDMAQueue(Engine::DMALast));
  EXPECT_FALSE(isDMAQueue(Engine::SP));

  EXPECT_EQ(static_cast<int>(InstructionType::GPSIMDSB2SB), 33);
  EXPECT_EQ(static_cast<int>(InstructionType::CollectiveCompute), 48);
  EXPECT_EQ(static_cast<int>(InstructionType::CoreBarrier), 87);
  EXPECT_EQ(static_cast<int>(InstructionType::TensorCompletion), 94);
  for (InstructionType T : allInstructionTypes())
    EXPECT_EQ(parseInstructionType(getInstructionTypeName(T)), T);

  EXPECT_EQ(static_cast<int>(CollectiveKind::SendRecv), 0);
  EXPECT_EQ(static_cast<int>(CollectiveKind::AllReduce), 2);
  EXPECT_EQ(static_cast<int>(CollectiveKind::PermuteReduceImplicit), 10);
  EXPECT_EQ(enumNames<CollectiveKind>().size(), 11u);
  EXPECT_EQ(enumName(CollectiveKind::AllToAllV), "AllToAllV");
}

TEST(BirAccessPattern, ElementCounts) {
  MemoryLocation L("l", 0, MemoryKind::SB, DataType::BF16, 128, 4096);
  AccessPattern AP(&L, 0, 64, 0, {{512, 4}, {1, 128}}, DataType::BF16);
  EXPECT_EQ(AP.getNumElementsPerPartition(), 512u);
  EXPECT_EQ(AP.getNumElements(), 64u * 512);
  AP.setPattern({});
  EXPECT_EQ(AP.getNumElementsPerPartition(), 1u);
  AP.setPattern({{1, uint64_t(1) << 40}, {1, uint64_t(1) << 40}});
  EXPECT_EQ(AP.getNumElementsPerPartition(), UINT64_MAX);
}

TEST(BirAccessPattern, ByteRange) {
  MemoryLocation L("l", 0, MemoryKind::SB, DataType::FP32, 128, 1024);
  AccessPattern AP(&L, 0, 128, 16, {{64, 2}, {1, 8}}, DataType::FP32);
  auto R = AP.getByteRange();
  ASSERT_TRUE(R);
  EXPECT_EQ(R->Begin, 16u);
  EXPECT_EQ(R->End, 16u + (64 + 7 + 1) * 4);

  // A reversed walk ends at its offset.
  AP.setOffset(1020);
  AP.setPattern({{-1, 256}});
  R = AP.getByteRange();
  ASSERT_TRUE(R);
  EXPECT_EQ(R->Begin, 0u);
  EXPECT_EQ(R->End, 1024u);

  AP.setOffset(1016);
  EXPECT_FALSE(AP.getByteRange()) << "reaches below byte 0";
  AP.setPattern({{INT64_MAX, 3}});
  EXPECT_FALSE(AP.getByteRange()) << "overflows";
  AP.setPattern({{1, 0}});
  EXPECT_FALSE(AP.getByteRange()) << "empty dimension";
}

TEST(BirAccessPattern, CloneAndSetters) {
  MemoryLocation L1("l1", 0, MemoryKind::SB, DataType::FP32, 128, 1024);
  MemoryLocation L2("l2", 1, MemoryKind::SB, DataType::BF16, 128, 1024);
  AccessPattern AP(&L1, 0, 128, 0, {{1, 4}}, DataType::FP32);
  AccessPattern C = AP.clone();
  C.setLocation(&L2);
  C.setType(DataType::BF16);
  C.setOffset(8);
  C.setPartitions(32, 16);
  EXPECT_EQ(AP.getLocation(), &L1);
  EXPECT_EQ(C.getLocation(), &L2);
  EXPECT_EQ(C.getType(), DataType::BF16);
  EXPECT_EQ(C.getOffset(), 8u);
  EXPECT_EQ(C.getStartPartition(), 32u);
  EXPECT_EQ(C.getNumPartitions(), 16u);
  EXPECT_EQ(C.getPattern(), AP.getPattern());
}

TEST(BirMemoryLocationSet, LookupAndUniqueness) {
  Module M("m", 0, 0, TargetOptions{});
  MemoryLocation *X =
      addLocation(M, "x", 7, MemoryKind::DRAM, DataType::INT8, 4, 16);
  MemoryLocationSet &Set = M.getMemoryLocations();
  EXPECT_EQ(Set.getMemlocByName("x"), X);
  EXPECT_EQ(Set.getMemlocByTensorId(7), X);
  EXPECT_EQ(Set.getMemlocByName("y"), nullptr);
  EXPECT_EQ(Set.getMemlocByTensorId(8), nullptr);
  EXPECT_TRUE(Set.contains(X));
  MemoryLocation Outside("x", 7, MemoryKind::DRAM, DataType::INT8, 4, 16);
  EXPECT_FALSE(Set.contains(&Outside));

  auto Dup = [](std::string Name, uint64_t Id) {
    return std::make_unique<MemoryLocation>(Name, Id, MemoryKind::SB,
                                            DataType::FP32, 1, 4);
  };
  EXPECT_EQ(errorText(Set.add(Dup("x", 9)).takeError()),
            "duplicate memory location name 'x'");
  EXPECT_EQ(errorText(Set.add(Dup("z", 7)).takeError()),
            "tensor id 7 of 'z' is already used by 'x'");
  EXPECT_EQ(Set.size(), 1u);

  X->setIsWrittenByAnotherCore(true);
  X->setIsAllocated(true);
  EXPECT_TRUE(X->isWrittenByAnotherCore());
  EXPECT_TRUE(X->isAllocated());
}

TEST(BirBasicBlock, InsertBeforeTerminator) {
  SmallModule S = buildSmallModule();
  BasicBlock::iterator Term = S.Exit->getFirstTerminator();
  ASSERT_NE(Term, S.Exit->end());
  EXPECT_EQ(Term->get(), S.Ret);

  Instruction *Done = S.Exit->insert(
      Term, std::make_unique<InstTensorCompletion>("done", Engine::SP));
  Done->addInput(tile(S.A, 256));
  EXPECT_EQ(Done->getBasicBlock(), S.Exit);
  EXPECT_EQ(Done->getModule(), S.M.get());
  std::vector<std::string> Names;
  for (const auto &I : *S.Exit)
    Names.push_back(I->getName().str());
  EXPECT_EQ(Names, (std::vector<std::string>{"cb", "done", "ret"}));
  EXPECT_EQ(std::next(Done->getIterator())->get(), S.Ret);
}

TEST(BirBasicBlock, FirstTerminatorOfOpenBlock) {
  Module M("m", 0, 0, TargetOptions{});
  BasicBlock *BB = M.createBlock("b");
  EXPECT_EQ(BB->getFirstTerminator(), BB->end());
  BB->append(std::make_unique<InstTensorCopy>("c", Engine::DVE));
  EXPECT_EQ(BB->getFirstTerminator(), BB->end());
}

TEST(BirBasicBlock, RemoveDropsDependencyEdges) {
  SmallModule S = buildSmallModule();
  ASSERT_EQ(S.Copy->users().size(), 1u);
  ASSERT_EQ(S.Barrier->dependencies().size(), 1u);

  S.Entry->removeInstruction(S.Double);
  EXPECT_TRUE(S.Copy->users().empty());
  EXPECT_TRUE(S.Barrier->dependencies().empty());
  EXPECT_EQ(S.Entry->size(), 2u);
}

TEST(BirInstruction, DependencyEdgesStayPaired) {
  SmallModule S = buildSmallModule();
  S.Barrier->addDependency(S.Copy);
  S.Barrier->addDependency(S.Copy);
  EXPECT_EQ(S.Barrier->dependencies(),
            (llvm::ArrayRef<Instruction *>{S.Double, S.Copy}));
  EXPECT_EQ(S.Copy->users().size(), 2u);
  S.Barrier->removeDependency(S.Copy);
  EXPECT_EQ(S.Copy->users(), llvm::ArrayRef<Instruction *>{S.Double});
}

TEST(BirInstruction, Casting) {
  SmallModule S = buildSmallModule();
  EXPECT_TRUE(llvm::isa<InstTensorCopy>(S.Copy));
  EXPECT_FALSE(llvm::isa<InstTensorCompletion>(S.Copy));
  auto *CB = llvm::dyn_cast<InstCoreBarrier>(S.Barrier);
  ASSERT_TRUE(CB);
  EXPECT_EQ(CB->getCores(), (llvm::ArrayRef<unsigned>{0, 1}));
  EXPECT_TRUE(S.Ret->isTerminator());
  EXPECT_EQ(llvm::cast<InstBranch>(S.Ret)->getNumSuccessors(), 0u);
}

TEST(BirInstruction, SB2SBEffectiveBytes) {
  // Every element takes a 4-byte lane.
  EXPECT_EQ(InstGPSIMDSB2SB::getEffectiveBytesPerPartition(256, DataType::INT8),
            1024u);
  EXPECT_EQ(InstGPSIMDSB2SB::getEffectiveBytesPerPartition(512, DataType::BF16),
            1024u);
  EXPECT_EQ(
      InstGPSIMDSB2SB::getEffectiveBytesPerPartition(1024, DataType::FP32),
      1024u);
}

// Destroying a module forgets its own edges at once but still removes the
// edges that reach another module, so that one stays consistent.
TEST(BirModule, TeardownKeepsOtherModulesConsistent) {
  auto A = std::make_unique<Module>("a", 0, 0, TargetOptions{});
  Module B("b", 0, 0, TargetOptions{});
  BasicBlock *BA = A->createBlock("entry");
  BasicBlock *BB = B.createBlock("entry");
  Instruction *A0 =
      BA->append(std::make_unique<InstTensorCopy>("a0", Engine::DVE));
  Instruction *A1 =
      BA->append(std::make_unique<InstTensorCopy>("a1", Engine::DVE));
  Instruction *B0 =
      BB->append(std::make_unique<InstTensorCopy>("b0", Engine::DVE));
  Instruction *B1 =
      BB->append(std::make_unique<InstTensorCopy>("b1", Engine::DVE));
  A1->addNewDependency(A0);
  B0->addNewDependency(A1);
  A0->addNewDependency(B1);
  A.reset();
  EXPECT_TRUE(B0->dependencies().empty());
  EXPECT_TRUE(B1->users().empty());
}

TEST(BirInstruction, AddNewDependencyPairsTheEdge) {
  Module M("m", 0, 0, TargetOptions{});
  BasicBlock *BB = M.createBlock("entry");
  Instruction *P =
      BB->append(std::make_unique<InstTensorCopy>("p", Engine::DVE));
  Instruction *U =
      BB->append(std::make_unique<InstTensorCopy>("u", Engine::DVE));
  U->addNewDependency(P);
  ASSERT_EQ(U->dependencies().size(), 1u);
  EXPECT_EQ(U->dependencies()[0], P);
  ASSERT_EQ(P->users().size(), 1u);
  EXPECT_EQ(P->users()[0], U);
}

TEST(BirModule, CFGView) {
  Module M("m", 0, 0, TargetOptions{});
  BasicBlock *Entry = M.createBlock("entry");
  BasicBlock *Loop = M.createBlock("loop");
  BasicBlock *Exit = M.createBlock("exit");
  Entry->addSuccessor(Loop);
  Loop->addSuccessor(Loop);
  Loop->addSuccessor(Exit);
  analysis::CFGView G = analysis::getCFGView(M);
  EXPECT_EQ(G.NumBlocks, 3u);
  EXPECT_EQ(G.Entry, 0u);
  EXPECT_EQ(G.Succs, (std::vector<std::vector<unsigned>>{{1}, {1, 2}, {}}));
  EXPECT_EQ(M.getBlock(1), Loop);
}

TEST(BirPrinter, OneLinePerInstruction) {
  SmallModule S = buildSmallModule();
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printModule(OS, *S.M);
  EXPECT_EQ(
      OS.str(),
      "module m core=0 subgraph=0 lnc_size=2 target=trn2\n"
      "  memloc a: SB fp32 [128 x 1024 B] tensor=0\n"
      "  memloc b: SB fp32 [128 x 1024 B] tensor=1\n"
      "^entry -> ^exit\n"
      "  %copy = TensorCopy[DVE] out=b[0:128, +0, (1,256), fp32] "
      "in=a[0:128, +0, (1,256), fp32]\n"
      "  %double = TensorTensor[DVE] op=Add out=a[0:128, +0, (1,256), fp32] "
      "in=b[0:128, +0, (1,256), fp32], b[0:128, +0, (1,256), fp32] "
      "deps=(%copy)\n"
      "  %jump = Branch[SP] kind=Jump\n"
      "^exit\n"
      "  %cb = CoreBarrier[POOL] id=0 cores=[0,1] deps=(%double)\n"
      "  %ret = Branch[SP] kind=Return\n");
}

} // namespace
