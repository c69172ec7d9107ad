//===- HloCorpusTest.cpp - Round-trip every module of the shared corpus ---===//
//
// hlo-corpus-test [--no-verify] <corpus dir>
//
// For every .hlo under <corpus dir>/hlo: parse, verify, print, parse, print.
// The two prints must be byte-identical and the module parsed from the first
// print must be structurally equal to the original. In a verified module,
// every instruction whose opcode has a ShapeInference rule must have the
// shape the rule infers (what the parser would give it if the text left the
// shape out). Every module under
// <corpus dir>/hlo-invalid must round-trip too and then fail verification.
// Prints one line per failure and `N passed, N failed`; exits 1 on any
// failure. A missing corpus (a fresh clone has none) is a skip.
//
// The four JAX Llama-3.1 FSDP training-step dumps also go through
// neuron_looped_einsum_replacer: each has 23 candidate dots (one remark
// each), none fused by default, 12 with --collective-matmul-provenance,
// each fused one naming its proof and each missed one the all-gather rule
// (docs/collective-matmul.md, "Provenance mode").
//
// A few corpus modules are not valid as stored; they are listed below with
// the reason and checked to be refused for exactly that reason, so a change
// that starts accepting them (or refuses them differently) is noticed.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloStructuralEquality.h"
#include "loom/hlo/ir/ShapeInference.h"
#include "loom/hlo/parser/HloClone.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using namespace loom::hlo;

namespace {

/// --no-verify: check the round trip alone (to tell parser and printer
/// problems from verifier ones).
bool verify = true;

enum class Refusal {
  kByParser,   // damaged text that no parser can accept; XLA's refuses it too
  kByVerifier, // parses and round-trips, but breaks a rule XLA's verifier has
};

struct KnownInvalid {
  const char *path_suffix;
  Refusal refused;
  const char *expected_error; // a substring of the error
  const char *why;
};

constexpr KnownInvalid kKnownInvalid[] = {
    {"torch-neuronx-graphhelper-wenboqian/gpt2_tp_2_n_layer_2_output0.hlo", Refusal::kByParser,
     ":109:3: duplicate instruction name 'transpose.166'",
     "hand-edited in its repository: defines %transpose.166 twice in one computation (one "
     "line marked `// temp`), and line 109 has a stray `pred[4,128]{1,0}` after an operand"},
    {"torch-neuronx-graphhelper-wenboqian/pp4_tp8_dp1.hlo", Refusal::kByParser,
     ":11:60: instruction 'all-reduce.52': unknown operand 'multiply.42'",
     "an excerpt: uses %multiply.42, %constant.5, %p8.72 and %AddComputation.48, which it "
     "never defines, and has no ROOT"},
    // docs/hlo-verifier.md, "Corpus modules XLA itself refuses": the XLA tests
    // these come from parse them without verification.
    {"xla/collective_ops_utils_test__DetectsSingleHost16Devices.hlo", Refusal::kByVerifier,
     "instruction '_': all-gather result f32[512]",
     "groups of 8 ([2,8]<=[16]) but the all-gather grows f32[128] by 4"},
    {"xla/collective_ops_utils_test__DetectsMultiPartitionNonRailAligned.hlo",
     Refusal::kByVerifier, "instruction '_': all-gather result f32[1536]",
     "groups of 64 but the all-gather grows f32[128] by 12"},
    {"xla/collective_ops_utils_test__DetectsMultiPartitionWith8DevicePartitions.hlo",
     Refusal::kByVerifier, "instruction '_': all-gather result f32[2048]",
     "groups of 64 but the all-gather grows f32[128] by 16"},
    {"xla/p2p_schedule_preparation_test__PipelinedP2PChain2Transformed.hlo",
     Refusal::kByVerifier, "instruction 'while_result'",
     "while_result declares a shape other than its operand's"},
};

const KnownInvalid *FindKnownInvalid(llvm::StringRef path) {
  for (const KnownInvalid &entry : kKnownInvalid)
    if (path.endswith(entry.path_suffix))
      return &entry;
  return nullptr;
}

std::vector<std::string> FindModules(llvm::StringRef dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".hlo")
      files.push_back(it->path());
  llvm::sort(files);
  return files;
}

std::string FirstLine(llvm::StringRef message) { return message.split('\n').first.str(); }

/// 1-based line where two texts first differ.
size_t FirstDifferingLine(llvm::StringRef a, llvm::StringRef b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i])
    ++i;
  return a.take_front(i).count('\n') + 1;
}

/// Why `module` does not round-trip, or nullopt if it does.
std::optional<std::string> CheckPrintParsePrint(const HloModule &module) {
  std::string first = module.ToString();
  auto reparsed = ParseHloModule(first, "<first print>");
  if (!reparsed)
    return "parse of the print: " + FirstLine(llvm::toString(reparsed.takeError()));
  std::string why;
  if (!StructurallyEqual(module, **reparsed, &why))
    return "not structurally equal after printing: " + why;
  std::string second = (*reparsed)->ToString();
  if (first != second)
    return "printing is not idempotent: prints differ at line " +
           std::to_string(FirstDifferingLine(first, second));
  return std::nullopt;
}

/// Checks a module that must be refused, for the listed reason.
std::optional<std::string> CheckKnownInvalid(llvm::StringRef text, llvm::StringRef file,
                                             const KnownInvalid &entry) {
  auto module = ParseHloModule(text, file);
  std::string message;
  if (entry.refused == Refusal::kByParser) {
    if (module)
      return std::string("parsed, but it is listed as damaged: ") + entry.why;
    message = llvm::toString(module.takeError());
  } else {
    if (!module)
      return "parse: " + FirstLine(llvm::toString(module.takeError()));
    if (std::optional<std::string> why = CheckPrintParsePrint(**module))
      return why;
    if (!verify)
      return std::nullopt;
    llvm::Error error = VerifyHloModule(**module);
    if (!error)
      return std::string("verification accepted it, but it is listed as invalid: ") +
             entry.why;
    message = llvm::toString(std::move(error));
  }
  if (llvm::StringRef(message).find(entry.expected_error) == llvm::StringRef::npos)
    return "refused with an unexpected error: " + FirstLine(message);
  llvm::outs() << "note: " << file << " is not valid HLO (" << entry.why
               << "); refused as expected\n";
  return std::nullopt;
}

/// The first instruction whose written shape is not the one ShapeInference
/// gives it, or nullopt.
std::optional<std::string> CheckInferredShapes(const HloModule &module) {
  for (const HloComputation *computation : module.computations())
    for (const HloInstruction *inst : computation->instructions()) {
      if (!ShapeInference::HasRule(inst->opcode()) || inst->async_wrapped_opcode())
        continue;
      llvm::Expected<Shape> inferred = ShapeInference::InferInstructionShape(*inst);
      if (!inferred) {
        // Forms a rule does not cover (several-operand collective-permute,
        // sparse dot, ...) say so; anything else is a disagreement.
        std::string message = llvm::toString(inferred.takeError());
        if (llvm::StringRef(message).contains("no inference rule"))
          continue;
        return ("infer " + inst->name() + ": " + message).str();
      }
      if (!inferred->Compatible(inst->shape()))
        return ("infer " + inst->name() + ": the rule gives " + inferred->ToString(false) +
                ", the module has " + inst->shape().ToString(false))
            .str();
    }
  return std::nullopt;
}

/// The Llama dumps whose collective-matmul figures are asserted.
bool IsLlamaDump(llvm::StringRef path) {
  return llvm::sys::path::filename(path).startswith("tools__benchmarks__hlo_llama31_");
}

/// Remark lines of neuron_looped_einsum_replacer run on a copy of `module`.
std::vector<std::string> ReplacerRemarks(const HloModule &module, bool provenance,
                                         std::string *error) {
  std::unique_ptr<HloModule> copy = llvm::cantFail(CloneModule(module));
  loom::hlo::CollectiveMatmulOptions options;
  options.provenance = provenance;
  NeuronLoopedEinsumReplacer pass(options);
  std::string text;
  llvm::raw_string_ostream stream(text);
  pass.SetRemarkStream(&stream);
  if (auto changed = pass.Run(*copy); !changed)
    *error = llvm::toString(changed.takeError());
  else if (llvm::Error verify = VerifyHloModule(*copy))
    *error = "the rewritten module does not verify: " + FirstLine(llvm::toString(std::move(verify)));
  stream.flush();
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n', -1, false);
  return std::vector<std::string>(lines.begin(), lines.end());
}

/// Why a Llama dump's collective-matmul figures are not 23 candidates, 0
/// fused by default, 12 with provenance, or nullopt.
std::optional<std::string> CheckLlamaFigures(const HloModule &module) {
  constexpr size_t kCandidates = 23, kFusedWithProvenance = 12;
  std::string error;
  for (bool provenance : {false, true}) {
    std::vector<std::string> remarks = ReplacerRemarks(module, provenance, &error);
    if (!error.empty())
      return error;
    size_t fused = 0;
    for (llvm::StringRef line : remarks) {
      if (line.contains(": fused (")) {
        ++fused;
        if (!line.contains(", weight=rhs via dynamic-slice of loop-invariant %"))
          return "a fused remark does not name the proof: " + line.str();
      } else if (!line.contains(": missed: ")) {
        return "not a remark of the replacer: " + line.str();
      } else if (provenance && !line.contains(": missed: all-gather dimension ")) {
        return "missed with provenance for a reason other than the all-gather rule: " +
               line.str();
      }
    }
    const size_t want = provenance ? kFusedWithProvenance : 0;
    if (remarks.size() != kCandidates || fused != want)
      return std::string(provenance ? "with" : "without") + " provenance: " +
             std::to_string(fused) + " of " + std::to_string(remarks.size()) +
             " candidate dots fused, expected " + std::to_string(want) + " of " +
             std::to_string(kCandidates);
  }
  return std::nullopt;
}

/// Why the module in `text` does not round-trip, or nullopt if it does.
std::optional<std::string> CheckRoundTrip(llvm::StringRef text, llvm::StringRef file) {
  if (const KnownInvalid *entry = FindKnownInvalid(file))
    return CheckKnownInvalid(text, file, *entry);
  auto original = ParseHloModule(text, file);
  if (!original)
    return "parse: " + FirstLine(llvm::toString(original.takeError()));
  if (verify) {
    if (llvm::Error error = VerifyHloModule(**original))
      return "verify: " + FirstLine(llvm::toString(std::move(error)));
    if (std::optional<std::string> why = CheckInferredShapes(**original))
      return why;
    if (IsLlamaDump(file))
      if (std::optional<std::string> why = CheckLlamaFigures(**original))
        return "collective matmul: " + *why;
  }
  return CheckPrintParsePrint(**original);
}

/// Why the invalid module in `text` was not refused, or nullopt if it was.
std::optional<std::string> CheckRefused(llvm::StringRef text, llvm::StringRef file) {
  auto module = ParseHloModule(text, file);
  if (!module)
    return "parse (must succeed): " + FirstLine(llvm::toString(module.takeError()));
  if (std::optional<std::string> why = CheckPrintParsePrint(**module))
    return why;
  if (!verify)
    return std::nullopt;
  llvm::Error error = VerifyHloModule(**module);
  if (!error)
    return std::string("verification accepted a module it must refuse");
  // The refusal must say where the problem is, not just that there is one.
  std::string message = llvm::toString(std::move(error));
  if (llvm::StringRef(message).find("instruction '") == llvm::StringRef::npos)
    return "the verifier's error names no instruction: " + FirstLine(message);
  return std::nullopt;
}

} // namespace

int main(int argc, char **argv) {
  std::string corpus = "../shared/corpus";
  for (int i = 1; i < argc; ++i) {
    if (llvm::StringRef(argv[i]) == "--no-verify")
      verify = false;
    else
      corpus = argv[i];
  }
  llvm::SmallString<256> valid_dir(corpus), invalid_dir(corpus);
  llvm::sys::path::append(valid_dir, "hlo");
  llvm::sys::path::append(invalid_dir, "hlo-invalid");
  if (!llvm::sys::fs::is_directory(valid_dir)) {
    llvm::outs() << "0 passed, 0 failed, 1 skipped: no corpus at " << corpus << "\n";
    return 0;
  }

  int passed = 0, failed = 0;
  auto run = [&](llvm::StringRef dir, auto check) {
    for (const std::string &path : FindModules(dir)) {
      auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false);
      std::optional<std::string> why;
      if (!buffer)
        why = "cannot read: " + buffer.getError().message();
      else
        why = check((*buffer)->getBuffer(), path);
      if (!why) {
        ++passed;
        continue;
      }
      ++failed;
      llvm::outs() << "FAIL " << path << ": " << *why << "\n";
    }
  };
  run(valid_dir, CheckRoundTrip);
  if (llvm::sys::fs::is_directory(invalid_dir))
    run(invalid_dir, CheckRefused);
  llvm::outs() << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
