#!/usr/bin/env bash
# Builds loom with gcc and runs every test through ctest: unit tests (gtest),
# lit + FileCheck pass tests, the corpus test over ../shared/corpus (skipped
# when absent), the property test, the mutation test and the install test.
# With CI=true (as CI sets it) every compiler warning is an error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "${CI:-}" == true ]]; then
  export LOOM_WERROR=ON
fi
source "$ROOT/scripts/setup.sh"
ctest --test-dir "${LOOM_BUILD_DIR:-$ROOT/build}" --output-on-failure -j "$(nproc)"
