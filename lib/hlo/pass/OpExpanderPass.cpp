#include "loom/hlo/pass/OpExpanderPass.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace loom::hlo {

namespace {

/// Gives `to` the control edges of `from`, so removing `from` keeps the
/// ordering constraints it took part in.
void MoveControlDependencies(HloInstruction *from, HloInstruction *to) {
  std::vector<HloInstruction *> preds(from->control_predecessors().begin(),
                                      from->control_predecessors().end());
  std::vector<HloInstruction *> succs(from->control_successors().begin(),
                                      from->control_successors().end());
  from->DropAllControlDeps();
  for (HloInstruction *pred : preds)
    if (pred != to)
      pred->AddControlDependencyTo(to);
  for (HloInstruction *succ : succs)
    if (succ != to)
      to->AddControlDependencyTo(succ);
}

/// Puts `candidates` (instructions of `computation`) in the computation's
/// post order.
void SortIntoPostOrder(const HloComputation &computation,
                       llvm::MutableArrayRef<HloInstruction *> candidates) {
  llvm::SmallVector<HloInstruction *, 16> unsorted(candidates.begin(), candidates.end());
  llvm::SmallPtrSet<const HloInstruction *, 16> wanted(unsorted.begin(), unsorted.end());
  size_t n = 0;
  for (HloInstruction *inst : computation.MakeInstructionPostOrder())
    if (n < candidates.size() && wanted.contains(inst))
      candidates[n++] = inst;
  // The post order holds every instruction of the computation once.
  assert(n == candidates.size() && "a candidate is missing from the post order");
  (void)n;
}

/// What the driver needs to know of a module, from one walk over its
/// instructions: each computation's candidates (in its post order) and
/// callees (in attribute order), and the computations that fusion
/// instructions call. A walk over a large module costs a cache miss or more
/// per instruction, so the driver makes one instead of a computation post
/// order, a post order per computation and a pattern check per instruction.
struct ModuleScan {
  struct Computation {
    HloComputation *computation = nullptr;
    uint32_t first_callee = 0, callee_count = 0;
    uint32_t first_candidate = 0, candidate_count = 0;
  };
  std::vector<Computation> computations; // module order
  std::vector<HloComputation *> callees;
  std::vector<HloInstruction *> candidates;
  llvm::DenseSet<const HloComputation *> fused;
  llvm::DenseMap<const HloComputation *, uint32_t> index;

  llvm::ArrayRef<HloInstruction *> CandidatesOf(const Computation &c) const {
    return llvm::ArrayRef<HloInstruction *>(candidates).slice(c.first_candidate,
                                                               c.candidate_count);
  }
};

/// Puts the instructions the expansions added to `comp` (slots from
/// `first_new` on, appended at the end) where the printer's depth-first post
/// order of the text order would print them: before the first instruction
/// in text order that reads them, the ones reached from it in the walk's
/// order; those nothing earlier reads stay at the end, in that order. The
/// text order is then a post order again (the verifier and the printer take
/// their fast paths) and the printed module is the one printed before the
/// move. The caller knows that the other instructions are in post order;
/// anything this walk cannot place exactly (a control edge, an operand
/// outside the computation or later than the instruction that pulls it in)
/// leaves everything at the end, where the printer's walk still puts it
/// right.
void PlaceNewInstructions(HloComputation &comp, size_t first_new) {
  const size_t end = comp.slot_count();
  auto is_new = [&](const HloInstruction *i) { return i->text_order_slot() >= first_new; };
  std::vector<HloInstruction *> anchors;
  for (size_t s = first_new; s < end; ++s) {
    const HloInstruction *inst = comp.instruction_in_slot(s);
    if (!inst)
      continue;
    if (!inst->control_predecessors().empty() || !inst->control_successors().empty())
      return;
    for (HloInstruction *user : inst->users()) {
      if (user->parent() != &comp)
        return;
      if (!is_new(user))
        anchors.push_back(user);
    }
  }
  llvm::sort(anchors, [](const HloInstruction *a, const HloInstruction *b) {
    return a->text_order_slot() < b->text_order_slot();
  });
  anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());

  std::vector<uint8_t> placed(end - first_new, 0);
  std::vector<HloComputation::Placement> placements;
  struct Frame {
    HloInstruction *inst;
    size_t next;
  };
  llvm::SmallVector<Frame, 8> stack;
  // The walk from `start` (new, not placed) through new operands, in
  // operand order, as the printer's walk from `anchor` meets them. False:
  // the walk would leave the new instructions.
  auto place_from = [&](HloInstruction *start, const HloInstruction *anchor) {
    placed[start->text_order_slot() - first_new] = 1;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next == f.inst->operands().size()) {
        placements.push_back({f.inst, anchor});
        stack.pop_back();
        continue;
      }
      HloInstruction *op = f.inst->operands()[f.next++];
      if (op->parent() != &comp)
        return false;
      if (!is_new(op)) {
        // An operand still ahead of the anchor would be pulled up with it.
        if (anchor && op->text_order_slot() >= anchor->text_order_slot())
          return false;
        continue;
      }
      uint8_t &mark = placed[op->text_order_slot() - first_new];
      if (!mark) {
        mark = 1;
        stack.push_back({op, 0});
      }
    }
    return true;
  };
  for (HloInstruction *anchor : anchors)
    for (HloInstruction *op : anchor->operands())
      if (op->parent() == &comp && is_new(op) && !placed[op->text_order_slot() - first_new] &&
          !place_from(op, anchor))
        return;
  for (size_t s = first_new; s < end; ++s) {
    const HloInstruction *inst = comp.instruction_in_slot(s);
    if (inst && !placed[s - first_new]) {
      // The slot's instruction, writable: a user of nothing earlier.
      HloInstruction *tail = const_cast<HloInstruction *>(inst);
      if (!place_from(tail, nullptr))
        return;
    }
  }
  comp.MoveInstructions(placements);
}

} // namespace

llvm::Expected<bool> OpExpanderPass::Run(HloModule &module) {
  ResetRemarks();
  auto changed = RunOnComputations(module);
  ResetRemarks();
  return changed;
}

llvm::Expected<bool> OpExpanderPass::RunOnComputations(HloModule &module) {
  ModuleScan scan;
  scan.computations.reserve(module.computation_count());
  scan.index.reserve(static_cast<unsigned>(module.computation_count()));
  for (HloComputation *comp : module.computations())
    scan.index.try_emplace(comp, static_cast<uint32_t>(scan.index.size()));
  bool callee_outside = false;
  for (HloComputation *comp : module.computations()) {
    ModuleScan::Computation c;
    c.computation = comp;
    c.first_callee = static_cast<uint32_t>(scan.callees.size());
    c.first_candidate = static_cast<uint32_t>(scan.candidates.size());
    for (HloInstruction *inst : comp->instructions()) {
      if (IsCandidate(inst))
        scan.candidates.push_back(inst);
      // The callees, as HloModule::MakeNonfusionComputations reads them.
      bool fusion = inst->opcode() == HloOpcode::kFusion;
      for (const HloInstruction::Attribute &a : inst->attributes()) {
        for (HloComputation *callee : a.computations) {
          if (fusion && a.name == "calls")
            scan.fused.insert(callee);
          if (!callee)
            continue;
          scan.callees.push_back(callee);
          callee_outside |= !scan.index.count(callee);
        }
      }
    }
    c.callee_count = static_cast<uint32_t>(scan.callees.size()) - c.first_callee;
    c.candidate_count = static_cast<uint32_t>(scan.candidates.size()) - c.first_candidate;
    // While the computation is still in the cache. A text order that is a
    // post order (a parsed module's, known without a walk) has them in
    // post order already: no post order of a million instructions to
    // filter through a set of the candidates.
    if (c.candidate_count > 1 && !comp->TextOrderIsPostOrder())
      SortIntoPostOrder(*comp, llvm::MutableArrayRef<HloInstruction *>(scan.candidates)
                                   .slice(c.first_candidate, c.candidate_count));
    scan.computations.push_back(c);
  }
  // Computations with work (`fused` is complete only now).
  const size_t with_candidates =
      llvm::count_if(scan.computations, [&](const ModuleScan::Computation &c) {
        return c.candidate_count > 0 && !scan.fused.contains(c.computation);
      });
  if (with_candidates == 0)
    return false;

  // A callee outside the module (only in a broken module): the module's own
  // computation order says where it goes.
  if (callee_outside) {
    bool changed = false;
    for (HloComputation *comp : module.MakeNonfusionComputations()) {
      llvm::SmallVector<HloInstruction *, 8> candidates;
      for (HloInstruction *inst : comp->MakeInstructionPostOrder())
        if (IsCandidate(inst))
          candidates.push_back(inst);
      llvm::Expected<bool> comp_changed = ExpandMatches(comp, candidates);
      if (!comp_changed)
        return comp_changed.takeError();
      changed |= *comp_changed;
    }
    return changed;
  }

  // Callees before callers (HloModule::MakeNonfusionComputations' order):
  // a depth-first walk from each computation in module order, callees in
  // attribute order. Only needed when more than one computation has work.
  std::vector<uint32_t> order;
  if (with_candidates == 1) {
    for (uint32_t i = 0; i < scan.computations.size(); ++i)
      if (scan.computations[i].candidate_count > 0 &&
          !scan.fused.contains(scan.computations[i].computation))
        order.push_back(i);
  } else {
    order.reserve(scan.computations.size());
    std::vector<uint8_t> visited(scan.computations.size(), 0);
    struct Frame {
      uint32_t computation;
      uint32_t next;
    };
    // Explicit stack: call chains may be far deeper than the call stack.
    std::vector<Frame> stack;
    for (uint32_t start = 0; start < scan.computations.size(); ++start) {
      if (visited[start])
        continue;
      visited[start] = 1;
      stack.push_back({start, 0});
      while (!stack.empty()) {
        Frame &f = stack.back();
        const ModuleScan::Computation &c = scan.computations[f.computation];
        if (f.next == c.callee_count) {
          if (c.candidate_count > 0)
            order.push_back(f.computation);
          stack.pop_back();
          continue;
        }
        uint32_t callee = scan.index.find(scan.callees[c.first_callee + f.next++])->second;
        if (!visited[callee]) {
          visited[callee] = 1;
          stack.push_back({callee, 0});
        }
      }
    }
  }

  bool changed = false;
  for (uint32_t i : order) {
    const ModuleScan::Computation &c = scan.computations[i];
    if (scan.fused.contains(c.computation))
      continue;
    llvm::Expected<bool> comp_changed = ExpandMatches(c.computation, scan.CandidatesOf(c));
    if (!comp_changed)
      return comp_changed.takeError();
    changed |= *comp_changed;
  }
  return changed;
}

llvm::Expected<bool>
OpExpanderPass::ExpandMatches(HloComputation *comp,
                              llvm::ArrayRef<HloInstruction *> candidates) {
  // Collect before mutating: expansions add instructions and remove dead
  // chains, which must not disturb the walk.
  // Each match with its text-order slot, read while it is alive.
  struct Match {
    HloInstruction *inst;
    size_t slot;
  };
  llvm::SmallVector<Match, 8> matches;
  for (HloInstruction *inst : candidates)
    if (InstructionMatchesPattern(inst))
      matches.push_back({inst, inst->text_order_slot()});
  if (matches.empty())
    return false;
  bool changed = false;
  // The expansions append what they add; when the computation is in post
  // order, PlaceNewInstructions moves it to where the printer would put it.
  const size_t first_new = comp->slot_count();
  bool place = comp->TextOrderIsPostOrder();
  // A match removed with an earlier match's dead chain left its slot empty:
  // expansions only append, and a slot once emptied stays so until the
  // placement below, so the slot says whether the match is still there
  // without following a pointer to freed memory (no set of pending matches
  // to hash tens of thousands of pointers into).
  for (const Match &match : matches) {
    if (comp->instruction_in_slot(match.slot) != match.inst)
      continue;
    HloInstruction *inst = match.inst;
    // An earlier expansion may have rewired its operands.
    if (!InstructionMatchesPattern(inst))
      continue;
    int64_t count_before = comp->instruction_count();
    llvm::Expected<HloInstruction *> replacement = ExpandInstruction(inst);
    if (!replacement)
      return replacement.takeError();
    HloInstruction *with = *replacement;
    if (!with)
      return makeError("pass '" + name() + "' expanded '" + inst->name() + "' into nothing");
    // Keeping the instruction is no change, unless the expansion added
    // instructions anyway: "changed" must stay truthful.
    if (with == inst) {
      changed |= comp->instruction_count() != count_before;
      continue;
    }
    if (with->parent() != comp)
      return makeError("pass '" + name() + "' replaced '" + inst->name() + "' with '" +
                       with->name() + "', which is not in computation '" + comp->name() +
                       "'");
    // Rewiring the uses would make the replacement its own operand.
    if (llvm::is_contained(with->operands(), inst))
      return makeError("pass '" + name() + "' replaced '" + inst->name() + "' with '" +
                       with->name() + "', which uses it");
    if (!inst->control_predecessors().empty() || !inst->control_successors().empty()) {
      MoveControlDependencies(inst, with);
      place = false;
    }
    // An existing replacement must come before every user it takes over
    // for the text order to stay a post order.
    if (place && with->text_order_slot() < first_new)
      for (const HloInstruction *user : inst->users())
        if (user->parent() != comp || (user->text_order_slot() < first_new &&
                                           user->text_order_slot() <= with->text_order_slot()))
          place = false;
    if (llvm::Error err = inst->ReplaceAllUsesWith(with))
      return makeError("pass '" + name() + "': " + llvm::toString(std::move(err)));
    comp->RemoveInstructionAndUnusedOperands(inst);
    changed = true;
  }
  if (place && comp->slot_count() > first_new)
    PlaceNewInstructions(*comp, first_new);
  return changed;
}

} // namespace loom::hlo
