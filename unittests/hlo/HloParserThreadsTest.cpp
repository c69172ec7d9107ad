// The parser on several threads (HloParseOptions) gives the module or the
// error one thread gives, byte for byte: on every module of the examples,
// the lit inputs and the shared corpus (skipped when absent), on mutations
// of them that exercise the sequential fallback, and on modules built so
// that the state crossing pieces (instruction and computation names, the
// ENTRY mark, inferred shapes, inline computations) or a wrong guess of a
// piece boundary (inside a comment or a string) matters.
#include "HloTestUtil.h"

#include "loom/hlo/ir/HloNameTable.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

using testutil::HloFilesUnder;
using testutil::ReadFile;
using testutil::SourceRoot;

using testutil::Outcome;
using testutil::ParseWith;

Outcome Sequential(const std::string &text) { return ParseWith(text, 1, 1); }
/// Pieces of a byte or more: every computation start is a piece start.
Outcome Threaded(const std::string &text) { return ParseWith(text, 3, 1); }

void ExpectSameOutcome(const std::string &text, const std::string &what) {
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  EXPECT_EQ(one.ok, three.ok) << what;
  EXPECT_EQ(one.text, three.text) << what;
  Outcome two = ParseWith(text, 2, 256);
  EXPECT_EQ(one.text, two.text) << what;
}

/// The same text with one deterministic damage, chosen by `rng`.
std::string Mutate(const std::string &text, std::mt19937 &rng) {
  if (text.empty())
    return text;
  std::string out = text;
  size_t at = rng() % out.size();
  static const char kBytes[] = "{}()[]\"/*%\n,=: x0";
  switch (rng() % 6) {
  case 0:
    out.erase(at, 1);
    break;
  case 1:
    out.insert(at, 1, out[at]);
    break;
  case 2:
    out.insert(at, 1, kBytes[rng() % (sizeof(kBytes) - 1)]);
    break;
  default: {
    size_t begin = out.rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    size_t end = out.find('\n', at);
    end = end == std::string::npos ? out.size() : end + 1;
    std::string line = out.substr(begin, end - begin);
    if (rng() % 3 == 0) {
      out.erase(begin, end - begin);
    } else if (rng() % 2 == 0) {
      out.insert(begin, line);
    } else {
      // The line moved elsewhere: a computation start inside another one.
      out.erase(begin, end - begin);
      size_t to = out.find('\n', rng() % (out.size() + 1));
      out.insert(to == std::string::npos ? out.size() : to + 1, line);
    }
  }
  }
  return out;
}

void CheckDirectory(const std::string &dir, size_t mutations_per_file) {
  std::vector<std::string> files = HloFilesUnder(dir);
  if (files.empty())
    GTEST_SKIP() << "no .hlo files under " << dir;
  std::mt19937 rng(20261201);
  size_t joined = 0;
  for (const std::string &path : files) {
    std::string text = ReadFile(path);
    ExpectSameOutcome(text, path);
    joined += Threaded(text).pieces > 1;
    for (size_t i = 0; i < mutations_per_file; ++i) {
      std::string mutated = Mutate(text, rng);
      ExpectSameOutcome(mutated, path + " mutation " + std::to_string(i));
    }
  }
  // Modules of more than one computation go through the threaded path.
  EXPECT_GT(joined, 0u) << dir;
}

TEST(HloParserThreads, Examples) { CheckDirectory(SourceRoot() + "/examples/hlo", 40); }

TEST(HloParserThreads, LitInputs) { CheckDirectory(SourceRoot() + "/test/hlo", 6); }

TEST(HloParserThreads, SharedCorpus) {
  std::string dir = SourceRoot() + "/../shared/corpus/hlo";
  if (!llvm::sys::fs::is_directory(dir))
    GTEST_SKIP() << dir << " is absent";
  CheckDirectory(dir, 6);
}

/// `count` computations `c<i>` that each add their parameters, then an
/// ENTRY calling them all; instruction names repeat in every computation.
std::string ManyComputations(int count) {
  std::string text = "HloModule many\n\n";
  for (int i = 0; i < count; ++i) {
    std::string n = std::to_string(i);
    text += "%c" + n + " (p0: f32[2], p1: f32[2]) -> f32[2] {\n"
            "  %p0 = f32[2]{0} parameter(0)\n"
            "  %p1 = f32[2]{0} parameter(1)\n"
            "  ROOT %add = f32[2]{0} add(f32[2]{0} %p0, f32[2]{0} %p1)\n"
            "}\n\n";
  }
  text += "ENTRY %main (x: f32[2]) -> f32[2] {\n  %x = f32[2]{0} parameter(0)\n";
  std::string last = "x";
  for (int i = 0; i < count; ++i) {
    std::string n = std::to_string(i);
    text += "  %call." + n + " = f32[2]{0} call(f32[2]{0} %" + last +
            ", f32[2]{0} %x), to_apply=%c" + n + "\n";
    last = "call." + n;
  }
  text += "  ROOT %out = f32[2]{0} copy(f32[2]{0} %" + last + ")\n}\n";
  return text;
}

TEST(HloParserThreads, DuplicateInstructionNamesAcrossPieces) {
  std::string text = ManyComputations(12);
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_GT(three.pieces, 1u);
  EXPECT_EQ(one.text, three.text);
  // The first definition keeps its name; later ones are renamed in text order.
  EXPECT_NE(three.text.find("%p0.1 = f32[2]{0} parameter(0)"), std::string::npos);
  EXPECT_NE(three.text.find("%add.11 = "), std::string::npos);
  // Pieces at every computation and instruction: the names repeat only
  // across pieces, and each computation is in several.
  std::string two = ManyComputations(2);
  Outcome pieces = Threaded(two);
  EXPECT_EQ(pieces.pieces, 13u);
  EXPECT_EQ(pieces.text, Sequential(two).text);
  EXPECT_NE(pieces.text.find("%p0.1 = f32[2]{0} parameter(0)"), std::string::npos);
}

TEST(HloParserThreads, DuplicateComputationNameAcrossPieces) {
  std::string text = ManyComputations(6);
  size_t second = text.find("%c4 (");
  ASSERT_NE(second, std::string::npos);
  text.replace(second, 3, "%c1");
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_FALSE(one.ok);
  EXPECT_NE(one.text.find("duplicate computation name 'c1'"), std::string::npos) << one.text;
  EXPECT_EQ(one.text, three.text);
  EXPECT_EQ(three.pieces, 0u);
}

TEST(HloParserThreads, TwoEntryComputationsInDifferentPieces) {
  std::string text = ManyComputations(6);
  size_t c2 = text.find("%c2 (");
  text.insert(c2, "ENTRY ");
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_FALSE(one.ok);
  EXPECT_NE(one.text.find("is marked ENTRY but"), std::string::npos) << one.text;
  EXPECT_EQ(one.text, three.text);
}

TEST(HloParserThreads, CommentSpanningAGuessedBoundary) {
  std::string text = ManyComputations(6);
  size_t c3 = text.find("%c3 (");
  // The line after the comment opener looks like a computation start.
  text.insert(c3, "/* a disabled computation:\n%c3 (p0: f32[2]) -> f32[2] {\n  %p0 = "
                  "f32[2]{0} parameter(0)\n}\n*/\n");
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_EQ(one.text, three.text);
  EXPECT_EQ(three.pieces, 0u);
  // An unterminated comment is the same error either way.
  text.erase(text.find("*/\n"), 3);
  EXPECT_EQ(Sequential(text).text, Threaded(text).text);
}

TEST(HloParserThreads, StringSpanningAGuessedBoundary) {
  std::string text = ManyComputations(6);
  size_t add = text.find("add(", text.find("%c2 ("));
  size_t eol = text.find('\n', add);
  text.insert(eol, ", frontend_attributes={note=\"text\n%c9 (p0: f32[2]) -> f32[2] {\n\"}");
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_EQ(one.text, three.text);
  EXPECT_EQ(three.pieces, 0u);
}

TEST(HloParserThreads, ShapelessCallOfAnEarlierPiece) {
  std::string text = ManyComputations(6);
  // The call's shape is inferred from c0, two pieces earlier.
  size_t call = text.find("%call.5 = f32[2]{0} call(");
  ASSERT_NE(call, std::string::npos);
  text.erase(call + std::string("%call.5 = ").size(), std::string("f32[2]{0} ").size());
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_EQ(one.text, three.text);
}

TEST(HloParserThreads, ShapelessCallOfALaterComputation) {
  std::string text = ManyComputations(3);
  std::string main = text.substr(text.find("ENTRY"));
  text.erase(text.find("ENTRY"));
  size_t call = main.find("%call.1 = f32[2]{0} call(");
  main.erase(call + std::string("%call.1 = ").size(), std::string("f32[2]{0} ").size());
  text = "HloModule many\n\n" + main + "\n" + text.substr(text.find("%c0"));
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_FALSE(one.ok);
  EXPECT_NE(one.text.find("cannot infer the shape"), std::string::npos) << one.text;
  EXPECT_EQ(one.text, three.text);
}

TEST(HloParserThreads, InlineComputationsInSeveralPieces) {
  std::string text = "HloModule inline\n\n";
  for (int i = 0; i < 5; ++i) {
    std::string n = std::to_string(i);
    text += "%f" + n + " (a: f32[4]) -> f32[4] {\n"
            "  a = f32[4] parameter(0)\n"
            "  ROOT f = f32[4] fusion(a), kind=kLoop, calls={\n"
            "    p = f32[4] parameter(0)\n"
            "    ROOT n = f32[4] negate(p)\n"
            "  }\n"
            "}\n\n";
  }
  // A top-level computation whose name the first inline one would take.
  text += "%f.calls (q: f32[4]) -> f32[4] {\n  ROOT q = f32[4] parameter(0)\n}\n\n";
  text += "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] call(x), to_apply=%f3\n}\n";
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_GT(three.pieces, 1u);
  EXPECT_EQ(one.text, three.text);
  EXPECT_NE(three.text.find("%f.calls.1 "), std::string::npos) << three.text;
}

TEST(HloParserThreads, InPlaceOperandsInSeveralPieces) {
  std::string text = "HloModule inplace\n\n";
  for (int i = 0; i < 4; ++i)
    text += "%g" + std::to_string(i) +
            " {\n  x = s32[] parameter(0)\n  constant = s32[] constant(7)\n"
            "  ROOT r = s32[] add(x, s32[] constant(1))\n}\n\n";
  text += "ENTRY e {\n  x = s32[] parameter(0)\n  ROOT r = s32[] call(x), to_apply=%g2\n}\n";
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_GT(three.pieces, 1u);
  EXPECT_EQ(one.text, three.text);
}

TEST(HloParserThreads, UniqueInstructionNameAfterThreadedParse) {
  std::string text = ManyComputations(9);
  HloParseOptions options;
  options.threads = 3;
  options.min_chunk_bytes = 1;
  size_t pieces = 0;
  options.pieces_joined = &pieces;
  auto threaded = ParseHloModuleOwned(text, "in.hlo", options);
  auto sequential = ParseHloModuleOwned(text, "in.hlo");
  ASSERT_TRUE(threaded && sequential);
  EXPECT_GT(pieces, 1u);
  for (llvm::StringRef prefix : {"add", "p0", "p1.3", "call.2", "x", "fresh", "c1", "add.9"}) {
    llvm::StringRef a = (*threaded)->UniqueInstructionName(prefix);
    llvm::StringRef b = (*sequential)->UniqueInstructionName(prefix);
    EXPECT_EQ(a, b) << prefix.str();
  }
  for (llvm::StringRef name : {"p0.8", "p0.9", "p0.10", "add.8", "call.8", "call.9"})
    EXPECT_EQ((*threaded)->ReserveInstructionName(name),
              (*sequential)->ReserveInstructionName(name))
        << name.str();
  EXPECT_FALSE((*threaded)->ReserveInstructionName("p0.8"));
  EXPECT_TRUE((*threaded)->ReserveInstructionName("p0.11"));
  EXPECT_EQ((*threaded)->instruction_count(), (*sequential)->instruction_count());
}

TEST(HloParserThreads, ErrorInALaterPieceIsTheSequentialOne) {
  std::string text = ManyComputations(8);
  // Two errors: the sequential parser reports the first in the text.
  size_t c6 = text.find("add(", text.find("%c6 ("));
  text.replace(c6, 3, "adx");
  size_t c2 = text.find("add(", text.find("%c2 ("));
  text.replace(c2 + 4, 0, "%nope, ");
  Outcome one = Sequential(text);
  Outcome three = Threaded(text);
  ASSERT_FALSE(one.ok);
  EXPECT_NE(one.text.find("unknown operand"), std::string::npos) << one.text;
  EXPECT_EQ(one.text, three.text);
}

TEST(HloParserThreads, SmallModulesAndOneThreadStaySequential) {
  std::string text = ManyComputations(4);
  EXPECT_EQ(ParseWith(text, 1, 1).pieces, 0u);
  EXPECT_EQ(ParseWith(text, 4, 1 << 20).pieces, 0u);
  EXPECT_GT(ParseWith(text, 2, 64).pieces, 1u);
  EXPECT_EQ(ParseWith(text, 2, 64).text, Sequential(text).text);
  // 0 threads: as many as the machine has cores.
  EXPECT_EQ(ParseWith(text, 0, 64).text, Sequential(text).text);
}

// The pieces' name tables are merged into the module's (HloNameTable::Merge):
// whatever the split of the names, the merged table holds their union and
// reports exactly whether a name was in both, as inserting them one by one
// would. Suffixes span dense runs, sparse huge ones and non-canonical ones,
// so every representation (bitset, hash set, bare base) meets every other.
TEST(HloParserThreads, NameTableMergeIsTheUnion) {
  std::mt19937 rng(7);
  const char *kBases[] = {"add", "p", "fusion.1", "x", "get-tuple-element"};
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> names;
    int count = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < count; ++i) {
      std::string name = kBases[rng() % 5];
      switch (rng() % 5) {
      case 0:
        break; // bare
      case 1:
        name += "." + std::to_string(rng() % 2000000000u % 999999999u); // sparse
        break;
      case 2:
        name += ".0" + std::to_string(rng() % 10); // leading zero: bare
        break;
      default:
        name += "." + std::to_string(round * 100 + static_cast<int>(rng() % 400));
      }
      names.push_back(name);
    }
    HloNameTable a, b, one_by_one;
    std::vector<std::string> in_a, in_b;
    for (const std::string &name : names) {
      bool to_a = rng() % 2;
      (to_a ? a : b).Insert(name);
      (to_a ? in_a : in_b).push_back(name);
      one_by_one.Insert(name);
    }
    // Distinct unless some name went to both.
    bool expected_distinct = true;
    for (const std::string &name : in_b)
      if (std::find(in_a.begin(), in_a.end(), name) != in_a.end())
        expected_distinct = false;
    EXPECT_EQ(a.Merge(b), expected_distinct) << "round " << round;
    EXPECT_EQ(a.size(), one_by_one.size()) << "round " << round;
    for (const std::string &name : names)
      EXPECT_TRUE(a.Contains(name)) << name;
    for (int i = 0; i < 50; ++i) {
      std::string probe =
          std::string(kBases[rng() % 5]) + "." + std::to_string(rng() % 200000);
      EXPECT_EQ(a.Contains(probe), one_by_one.Contains(probe)) << probe;
      EXPECT_EQ(a.Insert(probe), one_by_one.Insert(probe)) << probe;
    }
  }
}

} // namespace
