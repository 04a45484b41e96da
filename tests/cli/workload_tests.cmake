# parasim model and parasim tasks end to end.

# Hugging Face configs: Llama-2-7B 6.738B parameters, Llama-3-8B 8.030B (exact counts by hand in
# tests/workload/hf_config_test.cpp).
parasim_cli_test(NAME model_llama2_7b_hf ARGS model tests/data/hf/llama-2-7b/config.json --json
                 JSON parameters.total=6738415616.0 layers=32 kv_heads=32 activation=swiglu)
parasim_cli_test(NAME model_llama3_8b_hf ARGS model tests/data/hf/llama-3-8b/config.json --json
                 JSON parameters.total=8030261248.0 kv_heads=8 vocab=128256)
parasim_cli_test(NAME model_table ARGS model scenarios/models/gpt3-175b.yaml
                 STDOUT_REGEX "total +174.6 B" "Training FLOPs per token at seq 2048")
parasim_cli_test(NAME model_unknown_architecture ARGS model tests/data/hf/bad/falcon-7b/config.json RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/bad_plans/hf_unknown_architecture.expected)

# GPT-3 175B, TP8 PP8 DP16 on 1024 A100-80GB, global batch 1536, seq 2048, full recompute: fits,
# (JSON booleans read back through CMake as ON/OFF), and the task FLOPs equal Megatron's 96·B·s·l·h²·(1 + s/6h + V/16lh).
parasim_cli_test(NAME tasks_gpt3_175b ARGS tasks scenarios/jobs/gpt3-175b-1024-a100.yaml --json
                 JSON memory.fits=ON micro_batches=96 tasks.total=131242 gpus=1024)
# A layer's backward gradients beside its activations (issue 25): Llama-2-7B at tp 2 with SP, one
# sample of 4096 tokens: the MLP's output gradient on the rank's 2048 tokens and its gate-and-up
# gradient (2 x 11008 / 2 columns) on all 4096, bf16: 2 x (2048 x 4096 + 4096 x 11008) = 106,954,752 bytes.
parasim_cli_test(NAME tasks_backward_gradients ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --json
                 JSON memory.stages.0.backward_transient_bytes=106954752.0 memory.stages.0.recompute_working_bytes=106954752.0)
parasim_cli_test(NAME tasks_gpt3_175b_table ARGS tasks scenarios/jobs/gpt3-175b-1024-a100.yaml
                 STDOUT_REGEX "tasks / formula = 1\\)" "Verdict +fits")
# Without recompute the activations of 8 micro-batches in flight no longer fit on stage 0.
parasim_cli_test(NAME tasks_gpt3_175b_oom ARGS tasks scenarios/jobs/gpt3-175b-1024-a100.yaml --set plan.recompute=none
                 STDOUT_REGEX "Verdict +OOM on stage 0 by")
parasim_cli_test(NAME tasks_dot ARGS tasks scenarios/jobs/gpt3-175b-1024-a100.yaml --dot --set plan.global_batch=128 --set plan.pp=1
                 --set plan.dp=128 STDOUT_REGEX "^digraph tasks")
# A scenario's model may be a Hugging Face config.json (here set from the command line).
parasim_cli_test(NAME tasks_hf_model ARGS tasks scenarios/jobs/gpt3-175b-1024-a100.yaml --json
                 --set model=tests/data/hf/llama-3-8b/config.json --set plan.tp=4 --set plan.pp=2 --set plan.dp=128
                 --set plan.global_batch=256 --set training.seq_len=8192 --set training.attention=flash --set plan.recompute=selective
                 JSON memory.fits=ON micro_batches=2)

# Cross-entropy kernels: the last stage of the lab job keeps the fp32 softmax of its 4096 x 16,000
# logits per rank (unfused, Megatron-LM's default) or the bf16 logits (fused): 131,072,000 bytes less;
# beside them for a moment the bf16 logits or their gradient (2 bytes a logit, 131,072,000 bytes, in
# both). PyTorch's cross_entropy (torch) over these tp-sharded logits is loss_parallel's DTensor chain:
# it keeps the fp32 log-softmax and in backward holds three fp32 tensors beside it (the zeros-built
# gradient, its sum with the exponentials, their product with the loss gradient): 12 bytes a logit,
# 786,432,000 bytes (ATen's kernels over whole logits would hold 8).
parasim_cli_test(NAME tasks_cross_entropy_unfused ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --json
                 JSON memory.stages.1.activations_bytes=4742709248.0)
parasim_cli_test(NAME tasks_cross_entropy_fused ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set training.cross_entropy=fused --json
                 JSON memory.stages.1.activations_bytes=4611637248.0)
parasim_cli_test(NAME tasks_cross_entropy_torch ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set training.cross_entropy=torch --json
                 JSON memory.stages.1.activations_bytes=5398069248.0)
# Adam's step: PyTorch's foreach AdamW takes sqrt(v) out of place, 4 bytes for each parameter a rank
# steps: the lab job's first stage holds 1,684,668,416 parameters and steps a quarter of them (ZeRO 1
# over dp 4), so 1,684,668,416 bytes, under its activations' peak.
parasim_cli_test(NAME tasks_optimizer_foreach ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set training.optimizer_kernel=foreach --json
                 JSON memory.stages.0.optimizer_step_bytes=1684668416.0 memory.stages.0.parameters=1684668416.0)
parasim_cli_test(NAME tasks_optimizer_fused ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --json JSON memory.stages.0.optimizer_step_bytes=0.0)
parasim_cli_test(NAME tasks_optimizer_unknown ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set training.optimizer_kernel=slow RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/optimizer_kernel_unknown.expected)
parasim_cli_test(NAME tasks_cross_entropy_unknown ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set training.cross_entropy=fast RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/cross_entropy_unknown.expected)
# ZeRO-3 with full recompute on the lab job without its pipeline (tp2 dp8: 32 layers, 4 micro-batches):
# FSDP gathers each layer for forward and once for recompute and backward (2 x 32 x 4 = 256);
# DeepSpeed gathers module by module (6 a layer: two norms, QKV, projection, two MLP matrices) and,
# its recompute releasing them, again for backward (3 x 6 x 32 x 4 = 2304). Under the job's pipeline
# (2 stages of 16 layers, 8 micro-batches) FSDP holds each stage gathered for the step, as PyTorch's
# pipeline stage runs it: one gather and one reduce-scatter a layer (32 each).
parasim_cli_test(NAME tasks_zero3_fsdp_gathers ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set plan.zero=3 --set plan.recompute=full
                 --set plan.pp=1 --set plan.dp=8 --json JSON "tasks.by_kind.dp all_gather=256")
parasim_cli_test(NAME tasks_zero3_deepspeed_gathers ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set plan.zero=3 --set plan.recompute=full
                 --set plan.pp=1 --set plan.dp=8 --set training.zero3_engine=deepspeed --json JSON "tasks.by_kind.dp all_gather=2304")
parasim_cli_test(NAME tasks_zero3_fsdp_pipeline_gathers ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set plan.zero=3 --set plan.recompute=full --json
                 JSON "tasks.by_kind.dp all_gather=32" "tasks.by_kind.dp reduce_scatter=32")
# GPT-3 175B on 1024 GPUs as pure ZeRO-3 (one micro-batch each): a layer's 1.81 B gradients are one
# reduce-scatter under FSDP (96) and four under DeepSpeed's 5e8-gradient bucket (384).
parasim_cli_test(NAME tasks_zero3_fsdp_reduce_scatters ARGS tasks scenarios/jobs/gpt3-175b-1024-a100.yaml --set plan.tp=1 --set plan.pp=1
                 --set plan.dp=1024 --set plan.global_batch=1024 --set plan.zero=3 --json JSON "tasks.by_kind.dp reduce_scatter=96")
parasim_cli_test(NAME tasks_zero3_deepspeed_reduce_scatters ARGS tasks scenarios/jobs/gpt3-175b-1024-a100.yaml --set plan.tp=1 --set plan.pp=1
                 --set plan.dp=1024 --set plan.global_batch=1024 --set plan.zero=3 --set training.zero3_engine=deepspeed --json
                 JSON "tasks.by_kind.dp reduce_scatter=384")
# Full recompute on the lab job (Llama-2-7B, 32 x 4096 tokens a step): a checkpoint that stops early
# skips the MLP's down projection, 2 x 131,072 x 4096 x 11,008 x 32 layers = 378.3 TFLOP of the
# 8,019.6 TFLOP of tasks.
parasim_cli_test(NAME tasks_recompute_whole_layer ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set plan.recompute=full --json
                 JSON flops.tasks=8019562935091200.0)
parasim_cli_test(NAME tasks_recompute_early_stop ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set plan.recompute=full
                 --set training.recompute_early_stop=true --json JSON flops.tasks=7641330935136256.0)
# ZeRO-1 on the lab job (DP4, gradients reduced bucket by bucket): Megatron-LM's distributed optimizer
# reduce-scatters each bucket, DeepSpeed's stage 1 all-reduces it; both gather the parameters.
parasim_cli_test(NAME tasks_zero1_megatron_reduce_scatters ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --json
                 JSON "tasks.by_kind.dp reduce_scatter=32" "tasks.by_kind.dp all_gather=2")
parasim_cli_test(NAME tasks_zero1_deepspeed_all_reduces ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set training.zero1_engine=deepspeed --json
                 JSON "tasks.by_kind.dp all_reduce=32" "tasks.by_kind.dp all_gather=2")
