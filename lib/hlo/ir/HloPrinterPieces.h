//===- HloPrinterPieces.h - The printer's piece-wise path, for tests -----===//
//
// HloModule::Print(os, threads) cuts a large module into pieces of about
// the same number of instructions, formats them on worker threads and
// writes them to the stream in order on the caller (docs/performance.md,
// "Threads"). Modules of a few thousand instructions are printed whole.
// This header lets the printer's tests force the piece-wise path with
// pieces of any size, so that every boundary (inside a computation, between
// computations, around empty ones) is exercised on small modules.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_IR_HLOPRINTERPIECES_H
#define LOOM_LIB_HLO_IR_HLOPRINTERPIECES_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>

namespace loom::hlo::printer {

struct PieceOptions {
  /// Worker threads formatting pieces (0: the machine's cores); the caller
  /// writes. With 1 the pieces are formatted and written on the caller.
  unsigned threads = 1;
  /// Instructions per piece (a computation's signature counts as one).
  size_t piece_instructions = 2048;
  /// Pieces formatted ahead of the one being written; 0: four per thread.
  size_t window = 0;
};

/// Modules of fewer instructions are printed whole: below a few pieces,
/// planning them and starting threads cost more than they save.
constexpr size_t kMinInstructionsInPieces = 4 * PieceOptions().piece_instructions;

/// The bytes of HloModule::ToString(), always through pieces.
void PrintModuleInPieces(const HloModule &module, llvm::raw_ostream &os,
                         const PieceOptions &options);

/// The same bytes in one walk over the module on the caller, streamed to
/// `os` a block at a time: what small modules take.
void PrintModuleWhole(const HloModule &module, llvm::raw_ostream &os);

} // namespace loom::hlo::printer

#endif
