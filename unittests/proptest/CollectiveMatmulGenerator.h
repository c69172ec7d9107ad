//===- CollectiveMatmulGenerator.h - Random modules for the fusion --------===//
//
// Writes random, valid HLO text modules built around the idiom
// neuron_looped_einsum_replacer folds: a dot one of whose operands is an
// all-gather of a weight. Every choice the fusion depends on is drawn:
//   * the matcher shape: dot(ag(w), x), dot(reshape(ag(w)), x), dot(x, ag(w)),
//     dot(x, reshape(ag(w))), dot(reshape(gte(ag(w0, w1, ...), i)), x);
//   * bf16 or f32; local weight rank 2 to 4; every all-gather dimension;
//   * a plain entry computation, or a while loop whose body gathers a
//     loop-carried weight `convert(get-tuple-element(param))`;
//   * combined all-gathers (either tuple index feeds the dot, sometimes
//     more than five operands) and rank-0 token operands whose
//     get-tuple-element is used (and carried around the loop);
//   * 1 to 3 replica groups of 2 to 8 devices: explicit contiguous,
//     explicit shuffled, iota, transposed iota, or none/empty; cross-replica,
//     cross-replica-and-partition and flattened-id all-gathers;
//   * the activation: a parameter, a computed value, or itself gathered (so
//     both dot operands look like weights);
//   * batch dimensions, and now and then two contracting dimensions;
//   * bf16 dots accumulating into f32, and gathered weights that are also
//     an output (so their all-gather outlives the fusion);
//   * the pass options: NXD, aggressive, neuron-compat, sb-to-sb threshold;
//   * (GenerateScanCase) stacked layer weights sliced at the loop counter,
//     and merged contractions, for provenance mode.
// The text goes through the parser, so the parser is exercised too.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_UNITTESTS_PROPTEST_COLLECTIVEMATMULGENERATOR_H
#define LOOM_UNITTESTS_PROPTEST_COLLECTIVEMATMULGENERATOR_H

#include "loom/hlo/passes/NeuronEnv.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::hlo::proptest {

enum class MatcherShape { kLhs, kLhsRS, kRhs, kRhsRS, kLhsNxD };
inline constexpr int kNumMatcherShapes = 5;
llvm::StringRef MatcherShapeName(MatcherShape shape);

struct GeneratedCase {
  MatcherShape shape = MatcherShape::kLhs;
  /// The whole module in HLO text.
  std::string text;
  /// One line naming the choices, for the report of a failure.
  std::string summary;
  /// The features this case exercises (`while`, `bf16`, `ag-dim-2`,
  /// `groups-iota`, `token`, ...), for the coverage table.
  std::vector<std::string> tags;
  CollectiveMatmulOptions options;
  /// Scan cases: 1 when the rules say the dot folds under `options`, 0 when
  /// they say it does not; -1 (other cases) when the generator does not say.
  int expect_fused = -1;
};

/// The case drawn from `seed`, built around `shape`. Same seed, same case.
GeneratedCase GenerateCase(uint64_t seed, MatcherShape shape);

/// A scaled-down twin of a JAX scan-over-layers pattern (the Llama-3.1 FSDP
/// dumps): a stacked weight [L, ...] carried through a while loop, sliced
/// at the layer counter (counting up, or down as in the backward loop) and
/// gathered into one dot of the four Llama shapes: one contracting
/// dimension gathered along 0 or 2, or two merged ({2,3} with {0,1} or
/// {1,2}). Sometimes the slice is indexed by an activation or the body
/// updates the stacked weight: then it is not a weight. The options draw
/// provenance mode and the aggressive flag; expect_fused says what the
/// rules of docs/collective-matmul.md decide.
GeneratedCase GenerateScanCase(uint64_t seed);

} // namespace loom::hlo::proptest

#endif
