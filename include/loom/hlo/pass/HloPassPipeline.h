//===- HloPassPipeline.h - Run passes in order, with checks and reports --===//
//
// A pipeline owns its passes and runs them in the order they were added.
// It is itself a pass, so pipelines nest. Options, all off by default:
//
//   verify_each      VerifyHloModule after every pass; a failure reads
//                    "after pass 'X': <problems>" and stops the pipeline.
//   print_after_all  after every pass, print the module to `print_stream`
//                    (stderr if null) under the header line
//                    `// -----// IR after X (changed) //----- //`
//                    or `(no change)`, the MLIR/LLVM-style marker.
//   time_passes      time every pass (and the verification after it) and
//                    print a table to `timing_stream` (stderr if null) when
//                    Run() ends, also when a pass failed.
//
// A remark stream set on the pipeline is handed to every pass it runs.
// Run() is "changed" when any pass changed the module.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASS_HLOPASSPIPELINE_H
#define LOOM_HLO_PASS_HLOPASSPIPELINE_H

#include "loom/hlo/pass/HloPassInterface.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace loom::hlo {

struct HloPassPipelineOptions {
  bool verify_each = false;
  bool print_after_all = false;
  llvm::raw_ostream *print_stream = nullptr;
  bool time_passes = false;
  llvm::raw_ostream *timing_stream = nullptr;
};

class HloPassPipeline : public HloPassInterface {
public:
  explicit HloPassPipeline(std::string name = "pipeline", HloPassPipelineOptions options = {})
      : name_(std::move(name)), options_(options) {}

  llvm::StringRef name() const override { return name_; }
  llvm::Expected<bool> Run(HloModule &module) override;

  /// Appends `pass`; returns it so the caller can configure it.
  HloPassInterface &AddPass(std::unique_ptr<HloPassInterface> pass);
  template <typename PassT, typename... Args> PassT &AddPass(Args &&...args) {
    auto pass = std::make_unique<PassT>(std::forward<Args>(args)...);
    PassT &ref = *pass;
    AddPass(std::move(pass));
    return ref;
  }

  int64_t pass_count() const { return static_cast<int64_t>(passes_.size()); }
  const HloPassPipelineOptions &options() const { return options_; }

private:
  std::string name_;
  HloPassPipelineOptions options_;
  std::vector<std::unique_ptr<HloPassInterface>> passes_;
};

} // namespace loom::hlo

#endif
