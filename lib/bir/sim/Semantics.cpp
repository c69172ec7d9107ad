//===- Semantics.cpp - Element semantics of the BIR instructions ----------===//

#include "Semantics.h"

#include "loom/support/FloatFormats.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace loom::bir::sim {

namespace {

template <typename T> T readAs(const uint8_t *P) {
  T V;
  std::memcpy(&V, P, sizeof(T));
  return V;
}
template <typename T> void writeAs(uint8_t *P, T V) {
  std::memcpy(P, &V, sizeof(T));
}

template <typename T> T saturateInt(double V) {
  if (std::isnan(V))
    return 0;
  double R = std::nearbyint(V); // the default mode: nearest, ties to even
  if (R <= double(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (R >= double(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(R);
}

bool isIntType(DataType T) { return !isFloatType(T); }

int64_t loadInt(DataType T, const uint8_t *P) {
  switch (T) {
  case DataType::INT8: return readAs<int8_t>(P);
  case DataType::INT16: return readAs<int16_t>(P);
  case DataType::INT32: return readAs<int32_t>(P);
  case DataType::UINT8: return readAs<uint8_t>(P);
  case DataType::UINT16: return readAs<uint16_t>(P);
  case DataType::UINT32: return readAs<uint32_t>(P);
  case DataType::INT64: return readAs<int64_t>(P);
  // The bits of a uint64 (two's complement); loadValue reads its value.
  case DataType::UINT64: return static_cast<int64_t>(readAs<uint64_t>(P));
  default: return 0;
  }
}

void storeIntSaturated(DataType T, int64_t V, uint8_t *P) {
  auto Clamp = [&](auto Tag) {
    using I = decltype(Tag);
    int64_t Lo = std::numeric_limits<I>::min(), Hi = std::numeric_limits<I>::max();
    writeAs<I>(P, static_cast<I>(V < Lo ? Lo : V > Hi ? Hi : V));
  };
  switch (T) {
  case DataType::INT8: return Clamp(int8_t());
  case DataType::INT16: return Clamp(int16_t());
  case DataType::INT32: return Clamp(int32_t());
  case DataType::UINT8: return Clamp(uint8_t());
  case DataType::UINT16: return Clamp(uint16_t());
  case DataType::UINT32: return Clamp(uint32_t());
  case DataType::INT64: return writeAs<int64_t>(P, V);
  case DataType::UINT64: return writeAs<uint64_t>(P, V < 0 ? 0 : uint64_t(V));
  default: return;
  }
}

/// Calls F(V{}) with V the C++ type of integer type T.
template <typename F> void dispatchInt(DataType T, F &&Fn) {
  switch (T) {
  case DataType::INT8: return Fn(int8_t());
  case DataType::INT16: return Fn(int16_t());
  case DataType::INT32: return Fn(int32_t());
  case DataType::UINT8: return Fn(uint8_t());
  case DataType::UINT16: return Fn(uint16_t());
  case DataType::UINT32: return Fn(uint32_t());
  case DataType::INT64: return Fn(int64_t());
  case DataType::UINT64: return Fn(uint64_t());
  default: return;
  }
}

/// At least 32 bits and unsigned: narrow products and sums wrap instead of
/// overflowing a promoted int.
template <typename V>
using WideUnsigned =
    std::conditional_t<(sizeof(V) < 4), uint32_t, std::make_unsigned_t<V>>;

template <typename V> V wrapNeg(V A) {
  return static_cast<V>(WideUnsigned<V>(0) - WideUnsigned<V>(A));
}

/// Integer power by squaring, wrapping.
template <typename V> V intPow(V Base, V Exponent) {
  using U = WideUnsigned<V>;
  U R = 1, B = static_cast<U>(Base);
  auto E = static_cast<std::make_unsigned_t<V>>(Exponent);
  while (E) {
    if (E & 1)
      R = static_cast<U>(R * B);
    B = static_cast<U>(B * B);
    E >>= 1;
  }
  return static_cast<V>(R);
}

/// Op on two integers of type V with XLA's semantics (docs/bir.md,
/// "TensorTensor"); comparisons give 1 or 0.
template <typename V> V applyIntArith(ArithOp Op, V A, V B) {
  using U = WideUnsigned<V>;
  switch (Op) {
  case ArithOp::Add: return static_cast<V>(U(A) + U(B));
  case ArithOp::Subtract: return static_cast<V>(U(A) - U(B));
  case ArithOp::Multiply: return static_cast<V>(U(A) * U(B));
  case ArithOp::Max: return std::max(A, B);
  case ArithOp::Min: return std::min(A, B);
  case ArithOp::Divide:
    if (B == 0)
      return static_cast<V>(-1); // all ones
    if constexpr (std::is_signed_v<V>)
      if (B == -1)
        return wrapNeg(A); // INT_MIN / -1 wraps to INT_MIN
    return static_cast<V>(A / B);
  case ArithOp::Remainder:
    if (B == 0)
      return A;
    if constexpr (std::is_signed_v<V>)
      if (B == -1)
        return 0;
    return static_cast<V>(A % B);
  case ArithOp::Power:
    if (A == 1 || B == 0)
      return 1;
    if constexpr (std::is_signed_v<V>)
      if (B < 0)
        return 0;
    return intPow(A, B);
  case ArithOp::And: return static_cast<V>(A & B);
  case ArithOp::Or: return static_cast<V>(A | B);
  case ArithOp::Xor: return static_cast<V>(A ^ B);
  case ArithOp::Equal: return A == B;
  case ArithOp::NotEqual: return A != B;
  case ArithOp::Less: return A < B;
  case ArithOp::LessEqual: return A <= B;
  case ArithOp::Greater: return A > B;
  case ArithOp::GreaterEqual: return A >= B;
  }
  return 0;
}

} // namespace

float applyArith(ArithOp Op, float A, float B) {
  switch (Op) {
  case ArithOp::Add: return A + B;
  case ArithOp::Subtract: return A - B;
  case ArithOp::Multiply: return A * B;
  case ArithOp::Divide: return A / B;
  // NaN propagates, the first operand's first; otherwise std::max / std::min,
  // which return A when the two compare equal (so max(-0, +0) is -0).
  case ArithOp::Max:
    if (std::isnan(A))
      return A;
    if (std::isnan(B))
      return B;
    return std::max(A, B);
  case ArithOp::Min:
    if (std::isnan(A))
      return A;
    if (std::isnan(B))
      return B;
    return std::min(A, B);
  case ArithOp::Power:
    if (A == 1.0f || B == 0.0f)
      return 1.0f;
    return std::pow(A, B);
  case ArithOp::Remainder: return std::fmod(A, B);
  case ArithOp::Equal: return A == B ? 1.0f : 0.0f;
  case ArithOp::NotEqual: return A != B ? 1.0f : 0.0f;
  case ArithOp::Less: return A < B ? 1.0f : 0.0f;
  case ArithOp::LessEqual: return A <= B ? 1.0f : 0.0f;
  case ArithOp::Greater: return A > B ? 1.0f : 0.0f;
  case ArithOp::GreaterEqual: return A >= B ? 1.0f : 0.0f;
  case ArithOp::And:
  case ArithOp::Or:
  case ArithOp::Xor:
    break; // integers only (the verifier refuses them on floats)
  }
  return 0;
}

namespace {

} // namespace

double loadValue(DataType T, const uint8_t *P) {
  switch (T) {
  case DataType::FP32: return readAs<float>(P);
  case DataType::BF16: return bf16ToF32(readAs<uint16_t>(P));
  case DataType::FP16: return f16ToF32(readAs<uint16_t>(P));
  case DataType::FP8E4M3: return smallFloatToDouble(SmallFloat::F8E4M3, *P);
  case DataType::FP8E5M2: return smallFloatToDouble(SmallFloat::F8E5M2, *P);
  case DataType::UINT64: return double(readAs<uint64_t>(P));
  default: return double(loadInt(T, P));
  }
}

float loadF32(DataType T, const uint8_t *P) {
  switch (T) {
  case DataType::FP32: return readAs<float>(P);
  case DataType::BF16: return bf16ToF32(readAs<uint16_t>(P));
  case DataType::FP16: return f16ToF32(readAs<uint16_t>(P));
  default: return static_cast<float>(loadValue(T, P));
  }
}

void storeValue(DataType T, double V, uint8_t *P) {
  switch (T) {
  case DataType::FP32: return writeAs<float>(P, static_cast<float>(V));
  case DataType::BF16:
    return writeAs<uint16_t>(P, doubleToSmallFloat(SmallFloat::BF16, V));
  case DataType::FP16:
    return writeAs<uint16_t>(P, doubleToSmallFloat(SmallFloat::F16, V));
  case DataType::FP8E4M3:
    *P = doubleToSmallFloat(SmallFloat::F8E4M3, V, /*SaturateE4M3=*/true);
    return;
  case DataType::FP8E5M2:
    *P = doubleToSmallFloat(SmallFloat::F8E5M2, V);
    return;
  case DataType::INT8: return writeAs(P, saturateInt<int8_t>(V));
  case DataType::INT16: return writeAs(P, saturateInt<int16_t>(V));
  case DataType::INT32: return writeAs(P, saturateInt<int32_t>(V));
  case DataType::UINT8: return writeAs(P, saturateInt<uint8_t>(V));
  case DataType::UINT16: return writeAs(P, saturateInt<uint16_t>(V));
  case DataType::UINT32: return writeAs(P, saturateInt<uint32_t>(V));
  case DataType::INT64: return writeAs(P, saturateInt<int64_t>(V));
  case DataType::UINT64: return writeAs(P, saturateInt<uint64_t>(V));
  }
}

void storeF32(DataType T, float V, uint8_t *P) {
  switch (T) {
  case DataType::FP32: return writeAs<float>(P, V);
  case DataType::BF16: return writeAs<uint16_t>(P, f32ToBF16(V));
  case DataType::FP16: return writeAs<uint16_t>(P, f32ToF16(V));
  default: return storeValue(T, double(V), P);
  }
}

std::string formatElement(DataType T, const uint8_t *P) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  if (T == DataType::UINT64)
    OS << readAs<uint64_t>(P);
  else if (isIntType(T))
    OS << loadInt(T, P);
  else
    OS << llvm::format("%.9g", loadValue(T, P));
  return OS.str();
}

std::optional<uint64_t> gather(const Storage &S, const RunShape &Shape,
                               std::vector<uint8_t> &Out) {
  uint64_t Total = Shape.RunBytes * Shape.runsPerPartition() *
                   (Shape.WholePartitions ? 1 : Shape.NumPartitions);
  if (Shape.WholePartitions)
    Total = uint64_t(Shape.NumPartitions) * S.BytesPerPartition;
  Out.resize(Total);
  uint8_t *Dst = Out.data();
  const uint8_t *Data = S.Data.data();
  const uint8_t *Init = S.Init.data();
  std::optional<uint64_t> Bad;
  bool Check = !S.AllInit;
  // No flags and not all initialized: nothing is.
  bool NoFlags = S.Init.empty();
  uint64_t Len = Shape.RunBytes;
  if (Len <= 4 && !Shape.WholePartitions) {
    // Element-strided: copy element by element without the memcpy call.
    Shape.forEachRun(S.BytesPerPartition, [&](uint64_t Off, uint64_t N) {
      if (Check && !Bad)
        for (uint64_t I = 0; I < N; ++I)
          if (NoFlags || !Init[Off + I]) {
            Bad = Off + I;
            break;
          }
      switch (N) {
      case 1: *Dst = Data[Off]; break;
      case 2: std::memcpy(Dst, Data + Off, 2); break;
      case 4: std::memcpy(Dst, Data + Off, 4); break;
      default: std::memcpy(Dst, Data + Off, N);
      }
      Dst += N;
    });
    return Bad;
  }
  Shape.forEachRun(S.BytesPerPartition, [&](uint64_t Off, uint64_t N) {
    if (Check && !Bad) {
      if (NoFlags)
        Bad = Off;
      else if (const void *Z = std::memchr(Init + Off, 0, N))
        Bad = static_cast<const uint8_t *>(Z) - Init;
    }
    std::memcpy(Dst, Data + Off, N);
    Dst += N;
  });
  return Bad;
}

/// A write that covers every byte of S leaves it all initialized: it needs
/// no flags from then on, so later accesses skip them.
static bool writesWhole(const Storage &S, const RunShape &Shape) {
  return Shape.WholePartitions && Shape.StartPartition == 0 &&
         Shape.NumPartitions == S.Partitions;
}

/// The flags a write must set, or null when it needs none.
static uint8_t *flagsToMark(Storage &S, const RunShape &Shape) {
  if (S.AllInit)
    return nullptr;
  if (writesWhole(S, Shape)) {
    S.AllInit = true;
    return nullptr;
  }
  return S.initFlags();
}

void scatter(Storage &S, const RunShape &Shape, const uint8_t *Src) {
  uint8_t *Data = S.Data.data();
  uint8_t *Init = flagsToMark(S, Shape);
  Shape.forEachRun(S.BytesPerPartition, [&](uint64_t Off, uint64_t N) {
    std::memcpy(Data + Off, Src, N);
    if (Init)
      std::memset(Init + Off, 1, N);
    Src += N;
  });
}

std::optional<uint64_t>
copyRuns(const Storage &Src, const RunShape &SrcShape, Storage &Dst,
         const RunShape &DstShape,
         std::vector<std::pair<uint64_t, uint64_t>> &Runs) {
  Runs.clear();
  DstShape.forEachRun(Dst.BytesPerPartition, [&](uint64_t Off, uint64_t N) {
    Runs.push_back({Off, N});
  });
  // Src's flags are read before Dst's are marked: Src and Dst may be one
  // storage.
  const uint8_t *From = Src.Data.data(), *SrcInit = Src.Init.data();
  bool Check = !Src.AllInit, NoFlags = Src.Init.empty();
  std::optional<uint64_t> Bad;
  if (Check && NoFlags && !Runs.empty())
    Bad = std::optional<uint64_t>(SrcShape.Offset +
                                  uint64_t(SrcShape.StartPartition) *
                                      Src.BytesPerPartition);
  Check = Check && !NoFlags;
  uint8_t *To = Dst.Data.data();
  uint8_t *DstInit = flagsToMark(Dst, DstShape);
  SrcInit = Src.Init.data();
  bool Mark = DstInit != nullptr;
  size_t Idx = 0;
  uint64_t Used = 0;
  SrcShape.forEachRun(Src.BytesPerPartition, [&](uint64_t Off, uint64_t N) {
    if (Check && !Bad)
      if (const void *Z = std::memchr(SrcInit + Off, 0, N))
        Bad = static_cast<const uint8_t *>(Z) - SrcInit;
    while (N && Idx < Runs.size()) {
      auto [DOff, DLen] = Runs[Idx];
      uint64_t Take = std::min(N, DLen - Used);
      std::memcpy(To + DOff + Used, From + Off, Take);
      if (Mark)
        std::memset(DstInit + DOff + Used, 1, Take);
      Used += Take;
      Off += Take;
      N -= Take;
      if (Used == DLen) {
        ++Idx;
        Used = 0;
      }
    }
  });
  return Bad;
}

void convertElements(DataType From, const uint8_t *In, DataType To,
                     uint8_t *Out, uint64_t N) {
  unsigned SI = getDataTypeSize(From), SO = getDataTypeSize(To);
  if (From == To) {
    std::memcpy(Out, In, N * SI);
    return;
  }
  if (From == DataType::FP32) {
    for (uint64_t E = 0; E < N; ++E)
      storeF32(To, readAs<float>(In + E * SI), Out + E * SO);
    return;
  }
  for (uint64_t E = 0; E < N; ++E)
    storeValue(To, loadValue(From, In + E * SI), Out + E * SO);
}

float activationF32(ActivationFunc F, float X) {
  switch (F) {
  case ActivationFunc::Identity: return X;
  case ActivationFunc::Relu: return X > 0.0f ? X : (std::isnan(X) ? X : 0.0f);
  case ActivationFunc::Exp: return std::exp(X);
  case ActivationFunc::Tanh: return std::tanh(X);
  case ActivationFunc::Log: return std::log(X);
  case ActivationFunc::Sqrt: return std::sqrt(X);
  case ActivationFunc::Rsqrt: return 1.0f / std::sqrt(X);
  case ActivationFunc::Logistic: return 1.0f / (1.0f + std::exp(-X));
  case ActivationFunc::Sin: return std::sin(X);
  case ActivationFunc::Cos: return std::cos(X);
  case ActivationFunc::Abs: return std::fabs(X);
  case ActivationFunc::Negate: return -X;
  case ActivationFunc::BitwiseNot:
  case ActivationFunc::LogicalNot:
    break; // integers only (the verifier refuses them on floats)
  }
  return X;
}

void activation(ActivationFunc F, double Scale, DataType From,
                const uint8_t *In, DataType To, uint8_t *Out, uint64_t N) {
  unsigned SI = getDataTypeSize(From), SO = getDataTypeSize(To);
  if (From == To && isIntType(From) && hasIntegerForm(F)) {
    dispatchInt(From, [&](auto Tag) {
      using V = decltype(Tag);
      for (uint64_t E = 0; E < N; ++E) {
        V A = readAs<V>(In + E * SI), R = A;
        switch (F) {
        case ActivationFunc::Relu: R = A > 0 ? A : V(0); break;
        case ActivationFunc::Abs: R = A < 0 ? wrapNeg(A) : A; break;
        case ActivationFunc::Negate: R = wrapNeg(A); break;
        case ActivationFunc::BitwiseNot: R = static_cast<V>(~A); break;
        case ActivationFunc::LogicalNot: R = A == 0 ? 1 : 0; break;
        default: break;
        }
        writeAs<V>(Out + E * SO, R);
      }
    });
    return;
  }
  // A scale of 1 multiplies nothing, so a NaN keeps its payload.
  float S = static_cast<float>(Scale);
  bool Scaled = S != 1.0f;
  for (uint64_t E = 0; E < N; ++E) {
    float X = loadF32(From, In + E * SI);
    if (Scaled)
      X *= S;
    storeF32(To, activationF32(F, X), Out + E * SO);
  }
}

void tensorTensor(ArithOp Op, DataType T0, const uint8_t *In0, DataType T1,
                  const uint8_t *In1, DataType To, uint8_t *Out, uint64_t N) {
  unsigned S0 = getDataTypeSize(T0), S1 = getDataTypeSize(T1),
           SO = getDataTypeSize(To);
  if (isIntType(T0) && isIntType(T1)) {
    // One integer type (the verifier checks): exact, then converted.
    dispatchInt(T0, [&](auto Tag) {
      using V = decltype(Tag);
      for (uint64_t E = 0; E < N; ++E) {
        V R = applyIntArith<V>(Op, readAs<V>(In0 + E * S0),
                               readAs<V>(In1 + E * S1));
        if (To == T0)
          writeAs<V>(Out + E * SO, R);
        else
          storeValue(To, double(R), Out + E * SO);
      }
    });
    return;
  }
  if (T0 == DataType::FP32 && T1 == DataType::FP32 && To == DataType::FP32) {
    for (uint64_t E = 0; E < N; ++E)
      writeAs<float>(Out + 4 * E, applyArith(Op, readAs<float>(In0 + 4 * E),
                                             readAs<float>(In1 + 4 * E)));
    return;
  }
  for (uint64_t E = 0; E < N; ++E)
    storeF32(To,
             applyArith(Op, loadF32(T0, In0 + E * S0), loadF32(T1, In1 + E * S1)),
             Out + E * SO);
}

void selectElements(const uint8_t *Pred, const uint8_t *OnTrue,
                    const uint8_t *OnFalse, DataType T, uint8_t *Out,
                    uint64_t N) {
  unsigned S = getDataTypeSize(T);
  for (uint64_t E = 0; E < N; ++E)
    std::memcpy(Out + E * S, (Pred[E] ? OnTrue : OnFalse) + E * S, S);
}

namespace {

/// XLA's float -> integer conversion: truncate toward zero, saturate, NaN
/// becomes 0.
template <typename V> V truncateToInt(float F) {
  if (std::isnan(F))
    return 0;
  double D = std::trunc(double(F));
  if (D <= double(std::numeric_limits<V>::min()))
    return std::numeric_limits<V>::min();
  if (D >= double(std::numeric_limits<V>::max()))
    return std::numeric_limits<V>::max();
  return static_cast<V>(D);
}

/// Stores fp32 value F into float type T rounding once, with the native
/// overflow rule: fp8e4m3, which has no infinity, gets NaN.
void storeF32Native(DataType T, float F, uint8_t *P) {
  if (T == DataType::FP8E4M3) {
    *P = doubleToSmallFloat(SmallFloat::F8E4M3, F, /*SaturateE4M3=*/false);
    return;
  }
  storeF32(T, F, P);
}

} // namespace

void tensorConvert(DataType From, const uint8_t *In, DataType To, uint8_t *Out,
                   uint64_t N) {
  unsigned SI = getDataTypeSize(From), SO = getDataTypeSize(To);
  if (From == To) {
    std::memcpy(Out, In, N * SI);
    return;
  }
  if (isFloatType(From)) {
    if (isFloatType(To)) {
      for (uint64_t E = 0; E < N; ++E)
        storeF32Native(To, loadF32(From, In + E * SI), Out + E * SO);
      return;
    }
    dispatchInt(To, [&](auto Tag) {
      using V = decltype(Tag);
      for (uint64_t E = 0; E < N; ++E)
        writeAs<V>(Out + E * SO, truncateToInt<V>(loadF32(From, In + E * SI)));
    });
    return;
  }
  if (isFloatType(To)) {
    // Every 32-bit integer is exact in double: one rounding into To. A
    // 64-bit one is rounded once into fp32 by the native conversion; into
    // the narrower types it goes through double (docs/bir.md,
    // "TensorConvert").
    for (uint64_t E = 0; E < N; ++E) {
      if (To == DataType::FP32 && (From == DataType::INT64 || From == DataType::UINT64)) {
        float F = From == DataType::INT64
                      ? static_cast<float>(readAs<int64_t>(In + E * SI))
                      : static_cast<float>(readAs<uint64_t>(In + E * SI));
        writeAs<float>(Out + E * SO, F);
        continue;
      }
      double V = loadValue(From, In + E * SI);
      uint8_t *P = Out + E * SO;
      if (To == DataType::FP8E4M3)
        *P = doubleToSmallFloat(SmallFloat::F8E4M3, V, /*SaturateE4M3=*/false);
      else
        storeValue(To, V, P);
    }
    return;
  }
  // Integer to integer keeps the low bits (two's complement).
  dispatchInt(To, [&](auto Tag) {
    using V = decltype(Tag);
    for (uint64_t E = 0; E < N; ++E)
      writeAs<V>(Out + E * SO, static_cast<V>(loadInt(From, In + E * SI)));
  });
}

void tensorReduce(ArithOp Op, DataType TI, const uint8_t *In, DataType TO,
                  uint8_t *Out, uint64_t Groups, uint64_t G, bool Accumulate,
                  double Init) {
  unsigned SI = getDataTypeSize(TI), SO = getDataTypeSize(TO);
  if (isIntType(TO)) {
    // One integer type (the verifier checks); Init is one of its values.
    dispatchInt(TO, [&](auto Tag) {
      using V = decltype(Tag);
      for (uint64_t J = 0; J < Groups; ++J) {
        V Acc = Accumulate ? readAs<V>(Out + J * SO) : static_cast<V>(Init);
        const uint8_t *X = In + J * G * SI;
        for (uint64_t I = 0; I < G; ++I)
          Acc = applyIntArith<V>(Op, Acc, readAs<V>(X + I * SI));
        writeAs<V>(Out + J * SO, Acc);
      }
    });
    return;
  }
  uint8_t InitBits[4];
  storeValue(TO, Init, InitBits);
  for (uint64_t J = 0; J < Groups; ++J) {
    uint8_t *O = Out + J * SO;
    if (!Accumulate)
      std::memcpy(O, InitBits, SO);
    const uint8_t *X = In + J * G * SI;
    if (TO == DataType::FP32) {
      // The fp32 accumulator needs no rounding between steps.
      float Acc = readAs<float>(O);
      for (uint64_t I = 0; I < G; ++I)
        Acc = applyArith(Op, Acc, loadF32(TI, X + I * SI));
      writeAs<float>(O, Acc);
      continue;
    }
    // Each step is rounded into the output type, as the fold stores it.
    for (uint64_t I = 0; I < G; ++I)
      storeF32(TO, applyArith(Op, loadF32(TO, O), loadF32(TI, X + I * SI)), O);
  }
}

void iotaElements(int64_t Start, int64_t PartitionStep,
                  llvm::ArrayRef<int64_t> Multipliers,
                  llvm::ArrayRef<PatternDim> Pattern, unsigned Partitions,
                  DataType T, uint8_t *Out) {
  unsigned S = getDataTypeSize(T);
  size_t D = Pattern.size();
  llvm::SmallVector<uint64_t, 6> Idx(D, 0);
  for (unsigned P = 0; P < Partitions; ++P) {
    // The verifier keeps every value within int64 (and the type's range).
    int64_t V = Start + PartitionStep * int64_t(P);
    std::fill(Idx.begin(), Idx.end(), 0);
    while (true) {
      if (isIntType(T)) {
        storeIntSaturated(T, V, Out);
      } else {
        // Beyond 2^53 the double is rounded to odd, so that the rounding
        // into T is the only one (as XLA's convert of an s64 iota).
        double DV;
        uint64_t M = V < 0 ? uint64_t(0) - uint64_t(V) : uint64_t(V);
        if (M < (uint64_t(1) << 53)) {
          DV = double(V);
        } else {
          int Shift = 64 - __builtin_clzll(M) - 53;
          uint64_t High = M >> Shift;
          if (M & ((uint64_t(1) << Shift) - 1))
            High |= 1;
          DV = std::ldexp(double(High), Shift);
          if (V < 0)
            DV = -DV;
        }
        storeValue(T, DV, Out);
      }
      Out += S;
      size_t K = D;
      while (K > 0) {
        --K;
        if (++Idx[K] < Pattern[K].Count) {
          V += Multipliers[K];
          break;
        }
        V -= Multipliers[K] * int64_t(Idx[K] - 1);
        Idx[K] = 0;
        if (K == 0)
          goto NextPartition;
      }
      if (D == 0)
        break;
    }
  NextPartition:;
  }
}

void computeElements(const Instruction &I, llvm::ArrayRef<const uint8_t *> In,
                     uint8_t *Out) {
  const AccessPattern &O = I.outputs()[0];
  uint64_t N = O.getNumElements();
  switch (I.getType()) {
  case InstructionType::Select:
    return selectElements(In[0], In[1], In[2], O.getType(), Out, N);
  case InstructionType::TensorConvert:
    return tensorConvert(I.inputs()[0].getType(), In[0], O.getType(), Out, N);
  case InstructionType::TensorReduce: {
    const auto &R = llvm::cast<InstTensorReduce>(I);
    const AccessPattern &Src = I.inputs()[0];
    uint64_t G = Src.getNumElementsPerPartition() / O.getNumElementsPerPartition();
    return tensorReduce(R.getOp(), Src.getType(), In[0], O.getType(), Out, N, G,
                        R.isAccumulate(), R.getInit());
  }
  case InstructionType::Iota: {
    const auto &Iota = llvm::cast<InstIota>(I);
    return iotaElements(Iota.getStart(), Iota.getPartitionStep(),
                        Iota.getMultipliers(), O.getPattern(),
                        O.getNumPartitions(), O.getType(), Out);
  }
  default:
    return;
  }
}

void memsetElements(double Value, DataType To, uint8_t *Out, uint64_t N) {
  unsigned SO = getDataTypeSize(To);
  uint8_t One[4];
  storeValue(To, Value, One);
  for (uint64_t E = 0; E < N; ++E)
    std::memcpy(Out + E * SO, One, SO);
}

void accumulate(DataType T, const uint8_t *In, uint8_t *Acc, uint64_t N) {
  unsigned S = getDataTypeSize(T);
  if (T == DataType::FP32) {
    for (uint64_t E = 0; E < N; ++E)
      writeAs<float>(Acc + 4 * E,
                     readAs<float>(Acc + 4 * E) + readAs<float>(In + 4 * E));
    return;
  }
  for (uint64_t E = 0; E < N; ++E)
    storeF32(T, loadF32(T, Acc + E * S) + loadF32(T, In + E * S), Acc + E * S);
}

#if defined(__GNUC__) && !defined(__clang__)
// Every product and sum is rounded: GCC would contract them into an FMA on a
// target that has one.
#define LOOM_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define LOOM_NO_FP_CONTRACT
#endif

LOOM_NO_FP_CONTRACT
void matmul(DataType TS, const uint8_t *S, DataType TX, const uint8_t *X,
            uint64_t K, uint64_t M, uint64_t N, bool Accumulate, float *Out) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  unsigned SS = getDataTypeSize(TS), SX = getDataTypeSize(TX);
  // The fold continues from the accumulator (or +0) in k order, so that a
  // contraction split into accumulating chunks rounds exactly as one fold.
  if (!Accumulate)
    std::fill(Out, Out + M * N, 0.0f);
  std::vector<float> Row(N);
  for (uint64_t KI = 0; KI < K; ++KI) {
    for (uint64_t NI = 0; NI < N; ++NI)
      Row[NI] = loadF32(TX, X + (KI * N + NI) * SX);
    for (uint64_t MI = 0; MI < M; ++MI) {
      float SV = loadF32(TS, S + (KI * M + MI) * SS);
      float *O = Out + MI * N;
      for (uint64_t NI = 0; NI < N; ++NI)
        O[NI] = O[NI] + Row[NI] * SV;
    }
  }
}

void reduceInto(ReduceOp Op, DataType T, const uint8_t *In, uint8_t *Acc,
                uint64_t N) {
  ArithOp A = Op == ReduceOp::Add   ? ArithOp::Add
              : Op == ReduceOp::Max ? ArithOp::Max
                                    : ArithOp::Min;
  // reduce(acc, in): TensorTensor's semantics, integers wrapping.
  tensorTensor(A, T, Acc, T, In, T, Acc, N);
}

} // namespace loom::bir::sim
