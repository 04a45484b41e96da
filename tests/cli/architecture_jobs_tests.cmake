# The architectures people train now, end to end through the CLI: the bundled DeepSeek-V3 (MLA, 256
# fine-grained experts with a shared one, three dense layers, MTP) and Qwen3-30B-A3B (q/k norms, an
# explicit head_dim, 128 experts) models and jobs.
# DeepSeek-V3: the report's 671B (37B activated), MTP counted apart.
parasim_cli_test(NAME model_deepseek_v3_yaml ARGS model scenarios/models/deepseek-v3.yaml --json
                 JSON parameters.total=671026404352.0 parameters.mtp=11610067968.0 mla.kv_lora_rank=512 mla.q_lora_rank=1536)
parasim_cli_test(NAME model_deepseek_v3_table ARGS model scenarios/models/deepseek-v3.yaml
                 STDOUT_REGEX "Attention +multi-head latent \\(q latent 1536, kv latent 512, qk 128 \\+ 64 rope, v 128\\)"
                              "multi-token prediction \\(1, apart\\) +11.61 B" "  without input embedding +36.63 B")
# Qwen3-30B-A3B: the report's 30.5B (3.3B activated).
parasim_cli_test(NAME model_qwen3_30b_a3b_yaml ARGS model scenarios/models/qwen3-30b-a3b.yaml --json
                 JSON parameters.total=30532122624.0 qk_norm=ON head_dim=128)
# tasks: the task graph's FLOPs against 6N_active + 6·s_eff·n_h·(d_qk + d_v) a layer; DeepSeek-V3's
# MTP module and full recompute are what the formula leaves out.
parasim_cli_test(NAME tasks_qwen3_30b_a3b ARGS tasks scenarios/jobs/qwen3-30b-a3b-64-h100.yaml
                 STDOUT_REGEX "6N_active \\+ 6·s_eff·n_h·\\(d_qk \\+ d_v\\) a layer, per token: [0-9.e+]+ \\(tasks / formula = 0.9999")
parasim_cli_test(NAME tasks_deepseek_v3 ARGS tasks scenarios/jobs/deepseek-v3-2048-h800.yaml
                 MAX_COLUMNS 120 STDOUT_REGEX "1.836e\\+19 without recompute\n +6N_active \\+ 6·s_eff·n_h·\\(d_qk \\+ d_v\\) a layer,[ \n]+per token \\(the MTP modules not counted\\)")
parasim_cli_test(NAME simulate_deepseek_v3 ARGS simulate scenarios/jobs/deepseek-v3-2048-h800.yaml --json JSON memory.fits=ON)
parasim_cli_test(NAME simulate_qwen3_30b_a3b ARGS simulate scenarios/jobs/qwen3-30b-a3b-64-h100.yaml --json JSON memory.fits=ON)
# plan: Qwen3 in CI; DeepSeek-V3's 2,048 GPUs take about a minute on two cores.
# Qwen3's 8-way expert parallelism gains most with the all-to-all overlap, which the launch keeps
# (--overlap-moe-expert-parallel-comm on interleaved 1F1B).
parasim_cli_test(NAME plan_qwen3_30b_a3b ARGS plan scenarios/jobs/qwen3-30b-a3b-64-h100.yaml --json
                 JSON plans.0.fits=ON plans.0.ep_overlap=ON plans.0.schedule=interleaved-1f1b launch.framework=megatron-lm)
parasim_cli_test(NAME plan_qwen3_overlap_launched ARGS plan scenarios/jobs/qwen3-30b-a3b-64-h100.yaml
                 STDOUT_REGEX "Launch +tp1 [^\n]*a2a-overlap" "--overlap-moe-expert-parallel-comm")
# DeepSeek-V3: the search runs the schedules of today and the all-to-all overlap; DualPipe with it is
# among the fastest found (what the report ran: in the first tie group, with a 1F1B plan under full
# recompute since fp8's input casts are priced), and the launch is what Megatron-LM runs.
parasim_cli_test(NAME plan_deepseek_v3 ARGS plan scenarios/jobs/deepseek-v3-2048-h800.yaml --headroom 0GiB
                 STDOUT_REGEX "--multi-latent-attention" "--q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128"
                              "--mtp-num-layers 1" "--pipeline-model-parallel-layout '[^']*mL'"
                              "\n +[0-9]+ +1 +[^\n]*\n +tp[0-9][^\n]* dualpipe(-v)? [^\n]*a2a-overlap" LABELS long)
# Mistral's config: its 4096-token window, counted at 32K tokens.
parasim_cli_test(NAME model_mistral_window ARGS model tests/data/hf/mistral-7b/config.json --seq 32768
                 STDOUT_REGEX "Attention +sliding window of 4096 tokens on every layer")
parasim_cli_test(NAME model_gemma2_window_json ARGS model tests/data/hf/gemma-2-9b/config.json --json JSON sliding_window=4096 global_every=2)
# The all-to-all overlap read back from Megatron-LM's flag, simulated as F&B steps; and refused
# where Megatron-LM refuses it (no virtual stages with a pipeline).
parasim_cli_test(NAME simulate_megatron_ep_overlap ARGS simulate scenarios/jobs/qwen3-30b-a3b-64-h100.yaml --from-megatron-args
                 "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 --expert-model-parallel-size 8 --micro-batch-size 1 --global-batch-size 512 --overlap-moe-expert-parallel-comm"
                 STDOUT_REGEX "ep 8 etp 1 \\(all-to-all overlapped\\), interleaved-1f1b")
parasim_cli_test(NAME simulate_megatron_ep_overlap_no_vpp ARGS simulate scenarios/jobs/qwen3-30b-a3b-64-h100.yaml --from-megatron-args
                 "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 --expert-model-parallel-size 8 --micro-batch-size 1 --global-batch-size 512 --overlap-moe-expert-parallel-comm"
                 RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_megatron_ep_overlap_no_vpp.expected)
