// Unit tests of the printer's piece-wise path (HloModule::Print with
// threads, docs/performance.md "Threads"): whatever the thread count, the
// piece size and the window, the bytes equal those of the module printed
// in one walk, and ToString()'s. Pieces of one instruction put a boundary
// at every line, so small modules exercise every way a piece can start and
// end: inside a computation, between computations, at the first and the
// last one, and where the module's order stops being its post order.
#include "HloTestUtil.h"

#include "../../bench/HloModuleGenerator.h"
#include "../../lib/hlo/ir/HloPrinterPieces.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/Passes.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

using testutil::HloFilesUnder;
using testutil::Parse;
using testutil::ReadFile;
using testutil::SourceRoot;

std::string PrintInPieces(const HloModule &module, unsigned threads, size_t piece, size_t window) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printer::PieceOptions options;
  options.threads = threads;
  options.piece_instructions = piece;
  options.window = window;
  printer::PrintModuleInPieces(module, os, options);
  os.flush();
  return text;
}

std::string PrintWithThreads(const HloModule &module, unsigned threads) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.Print(os, threads);
  os.flush();
  return text;
}

/// The module printed in one walk, as small modules are.
std::string PrintWhole(const HloModule &module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printer::PrintModuleWhole(module, os);
  os.flush();
  return text;
}

/// `actual` == `expected`; on a difference, the first differing line
/// rather than the whole text (modules run to megabytes).
void ExpectSameText(const std::string &actual, const std::string &expected,
                    const std::string &what) {
  if (actual == expected)
    return;
  size_t at = std::mismatch(actual.begin(), actual.begin() + std::min(actual.size(), expected.size()),
                            expected.begin())
                  .first -
              actual.begin();
  size_t line_start = expected.rfind('\n', at ? at - 1 : 0);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  ADD_FAILURE() << what << ": the texts (" << actual.size() << " and " << expected.size()
                << " bytes) differ at byte " << at << "\n  expected: "
                << llvm::StringRef(expected).substr(line_start, at - line_start + 80).str()
                << "\n  actual:   "
                << llvm::StringRef(actual).substr(line_start, at - line_start + 80).str();
}

/// ToString(), Print(os, t) for t in 1, 2, 4 and the piece-wise path with
/// pieces of 1, 2, 7 and 64 instructions (one of them with a window of one
/// piece) all give the bytes of the module printed whole. Returns them.
std::string ExpectSameBytesEverywhere(const HloModule &module, const std::string &what) {
  std::string expected = PrintWhole(module);
  ExpectSameText(module.ToString(), expected, what + ", ToString()");
  for (unsigned threads : {1u, 2u, 4u}) {
    std::string with = what + ", threads " + std::to_string(threads);
    ExpectSameText(PrintWithThreads(module, threads), expected, with);
    for (size_t piece : {1, 2, 7, 64})
      ExpectSameText(PrintInPieces(module, threads, piece, /*window=*/0), expected,
                     with + ", pieces of " + std::to_string(piece));
    ExpectSameText(PrintInPieces(module, threads, 3, /*window=*/1), expected,
                   with + ", window 1");
  }
  return expected;
}

/// Checks every file of `files` that parses; returns how many parsed.
int CheckFiles(const std::vector<std::string> &files) {
  int parsed = 0;
  for (const std::string &file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer)
      continue;
    auto module = ParseHloModule((*buffer)->getBuffer(), file);
    if (!module) {
      llvm::consumeError(module.takeError());
      continue;
    }
    ++parsed;
    ExpectSameBytesEverywhere(**module, file);
  }
  return parsed;
}

TEST(HloPrinterThreads, SharedCorpus) {
  std::string dir = SourceRoot() + "/../shared/corpus/hlo";
  if (!llvm::sys::fs::is_directory(dir))
    GTEST_SKIP() << "no corpus at " << dir;
  std::vector<std::string> files = HloFilesUnder(dir);
  EXPECT_GT(CheckFiles(files), 100) << "of " << files.size() << " files under " << dir;
}

TEST(HloPrinterThreads, ExamplesAndLitInputs) {
  std::vector<std::string> files = HloFilesUnder(SourceRoot() + "/examples/hlo");
  std::vector<std::string> lit = HloFilesUnder(SourceRoot() + "/test/hlo");
  files.insert(files.end(), lit.begin(), lit.end());
  ASSERT_FALSE(files.empty()) << "no .hlo under " << SourceRoot();
  EXPECT_GT(CheckFiles(files), 20) << "of " << files.size() << " files";
}

TEST(HloPrinterThreads, EmptyComputationsAndStackFrames) {
  // A header with a stack frame index, a trailer after a computation, and a
  // computation without instructions last.
  auto m = Parse(R"(HloModule m, is_scheduled=true

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}, execution_thread="host"

ENTRY main {
  p = f32[8]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
)");
  ASSERT_TRUE(m);
  m->AddEmbeddedComputation(std::make_unique<HloComputation>("empty"));
  std::string text = ExpectSameBytesEverywhere(*m, "stack frames");
  EXPECT_NE(text.find("StackFrames"), std::string::npos) << text;
  EXPECT_NE(text.find("%empty () -> () {\n}"), std::string::npos) << text;
  EXPECT_NE(text.find("}, execution_thread=\"host\"\n"), std::string::npos) << text;
}

/// A small copy of the benchmarks' dump-style module.
std::unique_ptr<HloModule> GeneratedModule(int64_t instructions) {
  bench::HloGeneratorOptions options;
  options.instructions = instructions;
  auto module = ParseHloModule(bench::GenerateDumpStyleHloModule(options), "generated");
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

TEST(HloPrinterThreads, AfterBothPasses) {
  RegisterAllHloPasses();
  // Above the size at which Print(os, threads) and ToString() themselves
  // cut the module.
  auto module = GeneratedModule(10000);
  ASSERT_TRUE(module);
  ASSERT_GE(static_cast<size_t>(module->instruction_count()), printer::kMinInstructionsInPieces);
  ASSERT_TRUE(module);
  std::string before = module->ToString();
  HloPassPipeline pipeline("test");
  for (const char *name : {"neuron_looped_einsum_replacer", "neuron_looped_einsum_token_replacer"}) {
    auto pass = CreateHloPass(name);
    ASSERT_TRUE(static_cast<bool>(pass)) << llvm::toString(pass.takeError());
    pipeline.AddPass(std::move(*pass));
  }
  llvm::Expected<bool> changed = pipeline.Run(*module);
  ASSERT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  ASSERT_TRUE(*changed);
  std::string after = ExpectSameBytesEverywhere(*module, "after the passes");
  EXPECT_NE(after, before);
  // The sizes hlo-opt uses, on more than one piece.
  for (size_t piece : {100, 2048})
    ExpectSameText(PrintInPieces(*module, 2, piece, 0), after,
                   "pieces of " + std::to_string(piece));
}

TEST(HloPrinterThreads, RemovedInstructionsInPieces) {
  // A chain with a dead instruction after every link; removing them leaves
  // null text-order slots at every other position, which the pieces of a
  // computation in text order (ranges of slots) skip.
  std::string text = "HloModule m\n\nENTRY main {\n  p = f32[4]{0} parameter(0)\n";
  std::string last = "p";
  for (int i = 0; i < 40; ++i) {
    std::string n = "n" + std::to_string(i);
    text += "  " + n + " = f32[4]{0} negate(" + last + ")\n";
    text += "  d" + std::to_string(i) + " = f32[4]{0} exponential(" + n + ")\n";
    last = n;
  }
  text += "  ROOT r = f32[4]{0} copy(" + last + ")\n}\n";
  auto m = Parse(text);
  ASSERT_TRUE(m);
  for (int i = 0; i < 40; i += 1 + i % 2) {
    HloInstruction *dead = testutil::Find(*m, "d" + std::to_string(i));
    ASSERT_TRUE(dead);
    ASSERT_FALSE(static_cast<bool>(m->entry_computation()->RemoveInstruction(dead)));
  }
  ASSERT_GT(m->entry_computation()->slot_count(),
            static_cast<size_t>(m->entry_computation()->instruction_count()));
  std::string printed = ExpectSameBytesEverywhere(*m, "removed");
  EXPECT_EQ(printed.find("%d0 = "), std::string::npos) << printed;
  EXPECT_NE(printed.find("%d2 = "), std::string::npos) << printed;
}

TEST(HloPrinterThreads, TextOrderNotAPostOrder) {
  auto m = Parse(R"(HloModule m

ENTRY main {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(p)
  b = f32[4]{0} exponential(a)
  ROOT c = f32[4]{0} add(a, b)
}
)");
  ASSERT_TRUE(m);
  HloComputation *entry = m->entry_computation();
  HloInstruction *p = testutil::Find(*m, "p");
  HloInstruction *a = testutil::Find(*m, "a");
  HloInstruction *b = testutil::Find(*m, "b");
  ASSERT_TRUE(p && a && b);
  // `late` comes last in text order but feeds `a`, and `b` gains a control
  // predecessor after it: the printer must reorder both.
  HloInstruction *late = entry->AddInstruction(
      HloInstruction::Create(HloOpcode::kAbs, p->shape(), {p}, "late"));
  ASSERT_FALSE(static_cast<bool>(a->ReplaceOperandWith(0, late)));
  HloInstruction *later = entry->AddInstruction(
      HloInstruction::Create(HloOpcode::kCopy, p->shape(), {p}, "later"));
  later->AddControlDependencyTo(b);
  std::string text = ExpectSameBytesEverywhere(*m, "reordered");
  size_t at_late = text.find("%late = "), at_a = text.find("%a = ");
  size_t at_later = text.find("%later = "), at_b = text.find("%b = ");
  ASSERT_NE(at_late, std::string::npos);
  ASSERT_NE(at_later, std::string::npos);
  EXPECT_LT(at_late, at_a) << text;
  EXPECT_LT(at_later, at_b) << text;
  EXPECT_NE(text.find("control-predecessors={%later}"), std::string::npos) << text;
}

TEST(HloPrinterThreads, CalleesDefinedAfterTheirCallers) {
  // The module's order is not its post order from `main` on: `main` calls
  // `b`, defined later, which calls `c`, defined after it. The pieces print
  // `a` in the module's order and the rest in the post order. With pieces
  // of one or two lines `main` is cut into pieces of its own, whose calls
  // are checked before any is printed.
  auto m = Parse(R"(HloModule m

a {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}

ENTRY main {
  p = f32[] parameter(0)
  q = f32[] call(p), to_apply=a
  r = f32[] call(q), to_apply=b
  ROOT s = f32[] add(q, r)
}

b {
  y = f32[] parameter(0)
  ROOT z = f32[] call(y), to_apply=c
}

c {
  u = f32[] parameter(0)
  ROOT v = f32[] exponential(u)
}

d {
  w = f32[] parameter(0)
  ROOT t = f32[] abs(w)
}
)");
  ASSERT_TRUE(m);
  std::string text = ExpectSameBytesEverywhere(*m, "callees after callers");
  std::vector<size_t> at;
  for (const char *name : {"%a (", "%c (", "%b (", "ENTRY %main (", "%d ("})
    at.push_back(text.find(name));
  for (size_t k = 0; k < at.size(); ++k)
    ASSERT_NE(at[k], std::string::npos) << k << "\n" << text;
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << text;
}

TEST(HloPrinterThreads, CalleeOutsideTheModule) {
  // A module a pass left broken: a call to a computation that was never
  // added. Both walks print the callee where the module's post order puts
  // it, and its own callee before it.
  auto m = Parse(R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  p = f32[] parameter(0)
  q = f32[] call(p), to_apply=add
  ROOT r = f32[] call(q), to_apply=add
}
)");
  ASSERT_TRUE(m);
  auto stray_module = Parse(R"(HloModule stray

one {
  a = f32[] parameter(0)
  ROOT b = f32[] negate(a)
}

ENTRY stray {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=one
}
)");
  ASSERT_TRUE(stray_module);
  HloInstruction *r = testutil::Find(*m, "r");
  ASSERT_TRUE(r);
  r->SetCalledComputation("to_apply", stray_module->entry_computation());
  std::string text = ExpectSameBytesEverywhere(*m, "outside callee");
  size_t at_one = text.find("%one ("), at_stray = text.find("%stray ("),
         at_main = text.find("ENTRY %main");
  ASSERT_NE(at_one, std::string::npos) << text;
  EXPECT_LT(at_one, at_stray) << text;
  EXPECT_LT(at_stray, at_main) << text;
}

} // namespace
