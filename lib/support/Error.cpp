#include "loom/support/Error.h"

namespace loom {

llvm::Error makeLocatedError(const SourceLocation &Loc, const llvm::Twine &Msg) {
  return makeError(Loc.File + ":" + llvm::Twine(Loc.Line) + ":" +
                   llvm::Twine(Loc.Column) + ": " + Msg);
}

SourceLocation locate(llvm::StringRef File, llvm::StringRef Buffer, size_t Offset) {
  SourceLocation Loc{File, 1, 1};
  if (Offset > Buffer.size())
    Offset = Buffer.size();
  for (size_t I = 0; I < Offset; ++I) {
    if (Buffer[I] == '\n') {
      ++Loc.Line;
      Loc.Column = 1;
    } else {
      ++Loc.Column;
    }
  }
  return Loc;
}

} // namespace loom
