#!/usr/bin/env bash
# Builds loom and runs every test: unit tests (gtest), lit + FileCheck pass
# tests, and the corpus tests over ../shared/corpus when it exists.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
ctest --test-dir "${LOOM_BUILD_DIR:-$ROOT/build}" --output-on-failure
