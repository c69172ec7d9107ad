//===- ShapeInference.cpp - One result-shape rule per opcode --------------===//
#include "loom/hlo/ir/ShapeInference.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace loom::hlo {
namespace {

std::string Str(const Shape &shape) { return shape.ToString(/*PrintLayout=*/false); }

PrimitiveType ComplexComponentType(PrimitiveType type) {
  if (type == PrimitiveType::C64)
    return PrimitiveType::F32;
  if (type == PrimitiveType::C128)
    return PrimitiveType::F64;
  return type;
}

/// Each of `dims` in [0, rank), and (when `unique`) none listed twice.
llvm::Error CheckDimensionList(llvm::ArrayRef<int64_t> dims, int64_t rank,
                               const llvm::Twine &what, bool unique) {
  llvm::SmallVector<bool, 8> seen(rank > 0 ? rank : 0, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return makeError(what + " " + llvm::Twine(d) + " is out of range for rank " +
                       llvm::Twine(rank));
    if (unique && seen[d])
      return makeError(what + " " + llvm::Twine(d) + " is listed twice");
    seen[d] = true;
  }
  return llvm::Error::success();
}

// The verifier infers a shape for most instructions of a module: the
// vectors a rule builds stay inline for the ranks real shapes have.
using DimVector = llvm::SmallVector<int64_t, 8>;
using DynamicVector = llvm::SmallVector<bool, 8>;

/// Keeps the dynamic marker of operand dimension `d` on result dimension i.
void AddDimension(const Shape &from, int64_t d, DimVector &dims, DynamicVector &dynamic) {
  dims.push_back(from.dimensions(d));
  dynamic.push_back(from.is_dynamic_dimension(d));
}

Shape MakeArray(PrimitiveType type, llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<bool> dynamic) {
  Shape shape(type, dims);
  for (size_t i = 0; i < dynamic.size(); ++i)
    shape.set_dynamic_dimension(i, dynamic[i]);
  return shape;
}

std::vector<const Shape *> OperandShapes(const HloInstruction &inst) {
  std::vector<const Shape *> shapes;
  shapes.reserve(inst.operand_count());
  for (const HloInstruction *op : inst.operands())
    shapes.push_back(&op->shape());
  return shapes;
}

/// The one computation of `attribute`, or an error.
llvm::Expected<const HloComputation *> Callee(const HloInstruction &inst,
                                              llvm::StringRef attribute) {
  llvm::ArrayRef<HloComputation *> callees = inst.CalledComputations(attribute);
  if (callees.size() != 1 || !callees.front())
    return makeError(inst.OpcodeText() + " needs exactly one computation in '" + attribute +
                     "'");
  return callees.front();
}

llvm::Expected<Shape> CalleeRoot(const HloInstruction &inst, llvm::StringRef attribute) {
  llvm::Expected<const HloComputation *> callee = Callee(inst, attribute);
  if (!callee)
    return callee.takeError();
  const HloInstruction *root = (*callee)->root_instruction();
  if (!root)
    return makeError("called computation '" + (*callee)->name() + "' has no ROOT instruction");
  return root->shape();
}

} // namespace

llvm::Expected<Shape> ShapeInference::InferUnaryOpShape(HloOpcode opcode, const Shape &operand) {
  if (opcode == HloOpcode::kConvert || opcode == HloOpcode::kBitcastConvert)
    return makeError(HloOpcodeString(opcode) + " does not imply its result element type");
  if (opcode == HloOpcode::kCopy)
    return operand; // copy also copies tuples
  if (!operand.IsArray())
    return makeError(HloOpcodeString(opcode) + " needs an array operand, got " + Str(operand));
  Shape shape = operand;
  shape.set_element_type(UnaryOpElementType(opcode, operand.element_type()));
  return shape;
}

PrimitiveType ShapeInference::UnaryOpElementType(HloOpcode opcode, PrimitiveType type) {
  if (opcode == HloOpcode::kIsFinite)
    return PrimitiveType::PRED;
  if (opcode == HloOpcode::kAbs || opcode == HloOpcode::kReal || opcode == HloOpcode::kImag)
    return ComplexComponentType(type);
  return type;
}

llvm::Expected<Shape> ShapeInference::InferBinaryOpShape(HloOpcode opcode, const Shape &lhs,
                                                         const Shape &rhs) {
  if (!lhs.IsArray() || !rhs.IsArray())
    return makeError(HloOpcodeString(opcode) + " needs array operands, got " + Str(lhs) +
                     ", " + Str(rhs));
  // HLO has no implicit broadcasting.
  if (lhs.dimensions() != rhs.dimensions())
    return makeError(HloOpcodeString(opcode) + " operands " + Str(lhs) + " and " + Str(rhs) +
                     " must have the same dimensions");
  Shape shape = lhs;
  // stochastic-convert takes random bits of another type and converts to
  // a type its result names.
  if (opcode == HloOpcode::kStochasticConvert)
    return makeError("stochastic-convert does not imply its result element type");
  if (lhs.element_type() != rhs.element_type())
    return makeError(HloOpcodeString(opcode) +
                     " operands must have the same element type, got " + Str(lhs) + " and " +
                     Str(rhs));
  shape.set_element_type(BinaryOpElementType(opcode, lhs.element_type()));
  return shape;
}

PrimitiveType ShapeInference::BinaryOpElementType(HloOpcode opcode, PrimitiveType type) {
  if (opcode == HloOpcode::kCompare)
    return PrimitiveType::PRED;
  if (opcode == HloOpcode::kComplex)
    return type == PrimitiveType::F64 ? PrimitiveType::C128 : PrimitiveType::C64;
  return type;
}

llvm::Expected<Shape> ShapeInference::InferDotShape(const Shape &lhs, const Shape &rhs,
                                                    const DotDimensionNumbers &d,
                                                    std::optional<PrimitiveType> result_type) {
  if (!lhs.IsArray() || !rhs.IsArray())
    return makeError("dot needs array operands, got " + Str(lhs) + ", " + Str(rhs));
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size())
    return makeError("dot has " + llvm::Twine(d.lhs_batch_dimensions.size()) +
                     " lhs batch dimensions but " + llvm::Twine(d.rhs_batch_dimensions.size()) +
                     " rhs batch dimensions");
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size())
    return makeError("dot has " + llvm::Twine(d.lhs_contracting_dimensions.size()) +
                     " lhs contracting dimensions but " +
                     llvm::Twine(d.rhs_contracting_dimensions.size()) +
                     " rhs contracting dimensions");
  DimVector lhs_used(d.lhs_batch_dimensions.begin(), d.lhs_batch_dimensions.end());
  llvm::append_range(lhs_used, d.lhs_contracting_dimensions);
  DimVector rhs_used(d.rhs_batch_dimensions.begin(), d.rhs_batch_dimensions.end());
  llvm::append_range(rhs_used, d.rhs_contracting_dimensions);
  if (llvm::Error e =
          CheckDimensionList(lhs_used, lhs.rank(), "dot lhs batch/contracting dimension", true))
    return e;
  if (llvm::Error e =
          CheckDimensionList(rhs_used, rhs.rank(), "dot rhs batch/contracting dimension", true))
    return e;
  for (auto [kind, l_dims, r_dims] :
       {std::tuple("batch", &d.lhs_batch_dimensions, &d.rhs_batch_dimensions),
        std::tuple("contracting", &d.lhs_contracting_dimensions,
                   &d.rhs_contracting_dimensions)}) {
    for (size_t i = 0; i < l_dims->size(); ++i) {
      int64_t l = (*l_dims)[i], r = (*r_dims)[i];
      if (lhs.dimensions(l) != rhs.dimensions(r))
        return makeError("dot lhs " + llvm::Twine(kind) + " dimension " + llvm::Twine(l) +
                         " has size " + llvm::Twine(lhs.dimensions(l)) + " but rhs " + kind +
                         " dimension " + llvm::Twine(r) + " has size " +
                         llvm::Twine(rhs.dimensions(r)));
    }
  }
  DimVector dims;
  DynamicVector dynamic;
  for (int64_t b : d.lhs_batch_dimensions)
    AddDimension(lhs, b, dims, dynamic);
  for (int64_t i = 0; i < lhs.rank(); ++i)
    if (!llvm::is_contained(lhs_used, i))
      AddDimension(lhs, i, dims, dynamic);
  for (int64_t i = 0; i < rhs.rank(); ++i)
    if (!llvm::is_contained(rhs_used, i))
      AddDimension(rhs, i, dims, dynamic);
  return MakeArray(result_type.value_or(lhs.element_type()), dims, dynamic);
}

llvm::Expected<Shape> ShapeInference::InferTransposeShape(const Shape &operand,
                                                          llvm::ArrayRef<int64_t> perm) {
  if (!operand.IsArray())
    return makeError("transpose needs an array operand, got " + Str(operand));
  if (static_cast<int64_t>(perm.size()) != operand.rank())
    return makeError("transpose dimensions " + FormatIntList(perm) + " must list each of the " +
                     llvm::Twine(operand.rank()) + " operand dimensions once");
  if (llvm::Error e = CheckDimensionList(perm, operand.rank(), "transpose dimension", true))
    return e;
  DimVector dims;
  DynamicVector dynamic;
  for (int64_t p : perm)
    AddDimension(operand, p, dims, dynamic);
  return MakeArray(operand.element_type(), dims, dynamic);
}

llvm::Expected<Shape> ShapeInference::InferSliceShape(const Shape &operand,
                                                      const SliceConfig &slice) {
  if (!operand.IsArray())
    return makeError("slice needs an array operand, got " + Str(operand));
  if (static_cast<int64_t>(slice.starts.size()) != operand.rank())
    return makeError("slice has " + llvm::Twine(slice.starts.size()) +
                     " ranges for an operand of rank " + llvm::Twine(operand.rank()));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t start = slice.starts[i], limit = slice.limits[i], stride = slice.strides[i];
    if (start < 0 || start > limit || limit > operand.dimensions(i) || stride <= 0)
      return makeError("slice range [" + llvm::Twine(start) + ":" + llvm::Twine(limit) + ":" +
                       llvm::Twine(stride) + "] is out of bounds for dimension " +
                       llvm::Twine(i) + " of size " + llvm::Twine(operand.dimensions(i)));
    dims.push_back((limit - start + stride - 1) / stride);
  }
  return Shape(operand.element_type(), dims);
}

llvm::Expected<Shape>
ShapeInference::InferConcatenateShape(llvm::ArrayRef<const Shape *> operands, int64_t d) {
  if (operands.empty())
    return makeError("concatenate needs at least one operand");
  const Shape &first = *operands.front();
  if (!first.IsArray())
    return makeError("concatenate needs array shapes");
  if (llvm::Error e = CheckDimensionList({d}, first.rank(), "concatenate dimension", false))
    return e;
  std::vector<int64_t> dims(first.dimensions().begin(), first.dimensions().end());
  dims[d] = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape &s = *operands[i];
    bool same_other_dims = s.IsArray() && s.rank() == first.rank();
    for (int64_t k = 0; same_other_dims && k < s.rank(); ++k)
      same_other_dims = k == d || s.dimensions(k) == first.dimensions(k);
    if (!same_other_dims || s.element_type() != first.element_type())
      return makeError("concatenate operand " + llvm::Twine(i) + " " + Str(s) +
                       " must match operand 0 " + Str(first) +
                       " in type and in every dimension but " + llvm::Twine(d));
    dims[d] += s.dimensions(d);
  }
  return Shape(first.element_type(), dims);
}

llvm::Expected<Shape> ShapeInference::InferReduceShape(llvm::ArrayRef<const Shape *> operands,
                                                       llvm::ArrayRef<int64_t> dimensions,
                                                       const HloComputation *reducer) {
  const size_t n = operands.size() / 2;
  if (operands.size() < 2 || operands.size() % 2 != 0)
    return makeError("reduce takes N inputs and N initial values, got " +
                     llvm::Twine(operands.size()) + " operands");
  const Shape &first = *operands.front();
  if (!first.IsArray())
    return makeError("reduce input must be an array, got " + Str(first));
  if (llvm::Error e = CheckDimensionList(dimensions, first.rank(), "reduce dimension", true))
    return e;
  DimVector kept;
  DynamicVector dynamic;
  for (int64_t i = 0; i < first.rank(); ++i)
    if (!llvm::is_contained(dimensions, i))
      AddDimension(first, i, kept, dynamic);
  const Shape *root = reducer && reducer->root_instruction()
                          ? &reducer->root_instruction()->shape()
                          : nullptr;
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) {
    const Shape &input = *operands[i];
    const Shape &init = *operands[n + i];
    if (!input.IsArray() || input.dimensions() != first.dimensions())
      return makeError("reduce input " + llvm::Twine(i) + " " + Str(input) +
                       " must have the dimensions of input 0 " + Str(first));
    // XLA's importers accept array initial values (one per kept element),
    // so only arrays are required here.
    if (!init.IsArray())
      return makeError("reduce initial value " + llvm::Twine(i) + " must be an array, got " +
                       Str(init));
    // The reducer decides the result type.
    PrimitiveType type = input.element_type();
    if (root && n == 1 && root->IsArray())
      type = root->element_type();
    else if (root && n > 1 && root->IsTuple() && root->tuple_shapes_size() == int64_t(n) &&
             root->tuple_shapes(i).IsArray())
      type = root->tuple_shapes(i).element_type();
    results.push_back(MakeArray(type, kept, dynamic));
  }
  if (n == 1)
    return results.front();
  return Shape::MakeTuple(std::move(results));
}

Shape ShapeInference::InferTupleShape(llvm::ArrayRef<const Shape *> operands) {
  std::vector<Shape> elements;
  elements.reserve(operands.size());
  for (const Shape *s : operands)
    elements.push_back(*s);
  return Shape::MakeTuple(std::move(elements));
}

llvm::Expected<Shape> ShapeInference::InferGetTupleElementShape(const Shape &tuple,
                                                                int64_t index) {
  llvm::Expected<const Shape *> element = GetTupleElementShape(tuple, index);
  if (!element)
    return element.takeError();
  return **element;
}

llvm::Expected<const Shape *> ShapeInference::GetTupleElementShape(const Shape &tuple,
                                                                   int64_t index) {
  if (!tuple.IsTuple())
    return makeError("get-tuple-element operand must be a tuple, got " + Str(tuple));
  if (index < 0 || index >= tuple.tuple_shapes_size())
    return makeError("get-tuple-element index " + llvm::Twine(index) +
                     " is out of range for a tuple of " +
                     llvm::Twine(tuple.tuple_shapes_size()) + " elements");
  return &tuple.tuple_shapes(index);
}

llvm::Expected<Shape> ShapeInference::InferGatherShape(const Shape &operand,
                                                       const Shape &start_indices,
                                                       const GatherDimensionNumbers &d) {
  if (!operand.IsArray() || !start_indices.IsArray())
    return makeError("gather needs array operands, got " + operand.ToString(false) + " and " +
                     start_indices.ToString(false));
  if (!IsIntegralType(start_indices.element_type()))
    return makeError("gather start indices must be integers, got " +
                     start_indices.ToString(false));
  const int64_t operand_rank = operand.rank(), indices_rank = start_indices.rank();
  const int64_t ivd = d.index_vector_dim;
  if (ivd < 0 || ivd > indices_rank)
    return makeError("gather index_vector_dim " + llvm::Twine(ivd) +
                     " is out of range for start indices of rank " + llvm::Twine(indices_rank));
  // XLA: an index_vector_dim equal to the rank is an implicit trailing 1.
  const int64_t vector_size = ivd < indices_rank ? start_indices.dimensions(ivd) : 1;
  if (static_cast<int64_t>(d.start_index_map.size()) != vector_size)
    return makeError("gather start_index_map " + FormatIntList(d.start_index_map) +
                     " must have one entry per element of the index vector (" +
                     llvm::Twine(vector_size) + ")");
  if (static_cast<int64_t>(d.slice_sizes.size()) != operand_rank)
    return makeError("gather slice_sizes " + FormatIntList(d.slice_sizes) +
                     " must have one entry per operand dimension (" + llvm::Twine(operand_rank) +
                     ")");
  if (d.operand_batching_dims.size() != d.start_indices_batching_dims.size())
    return makeError("gather operand_batching_dims " + FormatIntList(d.operand_batching_dims) +
                     " and start_indices_batching_dims " +
                     FormatIntList(d.start_indices_batching_dims) + " differ in length");
  auto check_dims = [](llvm::ArrayRef<int64_t> dims, int64_t rank, const char *what,
                       bool sorted) -> llvm::Error {
    std::vector<bool> seen(rank > 0 ? rank : 0, false);
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t v = dims[i];
      if (v < 0 || v >= rank)
        return makeError(llvm::Twine("gather ") + what + " " + FormatIntList(dims) +
                         ": " + llvm::Twine(v) + " is out of range for rank " + llvm::Twine(rank));
      if (seen[v])
        return makeError(llvm::Twine("gather ") + what + " " + FormatIntList(dims) + ": " +
                         llvm::Twine(v) + " is listed twice");
      if (sorted && i > 0 && dims[i - 1] > v)
        return makeError(llvm::Twine("gather ") + what + " " + FormatIntList(dims) +
                         " must be sorted");
      seen[v] = true;
    }
    return llvm::Error::success();
  };
  const int64_t batch_rank = indices_rank - (ivd < indices_rank ? 1 : 0);
  const int64_t offset_rank = static_cast<int64_t>(d.offset_dims.size());
  const int64_t result_rank = batch_rank + offset_rank;
  if (llvm::Error e = check_dims(d.offset_dims, result_rank, "offset_dims", true))
    return e;
  if (llvm::Error e = check_dims(d.collapsed_slice_dims, operand_rank, "collapsed_slice_dims",
                                 true))
    return e;
  if (llvm::Error e = check_dims(d.start_index_map, operand_rank, "start_index_map", false))
    return e;
  if (llvm::Error e = check_dims(d.operand_batching_dims, operand_rank,
                                 "operand_batching_dims", true))
    return e;
  if (llvm::Error e = check_dims(d.start_indices_batching_dims, indices_rank,
                                 "start_indices_batching_dims", false))
    return e;
  for (int64_t b : d.start_indices_batching_dims)
    if (b == ivd)
      return makeError("gather start_indices_batching_dims " +
                       FormatIntList(d.start_indices_batching_dims) +
                       " must not contain index_vector_dim " + llvm::Twine(ivd));
  for (int64_t c : d.collapsed_slice_dims)
    if (llvm::is_contained(d.operand_batching_dims, c))
      return makeError("gather dimension " + llvm::Twine(c) +
                       " is in both collapsed_slice_dims and operand_batching_dims");
  for (int64_t i = 0; i < operand_rank; ++i) {
    int64_t size = d.slice_sizes[i];
    if (size < 0 || (operand.dimensions(i) != Shape::kUnboundedSize && size > operand.dimensions(i)))
      return makeError("gather slice_sizes " + FormatIntList(d.slice_sizes) + ": size " +
                       llvm::Twine(size) + " of dimension " + llvm::Twine(i) +
                       " is out of range for operand " + operand.ToString(false));
    bool collapsed = llvm::is_contained(d.collapsed_slice_dims, i) ||
                     llvm::is_contained(d.operand_batching_dims, i);
    if (collapsed && size > 1)
      return makeError("gather slice size " + llvm::Twine(size) + " of collapsed or batching "
                       "dimension " + llvm::Twine(i) + " must be 0 or 1");
  }
  // Window (offset) dimensions: slice_sizes without the collapsed and
  // batching ones, in operand order.
  std::vector<int64_t> window;
  for (int64_t i = 0; i < operand_rank; ++i)
    if (!llvm::is_contained(d.collapsed_slice_dims, i) &&
        !llvm::is_contained(d.operand_batching_dims, i))
      window.push_back(d.slice_sizes[i]);
  if (static_cast<int64_t>(window.size()) != offset_rank)
    return makeError("gather offset_dims " + FormatIntList(d.offset_dims) + " must have one "
                     "entry per slice dimension that is neither collapsed nor batching (" +
                     llvm::Twine(window.size()) + ")");
  std::vector<int64_t> dims(result_rank);
  for (int64_t i = 0, w = 0, b = 0; i < result_rank; ++i) {
    if (llvm::is_contained(d.offset_dims, i)) {
      dims[i] = window[w++];
      continue;
    }
    if (b == ivd)
      ++b;
    dims[i] = start_indices.dimensions(b++);
  }
  return Shape(operand.element_type(), dims);
}

llvm::Expected<Shape>
ShapeInference::InferAllReduceShape(llvm::ArrayRef<const Shape *> operands) {
  if (operands.empty())
    return makeError("all-reduce needs at least one operand");
  if (operands.size() == 1)
    return *operands.front();
  return InferTupleShape(operands);
}

Shape ShapeInference::InferCollectivePermuteStartShape(const Shape &operand) {
  Shape u32(PrimitiveType::U32, {});
  return Shape::MakeTuple({operand, operand, u32, u32});
}

bool ShapeInference::HasRule(HloOpcode opcode) {
  if (IsElementwiseUnary(opcode))
    return opcode != HloOpcode::kConvert && opcode != HloOpcode::kBitcastConvert;
  if (IsElementwiseBinary(opcode))
    return opcode != HloOpcode::kStochasticConvert;
  switch (opcode) {
  case HloOpcode::kTuple:
  case HloOpcode::kGetTupleElement:
  case HloOpcode::kAfterAll:
  case HloOpcode::kAddDependency:
  case HloOpcode::kOptimizationBarrier:
  case HloOpcode::kDomain:
  case HloOpcode::kGather:
  case HloOpcode::kWhile:
  case HloOpcode::kSelect:
  case HloOpcode::kClamp:
  case HloOpcode::kDot:
  case HloOpcode::kTranspose:
  case HloOpcode::kSlice:
  case HloOpcode::kConcatenate:
  case HloOpcode::kReduce:
  case HloOpcode::kCall:
  case HloOpcode::kFusion:
  case HloOpcode::kAllReduce:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kAllReduceDone:
  case HloOpcode::kCollectivePermute:
  case HloOpcode::kCollectivePermuteStart:
  case HloOpcode::kCollectivePermuteDone:
  case HloOpcode::kAllGatherDone:
  case HloOpcode::kCopyDone:
  case HloOpcode::kReplicaId:
  case HloOpcode::kPartitionId:
  case HloOpcode::kReverse:
  case HloOpcode::kDynamicSlice:
  case HloOpcode::kDynamicUpdateSlice:
  case HloOpcode::kPad:
  case HloOpcode::kSort:
  case HloOpcode::kMap:
  case HloOpcode::kGetDimensionSize:
  case HloOpcode::kAllToAll:
  case HloOpcode::kCollectiveBroadcast:
  case HloOpcode::kConditional:
    return true;
  default:
    return false;
  }
}

llvm::Expected<Shape> ShapeInference::InferInstructionShape(const HloInstruction &inst) {
  const HloOpcode opcode = inst.opcode();
  std::vector<const Shape *> ops = OperandShapes(inst);
  auto need = [&](size_t count) -> llvm::Error {
    if (ops.size() == count)
      return llvm::Error::success();
    return makeError(inst.OpcodeText() + " takes " + llvm::Twine(count) + " operand" +
                     (count == 1 ? "" : "s") + ", got " + llvm::Twine(ops.size()));
  };
  if (!HasRule(opcode) || inst.async_wrapped_opcode())
    return makeError(inst.OpcodeText() + " has no inference rule");
  if (IsElementwiseUnary(opcode)) {
    if (llvm::Error e = need(1))
      return e;
    return InferUnaryOpShape(opcode, *ops[0]);
  }
  if (IsElementwiseBinary(opcode)) {
    if (llvm::Error e = need(2))
      return e;
    return InferBinaryOpShape(opcode, *ops[0], *ops[1]);
  }
  switch (opcode) {
  case HloOpcode::kTuple:
    return InferTupleShape(ops);
  case HloOpcode::kGetTupleElement: {
    if (llvm::Error e = need(1))
      return e;
    llvm::Expected<int64_t> index = GetTupleIndex(inst);
    if (!index)
      return index.takeError();
    return InferGetTupleElementShape(*ops[0], *index);
  }
  case HloOpcode::kAfterAll:
    return Shape::MakeToken();
  case HloOpcode::kReplicaId:
  case HloOpcode::kPartitionId:
    return Shape(PrimitiveType::U32, {});
  case HloOpcode::kDomain:
    // XLA's ShapeVerifier::HandleDomain: the operand's shape.
    if (llvm::Error e = need(1))
      return e;
    return *ops[0];
  case HloOpcode::kGather: {
    if (llvm::Error e = need(2))
      return e;
    llvm::Expected<GatherDimensionNumbers> dnums = GetGatherDimensionNumbers(inst);
    if (!dnums)
      return dnums.takeError();
    return InferGatherShape(*ops[0], *ops[1], *dnums);
  }
  case HloOpcode::kAddDependency:
  case HloOpcode::kOptimizationBarrier:
  case HloOpcode::kWhile:
  case HloOpcode::kCollectivePermute:
  case HloOpcode::kAllReduceDone:
    if (ops.empty())
      return makeError(inst.OpcodeText() + " needs an operand");
    if (opcode == HloOpcode::kCollectivePermute && ops.size() != 1)
      return makeError("collective-permute of several operands has no inference rule");
    return *ops[0];
  case HloOpcode::kCollectivePermuteDone:
  case HloOpcode::kAllGatherDone:
  case HloOpcode::kCopyDone:
    if (llvm::Error e = need(1))
      return e;
    if (opcode == HloOpcode::kCopyDone && ops[0]->IsTuple() && ops[0]->tuple_shapes_size() >= 1)
      return ops[0]->tuple_shapes(0);
    // The older all-gather-start that holds the result itself.
    if (opcode == HloOpcode::kAllGatherDone && !ops[0]->IsTuple())
      return *ops[0];
    if (!ops[0]->IsTuple() || ops[0]->tuple_shapes_size() < 2)
      return makeError(inst.OpcodeText() + " operand must be the tuple its -start returns, got " +
                       Str(*ops[0]));
    return ops[0]->tuple_shapes(1);
  case HloOpcode::kSelect:
    if (llvm::Error e = need(3))
      return e;
    return *ops[1];
  case HloOpcode::kClamp:
    if (llvm::Error e = need(3))
      return e;
    return *ops[1];
  case HloOpcode::kDot: {
    if (inst.HasAttribute("sparsity"))
      return makeError("a sparse dot has no inference rule");
    if (llvm::Error e = need(2))
      return e;
    llvm::Expected<DotDimensionNumbers> dnums = GetDotDimensionNumbers(inst);
    if (!dnums)
      return dnums.takeError();
    std::optional<PrimitiveType> type;
    if (inst.shape().IsArray())
      type = inst.shape().element_type();
    return InferDotShape(*ops[0], *ops[1], *dnums, type);
  }
  case HloOpcode::kTranspose: {
    if (llvm::Error e = need(1))
      return e;
    llvm::Expected<std::vector<int64_t>> perm = GetDimensions(inst);
    if (!perm)
      return perm.takeError();
    return InferTransposeShape(*ops[0], *perm);
  }
  case HloOpcode::kSlice: {
    if (llvm::Error e = need(1))
      return e;
    llvm::Expected<SliceConfig> slice = GetSliceConfig(inst);
    if (!slice)
      return slice.takeError();
    return InferSliceShape(*ops[0], *slice);
  }
  case HloOpcode::kConcatenate: {
    llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
    if (!dims)
      return dims.takeError();
    if (dims->size() != 1)
      return makeError("concatenate needs exactly one dimension, got " + FormatIntList(*dims));
    return InferConcatenateShape(ops, dims->front());
  }
  case HloOpcode::kReduce: {
    llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
    if (!dims)
      return dims.takeError();
    llvm::Expected<const HloComputation *> reducer = Callee(inst, "to_apply");
    if (!reducer)
      return reducer.takeError();
    return InferReduceShape(ops, *dims, *reducer);
  }
  case HloOpcode::kCall:
    return CalleeRoot(inst, "to_apply");
  case HloOpcode::kFusion:
    return CalleeRoot(inst, "calls");
  case HloOpcode::kAllReduce:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kCollectiveBroadcast:
    return InferAllReduceShape(ops);
  case HloOpcode::kAllToAll:
    // The array form (with dimensions=) keeps the shape; the tuple form
    // returns one element per operand.
    if (ops.size() == 1 && inst.HasAttribute("dimensions"))
      return *ops[0];
    return InferTupleShape(ops);
  case HloOpcode::kSort:
    if (ops.empty())
      return makeError("sort needs an operand");
    return ops.size() == 1 ? *ops[0] : InferTupleShape(ops);
  case HloOpcode::kReverse:
  case HloOpcode::kDynamicUpdateSlice:
    if (ops.empty())
      return makeError(inst.OpcodeText() + " needs an operand");
    return *ops[0];
  case HloOpcode::kGetDimensionSize:
    return Shape(PrimitiveType::S32, {});
  case HloOpcode::kDynamicSlice: {
    llvm::Expected<std::vector<int64_t>> sizes = GetDynamicSliceSizes(inst);
    if (!sizes)
      return sizes.takeError();
    if (ops.empty() || !ops[0]->IsArray() ||
        static_cast<int64_t>(sizes->size()) != ops[0]->rank())
      return makeError("dynamic-slice needs one size per operand dimension");
    for (size_t i = 0; i < sizes->size(); ++i)
      if ((*sizes)[i] < 0 || (*sizes)[i] > ops[0]->dimensions(i))
        return makeError("dynamic-slice size " + llvm::Twine((*sizes)[i]) +
                         " is out of range for dimension " + llvm::Twine(i));
    return Shape(ops[0]->element_type(), *sizes);
  }
  case HloOpcode::kPad: {
    if (llvm::Error e = need(2))
      return e;
    llvm::Expected<std::vector<PaddingDimension>> padding = GetPaddingConfig(inst);
    if (!padding)
      return padding.takeError();
    const Shape &in = *ops[0];
    if (!in.IsArray() || static_cast<int64_t>(padding->size()) != in.rank())
      return makeError("pad needs one padding entry per operand dimension");
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < in.rank(); ++i) {
      const PaddingDimension &p = (*padding)[i];
      int64_t n = in.dimensions(i);
      int64_t size = p.low + p.high + n + (n > 0 ? (n - 1) * p.interior : 0);
      if (p.interior < 0 || size < 0)
        return makeError("pad of dimension " + llvm::Twine(i) + " gives a negative size");
      dims.push_back(size);
    }
    return Shape(in.element_type(), dims);
  }
  case HloOpcode::kMap: {
    llvm::Expected<Shape> root = CalleeRoot(inst, "to_apply");
    if (!root)
      return root.takeError();
    if (!root->IsArray())
      return makeError("map of a computation that returns " + Str(*root) +
                       " has no inference rule");
    if (ops.empty() || !ops[0]->IsArray())
      return makeError("map needs array operands");
    return Shape(root->element_type(), ops[0]->dimensions());
  }
  case HloOpcode::kConditional: {
    llvm::ArrayRef<HloComputation *> branches = inst.CalledComputations("branch_computations");
    if (branches.empty())
      branches = inst.CalledComputations("true_computation");
    if (branches.empty() || !branches.front() || !branches.front()->root_instruction())
      return makeError("conditional needs its branch computations");
    return branches.front()->root_instruction()->shape();
  }
  case HloOpcode::kCollectivePermuteStart:
    if (ops.size() != 1)
      return makeError("collective-permute-start of several operands has no inference rule");
    return InferCollectivePermuteStartShape(*ops[0]);
  default:
    return makeError(inst.OpcodeText() + " has no inference rule");
  }
}

} // namespace loom::hlo
