#include "loom/hlo/ir/HloStructuralEquality.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

namespace loom::hlo {
namespace {

using Attribute = HloInstruction::Attribute;
using AttributeKind = HloInstruction::AttributeKind;

llvm::StringRef NameOf(const HloComputation *c) {
  return c ? llvm::StringRef(c->name()) : "<null>";
}

class Comparer {
public:
  explicit Comparer(std::string *why) : why_(why) {}

  bool Modules(const HloModule &a, const HloModule &b);

private:
  bool Differ(const llvm::Twine &message) {
    if (why_)
      *why_ = message.str();
    return false;
  }
  bool Computations(const HloComputation &a, const HloComputation &b);
  bool Instructions(const HloInstruction &a, const HloInstruction &b);
  bool Attributes(const HloInstruction &a, const HloInstruction &b);

  std::string *why_;
};

bool Comparer::Modules(const HloModule &a, const HloModule &b) {
  if (a.name() != b.name())
    return Differ("module names differ: '" + a.name() + "' vs '" + b.name() + "'");
  auto ha = a.header_attributes(), hb = b.header_attributes();
  if (ha.size() != hb.size())
    return Differ("header attribute counts differ: " + llvm::Twine(ha.size()) + " vs " +
                  llvm::Twine(hb.size()));
  for (size_t i = 0; i < ha.size(); ++i)
    if (ha[i].name != hb[i].name || ha[i].value != hb[i].value)
      return Differ("header attribute " + llvm::Twine(i) + " differs: '" + ha[i].name + "=" +
                    ha[i].value + "' vs '" + hb[i].name + "=" + hb[i].value + "'");
  if (a.stack_frame_index() != b.stack_frame_index())
    return Differ("stack frame indexes differ");
  if (a.computation_count() != b.computation_count())
    return Differ("computation counts differ: " + llvm::Twine(a.computation_count()) +
                  " vs " + llvm::Twine(b.computation_count()));
  if (NameOf(a.entry_computation()) != NameOf(b.entry_computation()))
    return Differ("entry computations differ: '" + NameOf(a.entry_computation()) + "' vs '" +
                  NameOf(b.entry_computation()) + "'");
  for (const HloComputation *ca : a.computations()) {
    const HloComputation *cb = b.GetComputationWithName(ca->name());
    if (!cb)
      return Differ("computation '" + ca->name() + "' is missing from the second module");
    if (!Computations(*ca, *cb))
      return false;
  }
  return true;
}

bool Comparer::Computations(const HloComputation &a, const HloComputation &b) {
  const std::string &name = a.name();
  if (a.trailer() != b.trailer())
    return Differ("computation '" + name + "': trailers differ: '" + a.trailer() + "' vs '" +
                  b.trailer() + "'");
  if (a.instruction_count() != b.instruction_count())
    return Differ("computation '" + name + "': instruction counts differ: " +
                  llvm::Twine(a.instruction_count()) + " vs " +
                  llvm::Twine(b.instruction_count()));
  auto root_name = [](const HloComputation &c) {
    return c.root_instruction() ? llvm::StringRef(c.root_instruction()->name()) : "<none>";
  };
  if (root_name(a) != root_name(b))
    return Differ("computation '" + name + "': roots differ: '" + root_name(a) + "' vs '" +
                  root_name(b) + "'");
  if (a.num_parameters() != b.num_parameters())
    return Differ("computation '" + name + "': parameter counts differ");
  for (int64_t i = 0; i < a.num_parameters(); ++i) {
    const HloInstruction *pa = a.parameter_instruction(i), *pb = b.parameter_instruction(i);
    if ((pa == nullptr) != (pb == nullptr) || (pa && pa->name() != pb->name()))
      return Differ("computation '" + name + "': parameter " + llvm::Twine(i) + " differs");
  }
  llvm::DenseMap<llvm::StringRef, const HloInstruction *> by_name;
  for (const HloInstruction *inst : b.instructions())
    by_name[inst->name()] = inst;
  for (const HloInstruction *ia : a.instructions()) {
    auto it = by_name.find(ia->name());
    if (it == by_name.end())
      return Differ("computation '" + name + "': instruction '" + ia->name() +
                    "' is missing from the second module");
    if (!Instructions(*ia, *it->second))
      return false;
  }
  return true;
}

bool Comparer::Instructions(const HloInstruction &a, const HloInstruction &b) {
  std::string where = ("instruction '" + a.name() + "' in '" +
                       (a.parent() ? a.parent()->name() : std::string("<detached>")) + "': ")
                          .str();
  if (a.opcode() != b.opcode() || a.async_wrapped_opcode() != b.async_wrapped_opcode())
    return Differ(where + "opcodes differ: " + a.OpcodeText() + " vs " + b.OpcodeText());
  if (a.shape() != b.shape())
    return Differ(where + "shapes differ: " + a.shape().ToString() + " vs " +
                  b.shape().ToString());
  if (a.operand_count() != b.operand_count())
    return Differ(where + "operand counts differ");
  for (int64_t i = 0; i < a.operand_count(); ++i)
    if (a.operand(i)->name() != b.operand(i)->name())
      return Differ(where + "operand " + llvm::Twine(i) + " differs: '" + a.operand(i)->name() +
                    "' vs '" + b.operand(i)->name() + "'");
  if (a.literal_text() != b.literal_text())
    return Differ(where + "literals differ");
  if (a.parameter_number() != b.parameter_number())
    return Differ(where + "parameter numbers differ");
  auto pa = a.control_predecessors(), pb = b.control_predecessors();
  if (pa.size() != pb.size())
    return Differ(where + "control predecessor counts differ");
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i]->name() != pb[i]->name())
      return Differ(where + "control predecessor " + llvm::Twine(i) + " differs");
  if (!Attributes(a, b))
    return Differ(where + (why_ ? *why_ : std::string()));
  return true;
}

// Control-predecessor markers only say where the dependencies print; the
// dependencies themselves are compared above.
bool Comparer::Attributes(const HloInstruction &a, const HloInstruction &b) {
  auto is_real = [](const Attribute &attr) {
    return attr.kind != AttributeKind::kControlPredecessors;
  };
  auto ra = llvm::make_filter_range(a.attributes(), is_real);
  auto rb = llvm::make_filter_range(b.attributes(), is_real);
  auto ia = ra.begin(), ib = rb.begin();
  for (; ia != ra.end() && ib != rb.end(); ++ia, ++ib) {
    if (ia->name != ib->name || ia->kind != ib->kind)
      return Differ("attributes differ: '" + ia->name + "' vs '" + ib->name + "'");
    if (ia->kind == AttributeKind::kText && ia->value != ib->value)
      return Differ("attribute '" + ia->name + "' differs: '" + ia->value + "' vs '" +
                    ib->value + "'");
    if (ia->computations.size() != ib->computations.size())
      return Differ("attribute '" + ia->name + "' calls a different number of computations");
    for (size_t i = 0; i < ia->computations.size(); ++i)
      if (NameOf(ia->computations[i]) != NameOf(ib->computations[i]))
        return Differ("attribute '" + ia->name + "' calls '" + NameOf(ia->computations[i]) +
                      "' vs '" + NameOf(ib->computations[i]) + "'");
  }
  if (ia != ra.end() || ib != rb.end())
    return Differ("attribute counts differ");
  return true;
}

} // namespace

bool StructurallyEqual(const HloModule &a, const HloModule &b, std::string *why) {
  return Comparer(why).Modules(a, b);
}

} // namespace loom::hlo
