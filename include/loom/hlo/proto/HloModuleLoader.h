//===- HloModuleLoader.h - One entry point for every tool's module file ---===//
//
// Every tool that takes an HLO module (hlo-opt, hlo-run and its --compare,
// and whatever reads a module for BIR) calls LoadHloModule, so all of them
// accept the same files: HLO text, or a binary HloModuleProto / HloProto /
// HloModuleProtoWithConfig, told apart by content (docs/hlo-proto.md,
// "Which files are read as protos").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PROTO_HLOMODULELOADER_H
#define LOOM_HLO_PROTO_HLOMODULELOADER_H

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace loom::hlo {

/// Parses `buffer`, the contents of the module file `display_name`: text
/// (with `options`) or a proto. Errors name `display_name`.
llvm::Expected<std::unique_ptr<HloModule>>
LoadHloModule(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef display_name,
              const HloParseOptions &options = {});

/// Reads the file `path` ("-" is stdin, named `<stdin>`) and parses it as
/// LoadHloModule does.
llvm::Expected<std::unique_ptr<HloModule>>
LoadHloModuleFile(llvm::StringRef path, const HloParseOptions &options = {});

} // namespace loom::hlo

#endif
