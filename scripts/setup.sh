#!/usr/bin/env bash
# Installs the Debian 12 packages loom builds with, when any is missing, then
# configures and builds everything into build/. Sourced by the two top-level
# commands in README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"

source "$ROOT/scripts/packages.sh"
loom_install_packages cmake ninja-build g++ python3 llvm-14-dev llvm-14-tools \
  libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD" -j "$(nproc)"
