# Workload II end to end: mixture of experts, context parallelism.

# Hugging Face MoE configs: Mixtral-8x7B 46.7B parameters, 12.9B active; Qwen1.5-MoE-A2.7B 14.3B and
# 2.7B (counts by hand in tests/workload/hf_config_test.cpp).
parasim_cli_test(NAME model_mixtral_hf ARGS model tests/data/hf/mixtral-8x7b/config.json --json
                 JSON parameters.total=46702792704.0 parameters.active=12879925248.0 experts=8 top_k=2 moe_layers=32)
parasim_cli_test(NAME model_qwen2_moe_hf ARGS model tests/data/hf/qwen1.5-moe-a2.7b/config.json --json
                 JSON parameters.total=14315784192.0 parameters.active=2689173504.0 experts=60 top_k=4)
parasim_cli_test(NAME model_moe_table ARGS model scenarios/models/qwen2-57b-a14b.yaml
                 STDOUT_REGEX "Experts +64 of ffn 2560, top-8, 8 shared" "active \\(per token\\) +14.25 B")

# Mixtral-8x7B, TP2 EP8 PP4 on 64 H100 (dp 8): per MoE layer and micro-batch two all-to-alls forward
# (dispatch, combine) and two backward: 32 layers x 32 micro-batches x 4 = 4096, each of a rank's
# 2048 tokens x top-2 x 4096 x 2 bytes = 32 MiB: 128 GiB in all. Memory per stage fits.
parasim_cli_test(NAME tasks_mixtral_ep8 ARGS tasks scenarios/jobs/mixtral-8x7b-64-h100.yaml --json
                 JSON gpus=64 micro_batches=32 memory.fits=ON communication.2.dim=ep communication.2.count=4096
                      communication.2.bytes=137438953472.0 communication.2.group_size=8 memory.stages.3.stage=3)
parasim_cli_test(NAME tasks_mixtral_ep8_table ARGS tasks scenarios/jobs/mixtral-8x7b-64-h100.yaml
                 STDOUT_REGEX "ep 8 etp 2" "ep +all_to_all +8 +4096 +128 GiB" "Memory per GPU" "\n +3 +[0-9.]+ B .* fits\n" "Verdict +fits")
parasim_cli_test(NAME simulate_mixtral_ep8 ARGS simulate scenarios/jobs/mixtral-8x7b-64-h100.yaml --json REPEAT
                 JSON gpus=64 memory.fits=ON stages.3.stage=3)

# Llama-3-8B on 128K tokens, CP8 (ring) TP2 DP4 on 64 H100, selective recompute: per attention layer
# and micro-batch 2 x 7 KV chunk transfers forward, 2 x 2 x 7 backward (K+V and dK+dV) and 2 x 7 again
# in the recomputed core: 56 x 32 layers x 8 micro-batches = 14,336 of 16 MiB (16384 tokens / 2 per
# chunk x 1024 K and V widths / tp 2 x 2 bytes): 224 GiB. Gradients over dp x cp = 32 ranks.
parasim_cli_test(NAME tasks_llama3_128k_cp8 ARGS tasks scenarios/jobs/llama3-8b-128k-cp8.yaml --json
                 JSON gpus=64 micro_batches=8 memory.fits=ON communication.0.dim=cp communication.0.count=14336
                      communication.0.bytes=240518168576.0 communication.1.group_size=32)
parasim_cli_test(NAME tasks_llama3_128k_cp8_table ARGS tasks scenarios/jobs/llama3-8b-128k-cp8.yaml
                 STDOUT_REGEX "x cp 8 \\(ring\\)" "cp +send_recv +2 +14336 +224 GiB" "Memory per GPU" "Verdict +fits")
# The simulator reports the exposed part of the ring exchange, and Ulysses as an option.
parasim_cli_test(NAME simulate_llama3_128k_cp8 ARGS simulate scenarios/jobs/llama3-8b-128k-cp8.yaml --json
                 JSON gpus=64 memory.fits=ON stages.0.stage=0)
parasim_cli_test(NAME simulate_llama3_128k_ulysses ARGS simulate scenarios/jobs/llama3-8b-128k-cp8.yaml --set plan.cp_kind=ulysses
                 --set plan.tp=1 --set plan.dp=8 STDOUT_REGEX "x cp 8 \\(ulysses\\)" "exposed cp")

# The zero-bubble schedule on the lab job (PP 2): deterministic, and shorter than 1F1B's iteration
# is checked by the unit tests (tests/sim/simulator_test.cpp).
parasim_cli_test(NAME simulate_zb_h1 ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.schedule=zb-h1 --json REPEAT
                 JSON gpus=16 memory.fits=ON stages.1.stage=1)
parasim_cli_test(NAME tasks_zb_h1_table ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set plan.schedule=zb-h1
                 STDOUT_REGEX "zb-h1, 8 micro-batches" "Verdict +fits")

# Encoders: BERT-Large imports from its Hugging Face config (335,174,458 parameters, counted by hand
# in tests/workload/hf_config_test.cpp) and trains on the lab cluster; T5 is an error naming what
# is missing.
parasim_cli_test(NAME model_bert_hf ARGS model tests/data/hf/bert-large-uncased/config.json --json
                 JSON parameters.total=335174458.0 causal=OFF mlm_head=ON token_types=2)
parasim_cli_test(NAME model_t5_encoder_decoder ARGS model tests/data/hf/bad/t5-base/config.json RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/model_t5_encoder_decoder.expected)
parasim_cli_test(NAME tasks_bert_large ARGS tasks scenarios/jobs/llama2-7b-lab.yaml --set model=scenarios/models/bert-large.yaml
                 --set training.seq_len=512 --set plan.global_batch=256 --json JSON memory.fits=ON gpus=16)
