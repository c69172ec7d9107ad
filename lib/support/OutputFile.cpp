#include "loom/support/OutputFile.h"

#include "loom/support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace loom {

llvm::Error writeOutputAtomically(llvm::StringRef Path, llvm::StringRef Contents) {
  if (Path == "-") {
    llvm::outs() << Contents;
    llvm::outs().flush();
    return llvm::Error::success();
  }
  llvm::SmallString<256> Model(Path);
  Model += ".tmp-%%%%%%";
  int FD = -1;
  llvm::SmallString<256> TempPath;
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(Model, FD, TempPath))
    return makeError("cannot create a temporary file for '" + Path + "': " + EC.message());
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Contents;
    OS.close();
    if (OS.has_error()) {
      OS.clear_error();
      llvm::sys::fs::remove(TempPath);
      return makeError("cannot write '" + Path + "'");
    }
  }
  if (std::error_code EC = llvm::sys::fs::rename(TempPath, Path)) {
    llvm::sys::fs::remove(TempPath);
    return makeError("cannot write '" + Path + "': " + EC.message());
  }
  return llvm::Error::success();
}

llvm::Expected<std::string> readInput(llvm::StringRef Path) {
  auto BufOr = Path == "-" ? llvm::MemoryBuffer::getSTDIN()
                           : llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                                         /*RequiresNullTerminator=*/false);
  if (!BufOr)
    return makeError("cannot read '" + Path + "': " + BufOr.getError().message());
  return (*BufOr)->getBuffer().str();
}

} // namespace loom
