#!/usr/bin/env bash
# libFuzzer over the input readers (scenario loader, Hugging Face importer, validation rows, training logs, profiler
# traces) under ASan and UBSan, each target for PARASIM_FUZZ_SECONDS (default 60) from its seed corpus
# in tests/fuzz/corpus. Not part of CI (scripts/test.sh); a finding leaves crash-* files in build-fuzz.
# Usage: scripts/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --fuzz
seconds=${1:-60}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPARASIM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARASIM_FUZZ_SECONDS="$seconds"
cmake --build build-fuzz -j "$(nproc 2>/dev/null || echo 2)"
cd build-fuzz/tests/fuzz && ctest --output-on-failure -L fuzz
