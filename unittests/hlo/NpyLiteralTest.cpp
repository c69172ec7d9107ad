// Unit tests of the .npy reader and writer: every element type survives a
// round trip, the bytes are what NumPy writes, bf16 travels as `<f4` (and
// its raw `<u2` bits are accepted), and no malformed file — including every
// truncation of a valid one — gets past ParseNpy/NpyToLiteral without an
// error.
#include "loom/hlo/eval/NpyLiteral.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <string>

using namespace loom::hlo;

namespace {

std::string ErrorOf(llvm::Error err) { return llvm::toString(std::move(err)); }

template <typename T> std::string ErrorOf(llvm::Expected<T> value) {
  return value ? std::string("<no error>") : llvm::toString(value.takeError());
}

// A .npy file with an arbitrary header dict and data.
std::string MakeFile(const std::string &dict, const std::string &data, int major = 1) {
  std::string header = dict + "\n";
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  if (major != 1)
    out.append(2, '\0');
  return out + header + data;
}

Literal Iota(PrimitiveType type, std::initializer_list<int64_t> dims) {
  Literal l(Shape(type, dims));
  for (int64_t i = 0; i < l.element_count(); ++i)
    l.SetFromDouble(i, static_cast<double>(i % 7) - 3.0 + (IsFloatingPointType(type) ? 0.5 : 0));
  return l;
}

TEST(NpyTest, HeaderIsWhatNumPyWrites) {
  Literal l = Iota(PrimitiveType::F32, {2, 3});
  auto array = LiteralToNpy(l);
  ASSERT_TRUE(!!array) << ErrorOf(array.takeError());
  std::string bytes = SerializeNpy(*array);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  // The data starts on a 64-byte boundary and the header ends in '\n'.
  size_t header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  EXPECT_EQ(bytes.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(bytes.size(), 10 + header_len + 24);
}

TEST(NpyTest, ShapesOfRankZeroAndOne) {
  auto scalar = LiteralToNpy(Literal::CreateR0FromDouble(PrimitiveType::F64, 2.5));
  ASSERT_TRUE(!!scalar);
  EXPECT_NE(SerializeNpy(*scalar).find("'shape': ()"), std::string::npos);
  auto vector = LiteralToNpy(Iota(PrimitiveType::S32, {5}));
  ASSERT_TRUE(!!vector);
  EXPECT_NE(SerializeNpy(*vector).find("'shape': (5,)"), std::string::npos);
}

TEST(NpyTest, EveryElementTypeRoundTrips) {
  for (PrimitiveType type :
       {PrimitiveType::PRED, PrimitiveType::S4, PrimitiveType::S8, PrimitiveType::S16,
        PrimitiveType::S32, PrimitiveType::S64, PrimitiveType::U4, PrimitiveType::U8,
        PrimitiveType::U16, PrimitiveType::U32, PrimitiveType::U64, PrimitiveType::F16,
        PrimitiveType::BF16, PrimitiveType::F32, PrimitiveType::F64, PrimitiveType::F8E4M3FN,
        PrimitiveType::F8E5M2, PrimitiveType::C64, PrimitiveType::C128}) {
    SCOPED_TRACE(PrimitiveTypeName(type).str());
    Literal l = Iota(type, {2, 3, 2});
    if (IsUnsignedIntegralType(type))
      for (int64_t i = 0; i < l.element_count(); ++i)
        l.SetFromInt64(i, i % 4);
    auto array = LiteralToNpy(l);
    ASSERT_TRUE(!!array) << ErrorOf(array.takeError());
    EXPECT_EQ(array->descr, NpyDescrForType(type).str());
    auto parsed = ParseNpy(SerializeNpy(*array));
    ASSERT_TRUE(!!parsed) << ErrorOf(parsed.takeError());
    auto back = NpyToLiteral(*parsed, l.shape());
    ASSERT_TRUE(!!back) << ErrorOf(back.takeError());
    EXPECT_TRUE(*back == l) << back->ToString() << " vs " << l.ToString();
  }
}

TEST(NpyTest, Bf16IsWrittenAsF32AndReadFromF32OrRawBits) {
  EXPECT_EQ(NpyDescrForType(PrimitiveType::BF16), "<f4");
  Shape shape(PrimitiveType::BF16, {2});
  // 1 + 2^-9 lies exactly between two bf16 values: ties go to even (1.0).
  float values[2] = {1.0f + 0x1p-9f, -0.375f};
  NpyArray f4{"<f4", {2}, std::string(reinterpret_cast<const char *>(values), 8)};
  auto rounded = NpyToLiteral(f4, shape);
  ASSERT_TRUE(!!rounded) << ErrorOf(rounded.takeError());
  EXPECT_EQ(rounded->GetAsDouble(0), 1.0);
  EXPECT_EQ(rounded->GetAsDouble(1), -0.375);
  // Raw bits: 0x3fc0 is 1.5.
  NpyArray u2{"<u2", {2}, std::string("\xc0\x3f\x80\xbf", 4)};
  auto raw = NpyToLiteral(u2, shape);
  ASSERT_TRUE(!!raw) << ErrorOf(raw.takeError());
  EXPECT_EQ(raw->GetAsDouble(0), 1.5);
  EXPECT_EQ(raw->GetAsDouble(1), -1.0);
}

TEST(NpyTest, RefusesWhatDoesNotFitTheParameter) {
  NpyArray f4{"<f4", {2}, std::string(8, '\0')};
  EXPECT_NE(ErrorOf(NpyToLiteral(f4, Shape(PrimitiveType::F32, {3}))).find("does not match"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(f4, Shape(PrimitiveType::F64, {2}))).find("cannot hold f64"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(f4, Shape::MakeTuple({}))).find("cannot hold"), std::string::npos);
  NpyArray bools{"|b1", {2}, std::string("\x01\x02", 2)};
  EXPECT_NE(ErrorOf(NpyToLiteral(bools, Shape(PrimitiveType::PRED, {2}))).find("not 0 or 1"),
            std::string::npos);
  NpyArray s4{"|i1", {1}, std::string("\x09", 1)};
  EXPECT_NE(ErrorOf(NpyToLiteral(s4, Shape(PrimitiveType::S4, {1}))).find("outside the range"),
            std::string::npos);
}

TEST(NpyTest, RefusesMalformedHeaders) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  const std::string data(4, '\0');
  ASSERT_TRUE(!!ParseNpy(MakeFile(ok, data)));
  ASSERT_TRUE(!!ParseNpy(MakeFile(ok, data, 2)));
  struct {
    std::string file;
    const char *message;
  } cases[] = {
      {"\x93NUMPX\x01\x00", "bad magic"},
      {MakeFile(ok, data, 4), "version 4.0"},
      {MakeFile("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", data), "fortran_order"},
      {MakeFile("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", data),
       "unsupported .npy dtype '>f4'"},
      {MakeFile("{'descr': '<f4', 'shape': (1,), }", data), "must have the keys"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", data),
       "unexpected or repeated key 'x'"},
      {MakeFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", data),
       "structured dtypes"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", data),
       "non-negative dimension"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", data),
       "expected ',' or '}'"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data), "needs 8"},
      {MakeFile(ok, data + "x"), "is 5 bytes"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(4294967296, 4294967296, 4294967296), }",
                data),
       "too many elements"},
      {MakeFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(99999999999999999999,), }",
                data),
       "non-negative dimension"},
  };
  for (const auto &c : cases) {
    std::string message = ErrorOf(ParseNpy(c.file));
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
  }
}

TEST(NpyTest, EveryTruncationIsAnError) {
  auto array = LiteralToNpy(Iota(PrimitiveType::F32, {3, 2}));
  ASSERT_TRUE(!!array);
  std::string bytes = SerializeNpy(*array);
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(!!ParseNpy(llvm::StringRef(bytes).take_front(n))) << n;
  EXPECT_TRUE(!!ParseNpy(bytes));
}

TEST(NpyTest, CorruptedBytesNeverCrash) {
  auto array = LiteralToNpy(Iota(PrimitiveType::S16, {4}));
  ASSERT_TRUE(!!array);
  const std::string bytes = SerializeNpy(*array);
  for (size_t i = 0; i < 80 && i < bytes.size(); ++i)
    for (int v : {0, int('('), int(')'), int('\''), int(','), int('}'), 0xff}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(v);
      auto parsed = ParseNpy(bad);
      if (!parsed) {
        llvm::consumeError(parsed.takeError());
        continue;
      }
      auto literal = NpyToLiteral(*parsed, Shape(PrimitiveType::S16, {4}));
      if (!literal)
        llvm::consumeError(literal.takeError());
    }
}

} // namespace
