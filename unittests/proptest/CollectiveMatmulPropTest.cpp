//===- CollectiveMatmulPropTest.cpp - Random modules keep their numerics --===//
//
// The property: for every module the generator writes, running
// neuron_looped_einsum_replacer then neuron_looped_einsum_token_replacer
// (verifying after each pass) changes no output of any device beyond the
// documented tolerance. Each case: generate text, parse, verify, run the
// pipeline on a copy, CheckNumerics(original, transformed).
//
// A property test that never exercises the fusion proves nothing, so a
// full run also fails when too few cases fused or a matcher shape never
// fused, and every fused module is mutated (the activation of each
// collective-matmul negated) to show the comparison would catch a wrong
// fusion. With --hlo-opt every case also goes through the real tool:
// `hlo-opt --verify-each --check-numerics` with the case's options as flags.
// Every case runs again in provenance mode (--collective-matmul-provenance),
// which must keep the numerics too. After the random cases come the scan
// cases (GenerateScanCase: stacked layer weights and merged contractions of
// the Llama dumps); each must fold exactly when the rules say it does.
// --threads=N (every tool's, loom/tools/ThreadsOption.h) sets the
// interpreter's threads, here and in hlo-opt; --compare-threads runs every
// rewritten module with 1 and with 2 threads and requires equal outputs
// (zero tolerance).
//
//   collective-matmul-proptest [--seed=S] [--cases=N] [--scan-cases=N] [--case=I]
//                              [--verbose] [--hlo-opt=PATH] [--threads=N]
//                              [--compare-threads]
//
// docs/hlo-run.md explains how to read a failure and replay one case.
//
//===----------------------------------------------------------------------===//
#include "CollectiveMatmulGenerator.h"

#include "loom/hlo/eval/EvalCommandLine.h"
#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/NumericsCheck.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/parser/HloClone.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"
#include "loom/hlo/passes/NeuronLoopedEinsumTokenReplacer.h"
#include "loom/support/Error.h"
#include "loom/tools/ThreadsOption.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <chrono>
#include <map>

using namespace loom;
using namespace loom::hlo;
using namespace loom::hlo::proptest;

namespace {

llvm::cl::OptionCategory category("collective-matmul-proptest options");
llvm::cl::opt<uint64_t> seed_flag("seed", llvm::cl::value_desc("S"),
                                  llvm::cl::desc("Seed of the whole run (default 1)"),
                                  llvm::cl::init(1), llvm::cl::cat(category));
llvm::cl::opt<int64_t> cases_flag("cases", llvm::cl::value_desc("N"),
                                  llvm::cl::desc("Number of cases (default 320)"),
                                  llvm::cl::init(320), llvm::cl::cat(category));
llvm::cl::opt<int64_t> case_flag("case", llvm::cl::value_desc("I"),
                                 llvm::cl::desc("Run only case I of the run (replays a failure; "
                                                "the coverage rules are not applied)"),
                                 llvm::cl::init(-1), llvm::cl::cat(category));
llvm::cl::opt<bool> verbose_flag("verbose",
                                 llvm::cl::desc("Print one line per case, its pass remarks, and "
                                                "why cases did not fuse"),
                                 llvm::cl::cat(category));
llvm::cl::opt<std::string>
    hlo_opt_flag("hlo-opt", llvm::cl::value_desc("PATH"),
                 llvm::cl::desc("Also run every case through this hlo-opt binary with "
                                "--verify-each --check-numerics"),
                 llvm::cl::cat(category));
llvm::cl::opt<int64_t> scan_cases_flag(
    "scan-cases", llvm::cl::value_desc("N"),
    llvm::cl::desc("Number of scan cases after the random ones (default 64)"), llvm::cl::init(64),
    llvm::cl::cat(category));
llvm::cl::opt<bool> compare_threads_flag(
    "compare-threads",
    llvm::cl::desc("Run every rewritten module with 1 and 2 interpreter threads and require "
                   "equal outputs"),
    llvm::cl::cat(category));
llvm::cl::opt<double> min_fused_flag("min-fused-percent", llvm::cl::value_desc("P"),
                                     llvm::cl::desc("Fail a run of 100 cases or more when fewer "
                                                    "cases fused (default 40)"),
                                     llvm::cl::init(40), llvm::cl::cat(category));

// The seed of case `index` of a run: every case is reproducible alone.
uint64_t CaseSeed(uint64_t run_seed, int64_t index) {
  return SplitMix64(run_seed ^ (0x632be59bd9b4e019ULL * static_cast<uint64_t>(index + 1))).Next();
}

int64_t CountCollectiveMatmuls(const HloModule &module) {
  int64_t n = 0;
  for (const HloComputation *c : module.computations())
    for (const HloInstruction *inst : c->instructions())
      if (inst->opcode() == HloOpcode::kCustomCall &&
          GetCustomCallTarget(*inst) == collective_matmul::kTarget)
        ++n;
  return n;
}

struct CaseOutcome {
  bool fused = false;
  int64_t tokens_replaced = 0;
  std::string remarks;
};

llvm::Expected<std::unique_ptr<HloModule>> ParseAndVerify(const std::string &text) {
  auto module = ParseHloModule(text, "generated.hlo");
  if (!module)
    return makeError("the generated module does not parse: " + llvm::toString(module.takeError()));
  if (auto err = VerifyHloModule(**module))
    return makeError("the generated module does not verify: " + llvm::toString(std::move(err)));
  return module;
}

// Negates the activation of every collective-matmul: what a fusion that
// multiplied the wrong value would compute.
void MutateCollectiveMatmuls(HloModule &module) {
  for (HloComputation *c : module.computations()) {
    std::vector<HloInstruction *> calls;
    for (HloInstruction *inst : c->instructions())
      if (inst->opcode() == HloOpcode::kCustomCall &&
          GetCustomCallTarget(*inst) == collective_matmul::kTarget)
        calls.push_back(inst);
    for (HloInstruction *call : calls) {
      HloInstruction *x = call->mutable_operand(1);
      HloInstruction *negated =
          c->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, x->shape(), {x}));
      llvm::cantFail(call->ReplaceOperandWith(1, negated));
    }
  }
}

// hlo-opt's flags for the pipeline of a case with `o` as its options.
std::vector<std::string> HloOptFlags(const CollectiveMatmulOptions &o) {
  auto boolean = [](bool b) { return std::string(b ? "true" : "false"); };
  return {"--passes=neuron_looped_einsum_replacer,neuron_looped_einsum_token_replacer",
          "--neuron-collective-matmul-nxd=" + boolean(o.nxd),
          "--neuron-collective-permute-aggressive=" + boolean(o.permute_aggressive),
          "--neuron-collective-matmul-sb-to-sb-threshold-in-mb=" +
              std::to_string(o.sb_to_sb_threshold_in_mb),
          "--neuron-compat=" + boolean(o.compat),
          "--collective-matmul-provenance=" + boolean(o.provenance),
          "--threads=" + std::to_string(tools::getThreadsOption())};
}

// The same case through the hlo-opt binary, options as its flags.
llvm::Error RunHloOpt(const GeneratedCase &c, const CollectiveMatmulOptions &options,
                      uint64_t case_seed) {
  llvm::SmallString<128> input;
  int fd;
  if (auto ec = llvm::sys::fs::createTemporaryFile("proptest", "hlo", fd, input))
    return makeError("cannot create a temporary file: " + ec.message());
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << c.text;
  }
  llvm::SmallString<128> errors;
  llvm::sys::fs::createTemporaryFile("proptest", "err", errors);
  std::vector<std::string> args = {hlo_opt_flag, "--verify-each", "--check-numerics",
                                   "--check-numerics-seed=" + std::to_string(case_seed)};
  llvm::append_range(args, HloOptFlags(options));
  llvm::append_range(args, std::vector<std::string>{input.str().str(), "-o", "/dev/null"});
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::None, errors.str(), errors.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(hlo_opt_flag, argv, llvm::None, redirects, 0, 0, &message);
  auto output = llvm::MemoryBuffer::getFile(errors);
  std::string stderr_text = output ? (*output)->getBuffer().str() : "";
  llvm::sys::fs::remove(input);
  llvm::sys::fs::remove(errors);
  if (rc != 0)
    return makeError("hlo-opt exited with " + std::to_string(rc) + " " + message + ":\n" +
                     stderr_text + "command: " + llvm::join(args, " "));
  return llvm::Error::success();
}

// --compare-threads: the module's outputs with 1 and with 2 interpreter
// threads must be equal.
llvm::Error CompareThreadCounts(const HloModule &module, uint64_t case_seed) {
  EvalOptions eval = EvalOptionsFromCommandLine();
  eval.threads = tools::getThreadsOption();
  auto args = MakeRandomArguments(module, case_seed, eval);
  if (!args)
    return args.takeError();
  std::vector<Literal> results[2];
  for (int threads : {1, 2}) {
    eval.threads = threads;
    auto run = RunSpmd(module, *args, eval, nullptr);
    if (!run)
      return makeError("--threads=" + std::to_string(threads) + ": " +
                       llvm::toString(run.takeError()));
    results[threads - 1] = std::move(*run);
  }
  NumericsCheckOptions exact;
  exact.rtol = 0;
  exact.atol = 0;
  auto summary = CompareDeviceResults(results[0], results[1], exact);
  if (!summary)
    return summary.takeError();
  if (!summary->ok())
    return makeError("the outputs with 1 and 2 threads differ: " + summary->ToString() + "; " +
                     summary->first_mismatch);
  return llvm::Error::success();
}

llvm::Expected<CaseOutcome> RunCaseWith(const GeneratedCase &c,
                                        const CollectiveMatmulOptions &options,
                                        uint64_t case_seed) {
  auto original = ParseAndVerify(c.text);
  if (!original)
    return original.takeError();
  llvm::Expected<std::unique_ptr<HloModule>> copy = CloneModule(**original);
  if (!copy)
    return copy.takeError();
  std::unique_ptr<HloModule> transformed = std::move(*copy);
  HloPassPipelineOptions pipeline_options;
  pipeline_options.verify_each = true;
  HloPassPipeline pipeline("collective-matmul", pipeline_options);
  pipeline.AddPass<NeuronLoopedEinsumReplacer>(options);
  pipeline.AddPass<NeuronLoopedEinsumTokenReplacer>(options);
  CaseOutcome outcome;
  llvm::raw_string_ostream remarks(outcome.remarks);
  pipeline.SetRemarkStream(&remarks);
  if (auto changed = pipeline.Run(*transformed); !changed)
    return makeError("the pipeline failed: " + llvm::toString(changed.takeError()));
  remarks.flush();
  outcome.fused = CountCollectiveMatmuls(*transformed) > 0;
  outcome.tokens_replaced = llvm::StringRef(outcome.remarks).count(": replaced by ");
  NumericsCheckOptions numerics;
  numerics.seed = case_seed;
  numerics.eval = EvalOptionsFromCommandLine();
  numerics.eval.threads = tools::getThreadsOption();
  if (auto err = CheckNumerics(**original, *transformed, numerics, llvm::nulls()))
    return makeError(llvm::toString(std::move(err)) + "\n--- transformed module ---\n" +
                     transformed->ToString());
  if (compare_threads_flag)
    if (auto err = CompareThreadCounts(*transformed, case_seed))
      return err;
  if (outcome.fused) {
    MutateCollectiveMatmuls(*transformed);
    llvm::Error err = CheckNumerics(**original, *transformed, numerics, llvm::nulls());
    if (!err)
      return makeError("the numerics check did not notice the negated activation of the "
                       "fused collective-matmul");
    llvm::consumeError(std::move(err));
  }
  if (!hlo_opt_flag.empty())
    if (auto err = RunHloOpt(c, options, case_seed))
      return err;
  return outcome;
}

// The case with its options, then (unless they already are) in provenance
// mode; the outcome is the first run's.
llvm::Expected<CaseOutcome> RunCase(const GeneratedCase &c, uint64_t case_seed) {
  auto outcome = RunCaseWith(c, c.options, case_seed);
  if (!outcome || c.options.provenance)
    return outcome;
  CollectiveMatmulOptions provenance = c.options;
  provenance.provenance = true;
  auto again = RunCaseWith(c, provenance, case_seed);
  if (!again)
    return makeError("with --collective-matmul-provenance: " +
                     llvm::toString(again.takeError()));
  return outcome;
}

// A miss reason without its instance details (names, groups, shapes), so
// equal reasons count together.
std::string ReasonKey(llvm::StringRef reason) {
  size_t cut = reason.find_first_of("%{[", 12);
  return reason.substr(0, std::min<size_t>(cut, 72)).rtrim(" :(").str();
}

// Tallies for the final report.
struct Tally {
  std::array<int64_t, kNumMatcherShapes> cases{}, fused{};
  int64_t passed = 0, failed = 0, tokens_replaced = 0, scan_cases = 0, scan_fused = 0;
  std::map<std::string, int64_t> missed_reasons;
  /// Per generator tag: cases, and how many of them fused.
  std::map<std::string, std::pair<int64_t, int64_t>> tags;

  void AddMissedReasons(llvm::StringRef remarks) {
    llvm::SmallVector<llvm::StringRef> lines;
    remarks.split(lines, '\n', -1, false);
    for (llvm::StringRef line : lines)
      if (size_t at = line.find(": missed: "); at != llvm::StringRef::npos)
        ++missed_reasons[ReasonKey(line.substr(at + 10))];
  }
};

void ReportFailure(int64_t index, uint64_t case_seed, const GeneratedCase &c,
                   const std::string &error) {
  llvm::errs() << "FAILED case " << index << " (--seed=" << seed_flag << " --case=" << index
               << ", case seed " << llvm::format_hex(case_seed, 18) << ")\n"
               << "  " << c.summary << "\n"
               << "  replay: hlo-opt --verify-each --check-numerics --check-numerics-seed="
               << case_seed << " " << llvm::join(HloOptFlags(c.options), " ") << " case.hlo\n"
               << "--- module ---\n"
               << c.text << "--- error ---\n"
               << error << "\n\n";
}

// Case `index` of the run: the random cases first, then the scan cases.
void RunOne(int64_t index, Tally &tally) {
  uint64_t case_seed = CaseSeed(seed_flag, index);
  const bool scan = index >= cases_flag;
  auto shape = static_cast<MatcherShape>(index % kNumMatcherShapes);
  GeneratedCase c = scan ? GenerateScanCase(case_seed) : GenerateCase(case_seed, shape);
  shape = c.shape;
  auto outcome = RunCase(c, case_seed);
  if (outcome && c.expect_fused >= 0 && outcome->fused != (c.expect_fused == 1))
    outcome = makeError(std::string("the rules say the dot ") +
                        (c.expect_fused ? "folds" : "does not fold") + ", but it " +
                        (outcome->fused ? "folded" : "did not") + ":\n" + outcome->remarks);
  if (!outcome) {
    ++tally.failed;
    ReportFailure(index, case_seed, c, llvm::toString(outcome.takeError()));
    return;
  }
  if (scan) {
    ++tally.scan_cases;
    tally.scan_fused += outcome->fused;
  }
  ++tally.passed;
  ++tally.cases[static_cast<int>(shape)];
  tally.fused[static_cast<int>(shape)] += outcome->fused;
  tally.tokens_replaced += outcome->tokens_replaced;
  tally.AddMissedReasons(outcome->remarks);
  for (const std::string &tag : c.tags) {
    ++tally.tags[tag].first;
    tally.tags[tag].second += outcome->fused;
  }
  if (verbose_flag)
    llvm::outs() << "case " << index << ": " << (outcome->fused ? "fused" : "not fused") << ": "
                 << c.summary << "\n"
                 << outcome->remarks;
}

// Each feature of docs/hlo-run.md's list must have fused at least once. Rarer
// variants (shuffled or implicit groups, six-operand all-gathers, ...) are
// only reported: a few dozen cases cannot promise that one of them fuses.
constexpr llvm::StringLiteral kRequiredTags =
    "plain while bf16 f32 weight-rank-3 weight-rank-4 ag-dim-0 ag-dim-1 ag-dim-2 ag-dim-3 "
    "nxd-index-0 nxd-index-nonzero token groups-contiguous groups-iota 1-group 2-groups "
    "3-groups cross-replica flattened batch-dims f32-accumulate shared-all-gather nxd no-nxd "
    "compat no-compat aggressive not-aggressive";
// The same for the scan cases (provenance mode), when there are 40 or more.
constexpr llvm::StringLiteral kRequiredScanTags =
    "scan-q scan-o-merged scan-dq scan-dh-merged scan-forward scan-backward provenance";

// The per-shape table; false when enforced and a shape never fused.
bool CheckShapes(const Tally &tally, bool enforce) {
  bool ok = true;
  for (int s = 0; s < kNumMatcherShapes; ++s) {
    llvm::StringRef name = MatcherShapeName(static_cast<MatcherShape>(s));
    llvm::outs() << "  " << llvm::left_justify(name, 7) << " "
                 << llvm::format_decimal(tally.cases[s], 4) << " cases, "
                 << llvm::format_decimal(tally.fused[s], 4) << " fused\n";
    if (enforce && tally.fused[s] == 0) {
      llvm::errs() << "coverage: no " << name << " case fused\n";
      ok = false;
    }
  }
  return ok;
}

// The feature table (--verbose); false when enforced and a required feature
// never fused or no token was replaced.
bool CheckTags(const Tally &tally, bool enforce) {
  if (verbose_flag)
    for (const auto &[tag, counts] : tally.tags)
      llvm::outs() << "  " << llvm::left_justify(tag, 28) << " "
                   << llvm::format_decimal(counts.first, 4) << " cases, "
                   << llvm::format_decimal(counts.second, 4) << " fused\n";
  if (!enforce)
    return true;
  bool ok = true;
  llvm::SmallVector<llvm::StringRef> required;
  kRequiredTags.split(required, ' ');
  if (scan_cases_flag >= 40)
    kRequiredScanTags.split(required, ' ');
  for (llvm::StringRef tag : required) {
    auto it = tally.tags.find(tag.str());
    if (it == tally.tags.end() || it->second.second == 0) {
      llvm::errs() << "coverage: no case tagged '" << tag << "' fused\n";
      ok = false;
    }
  }
  if (tally.tokens_replaced == 0) {
    llvm::errs() << "coverage: no token was replaced\n";
    ok = false;
  }
  return ok;
}

// The totals; false when enforced and too few cases fused.
bool CheckFusedShare(const Tally &tally, bool enforce) {
  int64_t total = 0, fused = 0;
  for (int s = 0; s < kNumMatcherShapes; ++s) {
    total += tally.cases[s];
    fused += tally.fused[s];
  }
  llvm::outs() << "  scan cases: " << tally.scan_cases << ", " << tally.scan_fused
               << " fused, each as the rules say\n";
  // The share is that of the random cases.
  total -= tally.scan_cases;
  fused -= tally.scan_fused;
  double percent = total ? 100.0 * static_cast<double>(fused) / static_cast<double>(total) : 0;
  // llvm::format rather than formatv: gcc 12 misreads formatv's integer
  // provider as a use of an uninitialized value (-Wmaybe-uninitialized).
  llvm::outs() << "  fused " << fused << " of " << total << " cases ("
               << llvm::format("%.1f", percent) << "%), " << tally.tokens_replaced
               << " tokens replaced, " << fused << " mutated fused modules caught\n";
  if (enforce && percent < min_fused_flag) {
    llvm::errs() << "coverage: only " << llvm::format("%.1f", percent)
                 << "% of the cases fused (need " << llvm::format("%g", min_fused_flag.getValue()) << "%)\n";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tools::addThreadsOptionToCategory(EvalOptionCategory());
  llvm::cl::HideUnrelatedOptions({&category, &EvalOptionCategory()});
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "collective-matmul-proptest: random modules through the collective-matmul passes "
          "keep their numerics\n",
          &llvm::errs()))
    return 2;
  std::string problem = tools::getThreadsOptionProblem();
  if (problem.empty())
    problem = EvalCommandLineProblem();
  if (!problem.empty()) {
    llvm::errs() << "collective-matmul-proptest: " << problem << "\n";
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  Tally tally;
  if (case_flag >= 0)
    RunOne(case_flag, tally);
  else
    for (int64_t i = 0; i < cases_flag + scan_cases_flag; ++i)
      RunOne(i, tally);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  llvm::outs() << "collective-matmul-proptest --seed=" << seed_flag << ": "
               << llvm::format("%.1f", seconds) << " s\n";
  // The coverage rules need a sample large enough to be stable.
  bool full_run = case_flag < 0 && cases_flag >= 100;
  bool coverage_ok = CheckShapes(tally, full_run);
  coverage_ok &= CheckTags(tally, full_run);
  coverage_ok &= CheckFusedShare(tally, full_run);
  if (verbose_flag)
    for (const auto &[reason, count] : tally.missed_reasons)
      llvm::outs() << "  missed " << llvm::format_decimal(count, 4) << "x: " << reason << "\n";
  llvm::outs() << tally.passed << " passed, " << tally.failed << " failed\n";
  return tally.failed == 0 && coverage_ok ? 0 : 1;
}
