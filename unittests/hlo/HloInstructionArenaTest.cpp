// HloInstructionArena (include/loom/hlo/ir/HloInstructionArena.h): the
// parser's instructions come from the module's slabs and the passes' from
// the heap; instructions of both kinds are destroyed and removed as before,
// a parsed piece's slabs move with its computations, and scopes nest. In an
// AddressSanitizer build every instruction is a heap block, and these tests
// then check that nothing is carved from slabs (and ASan checks the frees).
#include "HloTestUtil.h"

#include "loom/hlo/ir/HloInstructionArena.h"
#include "loom/hlo/parser/HloParser.h"

#include <gtest/gtest.h>

namespace loom::hlo {
namespace {

constexpr const char *kModule = R"(HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0)
  %n = f32[4]{0} negate(f32[4]{0} %p)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[4]{0} %n, f32[] %z), dimensions={0}, to_apply=%add
}
)";

TEST(HloInstructionArenaTest, ParsedInstructionsLiveInTheModulesSlabs) {
  std::unique_ptr<HloModule> module = testutil::Parse(kModule);
  ASSERT_TRUE(module);
  size_t slabs = module->instruction_arena().slab_bytes();
  if (HloInstructionArena::Enabled()) {
    EXPECT_GT(slabs, 0u);
  } else {
    EXPECT_EQ(slabs, 0u);
  }
  // An instruction a pass adds comes from the heap: the slabs do not grow.
  HloComputation *entry = module->entry_computation();
  HloInstruction *n = testutil::Find(*module, "n");
  ASSERT_TRUE(n);
  HloInstruction *abs = entry->AddInstruction(
      HloInstruction::Create(HloOpcode::kAbs, n->shape(), {n}));
  EXPECT_EQ(module->instruction_arena().slab_bytes(), slabs);
  // Parsed and added instructions are destroyed alike.
  ASSERT_FALSE(entry->RemoveInstruction(abs));
  EXPECT_TRUE(module->ToString().find("abs(") == std::string::npos);
  module.reset();
}

TEST(HloInstructionArenaTest, ScopesNestAndANullArenaMeansTheHeap) {
  HloInstructionArena outer, inner;
  Shape scalar = ParseShape("f32[]").get();
  std::vector<std::unique_ptr<HloInstruction>> made;
  {
    HloInstructionArenaScope a(&outer);
    made.push_back(HloInstruction::Create(HloOpcode::kConstant, scalar, {}));
    {
      HloInstructionArenaScope b(&inner);
      made.push_back(HloInstruction::Create(HloOpcode::kConstant, scalar, {}));
      {
        HloInstructionArenaScope heap(nullptr);
        made.push_back(HloInstruction::Create(HloOpcode::kConstant, scalar, {}));
      }
    }
    made.push_back(HloInstruction::Create(HloOpcode::kConstant, scalar, {}));
  }
  made.push_back(HloInstruction::Create(HloOpcode::kConstant, scalar, {}));
  bool on = HloInstructionArena::Enabled();
  EXPECT_EQ(outer.slab_bytes() > 0, on);
  EXPECT_EQ(inner.slab_bytes() > 0, on);
  // Two instructions fit in the first slab of `outer`, one in `inner`.
  if (on) {
    EXPECT_EQ(outer.slab_bytes(), inner.slab_bytes());
  }
  // Every instruction is 8-aligned and destroyed before its arena.
  for (const auto &inst : made)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(inst.get()) % alignof(HloInstruction), 0u);
  made.clear();
}

TEST(HloInstructionArenaTest, AbsorbedSlabsKeepTheirInstructions) {
  HloInstructionArena piece, module;
  Shape scalar = ParseShape("f32[]").get();
  std::unique_ptr<HloInstruction> inst;
  {
    HloInstructionArenaScope scope(&piece);
    inst = HloInstruction::Create(HloOpcode::kConstant, scalar, {});
    inst->set_literal_text(HloText("42"));
  }
  size_t bytes = piece.slab_bytes();
  module.Absorb(piece);
  EXPECT_EQ(piece.slab_bytes(), 0u);
  EXPECT_EQ(module.slab_bytes(), bytes);
  EXPECT_EQ(inst->literal_text(), "42");
  inst.reset();
}

TEST(HloInstructionArenaTest, AThreadedParseKeepsEveryPiecesInstructions) {
  // Many small computations, parsed in one-byte pieces on three threads,
  // then edited and printed after the piece modules are gone.
  std::string text = "HloModule many\n\n";
  for (int i = 0; i < 40; ++i)
    text += "%c" + std::to_string(i) + " (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
            "  ROOT %y = f32[] negate(f32[] %x)\n}\n\n";
  text += "ENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
          "  ROOT %q = f32[] call(f32[] %p), to_apply=%c0\n}\n";
  HloParseOptions options;
  options.threads = 3;
  options.min_chunk_bytes = 1;
  size_t joined = 0;
  options.pieces_joined = &joined;
  auto threaded = ParseHloModuleOwned(text, "many", options);
  ASSERT_TRUE(static_cast<bool>(threaded)) << llvm::toString(threaded.takeError());
  EXPECT_GT(joined, 1u);
  auto sequential = ParseHloModuleOwned(text, "many");
  ASSERT_TRUE(static_cast<bool>(sequential));
  EXPECT_EQ((*threaded)->ToString(), (*sequential)->ToString());
  if (HloInstructionArena::Enabled()) {
    EXPECT_GT((*threaded)->instruction_arena().slab_bytes(), 0u);
  }
}

} // namespace
} // namespace loom::hlo
