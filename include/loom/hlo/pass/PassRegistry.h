//===- PassRegistry.h - HLO passes by name, for the tools ----------------===//
//
// hlo-opt builds its pipeline from `--passes=a,b`: each name is looked up
// here. Registration is explicit (RegisterAllHloPasses in
// loom/hlo/passes/Passes.h) rather than done by static initializers, which
// the linker drops when they sit in a static library nobody references.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASS_PASSREGISTRY_H
#define LOOM_HLO_PASS_PASSREGISTRY_H

#include "loom/hlo/pass/HloPassInterface.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom::hlo {

using HloPassFactory = std::function<std::unique_ptr<HloPassInterface>()>;

/// Registers (or replaces) the factory of the pass called `name`.
void RegisterHloPass(llvm::StringRef name, HloPassFactory factory);

/// A new instance of the pass called `name`; every name is spelled with
/// underscores (`hlo_dce`, `neuron_looped_einsum_replacer`) and a hyphen
/// stands for an underscore (`hlo-dce`, the old spelling). For an unknown
/// name, the error "unknown pass 'x'; valid passes: a, b, c".
llvm::Expected<std::unique_ptr<HloPassInterface>> CreateHloPass(llvm::StringRef name);

/// Every registered name, sorted.
std::vector<std::string> RegisteredHloPassNames();

} // namespace loom::hlo

#endif
