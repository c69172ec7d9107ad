//===- HloProtoTest.cpp - HloModuleProto reading and writing --------------===//
//
// For every module of examples/hlo, test/hlo and the shared corpus (skipped
// when absent): text -> proto -> text equals text -> text, proto -> proto is
// byte-identical, and the interpreter gives bit-identical results from
// either (a bounded sample; LOOM_HLO_PROTO_FULL=1 runs every module, within
// 1 GiB of live values and 2^30 elements of work per run). The attributes the XLA fields carry must round-trip
// through those fields, not loom's verbatim fallback (docs/hlo-proto.md).
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/proto/HloModuleLoader.h"
#include "loom/hlo/proto/HloProto.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

std::string TreeRoot() {
  llvm::SmallString<256> root(__FILE__);
  for (int i = 0; i < 3; ++i)
    llvm::sys::path::remove_filename(root);
  return std::string(root);
}

std::vector<std::string> HloFiles(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(".hlo") &&
        it->path().find("/hlo-invalid/") == std::string::npos)
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

// The attributes the XLA fields carry (docs/hlo-proto.md, the table).
const llvm::StringSet<> &MappedAttributes() {
  static const llvm::StringSet<> names = {
      "dimensions", "iota_dimension", "index", "direction", "type", "epsilon",
      "feature_index", "custom_call_target", "backend_config", "api_version",
      "custom_call_has_side_effect", "channel_id", "replica_groups",
      "use_global_device_ids", "source_target_pairs", "slice", "dynamic_slice_sizes",
      "padding", "window", "dim_labels", "feature_group_count", "batch_group_count",
      "lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims",
      "operand_precision", "offset_dims", "collapsed_slice_dims", "start_index_map",
      "operand_batching_dims", "start_indices_batching_dims", "index_vector_dim",
      "slice_sizes", "indices_are_sorted", "unique_indices", "update_window_dims",
      "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "exponent_bits", "mantissa_bits", "distribution",
      "is_stable", "fft_type", "fft_length", "infeed_config", "outfeed_config",
      "is_host_transfer", "parameter_replication", "kind", "sharding",
      "frontend_attributes", "metadata"};
  return names;
}

struct Totals {
  int modules = 0, instructions = 0, attribute_lists = 0, verbatim_literals = 0,
      verbatim_layouts = 0, verbatim_headers = 0;
  std::map<std::string, int> verbatim;
};

// The round-trip contract for one text module; returns the module read
// back from the proto (null when the text does not parse).
std::unique_ptr<HloModule> CheckRoundTrip(const std::string &path, Totals &totals) {
  std::string text = ReadFile(path);
  llvm::Expected<std::unique_ptr<HloModule>> module = ParseHloModule(text, path);
  if (!module) {
    llvm::consumeError(module.takeError());
    return nullptr;
  }
  std::string canonical = (*module)->ToString();
  HloProtoWriteStats stats;
  std::string bytes = SerializeHloModuleProto(**module, &stats);
  EXPECT_FALSE(LooksLikeHloText(bytes)) << path;
  EXPECT_TRUE(LooksLikeHloProto("x", bytes)) << path;
  HloProtoReadInfo info;
  llvm::Expected<std::unique_ptr<HloModule>> back = ParseHloModuleProto(bytes, path, &info);
  if (!back) {
    ADD_FAILURE() << path << ": " << llvm::toString(back.takeError());
    return nullptr;
  }
  EXPECT_EQ(info.kind, HloProtoKind::kModule);
  EXPECT_EQ((*back)->ToString(), canonical) << path << ": text -> proto -> text";
  EXPECT_EQ(SerializeHloModuleProto(**back), bytes) << path << ": proto -> proto";
  ++totals.modules;
  totals.instructions += stats.instructions;
  totals.attribute_lists += stats.attribute_lists;
  totals.verbatim_literals += stats.verbatim_literals;
  totals.verbatim_layouts += stats.verbatim_layouts;
  totals.verbatim_headers += stats.verbatim_header;
  for (const std::string &name : stats.verbatim_attribute_names)
    ++totals.verbatim[name];
  return std::move(*back);
}

void Report(const char *what, const Totals &t) {
  std::string verbatim;
  for (const auto &[name, count] : t.verbatim)
    verbatim += " " + name + "=" + std::to_string(count);
  std::printf("%s: %d modules, %d instructions; loom attribute lists %d, verbatim literals %d, "
              "verbatim layouts %d, verbatim headers %d; verbatim attributes:%s\n",
              what, t.modules, t.instructions, t.attribute_lists, t.verbatim_literals,
              t.verbatim_layouts, t.verbatim_headers, verbatim.c_str());
}

// Both modules on the same random inputs: the same results bit for bit, or
// the same error.
void CheckSameRun(const std::string &path, const HloModule &text_module,
                  const HloModule &proto_module, const EvalOptions &limits) {
  auto args = MakeRandomArguments(text_module, 0, limits);
  if (!args) {
    llvm::consumeError(args.takeError());
    return;
  }
  auto args2 = MakeRandomArguments(proto_module, 0, limits);
  ASSERT_TRUE(static_cast<bool>(args2)) << path << ": " << llvm::toString(args2.takeError());
  auto a = RunSpmd(text_module, *args, limits, nullptr);
  auto b = RunSpmd(proto_module, *args2, limits, nullptr);
  if (!a || !b) {
    std::string ea = a ? "ok" : llvm::toString(a.takeError());
    std::string eb = b ? "ok" : llvm::toString(b.takeError());
    EXPECT_EQ(ea, eb) << path;
    return;
  }
  ASSERT_EQ(a->size(), b->size()) << path;
  for (size_t d = 0; d < a->size(); ++d)
    EXPECT_TRUE((*a)[d] == (*b)[d]) << path << ": device " << d;
}

void CheckDirectory(const std::string &dir, const char *what, bool run_all) {
  std::vector<std::string> files = HloFiles(dir);
  if (files.empty())
    GTEST_SKIP() << dir << " is absent";
  bool full = std::getenv("LOOM_HLO_PROTO_FULL") != nullptr;
  EvalOptions limits;
  // On demand every module, within 1 GiB of live values and 2^30 elements of
  // work per run; in CI a sample with small runs only.
  limits.max_live_bytes = int64_t(1) << 30;
  limits.max_work = int64_t(1) << 30;
  if (!full) {
    limits.max_steps = int64_t(1) << 16;
    limits.max_work = int64_t(1) << 22;
    limits.max_live_bytes = int64_t(1) << 26;
    limits.max_elements_per_value = int64_t(1) << 20;
  }
  Totals totals;
  int runs = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    std::unique_ptr<HloModule> back = CheckRoundTrip(files[i], totals);
    if (!back || !(full || run_all || i % 4 == 0))
      continue;
    auto text_module = ParseHloModule(ReadFile(files[i]), files[i]);
    ASSERT_TRUE(static_cast<bool>(text_module));
    CheckSameRun(files[i], **text_module, *back, limits);
    ++runs;
  }
  Report(what, totals);
  std::printf("%s: %d modules run from both files\n", what, runs);
  for (const auto &[name, count] : totals.verbatim)
    if (MappedAttributes().contains(name))
      std::printf("%s: mapped attribute '%s' kept verbatim %d times\n", what, name.c_str(),
                  count);
}

TEST(HloProto, Examples) { CheckDirectory(TreeRoot() + "/examples/hlo", "examples", true); }
TEST(HloProto, LitInputs) { CheckDirectory(TreeRoot() + "/test/hlo", "test/hlo", false); }
TEST(HloProto, SharedCorpus) {
  CheckDirectory(TreeRoot() + "/../shared/corpus/hlo", "corpus", false);
}

} // namespace

namespace {

TEST(HloProto, TellsTextFromProto) {
  EXPECT_TRUE(LooksLikeHloText("HloModule m\n"));
  EXPECT_TRUE(LooksLikeHloText("\n  // a dump\n/* of */ HloModule m"));
  EXPECT_FALSE(LooksLikeHloText("\nfoo"));
  // Text wins over the suffix; the suffix wins over odd bytes.
  EXPECT_FALSE(LooksLikeHloProto("m.pb", "HloModule m\n"));
  EXPECT_TRUE(LooksLikeHloProto("m.pb", "garbage"));
  // Without the suffix: a proto's first tag and a control character.
  EXPECT_TRUE(LooksLikeHloProto("m.bin", llvm::StringRef("\x0a\x01m\x1a\x00", 5)));
  EXPECT_FALSE(LooksLikeHloProto("m.hlo", "\nfoo = bar\n"));
  EXPECT_FALSE(LooksLikeHloProto("m.hlo", ""));
}

TEST(HloProto, KeepsIdsAndGivesNewInstructionsFreshOnes) {
  const char *text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
})";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(static_cast<bool>(module));
  HloComputation *entry = (*module)->entry_computation();
  entry->root_instruction()->set_unique_id(40);
  entry->parameter_instruction(0)->set_unique_id(7);
  entry->set_unique_id(5);
  std::string bytes = SerializeHloModuleProto(**module);
  auto back = ParseHloModuleProto(bytes);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  HloComputation *e = (*back)->entry_computation();
  EXPECT_EQ(e->unique_id(), 5);
  EXPECT_EQ(e->root_instruction()->unique_id(), 40);
  EXPECT_EQ(e->parameter_instruction(0)->unique_id(), 7);
  // An instruction a pass adds has no id; it gets one after the largest.
  HloInstruction *root = e->root_instruction();
  HloInstruction *added = e->AddInstruction(
      HloInstruction::Create(HloOpcode::kAbs, root->shape(), {root}, "a"));
  e->set_root_instruction(added);
  auto again = ParseHloModuleProto(SerializeHloModuleProto(**back));
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ((*again)->entry_computation()->root_instruction()->unique_id(), 41);
  EXPECT_EQ((*again)->entry_computation()->GetInstructionWithName("n")->unique_id(), 40);
}

TEST(HloProto, LoadHloModuleReadsBothForms) {
  const char *text = "HloModule m, replica_count=2\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n";
  auto module = ParseHloModule(text);
  ASSERT_TRUE(static_cast<bool>(module));
  std::string bytes = SerializeHloModuleProto(**module);
  auto from_proto = LoadHloModule(llvm::MemoryBuffer::getMemBufferCopy(bytes), "m.bin");
  ASSERT_TRUE(static_cast<bool>(from_proto)) << llvm::toString(from_proto.takeError());
  auto from_text = LoadHloModule(llvm::MemoryBuffer::getMemBufferCopy(text), "m.pb");
  ASSERT_TRUE(static_cast<bool>(from_text)) << llvm::toString(from_text.takeError());
  EXPECT_EQ((*from_proto)->ToString(), (*from_text)->ToString());
  EXPECT_EQ((*from_proto)->replica_count(), 2);
}

} // namespace
