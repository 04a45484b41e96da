# parasim simulate end to end.
set(trace ${CMAKE_CURRENT_BINARY_DIR}/llama2-7b-lab.trace.json)

parasim_cli_test(NAME simulate_help ARGS simulate --help STDOUT_REGEX "--trace" "--full" "--set" "bubble, the time it[ \n]+waited for other stages")
parasim_cli_test(NAME simulate_table ARGS simulate scenarios/jobs/llama2-7b-lab.yaml
                 STDOUT_REGEX "Iteration +[0-9.]+ m?s" "MFU [0-9.]+%" "Critical path" "Memory +fits")
# Same input, byte-identical --json; the JSON carries the iteration time, throughput and stages.
parasim_cli_test(NAME simulate_json_deterministic ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --json REPEAT
                 JSON gpus=16 memory.fits=ON stages.1.stage=1)
# The trace loads as JSON with the Chrome keys; a process per simulated GPU (2 stages) + links; it keeps
# the Trace Event Format's rules (--strict: slices of a track nest, counters named after links, every
# flow arrow with its end); two runs write the same bytes.
parasim_cli_test(NAME simulate_trace ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.global_batch=8 --trace ${trace}
                 FILE ${trace} TRACE_PIDS 3 TRACE_CHECKS --strict REPEAT)
# The default job's trace, gzip-compressed, with the busiest links' counters: well under 20 MB, and
# every link counter with the rest under --trace-links all.
set(default_trace ${CMAKE_CURRENT_BINARY_DIR}/default.trace.json.gz)
parasim_cli_test(NAME simulate_trace_gz ARGS simulate scenarios/default.yaml --trace ${default_trace} --trace-links busiest
                 FILE ${default_trace} TRACE_PIDS 5 TRACE_CHECKS --strict --max-bytes=20000000)
set(lab_all_links ${CMAKE_CURRENT_BINARY_DIR}/lab.all-links.trace.json)
parasim_cli_test(NAME simulate_trace_all_links ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.global_batch=8 --trace ${lab_all_links}
                 --trace-links all FILE ${lab_all_links} TRACE_PIDS 3 TRACE_CHECKS --strict)
set(lab_no_links ${CMAKE_CURRENT_BINARY_DIR}/lab.no-links.trace.json)
parasim_cli_test(NAME simulate_trace_no_links ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.global_batch=8 --trace ${lab_no_links}
                 --trace-links none FILE ${lab_no_links} TRACE_PIDS 2 TRACE_CHECKS --strict)
parasim_cli_test(NAME simulate_trace_links_bad ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --trace x.json --trace-links some RC 2)
# DualPipe with the expert all-to-all overlap (Qwen3-30B-A3B over 4 stages): compute of both directions
# (the first half of the micro-batches going down, the second coming up), each F&B backward's
# all-to-alls on tracks of their own, running under the paired forward's compute.
set(dualpipe_trace ${CMAKE_CURRENT_BINARY_DIR}/qwen3-dualpipe.trace.json)
parasim_cli_test(NAME simulate_dualpipe_trace ARGS simulate scenarios/jobs/qwen3-30b-a3b-64-h100.yaml --set plan.pp=4 --set plan.schedule=dualpipe
                 --set plan.overlap.ep_comm=true --set plan.global_batch=128 --trace ${dualpipe_trace}
                 STDOUT_REGEX "dualpipe, micro-batch 1" FILE ${dualpipe_trace} TRACE_PIDS 5 TRACE_CHECKS --strict --two-directions --fb-overlap REPEAT)
# The V-shaped zero-bubble schedule: stage 0 holds the first chunk and the last (the way back up).
set(zbv_trace ${CMAKE_CURRENT_BINARY_DIR}/llama2-7b-zbv.trace.json)
parasim_cli_test(NAME simulate_zbv_trace ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.schedule=zb-v --set plan.global_batch=8
                 --trace ${zbv_trace} STDOUT_REGEX "pp 2 \\(vpp 2\\) x dp 4, zb-v" FILE ${zbv_trace} TRACE_PIDS 3 TRACE_CHECKS --strict --two-directions)
# Every bundled job's trace, compressed, keeps the format's rules (GPT-3 175B on 1024 A100, the README's
# example: 3.2 MB; its peak memory in bench/simulate_bench.cpp; DeepSeek-V3's 2,048 GPUs: 3 s).
file(GLOB bundled_jobs RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/scenarios/jobs/*.yaml)
foreach(job IN LISTS bundled_jobs)
  get_filename_component(name ${job} NAME_WE)
  set(job_trace ${CMAKE_CURRENT_BINARY_DIR}/${name}.trace.json.gz)
  parasim_cli_test(NAME simulate_trace_${name} ARGS simulate ${job} --trace ${job_trace} FILE ${job_trace} TRACE_PIDS any TRACE_CHECKS --strict)
endforeach()
parasim_cli_test(NAME simulate_full_mode ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --full --json JSON gpus=16)
# --full past 2 million replica transfers (405B on 16,384 GPUs: 3.1 million) is refused at once, not
# run for tens of minutes.
parasim_cli_test(NAME simulate_full_mode_too_large ARGS simulate scenarios/jobs/llama3-405b-16k-h100.yaml --full RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_full_mode_too_large.expected)
parasim_cli_test(NAME simulate_needs_plan ARGS simulate scenarios/clusters/lab-2node.yaml RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_needs_model.expected)
parasim_cli_test(NAME simulate_fp8_on_a100 ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml --set training.precision=fp8 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_fp8_on_a100.expected)
parasim_cli_test(NAME simulate_gpt3_175b ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml --json JSON gpus=1024 memory.fits=ON)
# DeepSeek-V3 on 1,024 H100 as Megatron-Bridge's recipe ran it (the job's header: DeepEP, ETP 1, the
# all-to-all under the combined 1F1B) is within 10% of its published 25.26 s a step (parasim: 26.5 s);
# with Megatron-LM's defaults for the three (the all-to-all dispatcher, ETP = TP, no overlap) it is
# 40.9 s, near the 40.3 s validate gives its row (which cannot state them).
parasim_cli_test(NAME simulate_deepseek_v3_recipe ARGS simulate scenarios/jobs/deepseek-v3-1024-h100.yaml
                 STDOUT_REGEX "Iteration +(2[3-6]\\.[0-9]+|27\\.[0-7][0-9]*) s" "ep 64 etp 1 \\(all-to-all overlapped\\)")
parasim_cli_test(NAME simulate_deepseek_v3_megatron_defaults ARGS simulate scenarios/jobs/deepseek-v3-1024-h100.yaml
                 --set training.moe_dispatcher=alltoall --set plan.etp=2 --set plan.overlap.ep_comm=false STDOUT_REGEX "Iteration +40\\.[0-9]+ s")
# Without gradient-accumulation fusion each of the 8 micro-batches adds its gradients of stage 0's
# 1.68 B parameters to their fp32 buffers (10 bytes each, 16.8 GB at the H100's memory-bound rate,
# 6.1 ms): 765.5 ms becomes 819.6 ms.
parasim_cli_test(NAME simulate_gradient_accumulation_fusion ARGS simulate scenarios/jobs/llama2-7b-lab.yaml STDOUT_REGEX "Iteration +765.5 ms")
parasim_cli_test(NAME simulate_gradient_accumulation_unfused ARGS simulate scenarios/jobs/llama2-7b-lab.yaml
                 --set training.gradient_accumulation_fusion=false STDOUT_REGEX "Iteration +819.6 ms")
# DeepSpeed's BF16_Optimizer casts each gradient to fp32 in a copy first: 18 bytes a weight, the pass
# 1.8 times as long (54.1 ms more than fused becomes 96.4 ms).
parasim_cli_test(NAME simulate_gradient_accumulation_copy ARGS simulate scenarios/jobs/llama2-7b-lab.yaml
                 --set training.gradient_accumulation_fusion=false --set training.gradient_accumulation_copy=true STDOUT_REGEX "Iteration +861.9 ms")
# The 2021 stacks' synchronous input-gradient all-reduce (GPT-3 175B, TP8 without SP): each block's
# reduction waits for its weight gradients and holds the next kernel: 28.18 s becomes 29.22 s.
parasim_cli_test(NAME simulate_sync_tp_allreduce ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml --set training.async_tp_allreduce=false
                 STDOUT_REGEX "Iteration +29.22 s")
# Eager attention's softmax through PyTorch's ops (a copy to fp32, scale, mask, softmax, cast back,
# and the reverse in backward): 98 bytes more a score for a forward, its recompute and a backward, over
# 12 heads x 2048² scores, 12 layers and 96 micro-batches a stage (5.7 TB): 28.18 s becomes 31.76 s.
# BigScience's fork of 2021-22 ran 96 heads at tp 8 and micro-batch 1 unfused too (12 matrices, blocks
# of 16).
parasim_cli_test(NAME simulate_eager_softmax_unfused ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml --set training.eager_softmax=unfused
                 STDOUT_REGEX "Iteration +31.76 s")
parasim_cli_test(NAME simulate_eager_softmax_by_head_count ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml
                 --set training.eager_softmax=fused_by_head_count STDOUT_REGEX "Iteration +31.76 s")
# At micro-batch 4 its 48 matrices fill three blocks: fused, as the fused rule prices it (31.33 s both).
parasim_cli_test(NAME simulate_eager_softmax_by_head_count_fills_blocks ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml
                 --set training.eager_softmax=fused_by_head_count --set plan.micro_batch=4 STDOUT_REGEX "Iteration +31.33 s")
parasim_cli_test(NAME simulate_eager_softmax_fused_micro_batch_4 ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml
                 --set plan.micro_batch=4 STDOUT_REGEX "Iteration +31.33 s")
parasim_cli_test(NAME simulate_eager_softmax_unknown ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml --set training.eager_softmax=fast RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/eager_softmax_unknown.expected)
# FlashAttention-1 (flash-attn 1.x of the 2022-23 PyTorch stacks) on H100 runs Ampere's MMA
# instructions at half the tensor-core rate (the profile's attention.flash1: 0.20 / 0.15 of the peak
# against 0.55 / 0.45) behind its unpadded interface: the 128K-token Llama-3 8B job, attention-bound,
# goes from 28.85 s to 73.78 s.
parasim_cli_test(NAME simulate_flash1_h100 ARGS simulate scenarios/jobs/llama3-8b-128k-cp8.yaml --set training.flash_kernel=flash1
                 STDOUT_REGEX "Iteration +73.78 s")
# FlashAttention-2 (SDPA's flash backend) is an Ampere kernel too: 0.305 / 0.24 of the H100 peak against
# the native 0.55 / 0.45, and this 128K-token job is attention-bound: 28.85 s -> 48.82 s.
parasim_cli_test(NAME simulate_flash2_h100 ARGS simulate scenarios/jobs/llama3-8b-128k-cp8.yaml --set training.flash_kernel=flash2
                 STDOUT_REGEX "Iteration +48.82 s")
parasim_cli_test(NAME simulate_flash_kernel_unknown ARGS simulate scenarios/jobs/llama3-8b-128k-cp8.yaml --set training.flash_kernel=flash3 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/flash_kernel_unknown.expected)
# Eager attention over head dim 108 (216-byte rows, off the 16 bytes tensor-core kernels load): its
# batched GEMMs run on the CUDA cores at the fp32 rate. The lab job at 4K tokens, where they are
# s/(6h) = 17% of a layer's GEMM FLOPs: 971.1 ms at head dim 112 becomes 2.189 s at 108.
parasim_cli_test(NAME simulate_eager_head_dim_aligned ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set training.attention=eager
                 --set model.head_dim=112 STDOUT_REGEX "Iteration +971.1 ms")
parasim_cli_test(NAME simulate_eager_head_dim_off_16_bytes ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set training.attention=eager
                 --set model.head_dim=108 STDOUT_REGEX "Iteration +2.189 s")
# fp8 on the lab job (Llama-2 7B, tp 2 with SP, 4K tokens): each fp8 GEMM's input is cast and
# transposed first (Transformer Engine: 4 bytes an element, 1 behind a fused norm), 537.7 ms without
# the casts, 571.3 ms with them.
parasim_cli_test(NAME simulate_fp8_input_casts ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set training.precision=fp8
                 STDOUT_REGEX "Iteration +571.3 ms")
# FSDP's backward prefetch on the lab job as ZeRO-3 without its pipeline (tp2 dp8): without it each
# layer's gather waits behind the previous layer's reduce-scatter (1.089 s); BACKWARD_POST issues it
# first (837.2 ms); BACKWARD_PRE while the previous layer computes (707.3 ms).
parasim_cli_test(NAME simulate_zero3_prefetch_none ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.zero=3 --set plan.pp=1 --set plan.dp=8
                 STDOUT_REGEX "Iteration +1.089 s")
parasim_cli_test(NAME simulate_zero3_prefetch_post ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.zero=3 --set plan.pp=1 --set plan.dp=8
                 --set training.zero3_backward_prefetch=post STDOUT_REGEX "Iteration +837.2 ms")
parasim_cli_test(NAME simulate_zero3_prefetch_pre ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set plan.zero=3 --set plan.pp=1 --set plan.dp=8
                 --set training.zero3_backward_prefetch=pre STDOUT_REGEX "Iteration +707.3 ms")
# Meta's Llama 3 405B plan on 16,384 H100 as the paper describes it (FSDP: gradients and optimizer sharded,
# zero 2) fits, as it ran (issue 25): every stage within 79.65 GiB, the fullest (stage 1) at 71.01 GiB.
parasim_cli_test(NAME simulate_llama3_405b_fits ARGS simulate scenarios/jobs/llama3-405b-16k-h100.yaml --fail-on-oom
                 MAX_COLUMNS 120 STDOUT_REGEX "\n +1 [^\n]+ 71.01 GiB\n" "\nMemory +fits\n")
# The same plan interleaved, as the paper ran it (vpp 2 here: 32 chunks of 4 layers, the first and the
# last 3): Megatron's interleaved warm-up holds more micro-batches in flight, the middle stages 75.18 GiB,
# and it still fits. With as many micro-batches as stages the last stage warms up with one group (16
# chunks, then alternates, as Megatron-Core since Nov 2024 and Llama 3's schedule run it), 43.69 GiB.
parasim_cli_test(NAME simulate_llama3_405b_interleaved_fits ARGS simulate scenarios/jobs/llama3-405b-16k-h100.yaml --fail-on-oom
                 --set plan.vpp=2 --set plan.schedule=interleaved-1f1b
                 --set "plan.stage_layers=[3,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,3]"
                 STDOUT_REGEX "\n +1 [^\n]+ 75.18 GiB\n.*\n +15 [^\n]+ 43.69 GiB\n" "\nMemory +fits\n")
# The steady state of a long pipeline replayed three times and extrapolated, against replaying every
# micro-batch (--full-replay): the same iteration, stages and counts within 0.1% (issue 31). 1F1B
# with 256 micro-batches, the interleaved schedule, DualPipe, ZB-H1 (settled only at its second try),
# and data parallelism alone (ZeRO-3).
find_program(PYTHON3 python3 REQUIRED)
set(replay_cases
    "1f1b|--set|plan.global_batch=1024"
    "interleaved|--set|plan.global_batch=1024|--set|plan.vpp=2|--set|plan.schedule=interleaved-1f1b"
    "dualpipe|--set|plan.global_batch=1024|--set|plan.schedule=dualpipe"
    "zb_h1|--set|plan.global_batch=1024|--set|plan.schedule=zb-h1"
    "zero3|--set|plan.global_batch=512|--set|plan.pp=1|--set|plan.dp=8|--set|plan.zero=3")
foreach(case IN LISTS replay_cases)
  string(REPLACE "|" ";" parts "${case}")
  list(POP_FRONT parts name)
  add_test(NAME cli_simulate_steady_state_${name}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/compare_replays.py $<TARGET_FILE:parasim> scenarios/jobs/llama2-7b-lab.yaml ${parts}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endforeach()
parasim_cli_test(NAME simulate_help_full_replay ARGS simulate --help STDOUT_REGEX "--full-replay")
# DeepSeek-V3 as its report ran it (section 3.2.3): DualPipe with the all-to-all overlap, recomputing
# only the norms and MLA's up projections: about the report's 19.9 s a step, against 33 s for the
# bundled 1F1B with full recompute.
parasim_cli_test(NAME simulate_recompute_modules ARGS simulate scenarios/jobs/deepseek-v3-2048-h800.yaml --set plan.schedule=dualpipe
                 --set plan.overlap.ep_comm=true --set plan.recompute=selective "--set=plan.recompute_modules=[layernorm,mla_up_proj]"
                 MAX_COLUMNS 120 STDOUT_REGEX "dualpipe, micro-batch 1, global batch 15360,[ \n]+recompute selective \\(layernorm,mla_up_proj\\)" "Iteration +1[0-9]\\.[0-9]+ s")
# Interleaved 1F1B whose micro-batches pp does not divide (6 over pp 4): Megatron-Core runs them in
# groups of --microbatch-group-size-per-virtual-pipeline-stage; without one the error names the group
# that would, and a group that leaves a last group smaller than pp is refused.
set(six_over_pp4 --set plan.tp=1 --set plan.pp=4 --set plan.vpp=2 --set plan.dp=4 --set plan.global_batch=24)
parasim_cli_test(NAME simulate_interleaved_microbatch_group ARGS simulate scenarios/jobs/llama2-7b-lab.yaml ${six_over_pp4}
                 --set plan.microbatch_group=6 STDOUT_REGEX "interleaved-1f1b in groups of 6, micro-batch 1, global batch 24")
parasim_cli_test(NAME simulate_interleaved_needs_group ARGS simulate scenarios/jobs/llama2-7b-lab.yaml ${six_over_pp4} RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_interleaved_needs_group.expected)
parasim_cli_test(NAME simulate_interleaved_bad_group ARGS simulate scenarios/jobs/llama2-7b-lab.yaml ${six_over_pp4} --set plan.microbatch_group=5 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_interleaved_bad_group.expected)
# The stage table within 120 columns: a dimension without exposed communication gets no column, the
# verdict none while every stage fits, and the Plan line wraps (DeepSeek-V3: tp, dp, pp and ep exposed);
# with all five dimensions exposed (an MoE model under context parallelism) the exposed times go
# under their stage's row.
parasim_cli_test(NAME simulate_stage_table_width ARGS simulate scenarios/jobs/deepseek-v3-1024-h100.yaml MAX_COLUMNS 120
                 STDOUT_REGEX "\nPlan +tp 2 \\(sp\\) x pp 8 \\(vpp 4\\) x dp 64, [^\n]*,\n            [^\n]*zero 1\n"
                              "\nstage +forward +backward +recompute +optimizer +exposed tp +exposed dp +exposed pp +exposed ep +bubble +memory\n")
parasim_cli_test(NAME simulate_stage_table_exposed_notes ARGS simulate scenarios/jobs/mixtral-8x7b-64-h100.yaml --set plan.cp=2 --set plan.dp=4
                 MAX_COLUMNS 120
                 STDOUT_REGEX "\nstage +forward +backward +recompute +optimizer +bubble +memory\n"
                              "\n +0 [^\n]+\n    exposed tp [0-9.]+ m?s · dp [0-9.]+ m?s · pp [0-9.]+ m?s · cp [0-9.]+ m?s · ep [0-9.]+ m?s\n")
