//===- BirJson.h - The JSON interchange form of BIR programs ----*- C++ -*-===//
//
// JSON is how programs enter and leave loom and how lnc_splitter clones a
// module between cores. docs/bir.md gives the schema. Loading is validation:
// every failure is an error naming the file, the JSON path and the problem,
// never a crash; saving a loaded program twice gives identical bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_JSON_BIRJSON_H
#define LOOM_BIR_JSON_BIRJSON_H

#include "loom/bir/ir/Module.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace loom::bir {

/// The version this loom reads and writes.
constexpr unsigned BirJsonVersion = 1;

llvm::json::Value moduleToJson(const Module &M);
llvm::json::Value programToJson(const Program &P);

/// The saved text of a program: keys sorted, values that fit in 120 columns
/// on one line, a final newline.
std::string formatProgram(const Program &P);

/// Rebuilds a module from its JSON form, checking value types, ranges and
/// that every name refers to something, but not the verifier's rules. Path is
/// where the module sits in its document, for error messages.
llvm::Expected<std::unique_ptr<Module>>
moduleFromJson(const llvm::json::Value &V, llvm::StringRef Path);

/// Settings that replace those of every module while loading, before
/// verification: a tool's --lnc and --target.
struct LoadOptions {
  std::optional<unsigned> LncSize;
  std::optional<Target> Arch;
};

/// Parses, checks the schema, applies Opts and verifies a program document.
/// Errors read "<FileName>: <JSON path>: <what is wrong>".
llvm::Expected<Program> parseProgram(llvm::StringRef Text,
                                     llvm::StringRef FileName,
                                     const LoadOptions &Opts = {});

} // namespace loom::bir

#endif
