//===- PassManager.h - Runs backend passes over a program -------*- C++ -*-===//
//
// The one runner of backend passes: bir-opt, the fuzzers, sendrecv-study and
// the tests build a PassManager from a list of names or from the pipeline
// table and run it. It gives each pass its PassContext (remarks and
// statistics), verifies, prints and times around the passes as asked, and
// words its errors the same for every caller (docs/bir.md, "The pass
// manager").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_PASSES_PASSMANAGER_H
#define LOOM_BIR_PASSES_PASSMANAGER_H

#include "loom/bir/ir/Launch.h"
#include "loom/bir/passes/Pass.h"
#include "loom/bir/passes/Pipeline.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace loom::bir {

/// What passes report while they run: remark lines, written as they come,
/// and named counters, summed per pass.
class PassContext {
public:
  /// Remarks go to OS; null drops them.
  explicit PassContext(llvm::raw_ostream *RemarkStream = nullptr)
      : RemarkStream(RemarkStream) {}

  llvm::raw_ostream *getRemarkStream() const { return RemarkStream; }
  void addStatistic(llvm::StringRef Pass, llvm::StringRef Description,
                    uint64_t N);
  /// The counters, by pass and then description.
  const std::map<std::pair<std::string, std::string>, uint64_t> &
  statistics() const {
    return Stats;
  }
  /// LLVM's -stats layout: a banner, then "<value> <pass> - <description>"
  /// per counter; nothing when no counter was touched.
  void printStatistics(llvm::raw_ostream &OS) const;

private:
  llvm::raw_ostream *RemarkStream;
  std::map<std::pair<std::string, std::string>, uint64_t> Stats;
};

/// The error of a program that does not verify after a pass ("after pass
/// 'X': ..." or "after the passes: ..."): a bug of the pass rather than of
/// its input, which fuzzers tell apart with isA<PassVerifyError>().
class PassVerifyError : public llvm::ErrorInfo<PassVerifyError> {
public:
  static char ID;
  explicit PassVerifyError(std::string Message) : Message(std::move(Message)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string Message;
};

struct PassManagerOptions {
  /// Verify after every pass ("after pass 'X': ..."); otherwise once after
  /// the last ("after the passes: ...") when VerifyAtEnd.
  bool VerifyEach = false;
  bool VerifyAtEnd = true;
  /// Print the text form to PrintStream after every pass, and before every
  /// pass named in PrintBefore.
  bool PrintAfterAll = false;
  std::vector<std::string> PrintBefore;
  llvm::raw_ostream *PrintStream = nullptr; // null: stderr
  /// Time every pass and print the report to TimingStream at the end.
  bool TimePasses = false;
  llvm::raw_ostream *TimingStream = nullptr; // null: stderr
  /// Remarks go here; null: none.
  llvm::raw_ostream *RemarkStream = nullptr;
  /// Count instructions added and removed per pass, and collect the
  /// passes' own counters.
  bool Statistics = false;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions Opts = {});

  /// Passes by name, every name checked (createPass's error for an unknown
  /// one).
  static llvm::Expected<PassManager>
  fromNames(llvm::ArrayRef<std::string> Names, const BackendOptions &Backend,
            PassManagerOptions Opts = {});
  /// The active pass entries of a pipeline table, in order.
  static llvm::Expected<PassManager>
  fromPipeline(llvm::ArrayRef<PipelineEntry> Pipeline,
               const BackendOptions &Backend, PassManagerOptions Opts = {});

  PassManager(PassManager &&) = default;
  PassManager &operator=(PassManager &&) = default;

  void addPass(std::unique_ptr<BirPass> P) { Passes.push_back(std::move(P)); }
  size_t size() const { return Passes.size(); }
  bool empty() const { return Passes.empty(); }

  /// Runs every pass in order; true if any changed the program. The errors:
  /// "pass 'X' failed: <why>", "after pass 'X': <verifier error>", "after
  /// the passes: <verifier error>". The timing report is printed on every
  /// way out.
  llvm::Expected<bool> run(Program &P);

  /// Runs the passes on every device's program of a launch, in device
  /// order; true if any changed. An error is prefixed "device D: ".
  llvm::Expected<bool> runOnLaunch(Launch &L);

  const PassContext &getContext() const { return *Context; }

private:
  PassManagerOptions Opts;
  std::vector<std::unique_ptr<BirPass>> Passes;
  std::unique_ptr<PassContext> Context;
};

} // namespace loom::bir

#endif
