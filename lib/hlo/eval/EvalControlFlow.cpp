//===- EvalControlFlow.cpp - while, conditional, call/fusion, async ops ---===//
//
// Devices may take different paths: a while loop keeps iterating only the
// devices whose condition is still true, and a conditional runs each branch
// for the devices that chose it. Collectives inside check that every member
// of their group is on the same path (EvalCollectives.cpp), so divergence
// is an error only when a collective actually needs a missing device.
//
//===----------------------------------------------------------------------===//

#include "Evaluator.h"

#include "loom/support/Error.h"

#include <numeric>

namespace loom::hlo {
namespace {

llvm::Expected<const HloComputation *> OneComputation(const HloInstruction &inst,
                                                      llvm::StringRef attribute) {
  llvm::ArrayRef<HloComputation *> called = inst.CalledComputations(attribute);
  if (called.size() != 1 || !called[0])
    return EvalError(inst, "expected one computation in " + attribute);
  return called[0];
}

/// Scalar pred or integer selector of device position k.
llvm::Expected<bool> ReadCondition(const HloInstruction &inst, const Literal &pred) {
  if (!pred.shape().IsArray() || pred.element_type() != PrimitiveType::PRED ||
      pred.element_count() != 1)
    return EvalError(inst, "condition must return pred[], got " + pred.shape().ToString());
  return pred.GetAsBool(0);
}

} // namespace

llvm::Expected<DeviceValues> Evaluator::EvalCalled(const HloInstruction &inst,
                                                   llvm::StringRef attribute, Operands &ops,
                                                   llvm::ArrayRef<int64_t> devices) {
  llvm::Expected<const HloComputation *> callee = OneComputation(inst, attribute);
  if (!callee)
    return callee.takeError();
  std::vector<DeviceValues> params;
  for (size_t i = 0; i < ops.size(); ++i)
    params.push_back(ops.Take(i));
  return RunComputation(**callee, devices, std::move(params));
}

llvm::Expected<DeviceValues> Evaluator::EvalWhile(const HloInstruction &inst, Operands &ops,
                                                  llvm::ArrayRef<int64_t> devices) {
  llvm::Expected<const HloComputation *> condition = OneComputation(inst, "condition");
  if (!condition)
    return condition.takeError();
  llvm::Expected<const HloComputation *> body = OneComputation(inst, "body");
  if (!body)
    return body.takeError();
  if (ops.size() != 1)
    return EvalError(inst, "while takes one operand");
  DeviceValues state = ops.Take(0);
  std::vector<size_t> active(devices.size());
  std::iota(active.begin(), active.end(), 0);
  for (int64_t iteration = 0;; ++iteration) {
    std::vector<int64_t> ids;
    DeviceValues sub;
    for (size_t k : active) {
      ids.push_back(devices[k]);
      sub.push_back(std::move(state[k]));
    }
    const DeviceValues *param = &sub;
    llvm::Expected<DeviceValues> preds = RunComputationBorrowed(**condition, ids, param);
    if (!preds)
      return preds.takeError();
    std::vector<size_t> next_active;
    std::vector<int64_t> next_ids;
    DeviceValues next_sub;
    for (size_t j = 0; j < active.size(); ++j) {
      llvm::Expected<bool> go = ReadCondition(inst, (*preds)[j]);
      if (!go)
        return go.takeError();
      if (*go) {
        next_active.push_back(active[j]);
        next_ids.push_back(ids[j]);
        next_sub.push_back(std::move(sub[j]));
      } else {
        state[active[j]] = std::move(sub[j]); // this device's loop is done
      }
    }
    if (next_active.empty())
      break;
    if (iteration >= options_.max_while_iterations)
      return EvalError(inst, "more than " + llvm::Twine(options_.max_while_iterations) +
                                 " iterations");
    std::vector<DeviceValues> params;
    params.push_back(std::move(next_sub));
    llvm::Expected<DeviceValues> out = RunComputation(**body, next_ids, std::move(params));
    if (!out)
      return out.takeError();
    for (size_t j = 0; j < next_active.size(); ++j)
      state[next_active[j]] = std::move((*out)[j]);
    active = std::move(next_active);
  }
  return state;
}

llvm::Expected<DeviceValues> Evaluator::EvalConditional(const HloInstruction &inst,
                                                        Operands &ops,
                                                        llvm::ArrayRef<int64_t> devices) {
  std::vector<const HloComputation *> branches;
  for (const HloComputation *c : inst.CalledComputations("branch_computations"))
    branches.push_back(c);
  if (branches.empty()) {
    llvm::Expected<const HloComputation *> on_true = OneComputation(inst, "true_computation");
    if (!on_true)
      return on_true.takeError();
    llvm::Expected<const HloComputation *> on_false = OneComputation(inst, "false_computation");
    if (!on_false)
      return on_false.takeError();
    branches = {*on_true, *on_false};
  }
  const size_t num_branches = branches.size();
  if (ops.size() != num_branches + 1)
    return EvalError(inst, "expected " + llvm::Twine(num_branches + 1) + " operands");
  // Which branch each device takes.
  std::vector<std::vector<size_t>> members(num_branches);
  for (size_t k = 0; k < devices.size(); ++k) {
    const Literal &selector = ops.At(0, k);
    if (!selector.shape().IsArray() || selector.element_count() != 1)
      return EvalError(inst, "branch selector must be a scalar");
    size_t b;
    if (selector.element_type() == PrimitiveType::PRED) {
      if (num_branches != 2)
        return EvalError(inst, "a pred selector needs two branches");
      b = selector.GetAsBool(0) ? 0 : 1;
    } else if (selector.element_type() == PrimitiveType::S32) {
      // XLA: an index out of range runs the last branch.
      int64_t index = selector.GetAsInt64(0);
      b = index < 0 || index >= static_cast<int64_t>(num_branches) ? num_branches - 1
                                                                    : static_cast<size_t>(index);
    } else {
      return EvalError(inst, "branch selector must be pred or s32");
    }
    members[b].push_back(k);
  }
  DeviceValues result(devices.size());
  for (size_t b = 0; b < num_branches; ++b) {
    if (members[b].empty())
      continue;
    std::vector<int64_t> ids;
    DeviceValues args;
    if (members[b].size() == devices.size()) {
      ids.assign(devices.begin(), devices.end());
      args = ops.Take(b + 1);
    } else {
      for (size_t k : members[b]) {
        ids.push_back(devices[k]);
        args.push_back(ops.At(b + 1, k));
      }
    }
    std::vector<DeviceValues> params;
    params.push_back(std::move(args));
    llvm::Expected<DeviceValues> out = RunComputation(*branches[b], ids, std::move(params));
    if (!out)
      return out.takeError();
    for (size_t j = 0; j < members[b].size(); ++j)
      result[members[b][j]] = std::move((*out)[j]);
  }
  return result;
}

namespace {

/// The start's first tuple element: the operand, or a tuple of operands.
Literal OperandsElement(const Operands &ops, size_t k, const Shape &shape) {
  if (ops.size() == 1 && ops.At(0, k).shape().Compatible(shape))
    return ops.At(0, k);
  std::vector<Literal> parts;
  for (size_t i = 0; i < ops.size(); ++i)
    parts.push_back(ops.At(i, k));
  Literal tuple = Literal::MakeTuple(std::move(parts));
  tuple.Reshape(shape);
  return tuple;
}

/// Whether the operands (of device 0) have the shape `shape`: the operand
/// itself, or a tuple of all operands.
bool OperandsMatch(const Operands &ops, const Shape &shape) {
  if (!shape.IsTuple())
    return ops.size() == 1 && ops.At(0, 0).shape().Compatible(shape);
  if (shape.tuple_shapes_size() != static_cast<int64_t>(ops.size()))
    return ops.size() == 1 && ops.At(0, 0).shape().Compatible(shape);
  for (size_t i = 0; i < ops.size(); ++i)
    if (!ops.At(i, 0).shape().Compatible(shape.tuple_shapes(i)))
      return false;
  return true;
}

/// `(operands, result, context...)`: what the -start ops return in current
/// XLA; the context elements are zero scalars.
llvm::Expected<DeviceValues> WrapStart(const HloInstruction &inst, std::vector<Literal> firsts,
                                       DeviceValues results) {
  const Shape &shape = inst.shape();
  DeviceValues out;
  for (size_t k = 0; k < results.size(); ++k) {
    Literal start(shape);
    std::vector<Literal> &elements = start.mutable_tuple_elements();
    elements[0] = std::move(firsts[k]);
    elements[1] = std::move(results[k]);
    out.push_back(std::move(start));
  }
  return out;
}

} // namespace

llvm::Expected<DeviceValues> Evaluator::EvalAsyncStart(const HloInstruction &inst, Operands &ops,
                                                       llvm::ArrayRef<int64_t> devices) {
  const Shape &shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() < 2)
    return EvalError(inst, "async-start must return (operands, result, ...)");
  if (devices.empty() || !OperandsMatch(ops, shape.tuple_shapes(0)))
    return EvalError(inst, "operands do not match the start's first element " +
                               shape.tuple_shapes(0).ToString());
  std::vector<Literal> firsts;
  for (size_t k = 0; k < devices.size(); ++k)
    firsts.push_back(OperandsElement(ops, k, shape.tuple_shapes(0)));
  llvm::Expected<DeviceValues> results = [&]() -> llvm::Expected<DeviceValues> {
    if (std::optional<HloOpcode> wrapped = inst.async_wrapped_opcode()) {
      // Async sugar (`negate-start`): run the wrapped op itself.
      std::unique_ptr<HloInstruction> &op = wrapped_[&inst];
      if (!op) {
        std::vector<HloInstruction *> operands(inst.operands().begin(), inst.operands().end());
        op = HloInstruction::Create(*wrapped, shape.tuple_shapes(1), operands, inst.name());
        op->mutable_attributes().assign(inst.attributes().begin(), inst.attributes().end());
      }
      return Compute(*op, ops, devices);
    }
    return EvalCalled(inst, "calls", ops, devices);
  }();
  if (!results)
    return results.takeError();
  return WrapStart(inst, std::move(firsts), std::move(*results));
}

llvm::Expected<DeviceValues> Evaluator::EvalAsyncDone(const HloInstruction &inst, Operands &ops) {
  if (ops.size() != 1)
    return EvalError(inst, "expected one operand");
  DeviceValues starts = ops.Take(0);
  for (Literal &start : starts) {
    if (start.shape().Compatible(inst.shape()))
      continue; // all-reduce-start returns the result itself
    if (!start.IsTuple() || start.tuple_elements().size() < 2 ||
        !start.tuple_elements()[1].shape().Compatible(inst.shape()))
      return EvalError(inst, "operand " + start.shape().ToString() +
                                 " does not hold a result of shape " + inst.shape().ToString());
    Literal result = std::move(start.mutable_tuple_elements()[1]);
    start = std::move(result);
  }
  return starts;
}

llvm::Expected<DeviceValues> Evaluator::EvalStartOp(const HloInstruction &inst, Operands &ops,
                                                    llvm::ArrayRef<int64_t> devices) {
  const Shape &shape = inst.shape();
  // all-reduce-start (and old all-gather-start) return the result alone;
  // the others return (operands, result, context...).
  const bool wrapped = inst.opcode() != HloOpcode::kAllReduceStart && shape.IsTuple() &&
                       shape.tuple_shapes_size() >= 2 &&
                       !devices.empty() && OperandsMatch(ops, shape.tuple_shapes(0));
  if (!wrapped)
    return EvalCollective(inst, shape, ops, MakeContext(devices));
  std::vector<Literal> firsts;
  for (size_t k = 0; k < devices.size(); ++k)
    firsts.push_back(OperandsElement(ops, k, shape.tuple_shapes(0)));
  llvm::Expected<DeviceValues> results =
      EvalCollective(inst, shape.tuple_shapes(1), ops, MakeContext(devices));
  if (!results)
    return results.takeError();
  return WrapStart(inst, std::move(firsts), std::move(*results));
}

} // namespace loom::hlo
