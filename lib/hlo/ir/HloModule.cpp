#include "loom/hlo/ir/HloModule.h"

#include "loom/support/Error.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

namespace loom::hlo {

const std::string *HloModule::FindHeaderAttribute(llvm::StringRef name) const {
  for (const HeaderAttribute &a : header_)
    if (a.name == name)
      return &a.value;
  return nullptr;
}

void HloModule::SetHeaderAttribute(llvm::StringRef name, std::string value) {
  for (HeaderAttribute &a : header_)
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  header_.push_back({name.str(), std::move(value)});
}

static int64_t IntHeaderOr(const HloModule &m, llvm::StringRef name, int64_t fallback) {
  const std::string *v = m.FindHeaderAttribute(name);
  int64_t n;
  if (!v || llvm::StringRef(*v).getAsInteger(10, n))
    return fallback;
  return n;
}

int64_t HloModule::replica_count() const { return IntHeaderOr(*this, "replica_count", 1); }
int64_t HloModule::num_partitions() const { return IntHeaderOr(*this, "num_partitions", 1); }
bool HloModule::is_scheduled() const {
  const std::string *v = FindHeaderAttribute("is_scheduled");
  return v && *v == "true";
}

HloComputation *HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  computation->parent_ = this;
  for (HloInstruction *i : computation->instructions())
    ReserveInstructionName(i->name());
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

HloComputation *HloModule::AddEmbeddedComputation(std::unique_ptr<HloComputation> computation) {
  // Callees print before their callers, so new ones go before the entry.
  computation->parent_ = this;
  for (HloInstruction *i : computation->instructions())
    ReserveInstructionName(i->name());
  auto pos = llvm::find_if(computations_, [&](const std::unique_ptr<HloComputation> &c) {
    return c.get() == entry_;
  });
  return computations_.insert(pos, std::move(computation))->get();
}

llvm::Error HloModule::RemoveComputation(HloComputation *computation) {
  if (computation == entry_)
    return makeError("cannot remove the entry computation '" + computation->name() + "'");
  for (HloComputation *c : computations())
    for (HloInstruction *i : c->instructions())
      if (llvm::is_contained(i->called_computations(), computation))
        return makeError("cannot remove computation '" + computation->name() +
                         "': '" + i->name() + "' calls it");
  llvm::erase_if(computations_, [&](const std::unique_ptr<HloComputation> &c) {
    return c.get() == computation;
  });
  return llvm::Error::success();
}

HloComputation *HloModule::GetComputationWithName(llvm::StringRef name) const {
  for (const auto &c : computations_)
    if (c->name() == name)
      return c.get();
  return nullptr;
}

std::vector<HloComputation *> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation *> order;
  llvm::DenseSet<HloComputation *> visited;
  struct Frame {
    HloComputation *comp;
    std::vector<HloComputation *> callees;
    size_t next;
  };
  std::vector<Frame> stack;
  auto callees = [](HloComputation *c) {
    std::vector<HloComputation *> result;
    for (HloInstruction *i : c->instructions())
      for (HloComputation *callee : i->called_computations())
        if (callee)
          result.push_back(callee);
    return result;
  };
  for (const auto &owned : computations_) {
    if (!visited.insert(owned.get()).second)
      continue;
    stack.push_back({owned.get(), callees(owned.get()), 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next == f.callees.size()) {
        order.push_back(f.comp);
        stack.pop_back();
        continue;
      }
      HloComputation *callee = f.callees[f.next++];
      if (visited.insert(callee).second)
        stack.push_back({callee, callees(callee), 0});
    }
  }
  return order;
}

std::vector<HloComputation *> HloModule::MakeNonfusionComputations() const {
  llvm::DenseSet<const HloComputation *> fused;
  for (const auto &c : computations_)
    for (HloInstruction *i : c->instructions())
      if (i->opcode() == HloOpcode::kFusion)
        for (HloComputation *callee : i->CalledComputations("calls"))
          fused.insert(callee);
  std::vector<HloComputation *> order = MakeComputationPostOrder();
  llvm::erase_if(order, [&](HloComputation *c) { return fused.contains(c); });
  return order;
}

int64_t HloModule::instruction_count() const {
  int64_t n = 0;
  for (const auto &c : computations_)
    n += c->instruction_count();
  return n;
}

void HloModule::ReserveInstructionName(llvm::StringRef name) {
  name_counters_.try_emplace(name, 0);
}

std::string HloModule::UniqueInstructionName(llvm::StringRef prefix) {
  auto [it, inserted] = name_counters_.try_emplace(prefix, 0);
  if (inserted)
    return prefix.str();
  // Counter per prefix: names are handed out in linear time overall.
  int64_t &counter = it->second;
  while (true) {
    std::string candidate = (prefix + "." + llvm::Twine(++counter)).str();
    if (name_counters_.try_emplace(candidate, 0).second)
      return candidate;
  }
}

} // namespace loom::hlo
