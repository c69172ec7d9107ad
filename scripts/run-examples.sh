#!/usr/bin/env bash
# Builds loom (installing any missing Debian package first, see setup.sh),
# then runs the main job on the bundled examples:
#   examples/hlo/*.hlo   hlo-opt with the two Neuron collective-matmul passes,
#                        remarks on, verified after every pass, numerics
#                        checked against the input by the interpreter;
#   examples/bir/*.json  bir-opt splitting each program for LNC=2.
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
run_examples bir-opt bir json txt --lnc=2 --passes=lnc_splitter --emit=text

echo "examples: $((ran - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
