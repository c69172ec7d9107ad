#!/usr/bin/env bash
# loom_install_packages PKG...: installs, with apt-get, the Debian 12
# packages of the list that are not installed yet (as root, or with sudo).
# Sourced by setup.sh, fuzz.sh and sanitize.sh, which share loom_configure_clang
# below.
loom_install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "loom: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

# loom_install_clang_toolchain: what fuzz.sh and sanitize.sh build with:
# clang-14, its sanitizer and libFuzzer runtimes, and loom's own packages.
loom_install_clang_toolchain() {
  loom_install_packages cmake ninja-build python3 llvm-14-dev llvm-14-tools \
    libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev \
    libprotobuf-dev protobuf-compiler
}

# loom_configure_clang BUILD: configures BUILD (once; an existing build.ninja
# is kept) as the clang-14 build that sanitize.sh and fuzz.sh share: every
# file with AddressSanitizer + UndefinedBehaviorSanitizer, every UBSan report
# fatal (-fno-sanitize-recover=all), libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link) and the fuzz targets (-DLOOM_FUZZ=ON, which
# link -fsanitize=fuzzer). One build thus runs both the sanitized test suite
# and the fuzz targets. LOOM_BENCHMARKS=OFF leaves out bench/.
loom_configure_clang() {
  local build="$1"
  [[ -f "$build/build.ninja" ]] && return 0
  local san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOM_FUZZ=ON \
    -DLOOM_BENCHMARKS="${LOOM_BENCHMARKS:-ON}" \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $san" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" >/dev/null
}
