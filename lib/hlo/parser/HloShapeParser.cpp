//===- HloShapeParser.cpp - The HLO parser's shapes -----------------------===//
//
// Array shapes with `N`, `<=N` and `?` dimensions and a layout whose
// attributes after `:` are kept verbatim, tuples, `token[]`, `opaque[]` and
// buffer shapes; a written operand shape compared with its operand's
// without building it; the shape before an instruction's opcode shared
// with every earlier instruction that wrote the same text; and ParseShape.
//
//===----------------------------------------------------------------------===//
#include "HloParserInternal.h"

#include "llvm/ADT/SmallVector.h"

namespace loom::hlo {
namespace hlo_parser {

bool Parser::AtShape() const {
  if (cur_ == end_)
    return false;
  if (*cur_ == '(')
    return true;
  const char *p = cur_;
  while (p < end_ && IsLowerAlnum(*p))
    ++p;
  if (p == cur_ || p == end_)
    return false;
  return *p == '[' || (*p == '(' && p - cur_ == 1 && *cur_ == 'b');
}

bool Parser::AtBufferShape() const {
  return end_ - cur_ >= 2 && cur_[0] == 'b' && cur_[1] == '(';
}

// Reads a shape into `out` (null: check the syntax only). When `expect` is
// given, what is read is compared with it, layouts ignored, and a difference
// sets shape_mismatch_; nothing is allocated then.
bool Parser::ParseShapeAt(Shape *out, const Shape *expect, int depth) {
  if (depth >= kMaxNestingDepth)
    return Fail(cur_, Context() + "shape nested deeper than " + llvm::Twine(kMaxNestingDepth) +
                          " levels");
  if (Peek('('))
    return ParseTupleShape(out, expect, depth);
  if (AtBufferShape())
    return ParseBufferShape(out, expect, depth);
  return ParseArrayShape(out, expect);
}

// `b(s32[2,8]{1,0})`.
bool Parser::ParseBufferShape(Shape *out, const Shape *expect, int depth) {
  cur_ += 2;
  if (expect && !expect->IsBuffer()) {
    shape_mismatch_ = true;
    expect = nullptr;
  }
  SkipTrivia();
  const char *at = cur_;
  Shape array;
  if (!ParseShapeAt(out ? &array : nullptr, expect ? &expect->buffer_shape() : nullptr,
                    depth + 1))
    return false;
  if (out && !array.IsArray())
    return Fail(at, Context() + "a buffer shape holds an array");
  SkipTrivia();
  if (!Expect(')', "')' to close the buffer shape"))
    return false;
  if (out)
    *out = Shape::MakeBuffer(std::move(array));
  return true;
}

bool Parser::ParseTupleShape(Shape *out, const Shape *expect, int depth) {
  ++cur_;
  if (out)
    *out = Shape::MakeTuple({});
  if (expect && !expect->IsTuple()) {
    shape_mismatch_ = true;
    expect = nullptr;
  }
  int64_t count = 0;
  bool ok = ParseSeparatedList(')', "',' or ')' in a tuple shape", [&] {
    Shape *element = nullptr;
    if (out) {
      out->mutable_tuple_shapes().emplace_back();
      element = &out->mutable_tuple_shapes().back();
    }
    const Shape *element_expect = nullptr;
    if (expect) {
      if (count < expect->tuple_shapes_size())
        element_expect = &expect->tuple_shapes(count);
      else
        shape_mismatch_ = true;
    }
    if (!ParseShapeAt(element, element_expect, depth + 1))
      return false;
    ++count;
    return true;
  });
  if (!ok)
    return false;
  if (expect && count != expect->tuple_shapes_size())
    shape_mismatch_ = true;
  return true;
}

bool Parser::ParseArrayShape(Shape *out, const Shape *expect) {
  const char *at = cur_;
  llvm::StringRef type_name = LexWhile(IsLowerAlnum);
  if (type_name.empty())
    return Fail(at, Context() + "expected a shape");
  std::optional<PrimitiveType> type = LookupPrimitiveType(type_name);
  if (!type || *type == PrimitiveType::TUPLE || *type == PrimitiveType::BUFFER)
    return Fail(at, Context() + "unknown element type '" + type_name + "'");
  if (!Expect('[', "'[' after the element type"))
    return false;
  bool is_array = *type != PrimitiveType::TOKEN && *type != PrimitiveType::OPAQUE_TYPE;
  if (expect && (expect->element_type() != *type || expect->IsTuple()))
    shape_mismatch_ = true;
  bool compare = expect && !shape_mismatch_ && expect->element_type() == *type;

  llvm::SmallVector<int64_t, 8> dims;
  llvm::SmallVector<bool, 8> dynamic;
  int64_t rank = 0;
  int64_t elements = 1;
  bool overflow = false;
  // A zero dimension makes the shape empty whatever the others multiply to.
  bool empty = false;
  bool ok = ParseSeparatedList(']', "',' or ']' in the dimensions", [&] {
    int64_t size;
    bool is_dynamic = false;
    if (Peek('?')) {
      ++cur_;
      size = Shape::kUnboundedSize;
      is_dynamic = true;
    } else {
      if (Peek('<') && cur_ + 1 < end_ && cur_[1] == '=') {
        cur_ += 2;
        is_dynamic = true;
        SkipTrivia();
      }
      if (!LexNonNegativeInt(size, "a dimension size"))
        return false;
      if (__builtin_mul_overflow(elements, size, &elements))
        overflow = true;
      empty |= size == 0;
    }
    if (out) {
      dims.push_back(size);
      dynamic.push_back(is_dynamic);
    }
    // Dynamic markers are not compared: XLA's own tests write `<=5` on
    // operands whose definition is static.
    if (compare && (rank >= expect->rank() || expect->dimensions(rank) != size))
      shape_mismatch_ = true;
    ++rank;
    return true;
  });
  if (!ok)
    return false;
  if (compare && rank != expect->rank())
    shape_mismatch_ = true;
  if (overflow && !empty)
    return Fail(at, Context() + "the dimensions of '" + llvm::StringRef(at, cur_ - at) +
                        "' multiply past the 64-bit element count limit");
  if (!is_array && rank != 0)
    return Fail(at, Context() + "'" + type_name + "' shapes have no dimensions");
  if (out) {
    *out = Shape(*type, dims);
    for (size_t i = 0; i < dynamic.size(); ++i)
      if (dynamic[i])
        out->set_dynamic_dimension(i, true);
  }
  // Only a brace touching ']' is a layout: in `-> f32[2] {` it opens the
  // computation body.
  if (!is_array || !Peek('{'))
    return true;
  if (!out)
    return ParseLayout(nullptr);
  Layout layout;
  if (!ParseLayout(&layout))
    return false;
  out->set_layout(std::move(layout));
  return true;
}

bool Parser::ParseLayout(Layout *out) {
  ++cur_;
  SkipTrivia();
  while (!Peek('}') && !Peek(':')) {
    int64_t dim;
    if (!LexNonNegativeInt(dim, "a layout dimension"))
      return false;
    if (out)
      out->minor_to_major.push_back(dim);
    SkipTrivia();
    if (!Peek(','))
      break;
    ++cur_;
    SkipTrivia();
  }
  if (Peek(':')) {
    const char *begin = ++cur_;
    if (!ScanBalanced(kStopAtCloser))
      return false;
    if (out)
      out->attributes = std::string(begin, cur_);
  }
  return Expect('}', "'}' to close the layout");
}

// Where the shape at cur_ ends, found without decoding it: an element type,
// bracketed dimensions and a layout brace touching them, or a parenthesized
// tuple on one line. nullptr for anything else; that shape is just parsed.
const char *Parser::ShapeTextEnd() const {
  const char *p = cur_;
  if (p < end_ && *p == '(') {
    int depth = 0;
    for (; p < end_; ++p) {
      char c = *p;
      if (c == '(')
        ++depth;
      else if (c == ')' && --depth == 0)
        return p + 1;
      else if (c == '\n' || c == '"')
        return nullptr;
    }
    return nullptr;
  }
  while (p < end_ && IsLowerAlnum(*p))
    ++p;
  if (p == cur_ || p == end_ || *p != '[')
    return nullptr;
  // As in ParseArrayShape: a brace after a token or opaque shape is not
  // its layout.
  llvm::StringRef type(cur_, p - cur_);
  bool takes_layout = type != "token" && type != "opaque";
  for (++p; p < end_ && *p != ']'; ++p)
    if (!HasClass(*p, kClassDimension))
      return nullptr;
  if (p == end_)
    return nullptr;
  ++p;
  if (p == end_ || *p != '{' || !takes_layout)
    return p;
  for (++p; p < end_ && *p != '}'; ++p)
    if (*p == '{' || *p == '\n' || *p == '"')
      return nullptr;
  return p == end_ ? nullptr : p + 1;
}

// The shape written before an instruction's opcode: shared with every
// earlier instruction that wrote the same text, else parsed (and kept for
// later ones when the text was the whole shape).
bool Parser::ParseInstructionShape(Shape &shape, const Shape *&shared) {
  const char *text_end = module_ ? ShapeTextEnd() : nullptr;
  if (!text_end)
    return ParseShapeAt(&shape, nullptr, 0);
  HloName key = NameKey(llvm::StringRef(cur_, text_end - cur_));
  auto it = shapes_by_text_.find(key);
  if (it != shapes_by_text_.end()) {
    shared = it->second;
    cur_ = text_end;
    return true;
  }
  if (!ParseShapeAt(&shape, nullptr, 0))
    return false;
  if (cur_ != text_end)
    return true;
  shared = module_->AddSharedShape(std::move(shape));
  shapes_by_text_.try_emplace(key, shared);
  return true;
}

bool Parser::ShapeTextMatches(const char *begin, const char *end, const Shape &shape) {
  const char *saved_cur = cur_, *saved_end = end_;
  cur_ = begin;
  end_ = end;
  shape_mismatch_ = false;
  bool ok = ParseShapeAt(nullptr, &shape, 0);
  cur_ = saved_cur;
  end_ = saved_end;
  return ok && !shape_mismatch_;
}

llvm::Expected<Shape> Parser::ParseShapeText() {
  SkipTrivia();
  Shape shape;
  if (ParseShapeAt(&shape, nullptr, 0)) {
    SkipTrivia();
    if (cur_ != end_)
      Fail(cur_, "unexpected text after the shape");
  }
  if (failed_)
    return TakeError();
  return shape;
}

} // namespace hlo_parser

llvm::Expected<Shape> ParseShape(llvm::StringRef text) {
  return hlo_parser::Parser(text, "<shape>").ParseShapeText();
}

} // namespace loom::hlo
