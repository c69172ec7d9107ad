//===- SCC.cpp - Tarjan's strongly connected components -------------------===//
//
// Tarjan's algorithm with an explicit stack of frames in place of recursion,
// so that long chains of blocks cannot exhaust the native stack.
//
//===----------------------------------------------------------------------===//
#include "loom/bir/analysis/SCC.h"

#include <algorithm>
#include <limits>

using namespace loom::bir::analysis;

namespace {

constexpr unsigned NotVisited = std::numeric_limits<unsigned>::max();

/// One activation of the recursive formulation: the block being visited and
/// the position of the next successor to look at.
struct Frame {
  unsigned Block;
  unsigned NextSucc;
};

/// The per-walk state of Tarjan's algorithm. Completed components are handed
/// to the SCCInfo being built through its three output vectors.
class TarjanWalk {
public:
  TarjanWalk(const CFGView &G, std::vector<unsigned> &SCCOfBlock,
             std::vector<unsigned> &SCCBegin, std::vector<unsigned> &Members,
             std::vector<bool> &NonTrivial)
      : G(G), SCCOfBlock(SCCOfBlock), SCCBegin(SCCBegin), Members(Members),
        NonTrivial(NonTrivial), Index(G.NumBlocks, NotVisited),
        LowLink(G.NumBlocks, 0), OnStack(G.NumBlocks, false),
        HasSelfEdge(G.NumBlocks, false) {}

  void run() {
    for (unsigned B = 0; B != G.NumBlocks; ++B)
      if (Index[B] == NotVisited)
        walkFrom(B);
  }

private:
  void enter(unsigned B) {
    Index[B] = LowLink[B] = NextIndex++;
    Stack.push_back(B);
    OnStack[B] = true;
    CallStack.push_back({B, 0});
  }

  void walkFrom(unsigned Start) {
    enter(Start);
    while (!CallStack.empty()) {
      unsigned B = CallStack.back().Block;
      const std::vector<unsigned> &Succs = G.Succs[B];
      if (CallStack.back().NextSucc < Succs.size()) {
        unsigned S = Succs[CallStack.back().NextSucc++];
        assert(S < G.NumBlocks && "successor out of range");
        if (S == B)
          HasSelfEdge[B] = true;
        if (Index[S] == NotVisited)
          enter(S);
        else if (OnStack[S])
          LowLink[B] = std::min(LowLink[B], Index[S]);
        continue;
      }
      CallStack.pop_back();
      if (!CallStack.empty()) {
        unsigned Parent = CallStack.back().Block;
        LowLink[Parent] = std::min(LowLink[Parent], LowLink[B]);
      }
      if (LowLink[B] == Index[B])
        emitComponent(B);
    }
  }

  /// Pops the component whose first visited block is Root off the stack.
  void emitComponent(unsigned Root) {
    unsigned Id = SCCBegin.size() - 1;
    size_t First = Members.size();
    unsigned B;
    do {
      B = Stack.back();
      Stack.pop_back();
      OnStack[B] = false;
      SCCOfBlock[B] = Id;
      Members.push_back(B);
    } while (B != Root);
    std::sort(Members.begin() + First, Members.end());
    SCCBegin.push_back(Members.size());
    size_t Size = Members.size() - First;
    NonTrivial.push_back(Size > 1 || HasSelfEdge[Root]);
  }

  const CFGView &G;
  std::vector<unsigned> &SCCOfBlock;
  std::vector<unsigned> &SCCBegin;
  std::vector<unsigned> &Members;
  std::vector<bool> &NonTrivial;

  unsigned NextIndex = 0;
  std::vector<unsigned> Index;
  std::vector<unsigned> LowLink;
  std::vector<bool> OnStack;
  std::vector<bool> HasSelfEdge;
  std::vector<unsigned> Stack;
  std::vector<Frame> CallStack;
};

} // namespace

SCCInfo::SCCInfo(const CFGView &G) {
  assert(G.Succs.size() == G.NumBlocks && "one successor list per block");
  SCCOfBlock.assign(G.NumBlocks, NotVisited);
  SCCBegin.push_back(0);
  Members.reserve(G.NumBlocks);
  TarjanWalk(G, SCCOfBlock, SCCBegin, Members, NonTrivial).run();
  assert(Members.size() == G.NumBlocks && "every block in one SCC");
}
