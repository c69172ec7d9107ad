#!/usr/bin/env bash
# Builds loom (installing any missing Debian package first, see setup.sh),
# then runs the main job on the bundled examples:
#   examples/hlo/*.hlo   hlo-opt with the two Neuron collective-matmul passes,
#                        remarks on, verified after every pass, numerics
#                        checked against the input by the interpreter;
#   examples/bir/*.json  bir-opt's backend pipeline for LNC=2 (split, lower
#                        the local collectives, completion tokens), proved
#                        equivalent by bir-sim, then bir-sim's per-core
#                        report and a Chrome trace;
#   examples/hlo/*.hlo   hlo-to-bir --check --lnc=2: compiled to a launch,
#                        lowered by the backend pipeline, every core of
#                        every device simulated and compared with hlo-run;
#                        the launch, its per-core report and its Chrome
#                        trace.
# Each result is printed and written under out/examples/ ($LOOM_OUT_DIR).
# A tool that is not built or an example folder that is absent is skipped
# with a note. Exits non-zero if any example fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
BIN="$BUILD/bin"
OUT="${LOOM_OUT_DIR:-$ROOT/out/examples}"

ran=0
failed=0

# run_examples <tool> <folder> <extension> <output extension> <args...>: runs
# the tool on every example of the folder, writing <OUT>/<folder>/<name>.<output extension>.
run_examples() {
  local tool="$1" dir="$2" ext="$3" out_ext="$4"
  shift 4
  if [ ! -x "$BIN/$tool" ]; then
    echo "loom: $tool is not built; skipping examples/$dir" >&2
    return
  fi
  if [ ! -d "$ROOT/examples/$dir" ]; then
    echo "loom: no examples/$dir; skipping $tool" >&2
    return
  fi
  mkdir -p "$OUT/$dir"
  local example
  for example in "$ROOT/examples/$dir"/*."$ext"; do
    [ -e "$example" ] || continue
    local out="$OUT/$dir/$(basename "$example" ".$ext").$out_ext"
    echo "== $tool $* examples/$dir/$(basename "$example")"
    ran=$((ran + 1))
    if "$BIN/$tool" "$@" "$example" -o "$out"; then
      cat "$out"
      echo "-> ${out#"$ROOT"/}"
    else
      failed=$((failed + 1))
      echo "loom: FAILED: $tool on examples/$dir/$(basename "$example")" >&2
    fi
    echo
  done
}

run_examples hlo-opt hlo hlo hlo \
  --passes=neuron_looped_einsum_replacer,neuron_looped_einsum_token_replacer \
  --remarks --verify-each --check-numerics
# run_bir_examples: every examples/bir/*.json through the backend pipeline
# for LNC=2 (split, lower the local collectives, completion tokens), checked
# by the simulator against the unlowered program (same inputs, 20 random
# schedules, races and deadlocks), then simulated alone for the per-core
# report and a Chrome trace (open it in Perfetto).
run_bir_examples() {
  if [ ! -x "$BIN/bir-opt" ] || [ ! -x "$BIN/bir-sim" ]; then
    echo "loom: bir-opt or bir-sim is not built; skipping examples/bir" >&2
    return
  fi
  mkdir -p "$OUT/bir"
  local example
  for example in "$ROOT/examples/bir"/*.json; do
    [ -e "$example" ] || continue
    local name
    name="$(basename "$example" .json)"
    local lowered="$OUT/bir/$name.lowered.json"
    # The report attributes the lowered instructions (<collective>_...) to
    # the collectives of the input program.
    local collectives=()
    local c
    for c in $(python3 -c 'import json,sys
for m in json.load(open(sys.argv[1]))["modules"][:1]:
    for b in m["blocks"]:
        for i in b["instructions"]:
            if i["type"] == "CollectiveCompute": print(i["name"])' "$example"); do
      collectives+=("--collective=$c")
    done
    echo "== bir-opt --lnc=2 --pipeline=default --enable-ptcom --check-equivalence examples/bir/$name.json"
    ran=$((ran + 1))
    if "$BIN/bir-opt" --lnc=2 --pipeline=default --enable-ptcom \
         --check-equivalence --check-equivalence-schedules=20 \
         "$example" -o "$lowered" &&
       "$BIN/bir-opt" --emit=text "$lowered" -o "$OUT/bir/$name.lowered.txt" &&
       "$BIN/bir-sim" --schedules=20 --trace "$OUT/bir/$name.trace.json" \
         "${collectives[@]}" "$lowered" > "$OUT/bir/$name.report.txt"; then
      cat "$OUT/bir/$name.lowered.txt"
      echo "-- bir-sim --schedules=20 ${lowered#"$ROOT"/}"
      cat "$OUT/bir/$name.report.txt"
      echo "-> ${lowered#"$ROOT"/}, $name.lowered.txt, $name.report.txt, $name.trace.json"
    else
      failed=$((failed + 1))
      echo "loom: FAILED: examples/bir/$name.json" >&2
    fi
    echo
  done
}
run_bir_examples

# run_launch_examples: every examples/hlo/*.hlo through hlo-to-bir --check
# --lnc=2 (docs/codegen.md), keeping the launch, the report and the trace.
run_launch_examples() {
  if [ ! -x "$BIN/hlo-to-bir" ]; then
    echo "loom: hlo-to-bir is not built; skipping the launches of examples/hlo" >&2
    return
  fi
  mkdir -p "$OUT/launch"
  local example
  for example in "$ROOT/examples/hlo"/*.hlo; do
    [ -e "$example" ] || continue
    local name
    name="$(basename "$example" .hlo)"
    echo "== hlo-to-bir --check --lnc=2 examples/hlo/$name.hlo"
    ran=$((ran + 1))
    if "$BIN/hlo-to-bir" --check --lnc=2 --report=text \
         --trace="$OUT/launch/$name.trace.json" "$example" \
         -o "$OUT/launch/$name.launch.json" \
         > "$OUT/launch/$name.report.txt" 2> "$OUT/launch/$name.log"; then
      cat "$OUT/launch/$name.report.txt"
      echo "-> ${OUT#"$ROOT"/}/launch/$name.launch.json, $name.report.txt, $name.trace.json"
    else
      failed=$((failed + 1))
      cat "$OUT/launch/$name.log" >&2
      echo "loom: FAILED: hlo-to-bir --check on examples/hlo/$name.hlo" >&2
    fi
    echo
  done
}
run_launch_examples

echo "examples: $((ran - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
