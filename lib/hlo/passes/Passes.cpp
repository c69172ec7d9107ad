#include "loom/hlo/passes/Passes.h"

#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/pass/PassRegistry.h"
#include "loom/hlo/passes/HloDCE.h"
#include "loom/hlo/passes/NeuronLoopedEinsumReplacer.h"
#include "loom/hlo/passes/NeuronLoopedEinsumTokenReplacer.h"

namespace loom::hlo {

void RegisterAllHloPasses() {
  RegisterHloPass("hlo_verifier", [] { return std::make_unique<HloVerifier>(); });
  RegisterHloPass("hlo_dce", [] { return std::make_unique<HloDCE>(); });
  RegisterHloPass("neuron_looped_einsum_replacer",
                  [] { return std::make_unique<NeuronLoopedEinsumReplacer>(); });
  RegisterHloPass("neuron_looped_einsum_token_replacer",
                  [] { return std::make_unique<NeuronLoopedEinsumTokenReplacer>(); });
}

} // namespace loom::hlo
