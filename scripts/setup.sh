#!/usr/bin/env bash
# Installs the Debian 12 packages loom builds with, when any is missing, then
# configures and builds everything into build/ with gcc. Sourced by the two
# top-level commands in README.md.
#
# Environment: LOOM_BUILD_DIR (default build), LOOM_WERROR (ON: every
# warning is an error; scripts/test.sh sets it when CI=true).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"

source "$ROOT/scripts/packages.sh"
# libopenblas-dev: only bench/HloDotBench's sgemm baseline (skipped when absent).
# libprotobuf-dev, protobuf-compiler: the HloModuleProto reader and writer
# (docs/hlo-proto.md).
loom_install_packages cmake ninja-build g++ python3 llvm-14-dev llvm-14-tools \
  libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox libopenblas-dev \
  libprotobuf-dev protobuf-compiler

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLOOM_WERROR="${LOOM_WERROR:-OFF}" >/dev/null
elif [ -n "${LOOM_WERROR:-}" ]; then
  cmake -DLOOM_WERROR="$LOOM_WERROR" "$BUILD" >/dev/null
fi
cmake --build "$BUILD" -j "$(nproc)"
