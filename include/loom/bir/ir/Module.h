//===- Module.h - One core's program of one subgraph ------------*- C++ -*-===//
//
// A module is the code one NeuronCore runs for one subgraph: memory locations
// and a control-flow graph of blocks, block 0 being the entry. A program
// (Program.h) holds the modules of every subgraph; after lnc_splitter it
// holds one module per core of the logical core, which multi-core passes see
// together.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_MODULE_H
#define LOOM_BIR_IR_MODULE_H

#include "loom/bir/ir/BasicBlock.h"
#include "loom/bir/ir/MemoryLocation.h"

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::bir {

/// The facts of the target a module is compiled for. (The JSON form keeps
/// neuronx-cc's key for them, `pass_options`.)
struct TargetOptions {
  /// Number of physical cores in the logical core.
  unsigned LncSize = 1;
  Target Arch = Target::Trn2;
};

class Module {
public:
  Module(std::string Name, unsigned NeuronCoreId, unsigned SubgraphId,
         TargetOptions Options)
      : Name(std::move(Name)), NeuronCoreId(NeuronCoreId),
        SubgraphId(SubgraphId), Options(Options) {}
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  /// Drops the dependency edges of all instructions at once first, so that
  /// destroying a module is linear in its edges (an instruction that
  /// 10^6 others wait for would otherwise be searched 10^6 times).
  ~Module();

  llvm::StringRef getName() const { return Name; }
  unsigned getNeuronCoreId() const { return NeuronCoreId; }
  void setNeuronCoreId(unsigned Id) { NeuronCoreId = Id; }
  unsigned getSubgraphId() const { return SubgraphId; }
  TargetOptions &getTargetOptions() { return Options; }
  const TargetOptions &getTargetOptions() const { return Options; }

  MemoryLocationSet &getMemoryLocations() { return Locations; }
  const MemoryLocationSet &getMemoryLocations() const { return Locations; }

  /// Appends an empty block; the first one created is the entry.
  BasicBlock *createBlock(std::string BlockName);
  unsigned getNumBlocks() const { return Blocks.size(); }
  BasicBlock *getBlock(unsigned Index) const { return Blocks[Index].get(); }
  const std::vector<std::unique_ptr<BasicBlock>> &blocks() const {
    return Blocks;
  }

  /// A deep copy in memory: the same name, core, subgraph, options,
  /// locations, blocks and instructions, with every pointer (access
  /// patterns' locations, successors, dependencies) bound to the copy's own
  /// objects, so the copy shares nothing with this module. Saving either to
  /// JSON gives the same bytes.
  std::unique_ptr<Module> clone() const;

  /// Calls F for every instruction, blocks in order and each block's
  /// instructions in order: F(Instruction &) or F(BasicBlock &,
  /// Instruction &). F must not insert or remove instructions (collect
  /// them, then change the module).
  template <typename Fn> void walk(Fn &&F) const {
    for (const std::unique_ptr<BasicBlock> &BB : Blocks)
      for (const std::unique_ptr<Instruction> &I : *BB) {
        if constexpr (std::is_invocable_v<Fn &, BasicBlock &, Instruction &>)
          F(*BB, *I);
        else
          F(*I);
      }
  }

private:
  std::string Name;
  unsigned NeuronCoreId;
  unsigned SubgraphId;
  TargetOptions Options;
  MemoryLocationSet Locations;
  std::vector<std::unique_ptr<BasicBlock>> Blocks;
};

} // namespace loom::bir

// Code that names Program after including this header keeps compiling.
#include "loom/bir/ir/Program.h"

#endif
