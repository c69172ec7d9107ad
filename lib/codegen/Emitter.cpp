#include "Emitter.h"


#include <algorithm>

namespace loom::codegen {

using namespace bir;

CoreEmitter::CoreEmitter(std::unique_ptr<Module> Mod) : M(std::move(Mod)) {
  BB = M->createBlock("entry");
}

std::string CoreEmitter::unique(NameSet &S, llvm::StringRef Base) {
  if (S.Used.insert(Base).second)
    return Base.str();
  unsigned &N = S.Counts[Base];
  std::string Name;
  do
    Name = (Base + "." + llvm::Twine(++N)).str();
  while (!S.Used.insert(Name).second);
  return Name;
}

MemoryLocation *CoreEmitter::addLocation(const std::string &Name, MemoryKind K,
                                         DataType T, unsigned Partitions,
                                         uint64_t Bytes) {
  return llvm::cantFail(M->getMemoryLocations().add(
      std::make_unique<MemoryLocation>(Name, NextTensorId++, K, T, Partitions,
                                       std::max<uint64_t>(Bytes, 1))));
}

namespace {

/// The bytes of every partition an access pattern touches.
std::pair<uint64_t, uint64_t> byteRange(const AccessPattern &AP) {
  int64_t Low = 0, High = 0;
  for (const PatternDim &D : AP.getPattern()) {
    int64_t Span = D.Step * static_cast<int64_t>(D.Count - 1);
    (Span < 0 ? Low : High) += Span;
  }
  uint64_t Size = getDataTypeSize(AP.getType());
  return {AP.getOffset() + Size * Low, AP.getOffset() + Size * (High + 1)};
}

} // namespace

void CoreEmitter::addDeps(Instruction *I, const AccessPattern &AP, bool Write) {
  auto It = Accesses.find(AP.getLocation());
  if (It == Accesses.end())
    return;
  auto [Lo, Hi] = byteRange(AP);
  for (const Access &A : It->second)
    if ((Write || A.Write) && A.Lo < Hi && Lo < A.Hi && A.I != I)
      I->addDependency(A.I);
}

void CoreEmitter::record(Instruction *I, const AccessPattern &AP, bool Write) {
  auto [Lo, Hi] = byteRange(AP);
  std::vector<Access> &List = Accesses[AP.getLocation()];
  if (Write)
    // Accesses this write covers are ordered before it, and so before
    // everything that will wait for it.
    llvm::erase_if(List,
                   [&, Lo = Lo, Hi = Hi](const Access &A) {
                     return A.Lo >= Lo && A.Hi <= Hi;
                   });
  List.push_back({Lo, Hi, I, Write, NextSeq});
}

Instruction *CoreEmitter::emit(std::unique_ptr<Instruction> Inst,
                               std::vector<AccessPattern> Ins,
                               std::vector<AccessPattern> Outs) {
  Instruction *I = BB->insert(BB->end(), std::move(Inst));
  ++NextSeq;
  for (AccessPattern &AP : Ins)
    I->addInput(AP);
  for (AccessPattern &AP : Outs)
    I->addOutput(AP);
  if (LastFence)
    I->addDependency(LastFence);
  for (const AccessPattern &AP : I->inputs())
    addDeps(I, AP, false);
  for (const AccessPattern &AP : I->outputs())
    addDeps(I, AP, true);
  for (const AccessPattern &AP : I->inputs())
    record(I, AP, false);
  for (const AccessPattern &AP : I->outputs())
    record(I, AP, true);
  return I;
}

Instruction *CoreEmitter::emitFence(std::unique_ptr<Instruction> Inst) {
  Instruction *I = BB->insert(BB->end(), std::move(Inst));
  if (LastFence)
    I->addDependency(LastFence);
  // Every pending access, in emission order (Accesses is keyed by pointer,
  // so its iteration order differs between runs).
  std::vector<std::pair<uint64_t, Instruction *>> Pending;
  for (auto &[Loc, List] : Accesses)
    for (const Access &A : List)
      Pending.push_back({A.Seq, A.I});
  llvm::sort(Pending);
  Pending.erase(std::unique(Pending.begin(), Pending.end()), Pending.end());
  for (auto &[Seq, Dep] : Pending)
    I->addDependency(Dep);
  Accesses.clear();
  LastFence = I;
  return I;
}

Engine CoreEmitter::nextDma() {
  return static_cast<Engine>(static_cast<unsigned>(Engine::DMA0) +
                             (NextDmaQueue++ % 16));
}

MemoryLocation *CoreEmitter::nextSlot(DataType T) {
  auto &[List, Next] = Slots[T];
  if (List.size() < SlotsPerType) {
    List.push_back(addLocation(
        uniqueLocationName(("sb." + enumName(T) + "." + llvm::Twine(List.size())).str()),
        MemoryKind::SB, T, 128, SlotBytes));
    return List.back();
  }
  return List[Next++ % SlotsPerType];
}

MemoryLocation *CoreEmitter::nextPsum() {
  if (Psums.size() < PsumTiles) {
    Psums.push_back(addLocation(
        uniqueLocationName(("psum." + llvm::Twine(Psums.size())).str()),
        MemoryKind::PSUM, DataType::FP32, 128, PsumBankBytes));
    return Psums.back();
  }
  return Psums[NextPsumTile++ % PsumTiles];
}

uint64_t CoreEmitter::sbBytesPerPartition() const {
  uint64_t Bytes = 0;
  for (const auto &[T, S] : Slots)
    Bytes += S.first.size() * SlotBytes;
  return Bytes;
}

void CoreEmitter::finish() {
  BB->append(std::make_unique<InstBranch>(uniqueName("ret"), Engine::SP,
                                          BranchKind::Return));
}

} // namespace loom::codegen
