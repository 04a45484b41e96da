# parasim validate end to end, on a fast sample of published rows (tests/data/validation/).
parasim_cli_test(NAME validate_help ARGS validate --help STDOUT_REGEX "--max-mape" "--json")
# FSDP rows (tp = pp = 1, zero 3, flash) take the fused cross-entropy of their stack, and say so.
parasim_cli_test(NAME validate_table ARGS validate tests/data/validation/sample.yaml
                 STDOUT_REGEX "Fill-in policy" "Cross-entropy: Megatron-LM's unfused" "foundry-130-125m[^\n]*\n    tp1 [^\n]*\n    filled: embeddings tied, cross_entropy=fused" "degrees-mismatch: tp 1 x pp 1 x dp 7 x cp 1 = 7 does not match the 8 GPUs"
                              "all rows +4/5 +MAPE")
# --json: one object per row with id and predicted_iteration_s; rejected rows with their reason.
parasim_cli_test(NAME validate_json ARGS validate tests/data/validation/sample.yaml --json REPEAT
                 JSON rows.0.id=foundry-130-125m-a100_80gb-8g-s65536-amp_bf16 skipped.0.id=degrees-mismatch
                      summary.rows=5 summary.simulated=4)
parasim_cli_test(NAME validate_max_mape ARGS validate tests/data/validation/sample.yaml --max-mape 1 RC 3)
parasim_cli_test(NAME validate_bad_key ARGS validate tests/data/validation/bad_key.yaml RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/validate_bad_key.expected)
parasim_cli_test(NAME validate_missing_file ARGS validate tests/data/validation/nowhere.yaml RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/validate_missing_file.expected)
# Rows that need Workload II (a Grok-1 proxy with EP 8, Llama 3.1 8B with CP 2) are simulated.
parasim_cli_test(NAME validate_workload2 ARGS validate tests/data/validation/workload2.yaml --json
                 JSON summary.rows=2 summary.simulated=2 rows.0.id=dgxc-grok1-314b-fp8-32g rows.1.plan=tp1\ pp1\ dp8\ cp2\ mb1\ sp\ off\ recompute\ none\ zero\ 1)
# --explain ID: where one row's predicted time goes; an unknown id is a one-line error.
parasim_cli_test(NAME validate_explain ARGS validate tests/data/validation/sample.yaml --explain foundry-130-125m-a100_80gb-8g-s65536-amp_bf16
                 MAX_COLUMNS 120 STDOUT_REGEX "foundry-130-125m-a100_80gb-8g-s65536-amp_bf16 +measured 6.435 s +predicted" "compute by kind: gemm .* attention"
                              "stack llm-foundry \\(from the source\\)  filled:\n[^\n]*\n[^\n]*\n    flash_kernel=flash1"
                              "largest ops: attention_grad" "stage +0: fwd")
parasim_cli_test(NAME validate_explain_unknown ARGS validate tests/data/validation/sample.yaml --explain nope RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/validate_explain_unknown.expected)
# The memory model against a peak the source printed (as_published.gpu_mem: 29GB): the row's plan
# (tp8 pp12 dp4, mb 1, full recompute, no SP) needs 29.02 GB on stage 0; a gpu_mem that is not a
# size is not compared.
parasim_cli_test(NAME validate_published_memory ARGS validate tests/data/validation/published_memory.yaml --json
                 JSON memory.rows=1 rows.0.published_memory_bytes=29000000000.0)
parasim_cli_test(NAME validate_published_memory_table ARGS validate tests/data/validation/published_memory.yaml
                 STDOUT_REGEX "peak memory against the sources' \\(1 rows\\): median error 0.8%")
# Plan order counts pairs of rows that state different plans for one job (issue 24's definition): of
# three rows, two state the same inputs (one run measured twice, 9% apart), so two pairs, both right.
parasim_cli_test(NAME validate_plan_order_same_run ARGS validate tests/data/validation/same_run_twice.yaml --json
                 JSON summary.plan_order_pairs=2 summary.plan_order_right=2 summary.rows=3)
# Its backward gradients, by hand: the attention's, whose softmax runs unfused (8 heads on a rank at
# micro-batch 1 in BigScience's fork: eager_softmax fused_by_head_count), two fp32 gradients of the
# 8 x 2048² scores at a time (256 MiB) and the output's gradient (2 x 2048 x 14336 bytes, 56 MiB), less
# the MLP's 196 MiB released before it (the norm's input and output, 56 MiB each; GELU's input and
# output at 57344/8 columns, 28 each; the dropout mask, 28) = 116 MiB. The breakdown shows stages 0
# and 1 and then the last (11 of pp 12), which holds the head and the loss.
parasim_cli_test(NAME validate_published_memory_explain ARGS validate tests/data/validation/published_memory.yaml
                 --explain bloom-prequel-01-h14336-l72-tp8pp12dp4mb1 MAX_COLUMNS 120 STDOUT_REGEX "memory: peak 27.21 GiB on stage 0 of 80 GiB per GPU \\(the source printed 27.01 GiB\\)"
                 "working set 704 MiB, backward gradients 116 MiB of it\\)"
                 "\n  stage  1: fwd [^\n]*\n +exposed [^\n]*bubble [^\n]*\n  stage 11: fwd [^\n]*\n +exposed [^\n]*bubble [^\n]*\n")
# --explain shows the fill search: every plan tried for the fields the row does not print (Megatron-LM's
# 1.7B weak-scaling row: micro-batch, recompute, zero), whether it fits, its time, and which were kept;
# the fields are searched together, so after zero moves to 1 recompute and micro-batch are tried again.
parasim_cli_test(NAME validate_explain_fill_search ARGS validate tests/data/validation/megatron_two_rows.yaml --explain megatron-readme-h100-weak-01-1.7B
                 MAX_COLUMNS 120 STDOUT_REGEX "fill search \\(the fields the source did not print, searched together over plans that fit"
                              "given +tp1 pp1 dp48 mb1 sp off recompute none zero 0 +fits [0-9.]+ GiB +[0-9.]+ ms  kept"
                              "micro_batch +tp1 pp1 dp48 mb4 [^\n]+kept"
                              "zero +tp1 pp1 dp48 mb4 sp off recompute none zero 1 [^\n]+kept\n"
                              "    recompute +tp1 pp1 dp48 mb4 sp off recompute full zero 1 +fits [0-9.]+ GiB +[0-9.]+ ms\n"
                              "    micro_batch +tp1 pp1 dp48 mb1 sp off recompute none zero 1 +fits")
# The stack a row's source names fills what the row does not print, and the table says so: llm-foundry's
# flash-attn 1.x, MaxText's gathers issued ahead, NeMo's distributed optimizer (zero 1, not searched) and bf16 gradients,
# Megatron-DeepSpeed's pipeline without interleaving (vpp 1, not searched: the row was vpp 4 before)
# and its BF16_Optimizer's accumulation, BigScience's fork's softmax by head count; Megatron-LM's 1F1B where the row names no schedule (the
# README's 70B weak-scaling row was vpp 21 before).
parasim_cli_test(NAME validate_stack_defaults ARGS validate tests/data/validation/stacks.yaml
                 STDOUT_REGEX "stack +the stack the source names"
                              "foundry-068-760m-h100_80gb-8g-s2048-amp_bf16 [^\n]*\n    tp1 pp1 dp8 [^\n]*\n    filled: nic_gbps_per_gpu=400, embeddings tied, cross_entropy=fused,\n    flash_kernel=flash1 \\(llm-foundry 2023: flash-attn 1.x\\)"
                              "dgxc-maxtext-llama3-70b-bf16-256g [^\n]*\n    tp1 pp1 dp256 [^\n]*\n    filled: cross_entropy=fused, zero3_backward_prefetch=pre"
                              "torchtitan-t1-llama31-8b-8g-fsdp +2.843 s +2.28 s [^\n]*\n    tp1 pp1 dp8 [^\n]*\n    filled: flash_kernel=flash2 \\(torchtitan 2024: SDPA's flash backend, FlashAttention-2\\),\n    cross_entropy=torch \\(torchtitan: PyTorch's over fp32 logits\\),\n    selective_recompute=ops \\(torchtitan: every second matmul kept\\)"
                              "dgxc-llama31-70b-fp8-64g [^\n]*\n    tp4 pp8 vpp5 dp2 mb1 sp on recompute none zero 1\n    filled: zero=1 \\(NeMo: distributed optimizer\\), bf16 gradients \\(NeMo performance recipes"
                              "bloom-prequel-44-h14336-l72-tp8pp2dp24mb1 [^\n]*\n    tp8 pp2 dp24 mb1 sp off recompute full zero 1\n    filled: ffn_hidden=57344, vocab=250880, embeddings tied, vpp=1 \\(Megatron-DeepSpeed: no interleaved schedule\\)"
                              "interleaved schedule\\),\n    eager_softmax=fused_by_head_count \\(BigScience's Megatron-DeepSpeed, Oct 2021 - Mar 2022\\),\n    gradient_accumulation_copy \\(DeepSpeed's BF16_Optimizer\\)"
                              "megatron-readme-h100-weak-05-70B [^\n]*\n    tp8 pp2 dp48 [^\n]*\n    filled: [^\n]*\n    vpp=1 \\(Megatron-LM: 1F1B unless --num-layers-per-virtual-pipeline-stage is given\\)")
# torchtitan's tables print max reserved (its step lines' "memory:"): its row's peak_mem_gib is
# compared with the model's tensors and fragmentation, not the CUDA context; JSON says which.
parasim_cli_test(NAME validate_torchtitan_memory_reserved ARGS validate tests/data/validation/stacks.yaml
                 STDOUT_REGEX "micro_batch=2 \\(torchtitan: the local batch in one step\\)\n    memory: [0-9.]+ GiB modelled as max reserved, the source printed 82.4 GiB")
parasim_cli_test(NAME validate_torchtitan_memory_reserved_json ARGS validate tests/data/validation/stacks.yaml --json
                 JSON rows.4.id=torchtitan-t1-llama31-8b-8g-fsdp rows.4.memory_kind=reserved)
# torchtitan under TP takes its loss in loss_parallel (DTensor's chain over vocabulary-sharded logits):
# its backward holds 12 bytes a logit beside the kept log-softmax, 2.11 G logits a rank here.
parasim_cli_test(NAME validate_torchtitan_loss_parallel ARGS validate tests/data/validation/loss_parallel.yaml --explain torchtitan-t4-llama31-70b-256g-2d
                 STDOUT_REGEX "tp8 pp1 dp32 mb16 sp on recompute full zero 3" "cross_entropy=torch" "working set 23.62 GiB")
# torchtitan under a pipeline (its 405B 3D row): the local batch of 32 in pp = 8 micro-batches
# (pipeline_parallel_microbatches' default), 1F1B (its default schedule), and FSDP holding each
# stage gathered with its gradients unsharded in fp32 for the step, as PyTorch's pipeline stage runs it.
parasim_cli_test(NAME validate_torchtitan_pipeline_defaults ARGS validate tests/data/validation/stacks.yaml --explain torchtitan-t5-llama31-405b-512g-1f1b
                 MAX_COLUMNS 120 STDOUT_REGEX "tp8 pp8 dp8 mb4 sp on recompute full zero 3" "vpp=1 \\(torchtitan 2024: pipeline_parallel_schedule 1F1B"
                              "micro_batch=4 \\(torchtitan 2024: the local batch in pipeline_parallel_microbatches = pp micro-batches\\)"
                              "memory: peak 70.56 GiB on stage 1 [^\n]*\n    weights 1.484 GiB · gradients 26.72 GiB · optimizer 8.907 GiB ·\n.*buffers 12.13 GiB")
parasim_cli_test(NAME validate_stack_defaults_json ARGS validate tests/data/validation/stacks.yaml --json
                 JSON rows.2.plan=tp4\ pp8\ vpp5\ dp2\ mb1\ sp\ on\ recompute\ none\ zero\ 1 rows.3.plan=tp8\ pp2\ dp24\ mb1\ sp\ off\ recompute\ full\ zero\ 1)
# The issue's targets on the published files (they need ../shared beside the repository, hence the
# label): MAPE per file, no row past 30%, the plan order.
set(shared_validation ${PROJECT_SOURCE_DIR}/../shared/validation)
parasim_cli_test(NAME validate_published_megatron ARGS validate ${shared_validation}/megatron.yaml --max-mape 10
                 STDOUT_REGEX "megatron.yaml +40/40 +MAPE +[0-9.]+% +median +[0-9.]+% +worst +([0-9]|[12][0-9])\\.[0-9]% .* plan order [89]/9" LABELS long)
parasim_cli_test(NAME validate_published_fsdp_a100 ARGS validate ${shared_validation}/fsdp_a100.yaml --max-mape 7
                 STDOUT_REGEX "fsdp_a100.yaml +61/61 +MAPE +[0-9.]+% +median +[0-9.]+% +worst +([0-9]|[12][0-9])\\.[0-9]%" LABELS long)
parasim_cli_test(NAME validate_published_other_stacks ARGS validate ${shared_validation}/other_stacks.yaml --max-mape 12
                 STDOUT_REGEX "other_stacks.yaml +74/74 +MAPE +[0-9.]+% +median +[0-9.]+% +worst +([0-9]|[12][0-9])\\.[0-9]% .* plan order [678]/8" LABELS long)
# One file with every kind of row (tests/data/validation/rows_readable.yaml): the row format's newer keys
# run (head_dim, MLA, stage_layers, a named gpipe, an uneven NeMo split with the embedding and the loss
# alone at the ends, the torchtitan H100, a V-shaped zero-bubble schedule with its two chunks a stage filled),
# and a typo is a one-line error for its row while every other row still runs (exit 2).
parasim_cli_test(NAME validate_rows_readable ARGS validate tests/data/validation/rows_readable.yaml RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/validate_rows_readable.expected
                 STDOUT_REGEX "head-dim +[0-9.]+ ms" "nemo-uneven +[^\n]*\n +tp1 pp4 vpp2 dp2"
                              "chunk layers 0,1\\*6,0 \\(Megatron-Core: embedding and loss count as layers\\)"
                              "torchtitan-gpu +[0-9.]+ ms" "stage-layers +[0-9.]+ ms" "gpipe +[^\n]*\n +tp1 pp2 gpipe dp4"
                              "mla +[0-9.]+ ms +[^\n]*\n +[^\n]*ep8" "zb-v +[0-9.]+ ms +[^\n]*\n +tp1 pp2 vpp2 zb-v dp4" "vpp=2 \\(zb-v: two chunks a stage\\)"
                              "Errors \\(1 row not read\\)\n  typo: tests/data/validation/rows_readable.yaml:20:48: error: runs.1.plan.micro_bach: unknown key"
                              "all rows +7/7 ")
parasim_cli_test(NAME validate_rows_readable_json ARGS validate tests/data/validation/rows_readable.yaml --json RC 2 REPEAT
                 JSON rows.0.id=head-dim rows.1.id=mla rows.4.id=zb-v rows.6.id=gpipe errors.0.id=typo errors.0.line=20
                      errors.0.key=runs.1.plan.micro_bach summary.rows=7 summary.simulated=7 summary.skipped=0 summary.errors=1)
# Rows naming each schedule of today are simulated: ZB-1P, ZB-2P, ZB-V (its stage split over the V's two
# chunks), DualPipe (a stated vpp 2 counting its copies) and DualPipe-V, with the F&B overlap filled.
parasim_cli_test(NAME validate_schedules ARGS validate tests/data/validation/schedules.yaml
                 STDOUT_REGEX "zb-1p +[0-9.]+ ms +[^\n]*\n +tp1 pp4 zb-1p dp2" "zb-2p +[0-9.]+ ms +[^\n]*\n +[^\n]*zb-2p" "zb-v +[0-9.]+ ms +[^\n]*\n +[^\n]*pp4 vpp2 zb-v"
                              "dualpipe +[0-9.]+ ms +[^\n]*\n +[^\n]*pp4 dualpipe dp4 ep4" "dualpipe-v +[0-9.]+ ms +[^\n]*\n +[^\n]*pp4 vpp2 dualpipe-v"
                              "overlap ep_comm=on \\(dualpipe: forward and backward overlapped\\)" "all rows +5/5 ")
# Interleaved rows whose micro-batches pp does not divide run in the groups their runtime forms:
# Megatron-Core's smallest --microbatch-group-size-per-virtual-pipeline-stage, PyTorch's equal rounds.
# A row no fill completes names what stops the plan as completed (its chunk split filled), not the
# split it had before.
parasim_cli_test(NAME validate_interleaved_groups ARGS validate tests/data/validation/interleaved_groups.yaml
                 STDOUT_REGEX "microbatch_group=6 \\(Megatron-Core's smallest group: 6 micro-batches that pp 4 does not divide\\)"
                              "microbatch_group=5 \\(PyTorch's interleaved rounds: 10 micro-batches that pp 4 does not divide\\)"
                              "Megatron-Core's smallest --microbatch-group-size-per-virtual-pipeline-stage"
                              "torchtitan-dualpipe-v-too-few: no valid plan: dualpipe-v needs at least 2 x pp = 8 micro-batches; the plan has 4"
                              "all rows +2/3 ")
# Every published row is answered (DeepSeek-V3's with its latent attention and dense first layers).
parasim_cli_test(NAME validate_published_all ARGS validate ${shared_validation}/megatron.yaml ${shared_validation}/fsdp_a100.yaml
                 ${shared_validation}/other_stacks.yaml ${shared_validation}/more_stacks.yaml --max-mape 10
                 STDOUT_REGEX "mbridge-16-DeepSeekV3-1024g-prec-unstated +[0-9.]+ s" "all rows +505/505 "
                 LABELS long)
# Residuals by any row property beside the rule of thumb (one MFU fitted on the rows validated).
parasim_cli_test(NAME validate_by ARGS validate tests/data/validation/schedules.yaml --by schedule,arch
                 STDOUT_REGEX "Against a rule of thumb: time = model FLOPs / \\(GPUs x dense peak x c\\), one c = 0\\.[0-9]+ fitted on these 5 rows"
                              "all rows +5 +[0-9.]+% +[0-9.]+%" "By schedule, arch \\(bias: mean signed error"
                              "dualpipe +moe +1 +[0-9.]+% +[+-][0-9.]+% +[0-9.]+%" "zb-v +llama +1 ")
parasim_cli_test(NAME validate_by_json ARGS validate tests/data/validation/schedules.yaml --by gpus,comm --json
                 JSON by.fields.0=gpus by.fields.1=comm by.groups.0.key.gpus=<=64 summary.simulated=5 rows.0.id=zb-1p)
# By the release the sources name (NVIDIA's YY.MM, Megatron-Core's rX.Y, else the year the source or
# notes give): the stacks changed their kernels release by release.
parasim_cli_test(NAME validate_by_release ARGS validate tests/data/validation/stacks.yaml --by release MAX_COLUMNS 120
                 STDOUT_REGEX "By release \\(bias" "\n2022 +1 +[0-9.]+% +-[0-9.]+%" "\n2024 +2 " "\n25\\.04 +2 " "\nr0\\.8 +1 " "\nunstated +1 ")
parasim_cli_test(NAME validate_by_release_json ARGS validate tests/data/validation/stacks.yaml --by stack,release --json
                 JSON by.fields.1=release by.groups.1.key.stack=Megatron-DeepSpeed by.groups.1.key.release=2022 by.groups.5.key.release=2024 by.groups.5.rows=2)
parasim_cli_test(NAME validate_bad_by ARGS validate tests/data/validation/schedules.yaml --by colour RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/validate_bad_by.expected)
# Peak memory against the sources' figures, per row (a note under it), per file and per family, and by
# any row property (--by), in text and JSON (issue 25, item 2).
parasim_cli_test(NAME validate_memory_by_family ARGS validate tests/data/validation/published_memory.yaml --by family MAX_COLUMNS 120
                 STDOUT_REGEX "\n    memory: 27.21 GiB modelled, the source printed 27.01 GiB \\(\\+0.8%\\)\n"
                              "family +rows +MAPE +bias +rule of thumb +80% covers\n-+\nbloom +2 [^\n]+\n"
                              "Peak memory by family \\(the groups with rows printing a peak; bias: mean signed error\\)\nfamily +rows +median error +worst +bias\n-+\nbloom +1 +0.8% +0.8% +\\+0.8%\n"
                              "peak memory against the sources' \\(1 rows\\): median error 0.8%, worst 0.8%, bias \\+0.8%\n"
                              "\n  bloom +1 +0.8% +0.8% +\\+0.8%\n")
# Many fields at once stay within 120 columns: the key columns that do not fit go under their row,
# in both the step-time and the memory table, and the title wraps.
parasim_cli_test(NAME validate_by_many_fields ARGS validate tests/data/validation/stacks.yaml tests/data/validation/published_memory.yaml
                 --by file,stack,release,schedule,gpu,precision,attention,family MAX_COLUMNS 120
                 STDOUT_REGEX "By file, stack, release, schedule, gpu, precision, attention, family\n\\(bias: mean signed error"
                              "\ntests/data/validation/stacks.yaml +NeMo +1 +[0-9.]+% +[+-][0-9.]+% +[0-9.]+% +[0-9]+%\n    release 25.04 · schedule interleaved-1f1b · gpu h100-sxm5-80gb · precision fp8 · attention flash · family dgxc\n"
                              "\nfile +stack +release +schedule +rows +median error +worst +bias\n"
                              "\ntests/data/validation/stacks.yaml +torchtitan +2024 +1f1b +1 +16.3% +16.3% +-16.3%\n    gpu h100-96gb-500w · precision fp8 · attention flash · family torchtitan\n")
parasim_cli_test(NAME validate_memory_by_family_json ARGS validate tests/data/validation/published_memory.yaml --by family --json
                 JSON memory.rows=1 memory.families.bloom.rows=1 by.groups.0.memory.rows=1 by.groups.0.rows=2)
# Every row's 80% interval from the error model fitted without its family, the coverage per file and family
# beside the rule of thumb, and the model fitted on all rows written for simulate and plan (issue 26, item 1).
set(interval_rows tests/data/validation/sample.yaml tests/data/validation/stacks.yaml tests/data/validation/schedules.yaml
                  tests/data/validation/megatron_two_rows.yaml tests/data/validation/published_memory.yaml)
parasim_cli_test(NAME validate_intervals ARGS validate ${interval_rows} MAX_COLUMNS 120
                 STDOUT_REGEX "80% interval: the error model \\(sim/error_model.hpp\\) fitted without the row's family"
                              "rule of thumb MAPE +80% interval covers\n-+\nall rows +20 +[0-9.]+% +[0-9.]+% +[0-9]+%\n")
parasim_cli_test(NAME validate_intervals_json ARGS validate ${interval_rows} --json
                 JSON summary.intervals=20 rows.0.id=foundry-130-125m-a100_80gb-8g-s65536-amp_bf16
                 STDOUT_REGEX "\"interval\": \\{\n +\"hi\": [0-9.e-]+,\n +\"lo\": [0-9.e-]+\n" "\"interval_coverage\": [0-9.]+")
parasim_cli_test(NAME validate_fit_error_model ARGS validate ${interval_rows} --fit-error-model ${CMAKE_CURRENT_BINARY_DIR}/error_model.yaml
                 FILE ${CMAKE_CURRENT_BINARY_DIR}/error_model.yaml REPEAT)
parasim_cli_test(NAME validate_fit_error_model_too_few ARGS validate tests/data/validation/sample.yaml --fit-error-model ${CMAKE_CURRENT_BINARY_DIR}/few.yaml
                 RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/validate_fit_error_model_too_few.expected)
# The bundled error model is the one the code fits on the published rows today: refit it after a fidelity
# change (parasim validate ../shared/validation/*.yaml --fit-error-model scenarios/error_model.yaml).
add_test(NAME validate_bundled_error_model_current
         COMMAND ${CMAKE_COMMAND} -DPARASIM=$<TARGET_FILE:parasim> -DROWS=${shared_validation} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/error_model_refit.yaml
                 -DBUNDLED=${PROJECT_SOURCE_DIR}/scenarios/error_model.yaml -P ${CMAKE_CURRENT_SOURCE_DIR}/refit_error_model.cmake)
set_tests_properties(validate_bundled_error_model_current PROPERTIES WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} LABELS long)

# Runs this project measured (scenarios/measured/, logs in tests/data/logs/megatron/): every fact known,
# dropout stated by the row (0) rather than the eager-era policy's 0.1. The rows print max allocated
# (max_allocated_mib), compared with the model's tensors alone: -2.3% and -10.7% (the full-recompute
# run's backward gradients are modelled beside the recomputed layer; what is left is Megatron-LM's
# local implementation's autograd copies of the score matrices, docs/fidelity.md).
parasim_cli_test(NAME validate_measured_h100 ARGS validate scenarios/measured/megatron_h100_1gpu.yaml
                 STDOUT_REGEX "all rows +3/3" "dropout \\(absent\\) 0.1 with eager attention"
                              "parasim-h100-gpt0.7b-mb4 [^\n]*\n[^\n]*\n[^\n]*\n +memory: 24.83 GiB modelled as max allocated, the source printed 25.41 GiB \\(-2.3%\\)"
                              "parasim-h100-gpt0.7b-mb2-full [^\n]*\n[^\n]*\n[^\n]*\n +memory: 12.62 GiB modelled as max allocated, the source printed 14.12 GiB \\(-10.7%\\)")
# A row that states no recompute and fits only with Megatron-Core's selective recompute by module:
# the fill climbs the module ladder (least recomputed first) before full recompute, and keeps it.
parasim_cli_test(NAME validate_recompute_modules_fill ARGS validate tests/data/validation/recompute_modules.yaml
                 --explain mbridge-16-DeepSeekV3-1024g-prec-unstated
                 MAX_COLUMNS 120 STDOUT_REGEX "start +tp2 pp8 vpp4 dp64 ep64 mb1 sp on recompute selective zero 1[ \n]+OOM"
                 "recompute selective \\(moe_act,layernorm,mla_up_proj\\) zero 1[ \n]+fits [0-9.]+ GiB +[0-9.]+ s +kept"
                 "recompute +tp2 pp8 vpp4 dp64 ep64 mb1 sp on recompute full zero 1 +fits")
# A row that names its modules is simulated with them; a module Megatron-Core does not have is an
# error at its line.
parasim_cli_test(NAME validate_recompute_modules_stated ARGS validate tests/data/validation/recompute_modules.yaml
                 STDOUT_REGEX "mbridge-16-DeepSeekV3-1024g-recipe-modules +25.26 s +[0-9.]+ s[^\n]*\n +tp2 pp8 vpp4 dp64 ep64 mb1 sp on recompute selective \\(mlp,mla_up_proj\\) zero 1")
parasim_cli_test(NAME validate_bad_recompute_module ARGS validate tests/data/validation/bad_recompute_module.yaml RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/validate_bad_recompute_module.expected)
