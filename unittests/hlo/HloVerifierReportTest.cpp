// Unit tests of the order and the length of VerifyHloModule's report, which
// one walk over each computation must keep as docs/hlo-verifier.md lists
// it: the module's own problems, then names (computation by computation),
// then computation references, then each computation's structure and shape
// rules. Also the element-type and tuple-element rules ShapeInference offers
// without building a shape, checked against the rules that build one.
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/ir/ShapeInference.h"
#include "loom/hlo/pass/HloVerifier.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

Shape F32(std::initializer_list<int64_t> dims) { return Shape(PrimitiveType::F32, dims); }

std::string Verify(const HloModule &module) {
  llvm::Error err = VerifyHloModule(module);
  return err ? llvm::toString(std::move(err)) : std::string();
}

HloComputation *AddComputation(HloModule &module, const char *name) {
  return module.AddComputation(std::make_unique<HloComputation>(name));
}

HloInstruction *Param(HloComputation *comp, Shape shape, const std::string &name) {
  auto p = HloInstruction::Create(HloOpcode::kParameter, std::move(shape), {}, name);
  p->set_parameter_number(0);
  return comp->AddInstruction(std::move(p));
}

HloInstruction *Negate(HloComputation *comp, HloInstruction *operand, Shape shape,
                       const std::string &name) {
  return comp->AddInstruction(
      HloInstruction::Create(HloOpcode::kNegate, std::move(shape), {operand}, name));
}

/// A computation built outside the module keeps the names it is given,
/// duplicates included (AddInstruction in a module would rename them).
HloComputation *AddDetached(HloModule &module, std::unique_ptr<HloComputation> comp) {
  return module.AddComputation(std::move(comp));
}

const char *kNegateRule = "negate result f32[3] must have the dimensions of its operand f32[2]";

TEST(HloVerifierReport, NamesComeBeforeTheShapeRulesOfEarlierComputations) {
  HloModule module("m");
  HloComputation *main = AddComputation(module, "main");
  module.set_entry_computation(main);
  HloInstruction *x = Param(main, F32({2}), "x");
  main->set_root_instruction(Negate(main, x, F32({3}), "neg"));
  // Found after main's shape rule, listed before it.
  auto other = std::make_unique<HloComputation>("other");
  other->set_root_instruction(Param(other.get(), F32({}), "x"));
  AddDetached(module, std::move(other));
  EXPECT_EQ(Verify(module),
            "computation 'other', instruction 'x': name already used by an instruction of "
            "computation 'main'; instruction names must be unique across the module\n"
            "computation 'main', instruction 'neg': " +
                std::string(kNegateRule));
}

TEST(HloVerifierReport, AComputationNameComesBeforeItsInstructionNames) {
  HloModule module("m");
  HloComputation *main = AddComputation(module, "main");
  module.set_entry_computation(main);
  main->set_root_instruction(Param(main, F32({}), "x"));
  auto again = std::make_unique<HloComputation>("main");
  again->set_root_instruction(Param(again.get(), F32({}), "x"));
  AddDetached(module, std::move(again));
  std::string report = Verify(module);
  size_t computation = report.find("another computation has the same name");
  size_t instruction = report.find("instruction 'x': name already used");
  ASSERT_NE(computation, std::string::npos) << report;
  ASSERT_NE(instruction, std::string::npos) << report;
  EXPECT_LT(computation, instruction) << report;
}

TEST(HloVerifierReport, ADanglingReferenceInALaterComputationSilencesEveryShapeRule) {
  HloModule module("m");
  HloComputation *main = AddComputation(module, "main");
  module.set_entry_computation(main);
  HloInstruction *x = Param(main, F32({2}), "x");
  main->set_root_instruction(Negate(main, x, F32({3}), "neg"));
  HloComputation stray("stray");
  HloComputation *later = AddComputation(module, "later");
  HloInstruction *y = Param(later, F32({}), "y");
  HloInstruction *call =
      later->AddInstruction(HloInstruction::Create(HloOpcode::kCall, F32({}), {y}, "call"));
  call->SetCalledComputation("to_apply", &stray);
  later->set_root_instruction(call);
  EXPECT_EQ(Verify(module), "computation 'later', instruction 'call': to_apply refers to a "
                            "computation that is not in the module");
}

TEST(HloVerifierReport, StructureBeforeCycleBeforeShapeRulesWithinAComputation) {
  HloModule module("m");
  HloComputation *main = AddComputation(module, "main");
  module.set_entry_computation(main);
  HloInstruction *x = Param(main, F32({2}), "x");
  // A shape rule fails first in the text, the cycle comes after it.
  Negate(main, x, F32({3}), "neg");
  HloInstruction *a = Negate(main, x, F32({2}), "a");
  HloInstruction *b = Negate(main, a, F32({2}), "b");
  ASSERT_FALSE(llvm::errorToBool(a->ReplaceOperandWith(0, b)));
  main->set_root_instruction(b);
  std::string report = Verify(module);
  size_t cycle = report.find("part of a cycle");
  size_t rule = report.find(kNegateRule);
  ASSERT_NE(cycle, std::string::npos) << report;
  ASSERT_NE(rule, std::string::npos) << report;
  EXPECT_LT(cycle, rule) << report;
}

TEST(HloVerifierReport, AnOperandLaterInTheTextIsNotACycle) {
  HloModule module("m");
  HloComputation *main = AddComputation(module, "main");
  module.set_entry_computation(main);
  HloInstruction *x = Param(main, F32({2}), "x");
  HloInstruction *a = Negate(main, x, F32({2}), "a");
  HloInstruction *b = Negate(main, x, F32({2}), "b");
  // a now reads b, which the text lists after it: no cycle.
  ASSERT_FALSE(llvm::errorToBool(a->ReplaceOperandWith(0, b)));
  main->set_root_instruction(a);
  EXPECT_EQ(Verify(module), "");
}

TEST(HloVerifierReport, ShowsTheFirstFiftyProblemsInReportOrder) {
  HloModule module("m");
  HloComputation *main = AddComputation(module, "main");
  module.set_entry_computation(main);
  HloInstruction *x = Param(main, F32({2}), "x");
  std::vector<std::string> names;
  for (int i = 0; i < 30; ++i) {
    names.push_back("neg." + std::to_string(i));
    main->set_root_instruction(Negate(main, x, F32({3}), names.back()));
  }
  // 30 duplicate names, found after main's 30 shape rules.
  auto other = std::make_unique<HloComputation>("other");
  HloInstruction *p = Param(other.get(), F32({2}), "p");
  for (const std::string &name : names)
    other->set_root_instruction(Negate(other.get(), p, F32({2}), name));
  AddDetached(module, std::move(other));
  std::string report = Verify(module);
  std::vector<std::string> lines;
  for (size_t start = 0; start <= report.size();) {
    size_t end = report.find('\n', start);
    if (end == std::string::npos)
      end = report.size();
    lines.push_back(report.substr(start, end - start));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 51u) << report;
  for (int i = 0; i < 30; ++i)
    EXPECT_EQ(lines[i], "computation 'other', instruction '" + names[i] +
                            "': name already used by an instruction of computation 'main'; "
                            "instruction names must be unique across the module");
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(lines[30 + i],
              "computation 'main', instruction '" + names[i] + "': " + kNegateRule);
  EXPECT_EQ(lines[50], "... and 10 more problems");
}

TEST(ShapeInferenceElementTypes, AgreeWithTheRulesThatBuildTheShape) {
  const Shape c64(PrimitiveType::C64, {2});
  const Shape f64(PrimitiveType::F64, {2});
  for (HloOpcode opcode : {HloOpcode::kAbs, HloOpcode::kIsFinite, HloOpcode::kNegate,
                           HloOpcode::kReal, HloOpcode::kImag, HloOpcode::kCopy}) {
    for (const Shape &in : {c64, F32({2})}) {
      llvm::Expected<Shape> full = ShapeInference::InferUnaryOpShape(opcode, in);
      ASSERT_TRUE(static_cast<bool>(full)) << llvm::toString(full.takeError());
      EXPECT_EQ(ShapeInference::UnaryOpElementType(opcode, in.element_type()),
                full->element_type())
          << HloOpcodeString(opcode).str();
    }
  }
  for (HloOpcode opcode : {HloOpcode::kAdd, HloOpcode::kCompare, HloOpcode::kComplex}) {
    for (const Shape &in : {f64, F32({2})}) {
      llvm::Expected<Shape> full = ShapeInference::InferBinaryOpShape(opcode, in, in);
      ASSERT_TRUE(static_cast<bool>(full)) << llvm::toString(full.takeError());
      EXPECT_EQ(ShapeInference::BinaryOpElementType(opcode, in.element_type()),
                full->element_type())
          << HloOpcodeString(opcode).str();
    }
  }
}

TEST(ShapeInferenceElementTypes, TupleElementIsTheElementItself) {
  const Shape tuple = Shape::MakeTuple({F32({2}), F32({3})});
  llvm::Expected<const Shape *> element = ShapeInference::GetTupleElementShape(tuple, 1);
  ASSERT_TRUE(static_cast<bool>(element)) << llvm::toString(element.takeError());
  EXPECT_EQ(*element, &tuple.tuple_shapes(1));
  // The same errors as the rule that copies.
  for (int64_t index : {-1, 2}) {
    llvm::Expected<const Shape *> bad = ShapeInference::GetTupleElementShape(tuple, index);
    llvm::Expected<Shape> copied = ShapeInference::InferGetTupleElementShape(tuple, index);
    ASSERT_FALSE(static_cast<bool>(bad));
    ASSERT_FALSE(static_cast<bool>(copied));
    EXPECT_EQ(llvm::toString(bad.takeError()), llvm::toString(copied.takeError()));
  }
  llvm::Expected<const Shape *> not_tuple = ShapeInference::GetTupleElementShape(F32({2}), 0);
  ASSERT_FALSE(static_cast<bool>(not_tuple));
  EXPECT_EQ(llvm::toString(not_tuple.takeError()),
            "get-tuple-element operand must be a tuple, got f32[2]");
}

} // namespace
