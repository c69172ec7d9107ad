//===- HloAttributeNames.cpp - The attribute names HLO text may carry ----===//

#include "loom/hlo/ir/HloAttributeNames.h"

#include <algorithm>

namespace loom::hlo {
namespace {

// Sorted (std::binary_search); HloAttributeNamesTest checks the order.
// Grouped by what writes them would read better, but one sorted list is
// the one place a reader looks a name up.
constexpr llvm::StringRef kInstructionAttributes[] = {
    "algorithm",                     // dot, rng-bit-generator
    "api_version",                   // custom-call
    "async_execution_thread",        // async-start/-update/-done
    "async_group_id",                // async ops of older dumps
    "backend_config",                // any
    "batch_group_count",             // convolution, custom-call
    "body",                          // while
    "branch_computations",           // conditional
    "called_computations",           // custom-call
    "calls",                         // fusion, async-start
    "channel_id",                    // collectives, send/recv
    "collapsed_slice_dims",          // gather
    "condition",                     // while
    "constrain_layout",              // collectives
    "control-predecessors",          // any
    "conv_kind",                     // convolution
    "convolution_kind",              // convolution (XLA's tests)
    "cross_program_prefetch_index",  // copy-start
    "custom_call_has_side_effect",   // custom-call
    "custom_call_target",            // custom-call
    "delta",                         // rng-get-and-update-state
    "dim_labels",                    // convolution, custom-call
    "dimensions",                    // broadcast, reduce, transpose, ...
    "direction",                     // compare
    "distribution",                  // rng
    "domain",                        // domain
    "dynamic_slice_sizes",           // dynamic-slice
    "epsilon",                       // batch-norm-*
    "exponent_bits",                 // reduce-precision
    "false_computation",             // conditional
    "feature_group_count",           // convolution, custom-call
    "feature_index",                 // batch-norm-*
    "fft_length",                    // fft
    "fft_type",                      // fft
    "frontend_attributes",           // any
    "has_dynamic_root",              // older dumps
    "index",                         // get-tuple-element
    "index_vector_dim",              // gather, scatter
    "indices_are_sorted",            // gather, scatter
    "infeed_config",                 // infeed
    "inferred_dimension",            // reshape
    "input_batching_dims",           // scatter
    "inserted_window_dims",          // scatter
    "iota_dimension",                // iota
    "is_associative",                // scan
    "is_composite",                  // call
    "is_cross_program_prefetch",     // copy-start of older dumps
    "is_host_transfer",              // send/recv
    "is_reverse",                    // scan
    "is_stable",                     // sort
    "k",                             // topk
    "kind",                          // fusion
    "largest",                       // topk
    "left_side",                     // triangular-solve
    "lhs_batch_dims",                // dot
    "lhs_contracting_dims",          // dot
    "lhs_ragged_dims",               // ragged-dot
    "literal",                       // custom-call
    "lower",                         // triangular-solve, cholesky
    "mantissa_bits",                 // reduce-precision
    "metadata",                      // any
    "mode",                          // all-reduce, reduce-scatter
    "num_carries",                   // scan
    "offset_dims",                   // gather
    "operand_batching_dims",         // gather
    "operand_layout_constraints",    // custom-call
    "operand_precision",             // dot, convolution, custom-call
    "origin",                        // any (original value, newer dumps)
    "original_value",                // any (original value, older dumps)
    "outfeed_config",                // outfeed
    "outfeed_shape",                 // outfeed
    "output_to_operand_aliasing",    // custom-call, fusion, async-start
    "padding",                       // pad
    "padding_type",                  // custom-call
    "parameter_replication",         // parameter
    "replica_groups",                // collectives
    "result_accuracy",               // exp, log, tanh, ...
    "rhs_batch_dims",                // dot
    "rhs_contracting_dims",          // dot
    "rhs_group_dims",                // ragged-dot
    "scatter",                       // select-and-scatter
    "scatter_dims_to_operand_dims",  // scatter
    "scatter_indices_batching_dims", // scatter
    "schedule",                      // custom-call
    "select",                        // select-and-scatter
    "sharding",                      // any
    "slice",                         // slice
    "slice_sizes",                   // gather, collective-permute
    "source_target_pairs",           // collective-permute
    "sparsity",                      // sparse dot
    "sparsity_config",               // sparse convolution
    "start_index_map",               // gather
    "start_indices_batching_dims",   // gather
    "statistics",                    // any
    "to_apply",                      // reduce, all-reduce, call, map, ...
    "transpose_a",                   // triangular-solve
    "true_computation",              // conditional
    "type",                          // compare
    "unique_indices",                // scatter
    "unit_diagonal",                 // triangular-solve
    "update_window_dims",            // scatter
    "use_global_device_ids",         // collectives
    "window",                        // convolution, reduce-window, ...
};

constexpr llvm::StringRef kModuleAttributes[] = {
    "alias_passthrough_params",
    "allow_spmd_sharding_propagation_to_output",
    "allow_spmd_sharding_propagation_to_parameters",
    "buffer_donor",
    "debug_attributes",
    "entry_computation_layout",
    "frontend_attributes",
    "input_output_alias",
    "is_scheduled",
    "num_partitions",
    "origin_recovery_table",
    "replica_count",
};

bool Contains(llvm::ArrayRef<llvm::StringRef> sorted, llvm::StringRef name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

} // namespace

llvm::ArrayRef<llvm::StringRef> KnownInstructionAttributeNames() {
  return kInstructionAttributes;
}
llvm::ArrayRef<llvm::StringRef> KnownModuleAttributeNames() { return kModuleAttributes; }

bool IsKnownInstructionAttribute(llvm::StringRef name) {
  return Contains(kInstructionAttributes, name);
}
bool IsKnownModuleAttribute(llvm::StringRef name) { return Contains(kModuleAttributes, name); }

llvm::StringRef ClosestKnownName(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> known) {
  llvm::StringRef best;
  unsigned best_distance = ~0u;
  for (llvm::StringRef candidate : known) {
    unsigned distance = name.edit_distance(candidate, /*AllowReplacements=*/true);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

} // namespace loom::hlo
