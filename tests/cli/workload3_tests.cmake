# Workload III: Hugging Face configs of the architectures trained today, imported end to end. The
# totals are parasim's exact counts; tests/workload/hf_config_test.cpp checks each against the total
# its authors publish (within 0.5%) and checks the fields `parasim model --json` does not print (MLA
# ranks, windows and chunks, global_every, MTP).

# DeepSeek-V3: MLA, 256 routed experts top-8 and one shared, 3 dense layers: 671.0B (published 671B),
# 37.6B active (published 37B). DeepSeek-V2-Lite: no query latent, 2 shared experts: 15.7B.
parasim_cli_test(NAME model_deepseek_v3_hf ARGS model tests/data/hf/deepseek-v3/config.json --json
                 JSON architecture=deepseek-v3 parameters.total=671026404352.0 parameters.active=37552282624.0 kv_heads=128
                      head_dim=192 experts=256 top_k=8 moe_layers=58 tied_embeddings=OFF)
parasim_cli_test(NAME model_deepseek_v2_lite_hf ARGS model tests/data/hf/deepseek-v2-lite/config.json --json
                 JSON architecture=deepseek-v2 parameters.total=15706484224.0 experts=64 top_k=6 moe_layers=26 head_dim=192)

# Qwen3-8B 8.19B (published 8.2B); Qwen3-30B-A3B 30.5B, 3.35B active (published 30.5B, 3.3B).
parasim_cli_test(NAME model_qwen3_8b_hf ARGS model tests/data/hf/qwen3-8b/config.json --json
                 JSON architecture=qwen3 parameters.total=8190735360.0 head_dim=128 kv_heads=8 experts=0)
parasim_cli_test(NAME model_qwen3_30b_a3b_hf ARGS model tests/data/hf/qwen3-30b-a3b/config.json --json
                 JSON architecture=qwen3-moe parameters.total=30532122624.0 parameters.active=3353032704.0 head_dim=128
                      experts=128 top_k=8 moe_layers=48)

# Gemma-2 9B 9.24B (published 9.24B), tied, GeGLU as three matrices; Gemma-3 27B's language model
# 27.0B (published 1,416M + 25,600M), vocab 262208 from Gemma3TextConfig's default.
parasim_cli_test(NAME model_gemma2_9b_hf ARGS model tests/data/hf/gemma-2-9b/config.json --json
                 JSON architecture=gemma2 parameters.total=9241404928.0 head_dim=256 tied_embeddings=ON activation=swiglu)
parasim_cli_test(NAME model_gemma3_27b_hf ARGS model tests/data/hf/gemma-3-27b-it/config.json --json
                 JSON architecture=gemma3 parameters.total=27008679680.0 vocab=262208 layers=62 head_dim=128 tied_embeddings=ON)

# Phi-3-mini 3.82B; OLMo-1B 1.18B (LayerNorm without weights counted as layernorm: 135,168 over);
# OLMo-2 7B 7.30B.
parasim_cli_test(NAME model_phi3_mini_hf ARGS model tests/data/hf/phi-3-mini-4k-instruct/config.json --json
                 JSON architecture=phi3 parameters.total=3821079552.0 vocab=32064)
parasim_cli_test(NAME model_olmo_1b_hf ARGS model tests/data/hf/olmo-1b-hf/config.json --json
                 JSON architecture=olmo parameters.total=1176899584.0 norm=layernorm tied_embeddings=ON)
parasim_cli_test(NAME model_olmo2_7b_hf ARGS model tests/data/hf/olmo-2-1124-7b/config.json --json
                 JSON architecture=olmo2 parameters.total=7298363392.0 norm=rmsnorm)

# gpt-oss-20b: 32 experts top-4 in every layer, biases: 20.91B (published 20.91B; 3.61B active without
# the input embedding: 4,187,438,400 − 579,133,440).
parasim_cli_test(NAME model_gpt_oss_20b_hf ARGS model tests/data/hf/gpt-oss-20b/config.json --json
                 JSON architecture=gpt-oss parameters.total=20914754880.0 parameters.active=4187438400.0
                      parameters.embedding=579133440.0 experts=32 top_k=4 moe_layers=24 bias=ON head_dim=64)

# Llama-4 Scout's language model: 16 experts top-1 and a shared one in all 48 layers: 107.8B, 17.2B
# active (published 109B with the vision encoder, 17B active).
parasim_cli_test(NAME model_llama4_scout_hf ARGS model tests/data/hf/llama-4-scout-17b-16e-instruct/config.json --seq 8192 --json
                 JSON architecture=llama4 parameters.total=107769861120.0 parameters.active=17172894720.0 experts=16 top_k=1
                      moe_layers=48 ffn_hidden=16384 seq_len=8192)

# An unknown class lists the supported ones, with no "did you mean" (OLMoE is one letter from OLMo).
parasim_cli_test(NAME model_olmoe_unknown_architecture ARGS model tests/data/hf/bad/olmoe-1b-7b/config.json RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/model_olmoe_unknown_architecture.expected)
