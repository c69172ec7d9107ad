//===- HloStructuralEquality.h - Compare two modules piece by piece -------===//
//
// The round-trip contract is stated in terms of this: parse(print(m)) must be
// structurally equal to m. Computations and instructions are matched by
// name, so the order they are stored in does not matter; everything else
// (shapes with layouts, operands, attributes, literals, control
// dependencies, parameters, roots, the entry, the header) must agree.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_HLOSTRUCTURALEQUALITY_H
#define LOOM_HLO_IR_HLOSTRUCTURALEQUALITY_H

#include "loom/hlo/ir/HloModule.h"

#include <string>

namespace loom::hlo {

/// True if `a` and `b` are structurally equal. Otherwise, when `why` is not
/// null, it receives the first difference found, naming where it is.
bool StructurallyEqual(const HloModule &a, const HloModule &b, std::string *why = nullptr);

} // namespace loom::hlo

#endif
