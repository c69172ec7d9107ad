#include "loom/hlo/pass/HloVerifier.h"

#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/ShapeInference.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

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
  std::string prefix = "'" + inst.name() + "': ";
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

class Verifier {
public:
  explicit Verifier(const HloModule &module) : module_(module) {}
  llvm::Error Run();

private:
  // ---- Reporting ----
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

  // ---- Module and computation structure ----
  /// Unique names and computation references that exist; false when a
  /// reference dangles. Also collects params_.
  bool CheckNamesAndCallees();
  void CheckComputation(const HloComputation &comp,
                        llvm::ArrayRef<const HloInstruction *> params);
  void CheckParameterNumbers(const HloComputation &comp,
                             llvm::ArrayRef<const HloInstruction *> params);
  void CheckNoCycles(const HloComputation &comp);
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
  llvm::DenseSet<const HloComputation *> computations_;
  /// The parameters of each computation, in module order and text order.
  std::vector<std::vector<const HloInstruction *>> params_;
  std::vector<std::string> problems_;
  size_t dropped_ = 0;
  const HloComputation *comp_ = nullptr;
  const HloInstruction *inst_ = nullptr;
};

void Verifier::Report(const HloComputation *comp, const HloInstruction *inst,
                      const llvm::Twine &msg) {
  if (problems_.size() >= kMaxProblems) {
    ++dropped_;
    return;
  }
  std::string line;
  if (comp)
    line += "computation '" + comp->name() + "'";
  if (inst)
    line += (line.empty() ? "" : ", ") + std::string("instruction '") + inst->name() + "'";
  if (!line.empty())
    line += ": ";
  problems_.push_back(line + msg.str());
}

llvm::Error Verifier::Run() {
  for (const HloComputation *comp : module_.computations())
    computations_.insert(comp);
  if (!module_.entry_computation())
    Report(nullptr, nullptr, "module '" + module_.name() + "' has no entry computation");
  else if (!computations_.contains(module_.entry_computation()))
    Report(nullptr, nullptr, "the entry computation of module '" + module_.name() +
                                 "' is not one of its computations");
  // Callee signatures are read below; a dangling reference must be known
  // before anything dereferences it.
  bool callees_ok = CheckNamesAndCallees();
  size_t ordinal = 0;
  for (const HloComputation *comp : module_.computations()) {
    comp_ = comp;
    inst_ = nullptr;
    CheckComputation(*comp, params_[ordinal++]);
    if (!callees_ok)
      continue;
    for (const HloInstruction *inst : comp->instructions()) {
      inst_ = inst;
      CheckInstruction();
    }
  }
  if (problems_.empty())
    return llvm::Error::success();
  std::string msg = llvm::join(problems_, "\n");
  if (dropped_)
    msg += "\n... and " + std::to_string(dropped_) + " more problems";
  return makeError(msg);
}

bool Verifier::CheckNamesAndCallees() {
  // One walk over every instruction of the module (each walk of a large
  // module is a cache miss per instruction): names, computation references,
  // and the parameters CheckParameterNumbers reads.
  // XLA requires instruction names to be unique across the module, not just
  // within a computation: passes look instructions up by name module-wide.
  // Views of the names, which outlive the walk: no copy, no allocation per
  // name.
  llvm::DenseMap<llvm::StringRef, const HloComputation *> computation_names;
  computation_names.reserve(static_cast<unsigned>(module_.computation_count()));
  llvm::DenseMap<llvm::StringRef, const HloComputation *> instruction_names;
  instruction_names.reserve(static_cast<unsigned>(module_.instruction_count()));
  // Reports of the computation references come after every name report, as
  // when they were two walks.
  struct DanglingCallee {
    const HloComputation *comp;
    const HloInstruction *inst;
    const HloInstruction::Attribute *attr;
  };
  std::vector<DanglingCallee> dangling;
  params_.clear();
  params_.resize(module_.computation_count());
  size_t ordinal = 0;
  for (const HloComputation *comp : module_.computations()) {
    auto [cit, fresh_comp] = computation_names.try_emplace(comp->name(), comp);
    if (!fresh_comp)
      Report(comp, nullptr, "another computation has the same name");
    std::vector<const HloInstruction *> &params = params_[ordinal++];
    for (const HloInstruction *inst : comp->instructions()) {
      if (inst->opcode() == HloOpcode::kParameter)
        params.push_back(inst);
      for (const HloInstruction::Attribute &attr : inst->attributes()) {
        for (const HloComputation *callee : attr.computations) {
          if (callee && computations_.contains(callee))
            continue;
          // Not dereferenced: a computation outside the module may be gone.
          dangling.push_back({comp, inst, &attr});
        }
      }
      auto [it, fresh] = instruction_names.try_emplace(inst->name(), comp);
      if (fresh)
        continue;
      if (it->second == comp)
        Report(comp, inst, "name used by two instructions of this computation");
      else
        Report(comp, inst, "name already used by an instruction of computation '" +
                               it->second->name() + "'; instruction names must be "
                               "unique across the module");
    }
  }
  for (const DanglingCallee &d : dangling)
    Report(d.comp, d.inst,
           llvm::Twine(d.attr->name) + " refers to a computation that is not in the module");
  return dangling.empty();
}

void Verifier::CheckComputation(const HloComputation &comp,
                                llvm::ArrayRef<const HloInstruction *> params) {
  const HloInstruction *root = comp.root_instruction();
  if (!root)
    Report(&comp, nullptr, "has no ROOT instruction");
  else if (root->parent() != &comp)
    Report(&comp, nullptr, "its ROOT '" + root->name() + "' belongs to another computation");
  CheckParameterNumbers(comp, params);

  bool operands_local = true;
  for (const HloInstruction *inst : comp.instructions()) {
    inst_ = inst;
    if (inst->parent() != &comp)
      Report(&comp, inst, "its parent is not the computation that holds it");
    CheckShapeIsValid(inst->shape());
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      const HloInstruction *op = inst->operand(i);
      if (!op) {
        Report(&comp, inst, "operand " + llvm::Twine(i) + " is missing");
        operands_local = false;
        continue;
      }
      if (op->parent() != &comp) {
        operands_local = false;
        Report(&comp, inst, "operand " + llvm::Twine(i) + " '" + op->name() +
                                "' belongs to " +
                                (op->parent() ? "computation '" + op->parent()->name() + "'"
                                              : std::string("no computation")));
        continue;
      }
      // Passes walk users as often as operands: the two lists must agree.
      // HasUser is O(1) even for a constant with thousands of users.
      if (!op->HasUser(inst))
        Report(&comp, inst, "operand '" + op->name() + "' does not list it as a user");
    }
    for (const HloInstruction *pred : inst->control_predecessors()) {
      if (pred->parent() == &comp)
        continue;
      operands_local = false;
      Report(&comp, inst, "control predecessor '" + pred->name() +
                              "' belongs to another computation");
    }
  }
  inst_ = nullptr;
  // The cycle walk stays inside the computation; only meaningful when every
  // edge is local.
  if (operands_local)
    CheckNoCycles(comp);
}

void Verifier::CheckParameterNumbers(const HloComputation &comp,
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

void Verifier::CheckNoCycles(const HloComputation &comp) {
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

void Verifier::CheckShapeIsValid(const Shape &shape) {
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
  const std::vector<int64_t> &m2m = shape.layout()->minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != shape.rank()) {
    Fail("layout of " + Str(shape) + " lists " + llvm::Twine(m2m.size()) +
         " dimensions for rank " + llvm::Twine(shape.rank()));
    return;
  }
  std::vector<bool> seen(m2m.size(), false);
  for (int64_t d : m2m) {
    if (d < 0 || d >= shape.rank() || seen[d]) {
      Fail("layout of " + shape.ToString() + " is not a permutation of its dimensions");
      return;
    }
    seen[d] = true;
  }
}

bool Verifier::ExpectOperandCount(int64_t count) {
  if (inst_->operand_count() == count)
    return true;
  Fail(inst_->OpcodeText() + " takes " + llvm::Twine(count) + " operand" +
       (count == 1 ? "" : "s") + ", got " + llvm::Twine(inst_->operand_count()));
  return false;
}

bool Verifier::CheckDimensionList(llvm::ArrayRef<int64_t> dims, int64_t rank,
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

void Verifier::CheckInstruction() {
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

void Verifier::CheckElementwiseUnary() {
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
  std::optional<PrimitiveType> expected;
  if (opcode != HloOpcode::kConvert && opcode != HloOpcode::kBitcastConvert) {
    std::optional<Shape> inferred = Inferred(ShapeInference::InferUnaryOpShape(opcode, in));
    if (!inferred)
      return;
    expected = inferred->element_type();
  }
  if (expected && out.element_type() != *expected)
    Fail(inst_->OpcodeText() + " of " + Str(in) + " must produce element type " +
         PrimitiveTypeName(*expected) + ", not " + PrimitiveTypeName(out.element_type()));
}

void Verifier::CheckElementwiseBinary() {
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
  std::optional<Shape> inferred =
      Inferred(ShapeInference::InferBinaryOpShape(opcode, lhs, rhs));
  if (!inferred)
    return;
  PrimitiveType expected = inferred->element_type();
  if (out.element_type() != expected)
    Fail(inst_->OpcodeText() + " of " + Str(lhs) + " operands must produce element type " +
         PrimitiveTypeName(expected) + ", not " + PrimitiveTypeName(out.element_type()));
}

void Verifier::CheckSelect() {
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

void Verifier::CheckClamp() {
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

void Verifier::CheckDot() {
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

void Verifier::CheckReshape() {
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

std::optional<std::vector<int64_t>> Verifier::SameTypeArrayDimensions() {
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

void Verifier::CheckTranspose() {
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

void Verifier::CheckBroadcast() {
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

void Verifier::CheckSlice() {
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

void Verifier::CheckConcatenate() {
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

void Verifier::CheckReduce() {
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

void Verifier::CheckGather() {
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

void Verifier::CheckPassThrough() {
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

std::optional<int64_t> Verifier::CollectiveGroupSize(bool uniform_groups) {
  // XLA's mesh-axes form (`mesh['x'=2,'y'=2] {'y'}`) names the groups by
  // mesh axes; it is not decoded, so its size is unknown.
  const std::string *text = inst_->FindAttribute("replica_groups");
  if (text && llvm::StringRef(*text).ltrim().startswith("mesh"))
    return std::nullopt;
  auto groups = GetReplicaGroups(*inst_);
  if (!groups) {
    FailAccessor(groups.takeError());
    return std::nullopt;
  }
  llvm::DenseSet<int64_t> seen;
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
      if (!seen.insert(id).second) {
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

const Shape *Verifier::CollectiveResult(int64_t i, int64_t n) {
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

bool Verifier::CheckDimensionCollective(
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

void Verifier::CheckAllGather() {
  int64_t n = inst_->operand_count();
  CheckDimensionCollective([&](int64_t i, const Shape &in, const Shape &out, int64_t dim,
                               std::optional<int64_t> &group) {
    // Without a known group size, XLA infers it from the first operand.
    if (!group && in.dimensions(dim) > 0 && out.IsArray() && out.rank() == in.rank())
      group = (out.dimensions(dim) + in.dimensions(dim) - 1) / in.dimensions(dim);
    std::vector<int64_t> expected(in.dimensions().begin(), in.dimensions().end());
    int64_t factor = group.value_or(1);
    if (__builtin_mul_overflow(expected[dim], factor, &expected[dim])) {
      Fail("all-gather result dimension overflows");
      return false;
    }
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

void Verifier::CheckAllReduce() {
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

void Verifier::CheckReduceScatter() {
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

void Verifier::CheckCollectivePermute() {
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

void Verifier::CheckGetTupleElement() {
  if (!ExpectOperandCount(1))
    return;
  const Shape &in = inst_->operand(0)->shape();
  auto index = GetTupleIndex(*inst_);
  if (!index)
    return FailAccessor(index.takeError());
  std::optional<Shape> element =
      Inferred(ShapeInference::InferGetTupleElementShape(in, *index));
  if (element && !SameShape(*element, inst_->shape()))
    Fail("get-tuple-element result " + Str(inst_->shape()) + " must be element " +
         llvm::Twine(*index) + " of the tuple: " + Str(*element));
}

void Verifier::CheckTuple() {
  const Shape &out = inst_->shape();
  std::vector<const Shape *> operands;
  for (const HloInstruction *op : inst_->operands())
    operands.push_back(&op->shape());
  Shape expected = ShapeInference::InferTupleShape(operands);
  if (!SameShape(out, expected))
    Fail("tuple result " + Str(out) + " must be the tuple of its operand shapes " +
         Str(expected));
}

const HloComputation *Verifier::RequireCallee(llvm::StringRef attribute) {
  llvm::ArrayRef<HloComputation *> callees = inst_->CalledComputations(attribute);
  if (callees.size() == 1)
    return callees.front();
  Fail(inst_->OpcodeText() + " needs exactly one computation in '" + attribute + "', has " +
       llvm::Twine(callees.size()));
  return nullptr;
}

void Verifier::CheckCalleeSignature(const HloComputation &callee, llvm::StringRef role,
                                    llvm::ArrayRef<const Shape *> args, const Shape *result) {
  std::string who = (role + " computation '" + callee.name() + "'").str();
  if (callee.num_parameters() != static_cast<int64_t>(args.size())) {
    Fail("passes " + llvm::Twine(args.size()) + " argument" + (args.size() == 1 ? "" : "s") +
         " to " + who + ", which has " + llvm::Twine(callee.num_parameters()) + " parameter" +
         (callee.num_parameters() == 1 ? "" : "s"));
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const HloInstruction *param = callee.parameter_instruction(i);
    if (!param || SameShape(param->shape(), *args[i]))
      continue;
    Fail("passes " + Str(*args[i]) + " as argument " + llvm::Twine(i) + " to " + who +
         ", whose parameter " + llvm::Twine(i) + " '" + param->name() + "' is " +
         Str(param->shape()));
  }
  const HloInstruction *root = callee.root_instruction();
  if (result && root && !SameShape(root->shape(), *result))
    Fail("expects " + Str(*result) + " from " + who + ", which returns " + Str(root->shape()));
}

void Verifier::CheckWhile() {
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

void Verifier::CheckCall(llvm::StringRef attribute) {
  const HloComputation *callee = RequireCallee(attribute);
  if (!callee)
    return;
  std::vector<const Shape *> args;
  for (const HloInstruction *op : inst_->operands())
    args.push_back(&op->shape());
  CheckCalleeSignature(*callee, "called", args, &inst_->shape());
}

void Verifier::CheckConditional() {
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

void Verifier::CheckCustomCall() {
  const std::string *constraints = inst_->FindAttribute("operand_layout_constraints");
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
void Verifier::CheckAsyncPair() {
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

llvm::Error VerifyHloModule(const HloModule &module) { return Verifier(module).Run(); }

llvm::Expected<bool> HloVerifier::Run(HloModule &module) {
  if (llvm::Error err = VerifyHloModule(module))
    return err;
  return false;
}

} // namespace loom::hlo
