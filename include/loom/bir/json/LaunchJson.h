//===- LaunchJson.h - The JSON form of launch documents ---------*- C++ -*-===//
//
// A launch document holds the BIR program of every device of an SPMD
// launch and where each HLO entry parameter and output lives
// (loom/bir/ir/Launch.h). docs/bir.md ("Launch documents") gives the schema.
// Loading is validation, as for program documents; saving is deterministic
// and a loaded document saves to the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_JSON_LAUNCHJSON_H
#define LOOM_BIR_JSON_LAUNCHJSON_H

#include "loom/bir/ir/Launch.h"
#include "loom/bir/json/BirJson.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace loom::bir {

/// What a JSON text is, judged by its top-level keys without parsing the
/// rest: a program document has "modules", a launch document "launch".
enum class DocumentKind { Program, Launch, Unknown };
DocumentKind getDocumentKind(llvm::StringRef Text);

/// Parses, checks the schema, applies Opts (to the launch and every module)
/// and verifies a launch document (verifyLaunch). Errors read
/// "<FileName>: <JSON path>: <what is wrong>".
llvm::Expected<Launch> parseLaunch(llvm::StringRef Text,
                                   llvm::StringRef FileName,
                                   const LoadOptions &Opts = {});

/// The saved text, in the layout of formatProgram.
std::string formatLaunch(const Launch &L);
void writeLaunch(llvm::raw_ostream &OS, const Launch &L);

} // namespace loom::bir

#endif
