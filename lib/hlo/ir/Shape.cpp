#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/StringSwitch.h"

#include <cassert>

namespace loom::hlo {

llvm::StringRef PrimitiveTypeName(PrimitiveType Type) {
  switch (Type) {
#define LOOM_X(E, S, B)                                                        \
  case PrimitiveType::E:                                                       \
    return S;
    LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
  }
  return "<invalid>";
}

std::optional<PrimitiveType> StringToPrimitiveType(llvm::StringRef Text) {
  return llvm::StringSwitch<std::optional<PrimitiveType>>(Text)
#define LOOM_X(E, S, B) .Case(S, PrimitiveType::E)
      LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
          .Default(std::nullopt);
}

int PrimitiveTypeBitWidth(PrimitiveType Type) {
  switch (Type) {
#define LOOM_X(E, S, B)                                                        \
  case PrimitiveType::E:                                                       \
    return B;
    LOOM_PRIMITIVE_TYPE_LIST(LOOM_X)
#undef LOOM_X
  }
  return 0;
}

int64_t ByteSizeOfPrimitiveType(PrimitiveType Type) {
  return (PrimitiveTypeBitWidth(Type) + 7) / 8;
}

bool IsFloatingPointType(PrimitiveType T) {
  switch (T) {
  case PrimitiveType::F16: case PrimitiveType::BF16: case PrimitiveType::F32:
  case PrimitiveType::F64: case PrimitiveType::F4E2M1FN: case PrimitiveType::F8E3M4:
  case PrimitiveType::F8E4M3: case PrimitiveType::F8E4M3FN:
  case PrimitiveType::F8E4M3B11FNUZ: case PrimitiveType::F8E4M3FNUZ:
  case PrimitiveType::F8E5M2: case PrimitiveType::F8E5M2FNUZ:
  case PrimitiveType::F8E8M0FNU:
    return true;
  default:
    return false;
  }
}

bool IsComplexType(PrimitiveType T) {
  return T == PrimitiveType::C64 || T == PrimitiveType::C128;
}

bool IsSignedIntegralType(PrimitiveType T) {
  switch (T) {
  case PrimitiveType::S1: case PrimitiveType::S2: case PrimitiveType::S4:
  case PrimitiveType::S8: case PrimitiveType::S16: case PrimitiveType::S32:
  case PrimitiveType::S64:
    return true;
  default:
    return false;
  }
}

bool IsUnsignedIntegralType(PrimitiveType T) {
  switch (T) {
  case PrimitiveType::U1: case PrimitiveType::U2: case PrimitiveType::U4:
  case PrimitiveType::U8: case PrimitiveType::U16: case PrimitiveType::U32:
  case PrimitiveType::U64:
    return true;
  default:
    return false;
  }
}

Shape::Shape(PrimitiveType Type, llvm::ArrayRef<int64_t> Dims)
    : type_(Type), dims_(Dims.begin(), Dims.end()), dynamic_(Dims.size(), false) {}

Shape Shape::MakeTuple(std::vector<Shape> Elements) {
  Shape S;
  S.type_ = PrimitiveType::TUPLE;
  S.tuple_ = std::move(Elements);
  return S;
}

Shape Shape::MakeBuffer(Shape Array) {
  Shape S;
  S.type_ = PrimitiveType::BUFFER;
  S.tuple_.push_back(std::move(Array));
  return S;
}

bool Shape::is_static() const {
  if (IsTuple() || IsBuffer()) {
    for (const Shape &E : tuple_)
      if (!E.is_static())
        return false;
    return true;
  }
  for (bool D : dynamic_)
    if (D)
      return false;
  return true;
}

std::optional<int64_t> Shape::ElementsIn() const {
  int64_t N = 1;
  bool Overflow = false, Empty = false;
  for (int64_t D : dims_) {
    if (D < 0)
      return std::nullopt;
    Empty |= D == 0;
    Overflow |= __builtin_mul_overflow(N, D, &N);
  }
  // A zero dimension makes the shape empty whatever the others multiply to.
  if (Empty)
    return 0;
  if (Overflow)
    return std::nullopt;
  return N;
}

int64_t Shape::element_count() const {
  std::optional<int64_t> N = ElementsIn();
  assert(N && "element count of an unvalidated shape");
  return *N;
}

std::optional<int64_t> Shape::ByteSizeOf() const {
  std::optional<int64_t> N = ElementsIn();
  if (!N)
    return std::nullopt;
  int64_t Bits;
  if (__builtin_mul_overflow(*N, static_cast<int64_t>(PrimitiveTypeBitWidth(type_)), &Bits))
    return std::nullopt;
  return (Bits + 7) / 8;
}

void Shape::clear_layout() {
  layout_.reset();
  for (Shape &E : tuple_)
    E.clear_layout();
}

Layout Shape::DefaultLayout(int64_t Rank) {
  Layout L;
  for (int64_t I = Rank - 1; I >= 0; --I)
    L.minor_to_major.push_back(I);
  return L;
}

bool Shape::Compatible(const Shape &O) const {
  if (type_ != O.type_)
    return false;
  if (IsTuple() || IsBuffer()) {
    if (tuple_.size() != O.tuple_.size())
      return false;
    for (size_t I = 0; I < tuple_.size(); ++I)
      if (!tuple_[I].Compatible(O.tuple_[I]))
        return false;
    return true;
  }
  return dims_ == O.dims_ && dynamic_ == O.dynamic_;
}

bool Shape::operator==(const Shape &O) const {
  if (type_ != O.type_ || dims_ != O.dims_ || dynamic_ != O.dynamic_ ||
      layout_ != O.layout_ || tuple_.size() != O.tuple_.size())
    return false;
  for (size_t I = 0; I < tuple_.size(); ++I)
    if (tuple_[I] != O.tuple_[I])
      return false;
  return true;
}

void Shape::Print(llvm::raw_ostream &OS, bool PrintLayout) const {
  if (IsBuffer()) {
    OS << "b(";
    buffer_shape().Print(OS, PrintLayout);
    OS << ')';
    return;
  }
  if (IsTuple()) {
    OS << '(';
    for (size_t I = 0; I < tuple_.size(); ++I) {
      if (I)
        OS << ", ";
      // XLA marks every fifth element of a long tuple with its index.
      if (I && I % 5 == 0)
        OS << "/*index=" << I << "*/";
      tuple_[I].Print(OS, PrintLayout);
    }
    OS << ')';
    return;
  }
  OS << PrimitiveTypeName(type_) << '[';
  for (size_t I = 0; I < dims_.size(); ++I) {
    if (I)
      OS << ',';
    if (dims_[I] == kUnboundedSize) {
      OS << '?';
      continue;
    }
    if (dynamic_[I])
      OS << "<=";
    OS << dims_[I];
  }
  OS << ']';
  if (!PrintLayout || !layout_)
    return;
  OS << '{';
  for (size_t I = 0; I < layout_->minor_to_major.size(); ++I) {
    if (I)
      OS << ',';
    OS << layout_->minor_to_major[I];
  }
  if (!layout_->attributes.empty())
    OS << ':' << layout_->attributes;
  OS << '}';
}

std::string Shape::ToString(bool PrintLayout) const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  Print(OS, PrintLayout);
  return S;
}

} // namespace loom::hlo
