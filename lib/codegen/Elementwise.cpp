//===- Elementwise.cpp - Elementwise ops, constants, folding ----------------===//

#include "DeviceLowering.h"

#include "loom/support/FloatFormats.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace loom::codegen::detail {

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

std::unique_ptr<Instruction> makeConvert(std::string Name, unsigned Chunk) {
  static const Engine Es[] = {Engine::ACT, Engine::DVE, Engine::POOL};
  return std::make_unique<InstTensorConvert>(std::move(Name), Es[Chunk % 3]);
}

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
  // Negate, abs, maximum and minimum give one of their operands' values,
  // which no rounding changes.
  bool Exact = Op == HloOpcode::kNegate || Op == HloOpcode::kAbs ||
               Op == HloOpcode::kMaximum || Op == HloOpcode::kMinimum;
  auto floatResultOk = [&]() -> llvm::Error {
    if (hlo::IsFloatingPointType(HTo) && !isArithmeticFloat(*T) && !Exact)
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
    // On integers and pred the total order is the usual one; on floats it
    // orders bit patterns (-NaN < -inf, -0 < +0, NaN payloads), which BIR's
    // IEEE comparisons cannot see and no BIR op reinterprets.
    if (const hlo::HloText *Ty = I.FindAttribute("type"))
      if (Ty->ref() == "TOTALORDER" && FloatIn)
        return notLowered(I, "a total-order comparison of floats orders bit "
                             "patterns; BIR compares IEEE values");
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
        (I.operand(0)->shape().rank() != I.shape().rank() &&
         I.operand(0)->shape().rank() != 0))
      return notLowered(I, "a predicate of another rank");
    if (I.operand(0)->shape().rank() != I.shape().rank()) {
      // A scalar predicate picks a whole operand: it is broadcast (a step-0
      // read) into a predicate of the result's shape first.
      uint64_t E = I.shape().element_count();
      Ins[0] = newBuffer((I.name() + ".pred").str(), Bufs[Ops[0].Buf].T, E);
      if (E > 0) {
        move(I, Ops[0].Buf, 0, {{0, E}}, Ins[0], 0, {{1, E}});
        barrier(I.name());
      }
    }
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
    if (HTo == PrimitiveType::PRED && HIn != PrimitiveType::PRED) {
      // HLO's conversion to pred is x != 0 (NaN is true, -0 false), where
      // TensorConvert would truncate: a NotEqual against zeros of the
      // operand's type (`<instruction>.zero`).
      uint64_t E = I.shape().element_count();
      int Zero = newBuffer((I.name() + ".zero").str(), Bufs[Ins[0]].T, E);
      if (E > 0) {
        fill(I, Zero, 0.0);
        barrier((I.name() + ".zero").str());
      }
      Ins.push_back(Zero);
      tensorTensor(ArithOp::NotEqual);
      break;
    }
    // A 64-bit integer goes through double into the narrow float types,
    // which may round twice where the interpreter rounds once.
    if ((HIn == PrimitiveType::S64 || HIn == PrimitiveType::U64) &&
        hlo::IsFloatingPointType(HTo) && HTo != PrimitiveType::F32)
      return notLowered(I, "a conversion of a 64-bit integer to " +
                               hlo::PrimitiveTypeName(HTo) +
                               " may round twice in TensorConvert");
    Make = makeConvert;
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
    if (Tok == "inf" || Tok == "-inf") {
      Vals.push_back(Tok == "inf" ? HUGE_VAL : -HUGE_VAL);
      continue;
    }
    if (Tok == "nan" || Tok == "-nan") {
      Vals.push_back(Tok == "nan" ? std::nan("") : -std::nan(""));
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

/// The bytes of Value in BIR type T, rounded once from the double as the
/// interpreter rounds constants (docs/interpreter.md, "Constants").
void encodeValue(DataType T, double V, uint8_t *P) {
  auto put = [&](auto X) { std::memcpy(P, &X, sizeof(X)); };
  switch (T) {
  case DataType::FP32: return put(static_cast<float>(V));
  case DataType::BF16:
    return put(static_cast<uint16_t>(doubleToSmallFloat(SmallFloat::BF16, V)));
  case DataType::FP16:
    return put(static_cast<uint16_t>(doubleToSmallFloat(SmallFloat::F16, V)));
  case DataType::FP8E4M3:
    *P = static_cast<uint8_t>(doubleToSmallFloat(SmallFloat::F8E4M3, V, false));
    return;
  case DataType::FP8E5M2:
    *P = static_cast<uint8_t>(doubleToSmallFloat(SmallFloat::F8E5M2, V));
    return;
  case DataType::INT8: return put(static_cast<int8_t>(V));
  case DataType::INT16: return put(static_cast<int16_t>(V));
  case DataType::INT32: return put(static_cast<int32_t>(V));
  case DataType::UINT8: return put(static_cast<uint8_t>(V));
  case DataType::UINT16: return put(static_cast<uint16_t>(V));
  case DataType::UINT32: return put(static_cast<uint32_t>(V));
  case DataType::INT64: return put(static_cast<int64_t>(V));
  case DataType::UINT64: return put(static_cast<uint64_t>(V));
  }
}

/// The values of a 64-bit integer literal, exactly (a double holds only
/// 53 bits); none when a value is not a plain integer of the type.
static std::optional<std::vector<uint64_t>> parseInt64Literal(llvm::StringRef Text,
                                                       bool Signed) {
  std::vector<uint64_t> Vals;
  size_t I = 0;
  while (I < Text.size()) {
    char C = Text[I];
    if (C == '{' || C == '}' || C == ',' || C == ' ' || C == '\n' || C == '\t') {
      ++I;
      continue;
    }
    size_t J = I;
    while (J < Text.size() && !llvm::StringRef("{}, \n\t").contains(Text[J]))
      ++J;
    llvm::StringRef Tok = Text.slice(I, J);
    if (Tok == "true" || Tok == "false") {
      Vals.push_back(Tok == "true");
    } else if (Signed) {
      int64_t V;
      if (Tok.getAsInteger(10, V))
        return std::nullopt;
      Vals.push_back(static_cast<uint64_t>(V));
    } else {
      uint64_t V;
      if (Tok.getAsInteger(10, V))
        return std::nullopt;
      Vals.push_back(V);
    }
    I = J;
  }
  return Vals;
}

/// A 64-bit integer constant, read exactly; it carries its value for
/// folding only when a double holds it exactly.
llvm::Expected<Val> DeviceLowering::lowerInt64Constant(const HloInstruction &I,
                                                       int Out,
                                                       llvm::StringRef Text) {
  bool Signed = Bufs[Out].T == DataType::INT64;
  std::optional<std::vector<uint64_t>> Vals =
      parseInt64Literal(Text, Signed);
  uint64_t N = Bufs[Out].Elems;
  if (!Vals)
    return notLowered(I, "a value that is not an integer of the type");
  if (Vals->size() == 1 && N != 1)
    Vals->assign(N, (*Vals)[0]);
  if (Vals->size() != N)
    return notLowered(I, "the literal has " + llvm::Twine(Vals->size()) +
                             " values for " + llvm::Twine(N) + " elements");
  if (N == 0)
    return arrayVal(Out);
  std::vector<uint8_t> Bytes(N * 8);
  std::memcpy(Bytes.data(), Vals->data(), N * 8);
  for (MemoryLocation *Loc : Bufs[Out].PerCore)
    Loc->setInitialData(Bytes);
  uint64_t V0 = (*Vals)[0];
  bool Splat = llvm::all_of(*Vals, [&](uint64_t V) { return V == V0; });
  constexpr int64_t Max = int64_t(1) << 53; // doubles hold these exactly
  int64_t S = static_cast<int64_t>(V0);
  bool Exact = Signed ? S >= -Max && S <= Max : V0 <= uint64_t(Max);
  double D = Signed ? double(S) : double(V0);
  return arrayVal(Out, Splat && Exact ? std::optional<double>(D) : std::nullopt);
}

/// A constant is the initial data of its location: no instruction runs.
/// The elements of a tuple literal `( a, b, ... )`: its top-level
/// comma-separated parts; none when the text is not one.
static std::optional<std::vector<llvm::StringRef>>
splitTupleLiteral(llvm::StringRef Text) {
  Text = Text.trim();
  if (!Text.consume_front("(") || !Text.consume_back(")"))
    return std::nullopt;
  std::vector<llvm::StringRef> Parts;
  int Depth = 0;
  size_t Start = 0;
  for (size_t K = 0; K < Text.size(); ++K) {
    char C = Text[K];
    if (C == '{' || C == '(')
      ++Depth;
    else if (C == '}' || C == ')')
      --Depth;
    else if (C == ',' && Depth == 0) {
      Parts.push_back(Text.slice(Start, K).trim());
      Start = K + 1;
    }
  }
  if (!Text.trim().empty())
    Parts.push_back(Text.substr(Start).trim());
  return Parts;
}

llvm::Expected<Val> DeviceLowering::lowerConstant(const HloInstruction &I) {
  return lowerConstantOf(I, I.shape(), I.literal_text(), "");
}

/// A constant of shape S from its literal text; a tuple constant is the
/// tuple of its elements' constants.
llvm::Expected<Val> DeviceLowering::lowerConstantOf(const HloInstruction &I,
                                                    const Shape &S,
                                                    llvm::StringRef Text,
                                                    const std::string &Suffix) {
  if (S.IsTuple()) {
    std::optional<std::vector<llvm::StringRef>> Parts = splitTupleLiteral(Text);
    if (!Parts || Parts->size() != static_cast<size_t>(S.tuple_shapes_size()))
      return notLowered(I, "a tuple literal that does not match its shape");
    Val V;
    V.IsTuple = true;
    for (int64_t K = 0; K < S.tuple_shapes_size(); ++K) {
      llvm::Expected<Val> E = lowerConstantOf(I, S.tuple_shapes(K), (*Parts)[K],
                                              Suffix + "." + std::to_string(K));
      if (!E)
        return E.takeError();
      V.Elems.push_back(std::move(*E));
    }
    return V;
  }
  if (!S.IsArray())
    return notLowered(I, "a constant that is neither an array nor a tuple");
  llvm::Expected<int> Out = resultBuffer(I, S, Suffix);
  if (!Out)
    return Out.takeError();
  uint64_t N = Bufs[*Out].Elems;
  DataType T64 = Bufs[*Out].T;
  if (T64 == DataType::INT64 || T64 == DataType::UINT64)
    return lowerInt64Constant(I, *Out, Text);
  // A dump may elide a large literal's values (`{...}`); hlo-run refuses
  // such a module too, as the values are not in the text.
  if (Text.contains("..."))
    return notLowered(I, "the constant's values are elided ({...})");
  std::optional<std::vector<double>> Vals = parseLiteral(Text);
  if (!Vals)
    return notLowered(I, "a value that is not a number, inf or nan (NaN "
                         "payloads and hexadecimal text are not read)");
  if (Vals->size() == 1 && N != 1)
    Vals->assign(N, (*Vals)[0]);
  if (Vals->size() != N)
    return notLowered(I, "the literal has " + llvm::Twine(Vals->size()) +
                             " values for " + llvm::Twine(N) + " elements");
  if (N == 0)
    return arrayVal(*Out);
  DataType T = Bufs[*Out].T;
  unsigned Size = getDataTypeSize(T);
  std::vector<uint8_t> Bytes(N * Size);
  for (uint64_t K = 0; K < N; ++K)
    encodeValue(T, (*Vals)[K], Bytes.data() + K * Size);
  for (MemoryLocation *Loc : Bufs[*Out].PerCore)
    Loc->setInitialData(Bytes);
  bool Splat = llvm::all_of(*Vals, [&](double V) { return V == (*Vals)[0]; });
  return arrayVal(*Out, Splat ? std::optional<double>((*Vals)[0]) : std::nullopt);
}

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

} // namespace loom::codegen::detail
