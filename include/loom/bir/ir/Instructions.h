//===- Instructions.h - The instruction kinds of BIR ------------*- C++ -*-===//
//
// One class per opcode. What each kind reads and writes, element by element,
// is specified in docs/bir.md; the verifier enforces the operand shapes that
// specification relies on.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_INSTRUCTIONS_H
#define LOOM_BIR_IR_INSTRUCTIONS_H

#include "loom/bir/ir/Instruction.h"

#include "llvm/Support/Casting.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::bir {

/// neuronx-cc's ordinals: one CollectiveCompute opcode multiplexes them all.
enum class CollectiveKind : uint8_t {
  SendRecv = 0,
  SendRecvCCE = 1,
  AllReduce = 2,
  ReduceScatter = 3,
  AllGather = 4,
  AllToAll = 5,
  AllToAllV = 6,
  Permute = 7,
  PermuteReduce = 8,
  PermuteImplicit = 9,
  PermuteReduceImplicit = 10,
};

/// True for the kinds that combine values and so need a reduce op.
bool isReducingCollective(CollectiveKind K);

enum class ReduceOp : uint8_t { None, Add, Max, Min };
/// Activation's functions (docs/bir.md, "Activation"). The first four are
/// the original ones; the others follow in ordinal order.
enum class ActivationFunc : uint8_t {
  Identity,
  Relu,
  Exp,
  Tanh,
  Log,
  Sqrt,
  Rsqrt,
  Logistic,
  Sin,
  Cos,
  Abs,
  Negate,
  /// ~x on an integer type.
  BitwiseNot,
  /// x == 0 ? 1 : 0 on an integer type (HLO's not of a pred held as uint8).
  LogicalNot,
};
/// TensorTensor's and TensorReduce's operations (docs/bir.md,
/// "TensorTensor"). Comparisons write 1 or 0.
enum class ArithOp : uint8_t {
  Add,
  Subtract,
  Multiply,
  Max,
  Min,
  Divide,
  Power,
  Remainder,
  And,
  Or,
  Xor,
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
};

/// Equal .. GreaterEqual: the result is 1 or 0.
bool isComparison(ArithOp Op);
/// And, Or, Xor: defined on integer operands only.
bool isBitwise(ArithOp Op);
/// BitwiseNot, LogicalNot: defined on integer operands only.
bool isIntegerOnly(ActivationFunc F);
/// The functions that an Activation whose input and output have one integer
/// type computes exactly in that type (Identity, Relu, Abs, Negate and the
/// integer-only ones); the others always compute in fp32.
bool hasIntegerForm(ActivationFunc F);
/// Jump has one successor, Return none; Loop has two: it goes back to the
/// first TripCount - 1 times in a row, then to the second.
enum class BranchKind : uint8_t { Jump, Loop, Return };

template <> llvm::ArrayRef<llvm::StringRef> enumNames<CollectiveKind>();
template <> llvm::ArrayRef<llvm::StringRef> enumNames<ReduceOp>();
template <> llvm::ArrayRef<llvm::StringRef> enumNames<ActivationFunc>();
template <> llvm::ArrayRef<llvm::StringRef> enumNames<ArithOp>();
template <> llvm::ArrayRef<llvm::StringRef> enumNames<BranchKind>();

/// Instructions with one opcode and no attributes of their own.
template <InstructionType T> class SimpleInstruction : public Instruction {
public:
  SimpleInstruction(std::string Name, Engine Eng)
      : Instruction(T, std::move(Name), Eng) {}
  static bool classof(const Instruction *I) { return I->getType() == T; }
};

/// Element-wise copy between on-chip tiles, converting the data type.
using InstTensorCopy = SimpleInstruction<InstructionType::TensorCopy>;
/// out = pred != 0 ? on_true : on_false, element by element (inputs: pred,
/// on_true, on_false).
using InstSelect = SimpleInstruction<InstructionType::Select>;
/// Element-wise conversion with XLA's convert rules (truncation toward zero
/// to integers, wrap-around between integers; docs/bir.md "TensorConvert").
using InstTensorConvert = SimpleInstruction<InstructionType::TensorConvert>;
/// A write that a TensorCompletion waits for: instruction Instruction of core
/// Core's module (same subgraph).
struct CompletionWait {
  unsigned Core;
  std::string Instruction;

  friend bool operator==(const CompletionWait &A, const CompletionWait &B) {
    return A.Core == B.Core && A.Instruction == B.Instruction;
  }
};

/// Point-to-point completion token (PTCOM) on the tensors of its inputs. It
/// finishes once its core's earlier writes to those tensors have finished and
/// every execution of each waited instruction on its core has finished
/// (docs/bir.md, "TensorCompletion").
class InstTensorCompletion : public Instruction {
public:
  InstTensorCompletion(std::string Name, Engine Eng)
      : Instruction(InstructionType::TensorCompletion, std::move(Name), Eng) {}

  llvm::ArrayRef<CompletionWait> getWaits() const { return Waits; }
  void addWait(CompletionWait W) { Waits.push_back(std::move(W)); }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::TensorCompletion;
  }

private:
  std::vector<CompletionWait> Waits;
};

/// In remote-semaphore mode a copy raises semaphore Semaphore of core Core by
/// one when its writes have landed.
struct SemaphoreSignal {
  unsigned Core;
  std::string Semaphore;
};

/// The copies that can signal a semaphore: DMACopy and GPSIMDSB2SB.
class InstCopyBase : public Instruction {
public:
  const std::optional<SemaphoreSignal> &getSignal() const { return Signal; }
  void setSignal(unsigned Core, std::string Semaphore) {
    Signal = SemaphoreSignal{Core, std::move(Semaphore)};
  }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::DMACopy ||
           I->getType() == InstructionType::GPSIMDSB2SB;
  }

protected:
  using Instruction::Instruction;

private:
  std::optional<SemaphoreSignal> Signal;
};

/// Blocks until its core's counting semaphore Semaphore holds at least Count,
/// then takes Count from it. Every semaphore starts at 0.
class InstSemaphoreWait : public Instruction {
public:
  InstSemaphoreWait(std::string Name, Engine Eng, std::string Semaphore,
                    unsigned Count)
      : Instruction(InstructionType::SemaphoreWait, std::move(Name), Eng),
        Semaphore(std::move(Semaphore)), Count(Count) {}

  llvm::StringRef getSemaphore() const { return Semaphore; }
  unsigned getCount() const { return Count; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::SemaphoreWait;
  }

private:
  std::string Semaphore;
  unsigned Count;
};

class InstCollectiveCompute : public Instruction {
public:
  InstCollectiveCompute(std::string Name, Engine Eng, CollectiveKind Kind,
                        std::vector<unsigned> Group, ReduceOp Op, bool Local)
      : Instruction(InstructionType::CollectiveCompute, std::move(Name), Eng),
        Kind(Kind), Group(std::move(Group)), Op(Op), Local(Local) {}

  CollectiveKind getKind() const { return Kind; }
  /// The participating cores, in rank order.
  llvm::ArrayRef<unsigned> getGroup() const { return Group; }
  ReduceOp getReduceOp() const { return Op; }
  /// True when every core of the group is in this logical core.
  bool isLocal() const { return Local; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::CollectiveCompute;
  }

private:
  CollectiveKind Kind;
  std::vector<unsigned> Group;
  ReduceOp Op;
  bool Local;
};

/// A DMA transfer; when accumulating, dst += src (Neuron's DMA compute, add
/// only).
class InstDMACopy : public InstCopyBase {
public:
  InstDMACopy(std::string Name, Engine Eng, bool Accumulate)
      : InstCopyBase(InstructionType::DMACopy, std::move(Name), Eng),
        Accumulate(Accumulate) {}

  bool isAccumulate() const { return Accumulate; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::DMACopy;
  }

private:
  bool Accumulate;
};

/// The GPSIMD engine's SBUF-to-SBUF copy, which can reach the peer core.
class InstGPSIMDSB2SB : public InstCopyBase {
public:
  /// Every element occupies a 4-byte lane, so 256 elements per partition
  /// whatever the type.
  static constexpr uint64_t MaxBytesPerPartition = 1024;

  InstGPSIMDSB2SB(std::string Name, Engine Eng, bool Lowered)
      : InstCopyBase(InstructionType::GPSIMDSB2SB, std::move(Name), Eng),
        Lowered(Lowered) {}

  /// Set on the copies that lower_local_collectives creates.
  bool isLowered() const { return Lowered; }

  /// Whether a copy from Src to Dst can be an SB2SB copy (neuronx-cc's
  /// InstGPSIMDSB2SB::isCompatible): a logical core of exactly 2 cores,
  /// checked first, then both tiles in SB with the same data type,
  /// partition count, elements per partition and layout (the same
  /// normalizePattern). The byte budget is a separate gate.
  static bool isCompatible(unsigned LncSize, const AccessPattern &Src,
                           const AccessPattern &Dst);

  static uint64_t getEffectiveBytesPerPartition(uint64_t BytesPerPartition,
                                                DataType T) {
    return BytesPerPartition * (4 / getDataTypeSize(T));
  }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::GPSIMDSB2SB;
  }

private:
  bool Lowered;
};

class InstCoreBarrier : public Instruction {
public:
  InstCoreBarrier(std::string Name, Engine Eng, unsigned Id,
                  std::vector<unsigned> Cores)
      : Instruction(InstructionType::CoreBarrier, std::move(Name), Eng), Id(Id),
        Cores(std::move(Cores)) {}

  /// Matches the barrier instances of the cores that meet at it.
  unsigned getId() const { return Id; }
  void setId(unsigned NewId) { Id = NewId; }
  llvm::ArrayRef<unsigned> getCores() const { return Cores; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::CoreBarrier;
  }

private:
  unsigned Id;
  std::vector<unsigned> Cores;
};

/// out = stationary^T x moving on the PE array, optionally added to out.
class InstMatmul : public Instruction {
public:
  InstMatmul(std::string Name, Engine Eng, bool Accumulate)
      : Instruction(InstructionType::Matmul, std::move(Name), Eng),
        Accumulate(Accumulate) {}

  bool isAccumulate() const { return Accumulate; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::Matmul;
  }

private:
  bool Accumulate;
};

/// out = Func(in * Scale).
class InstActivation : public Instruction {
public:
  InstActivation(std::string Name, Engine Eng, ActivationFunc Func,
                 double Scale)
      : Instruction(InstructionType::Activation, std::move(Name), Eng),
        Func(Func), Scale(Scale) {}

  ActivationFunc getFunc() const { return Func; }
  double getScale() const { return Scale; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::Activation;
  }

private:
  ActivationFunc Func;
  double Scale;
};

/// out = in0 Op in1, element by element.
class InstTensorTensor : public Instruction {
public:
  InstTensorTensor(std::string Name, Engine Eng, ArithOp Op)
      : Instruction(InstructionType::TensorTensor, std::move(Name), Eng),
        Op(Op) {}

  ArithOp getOp() const { return Op; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::TensorTensor;
  }

private:
  ArithOp Op;
};

/// Folds each group of G consecutive input elements of a partition (G = input
/// elements / output elements per partition) into one output element with
/// Op, starting from the output's value (Accumulate) or from Init.
class InstTensorReduce : public Instruction {
public:
  InstTensorReduce(std::string Name, Engine Eng, ArithOp Op, bool Accumulate,
                   double Init = 0)
      : Instruction(InstructionType::TensorReduce, std::move(Name), Eng),
        Op(Op), Accumulate(Accumulate), Init(Init) {}

  ArithOp getOp() const { return Op; }
  bool isAccumulate() const { return Accumulate; }
  /// The fold's starting value when not accumulating; may be +-inf or NaN.
  double getInit() const { return Init; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::TensorReduce;
  }

private:
  ArithOp Op;
  bool Accumulate;
  double Init;
};

/// Writes an affine function of each output element's position:
/// convert(Start + PartitionStep * p + sum_k Multipliers[k] * i_k, T_out),
/// with p the partition (from the pattern's first) and i_k the index of
/// dimension k of the output's pattern.
class InstIota : public Instruction {
public:
  InstIota(std::string Name, Engine Eng, int64_t Start, int64_t PartitionStep,
           std::vector<int64_t> Multipliers)
      : Instruction(InstructionType::Iota, std::move(Name), Eng), Start(Start),
        PartitionStep(PartitionStep), Multipliers(std::move(Multipliers)) {}

  int64_t getStart() const { return Start; }
  int64_t getPartitionStep() const { return PartitionStep; }
  /// One per dimension of the output's pattern, outermost first.
  llvm::ArrayRef<int64_t> getMultipliers() const { return Multipliers; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::Iota;
  }

private:
  int64_t Start;
  int64_t PartitionStep;
  std::vector<int64_t> Multipliers;
};

class InstMemset : public Instruction {
public:
  InstMemset(std::string Name, Engine Eng, double Value)
      : Instruction(InstructionType::Memset, std::move(Name), Eng),
        Value(Value) {}

  /// Any double: +-inf and NaN too (JSON spells them "inf", "-inf", "nan").
  double getValue() const { return Value; }

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::Memset;
  }

private:
  double Value;
};

/// The terminator of every block; the successors are the block's.
class InstBranch : public Instruction {
public:
  InstBranch(std::string Name, Engine Eng, BranchKind Kind,
             unsigned TripCount = 0)
      : Instruction(InstructionType::Branch, std::move(Name), Eng), Kind(Kind),
        TripCount(TripCount) {}

  BranchKind getKind() const { return Kind; }
  /// How many times a Loop's body runs; 0 for the other kinds.
  unsigned getTripCount() const { return TripCount; }
  /// The number of successors the kind requires.
  unsigned getNumSuccessors() const;

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::Branch;
  }

private:
  BranchKind Kind;
  unsigned TripCount;
};

} // namespace loom::bir

#include "loom/bir/ir/IndirectDMACopy.h"

#endif
