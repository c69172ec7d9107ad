//===- HloVerifierShapes.cpp - The shape rules of each opcode -------------===//
//
// ComputationVerifier::CheckInstruction and the rules it dispatches to, one
// instruction (inst_) at a time: elementwise ops, select, clamp, dot,
// reshape, transpose, broadcast, slice, concatenate, reduce, gather, the
// pass-through ops, tuples, while, call, fusion, conditional and
// custom-call. The collectives' rules are in HloVerifierCollectives.cpp.
// Result shapes are ShapeInference's, shared with the parser and the
// interpreter; each rule's message is in docs/hlo-verifier.md.
//
//===----------------------------------------------------------------------===//
#include "HloVerifierInternal.h"

#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/ShapeInference.h"

#include <optional>
#include <vector>

namespace loom::hlo::hlo_verifier {
namespace {

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

} // namespace

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
  case HloOpcode::kDynamicSlice: return CheckDynamicSlice();
  case HloOpcode::kDynamicUpdateSlice: return CheckDynamicUpdateSlice();
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

// XLA's HandleDynamicSlice: the result is the operand's element type with
// the dimensions of `dynamic_slice_sizes`, each at most the operand's. The
// interpreter and hlo-to-bir read the sizes; a result shape that disagrees
// would make them read the module differently.
void ComputationVerifier::CheckDynamicSlice() {
  if (inst_->operand_count() < 1)
    return (void)ExpectOperandCount(1);
  const Shape &in = inst_->operand(0)->shape();
  const Shape &out = inst_->shape();
  std::optional<Shape> expected = Inferred(ShapeInference::InferInstructionShape(*inst_));
  if (!expected)
    return;
  if (!out.IsArray() || out.element_type() != expected->element_type() ||
      out.dimensions() != expected->dimensions())
    Fail("dynamic-slice of " + Str(in) + " has result " + Str(out) +
         "; expected dimensions " + FormatIntList(expected->dimensions()) +
         " (dynamic_slice_sizes) of the operand's element type");
}

// XLA's HandleDynamicUpdateSlice: the result is the operand's shape, and
// the update an array of its element type and rank that fits in it.
void ComputationVerifier::CheckDynamicUpdateSlice() {
  if (inst_->operand_count() < 2)
    return (void)ExpectOperandCount(2);
  const Shape &in = inst_->operand(0)->shape();
  const Shape &update = inst_->operand(1)->shape();
  const Shape &out = inst_->shape();
  if (!in.IsArray() || !out.IsArray() || out.element_type() != in.element_type() ||
      out.dimensions() != in.dimensions())
    return Fail("dynamic-update-slice of " + Str(in) + " has result " + Str(out) +
                "; expected the operand's shape");
  bool fits = update.IsArray() && update.element_type() == in.element_type() &&
              update.rank() == in.rank();
  for (int64_t i = 0; fits && i < in.rank(); ++i)
    fits = update.dimensions(i) <= in.dimensions(i);
  if (!fits)
    Fail("dynamic-update-slice of " + Str(in) + " with update " + Str(update) +
         ": the update must be an array of the operand's element type and rank "
         "that fits in it");
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

} // namespace loom::hlo::hlo_verifier
