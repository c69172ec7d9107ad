//===- HloProtoInternal.h - Shared pieces of the proto reader and writer --===//
//
// Private to lib/hlo/proto: the only place that includes the code protoc
// generates from hlo_module.proto. Each part of the text form has an encoder
// (text -> XLA fields, refusing what it cannot carry exactly) and a
// derivation (XLA fields -> text, XLA's canonical spelling). The writer keeps
// a part's text in loom's own fields whenever the derivation of what it
// encoded does not give the same text back, so a round trip is exact
// whatever the encoders know (docs/hlo-proto.md, "What a round trip keeps").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_PROTO_HLOPROTOINTERNAL_H
#define LOOM_LIB_HLO_PROTO_HLOPROTOINTERNAL_H

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/Shape.h"

#include "loom/hlo/proto/hlo_module.pb.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::hlo::proto_internal {

/// Nesting of tuple shapes, tuple literals and tuple shardings a proto may
/// have, as the text parser's limit (kMaxNestingDepth).
inline constexpr int kMaxProtoDepth = 256;

// ---- Shapes (HloProtoShapes.cpp) ---------------------------------------------

xla::PrimitiveType ToProtoType(PrimitiveType type);
std::optional<PrimitiveType> FromProtoType(int type);

/// `shape` into `out`. A layout's text after ':' goes to T/E/S fields when
/// they print it back, otherwise to loom_attributes_text (counted in
/// `verbatim_layouts`).
void ShapeToProto(const Shape &shape, xla::ShapeProto *out, int64_t *verbatim_layouts);
/// The shape of `proto`, checked: known element types, a layout that
/// matches the rank, dimensions that fit; an error says what is wrong.
llvm::Expected<Shape> ShapeFromProto(const xla::ShapeProto &proto, int depth = 0);

/// A constant's literal text into `out`; false when the text is not a value
/// the fields hold (an elided `{...}`, a spelling ParseLiteral refuses).
bool LiteralToProto(const Shape &shape, llvm::StringRef text, xla::LiteralProto *out);
/// The literal text of `proto` for an instruction of shape `shape`.
llvm::Expected<std::string> LiteralTextFromProto(const xla::LiteralProto &proto,
                                                 const Shape &shape);

// ---- Attributes (HloProtoAttributes.cpp) -------------------------------------

/// An attribute as the XLA fields give it.
struct DerivedAttribute {
  std::string name;
  HloInstruction::AttributeKind kind = HloInstruction::AttributeKind::kText;
  std::string value; // kText
  llvm::SmallVector<int64_t, 2> computation_ids; // the computation kinds
};

/// Sets the XLA field(s) of one text attribute; false (and nothing set)
/// when the value is not in a form the field holds, or the field is taken.
bool EncodeAttribute(HloOpcode opcode, llvm::StringRef name, llvm::StringRef value,
                     xla::HloInstructionProto *out);
/// Fields the writer sets whatever the attributes (XLA's defaults that the
/// text leaves implicit: api_version, feature_group_count, ...).
void EncodeImplicitDefaults(HloOpcode opcode, xla::HloInstructionProto *out);

/// What the derivation needs besides the fields.
struct DeriveContext {
  HloOpcode opcode;
  /// A conditional whose operand 0 is a pred: true_/false_computation.
  bool predicated_conditional = false;
};
/// The attributes the fields of `inst` give, in XLA's printing order:
/// opcode-specific ones, called computations (from called_computation_ids),
/// control predecessors, sharding, frontend attributes, metadata,
/// backend_config.
std::vector<DerivedAttribute> DeriveAttributes(const xla::HloInstructionProto &inst,
                                               const DeriveContext &context);

/// called_computation_ids from the computation attributes of the text, in
/// XLA's order (while: body, condition; select-and-scatter: select,
/// scatter; conditional: the branches), given each attribute's ids.
std::vector<int64_t>
CalledComputationIds(HloOpcode opcode,
                     llvm::ArrayRef<std::pair<llvm::StringRef, llvm::SmallVector<int64_t, 2>>>
                         attributes);

// ---- Module header (HloProtoHeader.cpp) -------------------------------------

/// Sets the field(s) of one header attribute; false when it has none.
/// replica_count / num_partitions go to `launch` (the device assignment is
/// built once both are known).
/// is_scheduled=true sets `scheduled` (the writer then writes every
/// computation's order as the schedule).
struct HeaderState {
  std::optional<int64_t> replica_count, num_partitions;
  bool scheduled = false;
};
bool EncodeHeaderAttribute(llvm::StringRef name, llvm::StringRef value,
                           xla::HloModuleProto *out, HeaderState *state);
/// The header attributes the fields of `module` give, in XLA's order.
std::vector<std::pair<std::string, std::string>>
DeriveHeader(const xla::HloModuleProto &module);

// ---- Text helpers (HloProtoText.cpp) ----------------------------------------

/// `"..."` as the attribute accessors read it back (quotes, backslashes,
/// \n, \t, \r escaped).
std::string Quote(llvm::StringRef text);
/// Whether `s` is UTF-8, as protobuf requires of a `string` field: text of
/// the text form that is not goes to loom's `bytes` fields verbatim.
bool IsUtf8(llvm::StringRef s);
/// `{a,b,c}` of a repeated field, as the text form spells an integer list.
template <typename Repeated> std::string IntListOf(const Repeated &values) {
  llvm::SmallVector<int64_t, 8> v(values.begin(), values.end());
  return FormatIntList(v);
}
/// `{1,2,3}` / `{}` parsed strictly (no spaces XLA would not print are
/// required; any are accepted, the derivation check sorts spelling out).
std::optional<std::vector<int64_t>> ParseInts(llvm::StringRef text);

} // namespace loom::hlo::proto_internal

#endif
