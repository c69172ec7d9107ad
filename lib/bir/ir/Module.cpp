#include "loom/bir/ir/Module.h"

#include "loom/bir/ir/Instructions.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

namespace loom::bir {

Module::~Module() {
  for (const auto &BB : Blocks)
    for (const auto &I : *BB)
      I->dropEdgesForModuleTeardown(this);
}

BasicBlock *Module::createBlock(std::string BlockName) {
  Blocks.push_back(std::make_unique<BasicBlock>(std::move(BlockName), this));
  return Blocks.back().get();
}

namespace {

/// A new instruction of I's opcode with I's name, engine and own fields;
/// operands and dependencies are the caller's. Every opcode has a case, so
/// a new opcode without one is a -Wswitch warning.
std::unique_ptr<Instruction> cloneFields(const Instruction &I) {
  std::string Name = I.getName().str();
  Engine E = I.getEngine();
  switch (I.getType()) {
  case InstructionType::TensorCopy:
    return std::make_unique<InstTensorCopy>(std::move(Name), E);
  case InstructionType::TensorCompletion: {
    auto C = std::make_unique<InstTensorCompletion>(std::move(Name), E);
    for (const CompletionWait &W : llvm::cast<InstTensorCompletion>(I).getWaits())
      C->addWait(W);
    return C;
  }
  case InstructionType::SemaphoreWait: {
    const auto &W = llvm::cast<InstSemaphoreWait>(I);
    return std::make_unique<InstSemaphoreWait>(
        std::move(Name), E, W.getSemaphore().str(), W.getCount());
  }
  case InstructionType::CollectiveCompute: {
    const auto &CC = llvm::cast<InstCollectiveCompute>(I);
    return std::make_unique<InstCollectiveCompute>(
        std::move(Name), E, CC.getKind(),
        std::vector<unsigned>(CC.getGroup().begin(), CC.getGroup().end()),
        CC.getReduceOp(), CC.isLocal());
  }
  case InstructionType::DMACopy: {
    const auto &D = llvm::cast<InstDMACopy>(I);
    auto C = std::make_unique<InstDMACopy>(std::move(Name), E, D.isAccumulate());
    if (D.getSignal())
      C->setSignal(D.getSignal()->Core, D.getSignal()->Semaphore);
    return C;
  }
  case InstructionType::IndirectDMACopy: {
    const auto &D = llvm::cast<InstIndirectDMACopy>(I);
    return std::make_unique<InstIndirectDMACopy>(
        std::move(Name), E, D.getSide(),
        std::vector<IndirectOffset>(D.getOffsets().begin(), D.getOffsets().end()),
        D.isAccumulate(), D.getBounds());
  }
  case InstructionType::GPSIMDSB2SB: {
    const auto &G = llvm::cast<InstGPSIMDSB2SB>(I);
    auto C = std::make_unique<InstGPSIMDSB2SB>(std::move(Name), E, G.isLowered());
    if (G.getSignal())
      C->setSignal(G.getSignal()->Core, G.getSignal()->Semaphore);
    return C;
  }
  case InstructionType::CoreBarrier: {
    const auto &B = llvm::cast<InstCoreBarrier>(I);
    return std::make_unique<InstCoreBarrier>(
        std::move(Name), E, B.getId(),
        std::vector<unsigned>(B.getCores().begin(), B.getCores().end()));
  }
  case InstructionType::Matmul:
    return std::make_unique<InstMatmul>(
        std::move(Name), E, llvm::cast<InstMatmul>(I).isAccumulate());
  case InstructionType::Activation: {
    const auto &A = llvm::cast<InstActivation>(I);
    return std::make_unique<InstActivation>(std::move(Name), E, A.getFunc(),
                                            A.getScale());
  }
  case InstructionType::TensorTensor:
    return std::make_unique<InstTensorTensor>(
        std::move(Name), E, llvm::cast<InstTensorTensor>(I).getOp());
  case InstructionType::Memset:
    return std::make_unique<InstMemset>(std::move(Name), E,
                                        llvm::cast<InstMemset>(I).getValue());
  case InstructionType::Select:
    return std::make_unique<InstSelect>(std::move(Name), E);
  case InstructionType::TensorConvert:
    return std::make_unique<InstTensorConvert>(std::move(Name), E);
  case InstructionType::TensorReduce: {
    const auto &R = llvm::cast<InstTensorReduce>(I);
    return std::make_unique<InstTensorReduce>(std::move(Name), E, R.getOp(),
                                              R.isAccumulate(), R.getInit());
  }
  case InstructionType::Iota: {
    const auto &T = llvm::cast<InstIota>(I);
    return std::make_unique<InstIota>(
        std::move(Name), E, T.getStart(), T.getPartitionStep(),
        std::vector<int64_t>(T.getMultipliers().begin(),
                             T.getMultipliers().end()));
  }
  case InstructionType::Branch: {
    const auto &B = llvm::cast<InstBranch>(I);
    return std::make_unique<InstBranch>(std::move(Name), E, B.getKind(),
                                        B.getTripCount());
  }
  }
  llvm_unreachable("an opcode without a clone case");
}

} // namespace

std::unique_ptr<Module> Module::clone() const {
  auto Copy =
      std::make_unique<Module>(Name, NeuronCoreId, SubgraphId, Options);
  llvm::DenseMap<const MemoryLocation *, MemoryLocation *> Locs;
  for (const auto &L : Locations.locations()) {
    auto NL = std::make_unique<MemoryLocation>(
        L->getName().str(), L->getTensorId(), L->getKind(), L->getType(),
        L->getNumPartitions(), L->getBytesPerPartition());
    NL->setIsWrittenByAnotherCore(L->isWrittenByAnotherCore());
    NL->setIsAllocated(L->isAllocated());
    if (L->getRemote())
      NL->setRemote(L->getRemote()->Core, L->getRemote()->MemLoc);
    if (L->hasInitialData())
      NL->setInitialData(L->getInitialData().vec());
    // The names and tensor ids are unique here already, so add cannot fail.
    llvm::Expected<MemoryLocation *> Added =
        Copy->getMemoryLocations().add(std::move(NL));
    assert(Added && "a module's locations have unique names and ids");
    Locs[L.get()] = *Added;
  }
  auto Rebind = [&](const AccessPattern &AP) {
    AccessPattern C = AP.clone();
    C.setLocation(Locs.lookup(AP.getLocation()));
    return C;
  };
  // Instructions first, then dependencies, which may point to later blocks.
  llvm::DenseMap<const Instruction *, Instruction *> Insts;
  llvm::DenseMap<const BasicBlock *, BasicBlock *> BlockCopies;
  for (const auto &BB : Blocks) {
    BasicBlock *NB = Copy->createBlock(BB->getName().str());
    BlockCopies[BB.get()] = NB;
    for (const auto &I : *BB) {
      std::unique_ptr<Instruction> NI = cloneFields(*I);
      for (const AccessPattern &AP : I->inputs())
        NI->addInput(Rebind(AP));
      for (const AccessPattern &AP : I->outputs())
        NI->addOutput(Rebind(AP));
      Insts[I.get()] = NB->append(std::move(NI));
    }
  }
  for (const auto &BB : Blocks)
    for (BasicBlock *S : BB->successors())
      BlockCopies[BB.get()]->addSuccessor(BlockCopies.lookup(S));
  walk([&](Instruction &I) {
    Instruction *NI = Insts.lookup(&I);
    for (Instruction *D : I.dependencies())
      NI->addNewDependency(Insts.lookup(D));
  });
  return Copy;
}

bool Subgraph::isSplit(unsigned Lnc) const {
  return Modules.size() == Lnc && ByCore.size() == Lnc &&
         llvm::none_of(ByCore, [](const Module *M) { return !M; });
}

std::vector<Subgraph> Program::subgraphs() const {
  std::vector<Subgraph> Out;
  llvm::DenseMap<unsigned, unsigned> Index;
  for (unsigned I = 0; I < Modules.size(); ++I) {
    Module *M = Modules[I].get();
    auto [It, New] = Index.try_emplace(M->getSubgraphId(), Out.size());
    if (New) {
      Out.emplace_back();
      Out.back().Id = M->getSubgraphId();
    }
    Subgraph &S = Out[It->second];
    S.Modules.push_back(M);
    S.Indices.push_back(I);
  }
  for (Subgraph &S : Out) {
    // By core, stable: a repeated core keeps program order.
    std::vector<unsigned> Order(S.Modules.size());
    for (unsigned K = 0; K < Order.size(); ++K)
      Order[K] = K;
    llvm::stable_sort(Order, [&](unsigned A, unsigned B) {
      return S.Modules[A]->getNeuronCoreId() < S.Modules[B]->getNeuronCoreId();
    });
    std::vector<Module *> Mods;
    std::vector<unsigned> Idx;
    for (unsigned K : Order) {
      Mods.push_back(S.Modules[K]);
      Idx.push_back(S.Indices[K]);
    }
    S.Modules = std::move(Mods);
    S.Indices = std::move(Idx);
    S.ByCore.assign(S.Modules.back()->getNeuronCoreId() + 1, nullptr);
    for (Module *M : S.Modules)
      if (!S.ByCore[M->getNeuronCoreId()])
        S.ByCore[M->getNeuronCoreId()] = M;
  }
  return Out;
}

Program Program::clone() const {
  Program Copy;
  Copy.reserve(Modules.size());
  for (const std::unique_ptr<Module> &M : Modules)
    Copy.push_back(M->clone());
  return Copy;
}

} // namespace loom::bir
