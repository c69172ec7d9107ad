//===- EvalInternal.cpp - Element helpers shared by the kernels -----------===//
#include "EvalInternal.h"

#include <cstring>

namespace loom::hlo {

Literal ScalarAt(const Literal &array, int64_t i) {
  Literal scalar(Shape(array.element_type(), {}));
  const int64_t bytes = ByteSizeOfPrimitiveType(array.element_type());
  std::memcpy(scalar.raw_data(), array.raw_data() + i * bytes, bytes);
  return scalar;
}

void StoreScalar(Literal &array, int64_t i, const Literal &scalar) {
  const int64_t bytes = ByteSizeOfPrimitiveType(array.element_type());
  std::memcpy(array.raw_data() + i * bytes, scalar.raw_data(), bytes);
}

int64_t TotalOrderKey(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const int64_t magnitude = static_cast<int64_t>(bits & (mask >> 1));
  return (bits & sign) ? -magnitude - 1 : magnitude;
}

int64_t TotalOrderKeyAt(const Literal &array, int64_t i) {
  const int64_t bytes = ByteSizeOfPrimitiveType(array.element_type());
  uint64_t raw = 0;
  std::memcpy(&raw, array.raw_data() + i * bytes, bytes);
  return TotalOrderKey(raw, PrimitiveTypeBitWidth(array.element_type()));
}

} // namespace loom::hlo
