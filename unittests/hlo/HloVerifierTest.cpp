// Unit tests of VerifyHloModule: one valid and one broken module per rule,
// built by hand so each test shows exactly the IR it is about. Every
// rejection must name the computation and the instruction.
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

Shape T(PrimitiveType type, std::initializer_list<int64_t> dims) { return Shape(type, dims); }
Shape F32(std::initializer_list<int64_t> dims) { return T(PrimitiveType::F32, dims); }
Shape BF16(std::initializer_list<int64_t> dims) { return T(PrimitiveType::BF16, dims); }
Shape PRED() { return T(PrimitiveType::PRED, {}); }

/// A module with an entry computation "main", built one instruction at a time.
struct Builder {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("m");
  HloComputation *comp = nullptr;

  Builder() { comp = AddComputation("main", /*entry=*/true); }

  HloComputation *AddComputation(const char *name, bool entry = false) {
    HloComputation *c = module->AddComputation(std::make_unique<HloComputation>(name));
    if (entry)
      module->set_entry_computation(c);
    return c;
  }
  HloInstruction *Param(int64_t n, Shape shape, const char *name, HloComputation *c = nullptr) {
    auto p = HloInstruction::Create(HloOpcode::kParameter, std::move(shape), {}, name);
    p->set_parameter_number(n);
    return (c ? c : comp)->AddInstruction(std::move(p));
  }
  HloInstruction *Op(HloOpcode opcode, Shape shape, std::vector<HloInstruction *> operands,
                     const char *name,
                     std::vector<std::pair<std::string, std::string>> attrs = {},
                     HloComputation *c = nullptr) {
    auto inst = HloInstruction::Create(opcode, std::move(shape), operands, name);
    for (auto &[key, value] : attrs)
      inst->SetAttribute(key, value);
    return (c ? c : comp)->AddInstruction(std::move(inst));
  }
  /// Makes `inst` the root of its computation.
  HloInstruction *Root(HloInstruction *inst) {
    inst->parent()->set_root_instruction(inst);
    return inst;
  }
  /// scalar f32 add computation, for reduce / all-reduce.
  HloComputation *Adder(const char *name = "add") {
    HloComputation *c = AddComputation(name);
    std::string x = std::string(name) + ".x", y = std::string(name) + ".y";
    HloInstruction *a = Param(0, F32({}), x.c_str(), c);
    HloInstruction *b = Param(1, F32({}), y.c_str(), c);
    Root(Op(HloOpcode::kAdd, F32({}), {a, b}, (std::string(name) + ".sum").c_str(), {}, c));
    return c;
  }
};

/// "" when the module verifies, else the error message.
std::string Verify(const HloModule &module) {
  llvm::Error err = VerifyHloModule(module);
  return err ? llvm::toString(std::move(err)) : std::string();
}

#define EXPECT_VALID(b) EXPECT_EQ(Verify(*(b).module), "")
#define EXPECT_INVALID(b, ...)                                                                 \
  do {                                                                                         \
    std::string msg_ = Verify(*(b).module);                                                    \
    EXPECT_FALSE(msg_.empty()) << "module verified but should not";                            \
    for (const char *part_ : {__VA_ARGS__})                                                    \
      EXPECT_NE(msg_.find(part_), std::string::npos) << "missing '" << part_ << "' in:\n"    \
                                                      << msg_;                                 \
  } while (0)

// ---- Module and computation structure ------------------------------------------------

TEST(HloVerifier, AcceptsASmallValidModule) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2, 3}), "x");
  HloInstruction *y = b.Param(1, F32({3, 4}), "y");
  HloInstruction *dot = b.Op(HloOpcode::kDot, F32({2, 4}), {x, y}, "dot",
                             {{"lhs_contracting_dims", "{1}"}, {"rhs_contracting_dims", "{0}"}});
  HloInstruction *neg = b.Op(HloOpcode::kNegate, F32({2, 4}), {dot}, "neg");
  b.Root(b.Op(HloOpcode::kTuple, Shape::MakeTuple({F32({2, 4})}), {neg}, "t"));
  EXPECT_VALID(b);
}

TEST(HloVerifier, InstructionNamesAreUniqueAcrossTheModule) {
  Builder b;
  b.Root(b.Param(0, F32({}), "x"));
  // A computation built outside the module keeps its names as given, which
  // is how a parsed module can carry a duplicate.
  auto other = std::make_unique<HloComputation>("other");
  auto p = HloInstruction::Create(HloOpcode::kParameter, F32({}), {}, "x");
  p->set_parameter_number(0);
  other->set_root_instruction(other->AddInstruction(std::move(p)));
  b.module->AddComputation(std::move(other));
  EXPECT_INVALID(b, "computation 'other', instruction 'x'", "computation 'main'", "unique");
}

TEST(HloVerifier, ComputationNamesAreUnique) {
  Builder b;
  b.Root(b.Param(0, F32({}), "x"));
  HloComputation *c = b.AddComputation("main");
  b.Root(b.Param(0, F32({}), "y", c));
  EXPECT_INVALID(b, "computation 'main': another computation has the same name");
}

TEST(HloVerifier, EveryComputationHasARoot) {
  Builder b;
  b.Param(0, F32({}), "x");
  EXPECT_INVALID(b, "computation 'main': has no ROOT instruction");
}

TEST(HloVerifier, ModuleNeedsAnEntry) {
  Builder b;
  b.Root(b.Param(0, F32({}), "x"));
  b.module->set_entry_computation(nullptr);
  EXPECT_INVALID(b, "has no entry computation");
}

TEST(HloVerifier, ParametersAreNumberedFromZeroWithoutGaps) {
  Builder b;
  b.Param(0, F32({}), "x");
  b.Root(b.Param(2, F32({}), "y"));
  EXPECT_INVALID(b, "computation 'main', instruction 'y': parameter number 2 is out of range");
}

TEST(HloVerifier, ParameterNumbersAreUsedOnce) {
  Builder b;
  b.Param(0, F32({}), "x");
  b.Root(b.Param(0, F32({}), "y"));
  EXPECT_INVALID(b, "instruction 'y': parameter number 0 is also used by 'x'");
}

TEST(HloVerifier, OperandsBelongToTheSameComputation) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({}), "x");
  HloComputation *c = b.AddComputation("other");
  b.Root(b.Param(0, F32({}), "y", c));
  HloInstruction *neg = b.Op(HloOpcode::kNegate, F32({}), {x}, "neg", {}, c);
  b.Root(b.Op(HloOpcode::kTuple, Shape::MakeTuple({F32({})}), {neg}, "t"));
  EXPECT_INVALID(b, "computation 'other', instruction 'neg': operand 0 'x' belongs to "
                    "computation 'main'");
}

TEST(HloVerifier, RejectsCycles) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({}), "x");
  HloInstruction *a = b.Op(HloOpcode::kNegate, F32({}), {x}, "a");
  HloInstruction *c = b.Op(HloOpcode::kNegate, F32({}), {a}, "c");
  ASSERT_FALSE(llvm::errorToBool(a->ReplaceOperandWith(0, c)));
  b.Root(c);
  EXPECT_INVALID(b, "computation 'main', instruction '", "part of a cycle");
}

TEST(HloVerifier, CalledComputationsExist) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({}), "x");
  HloComputation stray("stray");
  HloInstruction *call = b.Op(HloOpcode::kCall, F32({}), {x}, "call");
  call->SetCalledComputation("to_apply", &stray);
  b.Root(call);
  EXPECT_INVALID(b, "instruction 'call': to_apply refers to a computation that is not in the "
                    "module");
}

TEST(HloVerifier, DimensionProductOverflow) {
  Builder b;
  b.Root(b.Param(0, F32({int64_t(1) << 40, int64_t(1) << 40}), "huge"));
  EXPECT_INVALID(b, "instruction 'huge'", "overflows");
}

TEST(HloVerifier, ReportsEveryProblemOnItsOwnLine) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2}), "x");
  HloInstruction *y = b.Param(1, F32({3}), "y");
  b.Op(HloOpcode::kAdd, F32({2}), {x, y}, "bad_add");
  b.Root(b.Op(HloOpcode::kNegate, F32({3}), {x}, "bad_neg"));
  std::string msg = Verify(*b.module);
  EXPECT_NE(msg.find("instruction 'bad_add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\ncomputation 'main', instruction 'bad_neg'"), std::string::npos) << msg;
}

TEST(HloVerifier, PassNeverChangesTheModule) {
  Builder b;
  b.Root(b.Param(0, F32({}), "x"));
  HloVerifier pass;
  EXPECT_EQ(pass.name(), "hlo_verifier");
  llvm::Expected<bool> changed = pass.Run(*b.module);
  ASSERT_TRUE(bool(changed));
  EXPECT_FALSE(*changed);
  b.Param(0, F32({}), "dup");
  llvm::Expected<bool> failed = pass.Run(*b.module);
  ASSERT_FALSE(bool(failed));
  EXPECT_NE(llvm::toString(failed.takeError()).find("'dup'"), std::string::npos);
}

// ---- Elementwise ------------------------------------------------------------------

TEST(HloVerifier, ElementwiseOperandsHaveTheSameDimensions) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2}), "x");
  HloInstruction *y = b.Param(1, F32({3}), "y");
  b.Root(b.Op(HloOpcode::kAdd, F32({2}), {x, y}, "sum"));
  EXPECT_INVALID(b, "instruction 'sum': add operands f32[2] and f32[3]");
}

TEST(HloVerifier, ElementwiseOperandsHaveTheSameElementType) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2}), "x");
  HloInstruction *y = b.Param(1, BF16({2}), "y");
  b.Root(b.Op(HloOpcode::kMultiply, F32({2}), {x, y}, "mul"));
  EXPECT_INVALID(b, "instruction 'mul': multiply operands must have the same element type");
}

TEST(HloVerifier, ElementwiseResultKeepsTheElementType) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2}), "x");
  b.Root(b.Op(HloOpcode::kNegate, BF16({2}), {x}, "neg"));
  EXPECT_INVALID(b, "instruction 'neg': negate of f32[2] must produce element type f32");
}

TEST(HloVerifier, CompareProducesPredAndConvertChangesType) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2}), "x");
  HloInstruction *y = b.Param(1, F32({2}), "y");
  HloInstruction *cmp = b.Op(HloOpcode::kCompare, T(PrimitiveType::PRED, {2}), {x, y}, "cmp",
                             {{"direction", "LT"}});
  HloInstruction *cvt = b.Op(HloOpcode::kConvert, BF16({2}), {x}, "cvt");
  HloInstruction *sel = b.Op(HloOpcode::kSelect, F32({2}), {cmp, x, y}, "sel");
  b.Root(b.Op(HloOpcode::kTuple, Shape::MakeTuple({BF16({2}), F32({2})}), {cvt, sel}, "t"));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *a = bad.Param(0, F32({2}), "a");
  bad.Root(bad.Op(HloOpcode::kCompare, F32({2}), {a, a}, "cmp", {{"direction", "LT"}}));
  EXPECT_INVALID(bad, "instruction 'cmp': compare", "must produce element type pred");
}

TEST(HloVerifier, ElementwiseArity) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2}), "x");
  b.Root(b.Op(HloOpcode::kAdd, F32({2}), {x}, "sum"));
  EXPECT_INVALID(b, "instruction 'sum': add takes 2 operands, got 1");
}

// ---- Dot ------------------------------------------------------------------------

TEST(HloVerifier, DotContractingSizesMatch) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2, 3}), "x");
  HloInstruction *y = b.Param(1, F32({4, 5}), "y");
  b.Root(b.Op(HloOpcode::kDot, F32({2, 5}), {x, y}, "dot.3",
              {{"lhs_contracting_dims", "{1}"}, {"rhs_contracting_dims", "{0}"}}));
  EXPECT_INVALID(b, "computation 'main', instruction 'dot.3': dot lhs contracting dimension 1 "
                    "has size 3 but rhs contracting dimension 0 has size 4");
}

TEST(HloVerifier, DotBatchDimensionsAndResult) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({8, 2, 3}), "x");
  HloInstruction *y = b.Param(1, F32({8, 3, 5}), "y");
  b.Root(b.Op(HloOpcode::kDot, F32({8, 2, 5}), {x, y}, "dot",
              {{"lhs_batch_dims", "{0}"},
               {"lhs_contracting_dims", "{2}"},
               {"rhs_batch_dims", "{0}"},
               {"rhs_contracting_dims", "{1}"}}));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *a = bad.Param(0, F32({8, 2, 3}), "a");
  HloInstruction *c = bad.Param(1, F32({8, 3, 5}), "c");
  bad.Root(bad.Op(HloOpcode::kDot, F32({2, 8, 5}), {a, c}, "dot",
                  {{"lhs_batch_dims", "{0}"},
                   {"lhs_contracting_dims", "{2}"},
                   {"rhs_batch_dims", "{0}"},
                   {"rhs_contracting_dims", "{1}"}}));
  EXPECT_INVALID(bad, "instruction 'dot'", "expected dimensions {8,2,5}");
}

TEST(HloVerifier, DotDimensionOutOfRange) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2, 3}), "x");
  HloInstruction *y = b.Param(1, F32({3, 5}), "y");
  b.Root(b.Op(HloOpcode::kDot, F32({2, 5}), {x, y}, "dot",
              {{"lhs_contracting_dims", "{2}"}, {"rhs_contracting_dims", "{0}"}}));
  EXPECT_INVALID(b, "instruction 'dot'", "2 is out of range for rank 2");
}

// ---- Data movement ----------------------------------------------------------------------

TEST(HloVerifier, ReshapeKeepsTheElementCount) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2, 3}), "x");
  b.Root(b.Op(HloOpcode::kReshape, F32({7}), {x}, "r"));
  EXPECT_INVALID(b, "instruction 'r': reshape from f32[2,3] (6 elements) to f32[7] (7 elements)");
}

TEST(HloVerifier, TransposeIsAPermutation) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2, 3}), "x");
  b.Root(b.Op(HloOpcode::kTranspose, F32({3, 2}), {x}, "t", {{"dimensions", "{1,1}"}}));
  EXPECT_INVALID(b, "instruction 't': transpose dimension 1 is listed twice");

  Builder wrong;
  HloInstruction *y = wrong.Param(0, F32({2, 3}), "y");
  wrong.Root(wrong.Op(HloOpcode::kTranspose, F32({2, 3}), {y}, "t", {{"dimensions", "{1,0}"}}));
  EXPECT_INVALID(wrong, "instruction 't'", "expected dimensions {3,2}");
}

TEST(HloVerifier, BroadcastMapsOperandDimensions) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({3}), "x");
  HloInstruction *ok = b.Op(HloOpcode::kBroadcast, F32({2, 3}), {x}, "ok", {{"dimensions", "{1}"}});
  b.Root(ok);
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *y = bad.Param(0, F32({3}), "y");
  bad.Root(bad.Op(HloOpcode::kBroadcast, F32({2, 3}), {y}, "bc", {{"dimensions", "{0}"}}));
  EXPECT_INVALID(bad, "instruction 'bc': broadcast maps operand dimension 0 (size 3) to result "
                      "dimension 0 (size 2)");

  Builder range;
  HloInstruction *z = range.Param(0, F32({3}), "z");
  range.Root(range.Op(HloOpcode::kBroadcast, F32({2, 3}), {z}, "bc", {{"dimensions", "{5}"}}));
  EXPECT_INVALID(range, "instruction 'bc': broadcast dimension 5 is out of range for rank 2");
}

TEST(HloVerifier, SliceBoundsAndResult) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({10}), "x");
  b.Root(b.Op(HloOpcode::kSlice, F32({3}), {x}, "s", {{"slice", "{[1:8:3]}"}}));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *y = bad.Param(0, F32({10}), "y");
  bad.Root(bad.Op(HloOpcode::kSlice, F32({5}), {y}, "s", {{"slice", "{[8:13]}"}}));
  EXPECT_INVALID(bad, "instruction 's': slice range [8:13:1] is out of bounds");
}

TEST(HloVerifier, ConcatenateSumsOneDimension) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({2, 3}), "x");
  HloInstruction *y = b.Param(1, F32({4, 3}), "y");
  b.Root(b.Op(HloOpcode::kConcatenate, F32({6, 3}), {x, y}, "c", {{"dimensions", "{0}"}}));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *p = bad.Param(0, F32({2, 3}), "p");
  HloInstruction *q = bad.Param(1, F32({4, 2}), "q");
  bad.Root(bad.Op(HloOpcode::kConcatenate, F32({6, 3}), {p, q}, "c", {{"dimensions", "{0}"}}));
  EXPECT_INVALID(bad, "instruction 'c': concatenate operand 1 f32[4,2]");
}

TEST(HloVerifier, ReduceDropsTheReducedDimensions) {
  Builder b;
  HloComputation *add = b.Adder();
  HloInstruction *x = b.Param(0, F32({2, 3}), "x");
  HloInstruction *zero = b.Op(HloOpcode::kConstant, F32({}), {}, "zero");
  HloInstruction *r = b.Op(HloOpcode::kReduce, F32({2}), {x, zero}, "r", {{"dimensions", "{1}"}});
  r->SetCalledComputation("to_apply", add);
  b.Root(r);
  EXPECT_VALID(b);

  Builder bad;
  HloComputation *add2 = bad.Adder();
  HloInstruction *y = bad.Param(0, F32({2, 3}), "y");
  HloInstruction *z = bad.Op(HloOpcode::kConstant, F32({}), {}, "z");
  HloInstruction *r2 = bad.Op(HloOpcode::kReduce, F32({3}), {y, z}, "r", {{"dimensions", "{1}"}});
  r2->SetCalledComputation("to_apply", add2);
  bad.Root(r2);
  EXPECT_INVALID(bad, "instruction 'r': reduce result f32[3] must have dimensions {2}");
}

// ---- Collectives ----------------------------------------------------------------------

TEST(HloVerifier, AllGatherMultipliesTheGatherDimensionByTheGroupSize) {
  Builder b;
  HloInstruction *w = b.Param(0, F32({4, 8}), "w");
  b.Root(b.Op(HloOpcode::kAllGather, F32({16, 8}), {w}, "ag",
              {{"replica_groups", "{{0,1,2,3}}"}, {"dimensions", "{0}"}}));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *v = bad.Param(0, F32({4, 8}), "v");
  bad.Root(bad.Op(HloOpcode::kAllGather, F32({8, 8}), {v}, "ag",
                  {{"replica_groups", "{{0,1,2,3}}"}, {"dimensions", "{0}"}}));
  EXPECT_INVALID(bad, "instruction 'ag': all-gather result f32[8,8] must be operand 0 f32[4,8] "
                      "with dimension 0 multiplied by the group size 4: f32[16,8]");
}

TEST(HloVerifier, AllGatherDimensionInRange) {
  Builder b;
  HloInstruction *w = b.Param(0, F32({4, 8}), "w");
  b.Root(b.Op(HloOpcode::kAllGather, F32({4, 8}), {w}, "ag",
              {{"replica_groups", "{{0,1}}"}, {"dimensions", "{2}"}}));
  EXPECT_INVALID(b, "instruction 'ag': all-gather dimension 2 is out of range");
}

TEST(HloVerifier, AllGatherGroupSizeFromTheModuleWhenGroupsAreEmpty) {
  // No channel: cross-replica, all replica_count replicas form one group.
  Builder b;
  b.module->SetHeaderAttribute("replica_count", "2");
  HloInstruction *w = b.Param(0, F32({4}), "w");
  b.Root(b.Op(HloOpcode::kAllGather, F32({8}), {w}, "ag", {{"dimensions", "{0}"}}));
  EXPECT_VALID(b);

  // A channel without global ids: every replica of every partition.
  Builder cross;
  cross.module->SetHeaderAttribute("replica_count", "2");
  cross.module->SetHeaderAttribute("num_partitions", "4");
  HloInstruction *v = cross.Param(0, F32({4}), "v");
  cross.Root(cross.Op(HloOpcode::kAllGather, F32({8}), {v}, "ag",
                      {{"channel_id", "1"}, {"dimensions", "{0}"}}));
  EXPECT_INVALID(cross, "instruction 'ag'", "multiplied by the group size 8: f32[32]");
}

TEST(HloVerifier, AllGatherWithGlobalDeviceIdsUsesTheGroups) {
  Builder b;
  b.module->SetHeaderAttribute("num_partitions", "8");
  HloInstruction *w = b.Param(0, F32({4}), "w");
  b.Root(b.Op(HloOpcode::kAllGather, F32({8}), {w}, "ag",
              {{"channel_id", "1"},
               {"replica_groups", "{{0,1},{2,3},{4,5},{6,7}}"},
               {"use_global_device_ids", "true"},
               {"dimensions", "{0}"}}));
  EXPECT_VALID(b);
}

TEST(HloVerifier, AllGatherOfSeveralOperandsGivesATuple) {
  Builder b;
  HloInstruction *w0 = b.Param(0, F32({2, 3}), "w0");
  HloInstruction *w1 = b.Param(1, BF16({2}), "w1");
  b.Root(b.Op(HloOpcode::kAllGather, Shape::MakeTuple({F32({4, 3}), BF16({4})}), {w0, w1}, "ag",
              {{"replica_groups", "{{0,1}}"}, {"dimensions", "{0}"}}));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *a = bad.Param(0, F32({2, 3}), "a");
  HloInstruction *c = bad.Param(1, BF16({2}), "c");
  bad.Root(bad.Op(HloOpcode::kAllGather, Shape::MakeTuple({F32({4, 3}), BF16({2})}), {a, c},
                  "ag", {{"replica_groups", "{{0,1}}"}, {"dimensions", "{0}"}}));
  EXPECT_INVALID(bad, "instruction 'ag': all-gather result element 1 bf16[2] must be operand 1");
}

TEST(HloVerifier, AllGatherPassesRankZeroTokensThrough) {
  // Neuron's token threading: (T, bf16[]) all-gather(w, t).
  Builder b;
  HloInstruction *w = b.Param(0, BF16({4, 8}), "w");
  HloInstruction *t = b.Param(1, BF16({}), "t");
  b.Root(b.Op(HloOpcode::kAllGather, Shape::MakeTuple({BF16({16, 8}), BF16({})}), {w, t}, "ag",
              {{"replica_groups", "{{0,1,2,3}}"}, {"dimensions", "{0}"}}));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *v = bad.Param(0, BF16({4, 8}), "v");
  HloInstruction *s = bad.Param(1, BF16({}), "s");
  bad.Root(bad.Op(HloOpcode::kAllGather, Shape::MakeTuple({BF16({16, 8}), BF16({4})}), {v, s},
                  "ag", {{"replica_groups", "{{0,1,2,3}}"}, {"dimensions", "{0}"}}));
  EXPECT_INVALID(bad, "instruction 'ag': all-gather operand 1 is rank 0 and passes through "
                      "unchanged");
}

TEST(HloVerifier, ReplicaGroupsNameEachDeviceOnce) {
  Builder b;
  HloInstruction *w = b.Param(0, F32({4}), "w");
  b.Root(b.Op(HloOpcode::kAllGather, F32({8}), {w}, "ag",
              {{"replica_groups", "{{0,1},{1,2}}"}, {"dimensions", "{0}"}}));
  EXPECT_INVALID(b, "instruction 'ag': device 1 appears twice in replica_groups");
}

TEST(HloVerifier, ReduceScatterDividesTheScatterDimension) {
  Builder b;
  HloComputation *add = b.Adder();
  HloInstruction *x = b.Param(0, F32({8, 2}), "x");
  HloInstruction *rs = b.Op(HloOpcode::kReduceScatter, F32({2, 2}), {x}, "rs",
                            {{"replica_groups", "{{0,1,2,3}}"}, {"dimensions", "{0}"}});
  rs->SetCalledComputation("to_apply", add);
  b.Root(rs);
  EXPECT_VALID(b);

  Builder bad;
  HloComputation *add2 = bad.Adder();
  HloInstruction *y = bad.Param(0, F32({8, 2}), "y");
  HloInstruction *rs2 = bad.Op(HloOpcode::kReduceScatter, F32({4, 2}), {y}, "rs",
                               {{"replica_groups", "{{0,1,2,3}}"}, {"dimensions", "{0}"}});
  rs2->SetCalledComputation("to_apply", add2);
  bad.Root(rs2);
  EXPECT_INVALID(bad, "instruction 'rs': reduce-scatter result f32[4,2] must be operand 0 "
                      "f32[8,2] with dimension 0 divided by the group size 4: f32[2,2]");
}

TEST(HloVerifier, AllReduceKeepsTheShape) {
  Builder b;
  HloComputation *add = b.Adder();
  HloInstruction *x = b.Param(0, F32({8}), "x");
  HloInstruction *ar = b.Op(HloOpcode::kAllReduce, F32({4}), {x}, "ar",
                            {{"replica_groups", "{{0,1}}"}});
  ar->SetCalledComputation("to_apply", add);
  b.Root(ar);
  EXPECT_INVALID(b, "instruction 'ar': all-reduce result f32[4] must have the shape of operand 0");
}

TEST(HloVerifier, CollectivePermuteKeepsTheShape) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({8}), "x");
  b.Root(b.Op(HloOpcode::kCollectivePermute, F32({8}), {x}, "cp",
              {{"source_target_pairs", "{{0,1},{1,0}}"}}));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *y = bad.Param(0, F32({8}), "y");
  bad.Root(bad.Op(HloOpcode::kCollectivePermute, BF16({8}), {y}, "cp",
                  {{"source_target_pairs", "{{0,1},{1,0}}"}}));
  EXPECT_INVALID(bad, "instruction 'cp': collective-permute result bf16[8] must have the shape");
}

// ---- Tuples and control flow ----------------------------------------------------------

TEST(HloVerifier, GetTupleElementIndexInRange) {
  Builder b;
  HloInstruction *t = b.Param(0, Shape::MakeTuple({F32({}), BF16({})}), "t");
  b.Root(b.Op(HloOpcode::kGetTupleElement, F32({}), {t}, "gte", {{"index", "2"}}));
  EXPECT_INVALID(b, "instruction 'gte': get-tuple-element index 2 is out of range for a tuple "
                    "of 2 elements");

  Builder wrong;
  HloInstruction *u = wrong.Param(0, Shape::MakeTuple({F32({}), BF16({})}), "u");
  wrong.Root(wrong.Op(HloOpcode::kGetTupleElement, F32({}), {u}, "gte", {{"index", "1"}}));
  EXPECT_INVALID(wrong, "instruction 'gte': get-tuple-element result f32[] must be element 1");
}

TEST(HloVerifier, TupleShapeIsTheOperandShapes) {
  Builder b;
  HloInstruction *x = b.Param(0, F32({}), "x");
  b.Root(b.Op(HloOpcode::kTuple, Shape::MakeTuple({BF16({})}), {x}, "t"));
  EXPECT_INVALID(b, "instruction 't': tuple result (bf16[]) must be the tuple of its operand "
                    "shapes (f32[])");
}

/// while(init) whose condition returns `cond_result` and whose body returns
/// a value of `body_result`.
Builder MakeWhile(Shape cond_result, Shape body_result) {
  Builder b;
  Shape loop = Shape::MakeTuple({T(PrimitiveType::S32, {}), F32({4})});
  HloComputation *cond = b.AddComputation("cond");
  HloInstruction *cp = b.Param(0, loop, "cond.p", cond);
  b.Root(b.Op(HloOpcode::kGetTupleElement, cond_result, {cp}, "cond.r",
              {{"index", cond_result.element_type() == PrimitiveType::PRED ? "0" : "1"}}, cond));
  HloComputation *body = b.AddComputation("body");
  HloInstruction *bp = b.Param(0, loop, "body.p", body);
  b.Root(b.Op(HloOpcode::kCopy, body_result, {bp}, "body.r", {}, body));
  HloInstruction *init = b.Param(0, loop, "init");
  HloInstruction *w = b.Op(HloOpcode::kWhile, loop, {init}, "loop");
  w->SetCalledComputation("condition", cond);
  w->SetCalledComputation("body", body);
  b.Root(w);
  return b;
}

TEST(HloVerifier, WhileConditionReturnsPred) {
  Builder b = MakeWhile(PRED(), Shape::MakeTuple({T(PrimitiveType::S32, {}), F32({4})}));
  // The condition's get-tuple-element takes element 0 (s32) as pred: that
  // instruction is wrong, and so is the signature the while sees.
  std::string msg = Verify(*b.module);
  EXPECT_NE(msg.find("instruction 'cond.r'"), std::string::npos) << msg;

  Builder f32 = MakeWhile(F32({4}), Shape::MakeTuple({T(PrimitiveType::S32, {}), F32({4})}));
  EXPECT_INVALID(f32, "instruction 'loop': condition computation 'cond' must return pred[], "
                      "returns f32[4]");
}

TEST(HloVerifier, WhileBodyReturnsTheLoopShape) {
  Builder b = MakeWhile(F32({4}), Shape::MakeTuple({T(PrimitiveType::S32, {}), F32({5})}));
  EXPECT_INVALID(b, "instruction 'loop': expects (s32[], f32[4]) from body computation 'body', "
                    "which returns (s32[], f32[5])");
}

TEST(HloVerifier, CallArgumentsMatchTheCalleeParameters) {
  // The shape of the hlo-invalid corpus module: an f32[] passed where the
  // callee takes bf16[8,16].
  Builder b;
  HloComputation *callee = b.AddComputation("kernel");
  HloInstruction *kp = b.Param(0, BF16({8, 16}), "kernel.p", callee);
  b.Root(b.Op(HloOpcode::kNegate, BF16({8, 16}), {kp}, "kernel.r", {}, callee));
  HloInstruction *x = b.Param(0, F32({}), "x");
  HloInstruction *call = b.Op(HloOpcode::kCall, BF16({8, 16}), {x}, "call.606");
  call->SetCalledComputation("to_apply", callee);
  b.Root(call);
  EXPECT_INVALID(b, "computation 'main', instruction 'call.606': passes f32[] as argument 0 to "
                    "called computation 'kernel', whose parameter 0 'kernel.p' is bf16[8,16]");
}

TEST(HloVerifier, CallArgumentCountAndResult) {
  Builder b;
  HloComputation *callee = b.AddComputation("kernel");
  HloInstruction *kp = b.Param(0, F32({}), "kernel.p", callee);
  b.Root(kp);
  HloInstruction *x = b.Param(0, F32({}), "x");
  HloInstruction *call = b.Op(HloOpcode::kCall, F32({}), {x, x}, "call");
  call->SetCalledComputation("to_apply", callee);
  b.Root(call);
  EXPECT_INVALID(b, "instruction 'call': passes 2 arguments to called computation 'kernel', "
                    "which has 1 parameter");
}

TEST(HloVerifier, FusionOperandsMatchTheFusedParameters) {
  Builder b;
  HloComputation *fused = b.AddComputation("fused");
  HloInstruction *fp = b.Param(0, F32({2}), "fused.p", fused);
  b.Root(b.Op(HloOpcode::kNegate, F32({2}), {fp}, "fused.r", {}, fused));
  HloInstruction *x = b.Param(0, F32({3}), "x");
  HloInstruction *f = b.Op(HloOpcode::kFusion, F32({2}), {x}, "fusion", {{"kind", "kLoop"}});
  f->SetCalledComputation("calls", fused);
  b.Root(f);
  EXPECT_INVALID(b, "instruction 'fusion': passes f32[3] as argument 0 to called computation "
                    "'fused'");
}

TEST(HloVerifier, ConditionalBranchesMatch) {
  Builder b;
  HloComputation *on_true = b.AddComputation("on_true");
  b.Root(b.Param(0, F32({}), "t.p", on_true));
  HloComputation *on_false = b.AddComputation("on_false");
  b.Root(b.Param(0, BF16({}), "f.p", on_false));
  HloInstruction *pred = b.Param(0, PRED(), "pred");
  HloInstruction *x = b.Param(1, F32({}), "x");
  HloInstruction *c = b.Op(HloOpcode::kConditional, F32({}), {pred, x, x}, "cond");
  c->SetCalledComputation("true_computation", on_true);
  c->SetCalledComputation("false_computation", on_false);
  b.Root(c);
  EXPECT_INVALID(b, "instruction 'cond': passes f32[] as argument 0 to branch computation "
                    "'on_false'");
}

TEST(HloVerifier, CollectiveMatmulCustomCallTakesTwoOperands) {
  Builder b;
  HloInstruction *w = b.Param(0, F32({4, 8}), "w");
  b.Root(b.Op(HloOpcode::kCustomCall, F32({4, 8}), {w}, "cc",
              {{"custom_call_target", "\"AwsNeuronCollectiveMatmul\""}}));
  EXPECT_INVALID(b, "instruction 'cc': custom-call AwsNeuronCollectiveMatmul takes 2 operands");
}

TEST(HloVerifier, CustomCallLayoutConstraintsCoverEveryOperand) {
  Builder b;
  HloInstruction *w = b.Param(0, F32({4, 8}), "w");
  b.Root(b.Op(HloOpcode::kCustomCall, F32({4, 8}), {w, w}, "cc",
              {{"custom_call_target", "\"foo\""},
               {"operand_layout_constraints", "{f32[4,8]{1,0}}"}}));
  EXPECT_INVALID(b, "instruction 'cc': operand_layout_constraints lists 1 shapes for 2 operands");
}

// The verifier checks backend_config against the loom_* attributes of the
// collective matmul (docs/collective-matmul-contract.md), through the
// contract module.
TEST(HloVerifier, CollectiveMatmulBackendConfigAgreesWithTheModule) {
  auto module = ParseHloModule(
      "HloModule m, replica_count=2\n"
      "ENTRY e {\n"
      "  w = f32[2,3] parameter(0)\n"
      "  x = f32[3,5] parameter(1)\n"
      "  ROOT cm = f32[4,5] custom-call(w, x), custom_call_target=\"AwsNeuronCollectiveMatmul\", "
      "frontend_attributes={loom_weight_side=\"lhs\",loom_lhs_batch_dims=\"{}\","
      "loom_rhs_batch_dims=\"{}\",loom_lhs_contracting_dims=\"{1}\",loom_rhs_contracting_dims=\"{0}\","
      "loom_all_gather_dimension=\"0\",loom_replica_groups=\"{{0,1}}\","
      "loom_use_global_device_ids=\"false\",loom_local_weight_shape=\"f32[2,3]\","
      "loom_gathered_weight_shape=\"f32[4,3]\",loom_weight_operand_shape=\"f32[4,3]\"}, "
      "backend_config=\"rhs_contracting_dim=0,tp_degree=2,num_groups=1,use_sb_to_sb=0\"\n"
      "}\n");
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  EXPECT_EQ(Verify(**module), "");
  HloInstruction *cm = (*module)->entry_computation()->root_instruction();
  cm->SetAttribute("backend_config",
                   "\"rhs_contracting_dim=0,tp_degree=1,num_groups=2,use_sb_to_sb=0\"");
  EXPECT_EQ(Verify(**module), "computation 'e', instruction 'cm': backend_config says "
                              "tp_degree=1, num_groups=2 but loom_replica_groups is {{0,1}}");
  cm->SetAttribute("backend_config", "\"rhs_contracting_dim=0,tp_degree=2\"");
  EXPECT_EQ(Verify(**module), "computation 'e', instruction 'cm': backend_config "
                              "\"rhs_contracting_dim=0,tp_degree=2\": expected ',' before key "
                              "'num_groups'");
}

// Async collective pairs are checked as XLA's verifier checks them.
TEST(HloVerifier, AsyncCollectivePairs) {
  Builder b;
  HloInstruction *a = b.Param(0, F32({2, 3}), "a");
  Shape u32(PrimitiveType::U32, {});
  HloInstruction *start =
      b.Op(HloOpcode::kCollectivePermuteStart,
           Shape::MakeTuple({F32({2, 3}), F32({2, 3}), u32, u32}), {a}, "cps",
           {{"source_target_pairs", "{{0,0}}"}});
  b.Root(b.Op(HloOpcode::kCollectivePermuteDone, F32({3, 2}), {start}, "cpd"));
  EXPECT_INVALID(b, "instruction 'cpd': collective-permute-done result f32[3,2] must be f32[2,3]");
  EXPECT_EQ(Verify(*b.module).find("'cps'"), std::string::npos);
}

TEST(HloVerifier, AllGatherWithGlobalDeviceIdsAndNoGroupsGathersEveryDevice) {
  // HloPassesFuzzer finding 1 (docs/robustness.md): flattened ids without
  // replica_groups are one group of replica_count x num_partitions devices,
  // as the interpreter and neuron_looped_einsum_replacer read them.
  Builder b;
  b.module->SetHeaderAttribute("num_partitions", "8");
  HloInstruction *w = b.Param(0, BF16({2, 4, 16}), "w");
  b.Root(b.Op(HloOpcode::kAllGather, BF16({8, 4, 16}), {w}, "ag",
              {{"channel_id", "1"}, {"use_global_device_ids", "true"}, {"dimensions", "{0}"}}));
  EXPECT_INVALID(b, "computation 'main', instruction 'ag': all-gather result bf16[8,4,16] must "
                    "be operand 0 bf16[2,4,16] with dimension 0 multiplied by the group size 8: "
                    "bf16[16,4,16]");

  Builder good;
  good.module->SetHeaderAttribute("replica_count", "2");
  good.module->SetHeaderAttribute("num_partitions", "4");
  HloInstruction *v = good.Param(0, BF16({2, 4, 16}), "v");
  good.Root(good.Op(HloOpcode::kAllGather, BF16({16, 4, 16}), {v}, "ag",
                    {{"channel_id", "1"}, {"use_global_device_ids", "true"}, {"dimensions", "{0}"}}));
  EXPECT_VALID(good);
}

TEST(HloVerifier, PassThroughOpsKeepTheOperandShape) {
  // HloEvalFuzzer finding 2: XLA's HandleDomain / HandleAddDependency /
  // HandleOptimizationBarrier; the interpreter hands the operand's buffer on.
  Builder b;
  HloInstruction *v = b.Param(0, F32({}), "v");
  HloInstruction *t = b.Op(HloOpcode::kAfterAll, Shape::MakeToken(), {}, "t");
  HloInstruction *d = b.Op(HloOpcode::kAddDependency, F32({}), {v, t}, "d");
  HloInstruction *dom = b.Op(HloOpcode::kDomain, F32({}), {d}, "dom");
  b.Root(b.Op(HloOpcode::kOptimizationBarrier, F32({}), {dom}, "ob"));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *x = bad.Param(0, F32({}), "x");
  HloInstruction *tok = bad.Op(HloOpcode::kAfterAll, Shape::MakeToken(), {}, "tok");
  HloInstruction *dep = bad.Op(HloOpcode::kAddDependency, T(PrimitiveType::F64, {}), {x, tok}, "dep");
  HloInstruction *notok = bad.Op(HloOpcode::kAddDependency, F32({}), {x, x}, "notok");
  HloInstruction *dm = bad.Op(HloOpcode::kDomain, T(PrimitiveType::F64, {}), {x}, "dm");
  HloInstruction *ob = bad.Op(HloOpcode::kOptimizationBarrier, F32({2}), {x}, "ob");
  bad.Root(bad.Op(HloOpcode::kTuple,
                  Shape::MakeTuple({T(PrimitiveType::F64, {}), F32({}), T(PrimitiveType::F64, {}),
                                    F32({2})}),
                  {dep, notok, dm, ob}, "t"));
  EXPECT_INVALID(bad, "instruction 'dep': add-dependency result f64[] must have the shape of its "
                      "operand f32[]",
                 "instruction 'notok': add-dependency operand 1 must be a token, got f32[]",
                 "instruction 'dm': domain result f64[] must have the shape of its operand f32[]",
                 "instruction 'ob': opt-barrier result f32[2] must have the shape of its operand "
                 "f32[]");
}

TEST(HloVerifier, GatherResultIsTheInferredShape) {
  // HloEvalFuzzer finding 4: XLA's gather shape rule.
  auto attrs = [] {
    return std::vector<std::pair<std::string, std::string>>{
        {"offset_dims", "{1}"},      {"collapsed_slice_dims", "{0}"},
        {"start_index_map", "{0}"},  {"index_vector_dim", "2"},
        {"slice_sizes", "{1,3}"}};
  };
  Builder b;
  HloInstruction *a = b.Param(0, T(PrimitiveType::S32, {1, 3}), "a");
  HloInstruction *i = b.Param(1, T(PrimitiveType::S32, {7, 4}), "i");
  b.Root(b.Op(HloOpcode::kGather, T(PrimitiveType::S32, {7, 3, 4}), {a, i}, "g", attrs()));
  EXPECT_VALID(b);

  Builder bad;
  HloInstruction *a2 = bad.Param(0, T(PrimitiveType::S32, {1, 3}), "a");
  HloInstruction *i2 = bad.Param(1, T(PrimitiveType::S32, {7, 4}), "i");
  bad.Root(bad.Op(HloOpcode::kGather, T(PrimitiveType::S32, {7, 3, 5}), {a2, i2}, "g", attrs()));
  EXPECT_INVALID(bad, "computation 'main', instruction 'g': gather of s32[1,3] at s32[7,4] has "
                      "result s32[7,3,5]; expected s32[7,3,4]");
}

} // namespace
