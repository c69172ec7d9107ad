#include "loom/hlo/ir/HloOpcode.h"

#include "llvm/ADT/StringSwitch.h"

namespace loom::hlo {

llvm::StringRef HloOpcodeString(HloOpcode Opcode) {
  switch (Opcode) {
#define LOOM_X(E, S)                                                           \
  case HloOpcode::E:                                                           \
    return S;
    LOOM_HLO_OPCODE_LIST(LOOM_X)
#undef LOOM_X
  }
  return "<unknown>";
}

std::optional<HloOpcode> StringToHloOpcode(llvm::StringRef Text) {
  // A sorted table would do too; opcodes are parsed once per instruction and
  // StringSwitch compiles to length-bucketed compares.
  auto S = llvm::StringSwitch<std::optional<HloOpcode>>(Text)
#define LOOM_X(E, S) .Case(S, HloOpcode::E)
               LOOM_HLO_OPCODE_LIST(LOOM_X)
#undef LOOM_X
                   .Case("clz", HloOpcode::kClz)
                   .Default(std::nullopt);
  return S;
}

bool IsElementwiseUnary(HloOpcode O) {
  switch (O) {
  case HloOpcode::kAbs: case HloOpcode::kAcos: case HloOpcode::kAcosh:
  case HloOpcode::kAsin: case HloOpcode::kAsinh: case HloOpcode::kAtan:
  case HloOpcode::kAtanh: case HloOpcode::kCbrt: case HloOpcode::kCeil:
  case HloOpcode::kClz: case HloOpcode::kConvert: case HloOpcode::kBitcastConvert:
  case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kCosh:
  case HloOpcode::kErf: case HloOpcode::kExp: case HloOpcode::kExpm1:
  case HloOpcode::kFloor: case HloOpcode::kImag: case HloOpcode::kIsFinite:
  case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic:
  case HloOpcode::kNegate: case HloOpcode::kNot: case HloOpcode::kPopulationCount:
  case HloOpcode::kReal: case HloOpcode::kReducePrecision:
  case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven:
  case HloOpcode::kRsqrt: case HloOpcode::kSign: case HloOpcode::kSin:
  case HloOpcode::kSinh: case HloOpcode::kSqrt: case HloOpcode::kTan:
  case HloOpcode::kTanh:
    return true;
  default:
    return false;
  }
}

bool IsElementwiseBinary(HloOpcode O) {
  switch (O) {
  case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2:
  case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kDivide:
  case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMulhi:
  case HloOpcode::kMultiply: case HloOpcode::kOr: case HloOpcode::kPower:
  case HloOpcode::kRemainder: case HloOpcode::kShiftLeft:
  case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical:
  case HloOpcode::kSubtract: case HloOpcode::kXor: case HloOpcode::kStochasticConvert:
    return true;
  default:
    return false;
  }
}

bool IsCollective(HloOpcode O) {
  switch (O) {
  case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
  case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
  case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll:
  case HloOpcode::kRaggedAllToAll: case HloOpcode::kCollectivePermute:
  case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCollectiveBroadcast:
    return true;
  default:
    return false;
  }
}

} // namespace loom::hlo
