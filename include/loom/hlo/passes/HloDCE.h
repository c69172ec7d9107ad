//===- HloDCE.h - Remove instructions nothing needs ----------------------===//
//
// Removes, in every computation, the instructions whose value reaches
// neither the root nor an instruction with a side effect. Parameters stay
// (they are the signature) and so does anything with a side effect.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_PASSES_HLODCE_H
#define LOOM_HLO_PASSES_HLODCE_H

#include "loom/hlo/pass/HloPassInterface.h"

namespace loom::hlo {

class HloDCE : public HloPassInterface {
public:
  llvm::StringRef name() const override { return "hlo_dce"; }
  llvm::Expected<bool> Run(HloModule &module) override;
};

} // namespace loom::hlo

#endif
