//===- NpyLiteral.h - NumPy's .npy files in and out of Literals ----------===//
//
// .npy is the common currency for tensors: hlo-run reads parameters from it
// and writes results to it. Only what NumPy writes for plain arrays is
// accepted: format versions 1.0, 2.0 and 3.0, little-endian (or byte-order
// free) scalar dtypes, C order. Everything else, and every malformed or
// truncated file, is an llvm::Error, never a crash.
//
// Element types without a NumPy dtype (bf16, the f8 and f4 types) are
// written as `<f4` values, which hold them exactly; reading also accepts
// their raw bit patterns (`<u2` for bf16, `|u1` for f8/f4). Sub-byte
// integers travel as `|i1` / `|u1` values. docs/hlo-run.md has the table.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_EVAL_NPYLITERAL_H
#define LOOM_HLO_EVAL_NPYLITERAL_H

#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::hlo {

/// One .npy array as stored: NumPy's dtype string (`<f4`), the dimensions
/// and the element bytes in C order. The container code is loom::parseNpy /
/// loom::serializeNpy (loom/support/Npy.h); these are HLO's spellings of it.
struct NpyArray {
  std::string descr;
  std::vector<int64_t> shape;
  std::string data;
};

/// Decodes a whole .npy file (loom::parseNpy). Errors say what is wrong
/// with the header or the data size.
llvm::Expected<NpyArray> ParseNpy(llvm::StringRef bytes);

/// Encodes an array as a version 1.0 file (2.0 when the header needs it;
/// loom::serializeNpy).
std::string SerializeNpy(const NpyArray &array);

/// The dtype loom writes for an element type; empty for types that have
/// none (token, tuple, opaque).
llvm::StringRef NpyDescrForType(PrimitiveType type);

/// An array of `shape` (an array shape) from a decoded file: the dimensions
/// must match and the dtype must be one accepted for the element type.
llvm::Expected<Literal> NpyToLiteral(const NpyArray &array, const Shape &shape);

/// The .npy form of an array literal (not a tuple or token).
llvm::Expected<NpyArray> LiteralToNpy(const Literal &literal);

/// File helpers; `path` is named in every error.
llvm::Expected<Literal> ReadNpyFile(llvm::StringRef path, const Shape &shape);
llvm::Error WriteNpyFile(llvm::StringRef path, const Literal &literal);

} // namespace loom::hlo

#endif
