#!/bin/bash
# parasim confirm gpt0.7b-h200-1gpu: plan 1 of 4 on 1 x H200-SXM-141GB
# Launches tp1 · pp1 · dp1 · mb16
# Predicted: 610.4 ms per iteration, peak 68.13 GiB per GPU (#1 of 6 simulated)
# 12 iterations; the runners in .. write its logs here, parasim confirm --read reads them
# Targets Megatron-LM d98e8a6 (2026-08-22): its pretrain_gpt.py, argument checks and environment rules.
#
# Run on every node, in a container with Megatron-LM and Transformer Engine (an NGC PyTorch image):
#   MEGATRON_LM=/path/to/Megatron-LM bash launch_megatron.sh
# As printed it trains on mock data with a null tokenizer: a benchmark of the plan. For real data, replace
# DATA_ARGS by --data-path PREFIX --tokenizer-type HuggingFaceTokenizer --tokenizer-model NAME (same vocabulary).
set -euo pipefail

NNODES=1
GPUS_PER_NODE=1
MASTER_ADDR=${MASTER_ADDR:-localhost}
NODE_RANK=${NODE_RANK:-0}
MASTER_PORT=${MASTER_PORT:-6000}
MEGATRON_LM=${MEGATRON_LM:-/workspace/megatron-lm}

# Megatron-FSDP (and a plan without TP/CP) must not run with one device queue: clear what a container may set
unset CUDA_DEVICE_MAX_CONNECTIONS

MODEL_ARGS=(
  --num-layers 12
  --hidden-size 2048
  --ffn-hidden-size 8192
  --num-attention-heads 16
  --seq-length 2048
  --position-embedding-type learned_absolute
  --max-position-embeddings 2048
  --normalization LayerNorm
  --attention-dropout 0
  --hidden-dropout 0
)
PARALLEL_ARGS=(
  --tensor-model-parallel-size 1
  --pipeline-model-parallel-size 1
  --overlap-grad-reduce
)
BATCH_ARGS=(
  --micro-batch-size 16
  --global-batch-size 32
)
PRECISION_ARGS=(
  --bf16
  --attention-backend unfused
)
DATA_ARGS=(
  --mock-data
  --tokenizer-type NullTokenizer
  --vocab-size 32000
)
TRAINING_ARGS=(
  --train-iters 12
  --lr 3e-4
  --min-lr 3e-5
  --lr-decay-style cosine
  --lr-warmup-iters 6
  --weight-decay 0.1
  --adam-beta1 0.9
  --adam-beta2 0.95
  --clip-grad 1.0
  --init-method-std 0.02
  --log-interval 1
  --log-throughput
  --eval-iters 0
  --eval-interval 12
)
SITE_ARGS=(
  --transformer-impl local
  --no-gradient-accumulation-fusion
  --no-masked-softmax-fusion
  --no-bias-gelu-fusion
  --no-bias-dropout-fusion
  --no-persist-layer-norm
)

torchrun --nnodes "$NNODES" --nproc-per-node "$GPUS_PER_NODE" --node-rank "$NODE_RANK" \
  --master-addr "$MASTER_ADDR" --master-port "$MASTER_PORT" \
  "$MEGATRON_LM/pretrain_gpt.py" \
  "${MODEL_ARGS[@]}" \
  "${PARALLEL_ARGS[@]}" \
  "${BATCH_ARGS[@]}" \
  "${PRECISION_ARGS[@]}" \
  "${DATA_ARGS[@]}" \
  "${TRAINING_ARGS[@]}" \
  "${SITE_ARGS[@]}"
