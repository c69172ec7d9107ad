//===- HloAttributes.h - Typed views of an instruction's text attributes -===//
//
// HloInstruction keeps attributes as the text XLA printed. These functions
// decode the ones the verifier, the passes and the interpreter need, and
// encode them back in XLA's spelling. A malformed value is an llvm::Error
// naming the instruction and the attribute.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_HLOATTRIBUTES_H
#define LOOM_HLO_IR_HLOATTRIBUTES_H

#include "loom/hlo/ir/HloInstruction.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <forward_list>
#include <optional>
#include <string>
#include <vector>

namespace loom::hlo {

// ---- Generic text decoders --------------------------------------------------

/// `{1,2,3}` (or `{}`) to integers.
llvm::Expected<std::vector<int64_t>> ParseIntList(llvm::StringRef text);
/// `{1,2,3}` from integers.
std::string FormatIntList(llvm::ArrayRef<int64_t> values);
/// A quoted string with C escapes to its contents; nullopt if not quoted.
std::optional<std::string> UnquoteString(llvm::StringRef text);
/// UnquoteString without a copy where it can: the contents as a view of
/// `text` when they have no escapes, otherwise unescaped into `storage`
/// (and a view of it); nullopt if not quoted.
std::optional<llvm::StringRef> UnquoteStringView(llvm::StringRef text, std::string &storage);
/// `"..."` with quotes and backslashes escaped.
std::string QuoteString(llvm::StringRef text);
/// QuoteString(text) appended to `out`.
void AppendQuotedString(std::string &out, llvm::StringRef text);

// ---- Replica groups ---------------------------------------------------------

/// Replica groups in either form XLA prints: `{{0,1},{2,3}}` (or `{}`) and
/// the iota form `[G,S]<=[dims]` optionally followed by `T(perm)`.
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;
  bool was_iota = false;
};
llvm::Expected<ReplicaGroups> ParseReplicaGroups(llvm::StringRef text);
/// Explicit form `{{0,1},{2,3}}`.
std::string FormatReplicaGroups(const std::vector<std::vector<int64_t>> &groups);

// ---- Instruction accessors ----------------------------------------------------

/// `dimensions={...}` (broadcast, transpose, reduce, reverse, all-gather,
/// concatenate, ...). Missing attribute: error.
llvm::Expected<std::vector<int64_t>> GetDimensions(const HloInstruction &inst);
/// get-tuple-element's `index=`.
llvm::Expected<int64_t> GetTupleIndex(const HloInstruction &inst);
/// `iota_dimension=`.
llvm::Expected<int64_t> GetIotaDimension(const HloInstruction &inst);

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
};
/// From lhs_batch_dims / rhs_batch_dims / lhs_contracting_dims /
/// rhs_contracting_dims (each optional, empty when absent).
llvm::Expected<DotDimensionNumbers> GetDotDimensionNumbers(const HloInstruction &inst);
void SetDotDimensionNumbers(HloInstruction &inst, const DotDimensionNumbers &dnums);

/// XLA's GatherDimensionNumbers, with the gather's slice_sizes.
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;
};
/// From offset_dims, start_index_map, index_vector_dim and slice_sizes
/// (required) and collapsed_slice_dims, operand_batching_dims,
/// start_indices_batching_dims (empty when absent).
llvm::Expected<GatherDimensionNumbers> GetGatherDimensionNumbers(const HloInstruction &inst);

/// XLA's ScatterDimensionNumbers.
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
};
/// From update_window_dims, scatter_dims_to_operand_dims and
/// index_vector_dim (required) and inserted_window_dims,
/// input_batching_dims, scatter_indices_batching_dims (empty when absent).
llvm::Expected<ScatterDimensionNumbers> GetScatterDimensionNumbers(const HloInstruction &inst);

/// `replica_groups=`; an absent attribute is one group of everything,
/// returned as an empty list (XLA's convention).
llvm::Expected<ReplicaGroups> GetReplicaGroups(const HloInstruction &inst);
std::optional<int64_t> GetChannelId(const HloInstruction &inst);
bool GetUseGlobalDeviceIds(const HloInstruction &inst);
/// all-gather / reduce-scatter / all-to-all: `dimensions={d}`.
llvm::Expected<int64_t> GetCollectiveDimension(const HloInstruction &inst);
/// collective-permute's `source_target_pairs={{0,1},{1,2}}`.
llvm::Expected<std::vector<std::pair<int64_t, int64_t>>>
GetSourceTargetPairs(const HloInstruction &inst);

/// custom-call's target (unquoted); empty if absent.
std::string GetCustomCallTarget(const HloInstruction &inst);
/// backend_config: the unquoted string when written `"..."`, the braces'
/// text when written `{...}`; empty if absent.
std::string GetBackendConfig(const HloInstruction &inst);
/// The same two as views of the attribute's text, or of `storage` when the
/// value has escapes: the verifier reads them for every custom-call.
llvm::StringRef GetCustomCallTargetView(const HloInstruction &inst, std::string &storage);
llvm::StringRef GetBackendConfigView(const HloInstruction &inst, std::string &storage);
/// custom-call api_version as XLA's enum ordinal: 1 (API_VERSION_ORIGINAL)
/// when absent, as XLA's printer leaves version 1 implicit.
llvm::Expected<int> GetCustomCallApiVersion(const HloInstruction &inst);

/// `frontend_attributes={key="value",...}` in order; empty if absent.
llvm::Expected<std::vector<std::pair<std::string, std::string>>>
GetFrontendAttributes(const HloInstruction &inst);
void SetFrontendAttributes(HloInstruction &inst,
                           const std::vector<std::pair<std::string, std::string>> &attrs);
/// `frontend_attributes` decoded without copies: each key a view of the
/// attribute's text, each value too unless it has escapes, in which case it
/// is unescaped into `storage` (whose strings never move).
struct FrontendAttributeViews {
  llvm::SmallVector<std::pair<llvm::StringRef, llvm::StringRef>, 16> entries;
  std::forward_list<std::string> storage;
};
/// What GetFrontendAttributes returns, the same entries and the same
/// errors, as views into `out` (cleared first). Valid while `inst` keeps
/// the attribute and `out` lives.
llvm::Error GetFrontendAttributeViews(const HloInstruction &inst, FrontendAttributeViews &out);

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
llvm::Expected<ComparisonDirection> GetComparisonDirection(const HloInstruction &inst);

/// slice={[start:limit:stride], ...} (stride optional, 1).
struct SliceConfig {
  std::vector<int64_t> starts, limits, strides;
};
llvm::Expected<SliceConfig> GetSliceConfig(const HloInstruction &inst);
/// dynamic-slice's `dynamic_slice_sizes={...}`.
llvm::Expected<std::vector<int64_t>> GetDynamicSliceSizes(const HloInstruction &inst);

/// pad's `padding=lo_hi[_interior]x...`.
struct PaddingDimension {
  int64_t low = 0, high = 0, interior = 0;
};
llvm::Expected<std::vector<PaddingDimension>> GetPaddingConfig(const HloInstruction &inst);

/// Whether a parameter's `sharding` says every device holds the same value:
/// `{replicated}`, or a tuple sharding whose every element is.
bool IsReplicatedParameter(const HloInstruction &param);

/// An llvm::Error "<inst>: <msg>" — the form every accessor uses.
llvm::Error InstructionError(const HloInstruction &inst, const llvm::Twine &msg);

} // namespace loom::hlo

#endif
