//===- HloProto.h - XLA's HloModuleProto: reading and writing -------------===//
//
// The production compiler compiles a serialized HloModuleProto
// (`neuronx-cc compile --framework=XLA model.hlo_module.pb`), and XLA dumps
// the same form with --xla_dump_hlo_as_proto. These functions read such a
// file (also an HloProto or an HloModuleProtoWithConfig wrapping one) into
// an HloModule and write an HloModule as an HloModuleProto. Which XLA fields
// map to which parts of the text form, and what a round trip keeps, is in
// docs/hlo-proto.md. This header does not include protobuf's headers.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PROTO_HLOPROTO_H
#define LOOM_HLO_PROTO_HLOPROTO_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace loom::hlo {

/// Which message a binary file holds.
enum class HloProtoKind { kModule, kHloProto, kModuleWithConfig };

/// What ParseHloModuleProto found besides the module.
struct HloProtoReadInfo {
  HloProtoKind kind = HloProtoKind::kModule;
  /// Where the header's replica_count / num_partitions came from:
  /// "config" (HloModuleProtoWithConfig), "device assignment", "header"
  /// (loom's own header field) or "" (none: the tools' flags decide).
  std::string launch_size_source;
};

/// Reads a binary HloModuleProto, HloProto or HloModuleProtoWithConfig.
/// Errors (a truncated or malformed file, an operand or computation id
/// that does not exist, a computation cycle, a shape that disagrees with
/// its layout, ...) name `file_name`, the computation and the instruction.
llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleProto(llvm::StringRef bytes, llvm::StringRef file_name = "<input>",
                    HloProtoReadInfo *info = nullptr);

/// How many parts of a module the XLA fields alone could not carry, so the
/// writer kept their text in loom's own fields (docs/hlo-proto.md).
struct HloProtoWriteStats {
  int64_t instructions = 0;
  /// Attributes kept verbatim (not interpreted, or in a spelling other
  /// than the one the fields print back).
  int64_t verbatim_attributes = 0;
  /// Instructions whose attributes needed loom's attribute list (order or
  /// verbatim values).
  int64_t attribute_lists = 0;
  int64_t verbatim_literals = 0;
  int64_t verbatim_layouts = 0;
  bool verbatim_header = false;
  /// Names of the attributes kept verbatim, one per occurrence.
  std::vector<std::string> verbatim_attribute_names;
};

/// The module as a serialized HloModuleProto: deterministic bytes, ids kept
/// where the module has them (read from a proto) and assigned otherwise.
/// The launch size of the header goes to the device assignment.
std::string SerializeHloModuleProto(const HloModule &module,
                                    HloProtoWriteStats *stats = nullptr);

/// Whether `bytes` is HLO text: after white space and comments it starts
/// with `HloModule`. The tools read text when it is, and a proto otherwise
/// when the name ends in `.pb` or the bytes start like one.
bool LooksLikeHloText(llvm::StringRef bytes);
bool LooksLikeHloProto(llvm::StringRef file_name, llvm::StringRef bytes);

} // namespace loom::hlo

#endif
