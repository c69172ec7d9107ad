// VerifyHloModule on several threads reports exactly what it reports on one:
// success or the same text (the same problems, in the same order, cut at the
// same limit). Compared at 1 and 4 threads (and a few other counts) on every
// module of examples/hlo, test/hlo and ../shared/corpus/hlo that parses,
// before and after neuron_looped_einsum_replacer +
// neuron_looped_einsum_token_replacer; on broken modules built here with
// more problems than the report shows, spread over many computations; and
// on deterministic mutations of the valid modules (an operand, a shape
// dimension, a callee, a name, a parameter number, a root). Each is also
// verified with its computations cut into pieces of a few instructions
// (down to one: a cut at every instruction), on one thread and on several,
// as a computation of more than HloVerifierPieces.h's kPieceSlots is.
#include "HloTestUtil.h"

#include "../../bench/HloUnrolledGenerator.h"
#include "../../lib/hlo/pass/HloVerifierPieces.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

using testutil::HloFilesUnder;
using testutil::Parse;
using testutil::ReadFile;
using testutil::SourceRoot;

/// "ok", or "error:" and the report.
std::string Verify(const HloModule &module, unsigned threads) {
  llvm::Error err = VerifyHloModule(module, threads);
  return err ? "error:" + llvm::toString(std::move(err)) : std::string("ok");
}

/// "ok", or "error:" and the report, with computations walked in pieces of
/// `piece` text-order slots.
std::string VerifyInPieces(const HloModule &module, unsigned threads, size_t piece) {
  llvm::Error err = hlo_verifier::VerifyModuleInPieces(module, threads, piece);
  return err ? "error:" + llvm::toString(std::move(err)) : std::string("ok");
}

/// The piece sizes every module is also verified with: a cut at every
/// instruction, at every other, and a few more instructions a piece.
constexpr size_t kPieceSizes[] = {1, 2, 5};

/// The report at 1 thread; a test failure when another count differs, or
/// the report with computations cut into pieces.
std::string ExpectSameAtThreads(const HloModule &module, llvm::StringRef what,
                                std::initializer_list<unsigned> counts = {4}) {
  std::string one = Verify(module, 1);
  llvm::Error err = VerifyHloModule(module);
  EXPECT_EQ(one, err ? "error:" + llvm::toString(std::move(err)) : std::string("ok"))
      << what.str() << ": the one-argument form";
  for (unsigned threads : counts)
    EXPECT_EQ(one, Verify(module, threads)) << what.str() << " at " << threads << " threads";
  for (size_t piece : kPieceSizes)
    for (unsigned threads : {1u, 3u})
      EXPECT_EQ(one, VerifyInPieces(module, threads, piece))
          << what.str() << " in pieces of " << piece << " at " << threads << " threads";
  return one;
}

/// The modules of a directory under the root (or beside it) that parse.
struct Module {
  std::string path, text;
};
std::vector<Module> ParsableModules(const std::string &dir) {
  std::vector<Module> out;
  for (const std::string &path : HloFilesUnder(dir)) {
    std::string text = ReadFile(path);
    auto module = ParseHloModule(text, path);
    if (!module) {
      llvm::consumeError(module.takeError());
      continue;
    }
    out.push_back({path, std::move(text)});
  }
  return out;
}

const std::vector<Module> &RepositoryModules() {
  static const std::vector<Module> modules = [] {
    std::vector<Module> all = ParsableModules(SourceRoot() + "/examples/hlo");
    for (Module &m : ParsableModules(SourceRoot() + "/test/hlo"))
      all.push_back(std::move(m));
    return all;
  }();
  return modules;
}

const std::vector<Module> &CorpusModules() {
  static const std::vector<Module> modules =
      ParsableModules(SourceRoot() + "/../shared/corpus/hlo");
  return modules;
}

void CompareWithAndWithoutPasses(const std::vector<Module> &modules) {
  RegisterAllHloPasses();
  for (const Module &m : modules) {
    std::unique_ptr<HloModule> module = Parse(m.text);
    ExpectSameAtThreads(*module, m.path, {2, 4});
    HloPassPipeline pipeline("threads-test");
    pipeline.AddPass(llvm::cantFail(CreateHloPass("neuron_looped_einsum_replacer")));
    pipeline.AddPass(llvm::cantFail(CreateHloPass("neuron_looped_einsum_token_replacer")));
    llvm::Expected<bool> changed = pipeline.Run(*module);
    if (!changed) {
      llvm::consumeError(changed.takeError());
      continue;
    }
    ExpectSameAtThreads(*module, m.path + " after the passes", {2, 4});
  }
}

TEST(HloVerifierThreads, RepositoryModules) {
  ASSERT_GT(RepositoryModules().size(), 20u) << "examples/hlo and test/hlo not found under "
                                             << SourceRoot();
  CompareWithAndWithoutPasses(RepositoryModules());
}

TEST(HloVerifierThreads, CorpusModules) {
  if (CorpusModules().empty())
    GTEST_SKIP() << "no corpus at " << SourceRoot() << "/../shared/corpus/hlo";
  CompareWithAndWithoutPasses(CorpusModules());
}

Shape F32(std::initializer_list<int64_t> dims) { return Shape(PrimitiveType::F32, dims); }

HloInstruction *Param(HloComputation *comp, Shape shape, const std::string &name, int64_t n) {
  auto p = HloInstruction::Create(HloOpcode::kParameter, std::move(shape), {}, name);
  p->set_parameter_number(n);
  return comp->AddInstruction(std::move(p));
}

HloInstruction *Unary(HloComputation *comp, HloOpcode opcode, HloInstruction *operand,
                      Shape shape, const std::string &name) {
  return comp->AddInstruction(HloInstruction::Create(opcode, std::move(shape), {operand}, name));
}

/// A module of `computations` detached computations (so they keep the
/// names given, duplicates included), each with problems of every kind the
/// walk finds: a duplicate computation name every third, instruction names
/// used before in another computation or in the same one, shape rules,
/// parameter numbers, a bad shape, and a missing root every fifth.
std::unique_ptr<HloModule> BrokenModule(int computations, bool dangling_callee) {
  auto module = std::make_unique<HloModule>("broken");
  for (int c = 0; c < computations; ++c) {
    std::string name = c % 3 == 2 ? "comp" + std::to_string(c - 1) : "comp" + std::to_string(c);
    auto comp = std::make_unique<HloComputation>(name);
    HloComputation *raw = comp.get();
    HloInstruction *x = Param(raw, F32({2}), "x", 0);
    // Parameter number out of range, and one used twice.
    Param(raw, F32({2}), "y" + std::to_string(c), c % 2 ? 5 : 0);
    HloInstruction *last = x;
    for (int i = 0; i < 3 + c % 4; ++i)
      last = Unary(raw, HloOpcode::kNegate, last, F32({2 + (i + c) % 2}),
                   "neg." + std::to_string(i));
    HloInstruction *bad = Unary(raw, HloOpcode::kNegate, last, Shape(PrimitiveType::F32, {-3}),
                                "negative." + std::to_string(c));
    HloInstruction *twice = Unary(raw, HloOpcode::kCopy, bad, F32({2}), "twice");
    Unary(raw, HloOpcode::kCopy, twice, F32({2}), "twice");
    if (c == computations / 2 && dangling_callee) {
      static HloComputation outside("outside");
      HloInstruction *call = Unary(raw, HloOpcode::kCall, x, F32({2}), "call");
      call->SetCalledComputation("to_apply", &outside);
    }
    if (c % 5 != 4)
      raw->set_root_instruction(last);
    HloComputation *added = module->AddComputation(std::move(comp));
    if (c == 0)
      module->set_entry_computation(added);
  }
  return module;
}

TEST(HloVerifierThreads, BrokenModulesKeepOrderAndTruncation) {
  for (bool dangling : {false, true}) {
    for (int computations : {1, 2, 3, 7, 40, 200}) {
      std::unique_ptr<HloModule> module = BrokenModule(computations, dangling);
      std::string what = std::to_string(computations) + " computations" +
                         (dangling ? " with a dangling callee" : "");
      std::string report = ExpectSameAtThreads(*module, what, {2, 3, 4, 8, 0});
      ASSERT_NE(report, "ok") << what;
      if (computations >= 7) {
        // 50 problems shown, then the count of the rest.
        EXPECT_EQ(llvm::StringRef(report).count('\n'), 50u) << report;
        EXPECT_NE(report.find("\n... and "), std::string::npos) << report;
      }
    }
  }
}

TEST(HloVerifierThreads, ProblemsOfLaterComputationsAfterEarlierOnes) {
  // Every computation but the last is valid: the problems of the last must
  // be reported whichever thread finds them first.
  auto module = std::make_unique<HloModule>("m");
  for (int c = 0; c < 64; ++c) {
    auto comp = std::make_unique<HloComputation>("c" + std::to_string(c));
    HloInstruction *x = Param(comp.get(), F32({2}), "x" + std::to_string(c), 0);
    Shape out = c == 63 ? F32({3}) : F32({2});
    comp->set_root_instruction(
        Unary(comp.get(), HloOpcode::kNegate, x, out, "n" + std::to_string(c)));
    HloComputation *added = module->AddComputation(std::move(comp));
    if (c == 0)
      module->set_entry_computation(added);
  }
  EXPECT_EQ(ExpectSameAtThreads(*module, "64 computations", {2, 4, 16}),
            "error:computation 'c63', instruction 'n63': negate result f32[3] must have the "
            "dimensions of its operand f32[2]");
}

/// Deterministic mutations of a parsed module: each changes one thing the
/// verifier checks, at the instruction `pick` selects (by position in the
/// module, wrapping around).
struct Mutation {
  const char *name;
  /// False when the module has nothing to mutate this way.
  std::function<bool(HloModule &, size_t pick)> apply;
};

std::vector<HloInstruction *> AllInstructions(const HloModule &module) {
  std::vector<HloInstruction *> all;
  for (HloComputation *comp : module.computations())
    for (HloInstruction *inst : comp->instructions())
      all.push_back(inst);
  return all;
}

/// Offers `mutate` the module's instructions starting at `pick` (wrapping
/// around) until it changes one; false if it changed none. `mutate` also
/// sees every instruction.
bool MutateFirstFrom(HloModule &module, size_t pick,
                     llvm::function_ref<bool(HloInstruction *,
                                             llvm::ArrayRef<HloInstruction *>)> mutate) {
  std::vector<HloInstruction *> all = AllInstructions(module);
  for (size_t k = 0; k < all.size(); ++k)
    if (mutate(all[(pick + k) % all.size()], all))
      return true;
  return false;
}

std::vector<Mutation> Mutations() {
  using Instructions = llvm::ArrayRef<HloInstruction *>;
  return {
      {"shape dimension",
       [](HloModule &module, size_t pick) {
         return MutateFirstFrom(module, pick, [](HloInstruction *inst, Instructions) {
           if (!inst->shape().IsArray() || inst->shape().rank() == 0)
             return false;
           Shape *shape = inst->mutable_shape();
           shape->set_dimensions(0, shape->dimensions(0) + 1);
           return true;
         });
       }},
      {"element type",
       [](HloModule &module, size_t pick) {
         return MutateFirstFrom(module, pick, [](HloInstruction *inst, Instructions) {
           if (!inst->shape().IsArray())
             return false;
           Shape *shape = inst->mutable_shape();
           shape->set_element_type(shape->element_type() == PrimitiveType::F32
                                       ? PrimitiveType::S32
                                       : PrimitiveType::F32);
           return true;
         });
       }},
      {"extra operand",
       [](HloModule &module, size_t pick) {
         return MutateFirstFrom(module, pick, [](HloInstruction *inst, Instructions) {
           if (inst->operand_count() == 0)
             return false;
           inst->AppendOperand(inst->mutable_operand(0));
           return true;
         });
       }},
      {"operand from later in the text",
       [](HloModule &module, size_t pick) {
         return MutateFirstFrom(module, pick, [](HloInstruction *inst, Instructions) {
           if (inst->operand_count() == 0)
             return false;
           // The first instruction after `inst` (or `inst` itself) of the
           // operand's shape: an edge forward in the text, often a cycle.
           bool after = false;
           for (HloInstruction *later : inst->parent()->instructions()) {
             after = after || later == inst;
             if (!after || !later->shape().Compatible(inst->operand(0)->shape()))
               continue;
             llvm::cantFail(inst->ReplaceOperandWith(0, later));
             return true;
           }
           return false;
         });
       }},
      {"operand from another computation",
       [](HloModule &module, size_t pick) {
         return MutateFirstFrom(module, pick, [](HloInstruction *inst, Instructions all) {
           if (inst->operand_count() == 0)
             return false;
           for (HloInstruction *other : all)
             if (other->parent() != inst->parent() &&
                 other->shape().Compatible(inst->operand(0)->shape())) {
               llvm::cantFail(inst->ReplaceOperandWith(0, other));
               return true;
             }
           return false;
         });
       }},
      {"callee",
       [](HloModule &module, size_t pick) {
         std::vector<HloComputation *> comps(module.computations().begin(),
                                             module.computations().end());
         return MutateFirstFrom(module, pick, [&](HloInstruction *inst, Instructions) {
           for (const HloInstruction::Attribute &attr : inst->attributes()) {
             if (attr.kind != HloInstruction::AttributeKind::kComputation)
               continue;
             HloComputation *to = comps[pick % comps.size()];
             if (to == attr.computations.front())
               to = comps[(pick + 1) % comps.size()];
             inst->SetCalledComputation(attr.name.ref(), to);
             return true;
           }
           return false;
         });
       }},
      {"duplicate name",
       [](HloModule &module, size_t pick) {
         std::vector<HloInstruction *> all = AllInstructions(module);
         if (all.size() < 2)
           return false;
         HloInstruction *inst = all[pick % all.size()];
         HloInstruction *other = all[(pick * 7 + 1) % all.size()];
         if (inst == other)
           other = all[(pick + 1) % all.size()];
         inst->SetName(other->name());
         return true;
       }},
      {"parameter number",
       [](HloModule &module, size_t pick) {
         return MutateFirstFrom(module, pick, [&](HloInstruction *inst, Instructions) {
           if (inst->opcode() != HloOpcode::kParameter)
             return false;
           inst->set_parameter_number(inst->parameter_number() + 1 + pick % 2);
           return true;
         });
       }},
      {"root",
       [](HloModule &module, size_t pick) {
         std::vector<HloComputation *> comps(module.computations().begin(),
                                             module.computations().end());
         HloComputation *comp = comps[pick % comps.size()];
         HloComputation *other = comps[(pick + 1) % comps.size()];
         comp->set_root_instruction(pick % 2 || other == comp ? nullptr
                                                             : other->root_instruction());
         return true;
       }},
  };
}

TEST(HloVerifierThreads, MutationsOfValidModules) {
  std::vector<const Module *> valid;
  for (const std::vector<Module> *set : {&RepositoryModules(), &CorpusModules()})
    for (const Module &m : *set)
      if (Verify(*Parse(m.text), 1) == "ok")
        valid.push_back(&m);
  ASSERT_GT(valid.size(), 20u);
  size_t mutated = 0, refused = 0;
  for (const Mutation &mutation : Mutations()) {
    for (size_t v = 0; v < valid.size(); ++v) {
      // Two sites per module and mutation, spread over the module.
      for (size_t site = 0; site < 2; ++site) {
        std::unique_ptr<HloModule> module = Parse(valid[v]->text);
        size_t pick = site * 7919 + v * 104729;
        if (!mutation.apply(*module, pick % (1 + module->instruction_count())))
          continue;
        ++mutated;
        std::string report =
            ExpectSameAtThreads(*module, valid[v]->path + ": " + mutation.name + " at site " +
                                             std::to_string(site));
        refused += report != "ok";
      }
    }
  }
  // The mutations must mostly be seen, or the comparison shows little.
  RecordProperty("mutated", static_cast<int>(mutated));
  RecordProperty("refused", static_cast<int>(refused));
  EXPECT_GT(mutated, 500u);
  EXPECT_GT(refused, mutated / 2);
}


/// One computation of `length` negates in a chain with problems spread over
/// its whole text, so that pieces of any size split them: a parameter every
/// 7th instruction numbered so that some numbers repeat and some are out of
/// range, a wrong result shape every 5th, a name used before every 11th,
/// and, when `cycle`, the first negate reading the last of its shape (a
/// cycle through every piece).
std::unique_ptr<HloModule> LongComputation(int length, bool cycle, bool dangling_callee) {
  auto module = std::make_unique<HloModule>("long");
  auto comp = std::make_unique<HloComputation>("main");
  HloComputation *raw = comp.get();
  HloInstruction *last = Param(raw, F32({2}), "p0", 0);
  HloInstruction *first_negate = nullptr, *last_of_first_shape = nullptr;
  int params = 1;
  for (int i = 0; i < length; ++i) {
    if (i % 7 == 3) {
      Param(raw, F32({2}), "p" + std::to_string(i), i % 3 ? params : params + 40);
      ++params;
      continue;
    }
    std::string name = i % 11 == 10 ? "n." + std::to_string(i - 3) : "n." + std::to_string(i);
    last = Unary(raw, HloOpcode::kNegate, last, i % 5 == 4 ? F32({3}) : F32({2}), name);
    if (!first_negate)
      first_negate = last;
    if (i % 5 != 4)
      last_of_first_shape = last;
    if (dangling_callee && i == length - 4) {
      static HloComputation outside("outside");
      last->SetCalledComputation("to_apply", &outside);
    }
  }
  if (cycle)
    llvm::cantFail(first_negate->ReplaceOperandWith(0, last_of_first_shape));
  raw->set_root_instruction(last);
  module->set_entry_computation(module->AddComputation(std::move(comp)));
  return module;
}

TEST(HloVerifierThreads, OneComputationCutAtEveryInstruction) {
  for (bool cycle : {false, true}) {
    for (bool dangling : {false, true}) {
      for (int length : {1, 3, 8, 30, 400}) {
        std::unique_ptr<HloModule> module = LongComputation(length, cycle, dangling);
        std::string what = std::to_string(length) + " instructions" + (cycle ? ", a cycle" : "") +
                           (dangling ? ", a dangling callee" : "");
        std::string report = ExpectSameAtThreads(*module, what, {2, 3, 8});
        for (size_t piece = 3; piece <= 64; piece += 7)
          EXPECT_EQ(report, VerifyInPieces(*module, 2, piece)) << what << ", pieces of " << piece;
        if (length == 400) {
          // More problems than the report shows (but for the shape rules'
          // after a dangling callee), the cycle among them.
          EXPECT_EQ(!dangling, report.find("\n... and ") != std::string::npos) << report;
          EXPECT_EQ(cycle, report.find("is part of a cycle") != std::string::npos) << report;
        }
      }
    }
  }
}

TEST(HloVerifierThreads, PiecesWithRemovedInstructions) {
  // Removed instructions leave empty text-order slots; a piece with some
  // lists its instructions for the name rule, one without reads them from
  // its slots. Names used twice on both sides of the empty slots.
  std::string text = "HloModule m\n\nENTRY main {\n  p = f32[4]{0} parameter(0)\n";
  std::string last = "p";
  for (int i = 0; i < 60; ++i) {
    std::string n = "n" + std::to_string(i);
    text += "  " + n + " = f32[4]{0} negate(" + last + ")\n";
    text += "  d" + std::to_string(i) + " = f32[4]{0} exponential(" + n + ")\n";
    last = n;
  }
  text += "  ROOT r = f32[4]{0} copy(" + last + ")\n}\n";
  std::unique_ptr<HloModule> module = Parse(text);
  for (int i = 10; i < 30; ++i)
    ASSERT_FALSE(static_cast<bool>(
        module->entry_computation()->RemoveInstruction(testutil::Find(*module, "d" + std::to_string(i)))));
  for (auto [dead, name] : {std::pair{8, 40}, {43, 5}, {58, 55}, {3, 50}})
    testutil::Find(*module, "d" + std::to_string(dead))->SetName("n" + std::to_string(name));
  std::string report = ExpectSameAtThreads(*module, "removed", {2, 3});
  for (size_t piece : {3, 8, 13, 21, 64})
    EXPECT_EQ(report, VerifyInPieces(*module, 2, piece)) << "pieces of " << piece;
  EXPECT_NE(report.find("'n55': name used by two instructions"), std::string::npos) << report;
}

/// The bench's one computation (bench/HloUnrolledGenerator.h), large
/// enough that VerifyHloModule on two threads cuts it into pieces of
/// kPieceSlots itself.
std::string UnrolledText() {
  static const std::string text =
      bench::GenerateUnrolledHloModule(3 * static_cast<int64_t>(hlo_verifier::kPieceSlots), 1);
  return text;
}

TEST(HloVerifierThreads, LargeComputationInPiecesOfTheDefaultSize) {
  RegisterAllHloPasses();
  std::unique_ptr<HloModule> module = Parse(UnrolledText());
  ASSERT_GT(module->entry_computation()->slot_count(), 2 * hlo_verifier::kPieceSlots);
  EXPECT_EQ(ExpectSameAtThreads(*module, "unrolled", {2, 4}), "ok");
  HloPassPipeline pipeline("threads-test");
  pipeline.AddPass(llvm::cantFail(CreateHloPass("neuron_looped_einsum_replacer")));
  pipeline.AddPass(llvm::cantFail(CreateHloPass("neuron_looped_einsum_token_replacer")));
  ASSERT_TRUE(llvm::cantFail(pipeline.Run(*module)));
  EXPECT_EQ(ExpectSameAtThreads(*module, "unrolled after the passes", {2, 4}), "ok");
}

TEST(HloVerifierThreads, MutationsOfALargeComputation) {
  // Each mutation at sites spread over the computation, so that the
  // problem falls in different pieces of the default size.
  size_t refused = 0, mutated = 0;
  for (const Mutation &mutation : Mutations()) {
    for (size_t site = 0; site < 3; ++site) {
      std::unique_ptr<HloModule> module = Parse(UnrolledText());
      size_t pick = (site * 2 + 1) * static_cast<size_t>(module->instruction_count()) / 7;
      if (!mutation.apply(*module, pick))
        continue;
      ++mutated;
      std::string what = std::string("unrolled: ") + mutation.name + " at " + std::to_string(pick);
      std::string one = Verify(*module, 1);
      EXPECT_EQ(one, Verify(*module, 2)) << what;
      EXPECT_EQ(one, VerifyInPieces(*module, 3, 1000)) << what;
      refused += one != "ok";
    }
  }
  EXPECT_GT(mutated, 20u);
  EXPECT_GT(refused, mutated / 2);
}

} // namespace
