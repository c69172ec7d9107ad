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
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace loom::bir {

class JsonPrinter;
class JsonRef;

/// The version this loom reads and writes.
constexpr unsigned BirJsonVersion = 1;

/// The JSON path of module Index of a program document: "$.modules[Index]".
std::string getModulePath(unsigned Index);

/// The saved text of a program: keys sorted, values that fit in 120 columns
/// on one line, a final newline. Written straight from the IR in time linear
/// in the text: writeProgram streams it to OS; formatProgram writes it twice,
/// first only to count it, so that its string is allocated once.
std::string formatProgram(const Program &P);
void writeProgram(llvm::raw_ostream &OS, const Program &P);

/// The JSON text of one module in compact form (no spaces or newlines,
/// keys sorted), as lnc_splitter saves a module to copy it.
std::string formatModule(const Module &M);

/// Rebuilds a module from its JSON text, checking value types, ranges and
/// that every name refers to something, but not the verifier's rules. Path
/// is where the module sits in its document, for error messages
/// ("<Path>.blocks[0].name: ..."; a syntax error names the byte offset).
llvm::Expected<std::unique_ptr<Module>> parseModule(llvm::StringRef Text,
                                                    llvm::StringRef Path);

/// The same forms as llvm::json values, for code that wants a tree; they
/// go through the writer and the reader above (a Value costs a heap object
/// per node, so the tools do not use them).
llvm::json::Value moduleToJson(const Module &M);
llvm::json::Value programToJson(const Program &P);
llvm::Expected<std::unique_ptr<Module>>
moduleFromJson(const llvm::json::Value &V, llvm::StringRef Path);

/// For documents that embed modules (launch documents, LaunchJson.h): reads
/// one module from a parsed document, as parseModule does, with Path naming
/// it in error messages; and writes one module through a printer of the
/// enclosing document, in that printer's layout.
llvm::Expected<std::unique_ptr<Module>> readEmbeddedModule(JsonRef V,
                                                           llvm::StringRef Path);
void writeEmbeddedModule(JsonPrinter &W, const Module &M);

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
