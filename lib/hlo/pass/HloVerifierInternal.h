//===- HloVerifierInternal.h - The parts of the HLO verifier --------------===//
//
// Internal to lib/hlo/pass. VerifyHloModule (HloVerifier.h) is split along
// the seams of its work, each file one part:
//
//   HloVerifier.cpp            the driver: the module's own checks, the walks
//                              over the computations (a large one in pieces)
//                              on up to `threads` threads, each computation's
//                              root, parameter numbers and cycle search, the
//                              name rule in as many parts, and
//                              the report, in the order of Kind whatever the
//                              thread count (docs/hlo-verifier.md, "Threads")
//   HloVerifierNames.cpp       the name tables: computation names, and the
//                              instruction names module-wide in parts by
//                              HloNameTable's hash
//   HloVerifierStructure.cpp   the walk over a computation or a piece of
//                              one: operand, user and control edges,
//                              computation references, shape validity;
//                              root and parameter numbers, and the one
//                              depth-first search for cycles
//   HloVerifierShapes.cpp      the shape rules of each opcode but the
//                              collectives
//   HloVerifierCollectives.cpp the shape rules of the collectives (groups,
//                              all-gather, all-reduce, reduce-scatter,
//                              collective-permute, the async -start/-done
//                              pairs)
//
// What one walk writes is its piece's WalkResult; the driver reads them
// once every walk is done.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_HLO_PASS_HLOVERIFIERINTERNAL_H
#define LOOM_LIB_HLO_PASS_HLOVERIFIERINTERNAL_H

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/ir/Shape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::hlo::hlo_verifier {

// Enough to see a pattern in a badly broken module without flooding the
// terminal; the count of the rest is still reported.
constexpr size_t kMaxProblems = 50;

/// Equal ignoring layouts and dynamic-dimension markers (dimension values,
/// which are bounds for `<=N`, still compared): XLA's ShapeUtil::Compatible,
/// which its verifier uses when it is not layout sensitive.
inline bool SameShape(const Shape &a, const Shape &b) {
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

inline std::string Str(const Shape &shape) { return shape.ToString(/*PrintLayout=*/false); }

inline bool IsScalar(const Shape &shape) { return shape.IsArray() && shape.rank() == 0; }

inline bool IsScalarOfType(const Shape &shape, PrimitiveType type) {
  return IsScalar(shape) && shape.element_type() == type;
}

/// The message of an accessor error without the "'name': " prefix every
/// accessor puts first: the verifier already names the instruction.
std::string AccessorMessage(const HloInstruction &inst, llvm::Error error);

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
                          const llvm::Twine &msg);

/// What the walk over one piece of a computation found: a range of its
/// text-order slots, the whole computation unless it is large and the walk
/// runs on several threads (docs/hlo-verifier.md, "Threads"). Written only
/// by the thread that walks the piece, read by the caller once every walk
/// is done. The caller's checks of a whole computation (root, parameter
/// numbers, the cycle search) report into a result of their own.
struct WalkResult {
  /// The first kMaxProblems problems of each kind from kCallee on, in the
  /// order found, and how many there were of each, kept or not. That is
  /// enough: the report lists a computation's problems kind by kind, the
  /// pieces of each kind in text order, and shows kMaxProblems in all.
  std::vector<std::string> lines[kWalkKinds];
  size_t counts[kWalkKinds] = {};
  /// Every computation reference of the piece is to a computation of the
  /// module. The shape rules read callees, so they stop at the first that
  /// is not (and the report leaves out every shape rule's problem when one
  /// computation has such a reference, as if the rules had run only on a
  /// module without one).
  bool callees_ok = true;
  /// Every operand and control predecessor is an instruction of the
  /// computation; and every one comes earlier in the text. The cycle search
  /// needs the first and only the second's failure.
  bool operands_local = true;
  bool in_text_order = true;
  /// The hashes of the names of the piece's instructions in text order
  /// (HloNameTable::Hash64), for the name rule, which reads the
  /// instructions through Instruction().
  std::vector<uint64_t> name_hashes;
  /// The computation and the first slot of the piece, and its instructions
  /// when removed ones left empty slots in it (otherwise the instruction
  /// at position p is the one in slot from + p).
  const HloComputation *comp = nullptr;
  size_t from = 0;
  std::vector<const HloInstruction *> insts;
  const HloInstruction *Instruction(size_t position) const {
    return insts.empty() ? comp->instruction_in_slot(from + position) : insts[position];
  }
  size_t size() const { return name_hashes.size(); }
  /// Its parameters in text order, for the parameter numbers.
  std::vector<const HloInstruction *> params;
};

/// The walk over computations and pieces of them: every check but the name
/// rule. One per thread, reused from one piece to the next; it reads the
/// module and writes only the WalkResult it is given.
class ComputationVerifier {
public:
  ComputationVerifier(const HloModule &module,
                      const llvm::DenseSet<const HloComputation *> &computations)
      : module_(module), computations_(computations) {}
  /// The checks of each instruction in the text-order slots [from, to) of
  /// `comp`: computation references, edges, shape validity, shape rules.
  void CheckPiece(const HloComputation &comp, size_t from, size_t to, WalkResult &result);
  /// The root and the parameter numbers of `comp`, whose pieces are
  /// `pieces` (in text order, every one walked).
  void CheckHead(const HloComputation &comp, llvm::ArrayRef<WalkResult> pieces,
                 WalkResult &result);
  /// The depth-first search for a cycle in `comp` (HloVerifierStructure.cpp),
  /// reported into `result`: only meaningful when every edge is local, and
  /// only needed when one goes forward in the text.
  void CheckCycles(const HloComputation &comp, WalkResult &result);

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

  // ---- Computation structure (HloVerifierStructure.cpp) ----
  /// Computation references of inst_ that exist (clears callees_ok when
  /// one dangles).
  void CheckCallees();
  /// Parent, operand, user and control edges of inst_, and its shape; clears
  /// the result's `operands_local` when an edge leaves the computation,
  /// `in_text_order` when one goes to an instruction not before inst_.
  void CheckEdges();
  void CheckParameterNumbers(const HloComputation &comp,
                             llvm::ArrayRef<const HloInstruction *> params);
  void CheckShapeIsValid(const Shape &shape);

  // ---- Shape rules, one instruction (inst_) at a time (HloVerifierShapes.cpp;
  // the collectives' in HloVerifierCollectives.cpp) ----
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
  void CheckDynamicSlice();
  void CheckDynamicUpdateSlice();
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
  /// The text-order slot of `inst` in the computation being checked, -1
  /// when it is not one of its instructions. The slots of a computation
  /// increase along its text order, so they tell whether an operand comes
  /// earlier without a table of positions, in a piece as in the whole.
  int64_t SlotOf(const HloInstruction *inst) const {
    if (inst->parent() != comp_)
      return -1;
    size_t slot = inst->text_order_slot();
    if (slot >= comp_->slot_count() || comp_->instruction_in_slot(slot) != inst)
      return -1;
    return static_cast<int64_t>(slot);
  }
  /// Whether `inst` comes before inst_ (in slot slot_) in the text of the
  /// computation.
  bool Before(const HloInstruction *inst) const {
    int64_t slot = SlotOf(inst);
    return slot >= 0 && slot < static_cast<int64_t>(slot_);
  }
  bool CheckDimensionList(llvm::ArrayRef<int64_t> dims, int64_t rank, llvm::StringRef what,
                          bool unique);

  const HloModule &module_;
  const llvm::DenseSet<const HloComputation *> &computations_;
  /// CheckCycles' state of each instruction, by text-order slot.
  std::vector<uint8_t> cycle_state_;
  /// Shapes found valid, by address (CheckEdges).
  const Shape *valid_shapes_[64] = {};
  WalkResult *result_ = nullptr;
  Kind kind_ = Kind::kHead;
  const HloComputation *comp_ = nullptr;
  const HloInstruction *inst_ = nullptr;
  /// The text-order slot of inst_ in comp_, during CheckPiece.
  size_t slot_ = 0;
};

/// The computations of `comps` (in module order) whose name an earlier one
/// has (HloVerifierNames.cpp).
std::vector<char> FindDuplicateComputationNames(llvm::ArrayRef<const HloComputation *> comps);

/// An instruction whose name an earlier one of the module has.
struct NameProblem {
  uint32_t ordinal;  // of its piece, in module order
  uint32_t position; // in the piece's text order
  uint32_t first;    // ordinal of the piece of the earlier one
};

/// The name rule for the part `part` of `parts` of the names (by hash; see
/// HloVerifierNames.cpp): the instructions, in module order, whose name an
/// earlier instruction of the module has. `results` are the walks' pieces
/// in module order; `starts[o]` is the position in the module of the first
/// instruction of piece o (and starts.back() their count).
std::vector<NameProblem> FindDuplicateNames(llvm::ArrayRef<WalkResult> results,
                                            llvm::ArrayRef<uint32_t> starts, unsigned part,
                                            unsigned parts);

} // namespace loom::hlo::hlo_verifier

#endif
