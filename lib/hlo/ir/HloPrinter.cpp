//===- HloPrinter.cpp - Modules, computations, instructions as XLA text ---===//
//
// XLA's dump style: `%` before names, operand shapes with layouts, a
// regenerated signature, callees before callers and operands before users.
// parse(print(m)) equals m structurally and printing a parsed print
// reproduces it byte for byte.
//
// The printer stores its text with plain copies into one block of memory
// (TextBuffer) and builds no temporary string per instruction or shape. The
// ToString forms grow the block into the result; HloModule::Print hands
// every full block to the stream and starts over at its beginning, so a
// module of any size is printed through 1 MiB of memory, and a file stream
// receives whole blocks that it writes without copying them.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/HloModule.h"

#include "llvm/Support/Compiler.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace loom::hlo {
namespace {

/// Stores `text` at `to` and returns its end. Most pieces are names,
/// opcodes and element types of up to 32 bytes: those are copied with two
/// overlapping fixed-size moves, which the compiler inlines, rather than
/// with a call to memcpy.
LLVM_ATTRIBUTE_ALWAYS_INLINE char *CopyText(char *to, llvm::StringRef text) {
  const char *from = text.data();
  size_t n = text.size();
  if (n > 16 && n <= 32) {
    char head[16], tail[16];
    std::memcpy(head, from, 16);
    std::memcpy(tail, from + n - 16, 16);
    std::memcpy(to, head, 16);
    std::memcpy(to + n - 16, tail, 16);
  } else if (n >= 8 && n <= 16) {
    uint64_t head, tail;
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + n - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + n - 8, &tail, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t head, tail;
    std::memcpy(&head, from, 4);
    std::memcpy(&tail, from + n - 4, 4);
    std::memcpy(to, &head, 4);
    std::memcpy(to + n - 4, &tail, 4);
  } else if (n < 4) {
    if (n) {
      to[0] = from[0];
      to[n / 2] = from[n / 2];
      to[n - 1] = from[n - 1];
    }
  } else {
    std::memcpy(to, from, n);
  }
  return to + n;
}

constexpr size_t kMaxIntChars = 20; // "-9223372036854775808"

/// Stores `value` in decimal at `to` (kMaxIntChars of room) and returns
/// its end.
LLVM_ATTRIBUTE_ALWAYS_INLINE char *WriteInt(char *to, int64_t value) {
  // Dimensions, layouts and indices are mostly below 1000.
  if (LLVM_LIKELY(value >= 0 && value < 1000)) {
    if (value >= 100)
      *to++ = static_cast<char>('0' + value / 100);
    if (value >= 10)
      *to++ = static_cast<char>('0' + value / 10 % 10);
    *to++ = static_cast<char>('0' + value % 10);
    return to;
  }
  return std::to_chars(to, to + kMaxIntChars, value).ptr;
}

/// The printer's output. Text is stored at `cur_` with plain copies; only
/// running out of room leaves the inline paths. Without a stream the room
/// grows and the text ends up in `out`; with one, each full block is
/// written to it and the block reused.
class TextBuffer {
public:
  /// Appends to `out`.
  explicit TextBuffer(std::string &out) : storage_(out) { SetRoom(out.size()); }
  /// Writes to `os` in blocks of kBlockSize, using `scratch` as the block.
  TextBuffer(std::string &scratch, llvm::raw_ostream &os) : storage_(scratch), stream_(&os) {
    storage_.clear();
    SetRoom(0);
  }

  LLVM_ATTRIBUTE_ALWAYS_INLINE void Append(llvm::StringRef text) {
    if (LLVM_UNLIKELY(text.size() > static_cast<size_t>(end_ - cur_))) {
      AppendSlow(text);
      return;
    }
    cur_ = CopyText(cur_, text);
  }
  LLVM_ATTRIBUTE_ALWAYS_INLINE void Append(char c) {
    if (LLVM_UNLIKELY(cur_ == end_))
      MakeRoom(1);
    *cur_++ = c;
  }
  void AppendInt(int64_t value) { EndDirect(WriteInt(BeginDirect(kMaxIntChars), value)); }
  /// A piece of at most `bound` bytes stored through a local pointer
  /// (which, unlike `cur_`, the compiler keeps in a register):
  /// `char *p = BeginDirect(bound); ... EndDirect(p);`.
  LLVM_ATTRIBUTE_ALWAYS_INLINE char *BeginDirect(size_t bound) {
    if (LLVM_LIKELY(static_cast<size_t>(end_ - cur_) >= bound))
      return cur_;
    // Near the end of the room: stored aside, then appended, so that a
    // stream still receives whole blocks.
    aside_.resize(bound);
    in_aside_ = true;
    return aside_.data();
  }
  LLVM_ATTRIBUTE_ALWAYS_INLINE void EndDirect(char *end) {
    if (LLVM_LIKELY(!in_aside_)) {
      cur_ = end;
      return;
    }
    in_aside_ = false;
    AppendSlow(llvm::StringRef(aside_.data(), static_cast<size_t>(end - aside_.data())));
  }

  /// Ends the text: `out` holds exactly what was appended, or the stream
  /// has received all of it.
  void Finish() {
    size_t used = static_cast<size_t>(cur_ - storage_.data());
    if (stream_ && used)
      stream_->write(storage_.data(), used);
    storage_.resize(stream_ ? 0 : used);
    SetRoom(storage_.size());
  }

private:
  // What a stream receives at a time: larger than the buffer of the file
  // streams writeOutputAtomically opens (and a multiple of it), so they
  // write it in one call without copying it. 1 MiB printed and wrote a
  // 221 MB module in 5% less CPU time than 128 KiB.
  static constexpr size_t kBlockSize = 1024 * 1024;
  // How far the ToString forms extend the room at a time.
  static constexpr size_t kGrowStep = 128 * 1024;

  LLVM_ATTRIBUTE_NOINLINE void AppendSlow(llvm::StringRef text) {
    while (!text.empty()) {
      if (cur_ == end_)
        MakeRoom(text.size());
      size_t n = std::min(text.size(), static_cast<size_t>(end_ - cur_));
      std::memcpy(cur_, text.data(), n);
      cur_ += n;
      text = text.drop_front(n);
    }
  }
  /// With a stream: writes the full block and starts over. Without: room
  /// for at least `need` more bytes.
  LLVM_ATTRIBUTE_NOINLINE void MakeRoom(size_t need) {
    size_t used = static_cast<size_t>(cur_ - storage_.data());
    size_t size;
    if (stream_) {
      if (used)
        stream_->write(storage_.data(), used);
      used = 0;
      size = kBlockSize;
    } else {
      // A step at a time within what was reserved: the zeros are stored
      // just before the text overwrites them, while they are in cache.
      // Past the reservation, std::string doubles its capacity.
      size = std::max(used + need, std::min(storage_.capacity(), used + kGrowStep));
    }
    if (storage_.size() < size)
      storage_.resize(size);
    SetRoom(used);
  }
  void SetRoom(size_t used) {
    cur_ = storage_.data() + used;
    end_ = storage_.data() + storage_.size();
  }

  std::string &storage_; // [data, cur_) is text, [cur_, end_) room
  llvm::raw_ostream *stream_ = nullptr;
  std::string aside_;
  bool in_aside_ = false;
  char *cur_ = nullptr;
  char *end_ = nullptr;
};

class TextPrinter {
public:
  explicit TextPrinter(TextBuffer &out) : out_(out) {}

  void AppendModule(const HloModule &module);
  void AppendComputation(const HloComputation &computation);
  void AppendInstruction(const HloInstruction &instruction);
  void AppendShape(const Shape &shape, bool print_layout);

private:
  void AppendName(llvm::StringRef name) {
    out_.Append('%');
    out_.Append(name);
  }
  void AppendOpcode(const HloInstruction &instruction);
  void AppendOperands(const HloInstruction &instruction);
  void AppendControlPredecessors(const HloInstruction &instruction);
  void AppendAttribute(const HloInstruction &instruction,
                       const HloInstruction::Attribute &attribute);

  TextBuffer &out_;
};

void TextPrinter::AppendShape(const Shape &shape, bool print_layout) {
  if (shape.IsBuffer()) {
    out_.Append("b(");
    AppendShape(shape.buffer_shape(), print_layout);
    out_.Append(')');
    return;
  }
  if (shape.IsTuple()) {
    out_.Append('(');
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i)
        out_.Append(", ");
      // XLA marks every fifth element of a long tuple with its index.
      if (i && i % 5 == 0) {
        out_.Append("/*index=");
        out_.AppendInt(i);
        out_.Append("*/");
      }
      AppendShape(shape.tuple_shapes(i), print_layout);
    }
    out_.Append(')');
    return;
  }
  // An array: `bf16[<=8,256]{1,0:T(8,128)}`, everything but the layout's
  // attributes stored through one pointer.
  llvm::StringRef type = PrimitiveTypeName(shape.element_type());
  llvm::ArrayRef<int64_t> dims = shape.dimensions();
  const Layout *layout = print_layout && shape.has_layout() ? &*shape.layout() : nullptr;
  size_t bound = type.size() + 3 + dims.size() * (kMaxIntChars + 3);
  if (layout)
    bound += layout->minor_to_major.size() * (kMaxIntChars + 1);
  char *p = out_.BeginDirect(bound);
  p = CopyText(p, type);
  *p++ = '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      *p++ = ',';
    if (dims[i] == Shape::kUnboundedSize) {
      *p++ = '?';
      continue;
    }
    if (shape.is_dynamic_dimension(static_cast<int64_t>(i))) {
      *p++ = '<';
      *p++ = '=';
    }
    p = WriteInt(p, dims[i]);
  }
  *p++ = ']';
  if (!layout) {
    out_.EndDirect(p);
    return;
  }
  *p++ = '{';
  for (size_t i = 0; i < layout->minor_to_major.size(); ++i) {
    if (i)
      *p++ = ',';
    p = WriteInt(p, layout->minor_to_major[i]);
  }
  out_.EndDirect(p);
  if (!layout->attributes.empty()) {
    out_.Append(':');
    out_.Append(layout->attributes);
  }
  out_.Append('}');
}

void TextPrinter::AppendOpcode(const HloInstruction &instruction) {
  std::optional<HloOpcode> wrapped = instruction.async_wrapped_opcode();
  if (!wrapped) {
    out_.Append(HloOpcodeString(instruction.opcode()));
    return;
  }
  out_.Append(HloOpcodeString(*wrapped));
  switch (instruction.opcode()) {
  case HloOpcode::kAsyncStart:
    out_.Append("-start");
    break;
  case HloOpcode::kAsyncUpdate:
    out_.Append("-update");
    break;
  default:
    out_.Append("-done");
    break;
  }
}

void TextPrinter::AppendOperands(const HloInstruction &instruction) {
  if (instruction.opcode() == HloOpcode::kConstant) {
    out_.Append(instruction.literal_text());
    return;
  }
  if (instruction.opcode() == HloOpcode::kParameter) {
    out_.AppendInt(instruction.parameter_number());
    return;
  }
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (i)
      out_.Append(", ");
    if (i && i % 5 == 0) {
      out_.Append("/*index=");
      out_.AppendInt(i);
      out_.Append("*/");
    }
    const HloInstruction *operand = instruction.operand(i);
    AppendShape(operand->shape(), /*print_layout=*/true);
    out_.Append(' ');
    AppendName(operand->name());
  }
}

void TextPrinter::AppendControlPredecessors(const HloInstruction &instruction) {
  out_.Append(", control-predecessors={");
  bool first = true;
  for (const HloInstruction *pred : instruction.control_predecessors()) {
    if (!first)
      out_.Append(", ");
    first = false;
    AppendName(pred->name());
  }
  out_.Append('}');
}

void TextPrinter::AppendAttribute(const HloInstruction &instruction,
                                  const HloInstruction::Attribute &attribute) {
  using Kind = HloInstruction::AttributeKind;
  // XLA's printer leaves the default custom-call API version implicit.
  if (attribute.kind == Kind::kText && instruction.opcode() == HloOpcode::kCustomCall &&
      llvm::StringRef(attribute.name) == "api_version" &&
      llvm::StringRef(attribute.value) == "API_VERSION_ORIGINAL")
    return;
  out_.Append(", ");
  out_.Append(attribute.name);
  out_.Append('=');
  switch (attribute.kind) {
  case Kind::kText:
    out_.Append(attribute.value);
    break;
  case Kind::kComputation:
    AppendName(attribute.computations.empty() || !attribute.computations[0]
                   ? llvm::StringRef("<null>")
                   : llvm::StringRef(attribute.computations[0]->name()));
    break;
  case Kind::kComputationList:
    out_.Append('{');
    for (size_t i = 0; i < attribute.computations.size(); ++i) {
      if (i)
        out_.Append(", ");
      const HloComputation *callee = attribute.computations[i];
      AppendName(callee ? llvm::StringRef(callee->name()) : llvm::StringRef("<null>"));
    }
    out_.Append('}');
    break;
  case Kind::kControlPredecessors:
    break;
  }
}

void TextPrinter::AppendInstruction(const HloInstruction &instruction) {
  AppendName(instruction.name());
  out_.Append(" = ");
  AppendShape(instruction.shape(), /*print_layout=*/true);
  out_.Append(' ');
  AppendOpcode(instruction);
  out_.Append('(');
  AppendOperands(instruction);
  out_.Append(')');
  bool printed_control = false;
  for (const HloInstruction::Attribute &attribute : instruction.attributes()) {
    if (attribute.kind == HloInstruction::AttributeKind::kControlPredecessors) {
      // Printed from the dependencies themselves, at the marker's place.
      if (!printed_control && !instruction.control_predecessors().empty())
        AppendControlPredecessors(instruction);
      printed_control = true;
      continue;
    }
    AppendAttribute(instruction, attribute);
  }
  if (!printed_control && !instruction.control_predecessors().empty())
    AppendControlPredecessors(instruction);
}

void TextPrinter::AppendComputation(const HloComputation &computation) {
  if (computation.IsEntryComputation())
    out_.Append("ENTRY ");
  AppendName(computation.name());
  // The signature is derived, as XLA derives it: parameters by number,
  // shapes without layouts.
  out_.Append(" (");
  bool first = true;
  for (const HloInstruction *param : computation.parameter_instructions()) {
    if (!param)
      continue;
    if (!first)
      out_.Append(", ");
    first = false;
    out_.Append(param->name());
    out_.Append(": ");
    AppendShape(param->shape(), /*print_layout=*/false);
  }
  out_.Append(") -> ");
  const HloInstruction *root = computation.root_instruction();
  if (root)
    AppendShape(root->shape(), /*print_layout=*/false);
  else
    out_.Append("()");
  out_.Append(" {\n");
  for (const HloInstruction *instruction : computation.MakeInstructionPostOrder()) {
    out_.Append(instruction == root ? "  ROOT " : "  ");
    AppendInstruction(*instruction);
    out_.Append('\n');
  }
  out_.Append('}');
  out_.Append(computation.trailer());
}

void TextPrinter::AppendModule(const HloModule &module) {
  out_.Append("HloModule ");
  out_.Append(module.name());
  for (const HloModule::HeaderAttribute &attribute : module.header_attributes()) {
    out_.Append(", ");
    out_.Append(attribute.name);
    out_.Append('=');
    out_.Append(attribute.value);
  }
  out_.Append('\n');
  if (!module.stack_frame_index().empty()) {
    out_.Append('\n');
    out_.Append(module.stack_frame_index());
    out_.Append('\n');
  }
  for (const HloComputation *computation : module.MakeComputationPostOrder()) {
    out_.Append('\n');
    AppendComputation(*computation);
    out_.Append('\n');
  }
}

// Dump text with metadata runs to 200-250 bytes per instruction. Reserving
// more than that up front keeps appends from reallocating (and copying) the
// result on large modules; the pages never written are never touched, so
// the excess costs address space, not memory.
constexpr size_t kBytesPerInstructionEstimate = 384;

/// Reserves room for the text of `instructions` instructions. The first
/// write to each page of a fresh allocation faults it in: for a module's
/// hundreds of megabytes, 4 KiB pages made that fault cost as much as the
/// printing itself, so a large reservation asks Linux for huge pages (2 MiB,
/// when transparent huge pages are enabled "always" or "madvise"; a hint,
/// which the kernel may ignore). 221 MB printed in 0.25 s of CPU time
/// instead of 0.37.
void ReserveText(std::string &out, int64_t instructions) {
  out.reserve(kBytesPerInstructionEstimate * static_cast<size_t>(instructions + 1));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Only large reservations: those are mappings of their own (glibc's
  // malloc maps anything above 32 MiB separately), never the shared heap.
  constexpr uintptr_t kHugePage = 2 << 20;
  if (out.capacity() < (64u << 20))
    return;
  uintptr_t begin = reinterpret_cast<uintptr_t>(out.data());
  uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t last = (begin + out.capacity()) & ~(kHugePage - 1);
  if (last > first)
    (void)madvise(reinterpret_cast<void *>(first), last - first, MADV_HUGEPAGE);
#endif
}

} // namespace

std::string HloInstruction::ToString() const {
  std::string out;
  out.reserve(160);
  TextBuffer buffer(out);
  TextPrinter(buffer).AppendInstruction(*this);
  buffer.Finish();
  return out;
}

std::string HloComputation::ToString() const {
  std::string out;
  ReserveText(out, instruction_count());
  TextBuffer buffer(out);
  TextPrinter(buffer).AppendComputation(*this);
  buffer.Finish();
  return out;
}

std::string HloModule::ToString() const {
  std::string out;
  ReserveText(out, instruction_count());
  TextBuffer buffer(out);
  TextPrinter(buffer).AppendModule(*this);
  buffer.Finish();
  return out;
}

void HloModule::Print(llvm::raw_ostream &os) const {
  std::string block;
  TextBuffer buffer(block, os);
  TextPrinter(buffer).AppendModule(*this);
  buffer.Finish();
}

} // namespace loom::hlo
