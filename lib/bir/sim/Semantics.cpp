//===- Semantics.cpp - Element semantics of the BIR instructions ----------===//

#include "Semantics.h"

#include "loom/support/FloatFormats.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

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
  default: return;
  }
}

float applyArith(ArithOp Op, float A, float B) {
  switch (Op) {
  case ArithOp::Add: return A + B;
  case ArithOp::Subtract: return A - B;
  case ArithOp::Multiply: return A * B;
  case ArithOp::Max: return std::fmax(A, B);
  case ArithOp::Min: return std::fmin(A, B);
  }
  return 0;
}

} // namespace

double loadValue(DataType T, const uint8_t *P) {
  switch (T) {
  case DataType::FP32: return readAs<float>(P);
  case DataType::BF16: return bf16ToF32(readAs<uint16_t>(P));
  case DataType::FP16: return f16ToF32(readAs<uint16_t>(P));
  case DataType::FP8E4M3: return smallFloatToDouble(SmallFloat::F8E4M3, *P);
  case DataType::FP8E5M2: return smallFloatToDouble(SmallFloat::F8E5M2, *P);
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
  if (isIntType(T))
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

void activation(ActivationFunc F, double Scale, DataType From,
                const uint8_t *In, DataType To, uint8_t *Out, uint64_t N) {
  unsigned SI = getDataTypeSize(From), SO = getDataTypeSize(To);
  float S = static_cast<float>(Scale);
  for (uint64_t E = 0; E < N; ++E) {
    float X = loadF32(From, In + E * SI) * S;
    float Y = X;
    switch (F) {
    case ActivationFunc::Identity: break;
    case ActivationFunc::Relu: Y = X > 0.0f ? X : (std::isnan(X) ? X : 0.0f); break;
    case ActivationFunc::Exp: Y = std::exp(X); break;
    case ActivationFunc::Tanh: Y = std::tanh(X); break;
    }
    storeF32(To, Y, Out + E * SO);
  }
}

void tensorTensor(ArithOp Op, DataType T0, const uint8_t *In0, DataType T1,
                  const uint8_t *In1, DataType To, uint8_t *Out, uint64_t N) {
  unsigned S0 = getDataTypeSize(T0), S1 = getDataTypeSize(T1),
           SO = getDataTypeSize(To);
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

void matmul(DataType TS, const uint8_t *S, DataType TX, const uint8_t *X,
            uint64_t K, uint64_t M, uint64_t N, bool Accumulate, float *Out) {
  unsigned SS = getDataTypeSize(TS), SX = getDataTypeSize(TX);
  std::vector<float> Sum(M * N, 0.0f);
  std::vector<float> Row(N);
  for (uint64_t KI = 0; KI < K; ++KI) {
    for (uint64_t NI = 0; NI < N; ++NI)
      Row[NI] = loadF32(TX, X + (KI * N + NI) * SX);
    for (uint64_t MI = 0; MI < M; ++MI) {
      float SV = loadF32(TS, S + (KI * M + MI) * SS);
      float *O = Sum.data() + MI * N;
      for (uint64_t NI = 0; NI < N; ++NI)
        O[NI] = O[NI] + SV * Row[NI];
    }
  }
  for (uint64_t I = 0; I < M * N; ++I)
    Out[I] = Accumulate ? Out[I] + Sum[I] : Sum[I];
}

void reduceInto(ReduceOp Op, DataType T, const uint8_t *In, uint8_t *Acc,
                uint64_t N) {
  unsigned S = getDataTypeSize(T);
  if (isIntType(T)) {
    for (uint64_t E = 0; E < N; ++E) {
      int64_t A = loadInt(T, Acc + E * S), B = loadInt(T, In + E * S);
      int64_t R = Op == ReduceOp::Add ? A + B
                  : Op == ReduceOp::Max ? std::max(A, B)
                                        : std::min(A, B);
      storeIntSaturated(T, R, Acc + E * S);
    }
    return;
  }
  ArithOp A = Op == ReduceOp::Add   ? ArithOp::Add
              : Op == ReduceOp::Max ? ArithOp::Max
                                    : ArithOp::Min;
  for (uint64_t E = 0; E < N; ++E)
    storeF32(T, applyArith(A, loadF32(T, Acc + E * S), loadF32(T, In + E * S)),
             Acc + E * S);
}

} // namespace loom::bir::sim
