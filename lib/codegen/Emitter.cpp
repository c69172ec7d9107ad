#include "Emitter.h"

#include "loom/bir/analysis/CostModel.h"

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

void CoreEmitter::overlapping(const AccessMap &M, uint64_t Lo, uint64_t Hi,
                              const Instruction *I) {
  // Only accesses starting at most MaxLen before Lo can reach into it.
  uint64_t From = Lo > M.MaxLen ? Lo - M.MaxLen : 0;
  for (auto A = M.ByLo.lower_bound(From); A != M.ByLo.end() && A->first < Hi;
       ++A)
    if (Lo < A->second.Hi && A->second.I != I)
      Found.push_back({A->second.Seq, A->second.I});
}

void CoreEmitter::addDeps(Instruction *I, const AccessPattern &AP, bool Write) {
  auto It = Accesses.find(AP.getLocation());
  if (It == Accesses.end())
    return;
  auto [Lo, Hi] = byteRange(AP);
  Found.clear();
  overlapping(It->second.Writes, Lo, Hi, I);
  if (Write)
    overlapping(It->second.Reads, Lo, Hi, I);
  // In emission order, so the output does not depend on the maps' order.
  llvm::sort(Found);
  for (auto &[Seq, Dep] : Found)
    depend(I, Dep);
}

void CoreEmitter::depend(Instruction *I, Instruction *Dep) {
  // Most instructions have a few dependencies: searching them is cheaper
  // than any set.
  constexpr size_t Searched = 32;
  llvm::ArrayRef<Instruction *> Deps = I->dependencies();
  if (Deps.size() < Searched) {
    if (!llvm::is_contained(Deps, Dep))
      I->addNewDependency(Dep);
    return;
  }
  if (DepSetOwner != I) {
    DepSet.clear();
    DepSet.insert(Deps.begin(), Deps.end());
    DepSetOwner = I;
  }
  if (DepSet.insert(Dep).second)
    I->addNewDependency(Dep);
}

void CoreEmitter::record(Instruction *I, const AccessPattern &AP, bool Write) {
  auto [Lo, Hi] = byteRange(AP);
  LocAccesses &LA = Accesses[AP.getLocation()];
  if (Write)
    // Accesses this write covers are ordered before it, and so before
    // everything that will wait for it.
    for (AccessMap *M : {&LA.Reads, &LA.Writes})
      for (auto A = M->ByLo.lower_bound(Lo); A != M->ByLo.end() && A->first < Hi;)
        A = A->second.Hi <= Hi ? M->ByLo.erase(A) : std::next(A);
  AccessMap &M = Write ? LA.Writes : LA.Reads;
  M.ByLo.emplace(Lo, Access{Lo, Hi, I, Write, NextSeq});
  M.MaxLen = std::max(M.MaxLen, Hi - Lo);
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
  DepSetOwner = nullptr;
  if (LastFence)
    I->addNewDependency(LastFence);
  // The operand of an IndirectDMACopy that moves at run time may touch any
  // byte of its range over every index value: its dependencies cover that.
  std::vector<AccessPattern> Reads(I->inputs().begin(), I->inputs().end());
  std::vector<AccessPattern> Writes(I->outputs().begin(), I->outputs().end());
  if (const auto *ID = llvm::dyn_cast<InstIndirectDMACopy>(I)) {
    AccessPattern &D = ID->getSide() == IndirectSide::In ? Reads[0] : Writes[0];
    auto [Low, High] = ID->getDeltaRange();
    std::vector<PatternDim> P(D.getPattern().begin(), D.getPattern().end());
    if (High > Low)
      P.insert(P.begin(), PatternDim{High - Low, 2});
    D.setOffset(D.getOffset() + Low * int64_t(getDataTypeSize(D.getType())));
    D.setPattern(std::move(P));
  }
  for (const AccessPattern &AP : Reads)
    addDeps(I, AP, false);
  for (const AccessPattern &AP : Writes)
    addDeps(I, AP, true);
  schedule(I);
  for (const AccessPattern &AP : Reads)
    record(I, AP, false);
  for (const AccessPattern &AP : Writes)
    record(I, AP, true);
  return I;
}

void CoreEmitter::schedule(Instruction *I) {
  // A queue runs its DMAs in order. Round robin puts a dot's wide loads on
  // every other queue (a narrow stationary and a wide moving load per K
  // tile) and half the queues back up while the others idle; the queue
  // with the least work queued instead puts a load behind a store that
  // waits for compute. So each instruction's start and finish are
  // estimated (its engine free and its dependencies finished, by the cost
  // model), and a DMA goes to the queue where it would start first.
  static const analysis::CostModel Model;
  double Ready = 0;
  for (const Instruction *D : I->dependencies())
    Ready = std::max(Ready, FinishNs.lookup(D));
  unsigned E = static_cast<unsigned>(I->getEngine());
  unsigned First = static_cast<unsigned>(Engine::DMA0);
  if (llvm::isa<InstDMACopy, InstIndirectDMACopy>(I) && E >= First &&
      E < First + 16) {
    unsigned Best = E;
    for (unsigned K = 1; K < 16; ++K) {
      unsigned Q = First + (E - First + K) % 16;
      if (std::max(EngineFreeNs[Q], Ready) < std::max(EngineFreeNs[Best], Ready))
        Best = Q;
    }
    E = Best;
    I->setEngine(static_cast<Engine>(E));
  }
  double Finish = std::max(EngineFreeNs[E], Ready) + Model.instructionNs(*I);
  EngineFreeNs[E] = Finish;
  FinishNs[I] = Finish;
}

Instruction *CoreEmitter::emitFence(std::unique_ptr<Instruction> Inst) {
  Instruction *I = BB->insert(BB->end(), std::move(Inst));
  if (LastFence)
    I->addDependency(LastFence);
  // Every pending access, in emission order (Accesses is keyed by pointer,
  // so its iteration order differs between runs).
  std::vector<std::pair<uint64_t, Instruction *>> Pending;
  for (auto &[Loc, LA] : Accesses)
    for (const AccessMap *M : {&LA.Reads, &LA.Writes})
      for (const auto &[Lo, A] : M->ByLo)
        Pending.push_back({A.Seq, A.I});
  llvm::sort(Pending);
  Pending.erase(std::unique(Pending.begin(), Pending.end()), Pending.end());
  // Each once (unique above), and never the last fence, which no access
  // recorded since it names.
  for (auto &[Seq, Dep] : Pending)
    I->addNewDependency(Dep);
  Accesses.clear();
  LastFence = I;
  // Everything after the fence waits for it: the estimate starts again
  // from the fence, every engine idle.
  FinishNs.clear();
  std::fill(std::begin(EngineFreeNs), std::end(EngineFreeNs), 0.0);
  schedule(I);
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
