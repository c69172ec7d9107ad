//===- HloPassInterface.h - What every HLO pass implements ---------------===//
//
// A pass transforms one HloModule in place. Run() returns whether the module
// changed; a pass must say "changed" only when it did change something, since
// pipelines use the flag to decide what to print and re-verify. Failures are
// llvm::Error values: a pass never aborts on user input.
//
// Remarks: a driver (hlo-opt --remarks) may hand every pass a stream. A pass
// that has something to say about its decisions writes one line per remark
// to it, e.g. `main/dot.3: fused (...)` or `main/dot.3: missed: <reason>`.
// Without a stream, remarks are not produced at all.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASS_HLOPASSINTERFACE_H
#define LOOM_HLO_PASS_HLOPASSINTERFACE_H

#include "loom/hlo/ir/HloModule.h"

#include "llvm/ADT/StringRef.h"
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

private:
  llvm::raw_ostream *remark_stream_ = nullptr;
};

} // namespace loom::hlo

#endif
