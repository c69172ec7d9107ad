//===- HloAttributeNames.h - The attribute names HLO text may carry ------===//
//
// The one list of the attribute names XLA's HLO text writes: after an
// instruction's operands (`dimensions={0}`, `metadata={...}`, ...) and in
// the module header (`HloModule m, num_partitions=4`). The parser refuses
// any other name, so a typo (`lhs_contracting_dim={1}`, `num_partition=4`)
// is an error naming the closest known name instead of an attribute kept
// verbatim and silently ignored (docs/hlo-text-format.md, "Attributes").
//
// The names are those XLA's parser accepts (any opcode's, in XLA's
// spelling, old spellings that real dumps still carry included) and those
// of every dump in the corpus; an attribute the interpreter does not use is
// still known and printed back verbatim.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_HLOATTRIBUTENAMES_H
#define LOOM_HLO_IR_HLOATTRIBUTENAMES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace loom::hlo {

/// Every known instruction attribute name, sorted.
llvm::ArrayRef<llvm::StringRef> KnownInstructionAttributeNames();
/// Every known module header attribute name, sorted.
llvm::ArrayRef<llvm::StringRef> KnownModuleAttributeNames();

bool IsKnownInstructionAttribute(llvm::StringRef name);
bool IsKnownModuleAttribute(llvm::StringRef name);

/// The known name closest to `name` by edit distance (ties: the first in
/// sorted order), for a "did you mean" after an unknown one.
llvm::StringRef ClosestKnownName(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> known);

} // namespace loom::hlo

#endif
