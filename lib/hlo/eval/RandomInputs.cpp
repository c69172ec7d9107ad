//===- RandomInputs.cpp - Seeded parameter values for every device -------===//

#include "loom/hlo/eval/RandomInputs.h"

#include "loom/hlo/eval/Interpreter.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace loom::hlo {
namespace {

// One stream per (seed, device, param): each part goes through the mixer so
// nearby triples give unrelated streams.
uint64_t StreamSeed(uint64_t seed, int64_t device, int64_t param) {
  SplitMix64 mix(seed);
  uint64_t s = mix.Next();
  s = SplitMix64(s ^ static_cast<uint64_t>(device)).Next();
  return SplitMix64(s ^ (static_cast<uint64_t>(param) << 32)).Next();
}

void FillArray(Literal &literal, SplitMix64 &rng) {
  PrimitiveType type = literal.element_type();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (type == PrimitiveType::PRED)
      literal.SetFromBool(i, rng.Next() >> 63);
    else if (IsComplexType(type))
      literal.SetFromComplex(i, {rng.NextSymmetric(), rng.NextSymmetric()});
    else if (IsFloatingPointType(type))
      literal.SetFromDouble(i, rng.NextSymmetric());
    else if (IsSignedIntegralType(type))
      literal.SetFromInt64(i, static_cast<int64_t>(rng.Next() >> 60) - 8);
    else
      literal.SetFromInt64(i, static_cast<int64_t>(rng.Next() >> 60));
  }
}

void Fill(Literal &literal, SplitMix64 &rng) {
  if (literal.IsTuple()) {
    for (Literal &element : literal.mutable_tuple_elements())
      Fill(element, rng);
    return;
  }
  if (!literal.IsToken())
    FillArray(literal, rng);
}

} // namespace

Literal MakeRandomLiteral(const Shape &shape, uint64_t seed, int64_t device, int64_t param) {
  Literal literal(shape);
  SplitMix64 rng(StreamSeed(seed, device, param));
  Fill(literal, rng);
  return literal;
}

// Bytes of one device's copy of `shape`, refusing values the interpreter
// would refuse anyway: a 2^31-element parameter must fail at once, not after
// gigabytes of random numbers.
static llvm::Error AddParameterBytes(const Shape &shape, const HloInstruction &param,
                                     const EvalOptions &limits, int64_t &bytes) {
  if (shape.IsTuple()) {
    for (const Shape &element : shape.tuple_shapes())
      if (llvm::Error err = AddParameterBytes(element, param, limits, bytes))
        return err;
    return llvm::Error::success();
  }
  if (!shape.IsArray())
    return llvm::Error::success();
  // A shape with no elements holds nothing whatever its other dimensions.
  const bool empty = llvm::is_contained(shape.dimensions(), 0);
  std::optional<int64_t> n = empty ? 0 : shape.ElementsIn();
  std::optional<int64_t> size = empty ? 0 : shape.ByteSizeOf();
  if (!n || !size || *n > limits.max_elements_per_value)
    return makeError("parameter '" + param.name() + "' (" + shape.ToString() + ") exceeds the " +
                     llvm::Twine(limits.max_elements_per_value) +
                     " elements the interpreter holds in one value");
  bytes += *size;
  return llvm::Error::success();
}

bool IsReplicatedParameter(const HloInstruction &param) {
  const HloText *sharding = param.FindAttribute("sharding");
  if (!sharding)
    return false;
  llvm::StringRef text = llvm::StringRef(*sharding).trim();
  if (text == "{replicated}")
    return true;
  // A tuple sharding `{{replicated}, {replicated}}`: every element replicated.
  if (!text.consume_front("{") || !text.consume_back("}") || text.trim().empty())
    return false;
  llvm::SmallVector<llvm::StringRef, 4> elements;
  text.split(elements, ',');
  return llvm::all_of(elements,
                      [](llvm::StringRef e) { return e.trim() == "{replicated}"; });
}

llvm::Expected<std::vector<std::vector<Literal>>>
MakeRandomArguments(const HloModule &module, uint64_t seed, const EvalOptions &limits,
                    bool same_on_every_device) {
  int64_t devices = SpmdLayout::FromModule(module).num_devices();
  const HloComputation *entry = module.entry_computation();
  int64_t bytes = 0;
  for (int64_t p = 0; entry && p < entry->num_parameters(); ++p) {
    const HloInstruction *param = entry->parameter_instruction(p);
    if (!param)
      return makeError("entry parameter " + llvm::Twine(p) + " is missing");
    if (llvm::Error err = AddParameterBytes(param->shape(), *param, limits, bytes))
      return err;
  }
  if (devices <= 0 || bytes > limits.max_live_bytes / devices)
    return makeError("the parameters of " + llvm::Twine(devices) +
                     " devices exceed the interpreter's " + llvm::Twine(limits.max_live_bytes) +
                     " bytes of live values (--max-memory)");
  std::vector<std::vector<Literal>> args(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d)
    for (int64_t p = 0; entry && p < entry->num_parameters(); ++p) {
      const HloInstruction *param = entry->parameter_instruction(p);
      if (d > 0 && (same_on_every_device || IsReplicatedParameter(*param)))
        args[d].push_back(args[0][p]);
      else
        args[d].push_back(MakeRandomLiteral(param->shape(), seed, d, p));
    }
  return args;
}

} // namespace loom::hlo
