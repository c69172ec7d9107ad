//===- CollectiveMatmulContract.h - AwsNeuronCollectiveMatmul, in one place ===//
//
// The custom-call neuron_looped_einsum_replacer emits, as
// docs/collective-matmul-contract.md defines it: the target name, the four
// backend_config keys the Neuron kernel reads (encoded and decoded strictly,
// byte for byte as neuronx-cc 2.24 writes them) and the loom_* frontend
// attributes that pin what the four keys cannot say. The pass encodes with
// it, the verifier checks with it and the interpreter executes what
// Resolve() returns; no other file spells a key.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_COLLECTIVEMATMULCONTRACT_H
#define LOOM_HLO_IR_COLLECTIVEMATMULCONTRACT_H

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::hlo::collective_matmul {

inline constexpr llvm::StringLiteral kTarget = "AwsNeuronCollectiveMatmul";

/// Whether `inst` is a custom-call to kTarget.
bool IsCollectiveMatmul(const HloInstruction &inst);

// ---- backend_config ---------------------------------------------------------

/// `rhs_contracting_dim=<r>,tp_degree=<g>,num_groups=<n>,use_sb_to_sb=<0|1>`.
struct BackendConfig {
  int64_t rhs_contracting_dim = 0;
  int64_t tp_degree = 1;
  int64_t num_groups = 1;
  bool use_sb_to_sb = false;
};
std::string EncodeBackendConfig(const BackendConfig &config);
/// Strict: exactly the four keys, in that order and spelling, separated by
/// single commas; each value a decimal integer (digits only, fitting 64
/// bits), `use_sb_to_sb` 0 or 1. The error names the key.
llvm::Expected<BackendConfig> DecodeBackendConfig(llvm::StringRef text);

// ---- loom_* frontend attributes ---------------------------------------------

enum class WeightSide { kLhs, kRhs };

/// What the four keys cannot say (docs/collective-matmul-contract.md).
struct LoomAttributes {
  WeightSide weight_side = WeightSide::kLhs;
  DotDimensionNumbers dnums;
  /// With loom_*: the rhs contracting dimensions as recorded (Verify checks
  /// them against backend_config).
  std::vector<int64_t> recorded_rhs_contracting_dimensions;
  int64_t all_gather_dimension = 0;
  /// Explicit groups, iota forms expanded.
  std::vector<std::vector<int64_t>> replica_groups;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  Shape local_weight_shape, gathered_weight_shape, weight_operand_shape;
};
/// LoomAttributes' fields by reference: what the pass encodes from the
/// instructions it matched, without copying their shapes and groups first.
struct LoomAttributesRef {
  WeightSide weight_side = WeightSide::kLhs;
  const DotDimensionNumbers *dnums = nullptr;
  int64_t all_gather_dimension = 0;
  const std::vector<std::vector<int64_t>> *replica_groups = nullptr;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  const Shape *local_weight_shape = nullptr;
  const Shape *gathered_weight_shape = nullptr;
  const Shape *weight_operand_shape = nullptr;

  LoomAttributesRef() = default;
  LoomAttributesRef(const LoomAttributes &a); // implicit: every encoder takes either
};
/// The attributes in the contract's order, values as strings.
std::vector<std::pair<std::string, std::string>>
EncodeLoomAttributes(const LoomAttributesRef &attrs);
/// The custom-call's whole `frontend_attributes` value, `{key="value",...}`,
/// into `out` (cleared first): the entries of `own` whose keys are not
/// loom_* (the dot's, kept ahead), then the loom_* keys of `attrs`. Byte for
/// byte what SetFrontendAttributes writes for those entries followed by
/// EncodeLoomAttributes(attrs), written straight into one buffer: the pass
/// encodes one per fused dot.
void EncodeFrontendAttributes(llvm::ArrayRef<std::pair<std::string, std::string>> own,
                              const LoomAttributesRef &attrs, llvm::SmallVectorImpl<char> &out);
/// Whether a frontend attribute key belongs to the contract (`loom_` prefix).
bool IsLoomKey(llvm::StringRef key);
/// nullopt when `attrs` has no loom_* key at all (the form Neuron's own pass
/// emits); an error naming the first missing or malformed key otherwise.
llvm::Expected<std::optional<LoomAttributes>>
DecodeLoomAttributes(llvm::ArrayRef<std::pair<std::string, std::string>> attrs);
/// The same from views (FrontendAttributeViews::entries), without copying
/// the keys and values first.
llvm::Expected<std::optional<LoomAttributes>>
DecodeLoomAttributes(llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> attrs);

/// A static array shape without layout, `bf16[4,128]`, as the loom_*_shape
/// attributes hold it.
llvm::Expected<Shape> DecodeArrayShape(llvm::StringRef text);

// ---- What the custom-call computes -------------------------------------------

/// The all-gather + dot one custom-call stands for, geometry from
/// backend_config and the rest from loom_* (or, without any loom_* key,
/// from the kernel's natural form and the operand shapes).
struct Meaning {
  BackendConfig config;
  bool from_loom_attributes = false;
  WeightSide weight_side = WeightSide::kLhs;
  /// The dot's dimension numbers; rhs_contracting_dimensions is
  /// {config.rhs_contracting_dim}.
  DotDimensionNumbers dnums;
  /// With loom_*: the rhs contracting dimensions as recorded (Verify checks
  /// them against backend_config).
  std::vector<int64_t> recorded_rhs_contracting_dimensions;
  int64_t all_gather_dimension = 0;
  /// num_groups groups of tp_degree ids.
  std::vector<std::vector<int64_t>> groups;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  Shape local_weight_shape, gathered_weight_shape, weight_operand_shape;
  /// The dot's result: the custom-call's shape with loom_*; in the natural
  /// form the kernel's [M * tp_degree, N...], reshaped (row-major) into the
  /// custom-call's shape.
  Shape dot_shape;
};
/// Decodes `inst` (a collective-matmul custom-call with two operands) into
/// what it computes. Fails, naming the key or fact, when backend_config does
/// not decode, a loom_* key is missing or malformed, loom_replica_groups
/// are not num_groups groups of tp_degree ids, or (without loom_*) the
/// operand shapes are not the kernel's natural form.
llvm::Expected<Meaning> Resolve(const HloInstruction &inst);

/// Every check the verifier makes beyond Resolve(): the recorded shapes and
/// dimension numbers agree with the operands, the result and backend_config.
/// An error whose message names the disagreement.
llvm::Error Verify(const HloInstruction &inst);

} // namespace loom::hlo::collective_matmul

#endif
