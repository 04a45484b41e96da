#!/bin/bash
# parasim confirm qwen3-1.7b-h200-1gpu: plan 1 of 4 on 1 x H200-SXM-141GB
# Launches tp1 · pp1 · dp1 · mb4
# Predicted: 879.4 ms per iteration, peak 93.31 GiB per GPU (#1 of 5 simulated)
# 12 iterations; the runners in .. write its logs here, parasim confirm --read reads them
#
# Run on every node, in an environment with torchtitan v0.2.2 and its tokenizer assets:
#   TORCHTITAN=/path/to/torchtitan bash launch_torchtitan.sh
# It trains on torchtitan's bundled c4_test: a benchmark of the plan (torchtitan.toml beside this says how).
set -euo pipefail

NNODES=1
GPUS_PER_NODE=1
MASTER_ADDR=${MASTER_ADDR:-localhost}
NODE_RANK=${NODE_RANK:-0}
MASTER_PORT=${MASTER_PORT:-6000}
TORCHTITAN=${TORCHTITAN:-/workspace/torchtitan}
config="$(cd "$(dirname "$0")" && pwd)/torchtitan.toml"
# torchtitan's paths (hf_assets_path, the dataset) are relative to its checkout.
cd "$TORCHTITAN"

exec torchrun --nnodes "$NNODES" --nproc-per-node "$GPUS_PER_NODE" --node-rank "$NODE_RANK" \
  --master-addr "$MASTER_ADDR" --master-port "$MASTER_PORT" \
  --local-ranks-filter 0 --role rank --tee 3 \
  -m torchtitan.train --job.config_file "$config"
