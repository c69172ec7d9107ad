//===- BirHloNumericsTest.cpp - BIR's element semantics against the HLO interpreter ===//
//
// docs/bir.md, "HLO's elementwise ops and reductions in BIR": every row of
// that table, for every element type BIR shares with HLO, computed once by
// the HLO interpreter (a one-instruction module run with RunSpmd) and once
// by the simulator's semantics (lib/bir/sim/Semantics.h) on the same bytes.
// The results must be the same bytes; a NaN only has to be a NaN (which NaN
// is not specified, docs/bir.md). The inputs are edge values: NaN, +-inf,
// +-0, subnormals, the largest and smallest values, integer overflow and
// division by zero, and every bit pattern of the 8-bit floats.
//
//===----------------------------------------------------------------------===//

#include "../../lib/bir/sim/Semantics.h"

#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/parser/HloParser.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::bir;
using namespace loom::bir::sim;

namespace {

const DataType FloatTypes[] = {DataType::FP32, DataType::BF16, DataType::FP16,
                               DataType::FP8E4M3, DataType::FP8E5M2};
const DataType IntTypes[] = {DataType::INT8,  DataType::INT16,
                             DataType::INT32, DataType::UINT8,
                             DataType::UINT16, DataType::UINT32,
                             DataType::INT64, DataType::UINT64};

/// XLA's spelling of the HLO type that BIR type T stands for.
std::string hloType(DataType T) {
  switch (T) {
  case DataType::FP32: return "f32";
  case DataType::BF16: return "bf16";
  case DataType::FP16: return "f16";
  case DataType::FP8E4M3: return "f8e4m3fn";
  case DataType::FP8E5M2: return "f8e5m2";
  case DataType::INT8: return "s8";
  case DataType::INT16: return "s16";
  case DataType::INT32: return "s32";
  case DataType::UINT8: return "u8";
  case DataType::UINT16: return "u16";
  case DataType::UINT32: return "u32";
  case DataType::INT64: return "s64";
  case DataType::UINT64: return "u64";
  }
  return "?";
}

hlo::PrimitiveType hloPrimitive(DataType T) {
  switch (T) {
  case DataType::FP32: return hlo::PrimitiveType::F32;
  case DataType::BF16: return hlo::PrimitiveType::BF16;
  case DataType::FP16: return hlo::PrimitiveType::F16;
  case DataType::FP8E4M3: return hlo::PrimitiveType::F8E4M3FN;
  case DataType::FP8E5M2: return hlo::PrimitiveType::F8E5M2;
  case DataType::INT8: return hlo::PrimitiveType::S8;
  case DataType::INT16: return hlo::PrimitiveType::S16;
  case DataType::INT32: return hlo::PrimitiveType::S32;
  case DataType::UINT8: return hlo::PrimitiveType::U8;
  case DataType::UINT16: return hlo::PrimitiveType::U16;
  case DataType::UINT32: return hlo::PrimitiveType::U32;
  case DataType::INT64: return hlo::PrimitiveType::S64;
  case DataType::UINT64: return hlo::PrimitiveType::U64;
  }
  return hlo::PrimitiveType::F32;
}

/// An array of elements of one BIR type, as bytes.
struct Array {
  DataType Type;
  std::vector<uint8_t> Bytes;
  uint64_t size() const { return Bytes.size() / getDataTypeSize(Type); }
  const uint8_t *at(uint64_t E) const {
    return Bytes.data() + E * getDataTypeSize(Type);
  }
};

/// Elements given by value, each stored with convert(v, T).
Array fromValues(DataType T, const std::vector<double> &Values) {
  Array A{T, std::vector<uint8_t>(Values.size() * getDataTypeSize(T))};
  for (size_t I = 0; I < Values.size(); ++I)
    storeValue(T, Values[I], A.Bytes.data() + I * getDataTypeSize(T));
  return A;
}

/// Elements given by their bits (the low getDataTypeSize(T) bytes).
Array fromBits(DataType T, const std::vector<uint32_t> &Bits) {
  unsigned S = getDataTypeSize(T);
  Array A{T, std::vector<uint8_t>(Bits.size() * S)};
  for (size_t I = 0; I < Bits.size(); ++I)
    std::memcpy(A.Bytes.data() + I * S, &Bits[I], S);
  return A;
}

/// Edge values of a floating type: zeros, ones, halves and ties, the
/// extremes, subnormals, infinities and NaNs (with a payload and a sign in
/// fp32), and every bit pattern of an 8-bit type.
Array floatEdges(DataType T) {
  if (getDataTypeSize(T) == 1) {
    std::vector<uint32_t> All;
    for (uint32_t B = 0; B < 256; ++B)
      All.push_back(B);
    return fromBits(T, All);
  }
  std::vector<double> V = {0.0,  -0.0, 1.0,   -1.0, 0.5,   -0.5, 2.0,
                           3.0,  -3.0, 2.5,   0.1,  -7.25, 100.0, 1e4,
                           3e38, -3e38, 1e-40, -1e-45, 1e-7, 65504.0,
                           7e4,  HUGE_VAL, -HUGE_VAL,
                           std::numeric_limits<double>::quiet_NaN(),
                           257.0, 16777217.0, 0.75, -0.25};
  Array A = fromValues(T, V);
  if (T == DataType::FP32) {
    Array Extra = fromBits(T, {0x7fc00001u, 0xffc00000u, 0x00000001u,
                               0x7f7fffffu, 0x80800000u, 0x3f800001u});
    A.Bytes.insert(A.Bytes.end(), Extra.Bytes.begin(), Extra.Bytes.end());
  }
  return A;
}

/// Edge values of an integer type: 0, +-1, +-2, small ones, and the ends of
/// its range (where negation, division and products overflow).
Array intEdges(DataType T) {
  std::vector<double> V = {0, 1, -1, 2, -2, 3, 7, -7, 100, -100, 127, -128,
                           255, 32767, -32768, 65535, 2147483647.0,
                           -2147483648.0, 4294967295.0, 5, -5, 64};
  Array A = fromValues(T, V); // saturating: each type keeps its own extremes
  if (getDataTypeSize(T) == 8) {
    // The 64-bit ends and values a double does not hold (exact integer
    // semantics, not fp32's or double's).
    const uint64_t Wide[] = {0x7fffffffffffffffull, 0x8000000000000000ull,
                             0xffffffffffffffffull, 0x0020000000000001ull,
                             0xffdfffffffffffffull, 0x4000000000000003ull,
                             0x00000001000000ffull, 0xc000000000000001ull};
    size_t At = A.Bytes.size();
    A.Bytes.resize(At + sizeof(Wide));
    std::memcpy(A.Bytes.data() + At, Wide, sizeof(Wide));
  }
  return A;
}

Array edges(DataType T) { return isFloatType(T) ? floatEdges(T) : intEdges(T); }

/// Every pair (a, b) of A's elements: the first array repeats each element,
/// the second cycles.
std::pair<Array, Array> allPairs(const Array &A) {
  unsigned S = getDataTypeSize(A.Type);
  uint64_t N = A.size();
  Array X{A.Type, {}}, Y{A.Type, {}};
  X.Bytes.reserve(N * N * S);
  Y.Bytes.reserve(N * N * S);
  for (uint64_t I = 0; I < N; ++I)
    for (uint64_t J = 0; J < N; ++J) {
      X.Bytes.insert(X.Bytes.end(), A.at(I), A.at(I) + S);
      Y.Bytes.insert(Y.Bytes.end(), A.at(J), A.at(J) + S);
    }
  return {X, Y};
}

hlo::Literal toLiteral(const Array &A, llvm::ArrayRef<int64_t> Dims) {
  hlo::Literal L(hlo::Shape(hloPrimitive(A.Type), Dims));
  EXPECT_EQ(uint64_t(L.size_bytes()), A.Bytes.size());
  std::memcpy(L.raw_data(), A.Bytes.data(), A.Bytes.size());
  return L;
}

/// Runs Text (one device) on Args and returns its result's bytes.
std::vector<uint8_t> runHlo(const std::string &Text,
                            std::vector<hlo::Literal> Args) {
  auto M = hlo::ParseHloModule(Text);
  if (!M) {
    ADD_FAILURE() << llvm::toString(M.takeError()) << "\n" << Text;
    return {};
  }
  auto R = hlo::RunSpmd(**M, {std::move(Args)});
  if (!R) {
    ADD_FAILURE() << llvm::toString(R.takeError()) << "\n" << Text;
    return {};
  }
  const hlo::Literal &Out = (*R)[0];
  return std::vector<uint8_t>(Out.raw_data(), Out.raw_data() + Out.size_bytes());
}

std::string describe(DataType T, const uint8_t *P) {
  std::string S = formatElement(T, P) + " (0x";
  static const char Hex[] = "0123456789abcdef";
  for (int I = int(getDataTypeSize(T)) - 1; I >= 0; --I) {
    S += Hex[P[I] >> 4];
    S += Hex[P[I] & 15];
  }
  return S + ")";
}

/// Expects BIR's bytes to be the interpreter's: the same bytes, or both NaN.
/// Inputs describes element E's operands for the message.
void expectSame(const std::string &What, DataType T,
                const std::vector<uint8_t> &Hlo, const std::vector<uint8_t> &Bir,
                const std::function<std::string(uint64_t)> &Inputs) {
  ASSERT_EQ(Hlo.size(), Bir.size()) << What;
  unsigned S = getDataTypeSize(T);
  uint64_t Differ = 0;
  std::string First;
  for (uint64_t E = 0; E * S < Hlo.size(); ++E) {
    const uint8_t *H = Hlo.data() + E * S, *B = Bir.data() + E * S;
    if (std::memcmp(H, B, S) == 0)
      continue;
    if (isFloatType(T) && std::isnan(loadValue(T, H)) &&
        std::isnan(loadValue(T, B)))
      continue;
    if (Differ++ == 0)
      First = "element " + std::to_string(E) + " of " + Inputs(E) +
              ": interpreter " + describe(T, H) + ", BIR " + describe(T, B);
  }
  EXPECT_EQ(Differ, 0u) << What << ": " << Differ << " differ; first "
                        << First;
}

/// r = Op(a, b) of two T[N]; the result is T[N], or pred[N] for Pred.
std::string binaryModule(const std::string &Op, DataType T, bool Pred,
                         uint64_t N, const std::string &Attrs = "") {
  std::string TT = hloType(T) + "[" + std::to_string(N) + "]";
  std::string TO = (Pred ? "pred" : hloType(T)) + "[" + std::to_string(N) + "]";
  return "HloModule m\n\nENTRY e {\n  a = " + TT + " parameter(0)\n  b = " +
         TT + " parameter(1)\n  ROOT r = " + TO + " " + Op + "(a, b)" + Attrs +
         "\n}\n";
}

std::string unaryModule(const std::string &Op, DataType T, const std::string &Out,
                        uint64_t N) {
  std::string Dim = "[" + std::to_string(N) + "]";
  return "HloModule m\n\nENTRY e {\n  a = " + hloType(T) + Dim +
         " parameter(0)\n  ROOT r = " + Out + Dim + " " + Op + "(a)\n}\n";
}

struct BinaryCase {
  const char *Hlo;
  ArithOp Op;
};

const BinaryCase Arithmetic[] = {
    {"add", ArithOp::Add},           {"subtract", ArithOp::Subtract},
    {"multiply", ArithOp::Multiply}, {"divide", ArithOp::Divide},
    {"maximum", ArithOp::Max},       {"minimum", ArithOp::Min},
    {"power", ArithOp::Power},       {"remainder", ArithOp::Remainder},
};

const BinaryCase Bitwise[] = {
    {"and", ArithOp::And}, {"or", ArithOp::Or}, {"xor", ArithOp::Xor}};

struct CompareCase {
  const char *Direction;
  ArithOp Op;
};
const CompareCase Comparisons[] = {
    {"EQ", ArithOp::Equal},   {"NE", ArithOp::NotEqual},
    {"LT", ArithOp::Less},    {"LE", ArithOp::LessEqual},
    {"GT", ArithOp::Greater}, {"GE", ArithOp::GreaterEqual}};

std::function<std::string(uint64_t)> pairText(const Array &X, const Array &Y) {
  return [&X, &Y](uint64_t E) {
    return "(" + describe(X.Type, X.at(E)) + ", " + describe(Y.Type, Y.at(E)) +
           ")";
  };
}

/// fp8e4m3 results of arithmetic: BIR's convert saturates to +-448 where
/// XLA's f8e4m3fn gives NaN (docs/bir.md). The documented way to XLA's
/// rounding, fp32 arithmetic then TensorConvert, is what this runs.
void tensorTensorLikeHlo(ArithOp Op, const Array &X, const Array &Y,
                         DataType To, std::vector<uint8_t> &Out) {
  uint64_t N = X.size();
  Out.assign(N * getDataTypeSize(To), 0);
  if (To != DataType::FP8E4M3) {
    tensorTensor(Op, X.Type, X.Bytes.data(), Y.Type, Y.Bytes.data(), To,
                 Out.data(), N);
    return;
  }
  std::vector<uint8_t> Wide(N * 4);
  tensorTensor(Op, X.Type, X.Bytes.data(), Y.Type, Y.Bytes.data(),
               DataType::FP32, Wide.data(), N);
  tensorConvert(DataType::FP32, Wide.data(), To, Out.data(), N);
}

TEST(BirHloNumerics, TensorTensorArithmetic) {
  for (DataType T : FloatTypes)
    for (const BinaryCase &C : Arithmetic) {
      // Every pair of edge values; for the 8-bit floats, a pattern against
      // every pattern (65536 pairs).
      auto [X, Y] = allPairs(edges(T));
      std::vector<uint8_t> Hlo =
          runHlo(binaryModule(C.Hlo, T, false, X.size()),
                 {toLiteral(X, {int64_t(X.size())}),
                  toLiteral(Y, {int64_t(Y.size())})});
      std::vector<uint8_t> Bir;
      tensorTensorLikeHlo(C.Op, X, Y, T, Bir);
      expectSame(std::string(C.Hlo) + " " + hloType(T), T, Hlo, Bir,
                 pairText(X, Y));
    }
  for (DataType T : IntTypes) {
    for (const BinaryCase *Cases : {Arithmetic, Bitwise}) {
      size_t Count = Cases == Arithmetic ? std::size(Arithmetic) : std::size(Bitwise);
      for (size_t K = 0; K < Count; ++K) {
        const BinaryCase &C = Cases[K];
        auto [X, Y] = allPairs(edges(T));
        std::vector<uint8_t> Hlo =
            runHlo(binaryModule(C.Hlo, T, false, X.size()),
                   {toLiteral(X, {int64_t(X.size())}),
                    toLiteral(Y, {int64_t(Y.size())})});
        std::vector<uint8_t> Bir(X.Bytes.size());
        tensorTensor(C.Op, T, X.Bytes.data(), T, Y.Bytes.data(), T, Bir.data(),
                     X.size());
        expectSame(std::string(C.Hlo) + " " + hloType(T), T, Hlo, Bir,
                   pairText(X, Y));
      }
    }
  }
}

TEST(BirHloNumerics, ComparisonsWritePredAsUint8) {
  std::vector<DataType> All(std::begin(FloatTypes), std::end(FloatTypes));
  All.insert(All.end(), std::begin(IntTypes), std::end(IntTypes));
  for (DataType T : All)
    for (const CompareCase &C : Comparisons) {
      auto [X, Y] = allPairs(edges(T));
      std::vector<uint8_t> Hlo = runHlo(
          binaryModule("compare", T, true, X.size(),
                       std::string(", direction=") + C.Direction),
          {toLiteral(X, {int64_t(X.size())}), toLiteral(Y, {int64_t(Y.size())})});
      std::vector<uint8_t> Bir(X.size());
      tensorTensor(C.Op, T, X.Bytes.data(), T, Y.Bytes.data(), DataType::UINT8,
                   Bir.data(), X.size());
      expectSame(std::string("compare ") + C.Direction + " " + hloType(T),
                 DataType::UINT8, Hlo, Bir, pairText(X, Y));
    }
}

TEST(BirHloNumerics, PredLogicAndSelect) {
  // pred as uint8 0 / 1: and, or, xor are TensorTensor's bitwise ops, not
  // LogicalNot, select Select.
  Array P = fromValues(DataType::UINT8, {0, 1});
  auto [X, Y] = allPairs(P);
  auto PredLit = [](const Array &A) {
    hlo::Literal L(hlo::Shape(hlo::PrimitiveType::PRED, {int64_t(A.size())}));
    std::memcpy(L.raw_data(), A.Bytes.data(), A.Bytes.size());
    return L;
  };
  for (const BinaryCase &C : Bitwise) {
    std::string Text = "HloModule m\n\nENTRY e {\n  a = pred[4] parameter(0)\n"
                       "  b = pred[4] parameter(1)\n  ROOT r = pred[4] " +
                       std::string(C.Hlo) + "(a, b)\n}\n";
    std::vector<uint8_t> Hlo = runHlo(Text, {PredLit(X), PredLit(Y)});
    std::vector<uint8_t> Bir(4);
    tensorTensor(C.Op, DataType::UINT8, X.Bytes.data(), DataType::UINT8,
                 Y.Bytes.data(), DataType::UINT8, Bir.data(), 4);
    expectSame(std::string(C.Hlo) + " pred", DataType::UINT8, Hlo, Bir,
               pairText(X, Y));
  }
  std::vector<uint8_t> Hlo = runHlo(
      "HloModule m\n\nENTRY e {\n  a = pred[2] parameter(0)\n"
      "  ROOT r = pred[2] not(a)\n}\n",
      {PredLit(P)});
  std::vector<uint8_t> Bir(2);
  activation(ActivationFunc::LogicalNot, 1.0, DataType::UINT8, P.Bytes.data(),
             DataType::UINT8, Bir.data(), 2);
  expectSame("not pred", DataType::UINT8, Hlo, Bir,
             [](uint64_t E) { return std::to_string(E); });

  for (DataType T : {DataType::FP32, DataType::BF16, DataType::INT32,
                     DataType::UINT8, DataType::FP8E5M2}) {
    Array V = edges(T);
    uint64_t N = V.size();
    Array W = V;
    std::reverse(W.Bytes.begin(), W.Bytes.end()); // other values
    std::vector<double> Choice;
    for (uint64_t E = 0; E < N; ++E)
      Choice.push_back(double((E * 7 + 3) % 3 == 0));
    Array Pred = fromValues(DataType::UINT8, Choice);
    std::string D = "[" + std::to_string(N) + "]";
    std::string Text = "HloModule m\n\nENTRY e {\n  p = pred" + D +
                       " parameter(0)\n  a = " + hloType(T) + D +
                       " parameter(1)\n  b = " + hloType(T) + D +
                       " parameter(2)\n  ROOT r = " + hloType(T) + D +
                       " select(p, a, b)\n}\n";
    std::vector<uint8_t> H = runHlo(
        Text, {PredLit(Pred), toLiteral(V, {int64_t(N)}), toLiteral(W, {int64_t(N)})});
    std::vector<uint8_t> B(V.Bytes.size());
    selectElements(Pred.Bytes.data(), V.Bytes.data(), W.Bytes.data(), T,
                   B.data(), N);
    // A select copies bits: even NaNs must match exactly.
    EXPECT_EQ(H, B) << "select " << hloType(T);
  }
}

struct UnaryCase {
  const char *Hlo;
  ActivationFunc Func;
};
const UnaryCase FloatUnary[] = {
    {"exponential", ActivationFunc::Exp}, {"log", ActivationFunc::Log},
    {"sqrt", ActivationFunc::Sqrt},       {"rsqrt", ActivationFunc::Rsqrt},
    {"tanh", ActivationFunc::Tanh},       {"logistic", ActivationFunc::Logistic},
    {"sine", ActivationFunc::Sin},        {"cosine", ActivationFunc::Cos},
    {"abs", ActivationFunc::Abs},         {"negate", ActivationFunc::Negate}};

TEST(BirHloNumerics, ActivationFunctions) {
  for (DataType T : FloatTypes)
    for (const UnaryCase &C : FloatUnary) {
      Array X = edges(T);
      std::vector<uint8_t> Hlo = runHlo(unaryModule(C.Hlo, T, hloType(T), X.size()),
                                        {toLiteral(X, {int64_t(X.size())})});
      std::vector<uint8_t> Bir(X.Bytes.size());
      if (T == DataType::FP8E4M3) {
        // fp32 out, then XLA's rounding (docs/bir.md, fp8e4m3 results).
        std::vector<uint8_t> Wide(X.size() * 4);
        activation(C.Func, 1.0, T, X.Bytes.data(), DataType::FP32, Wide.data(),
                   X.size());
        tensorConvert(DataType::FP32, Wide.data(), T, Bir.data(), X.size());
      } else {
        activation(C.Func, 1.0, T, X.Bytes.data(), T, Bir.data(), X.size());
      }
      expectSame(std::string(C.Hlo) + " " + hloType(T), T, Hlo, Bir,
                 [&X](uint64_t E) { return describe(X.Type, X.at(E)); });
    }
  const UnaryCase IntUnary[] = {{"abs", ActivationFunc::Abs},
                                {"negate", ActivationFunc::Negate},
                                {"not", ActivationFunc::BitwiseNot}};
  for (DataType T : IntTypes)
    for (const UnaryCase &C : IntUnary) {
      Array X = edges(T);
      std::vector<uint8_t> Hlo = runHlo(unaryModule(C.Hlo, T, hloType(T), X.size()),
                                        {toLiteral(X, {int64_t(X.size())})});
      std::vector<uint8_t> Bir(X.Bytes.size());
      activation(C.Func, 1.0, T, X.Bytes.data(), T, Bir.data(), X.size());
      expectSame(std::string(C.Hlo) + " " + hloType(T), T, Hlo, Bir,
                 [&X](uint64_t E) { return describe(X.Type, X.at(E)); });
    }
}

TEST(BirHloNumerics, TensorConvertIsXlaConvert) {
  std::vector<DataType> All(std::begin(FloatTypes), std::end(FloatTypes));
  All.insert(All.end(), std::begin(IntTypes), std::end(IntTypes));
  for (DataType From : All) {
    Array X = edges(From);
    if (isFloatType(From) && getDataTypeSize(From) > 1) {
      // Values that truncate, saturate and overflow the narrow types.
      Array More = fromValues(From, {-0.7, 0.7, 1.5, -1.5, 2.5, 127.9, 128.5,
                                     -129.5, 255.9, 300.0, 65535.5, 70000.0,
                                     2147483520.0, -2147483648.0, 5e9, -5e9,
                                     448.0, 464.0, 480.0, 57344.0, 61440.0});
      X.Bytes.insert(X.Bytes.end(), More.Bytes.begin(), More.Bytes.end());
    }
    for (DataType To : All) {
      std::vector<uint8_t> Hlo =
          runHlo(unaryModule("convert", From, hloType(To), X.size()),
                 {toLiteral(X, {int64_t(X.size())})});
      std::vector<uint8_t> Bir(X.size() * getDataTypeSize(To));
      tensorConvert(From, X.Bytes.data(), To, Bir.data(), X.size());
      expectSame("convert " + hloType(From) + " -> " + hloType(To), To, Hlo, Bir,
                 [&X](uint64_t E) { return describe(X.Type, X.at(E)); });
    }
  }
}

/// reduce(a: T[Rows, G], init) over dimension 1 with to_apply Op.
std::string reduceModule(const std::string &Op, DataType T, uint64_t Rows,
                         uint64_t G) {
  std::string S = hloType(T);
  return "HloModule m\n\nf {\n  x = " + S + "[] parameter(0)\n  y = " + S +
         "[] parameter(1)\n  ROOT r = " + S + "[] " + Op +
         "(x, y)\n}\n\nENTRY e {\n  a = " + S + "[" + std::to_string(Rows) +
         "," + std::to_string(G) + "] parameter(0)\n  i = " + S +
         "[] parameter(1)\n  ROOT r = " + S + "[" + std::to_string(Rows) +
         "] reduce(a, i), dimensions={1}, to_apply=f\n}\n";
}

TEST(BirHloNumerics, TensorReduceFoldsInTheInterpretersOrder) {
  struct Case {
    const char *Hlo;
    ArithOp Op;
    double Init;
  };
  const Case FloatCases[] = {{"add", ArithOp::Add, 0.0},
                             {"add", ArithOp::Add, -0.0},
                             {"multiply", ArithOp::Multiply, 1.0},
                             {"maximum", ArithOp::Max, -HUGE_VAL},
                             {"minimum", ArithOp::Min, HUGE_VAL},
                             {"maximum", ArithOp::Max, -0.0}};
  for (DataType T : FloatTypes)
    for (const Case &C : FloatCases) {
      // Rows of 16 elements: the edge values in a rotating order, so every
      // row sums different magnitudes and meets NaN and inf in some rows.
      Array E = edges(T);
      uint64_t G = 16;
      unsigned S = getDataTypeSize(T);
      if (T == DataType::FP8E4M3) {
        // Each step rounds with BIR's convert, which saturates fp8e4m3
        // where XLA's gives NaN (docs/bir.md; FP8E4M3OverflowIsDocumented):
        // values that cannot overflow here, NaN included.
        Array Small{T, {}};
        for (uint64_t I = 0; I < E.size(); ++I) {
          double V = loadValue(T, E.at(I));
          if (std::isnan(V) || std::fabs(V) <= 2.0)
            Small.Bytes.push_back(*E.at(I));
        }
        E = Small;
      }
      uint64_t Rows = E.size();
      Array X{T, {}};
      for (uint64_t R = 0; R < Rows; ++R)
        for (uint64_t I = 0; I < G; ++I) {
          const uint8_t *P = E.at((R * 5 + I * (R % 7 + 1)) % E.size());
          X.Bytes.insert(X.Bytes.end(), P, P + S);
        }
      Array Init = fromValues(T, {C.Init});
      std::vector<uint8_t> Hlo =
          runHlo(reduceModule(C.Hlo, T, Rows, G),
                 {toLiteral(X, {int64_t(Rows), int64_t(G)}), toLiteral(Init, {})});
      // In one TensorReduce, and in chunks of 5, 5 and 6 continued by
      // accumulate (a reduction spread over tiles).
      std::vector<uint8_t> Whole(Rows * S), Chunked(Rows * S);
      tensorReduce(C.Op, T, X.Bytes.data(), T, Whole.data(), Rows, G, false,
                   C.Init);
      std::string What = std::string("reduce ") + C.Hlo + " " + hloType(T) +
                         " init " + std::to_string(C.Init);
      auto RowText = [&](uint64_t J) { return "row " + std::to_string(J); };
      expectSame(What, T, Hlo, Whole, RowText);
      for (uint64_t J = 0; J < Rows; ++J) {
        const uint8_t *Row = X.at(J * G);
        uint8_t *O = Chunked.data() + J * S;
        tensorReduce(C.Op, T, Row, T, O, 1, 5, false, C.Init);
        tensorReduce(C.Op, T, Row + 5 * S, T, O, 1, 5, true, 0);
        tensorReduce(C.Op, T, Row + 10 * S, T, O, 1, 6, true, 0);
      }
      expectSame(What + " (chunked)", T, Hlo, Chunked, RowText);
    }
  const Case IntCases[] = {{"add", ArithOp::Add, 0},       {"add", ArithOp::Add, 5},
                           {"multiply", ArithOp::Multiply, 1},
                           {"maximum", ArithOp::Max, -128}, {"minimum", ArithOp::Min, 127},
                           {"and", ArithOp::And, 127},     {"or", ArithOp::Or, 0}};
  for (DataType T : IntTypes)
    for (const Case &C : IntCases) {
      Array E = edges(T);
      uint64_t G = 9, Rows = E.size();
      unsigned S = getDataTypeSize(T);
      Array X{T, {}};
      for (uint64_t R = 0; R < Rows; ++R)
        for (uint64_t I = 0; I < G; ++I) {
          const uint8_t *P = E.at((R + I * 3) % E.size());
          X.Bytes.insert(X.Bytes.end(), P, P + S);
        }
      double Init = C.Init;
      if (!(T == DataType::INT8 || T == DataType::INT16 || T == DataType::INT32) &&
          Init < 0)
        Init = 0;
      Array InitA = fromValues(T, {Init});
      std::vector<uint8_t> Hlo =
          runHlo(reduceModule(C.Hlo, T, Rows, G),
                 {toLiteral(X, {int64_t(Rows), int64_t(G)}), toLiteral(InitA, {})});
      std::vector<uint8_t> Bir(Rows * S);
      tensorReduce(C.Op, T, X.Bytes.data(), T, Bir.data(), Rows, G, false, Init);
      expectSame(std::string("reduce ") + C.Hlo + " " + hloType(T), T, Hlo, Bir,
                 [](uint64_t J) { return "row " + std::to_string(J); });
    }
}

TEST(BirHloNumerics, FP8E4M3OverflowIsDocumented) {
  // 448 + 448 in f8e4m3fn: the interpreter rounds to NaN (no infinity),
  // BIR's per-step convert saturates to 448 (docs/bir.md, "HLO's
  // elementwise ops and reductions in BIR").
  Array X = fromValues(DataType::FP8E4M3, {448.0, 448.0});
  Array Init = fromValues(DataType::FP8E4M3, {0.0});
  std::vector<uint8_t> Hlo =
      runHlo(reduceModule("add", DataType::FP8E4M3, 1, 2),
             {toLiteral(X, {1, 2}), toLiteral(Init, {})});
  ASSERT_EQ(Hlo.size(), 1u);
  EXPECT_TRUE(std::isnan(loadValue(DataType::FP8E4M3, Hlo.data())));
  uint8_t Bir = 0;
  tensorReduce(ArithOp::Add, DataType::FP8E4M3, X.Bytes.data(),
               DataType::FP8E4M3, &Bir, 1, 2, false, 0.0);
  EXPECT_EQ(loadValue(DataType::FP8E4M3, &Bir), 448.0);
  // The same sum into fp32, then TensorConvert: XLA's NaN.
  float Wide = 0;
  tensorReduce(ArithOp::Add, DataType::FP8E4M3, X.Bytes.data(), DataType::FP32,
               reinterpret_cast<uint8_t *>(&Wide), 1, 2, false, 0.0);
  uint8_t Narrow = 0;
  tensorConvert(DataType::FP32, reinterpret_cast<const uint8_t *>(&Wide),
                DataType::FP8E4M3, &Narrow, 1);
  EXPECT_EQ(Narrow, Hlo[0]);
}

TEST(BirHloNumerics, IotaAlongEitherDimension) {
  // iota of T[40, 9] along each dimension: the rows as partitions, the
  // columns as the pattern [(1, 9)].
  for (DataType T : {DataType::FP32, DataType::BF16, DataType::FP16,
                     DataType::INT32, DataType::UINT8, DataType::INT16}) {
    for (int Dim : {0, 1}) {
      std::string Text = "HloModule m\n\nENTRY e {\n  ROOT r = " + hloType(T) +
                         "[40,9] iota(), iota_dimension=" + std::to_string(Dim) +
                         "\n}\n";
      std::vector<uint8_t> Hlo = runHlo(Text, {});
      std::vector<uint8_t> Bir(40 * 9 * getDataTypeSize(T));
      iotaElements(0, Dim == 0 ? 1 : 0, {Dim == 1 ? 1 : 0}, {{1, 9}}, 40, T,
                   Bir.data());
      expectSame("iota " + hloType(T) + " dim " + std::to_string(Dim), T, Hlo,
                 Bir, [](uint64_t E) { return std::to_string(E); });
    }
  }
  // bf16 rounds large indices once: iota of bf16[600] along its only
  // dimension, as 600 partitions would not fit: 5 partitions of 120.
  std::vector<uint8_t> Hlo =
      runHlo("HloModule m\n\nENTRY e {\n  ROOT r = bf16[600] iota(), "
             "iota_dimension=0\n}\n",
             {});
  std::vector<uint8_t> Bir(600 * 2);
  iotaElements(0, 120, {1}, {{1, 120}}, 5, DataType::BF16, Bir.data());
  expectSame("iota bf16[600]", DataType::BF16, Hlo, Bir,
             [](uint64_t E) { return std::to_string(E); });
}

TEST(BirHloNumerics, MatmulChunksOfKGiveTheDotsBits) {
  // dot(lhs T[K, M], rhs T[K, N]) contracting dimension 0 of both; BIR:
  // stationary = lhs, moving = rhs, K in chunks of at most 128 partitions,
  // the first written and the others accumulated, into fp32 PSUM.
  const uint64_t K = 300, M = 5, N = 7;
  for (DataType T : FloatTypes) {
    // Values of mixed magnitudes and signs, so that the sum's order shows.
    std::vector<double> L, R;
    uint64_t Seed = 12345;
    auto Next = [&] {
      Seed = Seed * 6364136223846793005ULL + 1442695040888963407ULL;
      double U = double(Seed >> 11) / double(1ULL << 53);
      int E = int((Seed >> 3) % 12) - 6;
      return (U - 0.5) * std::ldexp(1.0, E);
    };
    for (uint64_t I = 0; I < K * M; ++I)
      L.push_back(Next());
    for (uint64_t I = 0; I < K * N; ++I)
      R.push_back(Next());
    Array A = fromValues(T, L), B = fromValues(T, R);
    for (const char *OutType : {"f32", "bf16"}) {
      std::string Text = "HloModule m\n\nENTRY e {\n  a = " + hloType(T) + "[" +
                         std::to_string(K) + "," + std::to_string(M) +
                         "] parameter(0)\n  b = " + hloType(T) + "[" +
                         std::to_string(K) + "," + std::to_string(N) +
                         "] parameter(1)\n  ROOT r = " + OutType + "[" +
                         std::to_string(M) + "," + std::to_string(N) +
                         "] dot(a, b), lhs_contracting_dims={0}, "
                         "rhs_contracting_dims={0}\n}\n";
      std::vector<uint8_t> Hlo =
          runHlo(Text, {toLiteral(A, {int64_t(K), int64_t(M)}),
                        toLiteral(B, {int64_t(K), int64_t(N)})});
      std::vector<float> Psum(M * N);
      unsigned S = getDataTypeSize(T);
      for (uint64_t K0 = 0; K0 < K; K0 += 128) {
        uint64_t Kc = std::min<uint64_t>(128, K - K0);
        matmul(T, A.Bytes.data() + K0 * M * S, T, B.Bytes.data() + K0 * N * S,
               Kc, M, N, /*Accumulate=*/K0 > 0, Psum.data());
      }
      DataType OT = std::string(OutType) == "f32" ? DataType::FP32 : DataType::BF16;
      std::vector<uint8_t> Bir(M * N * getDataTypeSize(OT));
      convertElements(DataType::FP32, reinterpret_cast<const uint8_t *>(Psum.data()),
                      OT, Bir.data(), M * N);
      expectSame("dot " + hloType(T) + " -> " + OutType, OT, Hlo, Bir,
                 [](uint64_t E) { return std::to_string(E); });
      // The old semantics, each chunk summed from 0 and then added, differ
      // somewhere: the test can tell the two apart.
      if (T == DataType::FP32 && OT == DataType::FP32) {
        std::vector<float> Separate(M * N, 0.0f), Chunk(M * N);
        for (uint64_t K0 = 0; K0 < K; K0 += 128) {
          uint64_t Kc = std::min<uint64_t>(128, K - K0);
          matmul(T, A.Bytes.data() + K0 * M * S, T, B.Bytes.data() + K0 * N * S,
                 Kc, M, N, false, Chunk.data());
          for (uint64_t I = 0; I < M * N; ++I)
            Separate[I] = K0 ? Separate[I] + Chunk[I] : Chunk[I];
        }
        EXPECT_NE(std::memcmp(Separate.data(), Hlo.data(), Hlo.size()), 0);
      }
    }
  }
}

} // namespace
