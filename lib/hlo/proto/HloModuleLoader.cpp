//===- HloModuleLoader.cpp - Text or proto, by content --------------------===//

#include "loom/hlo/proto/HloModuleLoader.h"

#include "loom/hlo/proto/HloProto.h"
#include "loom/support/InputFile.h"

namespace loom::hlo {

llvm::Expected<std::unique_ptr<HloModule>>
LoadHloModule(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef display_name,
              const HloParseOptions &options) {
  if (LooksLikeHloProto(display_name, buffer->getBuffer()))
    return ParseHloModuleProto(buffer->getBuffer(), display_name);
  return ParseHloModuleOwned(std::move(buffer), display_name, options);
}

llvm::Expected<std::unique_ptr<HloModule>> LoadHloModuleFile(llvm::StringRef path,
                                                             const HloParseOptions &options) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = readInputBuffer(path);
  if (!buffer)
    return buffer.takeError();
  return LoadHloModule(std::move(*buffer), path == "-" ? llvm::StringRef("<stdin>") : path,
                       options);
}

} // namespace loom::hlo
