//===- Base64.cpp - RFC 4648 base64 ----------------------------------------===//

#include "loom/support/Base64.h"

namespace loom {

namespace {

const char Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The 6-bit value of C, or -1.
int valueOf(char C) {
  if (C >= 'A' && C <= 'Z')
    return C - 'A';
  if (C >= 'a' && C <= 'z')
    return C - 'a' + 26;
  if (C >= '0' && C <= '9')
    return C - '0' + 52;
  if (C == '+')
    return 62;
  if (C == '/')
    return 63;
  return -1;
}

} // namespace

std::string encodeBase64(llvm::ArrayRef<uint8_t> Bytes) {
  std::string Out;
  Out.reserve((Bytes.size() + 2) / 3 * 4);
  size_t I = 0;
  for (; I + 3 <= Bytes.size(); I += 3) {
    uint32_t V = uint32_t(Bytes[I]) << 16 | uint32_t(Bytes[I + 1]) << 8 |
                 Bytes[I + 2];
    Out += Alphabet[V >> 18];
    Out += Alphabet[(V >> 12) & 63];
    Out += Alphabet[(V >> 6) & 63];
    Out += Alphabet[V & 63];
  }
  size_t Rest = Bytes.size() - I;
  if (Rest == 1) {
    uint32_t V = uint32_t(Bytes[I]) << 16;
    Out += Alphabet[V >> 18];
    Out += Alphabet[(V >> 12) & 63];
    Out += "==";
  } else if (Rest == 2) {
    uint32_t V = uint32_t(Bytes[I]) << 16 | uint32_t(Bytes[I + 1]) << 8;
    Out += Alphabet[V >> 18];
    Out += Alphabet[(V >> 12) & 63];
    Out += Alphabet[(V >> 6) & 63];
    Out += '=';
  }
  return Out;
}

std::optional<Base64Error> decodeBase64(llvm::StringRef Text,
                                        std::vector<uint8_t> &Bytes) {
  Bytes.clear();
  if (Text.size() % 4 != 0)
    return Base64Error{Text.size(), "the length " + std::to_string(Text.size()) +
                                        " is not a multiple of 4"};
  Bytes.reserve(Text.size() / 4 * 3);
  for (size_t I = 0; I < Text.size(); I += 4) {
    bool Last = I + 4 == Text.size();
    // '=' may only pad the last group: "xx==" or "xxx=".
    unsigned Pad = 0;
    if (Last && Text[I + 3] == '=')
      Pad = Text[I + 2] == '=' ? 2 : 1;
    int V[4] = {0, 0, 0, 0};
    for (unsigned K = 0; K < 4 - Pad; ++K) {
      V[K] = valueOf(Text[I + K]);
      if (V[K] < 0)
        return Base64Error{I + K, std::string("'") + Text[I + K] +
                                      "' is not a base64 character"};
    }
    uint32_t W = uint32_t(V[0]) << 18 | uint32_t(V[1]) << 12 |
                 uint32_t(V[2]) << 6 | uint32_t(V[3]);
    // The bits below the last byte must be zero in canonical text.
    if ((Pad == 2 && (W & 0xffff)) || (Pad == 1 && (W & 0xff)))
      return Base64Error{I + 3 - Pad,
                         "non-zero padding bits (not canonical base64)"};
    Bytes.push_back(uint8_t(W >> 16));
    if (Pad < 2)
      Bytes.push_back(uint8_t(W >> 8));
    if (Pad < 1)
      Bytes.push_back(uint8_t(W));
  }
  return std::nullopt;
}

} // namespace loom
