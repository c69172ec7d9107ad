#include "loom/hlo/pass/HloVerifier.h"

#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/ShapeInference.h"
#include "loom/support/Error.h"
#include "loom/support/Parallel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace loom::hlo {
namespace {

// Enough to see a pattern in a badly broken module without flooding the
// terminal; the count of the rest is still reported.
constexpr size_t kMaxProblems = 50;

/// Equal ignoring layouts and dynamic-dimension markers (dimension values,
/// which are bounds for `<=N`, still compared): XLA's ShapeUtil::Compatible,
/// which its verifier uses when it is not layout sensitive.
bool SameShape(const Shape &a, const Shape &b) {
  // Parsed instructions share one Shape per distinct shape text.
  if (&a == &b)
    return true;
  if (a.element_type() != b.element_type())
    return false;
  if (a.IsBuffer())
    return SameShape(a.buffer_shape(), b.buffer_shape());
  if (!a.IsTuple())
    return a.dimensions() == b.dimensions();
  if (a.tuple_shapes_size() != b.tuple_shapes_size())
    return false;
  for (int64_t i = 0; i < a.tuple_shapes_size(); ++i)
    if (!SameShape(a.tuple_shapes(i), b.tuple_shapes(i)))
      return false;
  return true;
}

std::string Str(const Shape &shape) { return shape.ToString(/*PrintLayout=*/false); }

bool IsScalar(const Shape &shape) { return shape.IsArray() && shape.rank() == 0; }

bool IsScalarOfType(const Shape &shape, PrimitiveType type) {
  return IsScalar(shape) && shape.element_type() == type;
}

/// The message of an accessor error without the "'name': " prefix every
/// accessor puts first: the verifier already names the instruction.
std::string AccessorMessage(const HloInstruction &inst, llvm::Error error) {
  std::string msg = llvm::toString(std::move(error));
  std::string prefix = ("'" + inst.name() + "': ").str();
  if (llvm::StringRef(msg).startswith(prefix))
    msg.erase(0, prefix.size());
  return msg;
}

/// Top-level entries of a braced list such as operand_layout_constraints'
/// `{f32[2]{0}, (f32[], s32[])}`; nullopt when it is not braced.
std::optional<int64_t> CountBracedListEntries(llvm::StringRef text) {
  text = text.trim();
  if (!text.consume_front("{") || !text.consume_back("}"))
    return std::nullopt;
  if (text.trim().empty())
    return 0;
  int64_t entries = 1;
  int depth = 0;
  for (char ch : text) {
    if (ch == '{' || ch == '[' || ch == '(')
      ++depth;
    else if (ch == '}' || ch == ']' || ch == ')')
      --depth;
    else if (ch == ',' && depth == 0)
      ++entries;
  }
  return entries;
}

/// A hash of a name, a word at a time: names are short, and the
/// general-purpose hashes cost more than the table lookup they serve
/// (llvm::xxHash64 made the name rule 20 ms slower at 1M instructions).
uint64_t HashName(llvm::StringRef name) {
  const char *p = name.data();
  size_t len = name.size();
  uint64_t hash = len * 0x9E3779B97F4A7C15ull;
  auto mix = [&hash](uint64_t word) {
    hash = (hash ^ word) * 0xBF58476D1CE4E5B9ull;
    hash ^= hash >> 31;
  };
  for (; len > 8; p += 8, len -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    mix(word);
  }
  // The last 1 to 8 bytes; for a name of 8 or more, the last 8 (some of
  // them hashed twice).
  uint64_t word = 0;
  if (name.size() >= 8)
    std::memcpy(&word, p + len - 8, 8);
  else
    std::memcpy(&word, p, len);
  mix(word);
  return hash;
}

/// The instruction names of one part of a module, for the rule that they
/// are unique (a name belongs to part PartOf(hash), so the parts are
/// independent and may be filled on different threads). An open-addressing
/// table (a DenseMap of StringRef compares the text of every name a probe
/// passes, a cache miss each): a slot holds 32 bits of the name's hash and
/// the instruction's position in the module (the walks keep the
/// instructions and their hashes), so the text is compared only when those
/// bits agree, which is a real duplicate or one probe in 2^32.
///
/// At a million names the table is far larger than the caches and each
/// insertion is a miss to memory; Prefetch() starts loading a slot, so a
/// caller that prefetches a few names ahead of their insertion waits for
/// the misses together rather than one after another.
class NameTable {
public:
  /// Where an instruction is: its computation's position in the module and
  /// its own in the computation; from the position in the module (`index`).
  using Locate = llvm::function_ref<std::pair<uint32_t, uint32_t>(uint32_t index)>;
  using InstructionAt = llvm::function_ref<const HloInstruction *(uint32_t index)>;
  using HashAt = llvm::function_ref<uint64_t(uint32_t index)>;

  explicit NameTable(size_t expected) {
    Rehash(llvm::PowerOf2Ceil(std::max<size_t>(16, 2 * expected)), nullptr);
  }

  /// The part of `parts` a name of hash `hash` belongs to: from the bits
  /// the slot index does not use.
  static unsigned PartOf(uint64_t hash, unsigned parts) {
    return static_cast<unsigned>(((hash >> 32) * parts) >> 32);
  }

  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

  /// Records the instruction of position `index` in the module, whose name
  /// `inst_at(index)->name()` hashes to `hash`, and returns -1; or returns
  /// the position of the instruction that had the name first.
  int64_t Insert(uint32_t index, uint64_t hash, InstructionAt inst_at, HashAt hash_at) {
    if (2 * (count_ + 1) > slots_.size())
      Rehash(2 * slots_.size(), hash_at);
    uint32_t tag = static_cast<uint32_t>(hash >> 32);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      uint64_t slot = slots_[i];
      if (slot == 0) {
        // A position fits 32 bits: a module of 2^32 instructions would
        // need terabytes.
        slots_[i] = (uint64_t(tag) << 32) | (uint64_t(index) + 1);
        ++count_;
        return -1;
      }
      if (static_cast<uint32_t>(slot >> 32) != tag)
        continue;
      uint32_t earlier = static_cast<uint32_t>(slot) - 1;
      if (inst_at(earlier)->name() == inst_at(index)->name())
        return earlier;
    }
  }

private:
  void Rehash(size_t slot_count, HashAt hash_at) {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(slot_count, 0);
    mask_ = slot_count - 1;
    for (uint64_t slot : old) {
      if (!slot)
        continue;
      uint64_t hash = hash_at(static_cast<uint32_t>(slot) - 1);
      size_t i = hash & mask_;
      while (slots_[i])
        i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<uint64_t> slots_; // 0: empty
  size_t mask_ = 0;
  size_t count_ = 0;
};

/// The instructions a walk over one computation has passed, for the check
/// that every operand comes earlier in the text: then the text order is a
/// topological order, there is no cycle, and the depth-first search for one
/// is not needed. Open addressing over pointers, the table reused from one
/// computation to the next.
class InstructionSet {
public:
  void Reset(size_t expected) {
    size_t size = llvm::PowerOf2Ceil(std::max<size_t>(16, 2 * expected));
    if (slots_.size() < size) {
      slots_.resize(size);
      positions_.resize(size);
    }
    std::fill(slots_.begin(), slots_.begin() + size, nullptr);
    mask_ = size - 1;
    count_ = 0;
  }
  /// Adds `inst`, the instruction at `position` in the walk.
  void Insert(const HloInstruction *inst, uint32_t position) {
    // A walk inserts the instructions Reset was told of; more still fit.
    if (2 * (count_ + 1) > mask_ + 1)
      Grow();
    size_t i = Find(inst);
    if (!slots_[i]) {
      slots_[i] = inst;
      positions_[i] = position;
      ++count_;
    }
  }
  bool Contains(const HloInstruction *inst) const { return slots_[Find(inst)] == inst; }
  /// The position Insert was given for `inst`; -1 when it is not in the set.
  int64_t PositionOf(const HloInstruction *inst) const {
    size_t i = Find(inst);
    return slots_[i] == inst ? int64_t(positions_[i]) : -1;
  }

private:
  size_t Find(const HloInstruction *inst) const {
    size_t i = (reinterpret_cast<uintptr_t>(inst) >> 4) * 0x9E3779B97F4A7C15ull >> 20 & mask_;
    while (slots_[i] && slots_[i] != inst)
      i = (i + 1) & mask_;
    return i;
  }
  void Grow() {
    std::vector<const HloInstruction *> old(slots_.begin(), slots_.begin() + mask_ + 1);
    std::vector<uint32_t> old_positions(positions_.begin(), positions_.begin() + mask_ + 1);
    Reset(mask_ + 1);
    for (size_t k = 0; k < old.size(); ++k)
      if (old[k])
        Insert(old[k], old_positions[k]);
  }

  std::vector<const HloInstruction *> slots_;
  std::vector<uint32_t> positions_; // of the instruction in the same slot
  size_t mask_ = 0;
  size_t count_ = 0;
};

/// A set of device ids: a bit each for the small ids every real module
/// uses (no allocation), a hash set for the others.
class DeviceIdSet {
public:
  /// Whether `id` was not yet in the set.
  bool insert(int64_t id) {
    if (id < 0 || id >= kBits)
      return large_.insert(id).second;
    uint64_t bit = uint64_t(1) << (id % 64);
    if (small_[id / 64] & bit)
      return false;
    small_[id / 64] |= bit;
    ++small_count_;
    return true;
  }
  bool contains(int64_t id) const {
    if (id < 0 || id >= kBits)
      return large_.contains(id);
    return small_[id / 64] >> (id % 64) & 1;
  }
  size_t size() const { return small_count_ + large_.size(); }

private:
  static constexpr int64_t kBits = 256;
  uint64_t small_[kBits / 64] = {};
  size_t small_count_ = 0;
  llvm::DenseSet<int64_t> large_;
};

/// Starts loading every cache line of an instruction.
void Prefetch(const HloInstruction *inst) {
  const char *bytes = reinterpret_cast<const char *>(inst);
  for (size_t offset = 0; offset < sizeof(HloInstruction); offset += 64)
    __builtin_prefetch(bytes + offset);
}

/// The kinds of problem, in the order the report lists them: the module's
/// own, names, computation references, then for each computation in
/// module order its root and parameter numbers, the structure of each
/// instruction, a cycle, and the shape rules of each instruction. One walk
/// over each computation finds its problems of the kinds from kCallee on;
/// the name rule runs over the whole module once the walks are done.
enum class Kind : uint8_t { kModule, kName, kCallee, kHead, kStructure, kCycle, kRule };
constexpr size_t kFirstWalkKind = static_cast<size_t>(Kind::kCallee);
constexpr size_t kWalkKinds = static_cast<size_t>(Kind::kRule) + 1 - kFirstWalkKind;

/// `computation 'c', instruction 'i': msg`, either name left out when null.
std::string FormatProblem(const HloComputation *comp, const HloInstruction *inst,
                          const llvm::Twine &msg) {
  std::string line;
  if (comp)
    line += "computation '" + comp->name() + "'";
  if (inst)
    line += ((line.empty() ? "" : ", ") + llvm::Twine("instruction '") + inst->name() + "'").str();
  if (!line.empty())
    line += ": ";
  return line + msg.str();
}

/// What the walk over one computation found; written only by the thread
/// that walks it, read by the caller once every walk is done.
struct ComputationResult {
  /// The first kMaxProblems problems of each kind from kCallee on, in the
  /// order found, and how many there were of each, kept or not. That is
  /// enough: the report lists a computation's problems kind by kind, and
  /// shows kMaxProblems in all.
  std::vector<std::string> lines[kWalkKinds];
  size_t counts[kWalkKinds] = {};
  /// Every computation reference of the computation is to a computation of
  /// the module. The shape rules read callees, so they stop at the first
  /// that is not (and the report leaves out every shape rule's problem
  /// when one computation has such a reference, as if the rules had run
  /// only on a module without one).
  bool callees_ok = true;
  /// The instructions in text order and the hashes of their names
  /// (HashName), for the name rule.
  std::vector<const HloInstruction *> insts;
  std::vector<uint64_t> name_hashes;
};

/// Starts loading what a walk reads of an instruction besides the
/// instruction itself: its name (text in the module's source, far from
/// the instruction) and its attribute list.
void PrefetchText(const HloInstruction *inst) {
  __builtin_prefetch(inst->name().data());
  __builtin_prefetch(inst->attributes().data());
}

/// The walk over one computation: every check but the name rule. One per
/// thread, reused from one computation to the next; it reads the module
/// and writes only the ComputationResult it is given.
class ComputationVerifier {
public:
  ComputationVerifier(const HloModule &module,
                      const llvm::DenseSet<const HloComputation *> &computations)
      : module_(module), computations_(computations) {}
  void Check(const HloComputation &comp, ComputationResult &result);

private:
  // ---- Reporting ----
  /// Reports a problem of kind kind_ (kCallee or later).
  void Report(const HloComputation *comp, const HloInstruction *inst, const llvm::Twine &msg);
  /// A problem with the instruction being checked.
  void Fail(const llvm::Twine &msg) { Report(comp_, inst_, msg); }
  void FailAccessor(llvm::Error error) { Fail(AccessorMessage(*inst_, std::move(error))); }
  /// The inferred shape, or nullopt after reporting why there is none.
  std::optional<Shape> Inferred(llvm::Expected<Shape> shape) {
    if (shape)
      return std::move(*shape);
    FailAccessor(shape.takeError());
    return std::nullopt;
  }

  // ---- Computation structure ----
  /// Computation references of inst_ that exist (clears callees_ok when
  /// one dangles).
  void CheckCallees();
  /// Parent, operand, user and control edges of inst_, and its shape; clears
  /// `operands_local` when an edge leaves the computation, `in_text_order`
  /// when one goes to an instruction not yet passed.
  void CheckEdges(size_t position, bool &operands_local, bool &in_text_order);
  void CheckParameterNumbers(const HloComputation &comp,
                             llvm::ArrayRef<const HloInstruction *> params);
  /// By position in the walk; CheckNoCyclesByMap when an edge goes to an
  /// instruction that names the computation as its parent without being
  /// one of its instructions.
  void CheckNoCycles(const HloComputation &comp);
  void CheckNoCyclesByMap(const HloComputation &comp);
  void CheckShapeIsValid(const Shape &shape);

  // ---- Shape rules, one instruction (inst_) at a time ----
  void CheckInstruction();
  bool ExpectOperandCount(int64_t count);
  void CheckElementwiseUnary();
  void CheckElementwiseBinary();
  void CheckSelect();
  void CheckClamp();
  void CheckDot();
  void CheckReshape();
  /// The `dimensions=` of a one-operand op whose result is an array of the
  /// operand's element type (transpose, broadcast); nullopt after a Fail.
  std::optional<std::vector<int64_t>> SameTypeArrayDimensions();
  void CheckTranspose();
  void CheckBroadcast();
  void CheckSlice();
  void CheckConcatenate();
  void CheckReduce();
  void CheckGather();
  void CheckPassThrough();
  void CheckAllGather();
  void CheckAllReduce();
  void CheckReduceScatter();
  void CheckCollectivePermute();
  void CheckGetTupleElement();
  void CheckTuple();
  void CheckWhile();
  void CheckCall(llvm::StringRef attribute);
  void CheckConditional();
  void CheckCustomCall();
  void CheckAsyncPair();

  /// The single computation of `attribute`; reports when it is absent.
  const HloComputation *RequireCallee(llvm::StringRef attribute);
  /// Argument count and shapes against the callee's parameters, and the
  /// callee's root shape against `result` (unless null).
  void CheckCalleeSignature(const HloComputation &callee, llvm::StringRef role,
                            llvm::ArrayRef<const Shape *> args, const Shape *result);
  /// Group size of an all-gather, all-reduce or reduce-scatter as XLA
  /// derives it; nullopt when the module does not tell (see
  /// docs/hlo-verifier.md).
  std::optional<int64_t> CollectiveGroupSize(bool uniform_groups);
  /// Result shape of operand `i` of a collective with `n` operands: the
  /// result itself when n == 1, its tuple element i otherwise.
  const Shape *CollectiveResult(int64_t i, int64_t n);
  /// Operand-by-operand check of all-gather and reduce-scatter, which resize
  /// their `dimension`: rank-0 operands pass through unchanged, every other
  /// operand must have the dimension and `check` verifies its result,
  /// returning false to stop. Returns false when the check stopped.
  bool CheckDimensionCollective(
      llvm::function_ref<bool(int64_t i, const Shape &in, const Shape &out, int64_t dim,
                              std::optional<int64_t> &group)>
          check);
  bool CheckDimensionList(llvm::ArrayRef<int64_t> dims, int64_t rank, llvm::StringRef what,
                          bool unique);

  const HloModule &module_;
  const llvm::DenseSet<const HloComputation *> &computations_;
  /// The parameters of the computation being checked, in text order.
  std::vector<const HloInstruction *> params_;
  InstructionSet passed_;
  /// CheckNoCycles' state of each instruction, by position.
  std::vector<uint8_t> cycle_state_;
  /// Shapes found valid, by address (CheckEdges).
  const Shape *valid_shapes_[64] = {};
  ComputationResult *result_ = nullptr;
  Kind kind_ = Kind::kHead;
  const HloComputation *comp_ = nullptr;
  const HloInstruction *inst_ = nullptr;
};

void ComputationVerifier::Report(const HloComputation *comp, const HloInstruction *inst,
                                 const llvm::Twine &msg) {
  size_t k = static_cast<size_t>(kind_) - kFirstWalkKind;
  if (++result_->counts[k] > kMaxProblems)
    return;
  result_->lines[k].push_back(FormatProblem(comp, inst, msg));
}

void ComputationVerifier::Check(const HloComputation &comp, ComputationResult &result) {
  result_ = &result;
  comp_ = &comp;
  inst_ = nullptr;
  kind_ = Kind::kHead;
  const HloInstruction *root = comp.root_instruction();
  if (!root)
    Report(&comp, nullptr, "has no ROOT instruction");
  else if (root->parent() != &comp)
    Report(&comp, nullptr, "its ROOT '" + root->name() + "' belongs to another computation");

  // Every check of an instruction is made while it is in the cache: a walk
  // over a large module is a cache miss per instruction, and each of the
  // instruction's cache lines is one more, and its name and its attribute
  // list (which live elsewhere) two more. The instructions some steps ahead
  // are prefetched, and the name and attributes of those half as far ahead,
  // whose own lines have arrived by then.
  std::vector<const HloInstruction *> &insts = result.insts;
  insts.reserve(static_cast<size_t>(comp.instruction_count()));
  for (const HloInstruction *inst : comp.instructions())
    insts.push_back(inst);
  const size_t n = insts.size();
  result.name_hashes.resize(n);
  // On the 1M-instruction module of bench/HloVerifyBench, distances from 8
  // to 64 take the same time; without prefetching the instructions the
  // walk took 0.19 s rather than 0.16 s.
  constexpr size_t kAhead = 32;
  constexpr size_t kTextAhead = kAhead / 2;
  for (size_t i = 0; i < std::min(n, kTextAhead); ++i)
    PrefetchText(insts[i]);
  params_.clear();
  passed_.Reset(n);
  bool operands_local = true;
  bool in_text_order = true;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n)
      Prefetch(insts[i + kAhead]);
    if (i + kTextAhead < n)
      PrefetchText(insts[i + kTextAhead]);
    const HloInstruction *inst = insts[i];
    inst_ = inst;
    if (inst->opcode() == HloOpcode::kParameter)
      params_.push_back(inst);
    CheckCallees();
    result.name_hashes[i] = HashName(inst->name());
    CheckEdges(i, operands_local, in_text_order);
    // The shape rules read callees: not after a dangling reference.
    if (result.callees_ok) {
      kind_ = Kind::kRule;
      CheckInstruction();
    }
  }
  inst_ = nullptr;
  kind_ = Kind::kHead;
  CheckParameterNumbers(comp, params_);
  // The cycle walk stays inside the computation; only meaningful when every
  // edge is local, and only needed when one goes forward in the text.
  kind_ = Kind::kCycle;
  if (operands_local && !in_text_order)
    CheckNoCycles(comp);
}

void ComputationVerifier::CheckCallees() {
  for (const HloInstruction::Attribute &attr : inst_->attributes()) {
    for (const HloComputation *callee : attr.computations) {
      if (callee && computations_.contains(callee))
        continue;
      // Not dereferenced: a computation outside the module may be gone.
      result_->callees_ok = false;
      kind_ = Kind::kCallee;
      Report(comp_, inst_, llvm::Twine(attr.name.ref()) +
                               " refers to a computation that is not in the module");
    }
  }
}

void ComputationVerifier::CheckEdges(size_t position, bool &operands_local,
                                     bool &in_text_order) {
  kind_ = Kind::kStructure;
  const HloInstruction *inst = inst_;
  const HloComputation *comp = comp_;
  if (inst->parent() != comp)
    Report(comp, inst, "its parent is not the computation that holds it");
  // Parsed instructions share one Shape per distinct shape text: one found
  // valid is not checked again (an invalid one is, for every instruction).
  const Shape *shape = &inst->shape();
  const Shape *&known = valid_shapes_[(reinterpret_cast<uintptr_t>(shape) >> 4) %
                                      std::size(valid_shapes_)];
  if (known != shape) {
    size_t before = result_->counts[static_cast<size_t>(Kind::kStructure) - kFirstWalkKind];
    CheckShapeIsValid(*shape);
    if (result_->counts[static_cast<size_t>(Kind::kStructure) - kFirstWalkKind] == before)
      known = shape;
  }
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    const HloInstruction *op = inst->operand(i);
    if (!op) {
      Report(comp, inst, "operand " + llvm::Twine(i) + " is missing");
      operands_local = false;
      continue;
    }
    if (op->parent() != comp) {
      operands_local = false;
      Report(comp, inst, "operand " + llvm::Twine(i) + " '" + op->name() + "' belongs to " +
                             (op->parent() ? "computation '" + op->parent()->name() + "'"
                                           : std::string("no computation")));
      continue;
    }
    in_text_order = in_text_order && passed_.Contains(op);
    // Passes walk users as often as operands: the two lists must agree.
    // HasUser is O(1) even for a constant with thousands of users.
    if (!op->HasUser(inst))
      Report(comp, inst, "operand '" + op->name() + "' does not list it as a user");
  }
  for (const HloInstruction *pred : inst->control_predecessors()) {
    if (pred->parent() == comp) {
      in_text_order = in_text_order && passed_.Contains(pred);
      continue;
    }
    operands_local = false;
    Report(comp, inst, "control predecessor '" + pred->name() +
                           "' belongs to another computation");
  }
  passed_.Insert(inst, static_cast<uint32_t>(position));
}

/// An instruction whose name an earlier one of the module has.
struct NameProblem {
  uint32_t ordinal;  // of its computation
  uint32_t position; // in the computation's text order
  uint32_t first;    // ordinal of the computation of the earlier one
};

/// The name rule for the part `part` of `parts` of the names (by hash; see
/// NameTable): the instructions, in module order, whose name an earlier
/// instruction of the module has. `starts[o]` is the position in the module
/// of the first instruction of computation o (and starts.back() their count).
std::vector<NameProblem> FindDuplicateNames(llvm::ArrayRef<ComputationResult> results,
                                            llvm::ArrayRef<uint32_t> starts, unsigned part,
                                            unsigned parts) {
  auto locate = [&](uint32_t index) {
    uint32_t o = static_cast<uint32_t>(llvm::upper_bound(starts, index) - starts.begin()) - 1;
    return std::make_pair(o, index - starts[o]);
  };
  auto inst_at = [&](uint32_t index) {
    auto [o, p] = locate(index);
    return results[o].insts[p];
  };
  auto hash_at = [&](uint32_t index) {
    auto [o, p] = locate(index);
    return results[o].name_hashes[p];
  };
  std::vector<NameProblem> found;
  size_t count = starts.back();
  // A part holds about count / parts names; the slack covers the hash's
  // unevenness without doubling the table (a power of two at least twice
  // the names: 2^21 slots, 16 MiB, for a million names in one part).
  NameTable table(count / parts + count / (64 * parts) + 16);
  // Slots are prefetched kAhead names ahead of their insertion.
  constexpr size_t kAhead = 16;
  for (size_t o = 0; o < results.size(); ++o) {
    llvm::ArrayRef<uint64_t> hashes = results[o].name_hashes;
    llvm::ArrayRef<uint64_t> next =
        o + 1 < results.size() ? llvm::ArrayRef<uint64_t>(results[o + 1].name_hashes)
                               : llvm::ArrayRef<uint64_t>();
    for (size_t p = 0; p < hashes.size(); ++p) {
      // The one kAhead further, in this computation or the next (a
      // computation shorter than kAhead leaves a few unprefetched).
      size_t ahead = p + kAhead;
      if (ahead < hashes.size()) {
        if (NameTable::PartOf(hashes[ahead], parts) == part)
          table.Prefetch(hashes[ahead]);
      } else if (ahead - hashes.size() < next.size()) {
        if (NameTable::PartOf(next[ahead - hashes.size()], parts) == part)
          table.Prefetch(next[ahead - hashes.size()]);
      }
      uint64_t hash = hashes[p];
      if (NameTable::PartOf(hash, parts) != part)
        continue;
      int64_t earlier = table.Insert(starts[o] + static_cast<uint32_t>(p), hash, inst_at, hash_at);
      if (earlier >= 0)
        found.push_back({static_cast<uint32_t>(o), static_cast<uint32_t>(p),
                         locate(static_cast<uint32_t>(earlier)).first});
    }
  }
  return found;
}

/// The whole module: its own checks and the computation names on the
/// caller, the walks over the computations on up to `threads` threads, the
/// instruction names in as many parts, then the report, assembled on the
/// caller in the order of Kind whatever the thread count.
llvm::Error VerifyModule(const HloModule &module, unsigned threads) {
  threads = std::min(loom::resolveThreadCount(threads), 64u);
  std::vector<const HloComputation *> comps;
  comps.reserve(static_cast<size_t>(module.computation_count()));
  for (const HloComputation *comp : module.computations())
    comps.push_back(comp);
  const size_t n = comps.size();
  llvm::DenseSet<const HloComputation *> computations;
  computations.reserve(static_cast<unsigned>(n));
  for (const HloComputation *comp : comps)
    computations.insert(comp);

  std::vector<std::string> module_lines;
  if (!module.entry_computation())
    module_lines.push_back(FormatProblem(
        nullptr, nullptr, "module '" + module.name() + "' has no entry computation"));
  else if (!computations.contains(module.entry_computation()))
    module_lines.push_back(FormatProblem(nullptr, nullptr,
                                         "the entry computation of module '" + module.name() +
                                             "' is not one of its computations"));
  std::vector<char> name_taken(n, 0);
  {
    llvm::DenseMap<llvm::StringRef, const HloComputation *> names;
    names.reserve(static_cast<unsigned>(n));
    for (size_t o = 0; o < n; ++o)
      name_taken[o] = !names.try_emplace(comps[o]->name(), comps[o]).second;
  }

  // The walks: each thread takes the next computation not yet taken (one
  // computation may hold most of a module).
  std::vector<ComputationResult> results(n);
  std::atomic<size_t> next{0};
  size_t workers = std::min<size_t>(threads, n);
  loom::parallelFor(static_cast<unsigned>(workers), workers, [&](size_t) {
    ComputationVerifier verifier(module, computations);
    for (size_t o = next.fetch_add(1, std::memory_order_relaxed); o < n;
         o = next.fetch_add(1, std::memory_order_relaxed))
      verifier.Check(*comps[o], results[o]);
  });

  // The name rule, a part of the names on each thread; the duplicates of
  // all parts in module order are what one table would have found.
  std::vector<uint32_t> starts(n + 1, 0);
  for (size_t o = 0; o < n; ++o)
    starts[o + 1] = starts[o] + static_cast<uint32_t>(results[o].insts.size());
  std::vector<std::vector<NameProblem>> found(threads);
  loom::parallelFor(threads, threads, [&](size_t part) {
    found[part] = FindDuplicateNames(results, starts, static_cast<unsigned>(part), threads);
  });
  std::vector<NameProblem> duplicates = std::move(found[0]);
  for (unsigned part = 1; part < threads; ++part)
    llvm::append_range(duplicates, found[part]);
  if (threads > 1)
    llvm::sort(duplicates, [](const NameProblem &a, const NameProblem &b) {
      return std::make_pair(a.ordinal, a.position) < std::make_pair(b.ordinal, b.position);
    });

  // The report: the first kMaxProblems problems in the order of Kind,
  // computation by computation for the kinds from kHead on, then the count
  // of the rest.
  std::vector<std::string> shown;
  size_t total = 0;
  auto show = [&](llvm::ArrayRef<std::string> lines) {
    for (const std::string &line : lines) {
      if (shown.size() == kMaxProblems)
        return;
      shown.push_back(line);
    }
  };
  total += module_lines.size();
  show(module_lines);
  size_t d = 0;
  for (size_t o = 0; o < n; ++o) {
    // A computation's own name comes before its instructions' names.
    if (name_taken[o]) {
      ++total;
      if (shown.size() < kMaxProblems)
        shown.push_back(FormatProblem(comps[o], nullptr, "another computation has the same name"));
    }
    for (; d < duplicates.size() && duplicates[d].ordinal == o; ++d) {
      ++total;
      if (shown.size() == kMaxProblems)
        continue;
      const NameProblem &p = duplicates[d];
      const HloInstruction *inst = results[o].insts[p.position];
      if (p.first == o)
        shown.push_back(
            FormatProblem(comps[o], inst, "name used by two instructions of this computation"));
      else
        shown.push_back(FormatProblem(comps[o], inst,
                                      "name already used by an instruction of computation '" +
                                          comps[p.first]->name() +
                                          "'; instruction names must be unique across the "
                                          "module"));
    }
  }
  bool callees_ok = llvm::all_of(results, [](const ComputationResult &r) { return r.callees_ok; });
  constexpr size_t kCallee = static_cast<size_t>(Kind::kCallee) - kFirstWalkKind;
  for (const ComputationResult &r : results) {
    total += r.counts[kCallee];
    show(r.lines[kCallee]);
  }
  for (const ComputationResult &r : results) {
    for (size_t k = kCallee + 1; k < kWalkKinds; ++k) {
      // Every shape rule's problem is left out after a dangling reference.
      if (k + kFirstWalkKind == static_cast<size_t>(Kind::kRule) && !callees_ok)
        continue;
      total += r.counts[k];
      show(r.lines[k]);
    }
  }
  if (total == 0)
    return llvm::Error::success();
  std::string msg;
  for (size_t i = 0; i < shown.size(); ++i) {
    if (i)
      msg += '\n';
    msg += shown[i];
  }
  if (total > shown.size())
    msg += "\n... and " + std::to_string(total - shown.size()) + " more problems";
  return makeError(msg);
}

void ComputationVerifier::CheckParameterNumbers(const HloComputation &comp,
                                     llvm::ArrayRef<const HloInstruction *> params) {
  int64_t count = static_cast<int64_t>(params.size());
  std::vector<const HloInstruction *> by_number(count, nullptr);
  for (const HloInstruction *param : params) {
    int64_t n = param->parameter_number();
    if (n < 0 || n >= count) {
      Report(&comp, param, "parameter number " + llvm::Twine(n) +
                               " is out of range: the computation has " + llvm::Twine(count) +
                               " parameters, numbered 0.." + llvm::Twine(count - 1));
      continue;
    }
    if (by_number[n])
      Report(&comp, param, "parameter number " + llvm::Twine(n) + " is also used by '" +
                               by_number[n]->name() + "'");
    else
      by_number[n] = param;
  }
}

void ComputationVerifier::CheckNoCycles(const HloComputation &comp) {
  // The depth-first search of CheckNoCyclesByMap, in the same order, with
  // the state of each instruction at its position (passed_ holds every
  // instruction of the walk) rather than in a map.
  enum : uint8_t { kNew, kOnStack, kDone };
  llvm::ArrayRef<const HloInstruction *> insts = result_->insts;
  cycle_state_.assign(insts.size(), kNew);
  struct Frame {
    size_t position;
    size_t next;
  };
  std::vector<Frame> stack;
  for (size_t start = 0; start < insts.size(); ++start) {
    if (cycle_state_[start] != kNew)
      continue;
    cycle_state_[start] = kOnStack;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      const HloInstruction *inst = insts[f.position];
      size_t num_ops = inst->operands().size();
      size_t num_deps = num_ops + inst->control_predecessors().size();
      if (f.next == num_deps) {
        cycle_state_[f.position] = kDone;
        stack.pop_back();
        continue;
      }
      size_t k = f.next++;
      const HloInstruction *dep =
          k < num_ops ? inst->operand(k) : inst->control_predecessors()[k - num_ops];
      int64_t d = passed_.PositionOf(dep);
      if (d < 0)
        return CheckNoCyclesByMap(comp); // nothing reported yet
      if (cycle_state_[d] == kNew) {
        cycle_state_[d] = kOnStack;
        stack.push_back({static_cast<size_t>(d), 0});
        continue;
      }
      if (cycle_state_[d] != kOnStack)
        continue;
      Report(&comp, dep, "is part of a cycle: it depends on itself through '" +
                             inst->name() + "'");
      return;
    }
  }
}

void ComputationVerifier::CheckNoCyclesByMap(const HloComputation &comp) {
  enum class State : uint8_t { kOnStack, kDone };
  llvm::DenseMap<const HloInstruction *, State> state;
  state.reserve(static_cast<unsigned>(comp.instruction_count()));
  struct Frame {
    const HloInstruction *inst;
    size_t next;
  };
  // Explicit stack: real modules have dependency chains far deeper than the
  // call stack allows.
  std::vector<Frame> stack;
  for (const HloInstruction *start : comp.instructions()) {
    if (state.count(start))
      continue;
    state[start] = State::kOnStack;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      size_t num_ops = f.inst->operands().size();
      size_t num_deps = num_ops + f.inst->control_predecessors().size();
      if (f.next == num_deps) {
        state[f.inst] = State::kDone;
        stack.pop_back();
        continue;
      }
      size_t k = f.next++;
      const HloInstruction *dep = k < num_ops ? f.inst->operand(k)
                                              : f.inst->control_predecessors()[k - num_ops];
      auto it = state.find(dep);
      if (it == state.end()) {
        state[dep] = State::kOnStack;
        stack.push_back({dep, 0});
        continue;
      }
      if (it->second != State::kOnStack)
        continue;
      Report(&comp, dep, "is part of a cycle: it depends on itself through '" +
                             f.inst->name() + "'");
      return;
    }
  }
}

void ComputationVerifier::CheckShapeIsValid(const Shape &shape) {
  if (shape.IsTuple()) {
    for (const Shape &element : shape.tuple_shapes())
      CheckShapeIsValid(element);
    return;
  }
  if (shape.IsBuffer())
    return CheckShapeIsValid(shape.buffer_shape());
  if (!shape.IsArray())
    return;
  int64_t product = 1;
  bool overflow = false;
  // A zero dimension makes the shape empty whatever the others multiply to.
  bool empty = false;
  for (int64_t d : shape.dimensions()) {
    if (d == Shape::kUnboundedSize)
      continue;
    if (d < 0) {
      Fail("shape " + Str(shape) + " has a negative dimension");
      return;
    }
    empty |= d == 0;
    overflow |= __builtin_mul_overflow(product, d, &product);
  }
  if (overflow && !empty) {
    Fail("shape " + Str(shape) + ": the product of its dimensions overflows a 64-bit integer");
    return;
  }
  if (!shape.has_layout())
    return;
  llvm::ArrayRef<int64_t> m2m = shape.layout()->minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
    Fail("layout of " + Str(shape) + " lists " + llvm::Twine(m2m.size()) +
         " dimensions for rank " + llvm::Twine(shape.rank()));
    return;
  }
  // A bit per dimension: no allocation for any rank a real shape has.
  llvm::SmallVector<uint64_t, 1> seen((m2m.size() + 63) / 64, 0);
  for (int64_t d : m2m) {
    if (d < 0 || d >= shape.rank() || (seen[d / 64] >> (d % 64) & 1)) {
      Fail("layout of " + shape.ToString() + " is not a permutation of its dimensions");
      return;
    }
    seen[d / 64] |= uint64_t(1) << (d % 64);
  }
}

bool ComputationVerifier::ExpectOperandCount(int64_t count) {
  if (inst_->operand_count() == count)
    return true;
  Fail(inst_->OpcodeText() + " takes " + llvm::Twine(count) + " operand" +
       (count == 1 ? "" : "s") + ", got " + llvm::Twine(inst_->operand_count()));
  return false;
}

bool ComputationVerifier::CheckDimensionList(llvm::ArrayRef<int64_t> dims, int64_t rank,
                                  llvm::StringRef what, bool unique) {
  std::vector<bool> seen(rank > 0 ? rank : 0, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      Fail(what + " " + llvm::Twine(d) + " is out of range for rank " + llvm::Twine(rank));
      return false;
    }
    if (unique && seen[d]) {
      Fail(what + " " + llvm::Twine(d) + " is listed twice");
      return false;
    }
    seen[d] = true;
  }
  return true;
}

void ComputationVerifier::CheckInstruction() {
  // Shape rules read operand shapes; a missing operand was reported already.
  for (const HloInstruction *op : inst_->operands())
    if (!op)
      return;
  // Async wrappers (`negate-start`, ...) carry the wrapped op's operands but
  // a different result: the wrapped op's rules do not apply to them.
  if (inst_->async_wrapped_opcode())
    return;
  HloOpcode opcode = inst_->opcode();
  if (IsElementwiseUnary(opcode))
    return CheckElementwiseUnary();
  if (IsElementwiseBinary(opcode))
    return CheckElementwiseBinary();
  switch (opcode) {
  case HloOpcode::kSelect: return CheckSelect();
  case HloOpcode::kClamp: return CheckClamp();
  case HloOpcode::kDot: return CheckDot();
  case HloOpcode::kReshape: return CheckReshape();
  case HloOpcode::kTranspose: return CheckTranspose();
  case HloOpcode::kBroadcast: return CheckBroadcast();
  case HloOpcode::kSlice: return CheckSlice();
  case HloOpcode::kConcatenate: return CheckConcatenate();
  case HloOpcode::kReduce: return CheckReduce();
  case HloOpcode::kGather: return CheckGather();
  case HloOpcode::kDomain:
  case HloOpcode::kAddDependency:
  case HloOpcode::kOptimizationBarrier:
    return CheckPassThrough();
  case HloOpcode::kAllGather: return CheckAllGather();
  case HloOpcode::kAllReduce: return CheckAllReduce();
  case HloOpcode::kReduceScatter: return CheckReduceScatter();
  case HloOpcode::kCollectivePermute: return CheckCollectivePermute();
  case HloOpcode::kGetTupleElement: return CheckGetTupleElement();
  case HloOpcode::kTuple: return CheckTuple();
  case HloOpcode::kWhile: return CheckWhile();
  case HloOpcode::kCall: return CheckCall("to_apply");
  case HloOpcode::kFusion: return CheckCall("calls");
  case HloOpcode::kConditional: return CheckConditional();
  case HloOpcode::kCustomCall: return CheckCustomCall();
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kAllReduceDone:
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kAllGatherDone:
  case HloOpcode::kCollectivePermuteStart:
  case HloOpcode::kCollectivePermuteDone:
  case HloOpcode::kCopyDone:
    return CheckAsyncPair();
  case HloOpcode::kParameter:
  case HloOpcode::kConstant:
  case HloOpcode::kIota:
  case HloOpcode::kReplicaId:
  case HloOpcode::kPartitionId:
    ExpectOperandCount(0);
    return;
  default:
    return;
  }
}

void ComputationVerifier::CheckElementwiseUnary() {
  if (!ExpectOperandCount(1))
    return;
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  // copy also copies tuples.
  if (inst_->opcode() == HloOpcode::kCopy) {
    if (!SameShape(in, out))
      Fail("copy result " + Str(out) + " must have the shape of its operand " + Str(in));
    return;
  }
  if (!in.IsArray() || !out.IsArray()) {
    Fail(inst_->OpcodeText() + " needs array shapes, got " + Str(in) + " -> " + Str(out));
    return;
  }
  HloOpcode opcode = inst_->opcode();
  // bitcast-convert between types of different widths adds or drops the
  // innermost dimension; only same-width conversions keep the dimensions.
  bool same_dims_required =
      opcode != HloOpcode::kBitcastConvert ||
      PrimitiveTypeBitWidth(in.element_type()) == PrimitiveTypeBitWidth(out.element_type());
  if (same_dims_required && in.dimensions() != out.dimensions()) {
    Fail(inst_->OpcodeText() + " result " + Str(out) +
         " must have the dimensions of its operand " + Str(in));
    return;
  }
  // convert and bitcast-convert produce any type; every other op's type is
  // the inference rule's.
  // (The operand is an array, the one case the rule rejects.)
  std::optional<PrimitiveType> expected;
  if (opcode != HloOpcode::kConvert && opcode != HloOpcode::kBitcastConvert)
    expected = ShapeInference::UnaryOpElementType(opcode, in.element_type());
  if (expected && out.element_type() != *expected)
    Fail(inst_->OpcodeText() + " of " + Str(in) + " must produce element type " +
         PrimitiveTypeName(*expected) + ", not " + PrimitiveTypeName(out.element_type()));
}

void ComputationVerifier::CheckElementwiseBinary() {
  if (!ExpectOperandCount(2))
    return;
  const Shape &lhs = inst_->operand(0)->shape();
  const Shape &rhs = inst_->operand(1)->shape();
  const Shape &out = inst_->shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) {
    Fail(inst_->OpcodeText() + " needs array shapes, got " + Str(lhs) + ", " + Str(rhs) +
         " -> " + Str(out));
    return;
  }
  // HLO has no implicit broadcasting: both operands and the result have the
  // same dimensions.
  if (lhs.dimensions() != rhs.dimensions() || lhs.dimensions() != out.dimensions()) {
    Fail(inst_->OpcodeText() + " operands " + Str(lhs) + " and " + Str(rhs) +
         " and result " + Str(out) + " must have the same dimensions");
    return;
  }
  HloOpcode opcode = inst_->opcode();
  // stochastic-convert takes random bits of another type beside its input
  // and converts to any type.
  if (opcode == HloOpcode::kStochasticConvert)
    return;
  // Arrays of the same dimensions: the rule rejects them only for
  // different element types, and says why.
  if (lhs.element_type() != rhs.element_type()) {
    Inferred(ShapeInference::InferBinaryOpShape(opcode, lhs, rhs));
    return;
  }
  PrimitiveType expected = ShapeInference::BinaryOpElementType(opcode, lhs.element_type());
  if (out.element_type() != expected)
    Fail(inst_->OpcodeText() + " of " + Str(lhs) + " operands must produce element type " +
         PrimitiveTypeName(expected) + ", not " + PrimitiveTypeName(out.element_type()));
}

void ComputationVerifier::CheckSelect() {
  if (!ExpectOperandCount(3))
    return;
  const Shape &pred = inst_->operand(0)->shape();
  const Shape &on_true = inst_->operand(1)->shape();
  const Shape &on_false = inst_->operand(2)->shape();
  const Shape &out = inst_->shape();
  if (!pred.IsArray() || pred.element_type() != PrimitiveType::PRED) {
    Fail("select predicate must be a pred array, got " + Str(pred));
    return;
  }
  if (!SameShape(on_true, out) || !SameShape(on_false, out)) {
    Fail("select operands " + Str(on_true) + " and " + Str(on_false) +
         " must both have the result shape " + Str(out));
    return;
  }
  // Older XLA accepted a scalar predicate for any shape.
  if (!IsScalar(pred) && (!out.IsArray() || pred.dimensions() != out.dimensions()))
    Fail("select predicate " + Str(pred) + " must be a scalar or have the dimensions of " +
         Str(out));
}

void ComputationVerifier::CheckClamp() {
  if (!ExpectOperandCount(3))
    return;
  const Shape &lo = inst_->operand(0)->shape();
  const Shape &x = inst_->operand(1)->shape();
  const Shape &hi = inst_->operand(2)->shape();
  const Shape &out = inst_->shape();
  if (!SameShape(x, out)) {
    Fail("clamp operand " + Str(x) + " must have the result shape " + Str(out));
    return;
  }
  for (const Shape *bound : {&lo, &hi}) {
    if (bound->element_type() != x.element_type() ||
        (!IsScalar(*bound) && !SameShape(*bound, x))) {
      Fail("clamp bound " + Str(*bound) + " must be a scalar of " +
           PrimitiveTypeName(x.element_type()) + " or have the shape " + Str(x));
      return;
    }
  }
}

void ComputationVerifier::CheckDot() {
  // A sparse dot carries metadata operands after the two matrices.
  if (inst_->HasAttribute("sparsity"))
    return;
  if (!ExpectOperandCount(2))
    return;
  const Shape &lhs = inst_->operand(0)->shape();
  const Shape &rhs = inst_->operand(1)->shape();
  const Shape &out = inst_->shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) {
    Fail("dot needs array shapes, got " + Str(lhs) + ", " + Str(rhs) + " -> " + Str(out));
    return;
  }
  auto dnums = GetDotDimensionNumbers(*inst_);
  if (!dnums)
    return FailAccessor(dnums.takeError());
  // The element type is free (preferred_element_type).
  std::optional<Shape> expected =
      Inferred(ShapeInference::InferDotShape(lhs, rhs, *dnums, out.element_type()));
  if (expected && out.dimensions() != expected->dimensions())
    Fail("dot of " + Str(lhs) + " and " + Str(rhs) + " has result " + Str(out) +
         "; expected dimensions " + FormatIntList(expected->dimensions()));
}

void ComputationVerifier::CheckReshape() {
  if (!ExpectOperandCount(1))
    return;
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  if (!in.IsArray() || !out.IsArray()) {
    Fail("reshape needs array shapes, got " + Str(in) + " -> " + Str(out));
    return;
  }
  if (in.element_type() != out.element_type()) {
    Fail("reshape cannot change the element type: " + Str(in) + " -> " + Str(out));
    return;
  }
  std::optional<int64_t> in_count = in.ElementsIn();
  std::optional<int64_t> out_count = out.ElementsIn();
  // Unbounded dimensions (`?`) have no count to compare.
  if (in_count && out_count && *in_count != *out_count)
    Fail("reshape from " + Str(in) + " (" + llvm::Twine(*in_count) + " elements) to " +
         Str(out) + " (" + llvm::Twine(*out_count) + " elements) changes the element count");
}

std::optional<std::vector<int64_t>> ComputationVerifier::SameTypeArrayDimensions() {
  if (!ExpectOperandCount(1))
    return std::nullopt;
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  auto dims = GetDimensions(*inst_);
  if (!dims) {
    FailAccessor(dims.takeError());
    return std::nullopt;
  }
  if (!in.IsArray() || !out.IsArray() || in.element_type() != out.element_type()) {
    Fail(inst_->OpcodeText() + " result " + Str(out) +
         " must be an array of the operand's type (" + Str(in) + ")");
    return std::nullopt;
  }
  return std::move(*dims);
}

void ComputationVerifier::CheckTranspose() {
  std::optional<std::vector<int64_t>> perm = SameTypeArrayDimensions();
  if (!perm)
    return;
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  std::optional<Shape> expected = Inferred(ShapeInference::InferTransposeShape(in, *perm));
  if (expected && out.dimensions() != expected->dimensions())
    Fail("transpose of " + Str(in) + " by " + FormatIntList(*perm) + " has result " + Str(out) +
         "; expected dimensions " + FormatIntList(expected->dimensions()));
}

void ComputationVerifier::CheckBroadcast() {
  std::optional<std::vector<int64_t>> dims = SameTypeArrayDimensions();
  if (!dims)
    return;
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  if (static_cast<int64_t>(dims->size()) != in.rank()) {
    Fail("broadcast dimensions " + FormatIntList(*dims) + " must map each of the " +
         llvm::Twine(in.rank()) + " operand dimensions");
    return;
  }
  if (!CheckDimensionList(*dims, out.rank(), "broadcast dimension", true))
    return;
  for (int64_t i = 0; i < in.rank(); ++i) {
    int64_t d = (*dims)[i];
    if (in.dimensions(i) != out.dimensions(d)) {
      Fail("broadcast maps operand dimension " + llvm::Twine(i) + " (size " +
           llvm::Twine(in.dimensions(i)) + ") to result dimension " + llvm::Twine(d) +
           " (size " + llvm::Twine(out.dimensions(d)) + ")");
      return;
    }
  }
}

void ComputationVerifier::CheckSlice() {
  if (!ExpectOperandCount(1))
    return;
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  auto slice = GetSliceConfig(*inst_);
  if (!slice)
    return FailAccessor(slice.takeError());
  if (!in.IsArray() || !out.IsArray() || in.element_type() != out.element_type()) {
    Fail("slice result " + Str(out) + " must be an array of the operand's type (" + Str(in) +
         ")");
    return;
  }
  std::optional<Shape> expected = Inferred(ShapeInference::InferSliceShape(in, *slice));
  if (expected && out.dimensions() != expected->dimensions())
    Fail("slice of " + Str(in) + " has result " + Str(out) + "; expected dimensions " +
         FormatIntList(expected->dimensions()));
}

void ComputationVerifier::CheckConcatenate() {
  if (inst_->operand_count() < 1) {
    Fail("concatenate needs at least one operand");
    return;
  }
  auto dims = GetDimensions(*inst_);
  if (!dims)
    return FailAccessor(dims.takeError());
  const Shape &out = inst_->shape();
  if (dims->size() != 1) {
    Fail("concatenate needs exactly one dimension, got " + FormatIntList(*dims));
    return;
  }
  if (!out.IsArray()) {
    Fail("concatenate needs array shapes");
    return;
  }
  std::vector<const Shape *> operands;
  for (const HloInstruction *op : inst_->operands())
    operands.push_back(&op->shape());
  std::optional<Shape> expected =
      Inferred(ShapeInference::InferConcatenateShape(operands, dims->front()));
  if (expected && (out.element_type() != expected->element_type() ||
                   out.dimensions() != expected->dimensions()))
    Fail("concatenate result " + Str(out) + " must be " + Str(*expected));
}

void ComputationVerifier::CheckReduce() {
  auto dims = GetDimensions(*inst_);
  if (!dims)
    return FailAccessor(dims.takeError());
  std::vector<const Shape *> operands;
  for (const HloInstruction *op : inst_->operands())
    operands.push_back(&op->shape());
  // The reducer decides the element types; only the dimensions are fixed.
  std::optional<Shape> expected =
      Inferred(ShapeInference::InferReduceShape(operands, *dims, nullptr));
  if (!expected)
    return;
  const int64_t n = inst_->operand_count() / 2;
  const Shape &out = inst_->shape();
  if (n > 1 && (!out.IsTuple() || out.tuple_shapes_size() != n)) {
    Fail("reduce of " + llvm::Twine(n) + " inputs must produce a tuple of " + llvm::Twine(n) +
         " arrays, got " + Str(out));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape &result = n == 1 ? out : out.tuple_shapes(i);
    const Shape &kept = n == 1 ? *expected : expected->tuple_shapes(i);
    if (!result.IsArray() || result.dimensions() != kept.dimensions()) {
      Fail("reduce result " + Str(result) + " must have dimensions " +
           FormatIntList(kept.dimensions()) + " (input " + Str(inst_->operand(i)->shape()) +
           " without dimensions " + FormatIntList(*dims) + ")");
      return;
    }
  }
  const HloComputation *reducer = RequireCallee("to_apply");
  if (reducer && reducer->num_parameters() != 2 * n)
    Fail("reducer '" + reducer->name() + "' must take " + llvm::Twine(2 * n) +
         " parameters, has " + llvm::Twine(reducer->num_parameters()));
}

void ComputationVerifier::CheckGather() {
  if (!ExpectOperandCount(2))
    return;
  auto dnums = GetGatherDimensionNumbers(*inst_);
  if (!dnums)
    return FailAccessor(dnums.takeError());
  const Shape &operand = inst_->operand(0)->shape();
  const Shape &indices = inst_->operand(1)->shape();
  const Shape &out = inst_->shape();
  std::optional<Shape> expected =
      Inferred(ShapeInference::InferGatherShape(operand, indices, *dnums));
  if (expected && !SameShape(out, *expected))
    Fail("gather of " + Str(operand) + " at " + Str(indices) + " has result " + Str(out) +
         "; expected " + Str(*expected));
}

void ComputationVerifier::CheckPassThrough() {
  // XLA's ShapeVerifier (HandleDomain, HandleAddDependency,
  // HandleOptimizationBarrier): the result is operand 0 unchanged, and the
  // interpreter passes the operand's buffer on as the result.
  HloOpcode opcode = inst_->opcode();
  if (!ExpectOperandCount(opcode == HloOpcode::kAddDependency ? 2 : 1))
    return;
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  if (!SameShape(in, out)) {
    Fail(inst_->OpcodeText() + " result " + Str(out) + " must have the shape of its operand " +
         Str(in));
    return;
  }
  // XLA's HandleAddDependency: operand 1 is the token it depends on.
  if (opcode == HloOpcode::kAddDependency && !inst_->operand(1)->shape().IsToken())
    Fail("add-dependency operand 1 must be a token, got " + Str(inst_->operand(1)->shape()));
}

std::optional<int64_t> ComputationVerifier::CollectiveGroupSize(bool uniform_groups) {
  // XLA's mesh-axes form (`mesh['x'=2,'y'=2] {'y'}`) names the groups by
  // mesh axes; it is not decoded, so its size is unknown.
  const auto *text = inst_->FindAttribute("replica_groups");
  if (text && llvm::StringRef(*text).ltrim().startswith("mesh"))
    return std::nullopt;
  auto groups = GetReplicaGroups(*inst_);
  if (!groups) {
    FailAccessor(groups.takeError());
    return std::nullopt;
  }
  DeviceIdSet seen;
  for (const std::vector<int64_t> &group : groups->groups) {
    if (group.empty()) {
      Fail("replica_groups contains an empty group");
      return std::nullopt;
    }
    if (uniform_groups && group.size() != groups->groups.front().size()) {
      Fail("replica groups must all have the same size");
      return std::nullopt;
    }
    for (int64_t id : group) {
      if (!seen.insert(id)) {
        Fail("device " + llvm::Twine(id) + " appears twice in replica_groups");
        return std::nullopt;
      }
    }
  }
  bool has_channel = GetChannelId(*inst_).has_value();
  bool global_ids = GetUseGlobalDeviceIds(*inst_);
  if (!has_channel && global_ids) {
    Fail("use_global_device_ids=true requires a channel_id");
    return std::nullopt;
  }
  int64_t explicit_size =
      groups->groups.empty() ? 0 : static_cast<int64_t>(groups->groups.front().size());
  int64_t size;
  if (!has_channel) {
    // Cross-replica: groups of replicas; none listed means all of them.
    size = explicit_size ? explicit_size : module_.replica_count();
  } else if (!global_ids) {
    // Cross-replica-and-partition: each replica group spans every partition.
    int64_t replicas = explicit_size ? explicit_size : module_.replica_count();
    if (__builtin_mul_overflow(replicas, module_.num_partitions(), &size))
      return std::nullopt;
  } else if (explicit_size) {
    // Flattened ids: the groups list global device ids.
    size = explicit_size;
  } else {
    // Flattened ids without groups: XLA's verifier refuses the form, but
    // the interpreter (EvalCollectives.cpp, DeviceGroups) and
    // neuron_looped_einsum_replacer (ImplicitGroup) both read it as one
    // group of every device, replica_count x num_partitions, so the result
    // is held to that group's size.
    if (__builtin_mul_overflow(module_.replica_count(), module_.num_partitions(), &size))
      return std::nullopt;
  }
  // Listed groups name ids 0..n-1. (XLA also ties n to replica_count or
  // num_partitions; its own test modules break that, and a module that does
  // not state its device count gets 1 by default, so it is not checked.)
  int64_t named = static_cast<int64_t>(seen.size());
  for (int64_t id = 0; id < named; ++id) {
    if (!seen.contains(id)) {
      Fail("replica_groups name " + llvm::Twine(named) + " devices but not device " +
           llvm::Twine(id) + "; they must name 0.." + llvm::Twine(named - 1));
      return std::nullopt;
    }
  }
  // A size of 1 is what a module without replica_count/num_partitions gets
  // by default; like XLA, treat it as unknown rather than as a real group.
  if (size <= 1)
    return std::nullopt;
  return size;
}

const Shape *ComputationVerifier::CollectiveResult(int64_t i, int64_t n) {
  const Shape &out = inst_->shape();
  if (n == 1)
    return &out;
  if (!out.IsTuple() || out.tuple_shapes_size() != n) {
    Fail(inst_->OpcodeText() + " of " + llvm::Twine(n) + " operands must produce a tuple of " +
         llvm::Twine(n) + " elements, got " + Str(out));
    return nullptr;
  }
  return &out.tuple_shapes(i);
}

bool ComputationVerifier::CheckDimensionCollective(
    llvm::function_ref<bool(int64_t i, const Shape &in, const Shape &out, int64_t dim,
                            std::optional<int64_t> &group)>
        check) {
  int64_t n = inst_->operand_count();
  if (n < 1) {
    Fail(inst_->OpcodeText() + " needs at least one operand");
    return false;
  }
  auto dim_or = GetCollectiveDimension(*inst_);
  if (!dim_or) {
    FailAccessor(dim_or.takeError());
    return false;
  }
  int64_t dim = *dim_or;
  std::optional<int64_t> group = CollectiveGroupSize(/*uniform_groups=*/true);
  for (int64_t i = 0; i < n; ++i) {
    const Shape &in = inst_->operand(i)->shape();
    const Shape *out = CollectiveResult(i, n);
    if (!out)
      return false;
    // Neuron token threading: `(T, bf16[]) all-gather(w, t)` carries a
    // rank-0 ordering token through the collective unchanged.
    if (IsScalar(in)) {
      if (!SameShape(in, *out))
        Fail(inst_->OpcodeText() + " operand " + llvm::Twine(i) + " is rank 0 and passes through "
             "unchanged, so its result must be " + Str(in) + ", got " + Str(*out));
      continue;
    }
    if (!in.IsArray() || dim < 0 || dim >= in.rank()) {
      Fail(inst_->OpcodeText() + " dimension " + llvm::Twine(dim) +
           " is out of range for operand " + llvm::Twine(i) + " " + Str(in));
      return false;
    }
    if (!check(i, in, *out, dim, group))
      return false;
  }
  return true;
}

void ComputationVerifier::CheckAllGather() {
  int64_t n = inst_->operand_count();
  CheckDimensionCollective([&](int64_t i, const Shape &in, const Shape &out, int64_t dim,
                               std::optional<int64_t> &group) {
    // Without a known group size, XLA infers it from the first operand.
    if (!group && in.dimensions(dim) > 0 && out.IsArray() && out.rank() == in.rank())
      group = (out.dimensions(dim) + in.dimensions(dim) - 1) / in.dimensions(dim);
    int64_t factor = group.value_or(1);
    int64_t gathered;
    if (__builtin_mul_overflow(in.dimensions(dim), factor, &gathered)) {
      Fail("all-gather result dimension overflows");
      return false;
    }
    // SameShape(out, expected_shape) below, without building the shape.
    bool same = out.element_type() == in.element_type() && out.rank() == in.rank();
    for (int64_t k = 0; same && k < in.rank(); ++k)
      same = out.dimensions(k) == (k == dim ? gathered : in.dimensions(k));
    if (same)
      return true;
    std::vector<int64_t> expected(in.dimensions().begin(), in.dimensions().end());
    expected[dim] = gathered;
    Shape expected_shape(in.element_type(), expected);
    if (!SameShape(out, expected_shape)) {
      Fail("all-gather result " + llvm::Twine(n == 1 ? "" : "element " + llvm::Twine(i) + " ") +
           Str(out) + " must be operand " + llvm::Twine(i) + " " + Str(in) +
           " with dimension " + llvm::Twine(dim) + " multiplied by the group size " +
           llvm::Twine(factor) + ": " + Str(expected_shape));
      return false;
    }
    return true;
  });
}

void ComputationVerifier::CheckAllReduce() {
  int64_t n = inst_->operand_count();
  if (n < 1) {
    Fail("all-reduce needs at least one operand");
    return;
  }
  // All-reduce groups may differ in size; only their ids are checked.
  CollectiveGroupSize(/*uniform_groups=*/false);
  for (int64_t i = 0; i < n; ++i) {
    const Shape &in = inst_->operand(i)->shape();
    const Shape *out = CollectiveResult(i, n);
    if (!out)
      return;
    if (!SameShape(in, *out)) {
      Fail("all-reduce result " + Str(*out) + " must have the shape of operand " +
           llvm::Twine(i) + " " + Str(in));
      return;
    }
  }
  RequireCallee("to_apply");
}

void ComputationVerifier::CheckReduceScatter() {
  bool ok = CheckDimensionCollective([&](int64_t i, const Shape &in, const Shape &out,
                                         int64_t dim, std::optional<int64_t> &group) {
    if (!group && out.IsArray() && out.rank() == in.rank() && out.dimensions(dim) > 0)
      group = (in.dimensions(dim) + out.dimensions(dim) - 1) / out.dimensions(dim);
    int64_t factor = group.value_or(1);
    if (in.dimensions(dim) % factor != 0) {
      Fail("reduce-scatter dimension " + llvm::Twine(dim) + " of operand " + llvm::Twine(i) +
           " " + Str(in) + " is not divisible by the group size " + llvm::Twine(factor));
      return false;
    }
    std::vector<int64_t> expected(in.dimensions().begin(), in.dimensions().end());
    expected[dim] /= factor;
    Shape expected_shape(in.element_type(), expected);
    if (!SameShape(out, expected_shape)) {
      Fail("reduce-scatter result " + Str(out) + " must be operand " + llvm::Twine(i) + " " +
           Str(in) + " with dimension " + llvm::Twine(dim) + " divided by the group size " +
           llvm::Twine(factor) + ": " + Str(expected_shape));
      return false;
    }
    return true;
  });
  if (!ok)
    return;
  RequireCallee("to_apply");
}

void ComputationVerifier::CheckCollectivePermute() {
  // The combined and in-place forms (several operands, buffer offsets) have
  // rules of their own; the plain form moves one value unchanged.
  if (inst_->operand_count() != 1)
    return;
  const Shape &in = inst_->operand(0)->shape();
  if (!SameShape(in, inst_->shape()))
    Fail("collective-permute result " + Str(inst_->shape()) +
         " must have the shape of its operand " + Str(in));
  auto pairs = GetSourceTargetPairs(*inst_);
  if (!pairs)
    return FailAccessor(pairs.takeError());
  llvm::DenseSet<int64_t> sources, targets;
  for (auto [source, target] : *pairs) {
    if (source < 0 || target < 0)
      Fail("source_target_pairs has a negative device id");
    else if (!sources.insert(source).second)
      Fail("device " + llvm::Twine(source) + " is a source twice in source_target_pairs");
    else if (!targets.insert(target).second)
      Fail("device " + llvm::Twine(target) + " is a target twice in source_target_pairs");
    else
      continue;
    return;
  }
}

void ComputationVerifier::CheckGetTupleElement() {
  if (!ExpectOperandCount(1))
    return;
  const Shape &in = inst_->operand(0)->shape();
  auto index = GetTupleIndex(*inst_);
  if (!index)
    return FailAccessor(index.takeError());
  llvm::Expected<const Shape *> element = ShapeInference::GetTupleElementShape(in, *index);
  if (!element)
    return FailAccessor(element.takeError());
  if (!SameShape(**element, inst_->shape()))
    Fail("get-tuple-element result " + Str(inst_->shape()) + " must be element " +
         llvm::Twine(*index) + " of the tuple: " + Str(**element));
}

void ComputationVerifier::CheckTuple() {
  // SameShape against InferTupleShape, without copying every element.
  const Shape &out = inst_->shape();
  llvm::ArrayRef<HloInstruction *> ops = inst_->operands();
  bool same = out.IsTuple() && out.tuple_shapes_size() == static_cast<int64_t>(ops.size());
  for (size_t i = 0; same && i < ops.size(); ++i)
    same = SameShape(out.tuple_shapes(i), ops[i]->shape());
  if (same)
    return;
  std::vector<const Shape *> operands;
  for (const HloInstruction *op : ops)
    operands.push_back(&op->shape());
  Fail("tuple result " + Str(out) + " must be the tuple of its operand shapes " +
       Str(ShapeInference::InferTupleShape(operands)));
}

const HloComputation *ComputationVerifier::RequireCallee(llvm::StringRef attribute) {
  llvm::ArrayRef<HloComputation *> callees = inst_->CalledComputations(attribute);
  if (callees.size() == 1)
    return callees.front();
  Fail(inst_->OpcodeText() + " needs exactly one computation in '" + attribute + "', has " +
       llvm::Twine(callees.size()));
  return nullptr;
}

void ComputationVerifier::CheckCalleeSignature(const HloComputation &callee, llvm::StringRef role,
                                    llvm::ArrayRef<const Shape *> args, const Shape *result) {
  // Built only for a message: most calls find nothing.
  auto who = [&] { return (role + " computation '" + callee.name() + "'").str(); };
  if (callee.num_parameters() != static_cast<int64_t>(args.size())) {
    Fail("passes " + llvm::Twine(args.size()) + " argument" + (args.size() == 1 ? "" : "s") +
         " to " + who() + ", which has " + llvm::Twine(callee.num_parameters()) + " parameter" +
         (callee.num_parameters() == 1 ? "" : "s"));
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const HloInstruction *param = callee.parameter_instruction(i);
    if (!param || SameShape(param->shape(), *args[i]))
      continue;
    Fail("passes " + Str(*args[i]) + " as argument " + llvm::Twine(i) + " to " + who() +
         ", whose parameter " + llvm::Twine(i) + " '" + param->name() + "' is " +
         Str(param->shape()));
  }
  const HloInstruction *root = callee.root_instruction();
  if (result && root && !SameShape(root->shape(), *result))
    Fail("expects " + Str(*result) + " from " + who() + ", which returns " + Str(root->shape()));
}

void ComputationVerifier::CheckWhile() {
  if (!ExpectOperandCount(1))
    return;
  const Shape &loop = inst_->operand(0)->shape();
  if (!SameShape(loop, inst_->shape()))
    Fail("while result " + Str(inst_->shape()) + " must have the shape of its operand " +
         Str(loop));
  const HloComputation *cond = RequireCallee("condition");
  const HloComputation *body = RequireCallee("body");
  const Shape *args[] = {&loop};
  if (cond) {
    CheckCalleeSignature(*cond, "condition", args, nullptr);
    const HloInstruction *root = cond->root_instruction();
    if (root && !IsScalarOfType(root->shape(), PrimitiveType::PRED))
      Fail("condition computation '" + cond->name() + "' must return pred[], returns " +
           Str(root->shape()));
  }
  if (body)
    CheckCalleeSignature(*body, "body", args, &loop);
}

void ComputationVerifier::CheckCall(llvm::StringRef attribute) {
  const HloComputation *callee = RequireCallee(attribute);
  if (!callee)
    return;
  std::vector<const Shape *> args;
  for (const HloInstruction *op : inst_->operands())
    args.push_back(&op->shape());
  CheckCalleeSignature(*callee, "called", args, &inst_->shape());
}

void ComputationVerifier::CheckConditional() {
  if (inst_->operand_count() < 1) {
    Fail("conditional needs a branch selector operand");
    return;
  }
  const Shape &selector = inst_->operand(0)->shape();
  bool is_pred = IsScalarOfType(selector, PrimitiveType::PRED);
  if (!is_pred && !IsScalarOfType(selector, PrimitiveType::S32)) {
    Fail("conditional selector must be pred[] or s32[], got " + Str(selector));
    return;
  }
  std::vector<const HloComputation *> branches;
  llvm::ArrayRef<HloComputation *> listed = inst_->CalledComputations("branch_computations");
  if (!listed.empty()) {
    branches.assign(listed.begin(), listed.end());
  } else {
    const HloComputation *on_true = RequireCallee("true_computation");
    const HloComputation *on_false = RequireCallee("false_computation");
    if (!on_true || !on_false)
      return;
    branches = {on_true, on_false};
  }
  if (is_pred && branches.size() != 2) {
    Fail("conditional on a pred selects between 2 branches, has " +
         llvm::Twine(branches.size()));
    return;
  }
  if (inst_->operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    Fail("conditional with " + llvm::Twine(branches.size()) + " branches needs " +
         llvm::Twine(branches.size() + 1) + " operands, has " +
         llvm::Twine(inst_->operand_count()));
    return;
  }
  for (size_t b = 0; b < branches.size(); ++b) {
    const Shape *args[] = {&inst_->operand(b + 1)->shape()};
    CheckCalleeSignature(*branches[b], "branch", args, &inst_->shape());
  }
}

void ComputationVerifier::CheckCustomCall() {
  const auto *constraints = inst_->FindAttribute("operand_layout_constraints");
  if (constraints) {
    std::optional<int64_t> count = CountBracedListEntries(*constraints);
    if (count && *count != inst_->operand_count())
      Fail("operand_layout_constraints lists " + llvm::Twine(*count) + " shapes for " +
           llvm::Twine(inst_->operand_count()) + " operands");
  }
  // The fused collective matmul: backend_config decodes and agrees with the
  // loom_* attributes, the operands and the result
  // (docs/collective-matmul-contract.md).
  if (collective_matmul::IsCollectiveMatmul(*inst_))
    if (llvm::Error e = collective_matmul::Verify(*inst_))
      FailAccessor(std::move(e));
}

// The -start / -done halves of the asynchronous collectives, as XLA's
// verifier checks them: all-reduce-start has its operand's shape (a tuple for
// several), collective-permute-start (one operand) returns (operand, result,
// context...), all-gather-start (operand(s), result); a -done returns the
// result its -start holds.
void ComputationVerifier::CheckAsyncPair() {
  const Shape &out = inst_->shape();
  const HloOpcode opcode = inst_->opcode();
  if (opcode == HloOpcode::kAllGatherStart || opcode == HloOpcode::kCollectivePermuteStart) {
    int64_t n = inst_->operand_count();
    // The combined and in-place forms of collective-permute-start have
    // rules of their own.
    if (n < 1 || (opcode == HloOpcode::kCollectivePermuteStart && n != 1))
      return;
    // Older XLA (and MHLO's export) write all-gather-start with the gathered
    // result itself as its shape; that form is not checked here.
    if (opcode == HloOpcode::kAllGatherStart && !out.IsTuple())
      return;
    std::vector<const Shape *> operands;
    for (const HloInstruction *op : inst_->operands())
      operands.push_back(&op->shape());
    Shape held = n == 1 ? *operands.front() : ShapeInference::InferTupleShape(operands);
    bool ok = out.IsTuple() && out.tuple_shapes_size() >= 2 && SameShape(out.tuple_shapes(0), held);
    if (ok && opcode == HloOpcode::kCollectivePermuteStart)
      ok = SameShape(out.tuple_shapes(1), held);
    if (ok && opcode == HloOpcode::kAllGatherStart)
      ok = out.tuple_shapes_size() == 2;
    if (!ok)
      Fail(inst_->OpcodeText() + " must return a tuple of its operand " + Str(held) +
           (opcode == HloOpcode::kCollectivePermuteStart
                ? ", the result of its shape, and context values"
                : " and the gathered result") +
           ", got " + Str(out));
    return;
  }
  std::optional<Shape> expected = Inferred(ShapeInference::InferInstructionShape(*inst_));
  if (expected && !SameShape(*expected, out))
    Fail(inst_->OpcodeText() + " result " + Str(out) + " must be " + Str(*expected));
}

} // namespace

llvm::Error VerifyHloModule(const HloModule &module) { return VerifyModule(module, 1); }

llvm::Error VerifyHloModule(const HloModule &module, unsigned threads) {
  return VerifyModule(module, threads);
}

llvm::Expected<bool> HloVerifier::Run(HloModule &module) {
  if (llvm::Error err = VerifyHloModule(module))
    return err;
  return false;
}

} // namespace loom::hlo
