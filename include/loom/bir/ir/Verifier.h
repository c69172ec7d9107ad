//===- Verifier.h - Structural and semantic checks of BIR -------*- C++ -*-===//
//
// The rules are listed in docs/bir.md. An error message starts with the path
// of the offending element in the JSON form of the program, for example
// "$.modules[0].blocks[1].instructions[3].inputs[0]: ...", so an error in a
// loaded document points at the text to fix. Paths follow the IR's order,
// which is the document's order. The verifier writes its paths itself; code
// that names a module of a document uses getModulePath of the JSON layer
// (loom/bir/json/BirJson.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_VERIFIER_H
#define LOOM_BIR_IR_VERIFIER_H

#include "loom/bir/ir/Module.h"

#include "llvm/Support/Error.h"

#include <string>

namespace loom::bir {

/// Verifies one module; Path is the module's own path in its document.
llvm::Error verifyModule(const Module &M, llvm::StringRef Path);

/// Checks the cross-module rules of remote location L (docs/bir.md, "Remote
/// locations"): Peer, the module of its subgraph for the core it names (null
/// if there is none), has a local location of that name with the same kind,
/// type and size. The error names the location, not a path.
llvm::Error verifyRemoteTarget(const MemoryLocation &L, const Module *Peer);

/// Verifies every module, then what the modules of a program must agree on:
/// one lnc_size and one target, and at most one module per (subgraph, core).
llvm::Error verifyProgram(const Program &P);

} // namespace loom::bir

#endif
