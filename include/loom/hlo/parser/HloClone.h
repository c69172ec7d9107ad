//===- HloClone.h - A deep copy of an HLO module --------------------------===//
//
// The copy is made by printing the module and parsing the text back: the
// round-trip contract (docs/hlo-text-format.md) makes it structurally equal
// to the original, and it keeps every attribute loom does not understand.
// hlo-opt --check-numerics keeps such a copy of the module before the
// passes run.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PARSER_HLOCLONE_H
#define LOOM_HLO_PARSER_HLOCLONE_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace loom::hlo {

/// A deep copy of `module`. An error (the printed text does not parse back)
/// means the module broke an invariant the printer relies on, e.g. after a
/// pass that bypassed the IR's API; it names the module and the parser's
/// message.
llvm::Expected<std::unique_ptr<HloModule>> CloneModule(const HloModule &module);

} // namespace loom::hlo

#endif
