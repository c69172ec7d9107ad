//===- EvalTestUtil.h - Helpers shared by the interpreter's unit tests ----===//
#ifndef LOOM_UNITTESTS_HLO_EVALTESTUTIL_H
#define LOOM_UNITTESTS_HLO_EVALTESTUTIL_H

#include "HloTestUtil.h"
#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/Literal.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace loom::hlo::evaltest {

inline Literal Array(PrimitiveType type, std::vector<int64_t> dims, std::vector<double> values) {
  Literal l{Shape(type, dims)};
  EXPECT_EQ(l.element_count(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < l.element_count(); ++i)
    l.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

inline Literal Vec(PrimitiveType type, std::vector<double> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Array(type, {n}, std::move(values));
}

using testutil::Parse;

/// Runs `text` with `args[d]` on device d (the same args on every device
/// when only one list is given). Failure is a test failure and no results.
inline std::vector<Literal> RunModule(const std::string &text, std::vector<std::vector<Literal>> args,
                                EvalStats *stats = nullptr, EvalOptions options = {}) {
  auto module = Parse(text);
  if (!module)
    return {};
  int64_t devices = module->replica_count() * module->num_partitions();
  if (args.size() == 1 && devices > 1)
    args.resize(devices, args[0]);
  if (args.empty())
    args.resize(devices);
  auto result = RunSpmd(*module, args, options, stats);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  return std::move(*result);
}

/// Result of device 0 printed.
inline std::string Run1(const std::string &text, std::vector<Literal> args = {}) {
  std::vector<std::vector<Literal>> all;
  all.push_back(std::move(args));
  std::vector<Literal> out = RunModule(text, std::move(all));
  return out.empty() ? "<error>" : out[0].ToString();
}

/// The error message of a run that must fail ("" if it succeeded).
inline std::string RunError(const std::string &text, std::vector<std::vector<Literal>> args = {},
                            EvalOptions options = {}) {
  auto module = Parse(text);
  if (!module)
    return "<parse error>";
  int64_t devices = module->replica_count() * module->num_partitions();
  if (args.size() == 1 && devices > 1)
    args.resize(devices, args[0]);
  if (args.empty())
    args.resize(devices);
  auto result = RunSpmd(*module, args, options, nullptr);
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

} // namespace loom::hlo::evaltest

#endif
