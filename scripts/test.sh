#!/usr/bin/env bash
# Quick start, second command: installs what is missing, builds, and runs every test (the long checks:
# ctest --test-dir build -L long; Megatron-LM's own checks of the launch scripts: -L launch).
# Usage: scripts/test.sh [--sanitize]   (--sanitize: the same tests under ASan + UBSan, in build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh "$@"
dir=build
[ "${1:-}" = "--sanitize" ] && dir=build-asan
ctest --test-dir "$dir" --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" -LE "long|launch"
