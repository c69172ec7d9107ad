//===- LowerLocalCollectives.h - On-chip collectives to copies --*- C++ -*-===//
//
// lower_local_collectives turns every local collective (all cores of its
// group in this logical core) into the copies and barriers that carry it,
// jointly on the per-core modules of a split program, as neuronx-cc does at
// order 80 of its backend pipeline:
//   SendRecv     a swap: GPSIMDSB2SB when the tiles allow it and fit the
//                byte budget, DMACopy otherwise, between barriers;
//   SendRecvCCE  the same swap, always DMACopy;
//   AllReduce    reduce-scatter then all-gather with DMA copies;
//   other kinds  fenced by a barrier before and after, and kept.
// Non-local collectives of kind >= 3 are fenced the same way over every core
// of the logical core; non-local kinds 0 to 2 are left alone; lnc_size 1
// changes nothing. The decisions are in docs/local-collectives.md.
//
// Options (BackendOptions): --sendrecv-to-gpsimd-max-bpp,
// --enable-remote-semaphore-dma, --sendrecv-engine.
//
// The program is checked whole before any rewrite; an error (a collective
// missing on a core of its group, copies that disagree, a swap that is not
// between 2 cores, ...) leaves it as it was.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_LOWERLOCALCOLLECTIVES_H
#define LOOM_BIR_PASSES_LOWERLOCALCOLLECTIVES_H

#include "loom/bir/ir/AccessPattern.h"
#include "loom/bir/passes/Pass.h"

namespace loom::bir {

class LowerLocalCollectives : public BirPass {
public:
  explicit LowerLocalCollectives(const BackendOptions &Opts) : Opts(Opts) {}
  llvm::StringRef name() const override { return "lower_local_collectives"; }
  llvm::Expected<bool> run(Program &Modules) override;

private:
  BackendOptions Opts;
};

} // namespace loom::bir

#endif
