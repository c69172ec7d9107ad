//===- Npy.h - NumPy's .npy container, independent of any IR --------------===//
//
// .npy is how tensors enter and leave loom's tools (hlo-run's parameters and
// results, bir-sim's --input and --dump). This is the container alone: the
// header dict, the dtype string, the shape and the raw element bytes. What
// the bytes mean for an element type is up to the caller.
//
// Only what NumPy writes for plain arrays is accepted: format versions 1.0,
// 2.0 and 3.0, little-endian (or byte-order free) scalar dtypes, C order.
// Everything else, and every malformed or truncated file, is an llvm::Error,
// never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_NPY_H
#define LOOM_SUPPORT_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

/// One .npy array as stored: NumPy's dtype string (`<f4`), the dimensions
/// and the element bytes in C order.
struct NpyArray {
  std::string Descr;
  std::vector<int64_t> Shape;
  std::string Data;
};

/// Decodes a whole .npy file. The dtype is normalized (`=f4` -> `<f4`,
/// `<u1` -> `|u1`) and must be a little-endian bool, integer, float or
/// complex scalar type; the data must be exactly the shape's elements.
/// Errors say what is wrong with the header or the data size.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef Bytes);

/// Encodes an array as a version 1.0 file (2.0 when the header needs it),
/// byte for byte what NumPy writes.
std::string serializeNpy(const NpyArray &A);

/// The same from the pieces, for callers that keep them elsewhere (no copy
/// of the data into an NpyArray first).
std::string serializeNpy(llvm::StringRef Descr, llvm::ArrayRef<int64_t> Shape,
                         llvm::StringRef Data);

/// Bytes of one element of a (normalized) dtype such as `<f4`; 0 for a
/// dtype parseNpy does not accept.
int npyDescrItemSize(llvm::StringRef Descr);

/// NumPy's spelling of a shape: `()`, `(5,)`, `(2, 3)`.
std::string formatNpyShape(llvm::ArrayRef<int64_t> Shape);

} // namespace loom

#endif
