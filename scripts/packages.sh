#!/usr/bin/env bash
# loom_install_packages PKG...: installs, with apt-get, the Debian 12
# packages of the list that are not installed yet (as root, or with sudo).
# Sourced by setup.sh, fuzz.sh and sanitize.sh.
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
    libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev
}
