//===- Base64.h - RFC 4648 base64, the JSON spelling of raw bytes ---------===//
//
// BIR documents carry the initial bytes of a location (a constant) as one
// base64 string: the standard alphabet, '=' padding, no line breaks
// (RFC 4648, section 4). Decoding accepts exactly that form, so a decoded
// string encodes back to the same text.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_BASE64_H
#define LOOM_SUPPORT_BASE64_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom {

/// The base64 text of Bytes (4 characters per 3 bytes, padded).
std::string encodeBase64(llvm::ArrayRef<uint8_t> Bytes);

/// The bytes of Text, or, if Text is not canonical padded base64, the
/// offset of the first character that makes it invalid (Text.size() for a
/// length that is not a multiple of 4). Non-zero bits in the last
/// character's unused low bits are invalid: they would not survive a
/// round trip.
struct Base64Error {
  size_t Offset;
  std::string Message;
};
std::optional<Base64Error> decodeBase64(llvm::StringRef Text,
                                        std::vector<uint8_t> &Bytes);

} // namespace loom

#endif
