//===- HloPassInterface.h - What every HLO pass implements ---------------===//
//
// A pass transforms one HloModule in place. Run() returns whether the module
// changed; a pass must say "changed" only when it did change something, since
// pipelines use the flag to decide what to print and re-verify. Failures are
// llvm::Error values: a pass never aborts on user input.
//
// Remarks: a driver (hlo-opt --remarks) may hand every pass a stream. A pass
// that has something to say about its decisions calls Remark(), which writes
// one line `<computation>/<instruction>: <text>` per instruction, e.g.
// `main/dot.3: fused (...)` or `main/dot.3: missed: <reason>`, at most once
// per instruction between two ResetRemarks() (OpExpanderPass::Run resets at
// its start and end). Without a stream, nothing is written.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASS_HLOPASSINTERFACE_H
#define LOOM_HLO_PASS_HLOPASSINTERFACE_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::hlo {

class HloPassInterface {
public:
  virtual ~HloPassInterface() = default;

  /// The name the registry and the tools know the pass by.
  virtual llvm::StringRef name() const = 0;

  /// Transforms `module`; true when it changed.
  virtual llvm::Expected<bool> Run(HloModule &module) = 0;

  /// Where remarks go; nullptr (the default) turns them off.
  void SetRemarkStream(llvm::raw_ostream *stream) { remark_stream_ = stream; }
  llvm::raw_ostream *remark_stream() const { return remark_stream_; }

protected:
  /// `<computation>/<instruction>: <text>` on the remark stream, unless
  /// remarks are off or `instruction` already has its remark.
  void Remark(const HloInstruction &instruction, const llvm::Twine &text);
  /// Whether Remark() would write a line for `instruction` (to skip
  /// building an expensive text).
  bool WantsRemark(const HloInstruction &instruction) const {
    return remark_stream_ && !remarked_.contains(&instruction);
  }
  /// Every instruction may have a remark again.
  void ResetRemarks() { remarked_.clear(); }

private:
  llvm::raw_ostream *remark_stream_ = nullptr;
  llvm::DenseSet<const HloInstruction *> remarked_;
};

} // namespace loom::hlo

#endif
