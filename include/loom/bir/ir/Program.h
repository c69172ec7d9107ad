//===- Program.h - The modules of every subgraph ----------------*- C++ -*-===//
//
// A program owns the modules of one or more subgraphs. Before lnc_splitter a
// subgraph has one module, for core 0; after it, one module per physical
// core. The multi-core passes, the verifier and the simulator work on one
// subgraph at a time, with its modules indexed by core: subgraphs() is the
// one place that groups them (docs/bir.md, "Programs and modules").
//
// The modules are kept in a vector, and Program offers the vector's
// interface (begin, end, size, operator[], push_back, ...), so code written
// when a program was a plain vector of modules reads the same.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_PROGRAM_H
#define LOOM_BIR_IR_PROGRAM_H

#include "loom/bir/ir/Module.h"

#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <utility>
#include <vector>

namespace loom::bir {

/// The modules of one subgraph of a program, indexed by core. It points
/// into the program and is valid until the program's list of modules
/// changes.
class Subgraph {
public:
  unsigned getId() const { return Id; }
  /// Core Core's module, or null when the subgraph has none for it (the
  /// first one when, against the verifier's rule, it has two).
  Module *getModule(unsigned Core) const {
    return Core < ByCore.size() ? ByCore[Core] : nullptr;
  }
  /// One slot per core 0..(the largest core with a module); null where a
  /// core has no module.
  llvm::ArrayRef<Module *> byCore() const { return ByCore; }
  /// Every module of the subgraph, by core (program order among modules of
  /// the same core).
  llvm::ArrayRef<Module *> modules() const { return Modules; }
  /// The position in the program of each of modules().
  llvm::ArrayRef<unsigned> indices() const { return Indices; }
  size_t size() const { return Modules.size(); }
  /// True when the subgraph has exactly one module for each core
  /// 0..Lnc-1: it is split for a logical core of Lnc cores.
  bool isSplit(unsigned Lnc) const;

private:
  friend class Program;
  unsigned Id = 0;
  std::vector<Module *> ByCore;
  std::vector<Module *> Modules;
  std::vector<unsigned> Indices;
};

class Program {
public:
  using Storage = std::vector<std::unique_ptr<Module>>;
  using value_type = Storage::value_type;
  using iterator = Storage::iterator;
  using const_iterator = Storage::const_iterator;
  using size_type = Storage::size_type;

  Program() = default;
  explicit Program(Storage Modules) : Modules(std::move(Modules)) {}
  Program(Program &&) = default;
  Program &operator=(Program &&) = default;
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  iterator begin() { return Modules.begin(); }
  iterator end() { return Modules.end(); }
  const_iterator begin() const { return Modules.begin(); }
  const_iterator end() const { return Modules.end(); }
  size_type size() const { return Modules.size(); }
  bool empty() const { return Modules.empty(); }
  std::unique_ptr<Module> &operator[](size_type I) { return Modules[I]; }
  const std::unique_ptr<Module> &operator[](size_type I) const {
    return Modules[I];
  }
  std::unique_ptr<Module> &front() { return Modules.front(); }
  const std::unique_ptr<Module> &front() const { return Modules.front(); }
  std::unique_ptr<Module> &back() { return Modules.back(); }
  const std::unique_ptr<Module> &back() const { return Modules.back(); }
  void push_back(std::unique_ptr<Module> M) { Modules.push_back(std::move(M)); }
  template <typename... Args> std::unique_ptr<Module> &emplace_back(Args &&...A) {
    return Modules.emplace_back(std::forward<Args>(A)...);
  }
  void reserve(size_type N) { Modules.reserve(N); }
  void clear() { Modules.clear(); }

  /// The subgraphs in order of first appearance, each with its modules by
  /// core. Works on any list of modules, ordered or not, so that passes can
  /// use it on a program that is not verified yet.
  std::vector<Subgraph> subgraphs() const;

  /// A deep copy of every module (Module::clone), in the same order.
  Program clone() const;

  /// Calls F(Instruction &) for every instruction of every module, modules
  /// in program order, each as Module::walk. F must not insert or remove
  /// instructions: collect them first.
  template <typename Fn> void walk(Fn &&F) const {
    for (const std::unique_ptr<Module> &M : Modules)
      M->walk(F);
  }

private:
  Storage Modules;
};

} // namespace loom::bir

#endif
