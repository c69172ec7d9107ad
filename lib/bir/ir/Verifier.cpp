#include "loom/bir/ir/Verifier.h"

#include "loom/bir/ir/Instructions.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Casting.h"

#include <climits>
#include <cstdint>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

namespace loom::bir {

namespace {

/// Walking an access pattern element by element must stay affordable.
constexpr uint64_t MaxElementsPerPartition = uint64_t(1) << 32;
/// The moving operand of a matmul fills at most one PSUM bank: 2 KiB per
/// partition, 512 fp32 values.
constexpr uint64_t MaxMatmulFreeSize = 512;

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
  default:
    return {1, 1, 1};
  }
}

/// The output element count a collective over G cores needs for In input
/// elements; none if In does not split evenly.
std::optional<uint64_t> collectiveOutputSize(CollectiveKind K, uint64_t In,
                                             uint64_t G) {
  switch (K) {
  case CollectiveKind::ReduceScatter:
    return In % G ? std::nullopt : std::optional<uint64_t>(In / G);
  case CollectiveKind::AllGather:
    return In * G;
  case CollectiveKind::AllToAll:
    return In % G ? std::nullopt : std::optional<uint64_t>(In);
  default:
    return In;
  }
}

class ModuleVerifier {
public:
  ModuleVerifier(const Module &M, llvm::StringRef Path)
      : M(M), Path(Path.str()) {}
  llvm::Error verify();

private:
  llvm::Error verifyHeader();
  llvm::Error verifyLocation(const MemoryLocation &L, const std::string &P);
  llvm::Error verifyBlock(const BasicBlock &BB, const std::string &P);
  llvm::Error verifyTerminator(const BasicBlock &BB, const std::string &P);
  llvm::Error verifyInstruction(const Instruction &I, const std::string &P);
  llvm::Error verifyOperands(const Instruction &I, const std::string &P);
  llvm::Error verifyAccessPattern(const AccessPattern &AP,
                                  const std::string &P);
  llvm::Error verifyDependencies(const Instruction &I, const std::string &P);
  llvm::Error verifyKind(const Instruction &I, const std::string &P);
  llvm::Error verifyMatmul(const Instruction &I, const std::string &P);
  llvm::Error verifyOnChipElementwise(const Instruction &I,
                                      const std::string &P);
  llvm::Error verifyActivation(const InstActivation &I, const std::string &P);
  llvm::Error verifyTensorTensor(const InstTensorTensor &I,
                                 const std::string &P);
  llvm::Error verifySelect(const Instruction &I, const std::string &P);
  llvm::Error verifyTensorReduce(const InstTensorReduce &I,
                                 const std::string &P);
  llvm::Error verifyIota(const InstIota &I, const std::string &P);
  llvm::Error verifyDMACopy(const InstDMACopy &I, const std::string &P);
  llvm::Error verifySB2SB(const Instruction &I, const std::string &P);
  llvm::Error verifyCollective(const InstCollectiveCompute &I,
                               const std::string &P);
  llvm::Error verifyBarrier(const InstCoreBarrier &I, const std::string &P);
  llvm::Error verifyCores(llvm::ArrayRef<unsigned> Cores, const std::string &P,
                          bool Local);
  llvm::Error verifyAcyclic();
  llvm::Error verifyCoreIndex(unsigned Core, const std::string &P);
  llvm::Error verifySignal(const InstCopyBase &I, const std::string &P);
  llvm::Error verifyCompletion(const InstTensorCompletion &I,
                               const std::string &P);

  /// The path of I, found again only for an error message: keeping every
  /// instruction's path would cost a string per instruction.
  std::string instructionPath(const Instruction &I) const;

  const Module &M;
  std::string Path;
  llvm::StringSet<> InstNames;
  llvm::DenseMap<unsigned, const Instruction *> BarrierIds;
};

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

llvm::Error ModuleVerifier::verifyKind(const Instruction &I,
                                       const std::string &P) {
  switch (I.getType()) {
  case InstructionType::Matmul:
    return verifyMatmul(I, P);
  case InstructionType::Activation:
    return verifyActivation(llvm::cast<InstActivation>(I), P);
  case InstructionType::TensorTensor:
    return verifyTensorTensor(llvm::cast<InstTensorTensor>(I), P);
  case InstructionType::Memset:
  case InstructionType::TensorCopy:
  case InstructionType::TensorConvert:
    return verifyOnChipElementwise(I, P);
  case InstructionType::Select:
    return verifySelect(I, P);
  case InstructionType::TensorReduce:
    return verifyTensorReduce(llvm::cast<InstTensorReduce>(I), P);
  case InstructionType::Iota:
    return verifyIota(llvm::cast<InstIota>(I), P);
  case InstructionType::DMACopy:
    if (llvm::Error E = verifySignal(llvm::cast<InstCopyBase>(I), P))
      return E;
    return verifyDMACopy(llvm::cast<InstDMACopy>(I), P);
  case InstructionType::GPSIMDSB2SB:
    if (llvm::Error E = verifySignal(llvm::cast<InstCopyBase>(I), P))
      return E;
    return verifySB2SB(I, P);
  case InstructionType::SemaphoreWait: {
    const auto &W = llvm::cast<InstSemaphoreWait>(I);
    if (W.getSemaphore().empty())
      return failAt(P + ".semaphore", "a SemaphoreWait needs a semaphore name");
    if (W.getCount() == 0)
      return failAt(P + ".count", "a SemaphoreWait takes at least 1");
    return llvm::Error::success();
  }
  case InstructionType::CollectiveCompute:
    return verifyCollective(llvm::cast<InstCollectiveCompute>(I), P);
  case InstructionType::CoreBarrier:
    return verifyBarrier(llvm::cast<InstCoreBarrier>(I), P);
  case InstructionType::TensorCompletion:
    return verifyCompletion(llvm::cast<InstTensorCompletion>(I), P);
  case InstructionType::Branch:
    return llvm::Error::success();
  }
  llvm_unreachable("unknown instruction type");
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

llvm::Error ModuleVerifier::verifyMatmul(const Instruction &I,
                                         const std::string &P) {
  const AccessPattern &Stat = I.inputs()[0], &Mov = I.inputs()[1];
  const AccessPattern &Out = I.outputs()[0];
  for (size_t K = 0; K < 2; ++K)
    if (I.inputs()[K].getLocation()->getKind() != MemoryKind::SB)
      return failAt(indexed(P, "inputs", K), "a Matmul reads SB");
  if (Out.getLocation()->getKind() != MemoryKind::PSUM)
    return failAt(P + ".outputs[0]", "a Matmul writes PSUM");
  if (Out.getType() != DataType::FP32)
    return failAt(P + ".outputs[0].dtype", "a Matmul writes fp32");
  if (!isFloatType(Stat.getType()) || Stat.getType() != Mov.getType())
    return failAt(P + ".inputs", "both operands need one floating-point type");
  if (Stat.getNumPartitions() != Mov.getNumPartitions())
    return failAt(P + ".inputs[1]", "moving operand has " +
                                        llvm::Twine(Mov.getNumPartitions()) +
                                        " partitions; the stationary one " +
                                        llvm::Twine(Stat.getNumPartitions()));
  if (Mov.getNumElementsPerPartition() > MaxMatmulFreeSize)
    return failAt(P + ".inputs[1]", "moving operand has more than " +
                                        llvm::Twine(MaxMatmulFreeSize) +
                                        " elements per partition");
  if (Out.getNumPartitions() != Stat.getNumElementsPerPartition() ||
      Out.getNumElementsPerPartition() != Mov.getNumElementsPerPartition())
    return failAt(P + ".outputs[0]",
                  "output is " + shapeOf(Out) + "; stationary^T x moving is [" +
                      llvm::Twine(Stat.getNumElementsPerPartition()) + " x " +
                      llvm::Twine(Mov.getNumElementsPerPartition()) + "]");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyOnChipElementwise(const Instruction &I,
                                                    const std::string &P) {
  const AccessPattern &Out = I.outputs()[0];
  if (!isOnChip(Out.getLocation()->getKind()))
    return failAt(P + ".outputs[0]", typeName(I) + " writes SB or PSUM only");
  for (size_t K = 0; K < I.inputs().size(); ++K) {
    const AccessPattern &In = I.inputs()[K];
    if (!isOnChip(In.getLocation()->getKind()))
      return failAt(indexed(P, "inputs", K),
                    typeName(I) + " reads SB or PSUM only");
    if (!sameShape(In, Out))
      return failAt(indexed(P, "inputs", K), "shape " + shapeOf(In) +
                                                 " differs from the output's " +
                                                 shapeOf(Out));
  }
  return llvm::Error::success();
}

/// The range of integer type T; none for a floating type.
std::optional<std::pair<int64_t, int64_t>> intRange(DataType T) {
  switch (T) {
  case DataType::INT8: return std::pair<int64_t, int64_t>{INT8_MIN, INT8_MAX};
  case DataType::INT16: return std::pair<int64_t, int64_t>{INT16_MIN, INT16_MAX};
  case DataType::INT32: return std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX};
  case DataType::UINT8: return std::pair<int64_t, int64_t>{0, UINT8_MAX};
  case DataType::UINT16: return std::pair<int64_t, int64_t>{0, UINT16_MAX};
  case DataType::UINT32: return std::pair<int64_t, int64_t>{0, UINT32_MAX};
  case DataType::INT64: return std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX};
  // uint64 values above INT64_MAX are not written as immediates.
  case DataType::UINT64: return std::pair<int64_t, int64_t>{0, INT64_MAX};
  default: return std::nullopt;
  }
}

llvm::Error ModuleVerifier::verifyActivation(const InstActivation &I,
                                             const std::string &P) {
  if (!std::isfinite(I.getScale()))
    return failAt(P + ".scale", "the scale must be a finite number");
  if (llvm::Error E = verifyOnChipElementwise(I, P))
    return E;
  DataType In = I.inputs()[0].getType(), Out = I.outputs()[0].getType();
  // docs/bir.md "Activation": the integer form runs when the input and the
  // output have one integer type; it has no scale.
  bool IntegerForm = !isFloatType(In) && In == Out && hasIntegerForm(I.getFunc());
  if (isIntegerOnly(I.getFunc()) && !IntegerForm)
    return failAt(P + ".func", enumName(I.getFunc()) +
                                   " needs an input and an output of one "
                                   "integer type, not " +
                                   enumName(In) + " and " + enumName(Out));
  if (IntegerForm && I.getScale() != 1.0)
    return failAt(P + ".scale", "an Activation from " + enumName(In) + " to " +
                                    enumName(Out) +
                                    " computes exactly in integers and takes "
                                    "no scale (1)");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyTensorTensor(const InstTensorTensor &I,
                                               const std::string &P) {
  if (llvm::Error E = verifyOnChipElementwise(I, P))
    return E;
  DataType T0 = I.inputs()[0].getType(), T1 = I.inputs()[1].getType();
  bool Int0 = !isFloatType(T0), Int1 = !isFloatType(T1);
  // docs/bir.md "TensorTensor": integer operands compute exactly in their
  // one type; two integer types would leave the arithmetic type open.
  if (Int0 && Int1 && T0 != T1)
    return failAt(P + ".inputs[1].dtype",
                  "integer operands need one type, not " + enumName(T0) +
                      " and " + enumName(T1));
  if (isBitwise(I.getOp()) && !(Int0 && Int1))
    return failAt(P + ".op", enumName(I.getOp()) +
                                 " needs integer operands, not " +
                                 enumName(T0) + " and " + enumName(T1));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifySelect(const Instruction &I,
                                         const std::string &P) {
  if (llvm::Error E = verifyOnChipElementwise(I, P))
    return E;
  const AccessPattern &Pred = I.inputs()[0], &Out = I.outputs()[0];
  if (Pred.getType() != DataType::UINT8)
    return failAt(P + ".inputs[0].dtype",
                  "the predicate of a Select is uint8 (0 or 1), not " +
                      enumName(Pred.getType()));
  for (size_t K = 1; K < 3; ++K)
    if (I.inputs()[K].getType() != Out.getType())
      return failAt(indexed(P, "inputs", K) + ".dtype",
                    "a Select copies " + enumName(I.inputs()[K].getType()) +
                        " but writes " + enumName(Out.getType()) +
                        "; it does not convert");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyTensorReduce(const InstTensorReduce &I,
                                               const std::string &P) {
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (!isOnChip(In.getLocation()->getKind()))
    return failAt(P + ".inputs[0]", "TensorReduce reads SB or PSUM only");
  if (!isOnChip(Out.getLocation()->getKind()))
    return failAt(P + ".outputs[0]", "TensorReduce writes SB or PSUM only");
  uint64_t NIn = In.getNumElementsPerPartition(),
           NOut = Out.getNumElementsPerPartition();
  if (In.getNumPartitions() != Out.getNumPartitions() || NIn % NOut != 0)
    return failAt(P + ".outputs[0]",
                  "output is " + shapeOf(Out) + "; a reduction of input " +
                      shapeOf(In) +
                      " needs its partitions and a divisor of its "
                      "elements per partition");
  if (isComparison(I.getOp()))
    return failAt(P + ".op", "a TensorReduce folds with an arithmetic or "
                             "bitwise op, not " +
                                 enumName(I.getOp()));
  DataType TI = In.getType(), TO = Out.getType();
  bool IntIn = !isFloatType(TI), IntOut = !isFloatType(TO);
  if ((IntIn || IntOut) && TI != TO)
    return failAt(P + ".outputs[0].dtype",
                  "an integer TensorReduce reads and writes one type, not " +
                      enumName(TI) + " and " + enumName(TO));
  if (isBitwise(I.getOp()) && !IntIn)
    return failAt(P + ".op", enumName(I.getOp()) +
                                 " needs integer operands, not " +
                                 enumName(TI));
  if (!I.isAccumulate() && IntOut) {
    auto [Lo, Hi] = *intRange(TO);
    double V = I.getInit();
    if (!(V >= double(Lo) && V <= double(Hi)) || V != std::trunc(V))
      return failAt(P + ".init", "the initial value of a reduction into " +
                                     enumName(TO) +
                                     " must be an integer from " +
                                     llvm::Twine(Lo) + " to " +
                                     llvm::Twine(Hi));
  }
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyIota(const InstIota &I,
                                       const std::string &P) {
  const AccessPattern &Out = I.outputs()[0];
  if (!isOnChip(Out.getLocation()->getKind()))
    return failAt(P + ".outputs[0]", "Iota writes SB or PSUM only");
  llvm::ArrayRef<PatternDim> Pattern = Out.getPattern();
  if (I.getMultipliers().size() != Pattern.size())
    return failAt(P + ".multipliers",
                  llvm::Twine(I.getMultipliers().size()) +
                      " multiplier(s) for an output pattern of " +
                      llvm::Twine(Pattern.size()) + " dimension(s)");
  // The smallest and largest value, exactly: every term is at most 2^63 *
  // 2^32 in magnitude, and there are at most 2^32 elements per partition.
  __int128 Lo = I.getStart(), Hi = I.getStart();
  auto Span = [&](int64_t Step, uint64_t Count) {
    __int128 Far = __int128(Step) * __int128(Count - 1);
    (Far < 0 ? Lo : Hi) += Far;
  };
  Span(I.getPartitionStep(), Out.getNumPartitions());
  for (size_t K = 0; K < Pattern.size(); ++K)
    Span(I.getMultipliers()[K], Pattern[K].Count);
  __int128 Min = INT64_MIN, Max = INT64_MAX;
  if (std::optional<std::pair<int64_t, int64_t>> R = intRange(Out.getType())) {
    Min = R->first;
    Max = R->second;
  }
  if (Lo < Min || Hi > Max)
    return failAt(P, "the values of an Iota into " + enumName(Out.getType()) +
                         " reach outside its range");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyDMACopy(const InstDMACopy &I,
                                          const std::string &P) {
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (In.getType() != Out.getType())
    return failAt(P + ".outputs[0].dtype", "a DMACopy does not convert " +
                                               enumName(In.getType()) + " to " +
                                               enumName(Out.getType()));
  if (In.getNumElements() != Out.getNumElements())
    return failAt(P + ".outputs[0]", "writes " +
                                         llvm::Twine(Out.getNumElements()) +
                                         " elements but reads " +
                                         llvm::Twine(In.getNumElements()));
  DataType T = Out.getType();
  if (I.isAccumulate() && T != DataType::FP32 && T != DataType::BF16 &&
      T != DataType::FP16)
    return failAt(P + ".accumulate",
                  "DMA accumulation adds fp32, bf16 or fp16, not " +
                      enumName(T));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifySB2SB(const Instruction &I,
                                        const std::string &P) {
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (In.getLocation()->getKind() != MemoryKind::SB)
    return failAt(P + ".inputs[0]", "a GPSIMDSB2SB reads SB");
  if (Out.getLocation()->getKind() != MemoryKind::SB)
    return failAt(P + ".outputs[0]", "a GPSIMDSB2SB writes SB");
  if (In.getType() != Out.getType())
    return failAt(P + ".outputs[0].dtype",
                  "a GPSIMDSB2SB does not convert types");
  if (!sameShape(In, Out))
    return failAt(P + ".outputs[0]", "shape " + shapeOf(Out) +
                                         " differs from the input's " +
                                         shapeOf(In));
  uint64_t Bytes =
      In.getNumElementsPerPartition() * getDataTypeSize(In.getType());
  uint64_t Padded =
      InstGPSIMDSB2SB::getEffectiveBytesPerPartition(Bytes, In.getType());
  if (Padded > InstGPSIMDSB2SB::MaxBytesPerPartition)
    return failAt(P + ".inputs[0]",
                  llvm::Twine(Padded) +
                      " bytes per partition in 4-byte lanes exceed the " +
                      llvm::Twine(InstGPSIMDSB2SB::MaxBytesPerPartition) +
                      " a GPSIMDSB2SB moves");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyCollective(const InstCollectiveCompute &I,
                                             const std::string &P) {
  if (llvm::Error E = verifyCores(I.getGroup(), P + ".group", I.isLocal()))
    return E;
  CollectiveKind K = I.getKind();
  size_t G = I.getGroup().size();
  if ((K == CollectiveKind::SendRecv || K == CollectiveKind::SendRecvCCE) &&
      G != 2)
    return failAt(P + ".group", enumName(K) + " swaps between 2 cores, not " +
                                    llvm::Twine(G));
  if (isReducingCollective(K) != (I.getReduceOp() != ReduceOp::None)) {
    llvm::StringRef Rule =
        isReducingCollective(K) ? " needs a reduce op" : " takes no reduce op";
    return failAt(P + ".reduce", enumName(K) + Rule);
  }
  const AccessPattern &In = I.inputs()[0], &Out = I.outputs()[0];
  if (In.getType() != Out.getType())
    return failAt(P + ".outputs[0].dtype",
                  "a collective does not convert types");
  // The per-peer sizes of an AllToAllV are not in the IR.
  if (K == CollectiveKind::AllToAllV)
    return llvm::Error::success();
  std::optional<uint64_t> Want =
      collectiveOutputSize(K, In.getNumElements(), G);
  if (!Want)
    return failAt(P + ".inputs[0]", llvm::Twine(In.getNumElements()) +
                                        " elements do not split evenly over " +
                                        llvm::Twine(G) + " cores");
  if (*Want != Out.getNumElements())
    return failAt(P + ".outputs[0]",
                  enumName(K) + " of " + llvm::Twine(In.getNumElements()) +
                      " elements over " + llvm::Twine(G) + " cores writes " +
                      llvm::Twine(*Want) + " elements, not " +
                      llvm::Twine(Out.getNumElements()));
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyBarrier(const InstCoreBarrier &I,
                                          const std::string &P) {
  if (llvm::Error E = verifyCores(I.getCores(), P + ".cores", /*Local=*/true))
    return E;
  auto [It, New] = BarrierIds.try_emplace(I.getId(), &I);
  if (!New)
    return failAt(P + ".id", "barrier id " + llvm::Twine(I.getId()) +
                                 " is already used by '" +
                                 It->second->getName() + "'");
  return llvm::Error::success();
}

llvm::Error ModuleVerifier::verifyCores(llvm::ArrayRef<unsigned> Cores,
                                        const std::string &P, bool Local) {
  if (Cores.empty())
    return failAt(P, "needs at least one core");
  std::set<unsigned> Seen;
  unsigned Lnc = M.getTargetOptions().LncSize;
  for (size_t K = 0; K < Cores.size(); ++K) {
    if (!Seen.insert(Cores[K]).second)
      return failAt(at(P, K),
                    "core " + llvm::Twine(Cores[K]) + " is listed twice");
    if (Local && Cores[K] >= Lnc)
      return failAt(at(P, K), "core " + llvm::Twine(Cores[K]) +
                                  " is outside the logical core (lnc_size " +
                                  llvm::Twine(Lnc) + ")");
  }
  if (Local && !Seen.count(M.getNeuronCoreId()))
    return failAt(P, "core " + llvm::Twine(M.getNeuronCoreId()) +
                         ", which runs this module, is not listed");
  return llvm::Error::success();
}

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

} // namespace

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

namespace {

/// What the modules of one subgraph must agree on: remote locations name
/// real memory of the peer, completions wait for real writes, and every
/// semaphore that is waited on is signalled (and the other way round).
class SubgraphVerifier {
public:
  SubgraphVerifier(const Program &P, const Subgraph &S) : P(P) {
    for (size_t K = 0; K < S.size(); ++K)
      ByCore[S.modules()[K]->getNeuronCoreId()] = S.indices()[K];
  }
  llvm::Error verify();

private:
  const Module *module(unsigned Core) const {
    auto It = ByCore.find(Core);
    return It == ByCore.end() ? nullptr : P[It->second].get();
  }
  std::string noModule(unsigned Core) const {
    return "there is no module for core " + std::to_string(Core) +
           " in this subgraph";
  }
  const Instruction *findInstruction(unsigned Core, llvm::StringRef Name);
  llvm::Error verifyRemote(unsigned Index, size_t LocIndex,
                           const MemoryLocation &L);
  llvm::Error verifyInstruction(unsigned Index, const Instruction &I,
                                const std::string &Path);
  llvm::Error verifyCopiesListTheirCore(unsigned Index, const Instruction &I,
                                        const std::string &Path);

  const Program &P;
  std::map<unsigned, unsigned> ByCore;
  std::map<unsigned, llvm::StringMap<const Instruction *>> Names;
  /// (core, semaphore) pairs that are waited on and that are signalled.
  std::set<std::pair<unsigned, std::string>> Waited, Signalled;
  /// Where each waited semaphore is first waited on, for the error message.
  std::map<std::pair<unsigned, std::string>, std::string> WaitPaths,
      SignalPaths;
};

const Instruction *SubgraphVerifier::findInstruction(unsigned Core,
                                                     llvm::StringRef Name) {
  const Module *Mod = module(Core);
  if (!Mod)
    return nullptr;
  auto [It, New] = Names.try_emplace(Core);
  llvm::StringMap<const Instruction *> &ByName = It->second;
  if (New)
    Mod->walk([&](Instruction &I) { ByName[I.getName()] = &I; });
  return ByName.lookup(Name);
}

llvm::Error SubgraphVerifier::verifyRemote(unsigned Index, size_t LocIndex,
                                           const MemoryLocation &L) {
  std::string Path =
      indexed(modulePath(Index), "memory_locations", LocIndex) + ".remote";
  if (llvm::Error E = verifyRemoteTarget(L, module(L.getRemote()->Core)))
    return failAt(Path, llvm::toString(std::move(E)));
  return llvm::Error::success();
}

/// Before lnc_splitter a subgraph has one module, for core 0, written for the
/// whole logical core: every core will run a copy of it, identical but for
/// its core id. A barrier or a local collective of that module must
/// therefore list every core, or some core's copy would not take part in
/// what it executes.
llvm::Error SubgraphVerifier::verifyCopiesListTheirCore(unsigned Index,
                                                        const Instruction &I,
                                                        const std::string &Path) {
  unsigned Lnc = P[Index]->getTargetOptions().LncSize;
  if (Lnc == 1 || ByCore.size() != 1 || P[Index]->getNeuronCoreId() != 0)
    return llvm::Error::success();
  llvm::ArrayRef<unsigned> Cores;
  std::string Field;
  if (const auto *CB = llvm::dyn_cast<InstCoreBarrier>(&I)) {
    Cores = CB->getCores();
    Field = ".cores";
  } else if (const auto *CC = llvm::dyn_cast<InstCollectiveCompute>(&I)) {
    if (!CC->isLocal())
      return llvm::Error::success();
    Cores = CC->getGroup();
    Field = ".group";
  } else {
    return llvm::Error::success();
  }
  for (unsigned Core = 0; Core < Lnc; ++Core)
    if (!llvm::is_contained(Cores, Core))
      return failAt(Path + Field,
                    "core " + llvm::Twine(Core) +
                        " is not listed, but the module is not split yet: "
                        "every core 0.." +
                        llvm::Twine(Lnc - 1) +
                        " of the logical core runs a copy of it");
  return llvm::Error::success();
}

llvm::Error SubgraphVerifier::verifyInstruction(unsigned Index,
                                                const Instruction &I,
                                                const std::string &Path) {
  unsigned Self = P[Index]->getNeuronCoreId();
  if (llvm::Error E = verifyCopiesListTheirCore(Index, I, Path))
    return E;
  for (size_t K = 0; K < I.outputs().size(); ++K) {
    const MemoryLocation *L = I.outputs()[K].getLocation();
    if (!L->isRemote())
      continue;
    const RemoteRef &R = *L->getRemote();
    const MemoryLocation *T =
        module(R.Core)->getMemoryLocations().getMemlocByName(R.MemLoc);
    if (!T->isWrittenByAnotherCore())
      return failAt(indexed(Path, "outputs", K),
                    "writes '" + R.MemLoc + "' of core " + llvm::Twine(R.Core) +
                        " through '" + L->getName() + "', but core " +
                        llvm::Twine(R.Core) + "'s '" + R.MemLoc +
                        "' is not marked written_by_another_core");
  }
  if (const auto *TC = llvm::dyn_cast<InstTensorCompletion>(&I)) {
    for (size_t K = 0; K < TC->getWaits().size(); ++K) {
      const CompletionWait &W = TC->getWaits()[K];
      std::string WP = indexed(Path, "waits", K);
      if (!module(W.Core))
        return failAt(WP + ".core", noModule(W.Core));
      const Instruction *Target = findInstruction(W.Core, W.Instruction);
      if (!Target)
        return failAt(WP + ".instruction",
                      "core " + llvm::Twine(W.Core) +
                          " has no instruction named '" + W.Instruction + "'");
      if (Target->outputs().empty())
        return failAt(WP + ".instruction",
                      "'" + W.Instruction + "' of core " + llvm::Twine(W.Core) +
                          " writes nothing; a completion waits for writes");
    }
  }
  if (const auto *Copy = llvm::dyn_cast<InstCopyBase>(&I))
    if (const std::optional<SemaphoreSignal> &S = Copy->getSignal()) {
      if (!module(S->Core))
        return failAt(Path + ".signal.core", noModule(S->Core));
      Signalled.insert({S->Core, S->Semaphore});
      SignalPaths.try_emplace({S->Core, S->Semaphore}, Path);
    }
  if (const auto *SW = llvm::dyn_cast<InstSemaphoreWait>(&I)) {
    std::pair<unsigned, std::string> Key{Self, SW->getSemaphore().str()};
    Waited.insert(Key);
    WaitPaths.try_emplace(Key, Path);
  }
  return llvm::Error::success();
}

llvm::Error SubgraphVerifier::verify() {
  // A SharedDRAM name is one buffer for every core, so it starts with one
  // content: every core's copy has the same initial data, or none has any.
  llvm::StringMap<std::pair<const MemoryLocation *, unsigned>> SharedFirst;
  for (auto [Core, Index] : ByCore) {
    const Module &Mod = *P[Index];
    const MemoryLocationSet::Storage &Locs = Mod.getMemoryLocations().locations();
    for (size_t L = 0; L < Locs.size(); ++L) {
      if (Locs[L]->isRemote())
        if (llvm::Error E = verifyRemote(Index, L, *Locs[L]))
          return E;
      if (Locs[L]->getKind() != MemoryKind::SharedDRAM || Locs[L]->isRemote())
        continue;
      auto [It, New] =
          SharedFirst.try_emplace(Locs[L]->getName(), Locs[L].get(), Core);
      if (New)
        continue;
      const MemoryLocation &Other = *It->second.first;
      if (Other.getInitialData() != Locs[L]->getInitialData())
        return failAt(indexed(modulePath(Index), "memory_locations", L) +
                          ".initial_data",
                      "SharedDRAM location '" + Locs[L]->getName() +
                          "' starts with other initial data than on core " +
                          llvm::Twine(It->second.second) +
                          "; the cores share its bytes");
    }
  }
  for (auto [Core, Index] : ByCore) {
    const Module &Mod = *P[Index];
    for (unsigned B = 0; B < Mod.getNumBlocks(); ++B) {
      std::string BP = indexed(modulePath(Index), "blocks", B);
      size_t K = 0;
      for (const auto &I : *Mod.getBlock(B))
        if (llvm::Error E =
                verifyInstruction(Index, *I, indexed(BP, "instructions", K++)))
          return E;
    }
  }
  for (const auto &Key : Waited)
    if (!Signalled.count(Key))
      return failAt(WaitPaths[Key] + ".semaphore",
                    "no copy of this subgraph signals semaphore '" +
                        Key.second + "' of core " + llvm::Twine(Key.first));
  for (const auto &Key : Signalled)
    if (!Waited.count(Key))
      return failAt(SignalPaths[Key] + ".signal",
                    "signals semaphore '" + Key.second + "' of core " +
                        llvm::Twine(Key.first) +
                        ", which no SemaphoreWait of that core waits on");
  return llvm::Error::success();
}

} // namespace

llvm::Error verifyProgram(const Program &P) {
  if (P.empty())
    return makeError("$.modules: a program needs at least one module");
  std::set<std::pair<unsigned, unsigned>> Seen;
  std::set<unsigned> Finished;
  const TargetOptions &First = P[0]->getTargetOptions();
  for (unsigned I = 0; I < P.size(); ++I) {
    const Module &M = *P[I];
    std::string Path = modulePath(I);
    if (llvm::Error E = verifyModule(M, Path))
      return E;
    const TargetOptions &O = M.getTargetOptions();
    if (O.LncSize != First.LncSize || O.Arch != First.Arch)
      return failAt(Path + ".pass_options",
                    "lnc_size " + llvm::Twine(O.LncSize) + " and target " +
                        enumName(O.Arch) + " differ from $.modules[0]'s " +
                        llvm::Twine(First.LncSize) + " and " +
                        enumName(First.Arch));
    if (!Seen.insert({M.getSubgraphId(), M.getNeuronCoreId()}).second)
      return failAt(Path, "a second module for subgraph " +
                              llvm::Twine(M.getSubgraphId()) + ", core " +
                              llvm::Twine(M.getNeuronCoreId()));
    // The documented order: by subgraph, then by core. lnc_splitter and
    // the writer keep it, and subgraphs() relies on nothing else.
    if (I == 0)
      continue;
    const Module &Prev = *P[I - 1];
    if (M.getSubgraphId() == Prev.getSubgraphId()) {
      if (M.getNeuronCoreId() < Prev.getNeuronCoreId())
        return failAt(Path, "core " + llvm::Twine(M.getNeuronCoreId()) +
                                " of subgraph " +
                                llvm::Twine(M.getSubgraphId()) +
                                " comes after core " +
                                llvm::Twine(Prev.getNeuronCoreId()) +
                                "; a program lists its modules by subgraph, "
                                "then by core");
      continue;
    }
    Finished.insert(Prev.getSubgraphId());
    if (Finished.count(M.getSubgraphId()))
      return failAt(Path, "subgraph " + llvm::Twine(M.getSubgraphId()) +
                              " appears again after subgraph " +
                              llvm::Twine(Prev.getSubgraphId()) +
                              "; a program lists its modules by subgraph, "
                              "then by core");
  }
  for (const Subgraph &S : P.subgraphs())
    if (llvm::Error E = SubgraphVerifier(P, S).verify())
      return E;
  return llvm::Error::success();
}

} // namespace loom::bir
