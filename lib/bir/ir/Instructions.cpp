#include "loom/bir/ir/Instructions.h"

#include "loom/bir/ir/BasicBlock.h"
#include "loom/bir/ir/MemoryLocation.h"

#include "llvm/ADT/STLExtras.h"

namespace loom::bir {

namespace {
struct TypeName {
  InstructionType Type;
  llvm::StringRef Name;
};

const TypeName TypeNames[] = {
    {InstructionType::GPSIMDSB2SB, "GPSIMDSB2SB"},
    {InstructionType::CollectiveCompute, "CollectiveCompute"},
    {InstructionType::CoreBarrier, "CoreBarrier"},
    {InstructionType::TensorCompletion, "TensorCompletion"},
    {InstructionType::Matmul, "Matmul"},
    {InstructionType::Activation, "Activation"},
    {InstructionType::TensorTensor, "TensorTensor"},
    {InstructionType::TensorCopy, "TensorCopy"},
    {InstructionType::Memset, "Memset"},
    {InstructionType::DMACopy, "DMACopy"},
    {InstructionType::Branch, "Branch"},
    {InstructionType::SemaphoreWait, "SemaphoreWait"},
    {InstructionType::Select, "Select"},
    {InstructionType::TensorReduce, "TensorReduce"},
    {InstructionType::Iota, "Iota"},
    {InstructionType::TensorConvert, "TensorConvert"},
    {InstructionType::IndirectDMACopy, "IndirectDMACopy"},
};
} // namespace

llvm::StringRef getInstructionTypeName(InstructionType T) {
  for (const TypeName &E : TypeNames)
    if (E.Type == T)
      return E.Name;
  llvm_unreachable("instruction type without a name");
}

std::optional<InstructionType> parseInstructionType(llvm::StringRef S) {
  for (const TypeName &E : TypeNames)
    if (E.Name == S)
      return E.Type;
  return std::nullopt;
}

llvm::ArrayRef<InstructionType> allInstructionTypes() {
  static const std::vector<InstructionType> All = [] {
    std::vector<InstructionType> V;
    for (const TypeName &E : TypeNames)
      V.push_back(E.Type);
    return V;
  }();
  return All;
}

Instruction::~Instruction() { dropDependencyEdges(); }

Module *Instruction::getModule() const {
  return Parent ? Parent->getParent() : nullptr;
}

void Instruction::addDependency(Instruction *Dep) {
  if (llvm::is_contained(Deps, Dep))
    return;
  Deps.push_back(Dep);
  Dep->Users.push_back(this);
}

void Instruction::addNewDependency(Instruction *Dep) {
  Deps.push_back(Dep);
  Dep->Users.push_back(this);
}

void Instruction::removeDependency(Instruction *Dep) {
  llvm::erase_value(Deps, Dep);
  llvm::erase_value(Dep->Users, this);
}

void Instruction::dropDependencyEdges() {
  for (Instruction *Dep : Deps)
    llvm::erase_value(Dep->Users, this);
  for (Instruction *User : Users)
    llvm::erase_value(User->Deps, this);
  Deps.clear();
  Users.clear();
}

void Instruction::dropEdgesForModuleTeardown(const Module *M) {
  for (Instruction *Dep : Deps)
    if (Dep->getModule() != M)
      llvm::erase_value(Dep->Users, this);
  for (Instruction *User : Users)
    if (User->getModule() != M)
      llvm::erase_value(User->Deps, this);
  Deps.clear();
  Users.clear();
}

bool isReducingCollective(CollectiveKind K) {
  return K == CollectiveKind::AllReduce || K == CollectiveKind::ReduceScatter ||
         K == CollectiveKind::PermuteReduce ||
         K == CollectiveKind::PermuteReduceImplicit;
}

unsigned InstBranch::getNumSuccessors() const {
  switch (Kind) {
  case BranchKind::Jump:
    return 1;
  case BranchKind::Loop:
    return 2;
  case BranchKind::Return:
    return 0;
  }
  llvm_unreachable("unknown branch kind");
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<CollectiveKind>() {
  static const llvm::StringRef Names[] = {"SendRecv",
                                          "SendRecvCCE",
                                          "AllReduce",
                                          "ReduceScatter",
                                          "AllGather",
                                          "AllToAll",
                                          "AllToAllV",
                                          "Permute",
                                          "PermuteReduce",
                                          "PermuteImplicit",
                                          "PermuteReduceImplicit"};
  return Names;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<ReduceOp>() {
  static const llvm::StringRef Names[] = {"None", "Add", "Max", "Min"};
  return Names;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<ActivationFunc>() {
  static const llvm::StringRef Names[] = {
      "Identity", "Relu", "Exp", "Tanh",   "Log",        "Sqrt",      "Rsqrt",
      "Logistic", "Sin",  "Cos", "Abs",    "Negate",     "BitwiseNot", "LogicalNot"};
  return Names;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<ArithOp>() {
  static const llvm::StringRef Names[] = {
      "Add",   "Subtract", "Multiply", "Max",       "Min",  "Divide",
      "Power", "Remainder", "And",     "Or",        "Xor",  "Equal",
      "NotEqual", "Less",   "LessEqual", "Greater", "GreaterEqual"};
  return Names;
}

bool isComparison(ArithOp Op) { return Op >= ArithOp::Equal; }

bool isBitwise(ArithOp Op) {
  return Op == ArithOp::And || Op == ArithOp::Or || Op == ArithOp::Xor;
}

bool isIntegerOnly(ActivationFunc F) {
  return F == ActivationFunc::BitwiseNot || F == ActivationFunc::LogicalNot;
}

bool hasIntegerForm(ActivationFunc F) {
  switch (F) {
  case ActivationFunc::Identity:
  case ActivationFunc::Relu:
  case ActivationFunc::Abs:
  case ActivationFunc::Negate:
  case ActivationFunc::BitwiseNot:
  case ActivationFunc::LogicalNot:
    return true;
  default:
    return false;
  }
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<BranchKind>() {
  static const llvm::StringRef Names[] = {"Jump", "Loop", "Return"};
  return Names;
}

bool InstGPSIMDSB2SB::isCompatible(unsigned LncSize, const AccessPattern &Src,
                                   const AccessPattern &Dst) {
  if (LncSize != 2)
    return false;
  if (Src.getLocation()->getKind() != MemoryKind::SB ||
      Dst.getLocation()->getKind() != MemoryKind::SB)
    return false;
  if (Src.getType() != Dst.getType() ||
      Src.getNumPartitions() != Dst.getNumPartitions() ||
      Src.getNumElementsPerPartition() != Dst.getNumElementsPerPartition())
    return false;
  return normalizePattern(Src.getPattern()) ==
         normalizePattern(Dst.getPattern());
}

} // namespace loom::bir
