//===- hlo-run.cpp - Run an HLO module on every device and print results --===//
//
//   hlo-run [--seed S] [--input D:P=FILE.npy ...] [--output-dir DIR] FILE.hlo
//   hlo-run --compare OTHER.hlo FILE.hlo
//
// Parameters are seeded random values (RandomInputs.h) unless a .npy file
// gives one; --replica-count / --num-partitions override the module header.
// Every device's result is printed on its own line in HLO literal syntax,
// `device 0: f32[2]{0} {1, 2}`. With --compare both modules run on the same
// inputs and every output of every device is compared. --max-steps,
// --max-work and --max-memory are the interpreter's options
// (loom/hlo/eval/EvalCommandLine.h), --threads every tool's
// (loom/tools/ThreadsOption.h).
//
// Exit codes: 0 success, 1 bad input / failed run / mismatch, 2 bad usage.
// docs/hlo-run.md is the user's guide.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/eval/EvalCommandLine.h"
#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/NpyLiteral.h"
#include "loom/hlo/eval/NumericsCheck.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/proto/HloModuleLoader.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/support/Error.h"
#include "loom/support/InputFile.h"
#include "loom/tools/LaunchSizeOptions.h"
#include "loom/tools/ThreadsOption.h"
#include "loom/tools/ToolErrors.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace loom;
using namespace loom::hlo;

namespace {

llvm::cl::OptionCategory category("hlo-run options");

llvm::cl::opt<std::string> input_file(llvm::cl::Positional, llvm::cl::desc("<FILE.hlo | FILE.pb | ->"),
                                      llvm::cl::Required, llvm::cl::cat(category));
llvm::cl::opt<uint64_t> seed("seed", llvm::cl::value_desc("S"),
                             llvm::cl::desc("Seed of the random parameter values (default 0)"),
                             llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::list<std::string>
    inputs("input", llvm::cl::value_desc("DEVICE:PARAM=FILE.npy"),
           llvm::cl::desc("Take parameter PARAM (its number or its name) of device DEVICE "
                          "(or of every device when DEVICE is '*') from a .npy file; "
                          "repeatable"),
           llvm::cl::cat(category));
llvm::cl::opt<std::string>
    output_dir("output-dir", llvm::cl::value_desc("DIR"),
               llvm::cl::desc("Also write every device's result as .npy files: "
                              "DIR/device<D>.npy, or DIR/device<D>_<i>.npy per tuple element"),
               llvm::cl::cat(category));
llvm::cl::opt<std::string>
    compare_file("compare", llvm::cl::value_desc("OTHER.hlo"),
                 llvm::cl::desc("Run OTHER.hlo (the reference) and FILE.hlo on the same inputs "
                                "and compare every output of every device; exit 1 on a mismatch. "
                                "Either may be HLO text or an HloModuleProto"),
                 llvm::cl::cat(category));
llvm::cl::opt<double> rtol_flag("rtol", llvm::cl::value_desc("R"),
                                llvm::cl::desc("Relative tolerance of float comparisons (default: "
                                               "per element type, see docs/hlo-run.md)"),
                                llvm::cl::cat(category));
llvm::cl::opt<double> atol_flag("atol", llvm::cl::value_desc("A"),
                                llvm::cl::desc("Absolute tolerance of float comparisons (default: "
                                               "per element type, see docs/hlo-run.md)"),
                                llvm::cl::cat(category));
llvm::cl::opt<int64_t>
    max_elements("max-elements", llvm::cl::value_desc("N"),
                 llvm::cl::desc("Print at most this many elements of an array; the middle of "
                                "longer ones is elided (default 64)"),
                 llvm::cl::init(64), llvm::cl::cat(category));

llvm::cl::opt<bool>
    same_inputs("same-inputs",
                llvm::cl::desc("Give every parameter the same random values on every device "
                               "(parameters with sharding={replicated} always get them)"),
                llvm::cl::cat(category));
llvm::cl::opt<bool> no_verify("no-verify",
                              llvm::cl::desc("Do not verify the module(s) before running them"),
                              llvm::cl::cat(category));

const tools::ToolErrors errors("hlo-run");

int Fail(llvm::Error err) { return errors.failInput(std::move(err)); }

/// The interpreter's options of the command line, with the tool's --threads.
EvalOptions ToolEvalOptions() {
  EvalOptions options = EvalOptionsFromCommandLine();
  options.threads = tools::getThreadsOption();
  return options;
}

llvm::Expected<std::unique_ptr<HloModule>> LoadModule(llvm::StringRef path) {
  auto text = readInputBuffer(path);
  if (!text)
    return text.takeError();
  // The interpreter's threads parse and verify a large module too.
  unsigned threads = tools::getThreadCount();
  HloParseOptions parse_options;
  parse_options.threads = threads;
  // HLO text or a binary HloModuleProto, by content (docs/hlo-proto.md).
  auto module = LoadHloModule(std::move(*text), path, parse_options);
  if (!module)
    return module.takeError();
  // XLA's tests set the launch size in code; the flags play that part.
  if (std::optional<int64_t> replicas = tools::getReplicaCountOption())
    (*module)->SetHeaderAttribute("replica_count", std::to_string(*replicas));
  if (std::optional<int64_t> partitions = tools::getNumPartitionsOption())
    (*module)->SetHeaderAttribute("num_partitions", std::to_string(*partitions));
  if (no_verify)
    return module;
  if (auto err = VerifyHloModule(**module, threads))
    return makeError(path + ": the module does not verify:\n" + llvm::toString(std::move(err)));
  return module;
}

// One --input: which device(s) and parameter, and the file.
struct InputSpec {
  std::optional<int64_t> device; // nullopt: every device
  std::string param;             // a parameter number or name
  std::string path;
};

std::optional<InputSpec> ParseInputSpec(llvm::StringRef text) {
  auto [target, path] = text.split('=');
  auto [device, param] = target.split(':');
  InputSpec spec;
  spec.path = path.str();
  spec.param = param.str();
  if (path.empty() || param.empty())
    return std::nullopt;
  if (device != "*") {
    int64_t d;
    if (device.getAsInteger(10, d) || d < 0)
      return std::nullopt;
    spec.device = d;
  }
  return spec;
}

llvm::Error ApplyInput(const InputSpec &spec, const HloModule &module,
                       std::vector<std::vector<Literal>> &args) {
  const HloComputation *entry = module.entry_computation();
  int64_t devices = static_cast<int64_t>(args.size());
  if (spec.device && *spec.device >= devices)
    return makeError(llvm::Twine("--input names device ") + llvm::Twine(*spec.device) +
                     ", which does not exist: the module runs on " + llvm::Twine(devices) +
                     (devices == 1 ? " device" : " devices"));
  // A number is the parameter number; anything else a parameter's name.
  int64_t param = -1;
  if (llvm::StringRef(spec.param).getAsInteger(10, param)) {
    param = -1;
    for (const HloInstruction *p : entry->parameter_instructions())
      if (p && p->name() == spec.param)
        param = p->parameter_number();
    if (param < 0)
      return makeError("--input names parameter '" + spec.param +
                       "' but the entry computation has no parameter of that name");
  }
  if (param < 0 || param >= entry->num_parameters())
    return makeError("--input names parameter " + spec.param + " but the entry computation has " +
                     llvm::Twine(entry->num_parameters()) +
                     (entry->num_parameters() == 1 ? " parameter" : " parameters"));
  auto literal = ReadNpyFile(spec.path, entry->parameter_instruction(param)->shape());
  if (!literal)
    return literal.takeError();
  for (int64_t d = 0; d < devices; ++d)
    if (!spec.device || *spec.device == d)
      args[d][param] = *literal;
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::vector<Literal>>>
MakeArguments(const HloModule &module, const std::vector<InputSpec> &specs) {
  auto args = MakeRandomArguments(module, seed, ToolEvalOptions(), same_inputs);
  if (!args)
    return args.takeError();
  for (const InputSpec &spec : specs)
    if (auto err = ApplyInput(spec, module, *args))
      return err;
  return args;
}

// device<D>.npy, or device<D>_<i>[_<j>...].npy for tuple elements; tokens
// have no data and are skipped.
llvm::Error WriteResult(const Literal &value, const std::string &stem) {
  if (value.IsToken())
    return llvm::Error::success();
  if (!value.IsTuple()) {
    llvm::SmallString<256> path(output_dir);
    llvm::sys::path::append(path, stem + ".npy");
    return WriteNpyFile(path, value);
  }
  const auto &elements = value.tuple_elements();
  for (size_t i = 0; i < elements.size(); ++i)
    if (auto err = WriteResult(elements[i], stem + "_" + std::to_string(i)))
      return err;
  return llvm::Error::success();
}

llvm::Error WriteResults(const std::vector<Literal> &results) {
  if (std::error_code ec = llvm::sys::fs::create_directories(output_dir))
    return makeError("cannot create '" + output_dir + "': " + ec.message());
  for (size_t d = 0; d < results.size(); ++d)
    if (auto err = WriteResult(results[d], "device" + std::to_string(d)))
      return err;
  return llvm::Error::success();
}

/// A module whose header names no launch size runs on one device; XLA's
/// tests set the size in code, so say how to give it.
std::string LaunchSizeHint(const HloModule &module, llvm::StringRef message) {
  return tools::getLaunchSizeHint(module.FindHeaderAttribute("replica_count") ||
                                      module.FindHeaderAttribute("num_partitions"),
                                  message);
}

int RunOne(const HloModule &module, const std::vector<std::vector<Literal>> &args) {
  auto results = RunSpmd(module, args, ToolEvalOptions(), nullptr);
  if (!results) {
    std::string message = llvm::toString(results.takeError());
    return Fail(makeError(input_file + ": " + message + LaunchSizeHint(module, message)));
  }
  for (size_t d = 0; d < results->size(); ++d)
    llvm::outs() << "device " << d << ": " << (*results)[d].ToString(max_elements) << "\n";
  llvm::outs().flush();
  if (!output_dir.empty())
    if (auto err = WriteResults(*results))
      return Fail(std::move(err));
  return tools::ExitSuccess;
}

int RunCompare(const HloModule &module, const std::vector<std::vector<Literal>> &args) {
  auto reference = LoadModule(compare_file);
  if (!reference)
    return Fail(reference.takeError());
  NumericsCheckOptions options;
  if (rtol_flag.getNumOccurrences())
    options.rtol = rtol_flag;
  if (atol_flag.getNumOccurrences())
    options.atol = atol_flag;
  options.eval = ToolEvalOptions();
  options.reference_name = compare_file;
  options.candidate_name = input_file;
  auto summary = CompareModules(**reference, module, args, options);
  if (!summary)
    return Fail(summary.takeError());
  llvm::outs() << "compared " << input_file << " with " << compare_file << " on " << args.size()
               << " devices: " << summary->ToString() << "\n";
  if (summary->ok())
    return tools::ExitSuccess;
  llvm::outs() << "first difference: " << summary->first_mismatch << "\n";
  llvm::outs().flush();
  return Fail(makeError(input_file + " differs from " + compare_file));
}

// The usage rules the option parser cannot express; empty when they hold.
std::string UsageProblem() {
  bool tolerances = rtol_flag.getNumOccurrences() || atol_flag.getNumOccurrences();
  if (!output_dir.empty() && !compare_file.empty())
    return "--output-dir cannot be used with --compare";
  if (tolerances && compare_file.empty())
    return "--rtol and --atol need --compare";
  if ((rtol_flag.getNumOccurrences() && rtol_flag < 0) ||
      (atol_flag.getNumOccurrences() && atol_flag < 0) || max_elements < 0)
    return "--rtol, --atol and --max-elements must not be negative";
  if (std::string problem = tools::getLaunchSizeOptionsProblem(); !problem.empty())
    return problem;
  for (const std::string &text : inputs)
    if (!ParseInputSpec(text))
      return "bad --input '" + text + "': expected DEVICE:PARAM=FILE.npy";
  if (std::string problem = tools::getThreadsOptionProblem(); !problem.empty())
    return problem;
  return EvalCommandLineProblem();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --threads is listed with the interpreter's options, whose devices it runs.
  tools::addThreadsOptionToCategory(EvalOptionCategory());
  tools::addLaunchSizeOptionsToCategory(category, "Run on", "(also the --compare reference)");
  llvm::cl::HideUnrelatedOptions({&category, &EvalOptionCategory()});
  if (!errors.parseCommandLine(
          argc, argv,
          "hlo-run: run an HLO module on every device of its SPMD launch\n\n"
          "Prints `device N: <result>` per device. Parameters are seeded random values\n"
          "unless --input gives them. See docs/hlo-run.md.\n"))
    return tools::ExitBadUsage;
  if (std::string problem = UsageProblem(); !problem.empty())
    return errors.failUsage(problem);
  std::vector<InputSpec> specs;
  for (const std::string &text : inputs)
    specs.push_back(*ParseInputSpec(text));

  auto module = LoadModule(input_file);
  if (!module)
    return Fail(module.takeError());
  auto args = MakeArguments(**module, specs);
  if (!args)
    return Fail(args.takeError());
  return compare_file.empty() ? RunOne(**module, *args) : RunCompare(**module, *args);
}
