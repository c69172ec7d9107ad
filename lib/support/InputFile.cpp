#include "loom/support/InputFile.h"

#include "loom/support/Error.h"

namespace loom {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readInputBuffer(llvm::StringRef Path) {
  auto BufOr = Path == "-" ? llvm::MemoryBuffer::getSTDIN()
                           : llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                                         /*RequiresNullTerminator=*/false);
  if (!BufOr)
    return makeError("cannot read '" + Path + "': " + BufOr.getError().message());
  return std::move(*BufOr);
}

llvm::Expected<std::string> readInput(llvm::StringRef Path) {
  auto Buf = readInputBuffer(Path);
  if (!Buf)
    return Buf.takeError();
  return (*Buf)->getBuffer().str();
}

} // namespace loom
