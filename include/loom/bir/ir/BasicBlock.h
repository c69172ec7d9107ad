//===- BasicBlock.h - A straight-line run of instructions -------*- C++ -*-===//
//
// A block owns its instructions in program order and ends with one branch.
// Lowering passes insert and remove instructions in the middle of blocks, so
// the list gives O(1) insertion and removal and stable positions.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_BASICBLOCK_H
#define LOOM_BIR_IR_BASICBLOCK_H

#include "loom/bir/ir/Instruction.h"

#include <string>
#include <vector>

namespace loom::bir {

class BasicBlock {
public:
  using iterator = Instruction::List::iterator;
  using const_iterator = Instruction::List::const_iterator;

  BasicBlock(std::string Name, Module *Parent)
      : Name(std::move(Name)), Parent(Parent) {}
  BasicBlock(const BasicBlock &) = delete;
  BasicBlock &operator=(const BasicBlock &) = delete;

  llvm::StringRef getName() const { return Name; }
  Module *getParent() const { return Parent; }

  iterator begin() { return Insts.begin(); }
  iterator end() { return Insts.end(); }
  const_iterator begin() const { return Insts.begin(); }
  const_iterator end() const { return Insts.end(); }
  size_t size() const { return Insts.size(); }
  bool empty() const { return Insts.empty(); }

  /// Inserts I before Pos and returns it.
  Instruction *insert(iterator Pos, std::unique_ptr<Instruction> I);
  Instruction *append(std::unique_ptr<Instruction> I) {
    return insert(end(), std::move(I));
  }
  /// Destroys I, which must be in this block, and every dependency edge to
  /// or from it.
  void removeInstruction(Instruction *I);

  /// The first of the branches that end the block, or end() if the last
  /// instruction is not a branch.
  iterator getFirstTerminator();

  llvm::ArrayRef<BasicBlock *> successors() const { return Succs; }
  void addSuccessor(BasicBlock *BB) { Succs.push_back(BB); }

private:
  std::string Name;
  Module *Parent;
  Instruction::List Insts;
  std::vector<BasicBlock *> Succs;
};

} // namespace loom::bir

#endif
