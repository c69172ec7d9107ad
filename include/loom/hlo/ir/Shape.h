//===- Shape.h - XLA shapes: element types, dimensions, layouts, tuples ---===//
//
// A Shape is what XLA prints as `f32[2,<=3]{1,0:T(8,128)}` or a tuple of
// shapes. The layout's minor-to-major order is decoded because passes and the
// interpreter read it; everything after the ':' (tiles, element size, memory
// space, ...) is kept verbatim so it prints back exactly as it was read.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_SHAPE_H
#define LOOM_HLO_IR_SHAPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::hlo {

// X(enumerator, text, bit width). Bit width 0: not an array element type.
#define LOOM_PRIMITIVE_TYPE_LIST(X)                                            \
  X(PRED, "pred", 8)                                                           \
  X(S1, "s1", 1)                                                               \
  X(S2, "s2", 2)                                                               \
  X(S4, "s4", 4)                                                               \
  X(S8, "s8", 8)                                                               \
  X(S16, "s16", 16)                                                            \
  X(S32, "s32", 32)                                                            \
  X(S64, "s64", 64)                                                            \
  X(U1, "u1", 1)                                                               \
  X(U2, "u2", 2)                                                               \
  X(U4, "u4", 4)                                                               \
  X(U8, "u8", 8)                                                               \
  X(U16, "u16", 16)                                                            \
  X(U32, "u32", 32)                                                            \
  X(U64, "u64", 64)                                                            \
  X(F16, "f16", 16)                                                            \
  X(BF16, "bf16", 16)                                                          \
  X(F32, "f32", 32)                                                            \
  X(F64, "f64", 64)                                                            \
  X(F4E2M1FN, "f4e2m1fn", 4)                                                   \
  X(F8E3M4, "f8e3m4", 8)                                                       \
  X(F8E4M3, "f8e4m3", 8)                                                       \
  X(F8E4M3FN, "f8e4m3fn", 8)                                                   \
  X(F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8)                                         \
  X(F8E4M3FNUZ, "f8e4m3fnuz", 8)                                               \
  X(F8E5M2, "f8e5m2", 8)                                                       \
  X(F8E5M2FNUZ, "f8e5m2fnuz", 8)                                               \
  X(F8E8M0FNU, "f8e8m0fnu", 8)                                                 \
  X(C64, "c64", 64)                                                            \
  X(C128, "c128", 128)                                                         \
  X(TOKEN, "token", 0)                                                         \
  X(OPAQUE_TYPE, "opaque", 0)                                                  \
  X(BUFFER, "buffer", 0)                                                       \
  X(TUPLE, "tuple", 0)

enum class PrimitiveType : uint8_t {
#define LOOM_X(E, S, B) E,
  LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
};

llvm::StringRef PrimitiveTypeName(PrimitiveType Type);
std::optional<PrimitiveType> StringToPrimitiveType(llvm::StringRef Text);
/// Storage width in bits of one element (pred is 8, s4 is 4); 0 for token,
/// opaque and tuple.
int PrimitiveTypeBitWidth(PrimitiveType Type);
/// Bytes of one element, rounded up (s4 is 1).
int64_t ByteSizeOfPrimitiveType(PrimitiveType Type);
bool IsFloatingPointType(PrimitiveType Type);
bool IsComplexType(PrimitiveType Type);
bool IsSignedIntegralType(PrimitiveType Type);
bool IsUnsignedIntegralType(PrimitiveType Type);
inline bool IsIntegralType(PrimitiveType T) {
  return IsSignedIntegralType(T) || IsUnsignedIntegralType(T);
}

/// The layout between the braces of `{1,0:T(8,128)S(1)}`.
struct Layout {
  /// Inline for up to four dimensions: no heap block for common shapes.
  llvm::SmallVector<int64_t, 4> minor_to_major;
  /// Everything after ':' up to the closing brace, verbatim; empty if none.
  std::string attributes;
  bool operator==(const Layout &O) const {
    return minor_to_major == O.minor_to_major && attributes == O.attributes;
  }
};

class Shape {
public:
  /// Dimension value of `?`: unbounded dynamic.
  static constexpr int64_t kUnboundedSize = -1;

  Shape() = default;
  /// An array shape without layout.
  Shape(PrimitiveType Type, llvm::ArrayRef<int64_t> Dims);
  static Shape MakeTuple(std::vector<Shape> Elements);
  static Shape MakeToken() { return Shape(PrimitiveType::TOKEN, {}); }
  /// XLA's buffer shape `b(s32[2,8])`: a mutable buffer holding an array.
  static Shape MakeBuffer(Shape Array);

  PrimitiveType element_type() const { return type_; }
  void set_element_type(PrimitiveType Type) { type_ = Type; }
  bool IsTuple() const { return type_ == PrimitiveType::TUPLE; }
  bool IsToken() const { return type_ == PrimitiveType::TOKEN; }
  bool IsOpaque() const { return type_ == PrimitiveType::OPAQUE_TYPE; }
  bool IsBuffer() const { return type_ == PrimitiveType::BUFFER; }
  bool IsArray() const { return !IsTuple() && !IsToken() && !IsOpaque() && !IsBuffer(); }
  /// The array a buffer shape holds.
  const Shape &buffer_shape() const { return tuple_[0]; }

  // Arrays.
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  llvm::ArrayRef<int64_t> dimensions() const { return dims_; }
  int64_t dimensions(int64_t I) const { return dims_[I]; }
  void set_dimensions(int64_t I, int64_t Size) { dims_[I] = Size; }
  bool is_dynamic_dimension(int64_t I) const { return dynamic_[I]; }
  void set_dynamic_dimension(int64_t I, bool Dynamic) { dynamic_[I] = Dynamic; }
  bool is_static() const;
  /// Product of the dimensions (0 when one is 0, whatever the others); nullopt
  /// on overflow or unbounded dimensions.
  std::optional<int64_t> ElementsIn() const;
  /// Product of dimensions, assuming it was validated (asserts otherwise).
  int64_t element_count() const;
  /// Bytes of the array data; nullopt on overflow.
  std::optional<int64_t> ByteSizeOf() const;

  bool has_layout() const { return layout_.has_value(); }
  const std::optional<Layout> &layout() const { return layout_; }
  void set_layout(std::optional<Layout> L) { layout_ = std::move(L); }
  void clear_layout();
  /// The default row-major layout {rank-1, ..., 0}.
  static Layout DefaultLayout(int64_t Rank);

  // Tuples.
  llvm::ArrayRef<Shape> tuple_shapes() const { return tuple_; }
  const Shape &tuple_shapes(int64_t I) const { return tuple_[I]; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_.size()); }
  std::vector<Shape> &mutable_tuple_shapes() { return tuple_; }

  /// Equal element types, dimensions, dynamic flags and tuple structure;
  /// layouts ignored (XLA's ShapeUtil::Compatible without layout).
  bool Compatible(const Shape &O) const;
  /// Everything equal, layouts included.
  bool operator==(const Shape &O) const;
  bool operator!=(const Shape &O) const { return !(*this == O); }

  /// `f32[2,3]{1,0}`: with the layout when it has one.
  std::string ToString(bool PrintLayout = true) const;
  void Print(llvm::raw_ostream &OS, bool PrintLayout = true) const;

private:
  PrimitiveType type_ = PrimitiveType::TUPLE;
  // Inline for up to four dimensions, like the layout: a parsed shape
  // allocates nothing unless it is a tuple or of higher rank.
  llvm::SmallVector<int64_t, 4> dims_;
  llvm::SmallVector<bool, 4> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_; // tuple elements, or a buffer's one array
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &OS, const Shape &S) {
  S.Print(OS);
  return OS;
}

} // namespace loom::hlo

#endif
