//===- HloVerifierPieces.h - The verifier's walk in pieces, for tests -----===//
//
// VerifyHloModule(module, threads) walks a large computation in pieces of
// its text order on several threads (docs/hlo-verifier.md, "Threads");
// small ones, and every computation on one thread, are walked whole. This
// header lets the verifier's tests choose the piece size, so that every
// boundary is exercised on small modules and on one thread as well.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_PASS_HLOVERIFIERPIECES_H
#define LOOM_LIB_HLO_PASS_HLOVERIFIERPIECES_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Error.h"

#include <cstddef>

namespace loom::hlo::hlo_verifier {

/// Text-order slots per piece when verifying on several threads: about a
/// millisecond of work, so a computation of a million instructions makes
/// over a hundred pieces that the threads share evenly, and the caller's
/// work per piece (a few vectors, the report's loops) stays negligible.
constexpr size_t kPieceSlots = 8192;

/// VerifyHloModule(module, threads) with every computation of more than
/// `piece_slots` text-order slots walked in pieces of that many (0: every
/// computation whole). The report is the same whatever the piece size.
llvm::Error VerifyModuleInPieces(const HloModule &module, unsigned threads, size_t piece_slots);

} // namespace loom::hlo::hlo_verifier

#endif
