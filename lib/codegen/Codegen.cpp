//===- Codegen.cpp - HLO module to the BIR programs of a launch -----------===//
//
// Every HLO array value lives in a SharedDRAM location of the device (one
// row, its elements in row-major order). Each op reads its operands from
// DRAM and writes its result there:
//
//   elementwise:  DMA chunk -> SB tile; ACT/DVE/POOL op; DMA SB tile -> DRAM
//   data movement (transpose, broadcast, slice, concatenate, pad):
//                 DMA DRAM -> DRAM with access patterns
//   dot:          DMA to [B][K][M] and [B][K][N]; per 128x512 output tile,
//                 Matmul per 128-row K tile accumulating into PSUM, TensorCopy
//                 PSUM -> SB (the result type), DMA SB -> DRAM
//   collectives:  non-local CollectiveCompute DRAM -> DRAM over device ids
//
// docs/codegen.md gives the rules and the reasons.
//
//===----------------------------------------------------------------------===//

#include "loom/codegen/Codegen.h"

#include "Emitter.h"

#include "loom/codegen/DeviceGroups.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdlib>
#include <numeric>

namespace loom::codegen {

using namespace bir;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

bool isIdentityTarget(llvm::StringRef T) {
  return llvm::is_contained(getIdentityCustomCallTargets(), T);
}

/// A value: an array in a DRAM buffer, a tuple, or a token (no data).
struct Val {
  int Buf = -1;
  bool IsTuple = false;
  std::vector<Val> Elems;
  /// For a value whose elements are all one number known at compile time
  /// (constants, partition-id, scalar arithmetic on them): that number.
  std::optional<double> Const;
};

Val arrayVal(int Buf, std::optional<double> Const = std::nullopt) {
  Val V;
  V.Buf = Buf;
  V.Const = Const;
  return V;
}

/// Loops are unrolled (docs/codegen.md, "Loops") up to this trip count.
constexpr int64_t MaxUnrolledTrips = 64;

/// A SharedDRAM location present in every core's module.
struct Buffer {
  DataType T;
  uint64_t Elems;
  std::vector<MemoryLocation *> PerCore;
};

/// A strided walk over elements: (step, count) pairs, outermost first.
using Dims = std::vector<PatternDim>;

std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> Shape) {
  std::vector<int64_t> S(Shape.size(), 1);
  for (size_t I = Shape.size(); I-- > 1;)
    S[I - 1] = S[I] * Shape[I];
  return S;
}

/// Drops count-1 dimensions and merges dimensions that walk on
/// contiguously; the same elements in the same order.
Dims normalize(const Dims &In) {
  Dims Out;
  for (const PatternDim &D : In) {
    if (D.Count == 1)
      continue;
    if (!Out.empty() &&
        Out.back().Step == D.Step * static_cast<int64_t>(D.Count)) {
      Out.back() = {D.Step, Out.back().Count * D.Count};
      continue;
    }
    Out.push_back(D);
  }
  if (Out.empty())
    Out.push_back({1, 1});
  return Out;
}

uint64_t countOf(const Dims &D) {
  uint64_t N = 1;
  for (const PatternDim &P : D)
    N *= P.Count;
  return N;
}

bool isDefaultLayout(const Shape &S) {
  if (!S.has_layout())
    return true;
  const auto &M2M = S.layout()->minor_to_major;
  for (size_t I = 0; I < M2M.size(); ++I)
    if (M2M[I] != static_cast<int64_t>(M2M.size() - 1 - I))
      return false;
  return true;
}

class DeviceLowering {
public:
  DeviceLowering(const hlo::HloModule &HM, LaunchSize LS, int64_t Device,
                 const CodegenOptions &O)
      : HM(HM), LS(LS), Device(Device), Replica(Device / LS.NumPartitions),
        Partition(Device % LS.NumPartitions), L(O.LncSize) {
    for (unsigned C = 0; C < L; ++C)
      Cores.emplace_back(std::make_unique<Module>(
          HM.name(), C, 0, PassOptions{O.LncSize, O.Arch}));
  }

  llvm::Expected<LaunchDevice> run();

private:
  // ---- Errors --------------------------------------------------------------
  llvm::Error notLowered(const HloInstruction &I, const llvm::Twine &Why) {
    return makeError(I.parent()->name() + "/" + I.name() + ": " +
                     I.OpcodeText() + " is not lowered (" + Why + ")");
  }

  // ---- Buffers -------------------------------------------------------------
  llvm::Expected<DataType> typeOf(const HloInstruction &I, const Shape &S) {
    std::optional<DataType> T =
        getBirTypeOfHloType(hlo::PrimitiveTypeName(S.element_type()));
    if (!T)
      return notLowered(I, "element type " +
                               hlo::PrimitiveTypeName(S.element_type()) +
                               " has no BIR type");
    if (!S.is_static())
      return notLowered(I, "dynamic shape " + S.ToString(false));
    return *T;
  }
  int newBuffer(llvm::StringRef Name, DataType T, uint64_t Elems) {
    Buffer B{T, Elems, {}};
    std::string Unique = Cores[0].uniqueLocationName(Name);
    for (unsigned C = 0; C < L; ++C) {
      if (C > 0)
        Cores[C].uniqueLocationName(Unique);
      B.PerCore.push_back(Cores[C].addLocation(Unique, MemoryKind::SharedDRAM,
                                               T, 1,
                                               Elems * getDataTypeSize(T)));
    }
    Bufs.push_back(std::move(B));
    return static_cast<int>(Bufs.size() - 1);
  }
  /// A new buffer for the array result of I.
  llvm::Expected<int> resultBuffer(const HloInstruction &I, const Shape &S,
                                   llvm::StringRef Suffix = "") {
    llvm::Expected<DataType> T = typeOf(I, S);
    if (!T)
      return T.takeError();
    return newBuffer((I.name() + Suffix).str(), *T, S.element_count());
  }
  llvm::Expected<Val> newValue(const HloInstruction &I, const Shape &S,
                               std::string Suffix = "") {
    if (S.IsToken())
      return Val();
    if (S.IsTuple()) {
      Val V;
      V.IsTuple = true;
      for (int64_t K = 0; K < S.tuple_shapes_size(); ++K) {
        llvm::Expected<Val> E =
            newValue(I, S.tuple_shapes(K), Suffix + "." + std::to_string(K));
        if (!E)
          return E.takeError();
        V.Elems.push_back(std::move(*E));
      }
      return V;
    }
    llvm::Expected<int> B = resultBuffer(I, S, Suffix);
    if (!B)
      return B.takeError();
    Val V;
    V.Buf = *B;
    return V;
  }
  AccessPattern dram(int Buf, unsigned Core, uint64_t ElemOffset,
                     const Dims &D) {
    const Buffer &B = Bufs[Buf];
    return AccessPattern(B.PerCore[Core], 0, 1,
                         ElemOffset * getDataTypeSize(B.T), normalize(D), B.T);
  }

  // ---- Emission helpers ----------------------------------------------------
  std::string name(unsigned Core, const HloInstruction &I, llvm::StringRef S) {
    return Cores[Core].uniqueName((I.name() + "." + S).str());
  }
  /// At lnc > 1, a barrier over every core after work that other cores
  /// will read.
  void barrier(llvm::StringRef Why) {
    if (L < 2)
      return;
    std::vector<unsigned> All(L);
    std::iota(All.begin(), All.end(), 0);
    std::string Name = ("cb." + llvm::Twine(NextBarrier) + "." + Why).str();
    for (unsigned C = 0; C < L; ++C)
      Cores[C].emitFence(std::make_unique<InstCoreBarrier>(
          Cores[C].uniqueName(Name), Engine::POOL, NextBarrier, All));
    ++NextBarrier;
  }
  /// Copies elements from one walk to another, split between the cores
  /// along the outermost dimension of the destination walk.
  void move(const HloInstruction &I, int Src, uint64_t SrcOff, Dims SrcD,
            int Dst, uint64_t DstOff, Dims DstD);
  /// Streams elementwise work through SB: Make builds the engine
  /// instruction for one chunk.
  using MakeOp = std::function<std::unique_ptr<Instruction>(
      std::string Name, unsigned Chunk)>;
  void elementwise(const HloInstruction &I, llvm::ArrayRef<int> Ins, int Out,
                   const MakeOp &Make);
  /// Fills Buf with Value (Memset in SB, DMA to DRAM).
  void fill(const HloInstruction &I, int Buf, double Value);

  // ---- Ops -------------------------------------------------------------------
  llvm::Expected<Val> lowerComputation(const HloComputation &C,
                                       llvm::ArrayRef<Val> Args);
  llvm::Expected<Val> lower(const HloInstruction &I,
                            llvm::DenseMap<const HloInstruction *, Val> &Vals);
  llvm::Expected<Val> lowerElementwise(const HloInstruction &I,
                                       llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerConstant(const HloInstruction &I);
  llvm::Expected<Val> lowerDataMovement(const HloInstruction &I,
                                        llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerDot(const HloInstruction &I, llvm::ArrayRef<Val> Ops);
  void splitContraction(const HloInstruction &I, int LT, int RT, int Out,
                        DataType TO, uint64_t Bi, uint64_t M0, uint64_t N0,
                        uint64_t M, uint64_t N, uint64_t K, uint64_t Mt,
                        uint64_t Nt, unsigned Tile);
  llvm::Expected<Val> lowerCollective(const HloInstruction &I,
                                      const Shape &Result,
                                      llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerPermute(const HloInstruction &I, const Shape &Result,
                                   const Val &Op);
  llvm::Expected<Val> lowerStart(const HloInstruction &I,
                                 llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerReduce(const HloInstruction &I,
                                  llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerIota(const HloInstruction &I);
  llvm::Expected<Val> lowerDynamicSlice(const HloInstruction &I,
                                        llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerWhile(const HloInstruction &I,
                                 llvm::ArrayRef<Val> Ops);

  const hlo::HloModule &HM;
  LaunchSize LS;
  int64_t Device, Replica, Partition;
  unsigned L;
  std::vector<CoreEmitter> Cores;
  std::vector<Buffer> Bufs;
  unsigned NextBarrier = 0;
  unsigned Depth = 0;
};

void DeviceLowering::move(const HloInstruction &I, int Src, uint64_t SrcOff,
                          Dims SrcD, int Dst, uint64_t DstOff, Dims DstD) {
  assert(countOf(SrcD) == countOf(DstD) && "a move keeps the element count");
  if (countOf(SrcD) == 0)
    return;
  // Split along the outermost dimension when both walks have it: each core
  // (and each DMA queue) takes a range of its indices.
  uint64_t Outer = SrcD.empty() ? 1 : SrcD[0].Count;
  bool Splittable = !SrcD.empty() && !DstD.empty() &&
                    SrcD[0].Count == DstD[0].Count && Outer > 1;
  uint64_t Elems = countOf(SrcD);
  unsigned Pieces = 1;
  if (Splittable) {
    // About 64 Ki elements per DMA, at most 4 per core.
    uint64_t Want = std::max<uint64_t>(1, Elems / 65536);
    Pieces = static_cast<unsigned>(std::min<uint64_t>(
        {Outer, static_cast<uint64_t>(4 * L), std::max<uint64_t>(Want, L)}));
    if (Elems < 4096)
      Pieces = 1;
  }
  for (unsigned K = 0; K < Pieces; ++K) {
    uint64_t Lo = Outer * K / Pieces, Hi = Outer * (K + 1) / Pieces;
    if (Lo == Hi)
      continue;
    Dims S = SrcD, D = DstD;
    uint64_t SO = SrcOff, DO = DstOff;
    if (Pieces > 1) {
      SO += Lo * SrcD[0].Step;
      DO += Lo * DstD[0].Step;
      S[0].Count = D[0].Count = Hi - Lo;
    }
    unsigned Core = K % L;
    Cores[Core].emit(std::make_unique<InstDMACopy>(name(Core, I, "dma"),
                                                   Cores[Core].nextDma(), false),
                     {dram(Src, Core, SO, S)}, {dram(Dst, Core, DO, D)});
  }
}

/// The chunks of a stream of N elements through 128 x F tiles: full tiles,
/// then the rows that are left, then the last partial row.
struct Chunk {
  uint64_t First;
  unsigned Parts;
  uint64_t Free;
};
std::vector<Chunk> chunks(uint64_t N, uint64_t F) {
  std::vector<Chunk> Out;
  uint64_t E = 0;
  while (E < N) {
    uint64_t Rem = N - E;
    if (Rem >= 128 * F) {
      Out.push_back({E, 128, F});
    } else {
      // What is left, spread over the partitions: rows of ceil(Rem / 128),
      // then the last partial row.
      uint64_t Row = (Rem + 127) / 128;
      if (Rem / Row > 0)
        Out.push_back({E, static_cast<unsigned>(Rem / Row), Row});
      else
        Out.push_back({E, 1, Rem});
    }
    E += Out.back().Parts * Out.back().Free;
  }
  return Out;
}

void DeviceLowering::elementwise(const HloInstruction &I,
                                 llvm::ArrayRef<int> Ins, int Out,
                                 const MakeOp &Make) {
  unsigned MaxSize = getDataTypeSize(Bufs[Out].T);
  for (int B : Ins)
    MaxSize = std::max(MaxSize, getDataTypeSize(Bufs[B].T));
  uint64_t F = SlotBytes / MaxSize;
  std::vector<Chunk> Cs = chunks(Bufs[Out].Elems, F);
  for (unsigned K = 0; K < Cs.size(); ++K) {
    const Chunk &C = Cs[K];
    unsigned Core = K % L;
    CoreEmitter &E = Cores[Core];
    Dims DramD = C.Parts > 1 ? Dims{{static_cast<int64_t>(C.Free), C.Parts},
                                    {1, C.Free}}
                             : Dims{{1, C.Free}};
    std::vector<AccessPattern> Tiles;
    for (int B : Ins) {
      MemoryLocation *S = E.nextSlot(Bufs[B].T);
      AccessPattern Tile(S, 0, C.Parts, 0, {{1, C.Free}}, Bufs[B].T);
      E.emit(std::make_unique<InstDMACopy>(name(Core, I, "ld"), E.nextDma(),
                                           false),
             {dram(B, Core, C.First, DramD)}, {Tile});
      Tiles.push_back(Tile);
    }
    MemoryLocation *O = E.nextSlot(Bufs[Out].T);
    AccessPattern OutTile(O, 0, C.Parts, 0, {{1, C.Free}}, Bufs[Out].T);
    E.emit(Make(name(Core, I, "op"), K), Tiles, {OutTile});
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {OutTile}, {dram(Out, Core, C.First, DramD)});
  }
}

void DeviceLowering::fill(const HloInstruction &I, int Buf, double Value) {
  uint64_t F = SlotBytes / getDataTypeSize(Bufs[Buf].T);
  std::vector<Chunk> Cs = chunks(Bufs[Buf].Elems, F);
  for (unsigned K = 0; K < Cs.size(); ++K) {
    const Chunk &C = Cs[K];
    unsigned Core = K % L;
    CoreEmitter &E = Cores[Core];
    MemoryLocation *S = E.nextSlot(Bufs[Buf].T);
    AccessPattern Tile(S, 0, C.Parts, 0, {{1, C.Free}}, Bufs[Buf].T);
    E.emit(std::make_unique<InstMemset>(name(Core, I, "set"), Engine::POOL,
                                        Value),
           {}, {Tile});
    Dims DramD = C.Parts > 1 ? Dims{{static_cast<int64_t>(C.Free), C.Parts},
                                    {1, C.Free}}
                             : Dims{{1, C.Free}};
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {Tile}, {dram(Buf, Core, C.First, DramD)});
  }
}

// ---- Elementwise ---------------------------------------------------------------

bool isArithmeticFloat(DataType T) {
  // fp8 results round with BIR's saturation (fp8e4m3 to 448), HLO's give
  // NaN on overflow: fp8 arithmetic is not lowered.
  return T == DataType::FP32 || T == DataType::BF16 || T == DataType::FP16;
}

llvm::Expected<Val> DeviceLowering::lowerElementwise(const HloInstruction &I,
                                                     llvm::ArrayRef<Val> Ops) {
  llvm::Expected<DataType> T = typeOf(I, I.shape());
  if (!T)
    return T.takeError();
  std::vector<int> Ins;
  for (const Val &V : Ops)
    Ins.push_back(V.Buf);
  HloOpcode Op = I.opcode();
  PrimitiveType HTo = I.shape().element_type();
  // The type the op computes on: its first operand's (select: its second).
  const HloInstruction *Typed = I.operand(Op == HloOpcode::kSelect ? 1 : 0);
  PrimitiveType HIn = Typed->shape().element_type();
  bool FloatIn = hlo::IsFloatingPointType(HIn);
  MakeOp Make;
  auto tensorTensor = [&](ArithOp A) {
    Make = [A](std::string N, unsigned K) {
      return std::make_unique<InstTensorTensor>(
          std::move(N), K % 2 ? Engine::POOL : Engine::DVE, A);
    };
  };
  auto activation = [&](ActivationFunc F) {
    Make = [F](std::string N, unsigned) {
      return std::make_unique<InstActivation>(std::move(N), Engine::ACT, F, 1.0);
    };
  };
  // A float result rounds with BIR's rule, which saturates fp8e4m3 where
  // HLO gives NaN: fp8 arithmetic results are not lowered.
  auto floatResultOk = [&]() -> llvm::Error {
    if (hlo::IsFloatingPointType(HTo) && !isArithmeticFloat(*T))
      return notLowered(I, "an arithmetic result of type " +
                               hlo::PrimitiveTypeName(HTo) +
                               " rounds differently in BIR");
    return llvm::Error::success();
  };
  switch (Op) {
  case HloOpcode::kAdd:
  case HloOpcode::kSubtract:
  case HloOpcode::kMultiply:
  case HloOpcode::kDivide:
  case HloOpcode::kMaximum:
  case HloOpcode::kMinimum:
  case HloOpcode::kPower:
  case HloOpcode::kRemainder: {
    if (HIn == PrimitiveType::PRED)
      return notLowered(I, "arithmetic on pred");
    if (llvm::Error E = floatResultOk())
      return E;
    tensorTensor(Op == HloOpcode::kAdd        ? ArithOp::Add
                 : Op == HloOpcode::kSubtract ? ArithOp::Subtract
                 : Op == HloOpcode::kMultiply ? ArithOp::Multiply
                 : Op == HloOpcode::kDivide   ? ArithOp::Divide
                 : Op == HloOpcode::kMaximum  ? ArithOp::Max
                 : Op == HloOpcode::kMinimum  ? ArithOp::Min
                 : Op == HloOpcode::kPower    ? ArithOp::Power
                                              : ArithOp::Remainder);
    break;
  }
  case HloOpcode::kAnd:
  case HloOpcode::kOr:
  case HloOpcode::kXor:
    if (FloatIn)
      return notLowered(I, "bitwise op on floats");
    tensorTensor(Op == HloOpcode::kAnd  ? ArithOp::And
                 : Op == HloOpcode::kOr ? ArithOp::Or
                                        : ArithOp::Xor);
    break;
  case HloOpcode::kCompare: {
    llvm::Expected<hlo::ComparisonDirection> D = hlo::GetComparisonDirection(I);
    if (!D)
      return D.takeError();
    if (const hlo::HloText *Ty = I.FindAttribute("type"))
      if (Ty->ref() == "TOTALORDER")
        return notLowered(I, "a total-order comparison (BIR compares IEEE)");
    using CD = hlo::ComparisonDirection;
    tensorTensor(*D == CD::kEq   ? ArithOp::Equal
                 : *D == CD::kNe ? ArithOp::NotEqual
                 : *D == CD::kLt ? ArithOp::Less
                 : *D == CD::kLe ? ArithOp::LessEqual
                 : *D == CD::kGt ? ArithOp::Greater
                                 : ArithOp::GreaterEqual);
    break;
  }
  case HloOpcode::kSelect:
    if (!I.operand(0)->shape().IsArray() ||
        I.operand(0)->shape().rank() != I.shape().rank())
      return notLowered(I, "a scalar predicate");
    Make = [](std::string N, unsigned K) {
      return std::make_unique<InstSelect>(std::move(N),
                                          K % 2 ? Engine::POOL : Engine::DVE);
    };
    break;
  case HloOpcode::kExp:
  case HloOpcode::kTanh:
  case HloOpcode::kLog:
  case HloOpcode::kSqrt:
  case HloOpcode::kRsqrt:
  case HloOpcode::kLogistic:
  case HloOpcode::kSin:
  case HloOpcode::kCos:
    if (!FloatIn)
      return notLowered(I, "a transcendental function of integers");
    if (llvm::Error E = floatResultOk())
      return E;
    activation(Op == HloOpcode::kExp     ? ActivationFunc::Exp
               : Op == HloOpcode::kTanh  ? ActivationFunc::Tanh
               : Op == HloOpcode::kLog   ? ActivationFunc::Log
               : Op == HloOpcode::kSqrt  ? ActivationFunc::Sqrt
               : Op == HloOpcode::kRsqrt ? ActivationFunc::Rsqrt
               : Op == HloOpcode::kLogistic ? ActivationFunc::Logistic
               : Op == HloOpcode::kSin   ? ActivationFunc::Sin
                                         : ActivationFunc::Cos);
    break;
  case HloOpcode::kAbs:
  case HloOpcode::kNegate:
    if (HIn == PrimitiveType::PRED)
      return notLowered(I, "arithmetic on pred");
    if (llvm::Error E = floatResultOk())
      return E;
    activation(Op == HloOpcode::kAbs ? ActivationFunc::Abs
                                     : ActivationFunc::Negate);
    break;
  case HloOpcode::kNot:
    if (FloatIn)
      return notLowered(I, "not of floats");
    activation(HIn == PrimitiveType::PRED ? ActivationFunc::LogicalNot
                                          : ActivationFunc::BitwiseNot);
    break;
  case HloOpcode::kConvert: {
    // TensorConvert has XLA's rules (truncation to integers, wrap-around
    // between integers, fp8e4m3 overflow to NaN); pred is x != 0 in HLO.
    if (HTo == PrimitiveType::PRED && HIn != PrimitiveType::PRED)
      return notLowered(I, "a conversion to pred is x != 0, TensorConvert "
                           "truncates");
    Make = [](std::string N, unsigned K) {
      static const Engine Es[] = {Engine::ACT, Engine::DVE, Engine::POOL};
      return std::make_unique<InstTensorConvert>(std::move(N), Es[K % 3]);
    };
    break;
  }
  default:
    llvm_unreachable("not an elementwise op");
  }
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  elementwise(I, Ins, *Out, Make);
  barrier(I.name());
  Val V;
  V.Buf = *Out;
  return V;
}

// ---- Constants ----------------------------------------------------------------

/// The values of a literal's text, in row-major order, or none when a value
/// is not a plain number.
std::optional<std::vector<double>> parseLiteral(llvm::StringRef Text) {
  std::vector<double> Vals;
  size_t I = 0;
  while (I < Text.size()) {
    char C = Text[I];
    if (Text.substr(I).startswith("/*")) {
      size_t End = Text.find("*/", I + 2);
      if (End == llvm::StringRef::npos)
        return std::nullopt;
      I = End + 2;
      continue;
    }
    if (C == '{' || C == '}' || C == ',' || llvm::isSpace(C)) {
      ++I;
      continue;
    }
    size_t J = I;
    while (J < Text.size() && Text[J] != ',' && Text[J] != '}' &&
           Text[J] != '{' && !llvm::isSpace(Text[J]))
      ++J;
    llvm::StringRef Tok = Text.slice(I, J);
    I = J;
    if (Tok == "true") {
      Vals.push_back(1);
      continue;
    }
    if (Tok == "false") {
      Vals.push_back(0);
      continue;
    }
    if (Tok.contains_insensitive("nan") || Tok.contains_insensitive("inf") ||
        Tok.contains_insensitive("x"))
      return std::nullopt;
    std::string S = Tok.str();
    char *End = nullptr;
    double D = std::strtod(S.c_str(), &End);
    if (End != S.c_str() + S.size())
      return std::nullopt;
    Vals.push_back(D);
  }
  return Vals;
}

llvm::Expected<Val> DeviceLowering::lowerConstant(const HloInstruction &I) {
  if (!I.shape().IsArray())
    return notLowered(I, "tuple constants");
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  std::optional<std::vector<double>> Vals = parseLiteral(I.literal_text());
  uint64_t N = Bufs[*Out].Elems;
  if (!Vals)
    return notLowered(I, "a value that is not a finite number (Memset takes "
                         "finite values)");
  if (Vals->size() == 1 && N != 1)
    Vals->assign(N, (*Vals)[0]);
  if (Vals->size() != N)
    return notLowered(I, "the literal has " + llvm::Twine(Vals->size()) +
                             " values for " + llvm::Twine(N) + " elements");
  bool Splat = llvm::all_of(*Vals, [&](double V) { return V == (*Vals)[0]; });
  if (N == 0)
    return arrayVal(*Out);
  std::optional<double> Known;
  if (Splat)
    Known = (*Vals)[0];
  if (Splat) {
    fill(I, *Out, (*Vals)[0]);
  } else {
    // One Memset per run of equal values in one row of SB, then a DMA;
    // the limit keeps programs small until locations carry initial data.
    unsigned Runs = 1;
    for (uint64_t K = 1; K < N; ++K)
      Runs += (*Vals)[K] != (*Vals)[K - 1];
    if (Runs > 4096)
      return notLowered(I, "a constant of " + llvm::Twine(Runs) +
                               " runs of equal values (at most 4096 Memsets)");
    DataType T = Bufs[*Out].T;
    uint64_t F = SlotBytes / getDataTypeSize(T);
    CoreEmitter &E = Cores[0];
    for (uint64_t First = 0; First < N; First += F) {
      uint64_t Len = std::min(F, N - First);
      MemoryLocation *S = E.nextSlot(T);
      for (uint64_t K = 0; K < Len;) {
        uint64_t J = K + 1;
        while (J < Len && (*Vals)[First + J] == (*Vals)[First + K])
          ++J;
        E.emit(std::make_unique<InstMemset>(name(0, I, "set"), Engine::POOL,
                                            (*Vals)[First + K]),
               {},
               {AccessPattern(S, 0, 1, K * getDataTypeSize(T), {{1, J - K}},
                              T)});
        K = J;
      }
      E.emit(std::make_unique<InstDMACopy>(name(0, I, "st"), E.nextDma(),
                                           false),
             {AccessPattern(S, 0, 1, 0, {{1, Len}}, T)},
             {dram(*Out, 0, First, {{1, Len}})});
    }
  }
  barrier(I.name());
  return arrayVal(*Out, Known);
}

// ---- Data movement --------------------------------------------------------------

llvm::Expected<Val> DeviceLowering::lowerDataMovement(const HloInstruction &I,
                                                      llvm::ArrayRef<Val> Ops) {
  const Shape &S = I.shape();
  llvm::Expected<int> Out = resultBuffer(I, S);
  if (!Out)
    return Out.takeError();
  std::vector<int64_t> OutDims(S.dimensions().begin(), S.dimensions().end());
  std::vector<int64_t> OutStr = rowMajorStrides(OutDims);
  auto contiguous = [&](llvm::ArrayRef<int64_t> Shape) {
    Dims D;
    std::vector<int64_t> St = rowMajorStrides(Shape);
    for (size_t K = 0; K < Shape.size(); ++K)
      D.push_back({St[K], static_cast<uint64_t>(Shape[K])});
    return D;
  };
  auto opShape = [&](int K) {
    llvm::ArrayRef<int64_t> D = I.operand(K)->shape().dimensions();
    return std::vector<int64_t>(D.begin(), D.end());
  };
  switch (I.opcode()) {
  case HloOpcode::kTranspose: {
    llvm::Expected<std::vector<int64_t>> Perm = hlo::GetDimensions(I);
    if (!Perm)
      return Perm.takeError();
    std::vector<int64_t> OpStr = rowMajorStrides(opShape(0));
    Dims Src;
    for (size_t K = 0; K < OutDims.size(); ++K)
      Src.push_back({OpStr[(*Perm)[K]], static_cast<uint64_t>(OutDims[K])});
    move(I, Ops[0].Buf, 0, Src, *Out, 0, contiguous(OutDims));
    break;
  }
  case HloOpcode::kBroadcast: {
    llvm::Expected<std::vector<int64_t>> Map = hlo::GetDimensions(I);
    if (!Map)
      return Map.takeError();
    std::vector<int64_t> OpStr = rowMajorStrides(opShape(0));
    Dims Src;
    for (size_t K = 0; K < OutDims.size(); ++K) {
      int64_t Step = 0;
      for (size_t J = 0; J < Map->size(); ++J)
        if ((*Map)[J] == static_cast<int64_t>(K))
          Step = OpStr[J];
      Src.push_back({Step, static_cast<uint64_t>(OutDims[K])});
    }
    move(I, Ops[0].Buf, 0, Src, *Out, 0, contiguous(OutDims));
    break;
  }
  case HloOpcode::kSlice: {
    llvm::Expected<hlo::SliceConfig> SC = hlo::GetSliceConfig(I);
    if (!SC)
      return SC.takeError();
    std::vector<int64_t> OpStr = rowMajorStrides(opShape(0));
    Dims Src;
    uint64_t Off = 0;
    for (size_t K = 0; K < OutDims.size(); ++K) {
      Src.push_back({OpStr[K] * SC->strides[K], static_cast<uint64_t>(OutDims[K])});
      Off += SC->starts[K] * OpStr[K];
    }
    move(I, Ops[0].Buf, Off, Src, *Out, 0, contiguous(OutDims));
    break;
  }
  case HloOpcode::kConcatenate: {
    llvm::Expected<std::vector<int64_t>> D = hlo::GetDimensions(I);
    if (!D || D->size() != 1)
      return D ? notLowered(I, "expected one dimension") : D.takeError();
    int64_t Dim = (*D)[0], At = 0;
    for (int K = 0; K < I.operand_count(); ++K) {
      std::vector<int64_t> OpD = opShape(K);
      Dims Dst;
      for (size_t J = 0; J < OpD.size(); ++J)
        Dst.push_back({OutStr[J], static_cast<uint64_t>(OpD[J])});
      move(I, Ops[K].Buf, 0, contiguous(OpD), *Out, At * OutStr[Dim], Dst);
      At += OpD[Dim];
    }
    break;
  }
  case HloOpcode::kPad: {
    llvm::Expected<std::vector<hlo::PaddingDimension>> PC =
        hlo::GetPaddingConfig(I);
    if (!PC)
      return PC.takeError();
    // The padding value everywhere (a zero-step read of the scalar), then
    // the operand's elements that land inside the result.
    Dims Fill;
    for (int64_t N : OutDims)
      Fill.push_back({0, static_cast<uint64_t>(N)});
    move(I, Ops[1].Buf, 0, Fill, *Out, 0, contiguous(OutDims));
    barrier((I.name() + ".fill").str());
    std::vector<int64_t> OpD = opShape(0), OpStr = rowMajorStrides(OpD);
    Dims Src, Dst;
    uint64_t SrcOff = 0, DstOff = 0;
    bool Empty = false;
    for (size_t K = 0; K < OpD.size(); ++K) {
      const hlo::PaddingDimension &P = (*PC)[K];
      int64_t Step = P.interior + 1;
      int64_t First = 0;
      if (P.low < 0)
        First = (-P.low + Step - 1) / Step;
      int64_t Last = OpD[K] - 1; // the last index that lands inside
      while (Last >= First && P.low + Last * Step >= OutDims[K])
        --Last;
      if (Last < First) {
        Empty = true;
        break;
      }
      uint64_t Count = static_cast<uint64_t>(Last - First + 1);
      Src.push_back({OpStr[K], Count});
      Dst.push_back({OutStr[K] * Step, Count});
      SrcOff += First * OpStr[K];
      DstOff += (P.low + First * Step) * OutStr[K];
    }
    if (!Empty)
      move(I, Ops[0].Buf, SrcOff, Src, *Out, DstOff, Dst);
    break;
  }
  default:
    llvm_unreachable("not a data movement op");
  }
  barrier(I.name());
  return arrayVal(*Out);
}

// ---- Dot -------------------------------------------------------------------------

llvm::Expected<Val> DeviceLowering::lowerDot(const HloInstruction &I,
                                             llvm::ArrayRef<Val> Ops) {
  llvm::Expected<hlo::DotDimensionNumbers> DN = hlo::GetDotDimensionNumbers(I);
  if (!DN)
    return DN.takeError();
  const Shape &LS = I.operand(0)->shape(), &RS = I.operand(1)->shape();
  DataType TL = Bufs[Ops[0].Buf].T, TR = Bufs[Ops[1].Buf].T;
  if (TL != TR)
    return notLowered(I, "operands of two types; a Matmul takes one");
  if (!isFloatType(TL))
    return notLowered(I, "integer dot; the PE accumulates in fp32");
  llvm::Expected<DataType> TO = typeOf(I, I.shape());
  if (!TO)
    return TO.takeError();
  if (!isArithmeticFloat(*TO))
    return notLowered(I, "result type " +
                             hlo::PrimitiveTypeName(I.shape().element_type()));
  auto freeDims = [](const Shape &S, const std::vector<int64_t> &Batch,
                     const std::vector<int64_t> &Contract) {
    std::vector<int64_t> F;
    for (int64_t D = 0; D < S.rank(); ++D)
      if (!llvm::is_contained(Batch, D) && !llvm::is_contained(Contract, D))
        F.push_back(D);
    return F;
  };
  std::vector<int64_t> LF = freeDims(LS, DN->lhs_batch_dimensions,
                                     DN->lhs_contracting_dimensions);
  std::vector<int64_t> RF = freeDims(RS, DN->rhs_batch_dimensions,
                                     DN->rhs_contracting_dimensions);
  auto prod = [](const Shape &S, const std::vector<int64_t> &Ds) {
    uint64_t P = 1;
    for (int64_t D : Ds)
      P *= S.dimensions(D);
    return P;
  };
  uint64_t B = prod(LS, DN->lhs_batch_dimensions);
  uint64_t K = prod(LS, DN->lhs_contracting_dimensions);
  uint64_t M = prod(LS, LF), N = prod(RS, RF);
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  if (B * M * N == 0)
    return arrayVal(*Out);
  if (K == 0)
    return notLowered(I, "an empty contraction");
  // The operands in the order the tiles read them: [B][K][M] and [B][K][N],
  // K in the order lhs_contracting_dims lists it (the interpreter's sum
  // order, docs/interpreter.md).
  auto canonical = [&](int Op, const Shape &S, const std::vector<int64_t> &Bt,
                       const std::vector<int64_t> &Ct,
                       const std::vector<int64_t> &Fr,
                       llvm::StringRef Tag) -> int {
    std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
    std::vector<int64_t> St = rowMajorStrides(Dm);
    Dims Src;
    std::vector<int64_t> Order;
    for (auto *List : {&Bt, &Ct, &Fr})
      for (int64_t D : *List)
        Order.push_back(D);
    bool Identity = true;
    for (size_t J = 0; J < Order.size(); ++J) {
      Src.push_back({St[Order[J]], static_cast<uint64_t>(Dm[Order[J]])});
      Identity &= Order[J] == static_cast<int64_t>(J);
    }
    if (Identity)
      return Ops[Op].Buf;
    int Scratch = newBuffer((I.name() + "." + Tag).str(), Bufs[Ops[Op].Buf].T,
                            Bufs[Ops[Op].Buf].Elems);
    uint64_t E = Bufs[Scratch].Elems;
    move(I, Ops[Op].Buf, 0, Src, Scratch, 0, {{1, E}});
    return Scratch;
  };
  int LT = canonical(0, LS, DN->lhs_batch_dimensions,
                     DN->lhs_contracting_dimensions, LF, "lhsT");
  int RT = canonical(1, RS, DN->rhs_batch_dimensions,
                     DN->rhs_contracting_dimensions, RF, "rhsT");
  barrier((I.name() + ".operands").str());
  const uint64_t TK = 128, TM = 128, TN = PsumBankBytes / 4;
  uint64_t NumTiles = B * ((M + TM - 1) / TM) * ((N + TN - 1) / TN);
  uint64_t KTiles = (K + TK - 1) / TK;
  if (L > 1 && NumTiles < L && KTiles >= L) {
    // Too few output tiles to share: the cores split the contraction
    // (docs/codegen.md, "Work split"), then combine their partial sums.
    unsigned Tile = 0;
    for (uint64_t Bi = 0; Bi < B; ++Bi)
      for (uint64_t M0 = 0; M0 < M; M0 += TM)
        for (uint64_t N0 = 0; N0 < N; N0 += TN, ++Tile)
          splitContraction(I, LT, RT, *Out, *TO, Bi, M0, N0, M, N, K,
                           std::min(TM, M - M0), std::min(TN, N - N0), Tile);
    barrier(I.name());
    return arrayVal(*Out);
  }
  unsigned Tile = 0;
  for (uint64_t Bi = 0; Bi < B; ++Bi)
    for (uint64_t M0 = 0; M0 < M; M0 += TM)
      for (uint64_t N0 = 0; N0 < N; N0 += TN, ++Tile) {
        uint64_t Mt = std::min(TM, M - M0), Nt = std::min(TN, N - N0);
        unsigned Core = Tile % L;
        CoreEmitter &E = Cores[Core];
        MemoryLocation *Ps = E.nextPsum();
        AccessPattern Acc(Ps, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                          DataType::FP32);
        for (uint64_t K0 = 0; K0 < K; K0 += TK) {
          uint64_t Kt = std::min(TK, K - K0);
          MemoryLocation *SS = E.nextSlot(TL), *SM = E.nextSlot(TL);
          AccessPattern Stat(SS, 0, static_cast<unsigned>(Kt), 0, {{1, Mt}}, TL);
          AccessPattern Mov(SM, 0, static_cast<unsigned>(Kt), 0, {{1, Nt}}, TL);
          E.emit(std::make_unique<InstDMACopy>(name(Core, I, "ld_w"),
                                               E.nextDma(), false),
                 {dram(LT, Core, Bi * K * M + K0 * M + M0,
                       {{static_cast<int64_t>(M), Kt}, {1, Mt}})},
                 {Stat});
          E.emit(std::make_unique<InstDMACopy>(name(Core, I, "ld_x"),
                                               E.nextDma(), false),
                 {dram(RT, Core, Bi * K * N + K0 * N + N0,
                       {{static_cast<int64_t>(N), Kt}, {1, Nt}})},
                 {Mov});
          E.emit(std::make_unique<InstMatmul>(name(Core, I, "mm"), Engine::PE,
                                              K0 > 0),
                 {Stat, Mov}, {Acc});
        }
        MemoryLocation *SO = E.nextSlot(*TO);
        AccessPattern Res(SO, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}}, *TO);
        E.emit(std::make_unique<InstTensorCopy>(
                   name(Core, I, "evac"), Tile % 2 ? Engine::DVE : Engine::ACT),
               {Acc}, {Res});
        E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                             false),
               {Res},
               {dram(*Out, Core, Bi * M * N + M0 * N + N0,
                     {{static_cast<int64_t>(N), Mt}, {1, Nt}})});
      }
  barrier(I.name());
  return arrayVal(*Out);
}

/// One output tile whose K tiles are shared by the cores: core c
/// accumulates its contiguous range of K tiles in PSUM and copies the
/// partial sum to SB; then
///
///   lnc 2, rows even:  SendRecv swap of the halves each core does not keep
///                      (core 0 keeps rows [0, Mt/2), core 1 the rest),
///                      TensorTensor Add of the kept and the received half,
///                      each core stores its half;
///   otherwise:         a local AllReduce (Add) of the partial sums; core c
///                      stores its share of the rows.
///
/// The sum is (core 0's part) + (core 1's part) + ..., not k upwards: the
/// result may differ from the interpreter's by rounding (docs/codegen.md).
void DeviceLowering::splitContraction(const HloInstruction &I, int LT, int RT,
                                      int Out, DataType TO, uint64_t Bi,
                                      uint64_t M0, uint64_t N0, uint64_t M,
                                      uint64_t N, uint64_t K, uint64_t Mt,
                                      uint64_t Nt, unsigned Tile) {
  const uint64_t TK = 128;
  uint64_t KTiles = (K + TK - 1) / TK;
  DataType TL = Bufs[LT].T;
  bool Swap = L == 2 && Mt % 2 == 0;
  std::vector<unsigned> All(L);
  std::iota(All.begin(), All.end(), 0);
  std::string CollName = (I.name() + (Swap ? ".swap" : ".allreduce") +
                          llvm::Twine(Tile)).str();
  for (unsigned C = 0; C < L; ++C) {
    CoreEmitter &E = Cores[C];
    uint64_t KT0 = KTiles * C / L, KT1 = KTiles * (C + 1) / L;
    MemoryLocation *Ps = E.nextPsum();
    AccessPattern Acc(Ps, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                      DataType::FP32);
    for (uint64_t KT = KT0; KT < KT1; ++KT) {
      uint64_t K0 = KT * TK, Kt = std::min(TK, K - K0);
      MemoryLocation *SS = E.nextSlot(TL), *SM = E.nextSlot(TL);
      AccessPattern Stat(SS, 0, static_cast<unsigned>(Kt), 0, {{1, Mt}}, TL);
      AccessPattern Mov(SM, 0, static_cast<unsigned>(Kt), 0, {{1, Nt}}, TL);
      E.emit(std::make_unique<InstDMACopy>(name(C, I, "ld_w"), E.nextDma(),
                                           false),
             {dram(LT, C, Bi * K * M + K0 * M + M0,
                   {{static_cast<int64_t>(M), Kt}, {1, Mt}})},
             {Stat});
      E.emit(std::make_unique<InstDMACopy>(name(C, I, "ld_x"), E.nextDma(),
                                           false),
             {dram(RT, C, Bi * K * N + K0 * N + N0,
                   {{static_cast<int64_t>(N), Kt}, {1, Nt}})},
             {Mov});
      E.emit(std::make_unique<InstMatmul>(name(C, I, "mm"), Engine::PE,
                                          KT > KT0),
             {Stat, Mov}, {Acc});
    }
    MemoryLocation *Part = E.nextSlot(DataType::FP32);
    AccessPattern PartAP(Part, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                         DataType::FP32);
    E.emit(std::make_unique<InstTensorCopy>(name(C, I, "part"), Engine::ACT),
           {Acc}, {PartAP});
    MemoryLocation *Sum = E.nextSlot(DataType::FP32);
    uint64_t R0, R1; // the rows this core stores
    AccessPattern SumAP(Sum, 0, static_cast<unsigned>(Mt), 0, {{1, Nt}},
                        DataType::FP32);
    if (Swap) {
      unsigned H = static_cast<unsigned>(Mt / 2);
      R0 = C * H;
      R1 = R0 + H;
      MemoryLocation *Recv = E.nextSlot(DataType::FP32);
      AccessPattern RecvAP(Recv, 0, H, 0, {{1, Nt}}, DataType::FP32);
      // Core 0 sends the rows core 1 keeps, and the other way round.
      AccessPattern Give(Part, C == 0 ? H : 0, H, 0, {{1, Nt}}, DataType::FP32);
      AccessPattern Kept(Part, C == 0 ? 0 : H, H, 0, {{1, Nt}}, DataType::FP32);
      E.emit(std::make_unique<InstCollectiveCompute>(
                 E.uniqueName(CollName), Engine::POOL, CollectiveKind::SendRecv,
                 All, ReduceOp::None, /*Local=*/true),
             {Give}, {RecvAP});
      // Core 0's part first on both halves.
      std::vector<AccessPattern> Terms =
          C == 0 ? std::vector<AccessPattern>{Kept, RecvAP}
                 : std::vector<AccessPattern>{RecvAP, Kept};
      SumAP = AccessPattern(Sum, 0, H, 0, {{1, Nt}}, DataType::FP32);
      E.emit(std::make_unique<InstTensorTensor>(name(C, I, "sum"), Engine::DVE,
                                                ArithOp::Add),
             Terms, {SumAP});
    } else {
      R0 = Mt * C / L;
      R1 = Mt * (C + 1) / L;
      E.emit(std::make_unique<InstCollectiveCompute>(
                 E.uniqueName(CollName), Engine::POOL, CollectiveKind::AllReduce,
                 All, ReduceOp::Add, /*Local=*/true),
             {PartAP}, {SumAP});
      if (R1 == R0)
        continue;
      SumAP = AccessPattern(Sum, static_cast<unsigned>(R0),
                            static_cast<unsigned>(R1 - R0), 0, {{1, Nt}},
                            DataType::FP32);
    }
    MemoryLocation *Res = E.nextSlot(TO);
    AccessPattern ResAP(Res, 0, static_cast<unsigned>(R1 - R0), 0, {{1, Nt}},
                        TO);
    E.emit(std::make_unique<InstTensorConvert>(name(C, I, "evac"), Engine::ACT),
           {SumAP}, {ResAP});
    E.emit(std::make_unique<InstDMACopy>(name(C, I, "st"), E.nextDma(), false),
           {ResAP},
           {dram(Out, C, Bi * M * N + (M0 + R0) * N + N0,
                 {{static_cast<int64_t>(N), R1 - R0}, {1, Nt}})});
  }
}

// ---- Collectives -------------------------------------------------------------------

llvm::Expected<ReduceOp> reduceOpOf(const HloInstruction &I) {
  llvm::ArrayRef<HloComputation *> C = I.CalledComputations("to_apply");
  if (C.size() != 1)
    return makeError("no to_apply computation");
  const HloInstruction *Root = C[0]->root_instruction();
  if (C[0]->parameter_instructions().size() != 2 || Root->operand_count() != 2 ||
      Root->operand(0)->opcode() != HloOpcode::kParameter ||
      Root->operand(1)->opcode() != HloOpcode::kParameter)
    return makeError("to_apply is not one op of its two parameters");
  switch (Root->opcode()) {
  case HloOpcode::kAdd:
    return ReduceOp::Add;
  case HloOpcode::kMaximum:
    return ReduceOp::Max;
  case HloOpcode::kMinimum:
    return ReduceOp::Min;
  default:
    return makeError("to_apply is " + Root->OpcodeText() +
                     ", not add, maximum or minimum");
  }
}

llvm::Expected<Val> DeviceLowering::lowerCollective(const HloInstruction &I,
                                                    const Shape &Result,
                                                    llvm::ArrayRef<Val> Ops) {
  HloOpcode Op = I.opcode();
  bool Gather = Op == HloOpcode::kAllGather || Op == HloOpcode::kAllGatherStart;
  bool Reduce = Op == HloOpcode::kAllReduce || Op == HloOpcode::kAllReduceStart;
  bool Scatter = Op == HloOpcode::kReduceScatter;
  bool ToAll = Op == HloOpcode::kAllToAll;
  llvm::Expected<std::vector<std::vector<int64_t>>> Groups =
      getDeviceGroups(I, LS);
  if (!Groups)
    return notLowered(I, llvm::toString(Groups.takeError()));
  std::vector<unsigned> Group;
  for (const auto &G : *Groups)
    if (llvm::is_contained(G, Device))
      Group.assign(G.begin(), G.end());
  if (Group.empty())
    return notLowered(I, "the device is in no replica group");
  uint64_t n = Group.size();
  ReduceOp RO = ReduceOp::None;
  if (Reduce || Scatter) {
    llvm::Expected<ReduceOp> R = reduceOpOf(I);
    if (!R)
      return notLowered(I, llvm::toString(R.takeError()));
    RO = *R;
  }
  for (const HloInstruction *O : I.operands())
    if (RO == ReduceOp::Add && O->shape().IsArray() &&
        !hlo::IsFloatingPointType(O->shape().element_type()))
      return notLowered(I, "an integer sum wraps in HLO, CollectiveCompute "
                           "saturates");
  std::optional<int64_t> Dim;
  if (Gather || Scatter || (ToAll && I.operand_count() == 1)) {
    llvm::Expected<int64_t> D = hlo::GetCollectiveDimension(I);
    if (!D)
      return notLowered(I, llvm::toString(D.takeError()));
    Dim = *D;
  }
  // The module header may not give the launch size the shapes were
  // written for: the result must have the elements the group implies.
  for (size_t K = 0; K < I.operands().size(); ++K) {
    const Shape &OS = I.operand(K)->shape();
    const Shape &RS = Result.IsTuple() && !(ToAll && !Dim)
                          ? Result.tuple_shapes(std::min<int64_t>(
                                K, Result.tuple_shapes_size() - 1))
                          : Result;
    if (!OS.IsArray() || !RS.IsArray())
      return notLowered(I, "operands and results must be arrays");
    uint64_t In = OS.element_count(), Want = In;
    if (Gather)
      Want = In * n;
    else if (Scatter)
      Want = In % n ? 0 : In / n;
    if (static_cast<uint64_t>(RS.element_count()) != Want ||
        (Scatter && In % n))
      return notLowered(I, "its shapes do not fit its group of " +
                               llvm::Twine(n) +
                               " device(s); give the launch size with "
                               "--replica-count / --num-partitions");
  }
  llvm::Expected<Val> Res = newValue(I, Result);
  if (!Res)
    return Res.takeError();
  std::vector<int> Outs;
  if (Res->IsTuple)
    for (const Val &E : Res->Elems)
      Outs.push_back(E.Buf);
  else
    Outs.push_back(Res->Buf);
  CollectiveKind Kind = Reduce    ? CollectiveKind::AllReduce
                        : Scatter ? CollectiveKind::ReduceScatter
                        : Gather  ? CollectiveKind::AllGather
                                  : CollectiveKind::AllToAll;
  // One CollectiveCompute moving In (n-block layout for scatter / to-all
  // inputs, gather / to-all outputs) to Out; at lnc > 1 each core carries
  // the same share of every block.
  auto collective = [&](int In, int Out, uint64_t InElems, llvm::StringRef Tag) {
    uint64_t OutElems = Bufs[Out].Elems;
    if (n == 1) {
      move(I, In, 0, {{1, InElems}}, Out, 0, {{1, OutElems}});
      return;
    }
    // Blocks: the data splits into `Blocks` blocks of `Block` elements; a
    // core takes the same share of each block.
    uint64_t InBlocks = (Scatter || ToAll) ? n : 1;
    uint64_t OutBlocks = (Gather || ToAll) ? n : 1;
    uint64_t InBlock = InElems / InBlocks, OutBlock = OutElems / OutBlocks;
    bool Split = L > 1 && InBlock % L == 0 && OutBlock % L == 0 &&
                 InBlock / L > 0 && InBlock == OutBlock;
    unsigned Parts = Split ? L : 1;
    for (unsigned C = 0; C < Parts; ++C) {
      uint64_t Share = InBlock / Parts;
      Dims ID = InBlocks > 1 ? Dims{{static_cast<int64_t>(InBlock), InBlocks},
                                    {1, Share}}
                             : Dims{{1, Share}};
      Dims OD = OutBlocks > 1 ? Dims{{static_cast<int64_t>(OutBlock), OutBlocks},
                                     {1, OutBlock / Parts}}
                              : Dims{{1, OutBlock / Parts}};
      if (!Split) {
        ID = {{1, InElems}};
        OD = {{1, OutElems}};
      }
      std::string N = (I.name() + Tag).str();
      Cores[C].emit(std::make_unique<InstCollectiveCompute>(
                        Cores[C].uniqueName(N), Engine::POOL, Kind, Group, RO,
                        /*Local=*/false),
                    {dram(In, C, C * Share, ID)},
                    {dram(Out, C, C * (OutBlock / Parts), OD)});
    }
  };
  if (Reduce) {
    for (size_t K = 0; K < Ops.size(); ++K)
      collective(Ops[K].Buf, Outs[K], Bufs[Ops[K].Buf].Elems,
                 Ops.size() > 1 ? "." + std::to_string(K) : "");
  } else if (ToAll && !Dim) {
    // Tuple form: operand j goes to member j; result j comes from member j.
    uint64_t E = Bufs[Ops[0].Buf].Elems;
    if (Ops.size() != n)
      return notLowered(I, "a tuple all-to-all needs one operand per member");
    int In = newBuffer((I.name() + ".send").str(), Bufs[Ops[0].Buf].T, n * E);
    int Recv = newBuffer((I.name() + ".recv").str(), Bufs[Ops[0].Buf].T, n * E);
    for (size_t K = 0; K < n; ++K)
      move(I, Ops[K].Buf, 0, {{1, E}}, In, K * E, {{1, E}});
    barrier((I.name() + ".send").str());
    collective(In, Recv, n * E, "");
    barrier((I.name() + ".recv").str());
    for (size_t K = 0; K < n; ++K)
      move(I, Recv, K * E, {{1, E}}, Outs[K], 0, {{1, E}});
  } else {
    if (Ops.size() != 1)
      return notLowered(I, "a combined collective of several operands");
    const Shape &OS = I.operand(0)->shape();
    int64_t D = *Dim;
    uint64_t Outer = 1, Inner = 1;
    for (int64_t K = 0; K < OS.rank(); ++K)
      (K < D ? Outer : Inner) *= OS.dimensions(K);
    int In = Ops[0].Buf;
    uint64_t E = Bufs[In].Elems;
    DataType T = Bufs[In].T;
    if (Gather) {
      // out viewed as [Outer][n][Inner] from the gathered [n][Outer*Inner].
      if (Outer == 1) {
        collective(In, Outs[0], E, "");
      } else {
        int G = newBuffer((I.name() + ".gathered").str(), T, n * E);
        collective(In, G, E, "");
        barrier((I.name() + ".gathered").str());
        move(I, G, 0,
             {{static_cast<int64_t>(Inner), Outer},
              {static_cast<int64_t>(E), n},
              {1, Inner}},
             Outs[0], 0, {{1, n * E}});
      }
    } else {
      // Scatter and array all-to-all: the operand as [n][Outer][Inner / n],
      // block j being the part of dimension D that member j owns.
      if (Inner % n)
        return notLowered(I, "dimension does not split over the group");
      uint64_t Part = Inner / n;
      int Blocks = In;
      if (Outer != 1) {
        Blocks = newBuffer((I.name() + ".blocks").str(), T, E);
        move(I, In, 0,
             {{static_cast<int64_t>(Part), n},
              {static_cast<int64_t>(Inner), Outer},
              {1, Part}},
             Blocks, 0, {{1, E}});
        barrier((I.name() + ".blocks").str());
      }
      if (Scatter) {
        collective(Blocks, Outs[0], E, "");
      } else if (Outer == 1) {
        collective(Blocks, Outs[0], E, "");
      } else {
        int Recv = newBuffer((I.name() + ".recv").str(), T, E);
        collective(Blocks, Recv, E, "");
        barrier((I.name() + ".recv").str());
        // Received block j goes to part j of dimension D.
        move(I, Recv, 0,
             {{static_cast<int64_t>(Part), Outer},
              {static_cast<int64_t>(Outer * Part), n},
              {1, Part}},
             Outs[0], 0, {{1, E}});
      }
    }
  }
  barrier(I.name());
  return *Res;
}

llvm::Expected<Val> DeviceLowering::lowerPermute(const HloInstruction &I,
                                                 const Shape &Result,
                                                 const Val &Op) {
  if (I.operand_count() != 1 || !Result.IsArray())
    return notLowered(I, "a combined collective-permute of several operands");
  llvm::Expected<std::vector<std::pair<int64_t, int64_t>>> Pairs =
      getDevicePairs(I, LS);
  if (!Pairs)
    return notLowered(I, llvm::toString(Pairs.takeError()));
  int64_t ND = LS.ReplicaCount * LS.NumPartitions;
  std::vector<int64_t> Next(ND, -1), Prev(ND, -1);
  for (auto [S, T] : *Pairs) {
    if (Next[S] != -1 || Prev[T] != -1)
      return notLowered(I, "a device is twice a source or twice a target");
    Next[S] = T;
    Prev[T] = S;
  }
  // The components, in the order of their smallest device (docs/bir.md,
  // "collective-permute").
  std::vector<int> CompOf(ND, -1);
  std::vector<std::vector<unsigned>> Comps;
  std::vector<bool> IsChain;
  for (int64_t D = 0; D < ND; ++D) {
    if (CompOf[D] != -1 || (Next[D] == -1 && Prev[D] == -1))
      continue;
    // Walk back to a chain's head (or once around a cycle).
    int64_t Head = D;
    while (Prev[Head] != -1 && Prev[Head] != D)
      Head = Prev[Head];
    bool Chain = Prev[Head] == -1;
    if (!Chain)
      Head = D; // the smallest id of the cycle: the walk started there
    std::vector<unsigned> G;
    int64_t X = Head;
    do {
      G.push_back(static_cast<unsigned>(X));
      CompOf[X] = static_cast<int>(Comps.size());
      X = Next[X];
    } while (X != -1 && X != Head);
    Comps.push_back(G);
    IsChain.push_back(Chain);
  }
  llvm::Expected<int> Out = resultBuffer(I, Result);
  if (!Out)
    return Out.takeError();
  int C = CompOf[Device];
  bool Zero = C == -1 || (IsChain[C] && Comps[C][0] == Device);
  if (C != -1) {
    const std::vector<unsigned> &G = Comps[C];
    uint64_t E = Bufs[Op.Buf].Elems;
    int Recv = Zero ? newBuffer((I.name() + ".discard").str(), Bufs[*Out].T, E)
                    : *Out;
    if (G.size() == 1) {
      move(I, Op.Buf, 0, {{1, E}}, Recv, 0, {{1, E}});
    } else {
      bool Split = L > 1 && E % L == 0;
      unsigned Parts = Split ? L : 1;
      for (unsigned K = 0; K < Parts; ++K) {
        uint64_t Share = E / Parts;
        Cores[K].emit(std::make_unique<InstCollectiveCompute>(
                          Cores[K].uniqueName((I.name() + ".c" + llvm::Twine(C)).str()),
                          Engine::POOL, CollectiveKind::Permute, G,
                          ReduceOp::None, false),
                      {dram(Op.Buf, K, K * Share, {{1, Share}})},
                      {dram(Recv, K, K * Share, {{1, Share}})});
      }
    }
  }
  if (Zero)
    fill(I, *Out, 0);
  barrier(I.name());
  return arrayVal(*Out);
}

/// all-gather-start, all-reduce-start, collective-permute-start and
/// async-start: the collective runs at the start (BIR's CollectiveCompute
/// overlaps by its dependencies, not by a start and a done); the start's
/// value is (operands, result, context...) with no data for the context.
llvm::Expected<Val> DeviceLowering::lowerStart(const HloInstruction &I,
                                               llvm::ArrayRef<Val> Ops) {
  const Shape &S = I.shape();
  const HloInstruction *Inner = &I;
  if (I.opcode() == HloOpcode::kAsyncStart) {
    if (I.async_wrapped_opcode())
      return notLowered(I, "async sugar of " +
                               hlo::HloOpcodeString(*I.async_wrapped_opcode()));
    llvm::ArrayRef<HloComputation *> C = I.CalledComputations("calls");
    if (C.size() != 1)
      return notLowered(I, "no wrapped computation");
    Inner = C[0]->root_instruction();
    for (const HloInstruction *O : Inner->operands())
      if (O->opcode() != HloOpcode::kParameter)
        return notLowered(I, "the wrapped computation is more than one "
                             "collective of its parameters");
  }
  bool Wrapped = !(I.opcode() == HloOpcode::kAllReduceStart) && S.IsTuple() &&
                 S.tuple_shapes_size() >= 2;
  const Shape &Result = Wrapped ? S.tuple_shapes(1) : S;
  std::vector<Val> InnerOps;
  for (const HloInstruction *O : Inner->operands())
    InnerOps.push_back(Inner == &I ? Ops[InnerOps.size()]
                                   : Ops[O->parameter_number()]);
  llvm::Expected<Val> R = [&]() -> llvm::Expected<Val> {
    switch (Inner->opcode()) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
      return lowerCollective(*Inner, Result, InnerOps);
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
      return lowerPermute(*Inner, Result, InnerOps[0]);
    default:
      return notLowered(I, "wraps " + Inner->OpcodeText());
    }
  }();
  if (!R || !Wrapped)
    return R;
  Val V;
  V.IsTuple = true;
  if (Ops.size() == 1)
    V.Elems.push_back(Ops[0]);
  else {
    Val Operands;
    Operands.IsTuple = true;
    Operands.Elems.assign(Ops.begin(), Ops.end());
    V.Elems.push_back(std::move(Operands));
  }
  V.Elems.push_back(std::move(*R));
  for (int64_t K = 2; K < S.tuple_shapes_size(); ++K)
    V.Elems.push_back(Val()); // a context: no data
  return V;
}

// ---- Reduce, iota, dynamic slices, while ------------------------------------------

llvm::Expected<ArithOp> reduceArithOf(const HloInstruction &I) {
  llvm::ArrayRef<HloComputation *> C = I.CalledComputations("to_apply");
  if (C.size() != 1)
    return makeError("no to_apply computation");
  const HloInstruction *Root = C[0]->root_instruction();
  if (C[0]->parameter_instructions().size() != 2 || Root->operand_count() != 2 ||
      Root->operand(0)->opcode() != HloOpcode::kParameter ||
      Root->operand(1)->opcode() != HloOpcode::kParameter)
    return makeError("to_apply is not one op of its two parameters");
  switch (Root->opcode()) {
  case HloOpcode::kAdd: return ArithOp::Add;
  case HloOpcode::kMultiply: return ArithOp::Multiply;
  case HloOpcode::kMaximum: return ArithOp::Max;
  case HloOpcode::kMinimum: return ArithOp::Min;
  case HloOpcode::kAnd: return ArithOp::And;
  case HloOpcode::kOr: return ArithOp::Or;
  default:
    return makeError("to_apply is " + Root->OpcodeText());
  }
}

llvm::Expected<Val> DeviceLowering::lowerReduce(const HloInstruction &I,
                                                llvm::ArrayRef<Val> Ops) {
  if (I.operand_count() != 2 || !I.shape().IsArray())
    return notLowered(I, "a variadic reduce");
  llvm::Expected<ArithOp> A = reduceArithOf(I);
  if (!A)
    return notLowered(I, llvm::toString(A.takeError()));
  llvm::Expected<std::vector<int64_t>> Dims0 = hlo::GetDimensions(I);
  if (!Dims0)
    return Dims0.takeError();
  const Shape &S = I.operand(0)->shape();
  llvm::Expected<DataType> T = typeOf(I, I.shape());
  if (!T)
    return T.takeError();
  if (isFloatType(*T) && !isArithmeticFloat(*T))
    return notLowered(I, "an fp8 accumulator rounds differently in BIR");
  std::vector<int64_t> Keep, Red;
  for (int64_t D = 0; D < S.rank(); ++D)
    (llvm::is_contained(*Dims0, D) ? Red : Keep).push_back(D);
  uint64_t G = 1, R = 1;
  for (int64_t D : Keep)
    G *= S.dimensions(D);
  for (int64_t D : Red)
    R *= S.dimensions(D);
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  int Init = Ops[1].Buf;
  if (G == 0)
    return arrayVal(*Out);
  if (R == 0) {
    move(I, Init, 0, {{0, G}}, *Out, 0, {{1, G}});
    barrier(I.name());
    return arrayVal(*Out);
  }
  // The operand as [kept][reduced], the reduced elements in row-major
  // order: the order the interpreter folds them in.
  int In = Ops[0].Buf;
  bool Identity = true;
  for (size_t K = 0; K < Keep.size(); ++K)
    Identity &= Keep[K] == static_cast<int64_t>(K);
  if (!Identity) {
    std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
    std::vector<int64_t> St = rowMajorStrides(Dm);
    Dims Src;
    for (auto *List : {&Keep, &Red})
      for (int64_t D : *List)
        Src.push_back({St[D], static_cast<uint64_t>(Dm[D])});
    In = newBuffer((I.name() + ".in").str(), Bufs[Ops[0].Buf].T, G * R);
    move(I, Ops[0].Buf, 0, Src, In, 0, {{1, G * R}});
    barrier((I.name() + ".in").str());
  }
  std::optional<double> InitConst = Ops[1].Const;
  DataType TI = Bufs[In].T;
  uint64_t F = SlotBytes / std::max(getDataTypeSize(TI), getDataTypeSize(*T));
  uint64_t PerRow = R <= F ? std::max<uint64_t>(1, F / R) : 1;
  std::vector<Chunk> Cs = chunks(G, PerRow);
  for (unsigned K = 0; K < Cs.size(); ++K) {
    const Chunk &C = Cs[K];
    unsigned Core = K % L;
    CoreEmitter &E = Cores[Core];
    MemoryLocation *OT = E.nextSlot(*T);
    AccessPattern OutTile(OT, 0, C.Parts, 0, {{1, C.Free}}, *T);
    if (!InitConst)
      E.emit(std::make_unique<InstDMACopy>(name(Core, I, "init"), E.nextDma(),
                                           false),
             {dram(Init, Core, 0, {{0, C.Parts * C.Free}})}, {OutTile});
    for (uint64_t R0 = 0; R0 < R; R0 += F) {
      uint64_t Rl = R <= F ? R : std::min(F, R - R0);
      MemoryLocation *IT = E.nextSlot(TI);
      AccessPattern InTile(IT, 0, C.Parts, 0, {{1, C.Free * Rl}}, TI);
      Dims DramD = C.Parts > 1
                       ? Dims{{static_cast<int64_t>(C.Free * R), C.Parts},
                              {static_cast<int64_t>(R), C.Free},
                              {1, Rl}}
                       : Dims{{static_cast<int64_t>(R), C.Free}, {1, Rl}};
      E.emit(std::make_unique<InstDMACopy>(name(Core, I, "ld"), E.nextDma(),
                                           false),
             {dram(In, Core, C.First * R + R0, DramD)}, {InTile});
      bool Acc = R0 > 0 || !InitConst;
      E.emit(std::make_unique<InstTensorReduce>(
                 name(Core, I, "red"), K % 2 ? Engine::POOL : Engine::DVE, *A,
                 Acc, InitConst.value_or(0)),
             {InTile}, {OutTile});
      if (R <= F)
        break;
    }
    Dims OutD = C.Parts > 1 ? Dims{{static_cast<int64_t>(C.Free), C.Parts},
                                   {1, C.Free}}
                            : Dims{{1, C.Free}};
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {OutTile}, {dram(*Out, Core, C.First, OutD)});
  }
  barrier(I.name());
  return arrayVal(*Out);
}

llvm::Expected<Val> DeviceLowering::lowerIota(const HloInstruction &I) {
  llvm::Expected<int64_t> Dim = hlo::GetIotaDimension(I);
  if (!Dim)
    return Dim.takeError();
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  DataType T = Bufs[*Out].T;
  const Shape &S = I.shape();
  uint64_t F = SlotBytes / getDataTypeSize(T);
  std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
  if (Bufs[*Out].Elems == 0)
    return arrayVal(*Out);
  // Rows of the tile: the outer dimension (rank 1: runs of F elements), each
  // partition one row; Iota's partition step and multipliers give the
  // index along the iota dimension.
  uint64_t Rows, Inner;
  Dims Pattern;
  std::vector<int64_t> Mult;
  int64_t RowStep;
  if (S.rank() == 1) {
    Inner = std::min<uint64_t>(F, Dm[0]);
    Rows = Dm[0] / Inner;
    Pattern = {{1, Inner}};
    Mult = {1};
    RowStep = static_cast<int64_t>(Inner);
  } else {
    Rows = Dm[0];
    Inner = 1;
    std::vector<int64_t> St = rowMajorStrides(Dm);
    for (size_t K = 1; K < Dm.size(); ++K) {
      Inner *= Dm[K];
      Pattern.push_back({St[K], static_cast<uint64_t>(Dm[K])});
      Mult.push_back(static_cast<int64_t>(K) == *Dim ? 1 : 0);
    }
    if (Inner > F)
      return notLowered(I, "rows of more than " + llvm::Twine(F) +
                               " elements");
    RowStep = *Dim == 0 ? 1 : 0;
  }
  unsigned K = 0;
  auto emitRows = [&](uint64_t R0, unsigned Parts, Dims Pat,
                      std::vector<int64_t> Mu, int64_t Start) {
    unsigned Core = K++ % L;
    CoreEmitter &E = Cores[Core];
    MemoryLocation *Tl = E.nextSlot(T);
    uint64_t N = countOf(Pat);
    AccessPattern Tile(Tl, 0, Parts, 0, Pat, T);
    E.emit(std::make_unique<InstIota>(name(Core, I, "iota"), Engine::POOL,
                                      Start, RowStep, std::move(Mu)),
           {}, {Tile});
    AccessPattern Flat(Tl, 0, Parts, 0, {{1, N}}, T);
    Dims D = Parts > 1 ? Dims{{static_cast<int64_t>(N), Parts}, {1, N}}
                       : Dims{{1, N}};
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {Flat}, {dram(*Out, Core, R0 * N, D)});
  };
  for (uint64_t R0 = 0; R0 < Rows; R0 += 128) {
    unsigned Parts = static_cast<unsigned>(std::min<uint64_t>(128, Rows - R0));
    int64_t Start = S.rank() == 1 ? static_cast<int64_t>(R0 * Inner)
                    : *Dim == 0   ? static_cast<int64_t>(R0)
                                  : 0;
    emitRows(R0, Parts, Pattern, Mult, Start);
  }
  if (S.rank() == 1 && Rows * Inner < static_cast<uint64_t>(Dm[0])) {
    uint64_t Rest = Dm[0] - Rows * Inner;
    // The last partial row starts at element Rows * Inner.
    unsigned Core = K++ % L;
    CoreEmitter &E = Cores[Core];
    MemoryLocation *Tl = E.nextSlot(T);
    AccessPattern Tile(Tl, 0, 1, 0, {{1, Rest}}, T);
    E.emit(std::make_unique<InstIota>(name(Core, I, "iota"), Engine::POOL,
                                      static_cast<int64_t>(Rows * Inner), 0,
                                      std::vector<int64_t>{1}),
           {}, {Tile});
    E.emit(std::make_unique<InstDMACopy>(name(Core, I, "st"), E.nextDma(),
                                         false),
           {Tile}, {dram(*Out, Core, Rows * Inner, {{1, Rest}})});
  }
  barrier(I.name());
  return arrayVal(*Out);
}

llvm::Expected<Val> DeviceLowering::lowerDynamicSlice(const HloInstruction &I,
                                                      llvm::ArrayRef<Val> Ops) {
  bool Update = I.opcode() == HloOpcode::kDynamicUpdateSlice;
  const Shape &S = I.operand(0)->shape();
  unsigned First = Update ? 2 : 1;
  std::vector<int64_t> Sizes;
  if (Update) {
    llvm::ArrayRef<int64_t> U = I.operand(1)->shape().dimensions();
    Sizes.assign(U.begin(), U.end());
  } else {
    llvm::Expected<std::vector<int64_t>> Sz = hlo::GetDynamicSliceSizes(I);
    if (!Sz)
      return Sz.takeError();
    Sizes = *Sz;
  }
  if (static_cast<int64_t>(Ops.size()) != First + S.rank())
    return notLowered(I, "start indices as one array operand");
  std::vector<int64_t> Dm(S.dimensions().begin(), S.dimensions().end());
  std::vector<int64_t> St = rowMajorStrides(Dm);
  uint64_t Off = 0;
  Dims Region, Packed;
  std::vector<int64_t> PSt = rowMajorStrides(Sizes);
  for (int64_t K = 0; K < S.rank(); ++K) {
    std::optional<double> C = Ops[First + K].Const;
    if (!C)
      return notLowered(I, "start index " + llvm::Twine(K) +
                               " depends on data (only offsets known at "
                               "compile time are lowered)");
    // XLA clamps the start so that the slice fits.
    int64_t Start = std::clamp<int64_t>(static_cast<int64_t>(*C), 0,
                                        Dm[K] - Sizes[K]);
    Off += Start * St[K];
    Region.push_back({St[K], static_cast<uint64_t>(Sizes[K])});
    Packed.push_back({PSt[K], static_cast<uint64_t>(Sizes[K])});
  }
  llvm::Expected<int> Out = resultBuffer(I, I.shape());
  if (!Out)
    return Out.takeError();
  if (!Update) {
    move(I, Ops[0].Buf, Off, Region, *Out, 0, Packed);
  } else {
    uint64_t E = Bufs[*Out].Elems;
    move(I, Ops[0].Buf, 0, {{1, E}}, *Out, 0, {{1, E}});
    barrier((I.name() + ".copy").str());
    move(I, Ops[1].Buf, 0, Packed, *Out, Off, Region);
  }
  barrier(I.name());
  return arrayVal(*Out);
}

/// The loop runs while its condition, evaluated at compile time, holds:
/// the induction variable is a value known at compile time (its start and
/// its steps are constants, partition-id, or scalar arithmetic on them),
/// compared with another such value (XLA's while-loop analysis finds trip
/// counts the same way). Each iteration's body is lowered in turn, so the
/// loop is unrolled, up to MaxUnrolledTrips iterations.
llvm::Expected<Val> DeviceLowering::lowerWhile(const HloInstruction &I,
                                               llvm::ArrayRef<Val> Ops) {
  llvm::ArrayRef<HloComputation *> Cond = I.CalledComputations("condition");
  llvm::ArrayRef<HloComputation *> Body = I.CalledComputations("body");
  if (Cond.size() != 1 || Body.size() != 1)
    return notLowered(I, "no condition or body");
  Val State = Ops[0];
  for (int64_t Trip = 0;; ++Trip) {
    llvm::Expected<Val> Go = lowerComputation(*Cond[0], {State});
    if (!Go)
      return Go.takeError();
    if (!Go->Const)
      return notLowered(I, "no trip count: the condition depends on data, "
                           "not only on values known at compile time");
    if (*Go->Const == 0)
      break;
    if (Trip == MaxUnrolledTrips)
      return notLowered(I, "more than " + llvm::Twine(MaxUnrolledTrips) +
                               " iterations; loops are unrolled up to " +
                               llvm::Twine(MaxUnrolledTrips));
    llvm::Expected<Val> Next = lowerComputation(*Body[0], {State});
    if (!Next)
      return Next.takeError();
    State = std::move(*Next);
  }
  return State;
}

/// Scalar integer arithmetic on values known at compile time, as the
/// device computes it (offsets of dynamic slices, induction variables);
/// none when an operand is unknown or the result leaves the type's range.
std::optional<double> foldInteger(const HloInstruction &I,
                                  llvm::ArrayRef<Val> Ops) {
  const Shape &S = I.shape();
  bool Compare = I.opcode() == HloOpcode::kCompare;
  if (!S.IsArray() ||
      !(hlo::IsIntegralType(S.element_type()) ||
        (Compare && S.element_type() == PrimitiveType::PRED)))
    return std::nullopt;
  std::vector<int64_t> X;
  for (size_t K = 0; K < Ops.size(); ++K) {
    if (!Ops[K].Const || !I.operand(K)->shape().IsArray() ||
        !hlo::IsIntegralType(I.operand(K)->shape().element_type()))
      return std::nullopt;
    X.push_back(static_cast<int64_t>(*Ops[K].Const));
  }
  int64_t R = 0;
  switch (I.opcode()) {
  case HloOpcode::kAdd: R = X[0] + X[1]; break;
  case HloOpcode::kSubtract: R = X[0] - X[1]; break;
  case HloOpcode::kMultiply: R = X[0] * X[1]; break;
  case HloOpcode::kMaximum: R = std::max(X[0], X[1]); break;
  case HloOpcode::kMinimum: R = std::min(X[0], X[1]); break;
  case HloOpcode::kDivide:
    if (X[1] == 0)
      return std::nullopt;
    R = X[0] / X[1];
    break;
  case HloOpcode::kConvert: R = X[0]; break;
  case HloOpcode::kRemainder:
    if (X[1] == 0)
      return std::nullopt;
    R = X[0] % X[1];
    break;
  case HloOpcode::kCompare: {
    llvm::Expected<hlo::ComparisonDirection> D = hlo::GetComparisonDirection(I);
    if (!D) {
      llvm::consumeError(D.takeError());
      return std::nullopt;
    }
    using CD = hlo::ComparisonDirection;
    switch (*D) {
    case CD::kEq: R = X[0] == X[1]; break;
    case CD::kNe: R = X[0] != X[1]; break;
    case CD::kLt: R = X[0] < X[1]; break;
    case CD::kLe: R = X[0] <= X[1]; break;
    case CD::kGt: R = X[0] > X[1]; break;
    case CD::kGe: R = X[0] >= X[1]; break;
    }
    return static_cast<double>(R);
  }
  default:
    return std::nullopt;
  }
  int Bits = hlo::PrimitiveTypeBitWidth(S.element_type());
  bool Signed = hlo::IsSignedIntegralType(S.element_type());
  int64_t Lo = Signed ? -(int64_t(1) << (Bits - 1)) : 0;
  int64_t Hi = Signed ? (int64_t(1) << (Bits - 1)) - 1
                      : (Bits >= 63 ? INT64_MAX : (int64_t(1) << Bits) - 1);
  if (R < Lo || R > Hi || std::abs(X[0]) > (int64_t(1) << 31) ||
      (X.size() > 1 && std::abs(X[1]) > (int64_t(1) << 31)))
    return std::nullopt;
  return static_cast<double>(R);
}

// ---- Instructions and computations -------------------------------------------------

llvm::Expected<Val>
DeviceLowering::lower(const HloInstruction &I,
                      llvm::DenseMap<const HloInstruction *, Val> &Vals) {
  std::vector<Val> Ops;
  for (const HloInstruction *O : I.operands())
    Ops.push_back(Vals.lookup(O));
  auto arrayOps = [&]() -> llvm::Error {
    for (size_t K = 0; K < Ops.size(); ++K)
      if (Ops[K].Buf < 0)
        return notLowered(I, "operand " + llvm::Twine(K) + " is not an array");
    return llvm::Error::success();
  };
  switch (I.opcode()) {
  case HloOpcode::kAdd:
  case HloOpcode::kSubtract:
  case HloOpcode::kMultiply:
  case HloOpcode::kMaximum:
  case HloOpcode::kMinimum:
  case HloOpcode::kExp:
  case HloOpcode::kTanh:
  case HloOpcode::kNegate:
  case HloOpcode::kConvert:
  case HloOpcode::kDivide:
  case HloOpcode::kPower:
  case HloOpcode::kRemainder:
  case HloOpcode::kAnd:
  case HloOpcode::kOr:
  case HloOpcode::kXor:
  case HloOpcode::kCompare:
  case HloOpcode::kSelect:
  case HloOpcode::kLog:
  case HloOpcode::kSqrt:
  case HloOpcode::kRsqrt:
  case HloOpcode::kLogistic:
  case HloOpcode::kSin:
  case HloOpcode::kCos:
  case HloOpcode::kAbs:
  case HloOpcode::kNot: {
    if (llvm::Error E = arrayOps())
      return E;
    llvm::Expected<Val> V = lowerElementwise(I, Ops);
    if (V)
      V->Const = foldInteger(I, Ops);
    return V;
  }
  case HloOpcode::kConstant:
    return lowerConstant(I);
  case HloOpcode::kTranspose:
  case HloOpcode::kBroadcast:
  case HloOpcode::kSlice:
  case HloOpcode::kConcatenate:
  case HloOpcode::kPad:
    if (llvm::Error E = arrayOps())
      return E;
    if (llvm::Error E = typeOf(I, I.shape()).takeError())
      return E;
    if (I.opcode() == HloOpcode::kBroadcast) {
      llvm::Expected<Val> V = lowerDataMovement(I, Ops);
      if (V)
        V->Const = Ops[0].Const;
      return V;
    }
    return lowerDataMovement(I, Ops);
  case HloOpcode::kReshape:
  case HloOpcode::kCopy:
    if (llvm::Error E = arrayOps())
      return E;
    if (I.shape().IsArray() && I.operand(0)->shape().IsArray() &&
        I.shape().element_count() == I.operand(0)->shape().element_count())
      return Ops[0]; // row-major elements are already in order
    return notLowered(I, "the shapes differ in element count");
  case HloOpcode::kBitcast:
    if (llvm::Error E = arrayOps())
      return E;
    if (!isDefaultLayout(I.shape()) || !isDefaultLayout(I.operand(0)->shape()))
      return notLowered(I, "a bitcast between layouts permutes elements");
    if (I.shape().element_type() != I.operand(0)->shape().element_type() ||
        I.shape().element_count() != I.operand(0)->shape().element_count())
      return notLowered(I, "a bitcast that changes the element type");
    return Ops[0];
  case HloOpcode::kDot:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerDot(I, Ops);
  case HloOpcode::kTuple: {
    Val V;
    V.IsTuple = true;
    V.Elems = Ops;
    return V;
  }
  case HloOpcode::kGetTupleElement: {
    llvm::Expected<int64_t> Index = hlo::GetTupleIndex(I);
    if (!Index)
      return Index.takeError();
    if (!Ops[0].IsTuple || *Index >= static_cast<int64_t>(Ops[0].Elems.size()))
      return notLowered(I, "operand is not a tuple of that size");
    return Ops[0].Elems[*Index];
  }
  case HloOpcode::kPartitionId:
  case HloOpcode::kReplicaId: {
    llvm::Expected<int> Out = resultBuffer(I, I.shape());
    if (!Out)
      return Out.takeError();
    // Each device is compiled on its own: the id is a constant.
    double Id = I.opcode() == HloOpcode::kPartitionId ? Partition : Replica;
    fill(I, *Out, Id);
    barrier(I.name());
    return arrayVal(*Out, Id);
  }
  case HloOpcode::kAfterAll:
    return Val();
  case HloOpcode::kAddDependency:
  case HloOpcode::kOptimizationBarrier:
    return Ops[0];
  case HloOpcode::kCall:
  case HloOpcode::kFusion: {
    llvm::ArrayRef<HloComputation *> C = I.CalledComputations(
        I.opcode() == HloOpcode::kCall ? "to_apply" : "calls");
    if (C.size() != 1)
      return notLowered(I, "no called computation");
    if (Depth > 64)
      return notLowered(I, "calls nested deeper than 64");
    ++Depth;
    llvm::Expected<Val> R = lowerComputation(*C[0], Ops);
    --Depth;
    return R;
  }
  case HloOpcode::kCustomCall: {
    std::string Target = hlo::GetCustomCallTarget(I);
    if (isIdentityTarget(Target) && Ops.size() == 1)
      return Ops[0];
    return notLowered(I, "custom-call target '" + Target + "'");
  }
  case HloOpcode::kAllGather:
  case HloOpcode::kAllReduce:
  case HloOpcode::kReduceScatter:
  case HloOpcode::kAllToAll:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerCollective(I, I.shape(), Ops);
  case HloOpcode::kCollectivePermute:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerPermute(I, I.shape(), Ops[0]);
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kCollectivePermuteStart:
  case HloOpcode::kAsyncStart:
    return lowerStart(I, Ops);
  case HloOpcode::kAllGatherDone:
  case HloOpcode::kAllReduceDone:
  case HloOpcode::kCollectivePermuteDone:
  case HloOpcode::kAsyncDone:
    // The start already holds the result; all-reduce-start is the result.
    if (!Ops[0].IsTuple)
      return Ops[0];
    if (Ops[0].Elems.size() < 2)
      return notLowered(I, "the start has no result element");
    return Ops[0].Elems[1];
  case HloOpcode::kAsyncUpdate:
    return Ops[0];
  case HloOpcode::kReduce:
    if (llvm::Error E = arrayOps())
      return E;
    return lowerReduce(I, Ops);
  case HloOpcode::kIota:
    return lowerIota(I);
  case HloOpcode::kDynamicSlice:
  case HloOpcode::kDynamicUpdateSlice:
    if (llvm::Error E = arrayOps())
      return E;
    if (llvm::Error E = typeOf(I, I.shape()).takeError())
      return E;
    return lowerDynamicSlice(I, Ops);
  case HloOpcode::kWhile:
    return lowerWhile(I, Ops);
  default:
    return notLowered(I, "no lowering for this opcode yet");
  }
}

llvm::Expected<Val> DeviceLowering::lowerComputation(const HloComputation &C,
                                                     llvm::ArrayRef<Val> Args) {
  llvm::DenseMap<const HloInstruction *, Val> Vals;
  for (const HloInstruction *P : C.parameter_instructions()) {
    if (P->parameter_number() >= static_cast<int64_t>(Args.size()))
      return notLowered(*P, "no argument for this parameter");
    Vals[P] = Args[P->parameter_number()];
  }
  for (const HloInstruction *I : C.MakeInstructionPostOrder()) {
    if (I->opcode() == HloOpcode::kParameter)
      continue;
    llvm::Expected<Val> V = lower(*I, Vals);
    if (!V)
      return V.takeError();
    Vals[I] = std::move(*V);
  }
  return Vals.lookup(C.root_instruction());
}

/// The array leaves of a value with their tuple index paths.
void leaves(const Val &V, const Shape &S, std::vector<unsigned> &Path,
            std::vector<std::tuple<std::vector<unsigned>, int, const Shape *>> &Out) {
  if (S.IsTuple()) {
    for (int64_t K = 0; K < S.tuple_shapes_size(); ++K) {
      Path.push_back(static_cast<unsigned>(K));
      leaves(K < static_cast<int64_t>(V.Elems.size()) ? V.Elems[K] : Val(),
             S.tuple_shapes(K), Path, Out);
      Path.pop_back();
    }
    return;
  }
  if (S.IsArray())
    Out.emplace_back(Path, V.Buf, &S);
}

llvm::Expected<LaunchDevice> DeviceLowering::run() {
  const HloComputation *Entry = HM.entry_computation();
  LaunchDevice D;
  D.Device = static_cast<unsigned>(Device);
  D.Replica = static_cast<unsigned>(Replica);
  D.Partition = static_cast<unsigned>(Partition);
  std::vector<Val> Args;
  for (const HloInstruction *P : Entry->parameter_instructions()) {
    llvm::Expected<Val> V = newValue(*P, P->shape());
    if (!V)
      return V.takeError();
    std::vector<unsigned> Path;
    std::vector<std::tuple<std::vector<unsigned>, int, const Shape *>> Ls;
    leaves(*V, P->shape(), Path, Ls);
    for (auto &[Index, Buf, S] : Ls)
      D.Parameters.push_back({static_cast<unsigned>(P->parameter_number()),
                              P->name().str(), Index, S->ToString(false), 0,
                              Bufs[Buf].PerCore[0]->getName().str()});
    Args.push_back(std::move(*V));
  }
  llvm::Expected<Val> Root = lowerComputation(*Entry, Args);
  if (!Root)
    return Root.takeError();
  std::vector<unsigned> Path;
  std::vector<std::tuple<std::vector<unsigned>, int, const Shape *>> Ls;
  leaves(*Root, Entry->root_instruction()->shape(), Path, Ls);
  for (auto &[Index, Buf, S] : Ls) {
    if (Buf < 0)
      return notLowered(*Entry->root_instruction(), "an output leaf has no data");
    D.Outputs.push_back({0, "", Index, S->ToString(false), 0,
                         Bufs[Buf].PerCore[0]->getName().str()});
  }
  for (CoreEmitter &E : Cores) {
    E.finish();
    D.Modules.push_back(E.take());
  }
  return D;
}

} // namespace

llvm::ArrayRef<llvm::StringRef> getIdentityCustomCallTargets() {
  static const llvm::StringRef Targets[] = {
      "Sharding",         "ShardBarrierFrom",
      "ShardBarrierTo",   "SPMDFullToShardShape",
      "SPMDShardToFullShape", "MoveToHost",
      "MoveToDevice",     "PinToDevice",
      "PinToDeviceSram",  "annotate_device_placement",
      "xla.sdy.FuncResultSharding"};
  return Targets;
}

llvm::Expected<Launch> lowerToLaunch(const hlo::HloModule &M,
                                     const CodegenOptions &Opts) {
  LaunchSize LS{Opts.ReplicaCount ? Opts.ReplicaCount : M.replica_count(),
                Opts.NumPartitions ? Opts.NumPartitions : M.num_partitions()};
  if (Opts.LncSize < 1 || Opts.LncSize > getMaxLncSize(Opts.Arch))
    return makeError("lnc_size " + llvm::Twine(Opts.LncSize) +
                     " is outside the target's range 1.." +
                     llvm::Twine(getMaxLncSize(Opts.Arch)));
  if (!M.entry_computation())
    return makeError("the module has no entry computation");
  Launch L;
  L.HloModule = M.name();
  L.ReplicaCount = static_cast<unsigned>(LS.ReplicaCount);
  L.NumPartitions = static_cast<unsigned>(LS.NumPartitions);
  L.LncSize = Opts.LncSize;
  L.Arch = Opts.Arch;
  for (int64_t D = 0; D < LS.ReplicaCount * LS.NumPartitions; ++D) {
    DeviceLowering DL(M, LS, D, Opts);
    llvm::Expected<LaunchDevice> Dev = DL.run();
    if (!Dev)
      return Dev.takeError();
    L.Devices.push_back(std::move(*Dev));
  }
  return L;
}

} // namespace loom::codegen
