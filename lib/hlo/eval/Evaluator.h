//===- Evaluator.h - The lock-step SPMD interpreter's driver --------------===//
//
// Internal to lib/hlo/eval. A value is a DeviceValues: one Literal per device
// of the device set the computation runs for (all devices for the entry;
// a subset inside a while loop or conditional whose devices went different
// ways). Each computation walks its post order once; a value is freed as
// soon as its last user has run.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_EVAL_EVALUATOR_H
#define LOOM_LIB_HLO_EVAL_EVALUATOR_H

#include "DeviceThreadPool.h"
#include "EvalInternal.h"

#include "loom/hlo/eval/Interpreter.h"

#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <optional>

namespace loom::hlo {

/// One value per device of the current device set, by position.
using DeviceValues = std::vector<Literal>;

/// What a collective needs to know about the launch.
struct SpmdContext {
  SpmdLayout layout;
  /// Global device ids of the current device set, by position.
  llvm::ArrayRef<int64_t> devices;
  /// A runner for scalar computations (to_apply) on one device.
  std::function<ComputationRunner(int64_t device)> runner_for;
  /// Where per-device work that calls nothing back may run in parallel
  /// (RunPerDevice); null: one device after the other.
  DeviceThreadPool *pool = nullptr;
};

/// fn(k) -> llvm::Expected<Literal> for every device position k < n, on
/// `pool` when given (fn must then be safe to call concurrently and must not
/// call back into the evaluator), else in order. Either way the values come
/// back by position and the error is the one of the first failing device.
template <typename Fn>
llvm::Expected<DeviceValues> RunPerDevice(DeviceThreadPool *pool, size_t n, Fn &&fn) {
  DeviceValues out;
  out.reserve(n);
  if (!pool || n < 2) {
    for (size_t k = 0; k < n; ++k) {
      llvm::Expected<Literal> r = fn(k);
      if (!r)
        return r.takeError();
      out.push_back(std::move(*r));
    }
    return out;
  }
  std::vector<std::optional<llvm::Expected<Literal>>> results(n);
  pool->ParallelFor(n, [&](size_t k) { results[k].emplace(fn(k)); });
  size_t first_failed = n;
  for (size_t k = 0; k < n; ++k) {
    llvm::Expected<Literal> &r = *results[k];
    if (!r) {
      if (first_failed == n)
        first_failed = k;
      else
        llvm::consumeError(r.takeError());
      continue;
    }
    out.push_back(std::move(*r));
  }
  if (first_failed < n)
    return results[first_failed]->takeError();
  return out;
}

/// Operands of one instruction: readable for every kernel, and movable out
/// of their slot when this instruction is their last user.
class Operands {
public:
  size_t size() const { return refs_.size(); }
  const DeviceValues &Get(size_t i) const { return *refs_[i]; }
  /// Operand i for device position k.
  const Literal &At(size_t i, size_t k) const { return (*refs_[i])[k]; }
  /// Operand i, moved when possible, copied otherwise.
  DeviceValues Take(size_t i);
  /// Whether Take(i) moves (this instruction is the value's last reader).
  bool CanTake(size_t i) const { return movable_[i] != nullptr; }

private:
  friend class Evaluator;
  std::vector<const DeviceValues *> refs_;
  std::vector<DeviceValues *> movable_;
  std::function<void(const DeviceValues &)> on_move_;
};

class Evaluator {
public:
  Evaluator(const HloModule &module, const EvalOptions &options);
  ~Evaluator();

  llvm::Expected<std::vector<Literal>> RunEntry(const std::vector<std::vector<Literal>> &args);
  EvalStats stats() const;

  /// Runs `computation` for `devices`; params[p] is parameter p per device
  /// and is consumed.
  llvm::Expected<DeviceValues> RunComputation(const HloComputation &computation,
                                              llvm::ArrayRef<int64_t> devices,
                                              std::vector<DeviceValues> params);
  /// Same, reading the parameters without consuming them.
  llvm::Expected<DeviceValues>
  RunComputationBorrowed(const HloComputation &computation, llvm::ArrayRef<int64_t> devices,
                         llvm::ArrayRef<const DeviceValues *> params);

private:
  struct Slot;
  struct Plan;
  struct Frame;

  llvm::Expected<DeviceValues> Run(const HloComputation &computation,
                                   llvm::ArrayRef<int64_t> devices,
                                   std::vector<DeviceValues> *owned,
                                   llvm::ArrayRef<const DeviceValues *> borrowed);
  const Plan &PlanFor(const HloComputation &computation);
  llvm::Error StepInstruction(const Plan &plan, size_t index, Frame &frame);
  llvm::Error CheckValueLimits(const HloInstruction &inst);
  llvm::Error MemoryLimitError(const HloInstruction &inst) const;
  llvm::Error CheckResult(const HloInstruction &inst, const DeviceValues &values,
                          size_t expected_count);

  /// Evaluates `inst` on its operands for every device of the set.
  llvm::Expected<DeviceValues> Compute(const HloInstruction &inst, Operands &ops,
                                       llvm::ArrayRef<int64_t> devices);
  llvm::Expected<DeviceValues> ComputeLocal(const HloInstruction &inst, Operands &ops,
                                            llvm::ArrayRef<int64_t> devices);
  llvm::Expected<Literal> Constant(const HloInstruction &inst);

  // Control flow and async wrappers (EvalControlFlow.cpp).
  llvm::Expected<DeviceValues> EvalWhile(const HloInstruction &inst, Operands &ops,
                                         llvm::ArrayRef<int64_t> devices);
  llvm::Expected<DeviceValues> EvalConditional(const HloInstruction &inst, Operands &ops,
                                               llvm::ArrayRef<int64_t> devices);
  llvm::Expected<DeviceValues> EvalCalled(const HloInstruction &inst, llvm::StringRef attribute,
                                          Operands &ops, llvm::ArrayRef<int64_t> devices);
  llvm::Expected<DeviceValues> EvalAsyncStart(const HloInstruction &inst, Operands &ops,
                                              llvm::ArrayRef<int64_t> devices);
  llvm::Expected<DeviceValues> EvalAsyncDone(const HloInstruction &inst, Operands &ops);
  llvm::Expected<DeviceValues> EvalStartOp(const HloInstruction &inst, Operands &ops,
                                           llvm::ArrayRef<int64_t> devices);

  /// Runs a scalar computation for one device (reduce, all-reduce, sort).
  ComputationRunner ScalarRunner(int64_t device);
  SpmdContext MakeContext(llvm::ArrayRef<int64_t> devices);

  void Track(int64_t delta);
  static int64_t BytesOf(const DeviceValues &values);
  /// Counts `inst` against max_steps and max_work for `devices`.
  llvm::Error ChargeStep(const HloInstruction &inst, llvm::ArrayRef<int64_t> devices);
  /// The pool when the current instruction's work per device is worth
  /// spreading over threads, else null.
  DeviceThreadPool *PoolForStep(size_t devices);

  const HloModule &module_;
  EvalOptions options_;
  SpmdLayout layout_;
  EvalStats stats_;
  int64_t live_bytes_ = 0;
  int64_t depth_ = 0;
  /// Threads resolved from options_.threads; the pool starts on first use.
  int threads_ = 1;
  std::unique_ptr<DeviceThreadPool> pool_;
  /// Work per device of the instruction being computed (ChargeStep).
  int64_t step_work_ = 0;
  /// Elements computed so far, by global device id.
  std::vector<int64_t> device_work_;
  /// The call-like instruction whose computation runs next (located errors).
  const HloInstruction *caller_ = nullptr;
  llvm::DenseMap<const HloInstruction *, Literal> constants_;
  llvm::DenseMap<const HloComputation *, std::unique_ptr<Plan>> plans_;
  /// Instructions standing in for async sugar (`negate-start`): the wrapped
  /// op with the start's operands and attributes.
  llvm::DenseMap<const HloInstruction *, std::unique_ptr<HloInstruction>> wrapped_;
};

// ---- Collectives (EvalCollectives.cpp) -----------------------------------------

/// all-gather, all-reduce, reduce-scatter, collective-permute, all-to-all,
/// collective-broadcast (and the -start forms of the first ones) with
/// `result_shape` as the op's result.
llvm::Expected<DeviceValues> EvalCollective(const HloInstruction &inst, const Shape &result_shape,
                                            Operands &ops, const SpmdContext &ctx);
/// custom-call AwsNeuronCollectiveMatmul (docs/collective-matmul-contract.md).
llvm::Expected<DeviceValues> EvalCollectiveMatmul(const HloInstruction &inst, Operands &ops,
                                                  const SpmdContext &ctx);

} // namespace loom::hlo

#endif
