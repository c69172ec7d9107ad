//===- EvalInternal.h - Kernels shared by the interpreter's files ---------===//
//
// Internal to lib/hlo/eval. The kernels here work on one device's values;
// Evaluator.cpp runs them for every device and owns control flow,
// collectives and memory accounting.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_EVAL_EVALINTERNAL_H
#define LOOM_LIB_HLO_EVAL_EVALINTERNAL_H

#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

namespace loom::hlo {

/// "<op> '<name>': <msg>": every interpreter error names the instruction
/// and its op.
llvm::Error EvalError(const HloInstruction &inst, const llvm::Twine &msg);
/// "unsupported <what> in <op> '<name>'".
llvm::Error UnsupportedError(const HloInstruction &inst, const llvm::Twine &what);

/// The first error of a loop that cannot return early (callbacks).
class ErrorSlot {
public:
  ErrorSlot() { (void)static_cast<bool>(error_); } // success, marked checked
  bool failed() const { return failed_; }
  void Set(llvm::Error error) {
    if (failed_) {
      llvm::consumeError(std::move(error));
      return;
    }
    error_ = std::move(error);
    failed_ = true;
  }
  llvm::Error Take() {
    failed_ = false;
    return std::move(error_);
  }

private:
  llvm::Error error_ = llvm::Error::success();
  bool failed_ = false;
};

/// Runs a scalar computation (a reduce's or all-reduce's to_apply) for one
/// device: arguments in parameter order, result as the root produced it.
using ComputationRunner = std::function<llvm::Expected<Literal>(
    const HloComputation &computation, std::vector<Literal> args)>;

/// Folds of a binary scalar computation. When the computation is one
/// elementwise op of its two parameters, folds run as typed loops;
/// otherwise every step calls the computation through the runner.
class Combiner {
public:
  Combiner(const HloComputation &computation, ComputationRunner runner);
  /// Whether the computation is one elementwise op of its two parameters
  /// (folds then run as typed loops when the element type matches).
  bool is_fast() const { return fast_opcode_.has_value(); }
  /// acc[i] = f(acc[i], x[i]) for every element (shapes equal).
  llvm::Error Accumulate(const HloInstruction &inst, Literal &acc, const Literal &x) const;
  /// One step on scalars (any arity: variadic reduces pass N accumulators
  /// and N values; the result is a tuple of N when N > 1).
  llvm::Expected<Literal> Call(std::vector<Literal> args) const;
  const HloComputation &computation() const { return computation_; }
  /// The fast op, with operands swapped when the root reads (p1, p0).
  std::optional<HloOpcode> fast_opcode() const { return fast_opcode_; }
  bool swapped() const { return swapped_; }

private:
  const HloComputation &computation_;
  ComputationRunner runner_;
  std::optional<HloOpcode> fast_opcode_;
  bool swapped_ = false;
};

// ---- Bounded work (EvalWork.cpp) ------------------------------------------------

/// a + b, saturating at INT64_MAX (both non-negative).
int64_t SatAdd(int64_t a, int64_t b);
/// Elements of an array shape: 0 when any dimension is 0 whatever the
/// others, INT64_MAX when the product overflows.
int64_t ElementCountOf(const Shape &shape);
/// What `inst` costs one device against EvalOptions::max_work, from its
/// shapes (at least 1): a dot's multiply-adds, a reduction's inputs, the
/// result's elements for the rest (docs/interpreter.md, "Bounded work").
int64_t WorkOf(const HloInstruction &inst);
/// Elements of a reduce-window's or select-and-scatter's window (1 when it
/// does not parse: the kernel reports that).
int64_t WindowElements(const HloInstruction &inst);

// ---- Element access and iteration (EvalInternal.cpp) ---------------------------

/// Element i of an array as a scalar literal of its type (bytes copied).
Literal ScalarAt(const Literal &array, int64_t i);
/// Writes a scalar literal of the array's type into element i.
void StoreScalar(Literal &array, int64_t i, const Literal &scalar);

/// A signed integer ordering the `width`-bit float pattern `bits` in IEEE
/// total order: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t TotalOrderKey(uint64_t bits, int width);
/// TotalOrderKey of element i of a float array.
int64_t TotalOrderKeyAt(const Literal &array, int64_t i);

/// `a <dir> b`.
template <typename V> bool CompareValues(ComparisonDirection dir, V a, V b) {
  switch (dir) {
  case ComparisonDirection::kEq: return a == b;
  case ComparisonDirection::kNe: return a != b;
  case ComparisonDirection::kGe: return a >= b;
  case ComparisonDirection::kGt: return a > b;
  case ComparisonDirection::kLe: return a <= b;
  case ComparisonDirection::kLt: return a < b;
  }
  return false;
}

/// Calls fn(multi-index) for every index of `dims` in row-major order
/// (nothing when a dimension is 0). `fn` returns void, or bool: false stops
/// the walk.
template <typename Fn> void ForEachIndex(llvm::ArrayRef<int64_t> dims, Fn &&fn) {
  for (int64_t d : dims)
    if (d <= 0)
      return;
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    if constexpr (std::is_same_v<std::invoke_result_t<Fn &, llvm::ArrayRef<int64_t>>, bool>) {
      if (!fn(llvm::ArrayRef<int64_t>(index)))
        return;
    } else {
      fn(llvm::ArrayRef<int64_t>(index));
    }
    int64_t d = static_cast<int64_t>(dims.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

// ---- Elementwise (EvalElementwise.cpp) ---------------------------------------
llvm::Expected<Literal> EvalUnary(const HloInstruction &inst, const Literal &operand);
llvm::Expected<Literal> EvalBinary(const HloInstruction &inst, const Literal &lhs,
                                   const Literal &rhs);
/// In place: lhs = op(lhs, rhs); op is a binary elementwise opcode.
llvm::Error ApplyBinaryInPlace(const HloInstruction &inst, HloOpcode opcode, Literal &lhs,
                               const Literal &rhs, bool swapped);
llvm::Expected<Literal> EvalCompare(const HloInstruction &inst, const Literal &lhs,
                                    const Literal &rhs);
llvm::Expected<Literal> EvalSelect(const HloInstruction &inst, const Literal &pred,
                                   const Literal &on_true, const Literal &on_false);
llvm::Expected<Literal> EvalClamp(const HloInstruction &inst, const Literal &lo,
                                  const Literal &x, const Literal &hi);
/// XLA's convert of an array to `type` (complex to real is an error).
llvm::Expected<Literal> ConvertLiteral(const HloInstruction &inst, const Literal &operand,
                                       const Shape &result_shape);
llvm::Expected<Literal> EvalBitcastConvert(const HloInstruction &inst, const Literal &operand);
llvm::Expected<Literal> EvalReducePrecision(const HloInstruction &inst, const Literal &operand);
/// High half of the double-width product (s32/u32/s64/u64).
llvm::Expected<Literal> EvalMulhi(const HloInstruction &inst, const Literal &lhs,
                                  const Literal &rhs);
/// Whether EvalUnary / EvalBinary know `opcode`.
bool IsEvalUnaryOpcode(HloOpcode opcode);
bool IsEvalBinaryOpcode(HloOpcode opcode);

// ---- Data movement (EvalShapeOps.cpp) ----------------------------------------
/// Row-major strides in elements.
std::vector<int64_t> RowMajorStrides(llvm::ArrayRef<int64_t> dims);
/// Element i of an integer index array as int64 (u64 saturates).
int64_t IndexAt(const Literal &indices, int64_t i);
/// Reads a scalar integer operand (any integer type) as int64.
int64_t ScalarToInt64(const Literal &scalar);

llvm::Expected<Literal> EvalTranspose(const HloInstruction &inst, const Literal &operand);
Literal TransposeLiteral(const Literal &operand, llvm::ArrayRef<int64_t> permutation,
                         const Shape &result_shape);
llvm::Expected<Literal> EvalBroadcast(const HloInstruction &inst, const Literal &operand);
llvm::Expected<Literal> EvalSlice(const HloInstruction &inst, const Literal &operand);
/// Slice of [start, start+size) in every dimension (no clamping).
Literal SliceLiteral(const Literal &operand, llvm::ArrayRef<int64_t> starts,
                     llvm::ArrayRef<int64_t> sizes, const Shape &result_shape);
llvm::Expected<Literal> EvalDynamicSlice(const HloInstruction &inst,
                                         llvm::ArrayRef<const Literal *> operands);
llvm::Expected<Literal> EvalDynamicUpdateSlice(const HloInstruction &inst, Literal operand,
                                               llvm::ArrayRef<const Literal *> rest);
/// Writes `update` into `target` at `starts` (no clamping; must fit).
void UpdateSliceInPlace(Literal &target, const Literal &update,
                        llvm::ArrayRef<int64_t> starts);
llvm::Expected<Literal> EvalConcatenate(const HloInstruction &inst,
                                        llvm::ArrayRef<const Literal *> operands);
/// Concatenation of arrays along `dim` into `result_shape`.
Literal ConcatenateLiterals(llvm::ArrayRef<const Literal *> operands, int64_t dim,
                            const Shape &result_shape);
llvm::Expected<Literal> EvalPad(const HloInstruction &inst, const Literal &operand,
                                const Literal &pad_value);
llvm::Expected<Literal> EvalReverse(const HloInstruction &inst, const Literal &operand);
llvm::Expected<Literal> EvalIota(const HloInstruction &inst);
llvm::Expected<Literal> EvalReshape(const HloInstruction &inst, Literal operand);
llvm::Expected<Literal> EvalBitcast(const HloInstruction &inst, Literal operand);
/// Copy of `lit` under `shape` (same element count and type).
Literal ReshapeLiteral(Literal lit, const Shape &shape);
llvm::Expected<Literal> EvalGather(const HloInstruction &inst, const Literal &operand,
                                   const Literal &indices);
/// Operands: N arrays, the indices, N updates.
llvm::Expected<Literal> EvalScatter(const HloInstruction &inst,
                                    llvm::ArrayRef<const Literal *> operands,
                                    const ComputationRunner &runner);

// ---- Dot and reductions (EvalDot.cpp, EvalReduce.cpp) -------------------------
llvm::Expected<Literal> EvalDot(const HloInstruction &inst, const Literal &lhs,
                                const Literal &rhs);
/// The dot of `lhs` and `rhs` with explicit dimension numbers into
/// `result_shape` (custom-call AwsNeuronCollectiveMatmul shares it).
llvm::Expected<Literal> DotLiterals(const HloInstruction &inst, const Literal &lhs,
                                    const Literal &rhs, const DotDimensionNumbers &dnums,
                                    const Shape &result_shape);
llvm::Expected<Literal> EvalReduce(const HloInstruction &inst,
                                   llvm::ArrayRef<const Literal *> operands,
                                   const Combiner &combiner);
llvm::Expected<Literal> EvalReduceWindow(const HloInstruction &inst,
                                         llvm::ArrayRef<const Literal *> operands,
                                         const Combiner &combiner);
llvm::Expected<Literal> EvalSelectAndScatter(const HloInstruction &inst, const Literal &operand,
                                             const Literal &source, const Literal &init,
                                             const ComputationRunner &runner);
llvm::Expected<Literal> EvalMap(const HloInstruction &inst,
                                llvm::ArrayRef<const Literal *> operands,
                                const ComputationRunner &runner);
llvm::Expected<Literal> EvalSort(const HloInstruction &inst,
                                 llvm::ArrayRef<const Literal *> operands,
                                 const ComputationRunner &runner);

} // namespace loom::hlo

#endif
