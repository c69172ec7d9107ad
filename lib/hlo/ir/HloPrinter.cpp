//===- HloPrinter.cpp - Modules, computations, instructions as XLA text ---===//
//
// XLA's dump style: `%` before names, operand shapes with layouts, a
// regenerated signature, callees before callers and operands before users.
// parse(print(m)) equals m structurally and printing a parsed print
// reproduces it byte for byte.
//
// The printer stores its text with plain copies into one block of memory
// (TextBuffer) and builds no temporary string per instruction or shape;
// shapes that many instructions share are formatted once per piece
// (ShapeTextCache). A small module is printed in one walk: ToString grows
// the block into the result, Print hands every full block of 1 MiB to the
// stream and starts over at its beginning.
//
// A module of more than a few thousand instructions is printed in pieces
// of about the same number of instructions (docs/performance.md,
// "Threads"): the computations are cut into pieces in the module's order,
// which is the post order of a parsed dump (each piece checks that as it
// prints, see PrintModuleInPieces), large ones into several (ranges of
// their text-order slots when that order is a post order, which is checked
// on the threads with the callees, CheckSlots); then up to
// `threads` workers format pieces into blocks of their own while the
// caller hands the finished blocks to the stream in order, at most a few
// pieces ahead, so the text is the same whatever the number of threads and
// memory stays a few MiB. With one thread the same pieces are formatted and
// written in turn on the caller, which is also the faster walk for one
// thread: no separate walk over every attribute for the computation order,
// and each instruction's memory is asked for ahead of reading it.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/support/Parallel.h"

#include "HloPrinterPieces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

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
  /// Stores from the beginning of `block`, whose bytes are room: a block
  /// filled again and again grows to the largest text once and is not
  /// cleared with zeros before each use. Finish() gives the text's length.
  struct ReuseTag {};
  TextBuffer(std::string &block, ReuseTag) : storage_(block), reuse_(true) { SetRoom(0); }

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
  /// With a reused block: returns the length of the text at its
  /// beginning.
  size_t Finish() {
    size_t used = static_cast<size_t>(cur_ - storage_.data());
    if (reuse_)
      return used;
    if (stream_ && used)
      stream_->write(storage_.data(), used);
    storage_.resize(stream_ ? 0 : used);
    SetRoom(storage_.size());
    return used;
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
    } else if (reuse_) {
      size = std::max({used + need, 2 * storage_.size(), kGrowStep});
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
  bool reuse_ = false;
  std::string aside_;
  bool in_aside_ = false;
  char *cur_ = nullptr;
  char *end_ = nullptr;
};

/// Stores the text of `shape` in `out`.
void FormatShape(TextBuffer &out, const Shape &shape, bool print_layout);

/// The printed text of recently printed shapes, by address. Most of a
/// dump's instructions share a few Shape objects (the parser keeps one per
/// distinct shape text) and every operand is printed with its shape, so
/// most shapes are copied from here rather than formatted again: tuples of
/// a loop state run to a hundred bytes or more. Valid for one print only:
/// nothing changes the module meanwhile, so an address keeps its text.
class ShapeTextCache {
public:
  /// The text of `shape`, formatting it on a miss.
  LLVM_ATTRIBUTE_ALWAYS_INLINE llvm::StringRef Get(const Shape &shape, bool print_layout) {
    // Shapes are 8-byte aligned: the low bit tells the two forms apart.
    uintptr_t key = reinterpret_cast<uintptr_t>(&shape) | (print_layout ? 1 : 0);
    Entry &entry = entries_[(key >> 3 ^ key >> 11) & (kEntries - 1)];
    if (LLVM_LIKELY(entry.key == key))
      return llvm::StringRef(text_.data() + entry.offset, entry.size);
    return Fill(entry, key, shape, print_layout);
  }

private:
  static constexpr size_t kEntries = 512;
  // Past this much text the cache starts over, so that it stays in cache.
  static constexpr size_t kMaxText = 64 * 1024;
  struct Entry {
    uintptr_t key = 0;
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  LLVM_ATTRIBUTE_NOINLINE llvm::StringRef Fill(Entry &entry, uintptr_t key, const Shape &shape,
                                               bool print_layout);

  Entry entries_[kEntries];
  std::string text_;
};

/// The pieces' check that every computation is printed after the ones it
/// calls (see PrintModuleInPieces): each callee's position in the module
/// must be below `caller`'s.
struct CalleeCheck {
  const llvm::DenseMap<const HloComputation *, size_t> *position = nullptr;
  size_t caller = 0;
  bool ok = true;
  void See(const HloComputation *callee) {
    if (!callee)
      return; // no edge, as in MakeComputationPostOrder
    auto it = position->find(callee);
    if (it == position->end() || it->second >= caller)
      ok = false;
  }
};

class TextPrinter {
public:
  /// `cache_shapes`: keep the text of the shapes printed (for printing
  /// whole computations and modules).
  explicit TextPrinter(TextBuffer &out, bool cache_shapes = false) : out_(out) {
    if (cache_shapes)
      shapes_ = std::make_unique<ShapeTextCache>();
  }

  /// When set, `check` sees every computation the instructions printed
  /// from now on call.
  void SetCalleeCheck(CalleeCheck *check) { callees_ = check; }

  void AppendModule(const HloModule &module);
  /// `HloModule name, ...` and the stack frame index.
  void AppendModuleHeader(const HloModule &module);
  void AppendComputation(const HloComputation &computation);
  /// A computation is its header (signature and ` {`), one line per
  /// instruction and its footer (`}` and the trailer).
  void AppendComputationHeader(const HloComputation &computation);
  void AppendInstructionLine(const HloInstruction &instruction, const HloInstruction *root);
  /// The lines of `instructions`, in order.
  void AppendInstructionLines(llvm::ArrayRef<HloInstruction *> instructions,
                              const HloInstruction *root);
  /// The lines of the instructions in the text-order slots [from, to) of
  /// `computation`, in text order.
  void AppendInstructionSlots(const HloComputation &computation, size_t from, size_t to);
  void AppendComputationFooter(const HloComputation &computation);
  void AppendInstruction(const HloInstruction &instruction);
  LLVM_ATTRIBUTE_ALWAYS_INLINE void AppendShape(const Shape &shape, bool print_layout) {
    if (shapes_)
      out_.Append(shapes_->Get(shape, print_layout));
    else
      FormatShape(out_, shape, print_layout);
  }

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
  std::unique_ptr<ShapeTextCache> shapes_;
  CalleeCheck *callees_ = nullptr;
};

void FormatShape(TextBuffer &out, const Shape &shape, bool print_layout) {
  if (shape.IsBuffer()) {
    out.Append("b(");
    FormatShape(out, shape.buffer_shape(), print_layout);
    out.Append(')');
    return;
  }
  if (shape.IsTuple()) {
    out.Append('(');
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i)
        out.Append(", ");
      // XLA marks every fifth element of a long tuple with its index.
      if (i && i % 5 == 0) {
        out.Append("/*index=");
        out.AppendInt(i);
        out.Append("*/");
      }
      FormatShape(out, shape.tuple_shapes(i), print_layout);
    }
    out.Append(')');
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
  char *p = out.BeginDirect(bound);
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
    out.EndDirect(p);
    return;
  }
  *p++ = '{';
  for (size_t i = 0; i < layout->minor_to_major.size(); ++i) {
    if (i)
      *p++ = ',';
    p = WriteInt(p, layout->minor_to_major[i]);
  }
  out.EndDirect(p);
  if (!layout->attributes.empty()) {
    out.Append(':');
    out.Append(layout->attributes);
  }
  out.Append('}');
}

llvm::StringRef ShapeTextCache::Fill(Entry &entry, uintptr_t key, const Shape &shape,
                                     bool print_layout) {
  if (text_.size() > kMaxText) {
    text_.clear();
    for (Entry &e : entries_)
      e = Entry();
  }
  size_t offset = text_.size();
  TextBuffer buffer(text_);
  FormatShape(buffer, shape, print_layout);
  buffer.Finish();
  entry.key = key;
  entry.offset = static_cast<uint32_t>(offset);
  entry.size = static_cast<uint32_t>(text_.size() - offset);
  return llvm::StringRef(text_.data() + offset, entry.size);
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
    if (LLVM_UNLIKELY(callees_))
      for (const HloComputation *callee : attribute.computations)
        callees_->See(callee);
    AppendName(attribute.computations.empty() || !attribute.computations[0]
                   ? llvm::StringRef("<null>")
                   : llvm::StringRef(attribute.computations[0]->name()));
    break;
  case Kind::kComputationList:
    if (LLVM_UNLIKELY(callees_))
      for (const HloComputation *callee : attribute.computations)
        callees_->See(callee);
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

void TextPrinter::AppendComputationHeader(const HloComputation &computation) {
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
}

void TextPrinter::AppendInstructionLine(const HloInstruction &instruction,
                                        const HloInstruction *root) {
  out_.Append(&instruction == root ? "  ROOT " : "  ");
  AppendInstruction(instruction);
  out_.Append('\n');
}

/// Asks for the memory of an instruction to be printed soon: a module's
/// instructions are far apart in memory, and printing one mostly waits for
/// its fields otherwise.
LLVM_ATTRIBUTE_ALWAYS_INLINE void PrefetchInstruction(const HloInstruction *instruction) {
  const char *at = reinterpret_cast<const char *>(instruction);
  for (size_t offset = 0; offset < sizeof(HloInstruction); offset += 64)
    __builtin_prefetch(at + offset);
}
/// The same for what the instruction points to; its own fields must have
/// arrived (PrefetchInstruction a few instructions earlier).
LLVM_ATTRIBUTE_ALWAYS_INLINE void PrefetchInstructionData(const HloInstruction *instruction) {
  __builtin_prefetch(&instruction->shape());
  __builtin_prefetch(instruction->name().data());
  __builtin_prefetch(instruction->attributes().data());
  if (!instruction->attributes().empty())
    __builtin_prefetch(instruction->attributes().back().value.data());
}

void TextPrinter::AppendInstructionLines(llvm::ArrayRef<HloInstruction *> instructions,
                                         const HloInstruction *root) {
  // How many instructions ahead the fields, then what they point to, are
  // asked for.
  constexpr size_t kAhead = 8, kDataAhead = 4;
  size_t n = instructions.size();
  for (size_t k = 0; k < std::min(n, kAhead); ++k)
    PrefetchInstruction(instructions[k]);
  for (size_t k = 0; k < std::min(n, kDataAhead); ++k)
    PrefetchInstructionData(instructions[k]);
  for (size_t k = 0; k < n; ++k) {
    if (k + kAhead < n)
      PrefetchInstruction(instructions[k + kAhead]);
    if (k + kDataAhead < n)
      PrefetchInstructionData(instructions[k + kDataAhead]);
    AppendInstructionLine(*instructions[k], root);
  }
}

void TextPrinter::AppendInstructionSlots(const HloComputation &computation, size_t from,
                                         size_t to) {
  // As AppendInstructionLines; a removed instruction's slot is null.
  constexpr size_t kAhead = 8, kDataAhead = 4;
  auto at = [&](size_t slot) { return computation.instruction_in_slot(slot); };
  for (size_t s = from; s < std::min(to, from + kAhead); ++s)
    if (at(s))
      PrefetchInstruction(at(s));
  for (size_t s = from; s < std::min(to, from + kDataAhead); ++s)
    if (at(s))
      PrefetchInstructionData(at(s));
  const HloInstruction *root = computation.root_instruction();
  for (size_t s = from; s < to; ++s) {
    if (s + kAhead < to && at(s + kAhead))
      PrefetchInstruction(at(s + kAhead));
    if (s + kDataAhead < to && at(s + kDataAhead))
      PrefetchInstructionData(at(s + kDataAhead));
    if (const HloInstruction *instruction = at(s))
      AppendInstructionLine(*instruction, root);
  }
}

void TextPrinter::AppendComputationFooter(const HloComputation &computation) {
  out_.Append('}');
  out_.Append(computation.trailer());
}

void TextPrinter::AppendComputation(const HloComputation &computation) {
  AppendComputationHeader(computation);
  AppendInstructionLines(computation.MakeInstructionPostOrder(), computation.root_instruction());
  AppendComputationFooter(computation);
}

void TextPrinter::AppendModuleHeader(const HloModule &module) {
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
}

void TextPrinter::AppendModule(const HloModule &module) {
  AppendModuleHeader(module);
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
  TextPrinter(buffer, /*cache_shapes=*/true).AppendComputation(*this);
  buffer.Finish();
  return out;
}

std::string HloModule::ToString() const {
  std::string out;
  int64_t instructions = instruction_count();
  ReserveText(out, instructions);
  if (static_cast<size_t>(instructions) < printer::kMinInstructionsInPieces) {
    TextBuffer buffer(out);
    TextPrinter(buffer, /*cache_shapes=*/true).AppendModule(*this);
    buffer.Finish();
    return out;
  }
  // The pieces' plan walks the module faster than AppendModule's post
  // orders (docs/performance.md, "Threads"); each piece is appended to the
  // reserved result as it is finished.
  llvm::raw_string_ostream os(out);
  printer::PrintModuleInPieces(*this, os, printer::PieceOptions());
  os.flush();
  return out;
}

namespace printer {
namespace {

/// A piece of the module's text: computations [first, last) of the print
/// order, whole; or, when `split`, the lines [from, to) of computation
/// `first` (with its signature when `from` is 0, its closing brace when
/// `to` is its last): positions in its post order, or text-order slots
/// when that order is its text order (PiecePlan::lines).
struct Piece {
  size_t first;
  size_t last;
  size_t from = 0;
  size_t to = 0;
  bool split = false;
};

/// What the pieces print, computed before they are formatted.
///
/// Thread safety: HloComputation::MakeInstructionPostOrder caches in the
/// computation whether its text order is a post order, so it is called on
/// one thread per computation only: for a computation split into pieces
/// whose text order is not a post order, before the pieces are formatted
/// (its order is kept here), for any other by the one piece that prints it.
/// Everything else the printer reads is plain data of the module, which
/// nothing writes while it prints.
struct PiecePlan {
  /// The computations in print order, from some position of the module's
  /// post order on.
  std::vector<const HloComputation *> order;
  /// The instruction post order of every computation split into pieces
  /// whose text order is not one, by position in `order`; empty for the
  /// others. The pieces of a split computation with an empty post order
  /// here are ranges of its text-order slots.
  std::vector<std::vector<HloInstruction *>> lines;
  /// Whether every computation a split computation calls comes before it
  /// in the module (when the plan is cut with the module's positions).
  std::vector<char> callees_first;
  std::vector<Piece> pieces;
  /// Whether piece 0 starts with the module's header.
  bool header = true;
};

/// What one range of a large computation's text-order slots shows: whether
/// every operand and control predecessor of its instructions is local and
/// earlier in the text (HloComputation::TextOrderIsPostOrder's test), and
/// whether every computation they call comes before the computation
/// (`check`).
struct SlotRangeCheck {
  bool post_order = true;
  bool callees_first = true;
};

SlotRangeCheck CheckSlots(const HloComputation &computation, size_t from, size_t to,
                          CalleeCheck *check) {
  SlotRangeCheck result;
  for (size_t s = from; s < to; ++s) {
    const HloInstruction *instruction = computation.instruction_in_slot(s);
    if (!instruction)
      continue;
    auto earlier = [&](const HloInstruction *dep) {
      size_t slot = dep->text_order_slot();
      return dep->parent() == &computation && slot < s &&
             computation.instruction_in_slot(slot) == dep;
    };
    if (result.post_order && (!llvm::all_of(instruction->operands(), earlier) ||
                              !llvm::all_of(instruction->control_predecessors(), earlier)))
      result.post_order = false;
    if (check)
      for (const HloInstruction::Attribute &attribute : instruction->attributes())
        for (const HloComputation *callee : attribute.computations)
          check->See(callee);
  }
  result.callees_first = !check || check->ok;
  return result;
}

/// Cuts `order` into pieces of about `size` lines: small computations are
/// grouped, a signature counting as one line; a computation of more lines
/// is cut into pieces of its own. Whether such a computation's text order
/// is a post order, and with `position` (the module's order) whether its
/// callees come first, is found on up to `threads` threads, a range of
/// `size` slots at a time: one computation may be most of the module. When
/// its text order is a post order its pieces are ranges of slots; when not,
/// its post order is computed, one thread per computation.
void CutPieces(PiecePlan &plan, unsigned threads, size_t size,
               const llvm::DenseMap<const HloComputation *, size_t> *position) {
  struct Range {
    size_t k, from, to;
  };
  std::vector<Range> ranges;
  for (size_t k = 0; k < plan.order.size(); ++k) {
    const HloComputation &computation = *plan.order[k];
    if (static_cast<size_t>(computation.instruction_count()) <= size)
      continue;
    for (size_t from = 0; from < computation.slot_count(); from += size)
      ranges.push_back({k, from, std::min(computation.slot_count(), from + size)});
  }
  std::vector<SlotRangeCheck> checks(ranges.size());
  loom::parallelFor(threads, ranges.size(), [&](size_t r) {
    CalleeCheck check{position, ranges[r].k};
    checks[r] = CheckSlots(*plan.order[ranges[r].k], ranges[r].from, ranges[r].to,
                           position ? &check : nullptr);
  });
  std::vector<char> split(plan.order.size(), 0), post_order(plan.order.size(), 1);
  plan.callees_first.assign(plan.order.size(), 1);
  for (size_t r = 0; r < ranges.size(); ++r) {
    split[ranges[r].k] = 1;
    post_order[ranges[r].k] &= checks[r].post_order;
    plan.callees_first[ranges[r].k] &= checks[r].callees_first;
  }
  std::vector<size_t> reordered;
  for (size_t k = 0; k < plan.order.size(); ++k)
    if (split[k] && !post_order[k])
      reordered.push_back(k);
  plan.lines.assign(plan.order.size(), {});
  loom::parallelFor(threads, reordered.size(), [&](size_t b) {
    plan.lines[reordered[b]] = plan.order[reordered[b]]->MakeInstructionPostOrder();
  });
  size_t start = 0, filled = 0;
  for (size_t k = 0; k < plan.order.size(); ++k) {
    if (split[k]) {
      if (start < k)
        plan.pieces.push_back({start, k});
      size_t lines = plan.lines[k].empty() ? plan.order[k]->slot_count() : plan.lines[k].size();
      for (size_t from = 0; from < lines; from += size)
        plan.pieces.push_back({k, k + 1, from, std::min(lines, from + size), true});
      start = k + 1;
      filled = 0;
      continue;
    }
    size_t n = static_cast<size_t>(plan.order[k]->instruction_count()) + 1;
    if (filled > 0 && filled + n > size) {
      plan.pieces.push_back({start, k});
      start = k;
      filled = 0;
    }
    filled += n;
  }
  // The last group; a module without computations is its header alone.
  if (start < plan.order.size() || plan.pieces.empty())
    plan.pieces.push_back({start, plan.order.size()});
}

/// The text of piece `i`: exactly the bytes AppendModule gives that part
/// of the module. With `check`, its computations' callees are checked to
/// come first in the module (`check->position`, `plan.order` being the
/// module's order).
void AppendPiece(TextPrinter &printer, TextBuffer &out, const HloModule &module,
                 const PiecePlan &plan, size_t i, CalleeCheck *check) {
  const Piece &piece = plan.pieces[i];
  if (i == 0 && plan.header)
    printer.AppendModuleHeader(module);
  printer.SetCalleeCheck(check);
  if (!piece.split) {
    for (size_t k = piece.first; k < piece.last; ++k) {
      if (check)
        check->caller = k;
      out.Append('\n');
      printer.AppendComputation(*plan.order[k]);
      out.Append('\n');
    }
    return;
  }
  // Split computations were checked with the plan.
  printer.SetCalleeCheck(nullptr);
  const HloComputation &computation = *plan.order[piece.first];
  const std::vector<HloInstruction *> &lines = plan.lines[piece.first];
  size_t count = lines.empty() ? computation.slot_count() : lines.size();
  if (piece.from == 0) {
    out.Append('\n');
    printer.AppendComputationHeader(computation);
  }
  if (lines.empty())
    printer.AppendInstructionSlots(computation, piece.from, piece.to);
  else
    printer.AppendInstructionLines(
        llvm::ArrayRef(lines).slice(piece.from, piece.to - piece.from),
        computation.root_instruction());
  if (piece.to == count) {
    printer.AppendComputationFooter(computation);
    out.Append('\n');
  }
}

/// Formats the pieces of `plan` on up to `threads` workers and writes them
/// to `os` in order; returns how many were written. With `position`, stops
/// before the first piece with a computation that calls one that does not
/// come before it in the module (`position`).
size_t WritePieces(const HloModule &module, llvm::raw_ostream &os, const PiecePlan &plan,
                   unsigned threads, size_t window,
                   const llvm::DenseMap<const HloComputation *, size_t> *position) {
  size_t pieces = plan.pieces.size();
  // Piece i is formatted into slot i % window: parallelForOrdered formats
  // piece i only once piece i - window has been written, so a slot is never
  // in use twice, and the slots keep their memory from piece to piece.
  struct Slot {
    std::string block;
    size_t used = 0;
    bool callees_first = true;
  };
  std::vector<Slot> slots(std::min(window, pieces));
  // Set once a piece fails the check: the later ones are not formatted.
  std::atomic<bool> stopped{false};
  size_t written = 0;
  loom::parallelForOrdered(
      threads, pieces, window,
      [&](size_t i) {
        Slot &slot = slots[i % slots.size()];
        if (stopped.load(std::memory_order_relaxed))
          return;
        TextBuffer buffer(slot.block, TextBuffer::ReuseTag());
        TextPrinter printer(buffer, /*cache_shapes=*/true);
        CalleeCheck check{position};
        AppendPiece(printer, buffer, module, plan, i, position ? &check : nullptr);
        slot.used = buffer.Finish();
        slot.callees_first = check.ok;
      },
      [&](size_t i) {
        const Slot &slot = slots[i % slots.size()];
        if (stopped.load(std::memory_order_relaxed))
          return;
        if (!slot.callees_first) {
          stopped.store(true, std::memory_order_relaxed);
          return;
        }
        os.write(slot.block.data(), slot.used);
        ++written;
      });
  return written;
}

} // namespace

void PrintModuleInPieces(const HloModule &module, llvm::raw_ostream &os,
                         const PieceOptions &options) {
  unsigned threads = loom::resolveThreadCount(options.threads);
  size_t size = std::max<size_t>(options.piece_instructions, 1);
  size_t window = threads <= 1 ? 1 : options.window ? options.window : 4 * size_t(threads);
  // Callees come first in the post order. A module whose computations each
  // call only earlier ones (as a parsed dump) is in post order already:
  // the walk of MakeComputationPostOrder, from the first computation on,
  // then meets every callee visited. So the pieces are cut in the module's
  // order, and each piece checks the calls of its computations as it
  // prints them, which costs no walk of its own over the module. Up to
  // the first computation that calls a later one (or one outside the
  // module), the post order is the module's order; from there on, the
  // rest is printed in MakeComputationPostOrder's order.
  PiecePlan plan;
  llvm::DenseMap<const HloComputation *, size_t> position;
  position.reserve(static_cast<unsigned>(module.computation_count()));
  for (const HloComputation *computation : module.computations()) {
    position.try_emplace(computation, plan.order.size());
    plan.order.push_back(computation);
  }
  CutPieces(plan, threads, size, &position);
  size_t first_split = plan.order.size();
  for (size_t k = 0; k < plan.order.size(); ++k)
    if (!plan.callees_first[k]) {
      first_split = k;
      break;
    }
  // The pieces up to the first split computation that fails the check.
  if (first_split < plan.order.size()) {
    while (!plan.pieces.empty() && plan.pieces.back().last > first_split)
      plan.pieces.pop_back();
    if (plan.pieces.empty())
      plan.pieces.push_back({0, 0});
  }
  size_t pieces_written = WritePieces(module, os, plan, threads, window, &position);
  // Split computations are never the last written: they pass the check.
  size_t written = pieces_written ? plan.pieces[pieces_written - 1].last : 0;
  if (written == plan.order.size())
    return;

  PiecePlan rest;
  rest.header = pieces_written == 0;
  std::vector<HloComputation *> post_order = module.MakeComputationPostOrder();
  assert(std::equal(plan.order.begin(), plan.order.begin() + written, post_order.begin()) &&
         "the module's order is its post order up to the first call of a later computation");
  rest.order.assign(post_order.begin() + written, post_order.end());
  CutPieces(rest, threads, size, nullptr);
  WritePieces(module, os, rest, threads, window, nullptr);
}

void PrintModuleWhole(const HloModule &module, llvm::raw_ostream &os) {
  std::string block;
  TextBuffer buffer(block, os);
  TextPrinter(buffer, /*cache_shapes=*/true).AppendModule(module);
  buffer.Finish();
}

} // namespace printer

void HloModule::Print(llvm::raw_ostream &os, unsigned threads) const {
  if (static_cast<size_t>(instruction_count()) < printer::kMinInstructionsInPieces) {
    printer::PrintModuleWhole(*this, os);
    return;
  }
  printer::PieceOptions options;
  options.threads = threads;
  printer::PrintModuleInPieces(*this, os, options);
}

} // namespace loom::hlo
