#include "loom/bir/ir/Printer.h"

#include "loom/bir/ir/Instructions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

#include <cmath>

namespace loom::bir {

namespace {

// Shortest exact spelling, the same as the JSON form uses.
void printNumber(llvm::raw_ostream &OS, double V) {
  if (std::isnan(V))
    OS << "nan";
  else if (std::isinf(V))
    OS << (V > 0 ? "inf" : "-inf");
  else
    OS << llvm::json::Value(V);
}

void printCores(llvm::raw_ostream &OS, llvm::ArrayRef<unsigned> Cores) {
  OS << '[';
  llvm::interleave(Cores, OS, ",");
  OS << ']';
}

// The pattern is written "(step,count)" per dimension, never "[[", which
// FileCheck would read as a variable.
void printAccessPattern(llvm::raw_ostream &OS, const AccessPattern &AP) {
  const MemoryLocation *L = AP.getLocation();
  OS << (L ? L->getName() : "<null>") << '[' << AP.getStartPartition() << ':'
     << AP.getStartPartition() + AP.getNumPartitions() << ", +"
     << AP.getOffset() << ", ";
  if (AP.getPattern().empty())
    OS << "()";
  for (const PatternDim &D : AP.getPattern())
    OS << '(' << D.Step << ',' << D.Count << ')';
  OS << ", " << enumName(AP.getType()) << ']';
}

void printOperands(llvm::raw_ostream &OS, llvm::StringRef Label,
                   llvm::ArrayRef<AccessPattern> APs) {
  if (APs.empty())
    return;
  OS << ' ' << Label << '=';
  llvm::interleave(
      APs, OS, [&](const AccessPattern &AP) { printAccessPattern(OS, AP); },
      ", ");
}

void printFlag(llvm::raw_ostream &OS, bool Set, llvm::StringRef Name) {
  if (Set)
    OS << ' ' << Name;
}

void printAttributes(llvm::raw_ostream &OS, const Instruction &I) {
  using llvm::dyn_cast;
  if (const auto *CC = dyn_cast<InstCollectiveCompute>(&I)) {
    OS << " kind=" << enumName(CC->getKind()) << " group=";
    printCores(OS, CC->getGroup());
    OS << " reduce=" << enumName(CC->getReduceOp());
    printFlag(OS, CC->isLocal(), "local");
  } else if (const auto *DMA = dyn_cast<InstDMACopy>(&I)) {
    printFlag(OS, DMA->isAccumulate(), "accumulate");
  } else if (const auto *ID = dyn_cast<InstIndirectDMACopy>(&I)) {
    printFlag(OS, ID->isAccumulate(), "accumulate");
    OS << " dynamic=" << enumName(ID->getSide()) << " offsets=(";
    llvm::interleave(
        ID->getOffsets(), OS,
        [&](const IndirectOffset &O) { OS << O.Stride << ':' << O.Limit; },
        ",");
    OS << ')';
    if (ID->getBounds() != IndirectBounds::Clamp)
      OS << " bounds=" << enumName(ID->getBounds());
  } else if (const auto *SB2SB = dyn_cast<InstGPSIMDSB2SB>(&I)) {
    printFlag(OS, SB2SB->isLowered(), "lowered");
  } else if (const auto *TC = dyn_cast<InstTensorCompletion>(&I)) {
    if (!TC->getWaits().empty()) {
      OS << " waits=(";
      llvm::interleave(
          TC->getWaits(), OS,
          [&](const CompletionWait &W) {
            OS << W.Core << ":%" << W.Instruction;
          },
          ", ");
      OS << ')';
    }
  } else if (const auto *SW = dyn_cast<InstSemaphoreWait>(&I)) {
    OS << " semaphore=" << SW->getSemaphore() << " count=" << SW->getCount();
  } else if (const auto *CB = dyn_cast<InstCoreBarrier>(&I)) {
    OS << " id=" << CB->getId() << " cores=";
    printCores(OS, CB->getCores());
  } else if (const auto *MM = dyn_cast<InstMatmul>(&I)) {
    printFlag(OS, MM->isAccumulate(), "accumulate");
  } else if (const auto *Act = dyn_cast<InstActivation>(&I)) {
    OS << " func=" << enumName(Act->getFunc()) << " scale=";
    printNumber(OS, Act->getScale());
  } else if (const auto *TT = dyn_cast<InstTensorTensor>(&I)) {
    OS << " op=" << enumName(TT->getOp());
  } else if (const auto *MS = dyn_cast<InstMemset>(&I)) {
    OS << " value=";
    printNumber(OS, MS->getValue());
  } else if (const auto *TR = dyn_cast<InstTensorReduce>(&I)) {
    OS << " op=" << enumName(TR->getOp());
    printFlag(OS, TR->isAccumulate(), "accumulate");
    if (!TR->isAccumulate()) {
      OS << " init=";
      printNumber(OS, TR->getInit());
    }
  } else if (const auto *Iota = dyn_cast<InstIota>(&I)) {
    OS << " start=" << Iota->getStart()
       << " partition_step=" << Iota->getPartitionStep() << " multipliers=(";
    llvm::interleave(Iota->getMultipliers(), OS, ",");
    OS << ')';
  } else if (const auto *Br = dyn_cast<InstBranch>(&I)) {
    OS << " kind=" << enumName(Br->getKind());
    if (Br->getKind() == BranchKind::Loop)
      OS << " trip_count=" << Br->getTripCount();
  }
}

void printInstruction(llvm::raw_ostream &OS, const Instruction &I) {
  OS << "  %" << I.getName() << " = " << getInstructionTypeName(I.getType())
     << '[' << enumName(I.getEngine()) << ']';
  printAttributes(OS, I);
  if (const auto *Copy = llvm::dyn_cast<InstCopyBase>(&I))
    if (const std::optional<SemaphoreSignal> &S = Copy->getSignal())
      OS << " signal=" << S->Core << ':' << S->Semaphore;
  printOperands(OS, "out", I.outputs());
  printOperands(OS, "in", I.inputs());
  if (!I.dependencies().empty()) {
    OS << " deps=(";
    llvm::interleave(
        I.dependencies(), OS,
        [&](const Instruction *D) { OS << '%' << D->getName(); }, ", ");
    OS << ')';
  }
  OS << '\n';
}

void printLocation(llvm::raw_ostream &OS, const MemoryLocation &L) {
  OS << "  memloc " << L.getName() << ": " << enumName(L.getKind()) << ' '
     << enumName(L.getType()) << " [" << L.getNumPartitions() << " x "
     << L.getBytesPerPartition() << " B] tensor=" << L.getTensorId();
  printFlag(OS, L.isWrittenByAnotherCore(), "written_by_another_core");
  printFlag(OS, L.isAllocated(), "allocated");
  if (const std::optional<RemoteRef> &R = L.getRemote())
    OS << " remote=" << R->Core << ':' << R->MemLoc;
  if (L.hasInitialData())
    OS << " initial_data=(" << L.getInitialData().size() << " B)";
  OS << '\n';
}

void printBlock(llvm::raw_ostream &OS, const BasicBlock &BB) {
  OS << '^' << BB.getName();
  if (!BB.successors().empty()) {
    OS << " -> ";
    llvm::interleave(
        BB.successors(), OS,
        [&](const BasicBlock *S) { OS << '^' << S->getName(); }, ", ");
  }
  OS << '\n';
  for (const auto &I : BB)
    printInstruction(OS, *I);
}

} // namespace

void printModule(llvm::raw_ostream &OS, const Module &M) {
  const TargetOptions &O = M.getTargetOptions();
  OS << "module " << M.getName() << " core=" << M.getNeuronCoreId()
     << " subgraph=" << M.getSubgraphId() << " lnc_size=" << O.LncSize
     << " target=" << enumName(O.Arch) << '\n';
  for (const auto &L : M.getMemoryLocations().locations())
    printLocation(OS, *L);
  for (const auto &BB : M.blocks())
    printBlock(OS, *BB);
}

void printProgram(llvm::raw_ostream &OS, const Program &P) {
  llvm::interleave(
      P, OS, [&](const std::unique_ptr<Module> &M) { printModule(OS, *M); },
      "\n");
}

} // namespace loom::bir
