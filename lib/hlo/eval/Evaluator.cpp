//===- Evaluator.cpp - Lock-step SPMD interpretation of a module ----------===//
//
// The entry computation runs once for all devices: each instruction is
// evaluated for every device before the next one starts, so collectives see
// every participant's operand. Values are counted by remaining users and
// freed (or moved into their last user) as soon as possible.
//
//===----------------------------------------------------------------------===//

#include "Evaluator.h"

#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace loom::hlo {

llvm::Error EvalError(const HloInstruction &inst, const llvm::Twine &msg) {
  return makeError(inst.OpcodeText() + " '" + inst.name() + "': " + msg);
}

llvm::Error UnsupportedError(const HloInstruction &inst, const llvm::Twine &what) {
  return makeError("unsupported " + what + " in " + inst.OpcodeText() + " '" + inst.name() +
                   "'");
}

DeviceValues Operands::Take(size_t i) {
  if (movable_[i]) {
    DeviceValues values = std::move(*movable_[i]);
    movable_[i]->clear();
    movable_[i] = nullptr;
    refs_[i] = nullptr;
    if (on_move_)
      on_move_(values);
    return values;
  }
  return *refs_[i];
}

struct Evaluator::Slot {
  DeviceValues values;
  /// Parameters read in place (while conditions): never moved or freed.
  const DeviceValues *borrowed = nullptr;
  int64_t uses_left = 0;
  const DeviceValues &get() const { return borrowed ? *borrowed : values; }
};

/// What never changes between runs of a computation: the instructions the
/// root depends on in post order, their operands as positions in that
/// order, and how many users each has. Built once per computation.
struct Evaluator::Plan {
  std::vector<const HloInstruction *> order;
  /// Per position: operand positions, in operand order.
  std::vector<std::vector<size_t>> operands;
  /// Per position: whether each operand occurs once among the operands.
  std::vector<std::vector<bool>> operand_once;
  /// Per position: distinct operand and control-predecessor positions,
  /// whose use counts drop once this instruction ran.
  std::vector<std::vector<size_t>> releases;
  std::vector<int64_t> uses;
  size_t root = 0;
};

struct Evaluator::Frame {
  llvm::ArrayRef<int64_t> devices;
  std::vector<Slot> slots;
  size_t root = 0;
};

namespace {

/// Values of layer sizes are tens of megabytes, allocated and freed once per
/// instruction. glibc serves blocks above its mmap threshold (at most 32 MiB
/// by default) with fresh mappings and unmaps them when they are freed, so
/// every such value was faulted in page by page and zeroed by the kernel
/// again. Keeping freed blocks in the heap for the next instruction took the
/// system time of a quarter-size MLP check (docs/performance.md) from 3.0 s
/// to 0.4 s. One arena: the pool's threads would otherwise allocate in arenas
/// of 64 MiB heaps, which map every larger block afresh.
void KeepLargeBlocksInHeap() {
#ifdef __GLIBC__
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_ARENA_MAX, 1);
    return true;
  }();
  (void)done;
#endif
}

} // namespace

Evaluator::Evaluator(const HloModule &module, const EvalOptions &options)
    : module_(module), options_(options), layout_(SpmdLayout::FromModule(module)),
      threads_(DeviceThreadPool::Resolve(options.threads)) {
  KeepLargeBlocksInHeap();
}

Evaluator::~Evaluator() = default;

EvalStats Evaluator::stats() const {
  EvalStats s = stats_;
  s.final_live_bytes = live_bytes_;
  return s;
}

int64_t Evaluator::BytesOf(const DeviceValues &values) {
  int64_t total = 0;
  for (const Literal &lit : values)
    total += lit.TotalBytes();
  return total;
}

void Evaluator::Track(int64_t delta) {
  live_bytes_ += delta;
  stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, live_bytes_);
}

llvm::Expected<std::vector<Literal>>
Evaluator::RunEntry(const std::vector<std::vector<Literal>> &args) {
  const HloComputation *entry = module_.entry_computation();
  if (!entry)
    return makeError("module '" + module_.name() + "' has no entry computation");
  const int64_t n = layout_.num_devices();
  if (layout_.replica_count < 1 || layout_.num_partitions < 1 || n > 1 << 16)
    return makeError("invalid device layout: replica_count=" +
                     llvm::Twine(layout_.replica_count) +
                     " num_partitions=" + llvm::Twine(layout_.num_partitions));
  if (static_cast<int64_t>(args.size()) != n)
    return makeError("expected arguments for " + llvm::Twine(n) + " devices, got " +
                     llvm::Twine(args.size()));
  const int64_t num_params = entry->num_parameters();
  std::vector<DeviceValues> params(num_params);
  for (int64_t d = 0; d < n; ++d) {
    if (static_cast<int64_t>(args[d].size()) != num_params)
      return makeError("device " + llvm::Twine(d) + ": expected " + llvm::Twine(num_params) +
                       " arguments, got " + llvm::Twine(args[d].size()));
    for (int64_t p = 0; p < num_params; ++p) {
      const HloInstruction *param = entry->parameter_instruction(p);
      if (!param)
        return makeError("entry computation has no parameter " + llvm::Twine(p));
      if (!args[d][p].shape().Compatible(param->shape()))
        return makeError("device " + llvm::Twine(d) + " parameter " + llvm::Twine(p) +
                         ": expected " + param->shape().ToString() + ", got " +
                         args[d][p].shape().ToString());
      params[p].push_back(args[d][p]);
    }
  }
  std::vector<int64_t> devices(n);
  for (int64_t d = 0; d < n; ++d)
    devices[d] = d;
  device_work_.assign(n, 0);
  return RunComputation(*entry, devices, std::move(params));
}

llvm::Expected<DeviceValues> Evaluator::RunComputation(const HloComputation &computation,
                                                       llvm::ArrayRef<int64_t> devices,
                                                       std::vector<DeviceValues> params) {
  return Run(computation, devices, &params, {});
}

llvm::Expected<DeviceValues>
Evaluator::RunComputationBorrowed(const HloComputation &computation,
                                  llvm::ArrayRef<int64_t> devices,
                                  llvm::ArrayRef<const DeviceValues *> params) {
  return Run(computation, devices, nullptr, params);
}

const Evaluator::Plan &Evaluator::PlanFor(const HloComputation &computation) {
  std::unique_ptr<Plan> &plan = plans_[&computation];
  if (plan)
    return *plan;
  plan = std::make_unique<Plan>();
  // Instructions the root depends on, through operands and control edges.
  llvm::DenseSet<const HloInstruction *> live;
  std::vector<const HloInstruction *> stack = {computation.root_instruction()};
  while (!stack.empty()) {
    const HloInstruction *inst = stack.back();
    stack.pop_back();
    if (!inst || !live.insert(inst).second)
      continue;
    for (const HloInstruction *op : inst->operands())
      stack.push_back(op);
    for (const HloInstruction *pred : inst->control_predecessors())
      stack.push_back(pred);
  }
  llvm::DenseMap<const HloInstruction *, size_t> position;
  for (const HloInstruction *inst : computation.MakeInstructionPostOrder())
    if (live.contains(inst)) {
      position[inst] = plan->order.size();
      plan->order.push_back(inst);
    }
  const size_t n = plan->order.size();
  plan->operands.resize(n);
  plan->operand_once.resize(n);
  plan->releases.resize(n);
  plan->uses.assign(n, 0);
  // Linear in the operand lists: `count[p]` is how often position p occurs
  // among the current instruction's operands (reset after each), and
  // `added[p] == i` once p is among instruction i's releases.
  std::vector<uint32_t> count(n, 0);
  std::vector<size_t> added(n, n);
  for (size_t i = 0; i < n; ++i) {
    const HloInstruction *inst = plan->order[i];
    std::vector<size_t> &operands = plan->operands[i];
    operands.reserve(inst->operands().size());
    for (const HloInstruction *op : inst->operands())
      operands.push_back(position.lookup(op));
    for (size_t p : operands)
      ++count[p];
    plan->operand_once[i].reserve(operands.size());
    for (size_t p : operands)
      plan->operand_once[i].push_back(count[p] == 1);
    for (size_t p : operands)
      count[p] = 0;
    std::vector<size_t> &rel = plan->releases[i];
    auto release = [&](size_t p) {
      if (added[p] != i) {
        added[p] = i;
        rel.push_back(p);
      }
    };
    for (size_t p : operands)
      release(p);
    for (const HloInstruction *pred : inst->control_predecessors())
      release(position.lookup(pred));
    for (size_t p : rel)
      ++plan->uses[p];
  }
  plan->root = position.lookup(computation.root_instruction());
  ++plan->uses[plan->root]; // the caller's use
  return *plan;
}

llvm::Expected<DeviceValues> Evaluator::Run(const HloComputation &computation,
                                            llvm::ArrayRef<int64_t> devices,
                                            std::vector<DeviceValues> *owned,
                                            llvm::ArrayRef<const DeviceValues *> borrowed) {
  const int64_t num_params = owned ? static_cast<int64_t>(owned->size())
                                   : static_cast<int64_t>(borrowed.size());
  if (num_params != computation.num_parameters())
    return makeError("computation '" + computation.name() + "' takes " +
                     llvm::Twine(computation.num_parameters()) + " parameters, got " +
                     llvm::Twine(num_params));
  if (!computation.root_instruction())
    return makeError("computation '" + computation.name() + "' has no root");
  if (depth_ >= options_.max_call_depth) {
    std::string message = "calls nest deeper than the limit of " +
                          std::to_string(options_.max_call_depth) + " (computation '" +
                          computation.name() + "')";
    if (caller_)
      return EvalError(*caller_, message);
    return makeError(message);
  }
  const Plan &plan = PlanFor(computation);
  ++depth_;
  Frame frame;
  frame.devices = devices;
  frame.root = plan.root;
  frame.slots.resize(plan.order.size());
  for (size_t i = 0; i < plan.order.size(); ++i)
    frame.slots[i].uses_left = plan.uses[i];
  auto cleanup = [&] {
    for (Slot &slot : frame.slots)
      if (!slot.borrowed)
        Track(-BytesOf(slot.values));
    --depth_;
  };
  for (size_t i = 0; i < plan.order.size(); ++i) {
    const HloInstruction *inst = plan.order[i];
    if (inst->opcode() == HloOpcode::kParameter) {
      int64_t p = inst->parameter_number();
      if (p < 0 || p >= num_params) {
        cleanup();
        return EvalError(*inst, "parameter number out of range");
      }
      Slot &slot = frame.slots[i];
      if (owned) {
        slot.values = std::move((*owned)[p]);
        Track(BytesOf(slot.values));
      } else {
        slot.borrowed = borrowed[p];
      }
      if (llvm::Error err = CheckResult(*inst, slot.get(), devices.size())) {
        cleanup();
        return err;
      }
      continue;
    }
    if (llvm::Error err = StepInstruction(plan, i, frame)) {
      cleanup();
      return err;
    }
  }
  Slot &root = frame.slots[frame.root];
  DeviceValues result = root.borrowed ? *root.borrowed : std::move(root.values);
  root.values.clear();
  if (!root.borrowed)
    Track(-BytesOf(result));
  cleanup();
  return result;
}

llvm::Error Evaluator::StepInstruction(const Plan &plan, size_t index, Frame &frame) {
  const HloInstruction &inst = *plan.order[index];
  if (llvm::Error err = CheckValueLimits(inst))
    return err;
  if (llvm::Error err = ChargeStep(inst, frame.devices))
    return err;
  // The result alone must fit in the memory limit: refuse it before it is
  // allocated.
  if (std::optional<int64_t> bytes = inst.shape().IsArray() ? inst.shape().ByteSizeOf()
                                                             : std::optional<int64_t>(0);
      ElementCountOf(inst.shape()) > 0 &&
      (!bytes || *bytes > options_.max_live_bytes / std::max<int64_t>(1, frame.devices.size())))
    return MemoryLimitError(inst);
  Operands ops;
  const std::vector<size_t> &operands = plan.operands[index];
  ops.refs_.reserve(operands.size());
  ops.movable_.reserve(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    Slot &slot = frame.slots[operands[i]];
    ops.refs_.push_back(&slot.get());
    // Move the value into its last user when nothing else reads it.
    bool movable = plan.operand_once[index][i] && !slot.borrowed && slot.uses_left == 1 &&
                   operands[i] != frame.root;
    ops.movable_.push_back(movable ? &slot.values : nullptr);
  }
  ops.on_move_ = [this](const DeviceValues &moved) { Track(-BytesOf(moved)); };
  const HloInstruction *outer_caller = caller_;
  caller_ = &inst;
  llvm::Expected<DeviceValues> result = Compute(inst, ops, frame.devices);
  caller_ = outer_caller;
  if (!result)
    return result.takeError();
  if (llvm::Error err = CheckResult(inst, *result, frame.devices.size()))
    return err;
  ++stats_.instructions_evaluated;
  Slot &slot = frame.slots[index];
  slot.values = std::move(*result);
  Track(BytesOf(slot.values));
  if (live_bytes_ > options_.max_live_bytes)
    return MemoryLimitError(inst);
  // Release operands (and control predecessors) whose last user this was.
  for (size_t p : plan.releases[index]) {
    Slot &s = frame.slots[p];
    if (--s.uses_left == 0 && !s.borrowed) {
      Track(-BytesOf(s.values));
      s.values = DeviceValues();
    }
  }
  if (slot.uses_left == 0) {
    Track(-BytesOf(slot.values));
    slot.values = DeviceValues();
  }
  return llvm::Error::success();
}
llvm::Error Evaluator::MemoryLimitError(const HloInstruction &inst) const {
  return EvalError(inst, "live values exceed the memory limit of " +
                             llvm::Twine(options_.max_live_bytes) +
                             " bytes of all devices together (--max-memory)");
}

llvm::Error Evaluator::ChargeStep(const HloInstruction &inst, llvm::ArrayRef<int64_t> devices) {
  stats_.steps = SatAdd(stats_.steps, static_cast<int64_t>(devices.size()));
  if (stats_.steps > options_.max_steps)
    return EvalError(inst, "the run exceeds the step limit of " +
                               llvm::Twine(options_.max_steps) +
                               " executed instructions summed over all devices (--max-steps)");
  step_work_ = WorkOf(inst);
  for (int64_t d : devices) {
    int64_t &done = device_work_[d];
    if (step_work_ > options_.max_work - done)
      return EvalError(inst, "the run exceeds the work limit of " +
                                 llvm::Twine(options_.max_work) +
                                 " elements computed per device (--max-work): device " +
                                 llvm::Twine(d) + " computed " + llvm::Twine(done) +
                                 " and this instruction needs " + llvm::Twine(step_work_));
    done += step_work_;
    stats_.work = std::max(stats_.work, done);
  }
  return llvm::Error::success();
}

DeviceThreadPool *Evaluator::PoolForStep(size_t devices) {
  // Below this much work per device, handing it to another thread costs
  // more than it saves.
  constexpr int64_t kMinParallelWork = int64_t{1} << 14;
  if (threads_ < 2 || devices < 2 || step_work_ < kMinParallelWork)
    return nullptr;
  if (!pool_)
    pool_ = std::make_unique<DeviceThreadPool>(
        static_cast<int>(std::min<int64_t>(threads_, layout_.num_devices())));
  return pool_.get();
}

llvm::Error Evaluator::CheckValueLimits(const HloInstruction &inst) {
  std::vector<const Shape *> stack = {&inst.shape()};
  while (!stack.empty()) {
    const Shape *shape = stack.back();
    stack.pop_back();
    if (shape->IsTuple()) {
      for (const Shape &element : shape->tuple_shapes())
        stack.push_back(&element);
      continue;
    }
    if (!shape->IsArray())
      continue;
    if (!shape->is_static())
      return UnsupportedError(inst, "dynamic shape " + shape->ToString());
    // A shape with no elements is empty whatever its other dimensions.
    const int64_t n = ElementCountOf(*shape);
    if (n > options_.max_elements_per_value)
      return EvalError(inst, "value " + shape->ToString() + " exceeds the limit of " +
                                 llvm::Twine(options_.max_elements_per_value) + " elements");
    if (!IsSupportedElementType(shape->element_type()))
      return UnsupportedError(inst, "element type " + PrimitiveTypeName(shape->element_type()));
  }
  return llvm::Error::success();
}

llvm::Error Evaluator::CheckResult(const HloInstruction &inst, const DeviceValues &values,
                                   size_t expected_count) {
  if (values.size() != expected_count)
    return EvalError(inst, "internal error: " + llvm::Twine(values.size()) +
                               " device values for " + llvm::Twine(expected_count) + " devices");
  for (const Literal &lit : values)
    if (!lit.shape().Compatible(inst.shape()))
      return EvalError(inst, "value of shape " + lit.shape().ToString() +
                                 " does not match the instruction's shape " +
                                 inst.shape().ToString());
  return llvm::Error::success();
}

llvm::Expected<Literal> Evaluator::Constant(const HloInstruction &inst) {
  auto it = constants_.find(&inst);
  if (it == constants_.end()) {
    llvm::Expected<Literal> parsed = ParseLiteral(inst.shape(), inst.literal_text());
    if (!parsed)
      return EvalError(inst, llvm::toString(parsed.takeError()));
    parsed->Reshape(inst.shape());
    it = constants_.try_emplace(&inst, std::move(*parsed)).first;
  }
  return it->second;
}

ComputationRunner Evaluator::ScalarRunner(int64_t device) {
  return [this, device](const HloComputation &computation,
                        std::vector<Literal> args) -> llvm::Expected<Literal> {
    std::vector<DeviceValues> params;
    params.reserve(args.size());
    for (Literal &arg : args) {
      DeviceValues v;
      v.push_back(std::move(arg));
      params.push_back(std::move(v));
    }
    int64_t id = device;
    llvm::Expected<DeviceValues> out =
        RunComputation(computation, llvm::ArrayRef<int64_t>(id), std::move(params));
    if (!out)
      return out.takeError();
    return std::move((*out)[0]);
  };
}

SpmdContext Evaluator::MakeContext(llvm::ArrayRef<int64_t> devices) {
  return SpmdContext{layout_, devices, [this](int64_t d) { return ScalarRunner(d); },
                     PoolForStep(devices.size())};
}

namespace {

/// One value per device, computed on the calling thread (for work that
/// calls back into the evaluator or is too small for the pool).
template <typename Fn>
llvm::Expected<DeviceValues> PerDevice(size_t n, Fn &&fn) {
  return RunPerDevice(/*pool=*/nullptr, n, std::forward<Fn>(fn));
}

std::vector<const Literal *> OperandsAt(const Operands &ops, size_t first, size_t k) {
  std::vector<const Literal *> out;
  for (size_t i = first; i < ops.size(); ++i)
    out.push_back(&ops.At(i, k));
  return out;
}

/// Same element types, dimensions and tuple structure; layouts and dynamic
/// markers ignored: what a buffer needs to be read under the other shape.
bool SameTypesAndDimensions(const Shape &a, const Shape &b) {
  if (a.element_type() != b.element_type())
    return false;
  if (a.IsBuffer())
    return SameTypesAndDimensions(a.buffer_shape(), b.buffer_shape());
  if (!a.IsTuple())
    return a.dimensions() == b.dimensions();
  if (a.tuple_shapes_size() != b.tuple_shapes_size())
    return false;
  for (int64_t i = 0; i < a.tuple_shapes_size(); ++i)
    if (!SameTypesAndDimensions(a.tuple_shapes(i), b.tuple_shapes(i)))
      return false;
  return true;
}

llvm::Error ExpectOperands(const HloInstruction &inst, const Operands &ops, size_t n) {
  if (ops.size() != n)
    return EvalError(inst, "expected " + llvm::Twine(n) + " operands, got " +
                               llvm::Twine(ops.size()));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<DeviceValues> Evaluator::Compute(const HloInstruction &inst, Operands &ops,
                                                llvm::ArrayRef<int64_t> devices) {
  const size_t n = devices.size();
  switch (inst.opcode()) {
  case HloOpcode::kWhile:
    return EvalWhile(inst, ops, devices);
  case HloOpcode::kConditional:
    return EvalConditional(inst, ops, devices);
  case HloOpcode::kCall:
    return EvalCalled(inst, "to_apply", ops, devices);
  case HloOpcode::kFusion:
    return EvalCalled(inst, "calls", ops, devices);
  case HloOpcode::kAsyncStart:
    return EvalAsyncStart(inst, ops, devices);
  case HloOpcode::kAsyncUpdate:
    if (llvm::Error err = ExpectOperands(inst, ops, 1))
      return err;
    return ops.Take(0);
  case HloOpcode::kAsyncDone:
  case HloOpcode::kAllGatherDone:
  case HloOpcode::kAllReduceDone:
  case HloOpcode::kCollectivePermuteDone:
    return EvalAsyncDone(inst, ops);
  case HloOpcode::kAllGatherStart:
  case HloOpcode::kAllReduceStart:
  case HloOpcode::kCollectivePermuteStart:
    return EvalStartOp(inst, ops, devices);
  case HloOpcode::kAllGather:
  case HloOpcode::kAllReduce:
  case HloOpcode::kReduceScatter:
  case HloOpcode::kCollectivePermute:
  case HloOpcode::kAllToAll:
  case HloOpcode::kCollectiveBroadcast:
    return EvalCollective(inst, inst.shape(), ops, MakeContext(devices));
  case HloOpcode::kCustomCall: {
    if (collective_matmul::IsCollectiveMatmul(inst))
      return EvalCollectiveMatmul(inst, ops, MakeContext(devices));
    std::string target = GetCustomCallTarget(inst);
    if (IsIdentityCustomCallTarget(target)) {
      if (ops.size() != 1 ||
          (!ops.Get(0).empty() && !ops.Get(0).front().shape().Compatible(inst.shape())))
        return EvalError(inst, "custom-call target '" + target +
                                   "' is a value-preserving marker: it needs one operand of "
                                   "its result's shape");
      return ops.Take(0);
    }
    return makeError("unsupported custom-call target '" + target + "' in '" + inst.name() +
                     "'");
  }
  case HloOpcode::kReplicaId:
  case HloOpcode::kPartitionId:
    return PerDevice(n, [&](size_t k) -> llvm::Expected<Literal> {
      if (!inst.shape().IsArray() || inst.shape().rank() != 0)
        return EvalError(inst, "expected a scalar result");
      Literal out(inst.shape());
      out.SetFromInt64(0, inst.opcode() == HloOpcode::kReplicaId
                              ? layout_.replica_id(devices[k])
                              : layout_.partition_id(devices[k]));
      return out;
    });
  default:
    return ComputeLocal(inst, ops, devices);
  }
}

/// Ops that run on each device independently.
llvm::Expected<DeviceValues> Evaluator::ComputeLocal(const HloInstruction &inst, Operands &ops,
                                                     llvm::ArrayRef<int64_t> devices) {
  const size_t n = devices.size();
  const HloOpcode opcode = inst.opcode();
  // The kernels below that touch nothing but their operands run the
  // devices on the pool; the ones calling computations run in order.
  DeviceThreadPool *const pool = PoolForStep(n);
  auto arity = [&](size_t count) { return ExpectOperands(inst, ops, count); };
  if (IsEvalUnaryOpcode(opcode)) {
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) { return EvalUnary(inst, ops.At(0, k)); });
  }
  if (IsEvalBinaryOpcode(opcode) || opcode == HloOpcode::kComplex) {
    if (llvm::Error err = arity(2))
      return err;
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalBinary(inst, ops.At(0, k), ops.At(1, k)); });
  }
  switch (opcode) {
  case HloOpcode::kConstant:
    return PerDevice(n, [&](size_t) { return Constant(inst); });
  case HloOpcode::kCompare:
    if (llvm::Error err = arity(2))
      return err;
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalCompare(inst, ops.At(0, k), ops.At(1, k)); });
  case HloOpcode::kSelect:
    if (llvm::Error err = arity(3))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) {
      return EvalSelect(inst, ops.At(0, k), ops.At(1, k), ops.At(2, k));
    });
  case HloOpcode::kClamp:
    if (llvm::Error err = arity(3))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) {
      return EvalClamp(inst, ops.At(0, k), ops.At(1, k), ops.At(2, k));
    });
  case HloOpcode::kConvert:
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n,
                        [&](size_t k) { return ConvertLiteral(inst, ops.At(0, k), inst.shape()); });
  case HloOpcode::kBitcastConvert:
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) { return EvalBitcastConvert(inst, ops.At(0, k)); });
  case HloOpcode::kReducePrecision:
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) { return EvalReducePrecision(inst, ops.At(0, k)); });
  case HloOpcode::kTuple: {
    // Each element must have the declared element shape: a value then nests
    // no deeper than its instruction's shape (the parser's depth limit).
    if (!inst.shape().IsTuple() ||
        inst.shape().tuple_shapes_size() != static_cast<int64_t>(ops.size()))
      return EvalError(inst, "result " + inst.shape().ToString(false) + " is not a tuple of " +
                                 llvm::Twine(ops.size()) + " elements");
    for (size_t i = 0; i < ops.size(); ++i)
      for (const Literal &value : ops.Get(i))
        if (!value.shape().Compatible(inst.shape().tuple_shapes(i)))
          return EvalError(inst, "operand " + llvm::Twine(i) + " " + value.shape().ToString(false) +
                                     " does not match the result's element " +
                                     inst.shape().tuple_shapes(i).ToString(false));
    std::vector<DeviceValues> elements;
    for (size_t i = 0; i < ops.size(); ++i)
      elements.push_back(ops.Take(i));
    return PerDevice(n, [&](size_t k) -> llvm::Expected<Literal> {
      std::vector<Literal> parts;
      for (DeviceValues &element : elements)
        parts.push_back(std::move(element[k]));
      Literal tuple = Literal::MakeTuple(std::move(parts));
      tuple.Reshape(inst.shape());
      return tuple;
    });
  }
  case HloOpcode::kGetTupleElement: {
    if (llvm::Error err = arity(1))
      return err;
    llvm::Expected<int64_t> index = GetTupleIndex(inst);
    if (!index)
      return index.takeError();
    if (!ops.CanTake(0)) {
      // Others still read the tuple (a while state, a borrowed parameter):
      // copy the one element, not the whole tuple.
      return PerDevice(n, [&](size_t k) -> llvm::Expected<Literal> {
        const Literal &tuple = ops.At(0, k);
        const std::vector<Literal> &elements = tuple.tuple_elements();
        if (!tuple.IsTuple() || *index < 0 || *index >= static_cast<int64_t>(elements.size()))
          return EvalError(inst, "tuple index out of range");
        return elements[*index];
      });
    }
    DeviceValues tuples = ops.Take(0);
    return PerDevice(n, [&](size_t k) -> llvm::Expected<Literal> {
      std::vector<Literal> &elements = tuples[k].mutable_tuple_elements();
      if (!tuples[k].IsTuple() || *index < 0 || *index >= static_cast<int64_t>(elements.size()))
        return EvalError(inst, "tuple index out of range");
      return std::move(elements[*index]);
    });
  }
  case HloOpcode::kReshape:
  case HloOpcode::kBitcast:
  case HloOpcode::kCopy:
  case HloOpcode::kOptimizationBarrier:
  case HloOpcode::kAddDependency:
  case HloOpcode::kDomain: {
    if (opcode == HloOpcode::kAddDependency ? ops.size() != 2 : ops.size() != 1)
      return EvalError(inst, "wrong number of operands");
    DeviceValues values = ops.Take(0);
    const Shape &operand_shape = inst.operand(0)->shape();
    return PerDevice(n, [&](size_t k) -> llvm::Expected<Literal> {
      if (opcode == HloOpcode::kReshape)
        return EvalReshape(inst, std::move(values[k]));
      if (opcode == HloOpcode::kBitcast) {
        values[k].Reshape(operand_shape); // the operand's layout decides
        return EvalBitcast(inst, std::move(values[k]));
      }
      // copy, optimization-barrier, add-dependency and domain pass the
      // operand's buffer on under the result's shape; a different shape
      // (which the verifier refuses, docs/hlo-verifier.md) would make the
      // buffer be read as another type or size.
      if (!SameTypesAndDimensions(values[k].shape(), inst.shape()))
        return EvalError(inst, "result " + inst.shape().ToString(false) +
                                   " must have the shape of operand 0 " +
                                   values[k].shape().ToString(false) +
                                   ", which it passes through");
      values[k].Reshape(inst.shape());
      return std::move(values[k]);
    });
  }
  case HloOpcode::kAfterAll:
    return PerDevice(n, [&](size_t) { return Literal(Shape::MakeToken()); });
  case HloOpcode::kTranspose:
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) { return EvalTranspose(inst, ops.At(0, k)); });
  case HloOpcode::kBroadcast:
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) { return EvalBroadcast(inst, ops.At(0, k)); });
  case HloOpcode::kSlice:
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) { return EvalSlice(inst, ops.At(0, k)); });
  case HloOpcode::kDynamicSlice:
    if (ops.size() < 2)
      return EvalError(inst, "dynamic-slice needs start indices");
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalDynamicSlice(inst, OperandsAt(ops, 0, k)); });
  case HloOpcode::kDynamicUpdateSlice: {
    if (ops.size() < 3)
      return EvalError(inst, "dynamic-update-slice needs an update and start indices");
    DeviceValues operand = ops.Take(0);
    return RunPerDevice(pool, n, [&](size_t k) {
      return EvalDynamicUpdateSlice(inst, std::move(operand[k]), OperandsAt(ops, 1, k));
    });
  }
  case HloOpcode::kConcatenate:
    if (ops.size() < 1)
      return EvalError(inst, "concatenate needs operands");
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalConcatenate(inst, OperandsAt(ops, 0, k)); });
  case HloOpcode::kPad:
    if (llvm::Error err = arity(2))
      return err;
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalPad(inst, ops.At(0, k), ops.At(1, k)); });
  case HloOpcode::kReverse:
    if (llvm::Error err = arity(1))
      return err;
    return RunPerDevice(pool, n, [&](size_t k) { return EvalReverse(inst, ops.At(0, k)); });
  case HloOpcode::kIota:
    return RunPerDevice(pool, n, [&](size_t) { return EvalIota(inst); });
  case HloOpcode::kDot:
    if (llvm::Error err = arity(2))
      return err;
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalDot(inst, ops.At(0, k), ops.At(1, k)); });
  case HloOpcode::kReduce: {
    llvm::ArrayRef<HloComputation *> to_apply = inst.CalledComputations("to_apply");
    if (to_apply.size() != 1)
      return EvalError(inst, "reduce needs one to_apply computation");
    return PerDevice(n, [&](size_t k) {
      Combiner combiner(*to_apply[0], ScalarRunner(devices[k]));
      return EvalReduce(inst, OperandsAt(ops, 0, k), combiner);
    });
  }
  case HloOpcode::kMulhi:
    if (llvm::Error err = arity(2))
      return err;
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalMulhi(inst, ops.At(0, k), ops.At(1, k)); });
  case HloOpcode::kReduceWindow: {
    llvm::ArrayRef<HloComputation *> to_apply = inst.CalledComputations("to_apply");
    if (to_apply.size() != 1)
      return EvalError(inst, "reduce-window needs one to_apply computation");
    return PerDevice(n, [&](size_t k) {
      Combiner combiner(*to_apply[0], ScalarRunner(devices[k]));
      return EvalReduceWindow(inst, OperandsAt(ops, 0, k), combiner);
    });
  }
  case HloOpcode::kSelectAndScatter:
    if (llvm::Error err = arity(3))
      return err;
    return PerDevice(n, [&](size_t k) {
      return EvalSelectAndScatter(inst, ops.At(0, k), ops.At(1, k), ops.At(2, k),
                                  ScalarRunner(devices[k]));
    });
  case HloOpcode::kGather:
    if (llvm::Error err = arity(2))
      return err;
    return RunPerDevice(pool, n,
                        [&](size_t k) { return EvalGather(inst, ops.At(0, k), ops.At(1, k)); });
  case HloOpcode::kScatter:
    return PerDevice(n, [&](size_t k) {
      return EvalScatter(inst, OperandsAt(ops, 0, k), ScalarRunner(devices[k]));
    });
  case HloOpcode::kSort:
    if (ops.size() < 1)
      return EvalError(inst, "sort needs operands");
    return PerDevice(n, [&](size_t k) {
      return EvalSort(inst, OperandsAt(ops, 0, k), ScalarRunner(devices[k]));
    });
  case HloOpcode::kMap:
    return PerDevice(n, [&](size_t k) {
      return EvalMap(inst, OperandsAt(ops, 0, k), ScalarRunner(devices[k]));
    });
  case HloOpcode::kGetDimensionSize: {
    if (llvm::Error err = arity(1))
      return err;
    llvm::Expected<std::vector<int64_t>> dims = GetDimensions(inst);
    if (!dims)
      return dims.takeError();
    const Shape &shape = inst.operand(0)->shape();
    if (dims->size() != 1 || (*dims)[0] < 0 || (*dims)[0] >= shape.rank() ||
        !inst.shape().IsArray() || inst.shape().rank() != 0)
      return EvalError(inst, "needs one dimension within the operand's rank");
    const int64_t size = shape.dimensions((*dims)[0]);
    return PerDevice(n, [&](size_t) -> llvm::Expected<Literal> {
      Literal out(inst.shape());
      out.SetFromInt64(0, size);
      return out;
    });
  }
  case HloOpcode::kCopyStart: {
    // (destination, source, context): the copy is complete at once.
    const Shape &shape = inst.shape();
    if (llvm::Error err = arity(1))
      return err;
    if (!shape.IsTuple() || shape.tuple_shapes_size() < 2 ||
        !shape.tuple_shapes(0).Compatible(inst.operand(0)->shape()))
      return EvalError(inst, "copy-start must return (destination, source, context)");
    DeviceValues values = ops.Take(0);
    return PerDevice(n, [&](size_t k) -> llvm::Expected<Literal> {
      Literal start(shape);
      start.mutable_tuple_elements()[0] = values[k];
      start.mutable_tuple_elements()[1] = std::move(values[k]);
      return start;
    });
  }
  case HloOpcode::kCopyDone: {
    if (llvm::Error err = arity(1))
      return err;
    DeviceValues starts = ops.Take(0);
    return PerDevice(n, [&](size_t k) -> llvm::Expected<Literal> {
      if (!starts[k].IsTuple() || starts[k].tuple_elements().empty())
        return EvalError(inst, "operand is not a copy-start tuple");
      return std::move(starts[k].mutable_tuple_elements()[0]);
    });
  }
  default:
    return UnsupportedError(inst, "op '" + inst.OpcodeText() + "'");
  }
}

llvm::Expected<std::vector<Literal>>
RunSpmd(const HloModule &module, const std::vector<std::vector<Literal>> &args,
        const EvalOptions &options, EvalStats *stats) {
  Evaluator evaluator(module, options);
  llvm::Expected<std::vector<Literal>> result = evaluator.RunEntry(args);
  if (stats)
    *stats = evaluator.stats();
  return result;
}

llvm::Expected<std::vector<Literal>>
RunSpmd(const HloModule &module, const std::vector<std::vector<Literal>> &args) {
  return RunSpmd(module, args, EvalOptions(), nullptr);
}

} // namespace loom::hlo
