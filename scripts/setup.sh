#!/usr/bin/env bash
# Quick start, first command: installs what is missing, builds, and runs the main job on the
# bundled default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo
build/cli/parasim topo scenarios/default.yaml
echo
build/cli/parasim simulate scenarios/default.yaml
