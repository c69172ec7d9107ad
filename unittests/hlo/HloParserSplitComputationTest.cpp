// The threaded parser cuts one computation into pieces at instruction lines
// (docs/hlo-text-format.md, "Parsing on several threads"): a module of one
// large computation gives the module, the user lists and the errors one
// thread gives, wherever the pieces fall. Each case is parsed with pieces
// at every line (three threads, one-byte pieces) and at a few hundred bytes
// (two threads), and compared with the sequential parse: errors by their
// whole text, `file:line:col` included, in the first, a middle and the last
// piece; operands defined pieces earlier (parameters at the top) and
// references to instructions defined later; the ROOT and the computation's
// trailer in a later piece than its header.
#include "HloTestUtil.h"

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/ADT/StringRef.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

using testutil::Outcome;

Outcome ParseWith(const std::string &text, unsigned threads, size_t min_chunk_bytes) {
  return testutil::ParseWith(text, threads, min_chunk_bytes, /*with_users=*/true);
}

/// The threaded outcomes equal the sequential one; returns the latter.
Outcome ExpectSame(const std::string &text, const std::string &what) {
  Outcome one = ParseWith(text, 1, 1);
  for (auto [threads, chunk] : {std::pair<unsigned, size_t>{3, 1}, {2, 300}}) {
    Outcome many = ParseWith(text, threads, chunk);
    EXPECT_EQ(one.ok, many.ok) << what;
    EXPECT_EQ(one.text, many.text) << what;
    EXPECT_EQ(one.users, many.users) << what;
  }
  return one;
}

/// One ENTRY computation of `layers` layers: parameters at the top, each
/// layer reading a parameter, the previous layer and a constant.
std::string OneComputation(int layers, const std::string &trailer = "") {
  std::string text = "HloModule one, num_partitions=4\n\n"
                     "ENTRY %main (p0: f32[2], p1: f32[2]) -> f32[2] {\n"
                     "  %p0 = f32[2]{0} parameter(0)\n"
                     "  %p1 = f32[2]{0} parameter(1)\n";
  std::string last = "p0";
  for (int i = 0; i < layers; ++i) {
    std::string n = std::to_string(i);
    std::string p = i % 2 ? "p1" : "p0";
    text += "  %c." + n + " = f32[] constant(" + n + ")\n";
    text += "  %b." + n + " = f32[2]{0} broadcast(f32[] %c." + n + "), dimensions={}\n";
    text += "  %a." + n + " = f32[2]{0} add(f32[2]{0} %" + last + ", f32[2]{0} %" + p +
            "), metadata={op_name=\"jit(f)/add\" source_line=" + n + "}\n";
    text += "  %m." + n + " = f32[2]{0} multiply(f32[2]{0} %a." + n + ", f32[2]{0} %b." + n +
            ")\n";
    last = "m." + n;
  }
  text += "  ROOT %out = f32[2]{0} copy(f32[2]{0} %" + last + ")\n}" + trailer + "\n";
  return text;
}

/// `text` with the first occurrence of `from` after `after` replaced.
std::string Edit(std::string text, const std::string &after, const std::string &from,
                 const std::string &to) {
  size_t at = text.find(from, text.find(after));
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

TEST(HloParserSplitComputation, OneComputationIsParsedInPieces) {
  std::string text = OneComputation(60);
  Outcome one = ExpectSame(text, "one computation");
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_EQ(ParseWith(text, 3, 1).pieces, 96u); // 32 a thread
  EXPECT_GT(ParseWith(text, 2, 300).pieces, 10u);
  // The parameters' users come from every piece, in text order.
  EXPECT_NE(one.users.find("p1: a.1 a.3 a.5 a.7"), std::string::npos) << one.users;
  // Byte for byte the input: the text is in the printer's form.
  EXPECT_EQ(one.text, text);
}

TEST(HloParserSplitComputation, ComputationsAroundTheSplitOne) {
  std::string text = OneComputation(40, ", execution_thread=\"main\"");
  // A callee before it, called from a later piece, and one after it.
  text.insert(text.find("ENTRY"), "%neg (x: f32[2]) -> f32[2] {\n  %x = f32[2]{0} parameter(0)\n"
                                  "  ROOT %n = f32[2]{0} negate(f32[2]{0} %x)\n}\n\n");
  text = Edit(text, "%m.30 =", "multiply(f32[2]{0} %a.30, f32[2]{0} %b.30)",
              "call(f32[2]{0} %a.30), to_apply=%neg");
  text += "\n%after (y: f32[2]) -> f32[2] {\n  ROOT %y = f32[2]{0} parameter(0)\n}\n";
  Outcome one = ExpectSame(text, "computations around");
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_NE(one.text.find("}, execution_thread=\"main\"\n"), std::string::npos);
  EXPECT_GT(ParseWith(text, 3, 1).pieces, 1u);
}

TEST(HloParserSplitComputation, RootInAnEarlierPiece) {
  std::string text = Edit(OneComputation(30), "", "  %a.3 =", "  ROOT %a.3 =");
  text = Edit(text, "", "  ROOT %out =", "  %out =");
  Outcome one = ExpectSame(text, "root early");
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_NE(one.text.find("ROOT %a.3 ="), std::string::npos);
}

TEST(HloParserSplitComputation, ErrorsInAnyPiece) {
  const std::string base = OneComputation(30);
  // Each edit is made in the first, a middle and the last layer.
  for (int layer : {0, 15, 29}) {
    std::string n = std::to_string(layer);
    std::string a = "%a." + n + " = ";
    std::vector<std::pair<std::string, std::string>> cases = {
        {"unknown operand", Edit(base, a, "%p", "%nowhere")},
        {"operand defined later", Edit(base, a, "%p", "%m.29")},
        {"operand defined later in its own piece", Edit(base, a, "%p", "%m." + n)},
        {"itself as operand", Edit(base, a, "%p", "%a." + n)},
        {"shape unlike the definition", Edit(base, a, "f32[2]{0} %p", "f32[3]{0} %p")},
        {"layout unlike the definition", Edit(base, a, "f32[2]{0} %p", "f32[2] %p")},
        {"name of an earlier instruction", Edit(base, a, a, "%p1 = ")},
        {"name of a later instruction", Edit(base, a, a, "%m.29 = ")},
        {"second ROOT", Edit(base, a, a, "ROOT " + a)},
        {"unknown opcode", Edit(base, a, "add(", "adx(")},
        {"bad attribute", Edit(base, a, "metadata=", "metadata")},
        {"unterminated string", Edit(base, a, "jit(f)/add\"", "jit(f)/add")},
        {"unterminated comment", Edit(base, a, a, "/* " + a)},
        {"control predecessor from an earlier piece",
         Edit(base, a, ", metadata=", ", control-predecessors={%c.0}, metadata=")},
    };
    for (const auto &[what, text] : cases) {
      Outcome one = ExpectSame(text, what + " in layer " + n);
      EXPECT_TRUE(!one.ok || what == "layout unlike the definition" ||
                  what == "control predecessor from an earlier piece")
          << what << ": " << one.text;
      if (!one.ok) {
        EXPECT_NE(one.text.find("in.hlo:"), std::string::npos) << one.text;
      }
    }
  }
  // Missing pieces of the computation's frame.
  std::string open = base.substr(0, base.rfind('}'));
  EXPECT_FALSE(ExpectSame(open, "no closing brace").ok);
  EXPECT_FALSE(ExpectSame(base + "}\n", "a closing brace too many").ok);
}

// Instructions whose operand is in an earlier piece but whose parse reads
// the operand's shape (a shape to infer, a scalar broadcast without
// dimensions) are left to the sequential parser; the result is the same.
TEST(HloParserSplitComputation, OperandShapesReadWhileParsing) {
  std::string text = OneComputation(30);
  text = Edit(text, "%m.20 =", "%m.20 = f32[2]{0} multiply(", "%m.20 = multiply(");
  text = Edit(text, "%b.25 =", "f32[] %c.25), dimensions={}", "f32[] %c.0)");
  Outcome one = ExpectSame(text, "shapes read while parsing");
  ASSERT_TRUE(one.ok) << one.text;
  EXPECT_NE(one.text.find("broadcast(f32[] %c.0), dimensions={}"), std::string::npos);
}

} // namespace
