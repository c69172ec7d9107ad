//===- HloParser.h - XLA's HLO text format into loom IR -------------------===//
//
// Reads what XLA dumps (`%a = f32[2]{0} add(f32[2]{0} %x, f32[2]{0} %y)`)
// and the short style tests write (`a = f32[2] add(x, y)`). Printing is
// HloModule::ToString(); together they keep the round-trip contract
// documented in docs/hlo-text-format.md.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PARSER_HLOPARSER_H
#define LOOM_HLO_PARSER_HLOPARSER_H

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <memory>
#include <string>

namespace loom::hlo {

/// Brackets, tuple shapes and computations written inside attributes may nest
/// this deep; deeper input is an error rather than a stack overflow.
inline constexpr int kMaxNestingDepth = 256;

/// How ParseHloModuleOwned reads a module. Whatever the options, the result
/// is the same module (same names, same order) or the same error.
struct HloParseOptions {
  /// Threads to parse on; 0 is the machine's cores (loom::resolveThreadCount).
  unsigned threads = 1;
  /// The text after the header is cut into pieces of at least this many
  /// bytes, each starting at a computation, and the pieces are parsed on the
  /// threads. A module smaller than two pieces is parsed on the caller.
  size_t min_chunk_bytes = size_t(1) << 20;
  /// When set, receives how many pieces were parsed on the threads and
  /// joined; 0 when the module was parsed sequentially (too small, one
  /// thread, or a piece that did not parse on its own).
  size_t *pieces_joined = nullptr;
};

/// Parses one whole module. Syntax errors read `file:line:col: message`;
/// semantic errors (duplicate or unknown names, element-count overflow)
/// are located too and name the instruction or computation.
llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModule(llvm::StringRef text, llvm::StringRef file_name = "<input>");
/// The same, taking the text: the module keeps it as its source, and
/// names and attribute texts are views into it (no copy of the input).
llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::string text, llvm::StringRef file_name = "<input>");
/// The same with a buffer, e.g. a mapped file (loom::readInputBuffer).
llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::unique_ptr<llvm::MemoryBuffer> buffer,
                    llvm::StringRef file_name = "<input>");

/// The same two, parsing on `options.threads` threads.
llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::string text, llvm::StringRef file_name,
                    const HloParseOptions &options);
llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef file_name,
                    const HloParseOptions &options);

/// Parses one shape, e.g. `(f32[2,<=3]{1,0:T(8,128)}, token[])`.
llvm::Expected<Shape> ParseShape(llvm::StringRef text);

} // namespace loom::hlo

#endif
