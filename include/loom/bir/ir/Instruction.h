//===- Instruction.h - Base class of BIR instructions -----------*- C++ -*-===//
//
// An instruction runs on one engine, reads its input access patterns and
// writes its output access patterns. Engines run in parallel, so an
// instruction also names the instructions it must wait for (the semaphores
// between engines). Every instruction keeps the reverse edges too, so that
// removing one leaves no dangling dependency behind.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_INSTRUCTION_H
#define LOOM_BIR_IR_INSTRUCTION_H

#include "loom/bir/ir/AccessPattern.h"
#include "loom/bir/ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom::bir {

class BasicBlock;
class Module;

/// Opcodes. GPSIMDSB2SB, CollectiveCompute, CoreBarrier and TensorCompletion
/// carry neuronx-cc's ordinals; the others are loom's, numbered from 200 so they
/// cannot collide with an ordinal of neuronx-cc that is not known yet;
/// 220-229 hold the opcodes of run-time addressing.
enum class InstructionType : uint16_t {
  GPSIMDSB2SB = 33,
  CollectiveCompute = 48,
  CoreBarrier = 87,
  TensorCompletion = 94,
  Matmul = 200,
  Activation = 201,
  TensorTensor = 202,
  TensorCopy = 203,
  Memset = 204,
  DMACopy = 205,
  Branch = 206,
  SemaphoreWait = 207,
  Select = 208,
  TensorReduce = 209,
  Iota = 210,
  TensorConvert = 211,
  IndirectDMACopy = 220,
};

llvm::StringRef getInstructionTypeName(InstructionType T);
std::optional<InstructionType> parseInstructionType(llvm::StringRef S);
/// Every opcode, in ordinal order.
llvm::ArrayRef<InstructionType> allInstructionTypes();

class Instruction {
public:
  using List = std::list<std::unique_ptr<Instruction>>;

  Instruction(const Instruction &) = delete;
  Instruction &operator=(const Instruction &) = delete;
  virtual ~Instruction();

  InstructionType getType() const { return Type; }
  llvm::StringRef getName() const { return Name; }
  void setName(std::string N) { Name = std::move(N); }
  Engine getEngine() const { return Eng; }
  void setEngine(Engine E) { Eng = E; }
  bool isTerminator() const { return Type == InstructionType::Branch; }

  /// The block holding this instruction; null until inserted.
  BasicBlock *getBasicBlock() const { return Parent; }
  Module *getModule() const;
  /// Position in the parent block; valid only while inserted.
  List::iterator getIterator() const { return Self; }

  llvm::ArrayRef<AccessPattern> inputs() const { return Inputs; }
  llvm::MutableArrayRef<AccessPattern> inputs() { return Inputs; }
  llvm::ArrayRef<AccessPattern> outputs() const { return Outputs; }
  llvm::MutableArrayRef<AccessPattern> outputs() { return Outputs; }
  void addInput(AccessPattern AP) { Inputs.push_back(std::move(AP)); }
  void addOutput(AccessPattern AP) { Outputs.push_back(std::move(AP)); }

  /// The instructions this one waits for, in the order they were added.
  llvm::ArrayRef<Instruction *> dependencies() const { return Deps; }
  /// The instructions that wait for this one, in no particular order.
  llvm::ArrayRef<Instruction *> users() const { return Users; }
  /// Adds Dep unless it is already a dependency (a search of the list).
  void addDependency(Instruction *Dep);
  /// Adds Dep, which the caller knows is not a dependency yet, in O(1): for
  /// a loader that checks duplicates itself, so that an instruction waiting
  /// for N others costs O(N), not O(N^2).
  void addNewDependency(Instruction *Dep);
  void removeDependency(Instruction *Dep);

protected:
  Instruction(InstructionType Type, std::string Name, Engine Eng)
      : Type(Type), Name(std::move(Name)), Eng(Eng) {}

private:
  friend class BasicBlock;
  friend class Module;
  /// Removes every edge to and from this instruction.
  void dropDependencyEdges();
  /// Before module M is destroyed whole: forgets the edges within M without
  /// updating their other ends (which go too), so the teardown is linear,
  /// and removes the edges to other modules as dropDependencyEdges does.
  void dropEdgesForModuleTeardown(const Module *M);

  const InstructionType Type;
  std::string Name;
  Engine Eng;
  BasicBlock *Parent = nullptr;
  List::iterator Self;
  std::vector<AccessPattern> Inputs;
  std::vector<AccessPattern> Outputs;
  std::vector<Instruction *> Deps;
  std::vector<Instruction *> Users;
};

} // namespace loom::bir

#endif
