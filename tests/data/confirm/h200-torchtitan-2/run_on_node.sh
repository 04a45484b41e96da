#!/bin/bash
# parasim confirm qwen3-1.7b-h200-1gpu: the 4 fastest plans torchtitan runs of Qwen3-1.7B on 1 x H200-SXM-141GB,
# 12 iterations each, predicted fastest first (confirm.json has the predictions).
#
# Without Slurm: start this on every node at once, from this folder on a file system every node sees:
#   TORCHTITAN=/path/to/torchtitan bash run_on_node.sh
# A plan that fails (out of memory, a timeout of PLAN_TIMEOUT) leaves its log and the next one starts;
# then read them back: parasim confirm --read .
set -uo pipefail
cd "$(dirname "$0")"
NODE_RANK=${NODE_RANK:-0}
export NODE_RANK
port=${MASTER_PORT:-6000}

for plan in plan-01 plan-02 plan-03 plan-04; do
  echo "parasim confirm: $plan on node $NODE_RANK"
  # A new port for each plan: the last one's may still be in TIME_WAIT.
  MASTER_PORT=$port timeout "${PLAN_TIMEOUT:-30m}" bash "$plan/launch_torchtitan.sh" > "$plan/node$NODE_RANK.log" 2>&1 \
    || echo "parasim confirm: $plan failed (exit $?); $plan/node$NODE_RANK.log says why"
  port=$((port + 1))
done
