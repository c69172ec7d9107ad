#include "loom/hlo/ir/HloModule.h"


#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"

#include <cassert>
#include <charconv>
#include <cstring>

#include <deque>

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

HloComputation *HloModule::AddComputation(std::unique_ptr<HloComputation> computation,
                                          bool names_reserved) {
  computation->parent_ = this;
  if (names_indexed_ && !names_reserved)
    for (HloInstruction *i : computation->instructions())
      ReserveInstructionName(i->name());
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

bool HloModule::AppendPiece(HloModule &piece) {
  bool distinct = true;
  if (names_indexed_ && piece.names_indexed_) {
    distinct = names_.Merge(piece.names_);
  } else if (names_indexed_) {
    for (const auto &c : piece.computations_)
      for (HloInstruction *i : c->instructions())
        if (!i->name().empty() && !names_.Insert(i->name()))
          distinct = false;
  }
  piece.names_ = HloNameTable();
  piece.names_indexed_ = false;
  // A moved deque keeps its blocks: the shapes keep their addresses.
  if (!piece.shared_shapes_.empty())
    piece_shapes_.push_back(std::make_unique<std::deque<Shape>>(std::move(piece.shared_shapes_)));
  for (auto &shapes : piece.piece_shapes_)
    piece_shapes_.push_back(std::move(shapes));
  piece.piece_shapes_.clear();
  instruction_arena_.Absorb(piece.instruction_arena_);
  computations_.reserve(computations_.size() + piece.computations_.size());
  for (auto &computation : piece.computations_) {
    computation->parent_ = this;
    computations_.push_back(std::move(computation));
  }
  piece.computations_.clear();
  piece.entry_ = nullptr;
  return distinct;
}

std::unique_ptr<HloComputation>
HloModule::ReplaceComputation(HloComputation *old, std::unique_ptr<HloComputation> with) {
  auto it = llvm::find_if(computations_, [&](const std::unique_ptr<HloComputation> &c) {
    return c.get() == old;
  });
  assert(it != computations_.end() && "the computation is not in this module");
  with->parent_ = this;
  old->parent_ = nullptr;
  if (entry_ == old)
    entry_ = with.get();
  std::swap(*it, with);
  return with;
}

HloComputation *HloModule::AddEmbeddedComputation(std::unique_ptr<HloComputation> computation) {
  // Callees print before their callers, so new ones go before the entry.
  computation->parent_ = this;
  if (names_indexed_)
    for (HloInstruction *i : computation->instructions())
      ReserveInstructionName(i->name());
  auto pos = llvm::find_if(computations_, [&](const std::unique_ptr<HloComputation> &c) {
    return c.get() == entry_;
  });
  return computations_.insert(pos, std::move(computation))->get();
}

HloComputation *HloModule::GetComputationWithName(llvm::StringRef name) const {
  for (const auto &c : computations_)
    if (c->name() == name)
      return c.get();
  return nullptr;
}

namespace {

/// The computation post order, and (when `fused` is given) the computations
/// fusion instructions call, from one walk over the instructions: every walk
/// of a large module costs a cache miss per instruction.
std::vector<HloComputation *>
ComputationPostOrder(const std::vector<std::unique_ptr<HloComputation>> &computations,
                     llvm::DenseSet<const HloComputation *> *fused) {
  // Callees of every computation of the module, in attribute order.
  llvm::DenseMap<const HloComputation *, std::vector<HloComputation *>> callees;
  callees.reserve(static_cast<unsigned>(computations.size()));
  for (const auto &owned : computations) {
    std::vector<HloComputation *> &list = callees[owned.get()];
    for (HloInstruction *i : owned->instructions()) {
      llvm::ArrayRef<HloInstruction::Attribute> attributes = i->attributes();
      if (attributes.empty())
        continue;
      bool fusion = fused && i->opcode() == HloOpcode::kFusion;
      for (const HloInstruction::Attribute &a : attributes) {
        for (HloComputation *callee : a.computations) {
          if (fusion && a.name == "calls")
            fused->insert(callee);
          if (callee)
            list.push_back(callee);
        }
      }
    }
  }
  // A callee outside the module (only in a broken module) is walked when met.
  std::deque<std::vector<HloComputation *>> outside;
  auto callees_of = [&](HloComputation *c) -> const std::vector<HloComputation *> * {
    auto it = callees.find(c);
    if (it != callees.end())
      return &it->second;
    std::vector<HloComputation *> &list = outside.emplace_back();
    for (HloInstruction *i : c->instructions())
      for (const HloInstruction::Attribute &a : i->attributes())
        for (HloComputation *callee : a.computations)
          if (callee)
            list.push_back(callee);
    return &list;
  };
  std::vector<HloComputation *> order;
  order.reserve(computations.size());
  llvm::DenseSet<HloComputation *> visited;
  visited.reserve(static_cast<unsigned>(computations.size()));
  struct Frame {
    HloComputation *comp;
    const std::vector<HloComputation *> *callees;
    size_t next;
  };
  // Explicit stack: call chains may be far deeper than the call stack.
  std::vector<Frame> stack;
  for (const auto &owned : computations) {
    if (!visited.insert(owned.get()).second)
      continue;
    stack.push_back({owned.get(), callees_of(owned.get()), 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next == f.callees->size()) {
        order.push_back(f.comp);
        stack.pop_back();
        continue;
      }
      HloComputation *callee = (*f.callees)[f.next++];
      if (visited.insert(callee).second)
        stack.push_back({callee, callees_of(callee), 0});
    }
  }
  return order;
}

} // namespace

std::vector<HloComputation *> HloModule::MakeComputationPostOrder() const {
  return ComputationPostOrder(computations_, nullptr);
}

std::vector<HloComputation *> HloModule::MakeNonfusionComputations() const {
  llvm::DenseSet<const HloComputation *> fused;
  std::vector<HloComputation *> order = ComputationPostOrder(computations_, &fused);
  llvm::erase_if(order, [&](HloComputation *c) { return fused.contains(c); });
  return order;
}

int64_t HloModule::instruction_count() const {
  int64_t n = 0;
  for (const auto &c : computations_)
    n += c->instruction_count();
  return n;
}

bool HloModule::InSource(llvm::StringRef text) const {
  return text.begin() >= source_.data() && text.end() <= source_.data() + source_.size();
}

llvm::StringRef HloModule::StableName(llvm::StringRef name) {
  if (name.empty() || InSource(name))
    return name;
  char *copy = name_storage_.Allocate<char>(name.size());
  std::memcpy(copy, name.data(), name.size());
  return llvm::StringRef(copy, name.size());
}

bool HloModule::IndexInstructionNames() {
  if (names_indexed_)
    return true;
  names_indexed_ = true;
  bool distinct = true;
  for (const auto &c : computations_)
    for (HloInstruction *i : c->instructions())
      if (!i->name().empty() && !names_.Insert(i->name()))
        distinct = false;
  return distinct;
}

bool HloModule::ReserveInstructionName(llvm::StringRef name) {
  IndexInstructionNames();
  if (name.empty())
    return false;
  return names_.Insert(name);
}

llvm::StringRef HloModule::UniqueInstructionName(llvm::StringRef prefix) {
  IndexInstructionNames();
  // A prefix with a counter is taken (names are never given back): one
  // lookup instead of trying the bare prefix again for every new name.
  auto counter = prefix_counters_.find(prefix);
  if (counter == prefix_counters_.end()) {
    if (!prefix.empty() && names_.Insert(prefix))
      return StableName(prefix);
    counter = prefix_counters_.try_emplace(prefix, 0).first;
  }
  // `prefix.N`, N written in place (a pass names one instruction per match).
  llvm::SmallString<64> candidate(prefix);
  candidate.push_back('.');
  const size_t base = candidate.size();
  while (true) {
    char digits[24];
    char *end = std::to_chars(digits, digits + sizeof(digits), ++counter->second).ptr;
    candidate.resize(base);
    candidate.append(digits, end);
    if (names_.Insert(candidate))
      return StableName(candidate);
  }
}

} // namespace loom::hlo
