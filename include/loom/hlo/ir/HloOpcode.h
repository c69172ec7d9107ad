//===- HloOpcode.h - The XLA opcode set, spelled as XLA prints it ---------===//
#ifndef LOOM_HLO_IR_HLOOPCODE_H
#define LOOM_HLO_IR_HLOOPCODE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace loom::hlo {

// X(enumerator, text). The text is exactly what XLA's printer writes.
#define LOOM_HLO_OPCODE_LIST(X)                                                \
  X(kAbs, "abs")                                                               \
  X(kAcos, "acos")                                                             \
  X(kAcosh, "acosh")                                                           \
  X(kAdd, "add")                                                               \
  X(kAddDependency, "add-dependency")                                          \
  X(kAfterAll, "after-all")                                                    \
  X(kAllGather, "all-gather")                                                  \
  X(kAllGatherDone, "all-gather-done")                                         \
  X(kAllGatherStart, "all-gather-start")                                       \
  X(kAllReduce, "all-reduce")                                                  \
  X(kAllReduceDone, "all-reduce-done")                                         \
  X(kAllReduceStart, "all-reduce-start")                                       \
  X(kAllToAll, "all-to-all")                                                   \
  X(kAnd, "and")                                                               \
  X(kAsin, "asin")                                                             \
  X(kAsinh, "asinh")                                                           \
  X(kAsyncDone, "async-done")                                                  \
  X(kAsyncStart, "async-start")                                                \
  X(kAsyncUpdate, "async-update")                                              \
  X(kAtan, "atan")                                                             \
  X(kAtan2, "atan2")                                                           \
  X(kAtanh, "atanh")                                                           \
  X(kBatchNormGrad, "batch-norm-grad")                                         \
  X(kBatchNormInference, "batch-norm-inference")                               \
  X(kBatchNormTraining, "batch-norm-training")                                 \
  X(kBitcast, "bitcast")                                                       \
  X(kBitcastConvert, "bitcast-convert")                                        \
  X(kBroadcast, "broadcast")                                                   \
  X(kCall, "call")                                                             \
  X(kCbrt, "cbrt")                                                             \
  X(kCeil, "ceil")                                                             \
  X(kCholesky, "cholesky")                                                     \
  X(kClamp, "clamp")                                                           \
  X(kClz, "count-leading-zeros")                                               \
  X(kCollectiveBroadcast, "collective-broadcast")                              \
  X(kCollectivePermute, "collective-permute")                                  \
  X(kCollectivePermuteDone, "collective-permute-done")                         \
  X(kCollectivePermuteStart, "collective-permute-start")                       \
  X(kCompare, "compare")                                                       \
  X(kComplex, "complex")                                                       \
  X(kConcatenate, "concatenate")                                               \
  X(kConditional, "conditional")                                               \
  X(kConstant, "constant")                                                     \
  X(kConvert, "convert")                                                       \
  X(kConvolution, "convolution")                                               \
  X(kCopy, "copy")                                                             \
  X(kCopyDone, "copy-done")                                                    \
  X(kCopyStart, "copy-start")                                                  \
  X(kCos, "cosine")                                                            \
  X(kCosh, "cosh")                                                             \
  X(kCustomCall, "custom-call")                                                \
  X(kDivide, "divide")                                                         \
  X(kDomain, "domain")                                                         \
  X(kDot, "dot")                                                               \
  X(kDynamicReshape, "dynamic-reshape")                                        \
  X(kDynamicSlice, "dynamic-slice")                                            \
  X(kDynamicUpdateSlice, "dynamic-update-slice")                               \
  X(kErf, "erf")                                                               \
  X(kExp, "exponential")                                                       \
  X(kExpm1, "exponential-minus-one")                                           \
  X(kFft, "fft")                                                               \
  X(kFloor, "floor")                                                           \
  X(kFusion, "fusion")                                                         \
  X(kGather, "gather")                                                         \
  X(kGetDimensionSize, "get-dimension-size")                                   \
  X(kGetTupleElement, "get-tuple-element")                                     \
  X(kImag, "imag")                                                             \
  X(kInfeed, "infeed")                                                         \
  X(kIota, "iota")                                                             \
  X(kIsFinite, "is-finite")                                                    \
  X(kLog, "log")                                                               \
  X(kLog1p, "log-plus-one")                                                    \
  X(kLogistic, "logistic")                                                     \
  X(kMap, "map")                                                               \
  X(kMaximum, "maximum")                                                       \
  X(kMinimum, "minimum")                                                       \
  X(kMulhi, "mulhi")                                                           \
  X(kMultiply, "multiply")                                                     \
  X(kNegate, "negate")                                                         \
  X(kNot, "not")                                                               \
  X(kOptimizationBarrier, "opt-barrier")                                       \
  X(kOr, "or")                                                                 \
  X(kOutfeed, "outfeed")                                                       \
  X(kPad, "pad")                                                               \
  X(kParameter, "parameter")                                                   \
  X(kPartitionId, "partition-id")                                              \
  X(kPopulationCount, "popcnt")                                                \
  X(kPower, "power")                                                           \
  X(kRaggedAllToAll, "ragged-all-to-all")                                      \
  X(kRaggedDot, "ragged-dot")                                                  \
  X(kReal, "real")                                                             \
  X(kRecv, "recv")                                                             \
  X(kRecvDone, "recv-done")                                                    \
  X(kReduce, "reduce")                                                         \
  X(kReducePrecision, "reduce-precision")                                      \
  X(kReduceScatter, "reduce-scatter")                                          \
  X(kReduceWindow, "reduce-window")                                            \
  X(kRemainder, "remainder")                                                   \
  X(kReplicaId, "replica-id")                                                  \
  X(kReshape, "reshape")                                                       \
  X(kReverse, "reverse")                                                       \
  X(kRng, "rng")                                                               \
  X(kRngBitGenerator, "rng-bit-generator")                                     \
  X(kRngGetAndUpdateState, "rng-get-and-update-state")                         \
  X(kRoundNearestAfz, "round-nearest-afz")                                     \
  X(kRoundNearestEven, "round-nearest-even")                                   \
  X(kRsqrt, "rsqrt")                                                           \
  X(kScaledDot, "scaled-dot")                                                  \
  X(kScan, "scan")                                                             \
  X(kScatter, "scatter")                                                       \
  X(kSelect, "select")                                                         \
  X(kSelectAndScatter, "select-and-scatter")                                   \
  X(kSend, "send")                                                             \
  X(kSendDone, "send-done")                                                    \
  X(kSetDimensionSize, "set-dimension-size")                                   \
  X(kShiftLeft, "shift-left")                                                  \
  X(kShiftRightArithmetic, "shift-right-arithmetic")                           \
  X(kShiftRightLogical, "shift-right-logical")                                 \
  X(kSign, "sign")                                                             \
  X(kSin, "sine")                                                              \
  X(kSinh, "sinh")                                                             \
  X(kSlice, "slice")                                                           \
  X(kSort, "sort")                                                             \
  X(kSqrt, "sqrt")                                                             \
  X(kStochasticConvert, "stochastic-convert")                                  \
  X(kSubtract, "subtract")                                                     \
  X(kTan, "tan")                                                               \
  X(kTanh, "tanh")                                                             \
  X(kTopK, "topk")                                                             \
  X(kTranspose, "transpose")                                                   \
  X(kTriangularSolve, "triangular-solve")                                      \
  X(kTuple, "tuple")                                                           \
  X(kWhile, "while")                                                           \
  X(kXor, "xor")

enum class HloOpcode : uint8_t {
#define LOOM_X(E, S) E,
  LOOM_HLO_OPCODE_LIST(LOOM_X)
#undef LOOM_X
};

/// The opcode's text as XLA prints it.
llvm::StringRef HloOpcodeString(HloOpcode Opcode);

/// The opcode spelled Text, if any. Older spellings XLA still accepts
/// ("clz" for count-leading-zeros) map to the current opcode.
std::optional<HloOpcode> StringToHloOpcode(llvm::StringRef Text);

/// Binary elementwise arithmetic and compare; unary elementwise arithmetic
/// and convert.
bool IsElementwiseBinary(HloOpcode Opcode);
bool IsElementwiseUnary(HloOpcode Opcode);

/// all-gather, all-reduce, reduce-scatter, all-to-all, collective-permute,
/// collective-broadcast, ragged-all-to-all and their -start forms.
bool IsCollective(HloOpcode Opcode);

} // namespace loom::hlo

#endif
