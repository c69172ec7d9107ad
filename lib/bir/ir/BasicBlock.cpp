#include "loom/bir/ir/BasicBlock.h"

#include <cassert>
#include <iterator>

namespace loom::bir {

Instruction *BasicBlock::insert(iterator Pos, std::unique_ptr<Instruction> I) {
  assert(!I->Parent && "instruction is already in a block");
  Instruction *Raw = I.get();
  Raw->Self = Insts.insert(Pos, std::move(I));
  Raw->Parent = this;
  return Raw;
}

void BasicBlock::removeInstruction(Instruction *I) {
  assert(I->Parent == this && "instruction is not in this block");
  Insts.erase(I->Self);
}

// Terminators end the block, so the walk is from the back: inserting before
// the terminator stays O(1) in long blocks.
BasicBlock::iterator BasicBlock::getFirstTerminator() {
  iterator It = end();
  while (It != begin() && (*std::prev(It))->isTerminator())
    --It;
  return It;
}

} // namespace loom::bir
