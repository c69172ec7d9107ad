//===- HloVerifier.h - Structural and shape rules of an HLO module -------===//
//
// VerifyHloModule checks what every pass and the interpreter rely on without
// re-checking: names unique across the module, one root per computation,
// operands in the same computation and no cycles, parameters numbered
// 0..n-1, every called computation present with the signature its caller
// expects, and the shape rules of the common opcodes (elementwise, dot,
// reshape, transpose, broadcast, slice, concatenate, reduce, the collectives,
// tuples, while, call, conditional, fusion, custom-call arity).
// docs/hlo-verifier.md lists every rule.
//
// Opcodes it has no rule for are accepted: a rule that is not sure must not
// reject a module XLA accepts. Every problem is collected (up to a limit) so
// one run shows them all; each message names the computation and, where
// there is one, the instruction:
//   computation 'main', instruction 'dot.3': ...
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASS_HLOVERIFIER_H
#define LOOM_HLO_PASS_HLOVERIFIER_H

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/pass/HloPassInterface.h"

#include "llvm/Support/Error.h"

namespace loom::hlo {

/// Success, or one error whose message has one line per problem found.
/// The same as VerifyHloModule(module, 1).
llvm::Error VerifyHloModule(const HloModule &module);

/// VerifyHloModule on up to `threads` threads (0: the machine's cores, as
/// loom::resolveThreadCount reads it), one computation at a time each. The
/// report is the same, byte for byte, whatever the thread count: the same
/// problems in the same order, cut at the same limit. The module is only
/// read.
llvm::Error VerifyHloModule(const HloModule &module, unsigned threads);

/// VerifyHloModule as a pass, for pipelines: never changes the module.
class HloVerifier : public HloPassInterface {
public:
  llvm::StringRef name() const override { return "hlo_verifier"; }
  llvm::Expected<bool> Run(HloModule &module) override;
};

} // namespace loom::hlo

#endif
