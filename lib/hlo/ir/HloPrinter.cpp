//===- HloPrinter.cpp - Modules, computations, instructions as XLA text ---===//
//
// XLA's dump style: `%` before names, operand shapes with layouts, a
// regenerated signature, callees before callers and operands before users.
// The printer appends into one reserved std::string; it never builds
// per-instruction temporaries. parse(print(m)) equals m structurally and
// printing a parsed print reproduces it byte for byte.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/HloModule.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>

namespace loom::hlo {
namespace {

class TextPrinter {
public:
  explicit TextPrinter(std::string &out) : out_(out) {}

  /// Appends the module; `flush` runs after the header and after each
  /// computation, so a streaming caller can hand the text on in pieces.
  void AppendModule(const HloModule &module, llvm::function_ref<void()> flush = [] {});
  void AppendComputation(const HloComputation &computation);
  void AppendInstruction(const HloInstruction &instruction);
  void AppendShape(const Shape &shape, bool print_layout);

private:
  void AppendInt(int64_t value) {
    char buffer[24];
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out_.append(buffer, result.ptr);
  }
  void AppendName(const std::string &name) {
    out_ += '%';
    out_ += name;
  }
  void AppendOpcode(const HloInstruction &instruction);
  void AppendOperands(const HloInstruction &instruction);
  void AppendControlPredecessors(const HloInstruction &instruction);

  std::string &out_;
};

void TextPrinter::AppendShape(const Shape &shape, bool print_layout) {
  if (shape.IsBuffer()) {
    out_ += "b(";
    AppendShape(shape.buffer_shape(), print_layout);
    out_ += ')';
    return;
  }
  if (shape.IsTuple()) {
    out_ += '(';
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i)
        out_ += ", ";
      // XLA marks every fifth element of a long tuple with its index.
      if (i && i % 5 == 0) {
        out_ += "/*index=";
        AppendInt(i);
        out_ += "*/";
      }
      AppendShape(shape.tuple_shapes(i), print_layout);
    }
    out_ += ')';
    return;
  }
  out_ += PrimitiveTypeName(shape.element_type());
  out_ += '[';
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (i)
      out_ += ',';
    if (shape.dimensions(i) == Shape::kUnboundedSize) {
      out_ += '?';
      continue;
    }
    if (shape.is_dynamic_dimension(i))
      out_ += "<=";
    AppendInt(shape.dimensions(i));
  }
  out_ += ']';
  if (!print_layout || !shape.has_layout())
    return;
  const Layout &layout = *shape.layout();
  out_ += '{';
  for (size_t i = 0; i < layout.minor_to_major.size(); ++i) {
    if (i)
      out_ += ',';
    AppendInt(layout.minor_to_major[i]);
  }
  if (!layout.attributes.empty()) {
    out_ += ':';
    out_ += layout.attributes;
  }
  out_ += '}';
}

void TextPrinter::AppendOpcode(const HloInstruction &instruction) {
  std::optional<HloOpcode> wrapped = instruction.async_wrapped_opcode();
  if (!wrapped) {
    out_ += HloOpcodeString(instruction.opcode());
    return;
  }
  out_ += HloOpcodeString(*wrapped);
  switch (instruction.opcode()) {
  case HloOpcode::kAsyncStart:
    out_ += "-start";
    break;
  case HloOpcode::kAsyncUpdate:
    out_ += "-update";
    break;
  default:
    out_ += "-done";
    break;
  }
}

void TextPrinter::AppendOperands(const HloInstruction &instruction) {
  if (instruction.opcode() == HloOpcode::kConstant) {
    out_ += instruction.literal_text();
    return;
  }
  if (instruction.opcode() == HloOpcode::kParameter) {
    AppendInt(instruction.parameter_number());
    return;
  }
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (i)
      out_ += ", ";
    if (i && i % 5 == 0) {
      out_ += "/*index=";
      AppendInt(i);
      out_ += "*/";
    }
    const HloInstruction *operand = instruction.operand(i);
    AppendShape(operand->shape(), /*print_layout=*/true);
    out_ += ' ';
    AppendName(operand->name());
  }
}

void TextPrinter::AppendControlPredecessors(const HloInstruction &instruction) {
  out_ += ", control-predecessors={";
  bool first = true;
  for (const HloInstruction *pred : instruction.control_predecessors()) {
    if (!first)
      out_ += ", ";
    first = false;
    AppendName(pred->name());
  }
  out_ += '}';
}

void TextPrinter::AppendInstruction(const HloInstruction &instruction) {
  AppendName(instruction.name());
  out_ += " = ";
  AppendShape(instruction.shape(), /*print_layout=*/true);
  out_ += ' ';
  AppendOpcode(instruction);
  out_ += '(';
  AppendOperands(instruction);
  out_ += ')';
  bool printed_control = false;
  for (const HloInstruction::Attribute &attribute : instruction.attributes()) {
    using Kind = HloInstruction::AttributeKind;
    if (attribute.kind == Kind::kControlPredecessors) {
      // Printed from the dependencies themselves, at the marker's place.
      if (!printed_control && !instruction.control_predecessors().empty())
        AppendControlPredecessors(instruction);
      printed_control = true;
      continue;
    }
    // XLA's printer leaves the default custom-call API version implicit.
    if (attribute.kind == Kind::kText && attribute.name == "api_version" &&
        attribute.value == "API_VERSION_ORIGINAL" &&
        instruction.opcode() == HloOpcode::kCustomCall)
      continue;
    out_ += ", ";
    out_ += attribute.name;
    out_ += '=';
    switch (attribute.kind) {
    case Kind::kText:
      out_ += attribute.value;
      break;
    case Kind::kComputation:
      AppendName(attribute.computations.empty() || !attribute.computations[0]
                     ? std::string("<null>")
                     : attribute.computations[0]->name());
      break;
    case Kind::kComputationList:
      out_ += '{';
      for (size_t i = 0; i < attribute.computations.size(); ++i) {
        if (i)
          out_ += ", ";
        const HloComputation *callee = attribute.computations[i];
        AppendName(callee ? callee->name() : std::string("<null>"));
      }
      out_ += '}';
      break;
    case Kind::kControlPredecessors:
      break;
    }
  }
  if (!printed_control && !instruction.control_predecessors().empty())
    AppendControlPredecessors(instruction);
}

void TextPrinter::AppendComputation(const HloComputation &computation) {
  if (computation.IsEntryComputation())
    out_ += "ENTRY ";
  AppendName(computation.name());
  // The signature is derived, as XLA derives it: parameters by number,
  // shapes without layouts.
  out_ += " (";
  bool first = true;
  for (const HloInstruction *param : computation.parameter_instructions()) {
    if (!param)
      continue;
    if (!first)
      out_ += ", ";
    first = false;
    out_ += param->name();
    out_ += ": ";
    AppendShape(param->shape(), /*print_layout=*/false);
  }
  out_ += ") -> ";
  const HloInstruction *root = computation.root_instruction();
  if (root)
    AppendShape(root->shape(), /*print_layout=*/false);
  else
    out_ += "()";
  out_ += " {\n";
  for (const HloInstruction *instruction : computation.MakeInstructionPostOrder()) {
    out_ += instruction == root ? "  ROOT " : "  ";
    AppendInstruction(*instruction);
    out_ += '\n';
  }
  out_ += '}';
  out_ += computation.trailer();
}

void TextPrinter::AppendModule(const HloModule &module, llvm::function_ref<void()> flush) {
  out_ += "HloModule ";
  out_ += module.name();
  for (const HloModule::HeaderAttribute &attribute : module.header_attributes()) {
    out_ += ", ";
    out_ += attribute.name;
    out_ += '=';
    out_ += attribute.value;
  }
  out_ += '\n';
  if (!module.stack_frame_index().empty()) {
    out_ += '\n';
    out_ += module.stack_frame_index();
    out_ += '\n';
  }
  flush();
  for (const HloComputation *computation : module.MakeComputationPostOrder()) {
    out_ += '\n';
    AppendComputation(*computation);
    out_ += '\n';
    flush();
  }
}

// Dump text with metadata runs to 200-250 bytes per instruction. Reserving
// more than that up front keeps appends from reallocating (and copying) the
// buffer on large modules; the pages never written are never touched, so the
// excess costs address space, not memory.
constexpr size_t kBytesPerInstructionEstimate = 384;

} // namespace

std::string HloInstruction::ToString() const {
  std::string out;
  out.reserve(160);
  TextPrinter(out).AppendInstruction(*this);
  return out;
}

std::string HloComputation::ToString() const {
  std::string out;
  out.reserve(kBytesPerInstructionEstimate * (instruction_count() + 1));
  TextPrinter(out).AppendComputation(*this);
  return out;
}

std::string HloModule::ToString() const {
  std::string out;
  out.reserve(kBytesPerInstructionEstimate * (instruction_count() + 1));
  TextPrinter(out).AppendModule(*this);
  return out;
}

void HloModule::Print(llvm::raw_ostream &os) const {
  // One computation at a time: the text of a large module is never held
  // whole, and each piece's buffer is reused for the next.
  std::string out;
  TextPrinter(out).AppendModule(*this, [&] {
    os << out;
    out.clear();
  });
}

} // namespace loom::hlo
