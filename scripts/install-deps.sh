#!/usr/bin/env bash
# Installs the Debian packages parasim needs, only those missing. Idempotent and non-interactive.
# Usage: scripts/install-deps.sh [--fuzz]   (--fuzz: also clang for the libFuzzer targets)
set -euo pipefail

packages=(
  build-essential cmake ccache pkg-config
  libboost-graph-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  doctest-dev libbenchmark-dev libsimdjson-dev zlib1g-dev libeigen3-dev libtbb-dev
  gnuplot-nox python3
  pybind11-dev python3-dev python3-pytest python3-matplotlib
  libopenmpi-dev openmpi-bin
)
# scripts/fuzz.sh: clang and its libFuzzer runtime.
[ "${1:-}" = "--fuzz" ] && packages+=(clang libclang-rt-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "parasim: installing missing packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
