//===- Interpreter.h - Run an HLO module on every device of an SPMD launch ===//
//
// The interpreter runs the entry computation on replica_count *
// num_partitions devices in lock step: every instruction is evaluated for
// all devices before the next one runs, so a collective sees the operands of
// every participant at once. docs/interpreter.md describes the execution
// model, the numeric rules and the supported ops.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_EVAL_INTERPRETER_H
#define LOOM_HLO_EVAL_INTERPRETER_H

#include "loom/hlo/ir/IdentityCustomCalls.h"
#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/ir/HloModule.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace loom::hlo {

/// Device d is replica d / num_partitions, partition d % num_partitions
/// (XLA's flattened global device id).
struct SpmdLayout {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  int64_t num_devices() const { return replica_count * num_partitions; }
  int64_t replica_id(int64_t device) const { return device / num_partitions; }
  int64_t partition_id(int64_t device) const { return device % num_partitions; }
  static SpmdLayout FromModule(const HloModule &module) {
    return {module.replica_count(), module.num_partitions()};
  }
};

struct EvalOptions {
  /// Largest element count of any single array value (per device).
  int64_t max_elements_per_value = int64_t{1} << 28;
  /// Bound on the iterations of one while loop; exceeding it is an error
  /// (an endless loop fails in seconds instead of hanging a test).
  int64_t max_while_iterations = int64_t{1} << 20;
  /// Bound on the bytes held by all live values of all devices together.
  int64_t max_live_bytes = int64_t{4} << 30;
  /// Bound on nested calls (call / fusion / while / conditional / to_apply).
  int64_t max_call_depth = 256;
  /// Worker threads the devices run on between collectives; 0 means
  /// std::thread::hardware_concurrency(). Results, errors and stats are the
  /// same for every count (docs/interpreter.md, "Threads").
  int threads = 0;
  /// Bound on executed instructions: an instruction run for n devices counts
  /// n, the instructions of a called computation (while body and condition,
  /// call, fusion, to_apply) count each time they run. Exceeding it is an
  /// error naming the instruction (docs/interpreter.md, "Bounded work").
  int64_t max_steps = int64_t{1} << 25;
  /// Bound on the elements computed by any one device: an instruction
  /// counts the elements of its result, a dot its multiply-adds, a reduction
  /// the elements it reads (docs/interpreter.md, "Bounded work", lists every
  /// op). An instruction that would exceed it is refused before it runs,
  /// with an error naming it.
  int64_t max_work = int64_t{1} << 34;
};

/// What a run cost; for tests and diagnostics.
struct EvalStats {
  /// Largest total of bytes held by live values at any time (all devices).
  int64_t peak_live_bytes = 0;
  /// Bytes still held when the run ended (0 unless a value leaked).
  int64_t final_live_bytes = 0;
  int64_t instructions_evaluated = 0;
  /// Executed instructions as max_steps counts them (all devices).
  int64_t steps = 0;
  /// Elements computed as max_work counts them, by the busiest device.
  int64_t work = 0;
};

/// Runs the entry computation on every device in lock step with the layout
/// given by the module's replica_count and num_partitions. args[d] holds
/// device d's parameters in parameter order; each must have the parameter's
/// shape (layout ignored). Returns each device's result.
llvm::Expected<std::vector<Literal>>
RunSpmd(const HloModule &module, const std::vector<std::vector<Literal>> &args);

/// Same with explicit options; `stats` (may be null) receives the cost.
llvm::Expected<std::vector<Literal>>
RunSpmd(const HloModule &module, const std::vector<std::vector<Literal>> &args,
        const EvalOptions &options, EvalStats *stats);

// IsIdentityCustomCallTarget: loom/hlo/ir/IdentityCustomCalls.h.

} // namespace loom::hlo

#endif
