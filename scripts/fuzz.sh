#!/usr/bin/env bash
# usage: scripts/fuzz.sh [TARGET|all] [SECONDS]
#
# `all` is every target but HloToBirFuzzer, which runs only when named.
#
# Builds the libFuzzer targets of fuzz/ with clang-14 and
# -fsanitize=fuzzer,address,undefined (-fno-sanitize-recover=all: every
# UBSan report is a crash) into build-fuzz/, builds the seed corpora into
# build-fuzz/corpus/ and runs TARGET (default: every target,
# LOOM_FUZZ_PARALLEL of them at a time, default 1) for SECONDS each (default
# 30). A crash leaves its input in build-fuzz/crashes/<TARGET>/crash-* and
# the stack in build-fuzz/crashes/<TARGET>/log; the script then exits 1.
#
# The configuration is loom_configure_clang's (scripts/packages.sh), the one
# sanitize.sh uses, so both can share one build directory.
#
# Environment: LOOM_FUZZ_BUILD_DIR (default build-fuzz), LOOM_JOBS (ninja
# -j, default 1), LOOM_FUZZ_PARALLEL (targets run at once, default 1),
# LOOM_FUZZ_ARGS (more libFuzzer flags).
# docs/robustness.md describes the targets and what they check.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/packages.sh"
loom_install_clang_toolchain
BUILD="${LOOM_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
JOBS="${LOOM_JOBS:-1}"
WHICH="${1:-all}"
SECONDS_EACH="${2:-30}"
PARALLEL="${LOOM_FUZZ_PARALLEL:-1}"

TARGETS=(HloTextFuzzer HloPassesFuzzer HloEvalFuzzer BirJsonFuzzer BirSimFuzzer
         NpyFuzzer PipelineFuzzer HloProtoFuzzer)
# Run only when named (docs/robustness.md): it is new, runs about 30 inputs
# a second, and its findings so far were wrong programs to fix first.
ON_DEMAND=(HloToBirFuzzer)
dict_of() {
  case "$1" in
    HloProtoFuzzer) echo "" ;;
    Hlo*) echo "$ROOT/fuzz/hlo.dict" ;;
    Bir*) echo "$ROOT/fuzz/bir.dict" ;;
    *) echo "" ;;
  esac
}
if [[ "$WHICH" != all ]]; then
  found=0
  for t in "${TARGETS[@]}" "${ON_DEMAND[@]}"; do [[ "$t" == "$WHICH" ]] && found=1; done
  if [[ $found == 0 ]]; then
    echo "fuzz.sh: unknown target '$WHICH'; targets: ${TARGETS[*]} ${ON_DEMAND[*]}" >&2
    exit 2
  fi
  TARGETS=("$WHICH")
fi

loom_configure_clang "$BUILD"
# HloProtoFuzzer's seeds are modules written as protos by this build's
# hlo-opt (make_corpus.py --hlo-opt).
EXTRA=()
for t in "${TARGETS[@]}"; do [[ "$t" == HloProtoFuzzer ]] && EXTRA=(hlo-opt); done
ninja -C "$BUILD" -j"$JOBS" "${TARGETS[@]}" "${EXTRA[@]}"

CORPUS_ARGS=()
[[ ${#EXTRA[@]} -gt 0 ]] && CORPUS_ARGS=(--hlo-opt "$BUILD/bin/hlo-opt")
python3 "$ROOT/fuzz/make_corpus.py" "${CORPUS_ARGS[@]}" "$BUILD/corpus" >/dev/null

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# run_target T: fuzzes T from its corpus; prints one line (and, on a
# finding, its input and stack) when done; leaves its status in status-file.
run_target() {
  local t="$1" out="$BUILD/crashes/$1" dict start execs
  mkdir -p "$out" "$BUILD/corpus/$t"
  rm -f "$out/status"
  dict="$(dict_of "$t")"
  local args=(-max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048
              -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/")
  [[ -n "$dict" ]] && args+=(-dict="$dict")
  start=$(date +%s)
  # shellcheck disable=SC2086
  if "$BUILD/fuzz/$t" "${args[@]}" ${LOOM_FUZZ_ARGS:-} "$BUILD/corpus/$t" >"$out/log" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/log" | grep -o '[0-9]*$' || true)
    echo "$t: ok, ${execs:-?} executions in $(( $(date +%s) - start )) s"
    echo 0 >"$out/status"
  else
    { echo "$t: FAILED after $(( $(date +%s) - start )) s; input and stack:"
      ls "$out"/crash-* "$out"/timeout-* "$out"/oom-* "$out"/leak-* 2>/dev/null || true
      grep -E -A40 '^==[0-9]+==ERROR|runtime error|fuzz check failed|ERROR: libFuzzer' "$out/log" | head -60
    } || true
    echo 1 >"$out/status"
  fi
}

for t in "${TARGETS[@]}"; do
  while (( $(jobs -rp | wc -l) >= PARALLEL )); do wait -n || true; done
  run_target "$t" &
done
wait
status=0
for t in "${TARGETS[@]}"; do
  [[ "$(cat "$BUILD/crashes/$t/status" 2>/dev/null)" == 0 ]] || status=1
done
exit $status
