//===- HloVerifierInternal.h - The parts of the HLO verifier --------------===//
//
// Internal to lib/hlo/pass. VerifyHloModule (HloVerifier.h) is split along
// the seams of its work, each file one part:
//
//   HloVerifier.cpp            the driver: the module's own checks, the walks
//                              over the computations on up to `threads`
//                              threads, the name rule in as many parts, and
//                              the report, in the order of Kind whatever the
//                              thread count (docs/hlo-verifier.md, "Threads")
//   HloVerifierNames.cpp       the name tables: computation names, and the
//                              instruction names module-wide in parts by
//                              HloNameTable's hash
//   HloVerifierStructure.cpp   the walk over one computation: root and
//                              parameter numbers, operand, user and control
//                              edges, computation references, shape
//                              validity, and the one depth-first search for
//                              cycles
//   HloVerifierShapes.cpp      the shape rules of each opcode but the
//                              collectives
//   HloVerifierCollectives.cpp the shape rules of the collectives (groups,
//                              all-gather, all-reduce, reduce-scatter,
//                              collective-permute, the async -start/-done
//                              pairs)
//
// What one walk writes is its computation's ComputationResult; the driver
// reads them once every walk is done.
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
  /// (HloNameTable::Hash64), for the name rule.
  std::vector<const HloInstruction *> insts;
  std::vector<uint64_t> name_hashes;
};

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

  // ---- Computation structure (HloVerifierStructure.cpp) ----
  /// Computation references of inst_ that exist (clears callees_ok when
  /// one dangles).
  void CheckCallees();
  /// Parent, operand, user and control edges of inst_, and its shape; clears
  /// `operands_local` when an edge leaves the computation, `in_text_order`
  /// when one goes to an instruction not yet passed.
  void CheckEdges(size_t position, bool &operands_local, bool &in_text_order);
  void CheckParameterNumbers(const HloComputation &comp,
                             llvm::ArrayRef<const HloInstruction *> params);
  /// The depth-first search for a cycle (HloVerifierStructure.cpp).
  void CheckNoCycles(const HloComputation &comp);
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
  /// Where `inst` is in the walk over the computation being checked, -1
  /// when it is not one of its instructions. From the instruction's
  /// text-order slot: no hashing, and recent operands are in the cache.
  int64_t WalkPosition(const HloInstruction *inst) const {
    if (inst->parent() != comp_)
      return -1;
    size_t slot = inst->text_order_slot();
    if (slot >= comp_->slot_count() || comp_->instruction_in_slot(slot) != inst)
      return -1;
    return slot_positions_[slot];
  }
  /// Whether the walk has passed `inst` before `position`.
  bool Passed(const HloInstruction *inst, size_t position) const {
    int64_t p = WalkPosition(inst);
    return p >= 0 && p < static_cast<int64_t>(position);
  }
  bool CheckDimensionList(llvm::ArrayRef<int64_t> dims, int64_t rank, llvm::StringRef what,
                          bool unique);

  const HloModule &module_;
  const llvm::DenseSet<const HloComputation *> &computations_;
  /// The parameters of the computation being checked, in text order.
  std::vector<const HloInstruction *> params_;
  /// The walk position of the instruction in each text-order slot of the
  /// computation being checked (WalkPosition).
  std::vector<uint32_t> slot_positions_;
  /// CheckNoCycles' state of each instruction, by position.
  std::vector<uint8_t> cycle_state_;
  /// Shapes found valid, by address (CheckEdges).
  const Shape *valid_shapes_[64] = {};
  ComputationResult *result_ = nullptr;
  Kind kind_ = Kind::kHead;
  const HloComputation *comp_ = nullptr;
  const HloInstruction *inst_ = nullptr;
};

/// The computations of `comps` (in module order) whose name an earlier one
/// has (HloVerifierNames.cpp).
std::vector<char> FindDuplicateComputationNames(llvm::ArrayRef<const HloComputation *> comps);

/// An instruction whose name an earlier one of the module has.
struct NameProblem {
  uint32_t ordinal;  // of its computation
  uint32_t position; // in the computation's text order
  uint32_t first;    // ordinal of the computation of the earlier one
};

/// The name rule for the part `part` of `parts` of the names (by hash; see
/// HloVerifierNames.cpp): the instructions, in module order, whose name an
/// earlier instruction of the module has. `starts[o]` is the position in
/// the module of the first instruction of computation o (and starts.back()
/// their count).
std::vector<NameProblem> FindDuplicateNames(llvm::ArrayRef<ComputationResult> results,
                                            llvm::ArrayRef<uint32_t> starts, unsigned part,
                                            unsigned parts);

} // namespace loom::hlo::hlo_verifier

#endif
