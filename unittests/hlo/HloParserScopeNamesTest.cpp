// The parser's table of the names one computation defines
// (lib/hlo/parser/HloScopeNames.h) finds every name it was given and no
// other, whichever of its two homes a name went to: `base.N` by N (bases
// sharing an N chained), and names of another shape or with an N far from
// the others in a hash map; duplicates are refused across both; clearing
// empties it for the next computation.
#include "../../lib/hlo/parser/HloScopeNames.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using loom::hlo::hlo_parser::ScopeNames;

namespace {

TEST(HloParserScopeNamesTest, FindsWhatWasEnteredAndNothingElse) {
  // Every name is a view of one text, as the parser's are of the source.
  std::string text = "add.7 mul.7 p x.05 add.8 add. .3 y.1234567890 add.99999999 add.0 "
                     "mul.6 add.1 add.7";
  std::vector<llvm::StringRef> names;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos)
      end = text.size();
    names.push_back(llvm::StringRef(text).slice(at, end));
    at = end + 1;
  }
  ScopeNames table(text.data());
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    auto [index, inserted] = table.Insert(names[i]);
    EXPECT_TRUE(inserted) << names[i].str();
    EXPECT_EQ(index, i);
    EXPECT_EQ(table.name(index), names[i]);
    table.Define(index, nullptr, names[i]);
  }
  // The last `add.7` is the first one again.
  auto [again, inserted] = table.Insert(names.back());
  EXPECT_FALSE(inserted);
  EXPECT_EQ(again, 0u);
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    EXPECT_EQ(table.Find(names[i]), i) << names[i].str();
    EXPECT_EQ(table.shape_text(static_cast<uint32_t>(i)), names[i]);
  }
  for (llvm::StringRef absent : {"add.9", "mul.8", "add.6", "x.5", "p.0", "add.00", "mul",
                                 "add.100000000", "y.1234567891", "q"})
    EXPECT_EQ(table.Find(absent), ScopeNames::kNone) << absent.str();
  EXPECT_EQ(table.size(), names.size() - 1);

  table.clear();
  EXPECT_EQ(table.size(), 0u);
  for (llvm::StringRef name : names)
    EXPECT_EQ(table.Find(name), ScopeNames::kNone) << name.str();
  // Reused with other numbers: the numbers start wherever the next
  // computation's do.
  EXPECT_TRUE(table.Insert(names[11]).second); // add.1
  EXPECT_EQ(table.Find(names[11]), 0u);
  EXPECT_EQ(table.Find(names[0]), ScopeNames::kNone);
}

TEST(HloParserScopeNamesTest, AMillionNumberedNames) {
  // Dump numbering: one counter for all bases, as in an unrolled model,
  // and the parameters `w.N` numbered on their own.
  std::string text;
  const char *bases[] = {"convert", "dot", "add", "w"};
  std::vector<std::pair<size_t, size_t>> spans;
  for (int n = 0; n < 200000; ++n) {
    std::string name = std::string(bases[n % 4]) + "." + std::to_string(n % 4 == 3 ? n / 4 : n);
    spans.push_back({text.size(), name.size()});
    text += name + " ";
  }
  ScopeNames table(text.data());
  llvm::StringRef all(text);
  for (auto [at, size] : spans)
    ASSERT_TRUE(table.Insert(all.substr(at, size)).second) << all.substr(at, size).str();
  for (size_t i = 0; i < spans.size(); ++i)
    ASSERT_EQ(table.Find(all.substr(spans[i].first, spans[i].second)), i);
  EXPECT_EQ(table.Find("dot.0"), ScopeNames::kNone);
  EXPECT_EQ(table.Find("w.50000"), ScopeNames::kNone);
  EXPECT_EQ(table.Find("convert.199999"), ScopeNames::kNone);
}

} // namespace
