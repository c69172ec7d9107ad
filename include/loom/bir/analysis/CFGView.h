//===- CFGView.h - Index graph the CFG analyses work on ---------*- C++ -*-===//
//
// The CFG analyses take a plain index graph instead of the IR classes so they
// can be built, tested and reused without an IR module. Blocks are numbered
// 0..NumBlocks-1; block I's successors are Succs[I]. A block without
// successors is an exit of the function. getCFGView builds one from a
// module; the IR does not know this view (the analyses depend on the IR,
// never the other way).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_ANALYSIS_CFGVIEW_H
#define LOOM_BIR_ANALYSIS_CFGVIEW_H

#include <vector>

namespace loom::bir {
class Module;
} // namespace loom::bir

namespace loom::bir::analysis {

struct CFGView {
  unsigned NumBlocks = 0;
  unsigned Entry = 0;
  std::vector<std::vector<unsigned>> Succs;
};

/// The CFG of M as block indices, block 0 the entry. A successor outside M
/// (which the verifier refuses) is left out.
CFGView getCFGView(const Module &M);

} // namespace loom::bir::analysis

#endif
