//===- Literal.h - Concrete values of HLO shapes ---------------------------===//
//
// A Literal is an array of one element type (data packed row-major,
// little-endian, at the type's natural width; sub-byte types s1/s2/s4/u1/
// u2/u4/f4e2m1fn take one byte per element) or a tuple of literals. Layouts
// of the shape are kept for printing only: values are always row-major in
// logical order.
//
// Conversions between element types follow XLA's `convert`:
//   * anything -> float rounds to nearest, ties to even, once (f64 -> bf16
//     does not round through f32); overflow gives inf, or NaN for the types
//     without inf (f8e4m3fn, the *fnuz types); f4e2m1fn saturates.
//   * float -> integer truncates toward zero and saturates; NaN gives 0.
//   * integer -> integer wraps (two's complement) to the destination width.
//   * anything -> pred is `x != 0`.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_EVAL_LITERAL_H
#define LOOM_HLO_EVAL_LITERAL_H

#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::hlo {

class Literal {
public:
  /// The empty tuple `()`.
  Literal();
  /// Zero-filled. Tuple shapes give tuples of zero literals; token shapes
  /// give a token (no data).
  explicit Literal(const Shape &shape);
  static Literal MakeTuple(std::vector<Literal> elements);
  /// A rank-0 literal of `type` holding `v` (converted as SetFromDouble /
  /// SetFromInt64 would).
  static Literal CreateR0FromDouble(PrimitiveType type, double v);
  static Literal CreateR0FromInt64(PrimitiveType type, int64_t v);
  static Literal CreateR0Bool(bool v);

  const Shape &shape() const { return shape_; }
  PrimitiveType element_type() const { return shape_.element_type(); }
  bool IsTuple() const { return shape_.IsTuple(); }
  bool IsToken() const { return shape_.IsToken(); }
  /// Arrays: number of elements; 0 for tuples and tokens.
  int64_t element_count() const { return element_count_; }

  // Element access by linear row-major index. These dispatch on the element
  // type per call: convenient, not meant for hot loops (use data<T>()).
  /// Floats exactly; integers converted; pred 0/1; complex: the real part.
  double GetAsDouble(int64_t i) const;
  /// Floats: round-to-nearest-even into the element type; integers and
  /// pred: XLA's convert from f64 (truncate, saturate, NaN -> 0; pred v!=0).
  void SetFromDouble(int64_t i, double v);
  /// Integers sign- or zero-extended; floats truncated and saturated like a
  /// convert to s64; pred 0/1.
  int64_t GetAsInt64(int64_t i) const;
  /// Integers wrap to the element width; floats get the nearest value.
  void SetFromInt64(int64_t i, int64_t v);
  uint64_t GetAsUint64(int64_t i) const;
  void SetFromUint64(int64_t i, uint64_t v);
  bool GetAsBool(int64_t i) const;
  void SetFromBool(int64_t i, bool v);
  /// c64/c128 exactly; real types give (value, 0).
  std::complex<double> GetAsComplex(int64_t i) const;
  /// c64/c128; real element types take the real part.
  void SetFromComplex(int64_t i, std::complex<double> v);

  // Raw storage: packed little-endian, natural width, one byte per element
  // for sub-byte types.
  uint8_t *raw_data() { return data_.data(); }
  const uint8_t *raw_data() const { return data_.data(); }
  int64_t size_bytes() const { return static_cast<int64_t>(data_.size()); }
  /// Typed view of the storage; T must have the element's storage size
  /// (e.g. uint16_t for bf16/f16, uint8_t for pred and f8).
  template <typename T> T *data() { return reinterpret_cast<T *>(data_.data()); }
  template <typename T> const T *data() const {
    return reinterpret_cast<const T *>(data_.data());
  }

  // Tuples.
  const std::vector<Literal> &tuple_elements() const { return tuple_; }
  std::vector<Literal> &mutable_tuple_elements() { return tuple_; }

  /// XLA's literal syntax: `f32[2]{0} {1, 2}`, `pred[] true`,
  /// `(f32[2]{0}, s32[]) ({1, 2}, 3)`; `f32[2,2]{1,0} { { 1, 2 }, { 3, 4 } }`
  /// (XLA's one-line spacing, `/*i0=0*/` markers above rank 3). Arrays of
  /// rank >= 1 print their layout, or the default one. Arrays longer than
  /// `max_elements` print flat with the middle elided as `, ..., `; a
  /// negative `max_elements` prints everything (what ParseLiteral reads).
  std::string ToString(int64_t max_elements = 64) const;
  /// Only the values, without the shape prefix (`{1, 2}`, `true`).
  std::string ValuesToString(int64_t max_elements = 64) const;

  /// Same shape (layout ignored) and bitwise-equal data.
  bool operator==(const Literal &o) const;
  bool operator!=(const Literal &o) const { return !(*this == o); }

  /// Reinterprets the data under a shape with the same element type and
  /// element count (reshape / bitcast of a row-major value).
  void Reshape(const Shape &shape);
  /// Total bytes of data held, tuple elements included.
  int64_t TotalBytes() const;

private:
  Shape shape_;
  int64_t element_count_ = 0;
  std::vector<uint8_t> data_;
  std::vector<Literal> tuple_;
};

/// Parses the text inside `constant(...)` as XLA prints it: scalars (`1`,
/// `-2.5`, `1e-05`, `inf`, `-inf`, `nan`, `-nan`, `nan(0x400001)` with a
/// payload, `true`, `false`), arrays in nested braces (`/*i0=0*/` comments
/// allowed; pred elements as true/false or 1/0), complex `(re, im)`, tuples
/// `( {1, 2}, 3 )` with or without per-element shape prefixes. A scalar
/// written for an array fills it. Integers must fit the element type; floats
/// round once from the decimal's nearest double. An elided array `{...}` is
/// an error (its values are not in the text). Errors name what is wrong.
llvm::Expected<Literal> ParseLiteral(const Shape &shape, llvm::StringRef text);

// ---- Element conversions ------------------------------------------------------
// Bit patterns of the small float types are held in the low bits of a
// uint8_t / uint16_t. All conversions to a narrower type round to nearest,
// ties to even.

uint16_t F32ToBF16(float f);
float BF16ToF32(uint16_t bits);
uint16_t F32ToF16(float f);
uint16_t F64ToF16(double d);
float F16ToF32(uint16_t bits);
uint16_t F64ToBF16(double d);
/// Any float element type (f16, bf16, f8*, f4e2m1fn, f32, f64) from/to
/// double. To a narrower type rounds once, directly from the double
/// (no double rounding through f32).
double FloatBitsToDouble(PrimitiveType type, uint64_t bits);
uint64_t DoubleToFloatBits(PrimitiveType type, double v);

/// Whether the literal machinery stores and converts `type`'s elements
/// (every array type of Shape.h except opaque).
bool IsSupportedElementType(PrimitiveType type);

} // namespace loom::hlo

#endif
