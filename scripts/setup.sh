#!/usr/bin/env bash
# Quick start, first command: installs what is missing, builds, and runs the main job: the planner on
# the bundled default scenario, printing the best plan and its launch arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo
build/cli/parasim plan scenarios/default.yaml
