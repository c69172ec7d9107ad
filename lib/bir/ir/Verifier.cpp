//===- Verifier.cpp - One module's structure ------------------------------===//
//
// verifyModule (Verifier.h): a module's header, memory locations, blocks and
// terminators, every instruction's engine, operand count, access patterns
// and dependencies, and that the dependencies form no cycle. What each kind
// of instruction requires is in VerifierInstructions.cpp, what the modules of
// a program agree on in ProgramVerifier.cpp (VerifierInternal.h).
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Verifier.h"

#include "VerifierInternal.h"

#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Casting.h"

#include <climits>
#include <cstdint>
#include <iterator>

namespace loom::bir {

namespace verifier {

llvm::Error failAt(const llvm::Twine &Path, const llvm::Twine &Msg) {
  return makeError(Path + ": " + Msg);
}

std::string at(const llvm::Twine &Path, size_t I) {
  return (Path + "[" + llvm::Twine(I) + "]").str();
}

std::string indexed(llvm::StringRef Path, llvm::StringRef Field, size_t I) {
  return at(Path + "." + Field, I);
}

/// Module Index of the program's document.
std::string modulePath(unsigned Index) { return at("$.modules", Index); }

std::string shapeOf(const AccessPattern &AP) {
  return ("[" + llvm::Twine(AP.getNumPartitions()) + " x " +
          llvm::Twine(AP.getNumElementsPerPartition()) + "]")
      .str();
}

bool sameShape(const AccessPattern &A, const AccessPattern &B) {
  return A.getNumPartitions() == B.getNumPartitions() &&
         A.getNumElementsPerPartition() == B.getNumElementsPerPartition();
}

llvm::StringRef typeName(const Instruction &I) {
  return getInstructionTypeName(I.getType());
}

} // namespace verifier

using namespace verifier;

namespace {

/// Walking an access pattern element by element must stay affordable.
constexpr uint64_t MaxElementsPerPartition = uint64_t(1) << 32;

bool canRunOn(InstructionType T, Engine E) {
  switch (T) {
  case InstructionType::Matmul:
    return E == Engine::PE;
  case InstructionType::Activation:
    return E == Engine::ACT;
  case InstructionType::TensorTensor:
  case InstructionType::Select:
  case InstructionType::TensorReduce:
    return E == Engine::DVE || E == Engine::POOL;
  case InstructionType::TensorCopy:
  case InstructionType::TensorConvert:
  case InstructionType::Memset:
    return E == Engine::ACT || E == Engine::DVE || E == Engine::POOL;
  case InstructionType::Iota:
    // The GPSIMD engine's iota (aws-neuron-sdk nki.isa.iota).
    return E == Engine::POOL;
  case InstructionType::GPSIMDSB2SB:
    return E == Engine::POOL;
  case InstructionType::DMACopy:
  case InstructionType::IndirectDMACopy:
    return isDMAQueue(E);
  case InstructionType::CollectiveCompute:
    return E == Engine::POOL || E == Engine::SP || isDMAQueue(E);
  case InstructionType::CoreBarrier:
  case InstructionType::SemaphoreWait:
    return !isDMAQueue(E);
  case InstructionType::TensorCompletion:
    return true;
  case InstructionType::Branch:
    return E == Engine::SP;
  }
  llvm_unreachable("unknown instruction type");
}

struct Arity {
  unsigned MinInputs;
  unsigned MaxInputs;
  unsigned Outputs;
};

Arity getArity(InstructionType T) {
  switch (T) {
  case InstructionType::Matmul:
  case InstructionType::TensorTensor:
    return {2, 2, 1};
  case InstructionType::Select:
    return {3, 3, 1};
  case InstructionType::Memset:
  case InstructionType::Iota:
    return {0, 0, 1};
  case InstructionType::CoreBarrier:
  case InstructionType::SemaphoreWait:
  case InstructionType::Branch:
    return {0, 0, 0};
  case InstructionType::TensorCompletion:
    return {1, UINT_MAX, 0};
  case InstructionType::IndirectDMACopy:
    return {2, 1 + InstIndirectDMACopy::MaxOffsets, 1};
  default:
    return {1, 1, 1};
  }
}

} // namespace

llvm::Error ModuleVerifier::verify() {
  if (llvm::Error E = verifyHeader())
    return E;
  const MemoryLocationSet::Storage &Locs = M.getMemoryLocations().locations();
  for (size_t I = 0; I < Locs.size(); ++I)
    if (llvm::Error E =
            verifyLocation(*Locs[I], indexed(Path, "memory_locations", I)))
      return E;
  if (M.getNumBlocks() == 0)
    return failAt(Path + ".blocks", "a module needs at least one block");
  llvm::StringSet<> BlockNames;
  for (unsigned B = 0; B < M.getNumBlocks(); ++B) {
    const BasicBlock &BB = *M.getBlock(B);
    std::string P = indexed(Path, "blocks", B);
    if (!BlockNames.insert(BB.getName()).second)
      return failAt(P + ".name", "duplicate block name '" + BB.getName() + "'");
    if (llvm::Error E = verifyBlock(BB, P))
      return E;
  }
  return verifyAcyclic();
}

llvm::Error ModuleVerifier::verifyHeader() {
  if (M.getName().empty())
    return failAt(Path + ".name", "a module needs a name");
  const TargetOptions &O = M.getTargetOptions();
  unsigned Max = getMaxLncSize(O.Arch);
  if (O.LncSize < 1 || O.LncSize > Max)
    return failAt(Path + ".pass_options.lnc_size",
                  "lnc_size " + llvm::Twine(O.LncSize) +
                      " is not supported by " + enumName(O.Arch) + " (1 to " +
                      llvm::Twine(Max) + ")");
  if (M.getNeuronCoreId() >= O.LncSize)
    return failAt(Path + ".neuron_core_id",
                  "core " + llvm::Twine(M.getNeuronCoreId()) +
                      " is outside the logical core (lnc_size " +
                      llvm::Twine(O.LncSize) + ")");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyLocation(const MemoryLocation &L,
                                           const std::string &P) {
  if (L.getName().empty())
    return failAt(P + ".name", "a memory location needs a name");
  llvm::StringRef Kind = enumName(L.getKind());
  if (L.getNumPartitions() == 0)
    return failAt(P + ".partitions",
                  "a memory location needs at least one partition");
  if (isOnChip(L.getKind()) && L.getNumPartitions() > MaxOnChipPartitions)
    return failAt(P + ".partitions",
                  Kind + " location '" + L.getName() + "' has " +
                      llvm::Twine(L.getNumPartitions()) + " partitions; " +
                      Kind + " has " + llvm::Twine(MaxOnChipPartitions));
  if (L.getBytesPerPartition() == 0)
    return failAt(P + ".bytes_per_partition",
                  "a memory location needs at least one byte per partition");
  if (const std::optional<RemoteRef> &R = L.getRemote()) {
    std::string RP = P + ".remote";
    if (llvm::Error E = verifyCoreIndex(R->Core, RP + ".core"))
      return E;
    if (R->Core == M.getNeuronCoreId())
      return failAt(RP + ".core", "remote location '" + L.getName() +
                                      "' names core " + llvm::Twine(R->Core) +
                                      ", which runs this module");
    std::string Want = getRemoteLocationName(R->MemLoc, R->Core);
    if (R->MemLoc.empty() || L.getName() != Want)
      return failAt(P + ".name", "a remote location of '" + R->MemLoc +
                                     "' on core " + llvm::Twine(R->Core) +
                                     " is named '" + Want + "', not '" +
                                     L.getName() + "'");
  }
  if (L.hasInitialData()) {
    if (isOnChip(L.getKind()) || L.isRemote())
      return failAt(P + ".initial_data",
                    "only a DRAM or SharedDRAM location of its own has "
                    "initial data; '" +
                        L.getName() + "' is " +
                        (L.isRemote() ? std::string("remote")
                                      : "in " + Kind.str()));
    uint64_t Bytes = uint64_t(L.getNumPartitions()) * L.getBytesPerPartition();
    if (L.getInitialData().size() != Bytes)
      return failAt(P + ".initial_data",
                    llvm::Twine(L.getInitialData().size()) +
                        " bytes of initial data for the " + llvm::Twine(Bytes) +
                        " bytes of '" + L.getName() + "'");
  }
  Target Arch = M.getTargetOptions().Arch;
  std::optional<uint64_t> Cap = getPartitionCapacity(Arch, L.getKind());
  if (Cap && L.getBytesPerPartition() > *Cap)
    return failAt(P + ".bytes_per_partition",
                  llvm::Twine(L.getBytesPerPartition()) +
                      " bytes per partition exceed the " + llvm::Twine(*Cap) +
                      " of " + Kind + " on " + enumName(Arch));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyBlock(const BasicBlock &BB,
                                        const std::string &P) {
  if (BB.getName().empty())
    return failAt(P + ".name", "a block needs a name");
  for (size_t S = 0; S < BB.successors().size(); ++S) {
    const BasicBlock *Succ = BB.successors()[S];
    if (!Succ || Succ->getParent() != &M)
      return failAt(indexed(P, "successors", S), "not a block of this module");
  }
  size_t Index = 0;
  for (const auto &I : BB) {
    std::string IP = indexed(P, "instructions", Index++);
    if (llvm::Error E = verifyInstruction(*I, IP))
      return E;
    if (I->isTerminator() && Index != BB.size())
      return failAt(IP, "a Branch must be the last instruction of its block");
  }
  return verifyTerminator(BB, P);
}

llvm::Error ModuleVerifier::verifyTerminator(const BasicBlock &BB,
                                             const std::string &P) {
  const Instruction *Last = BB.empty() ? nullptr : std::prev(BB.end())->get();
  if (!Last || !Last->isTerminator())
    return failAt(P + ".instructions",
                  "block '" + BB.getName() + "' does not end with a Branch");
  const auto &Br = llvm::cast<InstBranch>(*Last);
  if (Br.getKind() == BranchKind::Loop && Br.getTripCount() == 0)
    return failAt(indexed(P, "instructions", BB.size() - 1) + ".trip_count",
                  "a Loop runs its body at least once");
  if (BB.successors().size() != Br.getNumSuccessors())
    return failAt(P + ".successors",
                  "a " + enumName(Br.getKind()) + " branch needs " +
                      llvm::Twine(Br.getNumSuccessors()) +
                      " successor(s); block '" + BB.getName() + "' has " +
                      llvm::Twine(BB.successors().size()));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyInstruction(const Instruction &I,
                                              const std::string &P) {
  if (I.getName().empty())
    return failAt(P + ".name", "an instruction needs a name");
  if (!InstNames.insert(I.getName()).second)
    return failAt(P + ".name",
                  "duplicate instruction name '" + I.getName() + "'");
  if (!canRunOn(I.getType(), I.getEngine()))
    return failAt(P + ".engine", "engine " + enumName(I.getEngine()) +
                                     " cannot execute " + typeName(I));
  if (llvm::Error E = verifyOperands(I, P))
    return E;
  if (llvm::Error E = verifyDependencies(I, P))
    return E;
  return verifyKind(I, P);
}

llvm::Error ModuleVerifier::verifyOperands(const Instruction &I,
                                           const std::string &P) {
  Arity A = getArity(I.getType());
  size_t NumIn = I.inputs().size();
  if (NumIn < A.MinInputs || NumIn > A.MaxInputs)
    return failAt(
        P + ".inputs",
        typeName(I) + " takes " + (A.MaxInputs == UINT_MAX ? "at least " : "") +
            llvm::Twine(A.MinInputs) + " input(s), not " + llvm::Twine(NumIn));
  if (I.outputs().size() != A.Outputs)
    return failAt(P + ".outputs",
                  typeName(I) + " takes " + llvm::Twine(A.Outputs) +
                      " output(s), not " + llvm::Twine(I.outputs().size()));
  for (size_t K = 0; K < NumIn; ++K)
    if (llvm::Error E =
            verifyAccessPattern(I.inputs()[K], indexed(P, "inputs", K)))
      return E;
  for (size_t K = 0; K < I.outputs().size(); ++K)
    if (llvm::Error E =
            verifyAccessPattern(I.outputs()[K], indexed(P, "outputs", K)))
      return E;
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyAccessPattern(const AccessPattern &AP,
                                                const std::string &P) {
  const MemoryLocation *L = AP.getLocation();
  if (!M.getMemoryLocations().contains(L))
    return failAt(P + ".memloc", "not a memory location of this module");
  if (AP.getType() != L->getType())
    return failAt(P + ".dtype", "type " + enumName(AP.getType()) +
                                    " differs from " + enumName(L->getType()) +
                                    ", the type of '" + L->getName() + "'");
  if (AP.getNumPartitions() == 0)
    return failAt(P + ".partitions",
                  "an access pattern needs at least one partition");
  uint64_t First = AP.getStartPartition();
  uint64_t End = First + AP.getNumPartitions();
  if (End > L->getNumPartitions())
    return failAt(P, "partitions [" + llvm::Twine(First) + ", " +
                         llvm::Twine(End) + ") are outside the " +
                         llvm::Twine(L->getNumPartitions()) +
                         " partitions of '" + L->getName() + "'");
  for (size_t K = 0; K < AP.getPattern().size(); ++K)
    if (AP.getPattern()[K].Count == 0)
      return failAt(indexed(P, "pattern", K), "a count must be at least 1");
  if (AP.getNumElementsPerPartition() > MaxElementsPerPartition)
    return failAt(P + ".pattern", "more than 2^32 elements per partition");
  unsigned Size = getDataTypeSize(AP.getType());
  if (AP.getOffset() % Size)
    return failAt(P + ".offset", "offset " + llvm::Twine(AP.getOffset()) +
                                     " is not a multiple of the " +
                                     llvm::Twine(Size) + "-byte element");
  std::optional<ByteRange> R = AP.getByteRange();
  if (!R)
    return failAt(P, "the pattern reaches outside '" + L->getName() +
                         "' (below byte 0 or past 2^64)");
  if (R->End > L->getBytesPerPartition())
    return failAt(P, "bytes [" + llvm::Twine(R->Begin) + ", " +
                         llvm::Twine(R->End) + ") are outside the " +
                         llvm::Twine(L->getBytesPerPartition()) +
                         " bytes per partition of '" + L->getName() + "'");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyDependencies(const Instruction &I,
                                               const std::string &P) {
  for (size_t K = 0; K < I.dependencies().size(); ++K) {
    const Instruction *D = I.dependencies()[K];
    if (D == &I)
      return failAt(indexed(P, "deps", K),
                    "'" + I.getName() + "' depends on itself");
    if (D->getModule() != &M)
      return failAt(indexed(P, "deps", K),
                    "'" + D->getName() +
                        "' is not an instruction of this module");
  }
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyCoreIndex(unsigned Core,
                                            const std::string &P) {
  unsigned Lnc = M.getTargetOptions().LncSize;
  if (Core >= Lnc)
    return failAt(P, "core " + llvm::Twine(Core) +
                         " is outside the logical core (lnc_size " +
                         llvm::Twine(Lnc) + ")");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifySignal(const InstCopyBase &I,
                                         const std::string &P) {
  const std::optional<SemaphoreSignal> &S = I.getSignal();
  if (!S)
    return llvm::Error::success();
  if (S->Semaphore.empty())
    return failAt(P + ".signal.semaphore", "a signal needs a semaphore name");
  return verifyCoreIndex(S->Core, P + ".signal.core");
}

llvm::Error ModuleVerifier::verifyCompletion(const InstTensorCompletion &I,
                                             const std::string &P) {
  for (size_t K = 0; K < I.getWaits().size(); ++K) {
    const CompletionWait &W = I.getWaits()[K];
    std::string WP = indexed(P, "waits", K);
    if (W.Instruction.empty())
      return failAt(WP + ".instruction", "a wait needs an instruction name");
    if (llvm::Error E = verifyCoreIndex(W.Core, WP + ".core"))
      return E;
  }
  return llvm::Error::success();
}

namespace {

/// A step of the walk over dependencies: an instruction and its next
/// dependency to visit.
struct Frame {
  const Instruction *I;
  size_t Next;
};

/// A cycle longer than this is named by its first and last instructions.
constexpr size_t MaxCycleNamesShown = 16;

/// "'a' -> 'b' -> 'a'" for the cycle that closes when the walk in Stack
/// reaches Back again; a long one reads "'a' -> ... (N more) ... -> 'z' ->
/// 'a'", so that the message stays a line.
std::string describeCycle(llvm::ArrayRef<Frame> Stack,
                          const Instruction *Back) {
  std::string Cycle;
  auto First =
      llvm::find_if(Stack, [&](const Frame &F) { return F.I == Back; });
  llvm::ArrayRef<Frame> Walk(&*First, Stack.end() - First);
  size_t Head = Walk.size(), Tail = 0;
  if (Walk.size() > MaxCycleNamesShown) {
    Head = MaxCycleNamesShown / 2;
    Tail = MaxCycleNamesShown / 2;
  }
  for (const Frame &F : Walk.take_front(Head))
    Cycle += "'" + F.I->getName().str() + "' -> ";
  if (Tail) {
    Cycle +=
        "... (" + std::to_string(Walk.size() - Head - Tail) + " more) ... -> ";
    for (const Frame &F : Walk.take_back(Tail))
      Cycle += "'" + F.I->getName().str() + "' -> ";
  }
  return Cycle + "'" + Back->getName().str() + "'";
}

} // namespace

std::string ModuleVerifier::instructionPath(const Instruction &I) const {
  for (unsigned B = 0; B < M.getNumBlocks(); ++B) {
    const BasicBlock &BB = *M.getBlock(B);
    if (&BB != I.getBasicBlock())
      continue;
    size_t Index = std::distance(
        BB.begin(), Instruction::List::const_iterator(I.getIterator()));
    return indexed(indexed(Path, "blocks", B), "instructions", Index);
  }
  return Path;
}

// An instruction waits for its dependencies, so a cycle would wait forever.
llvm::Error ModuleVerifier::verifyAcyclic() {
  // Generated programs list every instruction after its dependencies: then
  // that order is a topological one and there is no cycle to look for.
  {
    llvm::DenseSet<const Instruction *> Listed;
    bool Ordered = true;
    for (const auto &BB : M.blocks()) {
      for (const auto &I : *BB) {
        Ordered = llvm::all_of(I->dependencies(), [&](const Instruction *D) {
          return Listed.contains(D);
        });
        if (!Ordered)
          break;
        Listed.insert(I.get());
      }
      if (!Ordered)
        break;
    }
    if (Ordered)
      return llvm::Error::success();
  }
  enum class State { Active, Done };
  llvm::DenseMap<const Instruction *, State> States;
  for (const auto &BB : M.blocks())
    for (const auto &Root : *BB) {
      if (States.count(Root.get()))
        continue;
      std::vector<Frame> Stack{{Root.get(), 0}};
      States[Root.get()] = State::Active;
      while (!Stack.empty()) {
        Frame &F = Stack.back();
        if (F.Next == F.I->dependencies().size()) {
          States[F.I] = State::Done;
          Stack.pop_back();
          continue;
        }
        const Instruction *D = F.I->dependencies()[F.Next++];
        auto It = States.find(D);
        if (It == States.end()) {
          States[D] = State::Active;
          Stack.push_back({D, 0});
        } else if (It->second == State::Active) {
          return failAt(instructionPath(*D) + ".deps",
                        "dependency cycle: " + describeCycle(Stack, D));
        }
      }
    }
  return llvm::Error::success();
}

llvm::Error verifyRemoteTarget(const MemoryLocation &L, const Module *Peer) {
  const RemoteRef &R = *L.getRemote();
  if (!Peer)
    return makeError("remote location '" + L.getName() +
                     "': there is no module for core " + llvm::Twine(R.Core) +
                     " in this subgraph");
  const MemoryLocation *T = Peer->getMemoryLocations().getMemlocByName(R.MemLoc);
  if (!T)
    return makeError("remote location '" + L.getName() + "': core " +
                     llvm::Twine(R.Core) + " has no memory location named '" +
                     R.MemLoc + "'");
  if (T->isRemote())
    return makeError("remote location '" + L.getName() + "' names '" +
                     R.MemLoc + "' of core " + llvm::Twine(R.Core) +
                     ", which is itself remote");
  if (T->getKind() != L.getKind() || T->getType() != L.getType() ||
      T->getNumPartitions() != L.getNumPartitions() ||
      T->getBytesPerPartition() != L.getBytesPerPartition())
    return makeError("remote location '" + L.getName() + "' is " +
                     enumName(L.getKind()) + " " + enumName(L.getType()) +
                     " [" + llvm::Twine(L.getNumPartitions()) + " x " +
                     llvm::Twine(L.getBytesPerPartition()) + " B], but '" +
                     R.MemLoc + "' of core " + llvm::Twine(R.Core) + " is " +
                     enumName(T->getKind()) + " " + enumName(T->getType()) +
                     " [" + llvm::Twine(T->getNumPartitions()) + " x " +
                     llvm::Twine(T->getBytesPerPartition()) + " B]");
  return llvm::Error::success();
}

llvm::Error verifyModule(const Module &M, llvm::StringRef Path) {
  return ModuleVerifier(M, Path).verify();
}

} // namespace loom::bir
