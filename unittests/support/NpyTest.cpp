// Unit tests of loom/support/Npy.h, the .npy container that hlo-run and
// bir-sim share: what serializeNpy writes is byte for byte NumPy's layout,
// parseNpy reads it back (also for empty and rank-0 arrays and headers that
// need format 2.0), dtypes are normalized, and malformed or truncated files
// are errors that say what is wrong.
#include "loom/support/Npy.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <string>

using namespace loom;

namespace {

template <typename T> std::string errorOf(llvm::Expected<T> V) {
  return V ? std::string("<no error>") : llvm::toString(V.takeError());
}

std::string makeFile(const std::string &Dict, const std::string &Data) {
  std::string Header = Dict + "\n";
  std::string Out = "\x93NUMPY";
  Out.push_back(1);
  Out.push_back(0);
  Out.push_back(static_cast<char>(Header.size() & 0xff));
  Out.push_back(static_cast<char>(Header.size() >> 8));
  return Out + Header + Data;
}

TEST(SupportNpyTest, WritesNumPysLayout) {
  NpyArray A{"<i4", {2, 2}, std::string("\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0", 16)};
  std::string Bytes = serializeNpy(A);
  EXPECT_EQ(Bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t HeaderLen = static_cast<uint8_t>(Bytes[8]) | (static_cast<uint8_t>(Bytes[9]) << 8);
  EXPECT_EQ((10 + HeaderLen) % 64, 0u);
  EXPECT_EQ(Bytes[10 + HeaderLen - 1], '\n');
  EXPECT_EQ(Bytes.substr(10, 59), "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }");
  EXPECT_EQ(Bytes.substr(10 + HeaderLen), A.Data);
  EXPECT_EQ(serializeNpy(A.Descr, A.Shape, A.Data), Bytes);
}

TEST(SupportNpyTest, RoundTripsEmptyScalarAndVectorArrays) {
  for (const NpyArray &A : {NpyArray{"<f4", {0}, ""}, NpyArray{"<f4", {3, 0, 2}, ""},
                            NpyArray{"<f8", {}, std::string(8, '\x11')},
                            NpyArray{"|u1", {5}, "abcde"}}) {
    auto Back = parseNpy(serializeNpy(A));
    ASSERT_TRUE(!!Back) << errorOf(std::move(Back));
    EXPECT_EQ(Back->Descr, A.Descr);
    EXPECT_EQ(Back->Shape, A.Shape);
    EXPECT_EQ(Back->Data, A.Data);
  }
  EXPECT_EQ(formatNpyShape({}), "()");
  EXPECT_EQ(formatNpyShape({5}), "(5,)");
  EXPECT_EQ(formatNpyShape({2, 3}), "(2, 3)");
}

TEST(SupportNpyTest, LongHeadersUseVersionTwo) {
  // 25000 dimensions of 1 need a header longer than 65535 bytes.
  NpyArray A{"<u2", std::vector<int64_t>(25000, 1), std::string(2, '\7')};
  std::string Bytes = serializeNpy(A);
  EXPECT_EQ(Bytes[6], 2);
  size_t HeaderLen = 0;
  for (int I = 3; I >= 0; --I)
    HeaderLen = (HeaderLen << 8) | static_cast<uint8_t>(Bytes[8 + I]);
  EXPECT_EQ((12 + HeaderLen) % 64, 0u);
  auto Back = parseNpy(Bytes);
  ASSERT_TRUE(!!Back) << errorOf(std::move(Back));
  EXPECT_EQ(Back->Shape.size(), 25000u);
  EXPECT_EQ(Back->Data, A.Data);
}

TEST(SupportNpyTest, NormalizesByteOrderMarks) {
  auto A = parseNpy(makeFile("{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }",
                             std::string(4, '\0')));
  ASSERT_TRUE(!!A) << errorOf(std::move(A));
  EXPECT_EQ(A->Descr, "<f4");
  auto B = parseNpy(makeFile("{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }", "xy"));
  ASSERT_TRUE(!!B) << errorOf(std::move(B));
  EXPECT_EQ(B->Descr, "|u1");
  EXPECT_EQ(npyDescrItemSize("<c16"), 16);
  EXPECT_EQ(npyDescrItemSize(">f4"), 0);
}

TEST(SupportNpyTest, RefusesMalformedFilesWithAReason) {
  const std::string Data(4, '\0');
  struct {
    std::string File;
    const char *Message;
  } Cases[] = {
      {"\x93NUMPX\x01\x00", "bad magic"},
      {std::string("\x93NUMPY\x04\x00", 8), "version 4.0"},
      {std::string("\x93NUMPY\x01\x00\x01", 9), "no header length"},
      {std::string("\x93NUMPY\x01\x00\xff\x00", 10), "the header says 255 bytes"},
      {makeFile("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", Data),
       "fortran_order"},
      {makeFile("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", Data),
       "unsupported .npy dtype '>f4'"},
      {makeFile("{'descr': '<f4', 'shape': (1,), }", Data), "must have the keys"},
      {makeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", Data),
       "unexpected or repeated key 'x'"},
      {makeFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", Data),
       "structured dtypes"},
      {makeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", Data),
       "non-negative dimension"},
      {makeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", Data), "needs 8"},
      {makeFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", Data + "x"),
       "is 5 bytes"},
      {makeFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(4294967296, 4294967296, 4294967296), }",
                Data),
       "too many elements"},
  };
  for (const auto &C : Cases) {
    std::string Message = errorOf(parseNpy(C.File));
    EXPECT_NE(Message.find(C.Message), std::string::npos) << Message;
  }
}

TEST(SupportNpyTest, EveryTruncationIsAnError) {
  std::string Bytes = serializeNpy(NpyArray{"<i2", {3}, std::string(6, '\5')});
  for (size_t N = 0; N < Bytes.size(); ++N) {
    auto A = parseNpy(llvm::StringRef(Bytes).take_front(N));
    EXPECT_FALSE(!!A) << N;
    if (!A)
      llvm::consumeError(A.takeError());
  }
  EXPECT_TRUE(!!parseNpy(Bytes));
}

} // namespace
