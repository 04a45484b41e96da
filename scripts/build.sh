#!/usr/bin/env bash
# Configures and builds parasim. Usage: scripts/build.sh [--sanitize] [--debug]
# Build directory: build/ (Release), build-asan/ (ASan+UBSan), build-debug/.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build type=Release extra=()
for arg in "$@"; do
  case "$arg" in
    --sanitize) dir=build-asan type=RelWithDebInfo extra+=(-DPARASIM_SANITIZE=ON) ;;
    --debug) dir=build-debug type=Debug ;;
    *) echo "build.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" "${extra[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
