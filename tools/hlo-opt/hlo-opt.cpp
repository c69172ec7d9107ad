//===- hlo-opt.cpp - Parse, verify, transform and print one HLO module ----===//
//
// hlo-opt [options] <file.hlo | ->
//
// Reads a module in XLA's text format (or a binary HloModuleProto), verifies it, runs the passes named by
// --passes in order, verifies the result and prints it (stdout, or -o FILE,
// written atomically). With no passes it is the round-trip tool.
//
// Exit codes: 0 success; 1 bad input (unreadable file, syntax or
// verification error, failing pass, numerics mismatch, unwritable output);
// 2 bad usage (unknown option or pass, missing or extra input).
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/eval/EvalCommandLine.h"
#include "loom/hlo/eval/NumericsCheck.h"
#include "loom/hlo/parser/HloClone.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassPipeline.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/NeuronEnv.h"
#include "loom/hlo/passes/Passes.h"
#include "loom/hlo/proto/HloModuleLoader.h"
#include "loom/hlo/proto/HloProto.h"
#include "loom/support/Error.h"
#include "loom/support/InputFile.h"
#include "loom/support/OutputFile.h"
#include "loom/tools/LaunchSizeOptions.h"
#include "loom/tools/ThreadsOption.h"
#include "loom/tools/ToolErrors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::hlo;

namespace cl = llvm::cl;

namespace {

using tools::ExitBadUsage;
using tools::ExitSuccess;

const tools::ToolErrors errors("hlo-opt");

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLeakCheckedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kLeakCheckedBuild = true;
#else
constexpr bool kLeakCheckedBuild = false;
#endif
#else
constexpr bool kLeakCheckedBuild = false;
#endif

cl::OptionCategory tool_category("hlo-opt options");

cl::opt<std::string> input_path(cl::Positional, cl::desc("<file.hlo | file.pb | ->"),
                                cl::cat(tool_category));

cl::list<std::string> pass_names(
    "passes", cl::CommaSeparated, cl::value_desc("a,b,..."),
    cl::desc("Run these passes in this order (see --list-passes; a hyphen in a name stands "
             "for an underscore)"),
    cl::cat(tool_category));

cl::opt<std::string> output_path(
    "o", cl::init("-"), cl::value_desc("file"),
    cl::desc("Write the result to <file> instead of stdout; it is written to a temporary "
             "file and renamed, so a failed run leaves an existing <file> untouched"),
    cl::cat(tool_category));

enum class EmitFormat { kText, kProto };
cl::opt<EmitFormat> emit(
    "emit", cl::value_desc("format"),
    cl::desc("Write the result as HLO text (default) or as a binary HloModuleProto; "
             "-o NAME.pb without --emit writes a proto (docs/hlo-proto.md)"),
    cl::values(clEnumValN(EmitFormat::kText, "text", "XLA's HLO text"),
               clEnumValN(EmitFormat::kProto, "proto", "a serialized HloModuleProto")),
    cl::init(EmitFormat::kText), cl::cat(tool_category));

cl::opt<bool> verify_each("verify-each",
                          cl::desc("Verify the module after every pass, naming the pass "
                                   "that broke it"),
                          cl::cat(tool_category));

cl::opt<bool> print_after_all(
    "print-after-all",
    cl::desc("Print the module to stderr after every pass, under a "
             "'// -----// IR after <pass> ... //----- //' line"),
    cl::cat(tool_category));

cl::opt<bool> time_passes("time-passes",
                          cl::desc("Print the wall time of every pass to stderr at the end"),
                          cl::cat(tool_category));

cl::opt<bool> list_passes("list-passes",
                          cl::desc("Print the name of every pass --passes accepts and exit"),
                          cl::cat(tool_category));

cl::opt<bool> no_verify(
    "no-verify",
    cl::desc("Do not verify the module after parsing nor at the end (to inspect broken "
             "modules); --verify-each still verifies after each pass"),
    cl::cat(tool_category));

cl::opt<bool> remarks("remarks",
                      cl::desc("Let passes explain their decisions on stderr, one line per "
                               "remark"),
                      cl::cat(tool_category));

cl::opt<bool> check_numerics(
    "check-numerics",
    cl::desc("Run the module before and after the passes on the same random inputs with "
             "the interpreter and fail unless every output matches"),
    cl::cat(tool_category));

cl::opt<uint64_t> check_numerics_seed("check-numerics-seed", cl::init(0), cl::value_desc("n"),
                                      cl::desc("Seed of the random inputs of --check-numerics"),
                                      cl::cat(tool_category));

/// CheckNumerics on the launch size of --replica-count / --num-partitions
/// when given (as hlo-run runs), with hlo-run's hint when the module
/// declares no size and the check failed for want of devices. The result
/// keeps its own header: the size is the check's, not the module's.
llvm::Error CheckNumericsOnLaunch(HloModule &before, HloModule &after,
                                  const NumericsCheckOptions &options) {
  bool declares_size =
      after.FindHeaderAttribute("replica_count") || after.FindHeaderAttribute("num_partitions");
  std::vector<HloModule::HeaderAttribute> header = after.header_attributes().vec();
  for (HloModule *m : {&before, &after}) {
    if (std::optional<int64_t> replicas = tools::getReplicaCountOption())
      m->SetHeaderAttribute("replica_count", std::to_string(*replicas));
    if (std::optional<int64_t> partitions = tools::getNumPartitionsOption())
      m->SetHeaderAttribute("num_partitions", std::to_string(*partitions));
  }
  bool sized = declares_size || tools::getReplicaCountOption() || tools::getNumPartitionsOption();
  llvm::Error err = CheckNumerics(before, after, options, llvm::errs());
  after.mutable_header_attributes() = std::move(header);
  if (!err)
    return llvm::Error::success();
  std::string message = llvm::toString(std::move(err));
  return makeError(message + tools::getLaunchSizeHint(sized, message));
}

int Main(int argc, char **argv) {
  RegisterAllHloPasses();
  tools::hideLlvmInternalOptions();
  // Listed with the interpreter's options, whose devices it also runs.
  tools::addThreadsOptionToCategory(EvalOptionCategory());
  tools::addLaunchSizeOptionsToCategory(tool_category, "Run --check-numerics on",
                                        "(the printed module keeps its header)");
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "hlo-opt (loom)\n"; });
  if (!errors.parseCommandLine(
          argc, argv,
          "loom hlo-opt: parse, verify, transform and print an HLO module\n\n"
          "  Reads XLA's HLO text or a binary HloModuleProto, verifies it, runs --passes\n"
          "  in order, verifies the result and prints it (--emit=proto: as an\n"
          "  HloModuleProto). Exit codes: 0 success, 1 bad input, 2 bad usage.\n")) {
    return ExitBadUsage;
  }

  if (list_passes) {
    for (const std::string &name : RegisteredHloPassNames())
      llvm::outs() << name << "\n";
    return ExitSuccess;
  }
  if (input_path.empty())
    return errors.failUsage("no input file (give a path, or '-' for stdin)");
  if (std::string problem = tools::getThreadsOptionProblem(); !problem.empty())
    return errors.failUsage(problem);
  if (std::string problem = EvalCommandLineProblem(); !problem.empty())
    return errors.failUsage(problem);
  if (std::string problem = tools::getLaunchSizeOptionsProblem(); !problem.empty())
    return errors.failUsage(problem);
  for (const std::string &warning : CollectiveMatmulEnvironmentWarnings())
    errors.printWarning(warning);
  // Options that only shape the check do nothing without it: say so rather
  // than let a user believe they took effect.
  if (!check_numerics) {
    if (check_numerics_seed.getNumOccurrences())
      errors.printWarning("--check-numerics-seed does nothing without --check-numerics");
    if (tools::getReplicaCountOption() || tools::getNumPartitionsOption())
      errors.printWarning(
          "--replica-count and --num-partitions do nothing without --check-numerics");
  }
  // Every pass name is checked before any input is read: a typo is a usage
  // error whatever the input holds.
  HloPassPipelineOptions pipeline_options;
  pipeline_options.verify_each = verify_each;
  pipeline_options.print_after_all = print_after_all;
  pipeline_options.time_passes = time_passes;
  HloPassPipeline pipeline("hlo-opt", pipeline_options);
  for (const std::string &name : pass_names) {
    // `--passes=` (say, from an empty shell variable) means no pass.
    if (name.empty())
      continue;
    llvm::Expected<std::unique_ptr<HloPassInterface>> pass = CreateHloPass(name);
    if (!pass)
      return errors.failUsage(llvm::toString(pass.takeError()));
    pipeline.AddPass(std::move(*pass));
  }
  if (remarks)
    pipeline.SetRemarkStream(&llvm::errs());

  // Parse, verify, print and the interpreter share --threads; no output
  // depends on the count.
  unsigned threads = tools::getThreadCount();
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> text = readInputBuffer(input_path);
  if (!text)
    return errors.failInput(text.takeError());
  llvm::StringRef display_name = input_path == "-" ? llvm::StringRef("<stdin>")
                                                   : llvm::StringRef(input_path);
  // The module takes the text: its names and attribute texts are views
  // into it, so the input is held once. A binary HloModuleProto is read
  // too, told apart by content (docs/hlo-proto.md).
  HloParseOptions parse_options;
  parse_options.threads = threads;
  llvm::Expected<std::unique_ptr<HloModule>> module =
      LoadHloModule(std::move(*text), display_name, parse_options);
  if (!module)
    return errors.failInput(module.takeError());
  std::string file_prefix = (display_name + ": ").str();
  if (!no_verify) {
    if (llvm::Error err = VerifyHloModule(**module, threads))
      return errors.failInput(std::move(err), file_prefix);
  }

  std::unique_ptr<HloModule> before;
  if (check_numerics) {
    llvm::Expected<std::unique_ptr<HloModule>> copy = CloneModule(**module);
    if (!copy)
      return errors.failInput(copy.takeError(), file_prefix);
    before = std::move(*copy);
  }

  llvm::Expected<bool> changed = pipeline.Run(**module);
  if (!changed)
    return errors.failInput(changed.takeError(), file_prefix);
  // Without passes the module is the one verified above; with --verify-each
  // the last pass's result has been verified already.
  bool verified = pipeline.pass_count() == 0 || verify_each;
  if (!no_verify && !verified) {
    if (llvm::Error err = VerifyHloModule(**module, threads))
      return errors.failInput(std::move(err), file_prefix + "after the passes: ");
  }

  if (check_numerics) {
    NumericsCheckOptions numerics_options;
    numerics_options.seed = check_numerics_seed;
    numerics_options.eval = EvalOptionsFromCommandLine();
    numerics_options.eval.threads = tools::getThreadsOption();
    numerics_options.reference_name = "as read";
    numerics_options.candidate_name = "after the passes";
    if (llvm::Error err = CheckNumericsOnLaunch(*before, **module, numerics_options))
      return errors.failInput(std::move(err), file_prefix + "--check-numerics: ");
  }

  bool as_proto = emit.getNumOccurrences()
                      ? emit == EmitFormat::kProto
                      : llvm::StringRef(output_path).endswith(".pb");
  llvm::Error written =
      as_proto ? writeOutputAtomically(output_path, SerializeHloModuleProto(**module))
               : writeOutputAtomically(output_path, [&](llvm::raw_ostream &os) {
                   (*module)->Print(os, threads);
                 });
  if (llvm::Error err = std::move(written))
    return errors.failInput(std::move(err));
  // The process ends here: the operating system takes the module's memory
  // back at once, while destroying a million instructions one by one took a
  // tenth of the run (docs/performance.md). A leak-checking build
  // (AddressSanitizer) destroys them, so that a real leak stays visible.
  if (!kLeakCheckedBuild) {
    (void)module->release();
    (void)before.release();
  }
  return ExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return Main(argc, argv);
}
