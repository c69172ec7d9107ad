//===- ReadDocument.h - What loading every BIR document shares --*- C++ -*-===//
//
// A program document (Reader.cpp) and a launch document (LaunchJson.cpp)
// load alike: blank text is "<file>: empty document", a JSON syntax error is
// located by line and column, every error of the schema reader or of the
// verifier gets "<file>: " in front, and a tool's --lnc and --target replace
// every module's before verification (LoadOptions).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_JSON_READDOCUMENT_H
#define LOOM_LIB_BIR_JSON_READDOCUMENT_H

#include "loom/bir/json/BirJson.h"
#include "loom/bir/json/JsonDocument.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace loom::bir {

/// "<FileName>: <E's message>".
inline llvm::Error prefixFileName(llvm::StringRef FileName, llvm::Error E) {
  return makeError(FileName + ": " + llvm::toString(std::move(E)));
}

/// Parses Text and reads its root with Read. The document's nodes are
/// freed before this returns: what Read builds owns copies of everything.
template <typename T>
llvm::Expected<T>
readDocument(llvm::StringRef Text, llvm::StringRef FileName,
             llvm::function_ref<llvm::Expected<T>(JsonRef Root)> Read) {
  if (Text.trim().empty())
    return makeError(FileName + ": empty document");
  JsonDocument Doc;
  if (std::optional<JsonDocument::SyntaxError> E = Doc.parse(Text))
    return makeLocatedError(locate(FileName, Text, E->Offset),
                            "not valid JSON: " + E->Message);
  llvm::Expected<T> Out = Read(Doc.root());
  if (!Out)
    return prefixFileName(FileName, Out.takeError());
  return Out;
}

/// Sets every module's lnc_size and target that Opts gives.
inline void applyLoadOptions(const Program &Modules, const LoadOptions &Opts) {
  for (const std::unique_ptr<Module> &M : Modules) {
    if (Opts.LncSize)
      M->getTargetOptions().LncSize = *Opts.LncSize;
    if (Opts.Arch)
      M->getTargetOptions().Arch = *Opts.Arch;
  }
}

} // namespace loom::bir

#endif
