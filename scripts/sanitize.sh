#!/usr/bin/env bash
# usage: scripts/sanitize.sh [ctest arguments...]
#
# Builds the whole tree (tools, unit tests, lit tests' tools, benchmarks,
# fuzz targets) with clang-14 and AddressSanitizer + UndefinedBehaviorSanitizer
# into build-asan/, every UBSan report fatal (-fno-sanitize-recover=all), and
# runs ctest there: the unit tests, the lit tests (which run the sanitized
# tools), the corpus tests and the install test. Any sanitizer report fails
# its test. The configuration is loom_configure_clang's (scripts/packages.sh),
# the one fuzz.sh uses, so both can share one build directory.
#
# Environment: LOOM_ASAN_BUILD_DIR (default build-asan), LOOM_JOBS (ninja
# -j, default 1), LOOM_BENCHMARKS (OFF: no bench/), LOOM_CTEST_JOBS (ctest
# -j, default 1). docs/robustness.md explains the clang build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/packages.sh"
loom_install_clang_toolchain
BUILD="${LOOM_ASAN_BUILD_DIR:-$ROOT/build-asan}"
JOBS="${LOOM_JOBS:-1}"

loom_configure_clang "$BUILD"
ninja -C "$BUILD" -j"$JOBS"

# Every report (leaks included) ends the process with SIGABRT rather than an
# exit status: a lit test that expects the tool to fail (`not bir-opt ...`)
# accepts any non-zero status, but `not` fails on a signal.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}"
ctest --test-dir "$BUILD" --output-on-failure -j"${LOOM_CTEST_JOBS:-1}" "$@"
