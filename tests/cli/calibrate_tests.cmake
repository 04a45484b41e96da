# parasim calibrate end to end: show, diff, from-trace.
set(cal_data ${PROJECT_SOURCE_DIR}/tests/calibrate/data)

parasim_cli_test(NAME calibrate_help ARGS calibrate --help STDOUT_REGEX "show" "diff" "from-trace")
parasim_cli_test(NAME calibrate_from_trace_help ARGS calibrate from-trace --help STDOUT_REGEX "--out" "--hardware" "--network-bandwidth" "--gpus-per-node")
# Every number with its value and source; a bundled profile by name or by file.
parasim_cli_test(NAME calibrate_show_table ARGS calibrate show scenarios/profiles/a100-sxm4.yaml
                 STDOUT_REGEX "Profile +a100" "gemm.efficiency.bf16 +0.869\n +public: \\[MAMF\\]" "fabrics.nvlink.step_latency +5.7 us")
parasim_cli_test(NAME calibrate_show_by_name ARGS calibrate show b200 STDOUT_REGEX "WHAT-IF" "gemm.efficiency.fp8 +0.763")
parasim_cli_test(NAME calibrate_show_json ARGS calibrate show h100 --json REPEAT
                 JSON name=h100 hardware=H100-SXM5-80GB numbers.nvls.enabled.value=ON
                      "numbers.gemm.efficiency.bf16.source=public: [MAMF] H100 SXM best torch.mm BF16 794.5 / 989 TFLOPS = 0.803 (the table notes H200 is the same)"
                 STDOUT_REGEX "\"value\": 0.803")
parasim_cli_test(NAME calibrate_show_missing ARGS calibrate show nowhere RC 2 STDERR ${cal_data}/show_missing.expected)
parasim_cli_test(NAME calibrate_show_bad_efficiency ARGS calibrate show tests/calibrate/data/bad_profile_efficiency.yaml RC 2
                 STDERR ${cal_data}/bad_profile_efficiency.expected)
parasim_cli_test(NAME calibrate_show_bad_source ARGS calibrate show tests/calibrate/data/bad_profile_unsourced.yaml RC 2
                 STDERR ${cal_data}/bad_profile_unsourced.expected)
# What changed and how the reference job moves: by default the smallest bundled job on the second
# profile's GPU (an H100 profile: the 8-GPU Llama-2 7B lab job), else GPT-3 175B on 1024 A100.
parasim_cli_test(NAME calibrate_diff ARGS calibrate diff a100 scenarios/profiles/h100-sxm5.yaml
                 STDOUT_REGEX "Numbers +16 changed" "gemm.efficiency.bf16 +0.869 +0.803 +-7.6%" "Reference +llama2-7b-lab"
                              "iteration [0-9.]+ m?s -> [0-9.]+ m?s \\([-+][0-9.]+%\\)")
parasim_cli_test(NAME calibrate_diff_same ARGS calibrate diff h200 scenarios/profiles/h200.yaml --json REPEAT
                 JSON a.name=h200 b.name=h200 reference.relative_change=0.0)
parasim_cli_test(NAME calibrate_diff_json ARGS calibrate diff a100 h100 --json
                 JSON changed.0.key=gemm.efficiency.bf16 reference.scenario=scenarios/jobs/llama2-7b-lab.yaml
                 STDOUT_REGEX "\"a\": 0.869" "\"b\": 0.803")

# A profile the CUPTI collector measured on an H100 (scenarios/profiles/measured/PROVENANCE.md): its
# burst GEMM points, its measured sustained clock, within 120 columns; against the bundled H100 profile on
# an H100 job, and on an A100 job whose GPU has no fp8 peak for its fp8 points.
set(measured_h100 scenarios/profiles/measured/h100-sxm5-cupti.yaml)
parasim_cli_test(NAME calibrate_show_measured ARGS calibrate show ${measured_h100} MAX_COLUMNS 120
                 STDOUT_REGEX "Hardware +H100-SXM5-80GB" "gemm.sustained_clock +0.876" "median of the first 20 launches 1366.5 us"
                              "GEMM points \\(123\\)" "bf16 +1 +8192 +8192 +8192 .* burst +cupti: median of 10 launches")
parasim_cli_test(NAME calibrate_show_bundled_readable ARGS calibrate show h100 MAX_COLUMNS 120 STDOUT_REGEX "attention.flash1.forward_efficiency")
parasim_cli_test(NAME calibrate_diff_measured ARGS calibrate diff h100 ${measured_h100}
                 STDOUT_REGEX "gemm.sustained_clock +0.87 +0.876" "Reference +llama2-7b-lab" "iteration [0-9.]+ ms -> [0-9.]+ ms")
parasim_cli_test(NAME calibrate_diff_measured_on_a100 ARGS calibrate diff a100 ${measured_h100} --scenario scenarios/jobs/gpt3-175b-1024-a100.yaml
                 STDOUT_REGEX "Reference +gpt3-175b-1024-a100" "iteration [0-9.]+ s -> [0-9.]+ s")
parasim_cli_test(NAME calibrate_show_measured_json ARGS calibrate show ${measured_h100} --json
                 JSON points.gemm.0.clock=burst "points.gemm.0.source=cupti: median of 10 launches"
                 STDOUT_REGEX "\"value\": 0\\.8759760335" "median of the first 20 launches 1366\\.5 us, of the last 1279 1560\\.0 us")

# The same collector on an H200: its sustained clock below the H100's; against the bundled H200 profile
# on the torchtitan confirm job (an H200 job), and without --scenario, where no bundled job runs on an
# H200, the A100 reference it falls back to is named as such.
set(measured_h200 scenarios/profiles/measured/h200-sxm-cupti.yaml)
parasim_cli_test(NAME calibrate_diff_measured_h200 ARGS calibrate diff h200 ${measured_h200} --scenario tests/data/confirm/qwen3-1.7b-h200-1gpu.yaml
                 MAX_COLUMNS 120 STDOUT_REGEX "gemm.sustained_clock +0.87 +0.831" "Reference +qwen3-1.7b-h200-1gpu" "iteration 798.4 ms -> 818.8 ms")
parasim_cli_test(NAME calibrate_diff_measured_h200_no_job ARGS calibrate diff h200 ${measured_h200}
                 STDOUT_REGEX "on A100-SXM4-80GB, not H200-SXM-141GB: --scenario names a job on H200-SXM-141GB")

# from-trace on an H100 (PyTorch 2.11, CUDA 13.0): the board found by the name CUDA reports, cuBLAS's
# nvjet GEMMs and cuDNN's fused attention classified, every GEMM's shape joined from its host op.
parasim_cli_test(NAME calibrate_from_trace_h100 ARGS calibrate from-trace tests/data/kineto/h100_llama2_7b_layer_torch211.json.gz
                 STDOUT_REGEX "NVIDIA H100 80GB HBM3 = H100-SXM5-80GB" "gemm +36 " "attention +6 " "GEMM shapes for 36 of 36 GEMM kernels"
                              "gemm bf16 +36 ")

# from-trace: the eight ranks of one DLRM step on V100 (tests/data/kineto, see its README).
set(dlrm ${PROJECT_SOURCE_DIR}/tests/data/kineto/param_dlrm_8rank_v100)
file(GLOB dlrm_ranks RELATIVE ${PROJECT_SOURCE_DIR} ${dlrm}/*.json.gz)
list(SORT dlrm_ranks)
set(trace_profile ${CMAKE_CURRENT_BINARY_DIR}/dlrm-v100.yaml)
parasim_cli_test(NAME calibrate_from_trace ARGS calibrate from-trace ${dlrm_ranks} --out ${trace_profile}
                 STDOUT_REGEX "Traces +8 files" "Tesla V100-SXM2-32GB: no bundled hardware" "gemm +224 " "nccl +64 "
                              "GEMM shapes for 224 of 224 GEMM kernels; sizes for 64 of 64 NCCL kernels"
                              "8 collectives matched across the 8 ranks" "written to .*dlrm-v100.yaml"
                              "Use it +`profile: .*dlrm-v100.yaml` in a scenario")
# The report's figures through --json.
parasim_cli_test(NAME calibrate_from_trace_json ARGS calibrate from-trace ${dlrm_ranks} --json --out ${trace_profile}
                 JSON files.0.rank=0 files.7.rank=7 files.0.gpu=Tesla\ V100-SXM2-32GB classes.gemm.count=224 classes.nccl.count=64
                      join.gemm_kernels_with_shape=224 samples.collectives=8 profile.name=dlrm-v100)
# Two runs write the same profile, byte for byte.
set(twice ${CMAKE_CURRENT_BINARY_DIR}/dlrm-twice.yaml)
set(twice_cmd "$<TARGET_FILE:parasim>;calibrate;from-trace;${dlrm_ranks};--out;${twice}")
add_test(NAME cli_calibrate_from_trace_deterministic
         COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${twice_cmd}" -DFILE=${twice} -DWORKDIR=${PROJECT_SOURCE_DIR}
                 -P ${PROJECT_SOURCE_DIR}/tests/calibrate/same_profile_twice.cmake)
set_tests_properties(cli_calibrate_from_trace_deterministic PROPERTIES LABELS cli)
# The written profile loads, and moves the reference job (through diff, on the A100 reference scenario).
parasim_cli_test(NAME calibrate_trace_profile_show ARGS calibrate show ${trace_profile}
                 STDOUT_REGEX "Profile +dlrm-v100" "GPU +Tesla V100-SXM2-32GB" "GEMM points \\(21\\)" "Collective points \\(7\\)")
parasim_cli_test(NAME calibrate_trace_profile_diff ARGS calibrate diff a100 ${trace_profile}
                 STDOUT_REGEX "overlap.compute_slowdown.memory_bound.nvlink" "iteration [0-9.]+ s -> [0-9.]+ s")
set_tests_properties(cli_calibrate_trace_profile_show cli_calibrate_trace_profile_diff PROPERTIES DEPENDS cli_calibrate_from_trace_json)
# With a datasheet the efficiencies are fitted (or the report says why not).
parasim_cli_test(NAME calibrate_from_trace_hardware ARGS calibrate from-trace tests/data/kineto/hta_a100_event_sync_multi_stream.json.gz
                      --hardware scenarios/hardware/a100-sxm4-40gb.yaml --json
                 JSON gpu.hardware=A100-SXM4-40GB gpu.device=NVIDIA\ A100-PG509-200 classes.gemm.count=3 base=${PROJECT_SOURCE_DIR}/scenarios/profiles/a100-sxm4.yaml)
# Kernel counts and GPU time per class against an independent count in Python (tests/calibrate/kineto_count.py).
find_program(PYTHON3 python3 REQUIRED)
add_test(NAME cli_calibrate_kineto_counts
         COMMAND ${PYTHON3} ${PROJECT_SOURCE_DIR}/tests/calibrate/kineto_count.py $<TARGET_FILE:parasim> ${dlrm_ranks}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME cli_calibrate_kineto_counts_a100
         COMMAND ${PYTHON3} ${PROJECT_SOURCE_DIR}/tests/calibrate/kineto_count.py $<TARGET_FILE:parasim>
                 tests/data/kineto/hta_a100_alexnet_single_gpu.json.gz tests/data/kineto/hta_a100_event_sync_multi_stream.json.gz
                 tests/data/kineto/hta_a100_simple_add_kineto_pair_with_et.json.gz tests/data/kineto/hta_a100_triton_kernel_tiny.json.gz
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME cli_calibrate_kineto_counts_h100
         COMMAND ${PYTHON3} ${PROJECT_SOURCE_DIR}/tests/calibrate/kineto_count.py $<TARGET_FILE:parasim>
                 tests/data/kineto/h100_llama2_7b_layer_torch211.json.gz
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME cli_calibrate_kineto_counts_unknown_gpu
         COMMAND ${PYTHON3} ${PROJECT_SOURCE_DIR}/tests/calibrate/kineto_count.py $<TARGET_FILE:parasim>
                 tests/data/kineto/hta_ws128_sampled_rank0.json.gz tests/data/kineto/hta_ws128_sampled_rank1.json.gz
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_calibrate_kineto_counts cli_calibrate_kineto_counts_a100 cli_calibrate_kineto_counts_h100 cli_calibrate_kineto_counts_unknown_gpu PROPERTIES LABELS cli)

# Every unusable input: one line FILE: error: …, exit 2.
set(trace_errors ${PROJECT_SOURCE_DIR}/tests/calibrate/data/trace_errors)
foreach(input IN ITEMS bad/empty.json bad/not_json.json bad/truncated.json bad/truncated.json.gz bad/corrupt.json.gz
                       bad/top_level_list.json bad/chakra_small.json bad/huge_sms.json bad/huge_sms_double.json bad/huge_ts.json bad/huge_device.json hta_mi250_rocm62_tiny.json.gz
                       hta_a100_cupti_profiler_range_no_kernels.json.gz)
  get_filename_component(name ${input} NAME)
  string(REPLACE "." "_" name ${name})
  parasim_cli_test(NAME calibrate_trace_error_${name} ARGS calibrate from-trace tests/data/kineto/${input} RC 2
                   STDERR ${trace_errors}/${name}.expected)
endforeach()
# A truncated gzip file whose last bytes read as a 4 GiB trailer fails at once in little memory (100 MiB of
# address space, the program and its libraries included: sized from that trailer, the buffer alone would be 4 GiB). Not under ASan, whose shadow
# memory alone reserves terabytes of address space.
if(NOT PARASIM_SANITIZE)
  add_test(NAME cli_calibrate_trace_truncated_trailer_bounded
           COMMAND bash -c "ulimit -v 102400; \"$<TARGET_FILE:parasim>\" calibrate from-trace tests/data/kineto/bad/truncated_trailer.json.gz; test $? -eq 2"
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli_calibrate_trace_truncated_trailer_bounded PROPERTIES LABELS cli TIMEOUT 10)
endif()
parasim_cli_test(NAME calibrate_trace_error_truncated_trailer ARGS calibrate from-trace tests/data/kineto/bad/truncated_trailer.json.gz RC 2
                 STDERR ${trace_errors}/truncated_trailer.expected)
parasim_cli_test(NAME calibrate_trace_error_missing ARGS calibrate from-trace tests/data/kineto/nowhere.json.gz RC 2
                 STDERR ${trace_errors}/missing.expected)
parasim_cli_test(NAME calibrate_trace_error_mixed_gpus
                 ARGS calibrate from-trace tests/data/kineto/param_dlrm_8rank_v100/worker0_step_12.1694128201545.pt.trace.json.gz
                      tests/data/kineto/hta_a100_alexnet_single_gpu.json.gz RC 2
                 STDERR ${trace_errors}/mixed_gpus.expected)
parasim_cli_test(NAME calibrate_trace_error_bandwidth ARGS calibrate from-trace tests/data/kineto/hta_a100_alexnet_single_gpu.json.gz
                      --network-bandwidth 400Gbit RC 2 STDERR ${trace_errors}/bad_bandwidth.expected)

# The larger real NVIDIA traces of ../shared/data/kineto (A100 and V100), grouped by GPU model: counts against
# Python, and a profile from each group. Labelled long: they need ../shared/data beside the repository.
set(shared_kineto ${PROJECT_SOURCE_DIR}/../shared/data/kineto)
foreach(group IN ITEMS
        "a100_pg509:hta_a100_ddp2_rank0_nccl_metadata.json.gz,hta_a100_ws8_rank3_trace_diff_control.json.gz"
        "a100_sxm4_80gb:hta_a100sxm80_ws16_rank0_sendrecv.json.gz"
        "v100_32gb:hta_v100_rank0_ns_resolution.json.gz,hta_v100_ws2_rank1_ddp_allreduce.json.gz"
        "v100_16gb:hta_v100_ws2_rank1_trace_diff_test.json.gz")
  string(REPLACE ":" ";" parts "${group}")
  list(GET parts 0 name)
  list(GET parts 1 files)
  string(REPLACE "," ";" files "${files}")
  list(TRANSFORM files PREPEND ${shared_kineto}/)
  add_test(NAME cli_calibrate_kineto_counts_${name}
           COMMAND ${PYTHON3} ${PROJECT_SOURCE_DIR}/tests/calibrate/kineto_count.py $<TARGET_FILE:parasim> ${files}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli_calibrate_kineto_counts_${name} PROPERTIES LABELS "cli;long")
  parasim_cli_test(NAME calibrate_from_trace_${name} ARGS calibrate from-trace ${files} --out ${CMAKE_CURRENT_BINARY_DIR}/${name}.yaml
                   STDOUT_REGEX "Join" "written to" LABELS long)
endforeach()

# The build without a CUDA toolkit: configuring with it hidden succeeds and leaves the collector out.
add_test(NAME cmake_configure_without_cuda
         COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR} -DBINARY=${CMAKE_BINARY_DIR}/configure-without-cuda
                 -P ${PROJECT_SOURCE_DIR}/tests/calibrate/configure_without_cuda.cmake)
set_tests_properties(cmake_configure_without_cuda PROPERTIES LABELS cmake)
# The CUPTI collector, where it was built: --help works, and with no GPU visible it says so in one line
# and exits 4 (CUDA_VISIBLE_DEVICES empty hides every GPU, so this holds on GPU nodes too).
if(TARGET parasim-calibrate-gpu)
  add_test(NAME cupti_collector_help COMMAND parasim-calibrate-gpu --help)
  set_tests_properties(cupti_collector_help PROPERTIES LABELS cupti PASS_REGULAR_EXPRESSION "--iterations")
  set(no_gpu "${CMAKE_COMMAND};-E;env;CUDA_VISIBLE_DEVICES=;$<TARGET_FILE:parasim-calibrate-gpu>;--out;${CMAKE_CURRENT_BINARY_DIR}/no-gpu.yaml")
  add_test(NAME cupti_collector_no_gpu
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${no_gpu}" -DEXPECT_RC=4
                   "-DEXPECT_STDERR_REGEX=^parasim-calibrate-gpu: error: no CUDA GPU on this machine \\(.*\\); run parasim-calibrate-gpu on a GPU node$"
                   -P ${PROJECT_SOURCE_DIR}/tests/calibrate/expect_exit.cmake)
  set_tests_properties(cupti_collector_no_gpu PROPERTIES LABELS cupti)
endif()

# from-log: the two Megatron-LM runs measured on an H100 (tests/data/logs/megatron/PROVENANCE.md), read
# back, priced as validate prices their rows (scenarios/measured/megatron_h100_1gpu.yaml), within 120 columns.
set(h100_logs tests/data/logs/megatron/h100_gpt0.7b_mb4.log tests/data/logs/megatron/h100_gpt0.7b_mb2_full_recompute.log)
parasim_cli_test(NAME calibrate_from_log ARGS calibrate from-log ${h100_logs} --gpu h100-sxm5-80gb MAX_COLUMNS 120
                 STDOUT_REGEX "h100_gpt0.7b_mb4 +1 +1.265 s +[0-9.]+ ms +[-+][0-9.]+% +25.41 GiB +[0-9.]+ GiB +[-+][0-9]\\.[0-9]%"
                              "h100_gpt0.7b_mb2_full_recompute +1 +1.697 s"
                              "tp1 pp1 dp1 mb4 sp off recompute none zero 1" "tp1 pp1 dp1 mb2 sp off recompute full zero 1"
                              "gpt 12 layers, hidden 2048, 16 heads, ffn 8192, vocab 32000, seq 2048, bf16 eager, dropout 0"
                              "30 step lines,\n +measured = median of the last 20; 2 memory lines")
parasim_cli_test(NAME calibrate_from_log_json ARGS calibrate from-log ${h100_logs} --gpu h100-sxm5-80gb --json
                 JSON logs.0.id=h100_gpt0.7b_mb4 logs.0.gpus=1 logs.0.step_lines=30 logs.0.steps_used=20 logs.0.fits=ON
                      "logs.1.plan=tp1 pp1 dp1 mb2 sp off recompute full zero 1"
                 STDOUT_REGEX "\"peak_counts\": \"max allocated\",\n +\"peak_printed_bytes\": 27281619681\\.28")
# That log's Megatron-LM found neither Transformer Engine nor apex and stepped torch.optim's foreach Adam,
# whose sqrt(v) is a fourth fp32 copy of the 0.674 B parameters (2.51 GiB) once the activations are gone:
# the full-recompute run's peak is its step (11.30 GiB of state + 2.51), against 14.12 GiB printed.
parasim_cli_test(NAME calibrate_from_log_torch_optimizer ARGS calibrate from-log tests/data/logs/megatron/h100_gpt0.7b_mb2_full_recompute.log
                 --gpu h100-sxm5-80gb
                 MAX_COLUMNS 120 STDOUT_REGEX "14.12 GiB +13.81 GiB +-2.2%" "recompute full zero 1\n +Adam: torch.optim's foreach \\(the log: no Transformer Engine or apex\\)")
# The same log, predicted as the validation row of that run is: one model, one answer.
parasim_cli_test(NAME calibrate_from_log_matches_row ARGS validate scenarios/measured/megatron_h100_1gpu.yaml --json
                 STDOUT_REGEX "\"predicted_iteration_s\": 0\\.729211174173,")
parasim_cli_test(NAME calibrate_from_log_matches_log ARGS calibrate from-log ${h100_logs} --gpu h100-sxm5-80gb --json
                 STDOUT_REGEX "\"predicted_iteration_s\": 0\\.729211174173,")
parasim_cli_test(NAME calibrate_from_log_no_steps ARGS calibrate from-log tests/data/logs/megatron/no_steps.log --gpu h100-sxm5-80gb RC 2
                 STDERR ${cal_data}/from_log_no_steps.expected)
parasim_cli_test(NAME calibrate_from_log_bad_gpu ARGS calibrate from-log ${h100_logs} --gpu h100 RC 2
                 STDERR ${cal_data}/from_log_bad_gpu.expected)

# from-log on torchtitan logs (tests/data/logs/torchtitan/PROVENANCE.md: made in torchtitan's format
# with the figures of two published rows): the model, mesh and start lines give the run, tps the step
# time, the step lines' memory the peak (max reserved); priced as validate prices the same row.
set(torchtitan_logs tests/data/logs/torchtitan/llama3_8b_fsdp8.log tests/data/logs/torchtitan/llama3_70b_fsdp32_tp8_float8.log)
parasim_cli_test(NAME calibrate_from_log_torchtitan ARGS calibrate from-log ${torchtitan_logs} --gpu h100-96gb-500w MAX_COLUMNS 120
                 STDOUT_REGEX "llama3_8b_fsdp8 +8 +2.843 s +2.28 s +-19.8% +82.4 GiB +78.11 GiB +-5.2%"
                              "tp1 pp1 dp8 mb2 sp off recompute selective zero 3"
                              "llama 32 layers, hidden 4096, 32 heads \\(8 kv\\), ffn 14336, vocab 128256, seq 8192, bf16 flash, dropout 0"
                              "11 step lines,\n +measured = median of the last 8; 11 memory lines \\(max reserved\\)"
                              "llama3_70b_fsdp32_tp8_float8 +256 +19.76 s" "tp8 pp1 dp32 mb16 sp on recompute full zero 3"
                              "approximate: torch.compile")
parasim_cli_test(NAME calibrate_from_log_torchtitan_json ARGS calibrate from-log ${torchtitan_logs} --gpu h100-96gb-500w --json
                 JSON logs.0.stack=torchtitan logs.0.peak_counts=max\ reserved logs.1.gpus=256 logs.1.step_lines=8
                 STDOUT_REGEX "\"predicted_iteration_s\": 2\\.280303378903,")
# The same run as validate's row (tests/data/validation/stacks.yaml holds it): one model, one answer.
parasim_cli_test(NAME calibrate_from_log_torchtitan_matches_row ARGS validate tests/data/validation/stacks.yaml --json
                 STDOUT_REGEX "\"predicted_iteration_s\": 2\\.280303378903,")
parasim_cli_test(NAME calibrate_from_log_torchtitan_no_steps ARGS calibrate from-log tests/data/logs/torchtitan/no_steps.log --gpu h100-96gb-500w RC 2
                 STDERR ${cal_data}/from_log_torchtitan_no_steps.expected)

# from-log on torchtitan runs made for real on one H200 (tests/data/logs/torchtitan/PROVENANCE.md): torchtitan
# v0.1.0's 0-D mesh and "Trainer is initialized with ..." batch line; the step time from the steady tps.
set(h200_torchtitan_logs tests/data/logs/torchtitan/h200_llama3_1b_b4_s4096.log tests/data/logs/torchtitan/h200_llama3_3b_b2_s8192_sac.log
                         tests/data/logs/torchtitan/h200_llama3_1b_b8_s4096_full_compile.log)
parasim_cli_test(NAME calibrate_from_log_torchtitan_h200 ARGS calibrate from-log ${h200_torchtitan_logs} --gpu h200-sxm-141gb MAX_COLUMNS 120
                 STDOUT_REGEX "h200_llama3_1b_b4_s4096 +1 +284.9 ms +[0-9.]+ ms +[-+][0-9.]+% +43.34 GiB +[0-9.]+ GiB +[-+][0-9.]+%"
                              "h200_llama3_3b_b2_s8192_sac +1 +978.9 ms" "h200_llama3_1b_b8_s4096_full_compile +1 +607.4 ms"
                              "tp1 pp1 dp1 mb4 sp off recompute none zero 0" "tp1 pp1 dp1 mb2 sp off recompute selective zero 0"
                              "llama 28 layers, hidden 3072, 24 heads \\(8 kv\\), ffn 8192, vocab 2256, seq 8192"
                              "30 step lines,\n +measured = median of the last 20; 30 memory lines \\(max reserved\\)")
parasim_cli_test(NAME calibrate_fit_torchtitan_h200 ARGS calibrate fit ${h200_torchtitan_logs} --gpu h200-sxm-141gb --json
                 JSON network_fitted=OFF logs.0.id=h200_llama3_1b_b4_s4096 logs.2.id=h200_llama3_1b_b8_s4096_full_compile)

# from-log on NeMo logs (tests/data/logs/nemo/PROVENANCE.md: made in NeMo's format with the figures of two
# published rows): the experiment configuration gives the run, train_step_timing the step time (a
# progress bar's carriage-return redraws and the launcher's "0: " prefix read alike); priced as validate
# prices the same runs written as rows (tests/data/logs/nemo/runs.yaml).
set(nemo_logs tests/data/logs/nemo/gpt3_5b_64g.log tests/data/logs/nemo/llama2_7b_8g.log)
parasim_cli_test(NAME calibrate_from_log_nemo ARGS calibrate from-log ${nemo_logs} --gpu h100-sxm5-80gb MAX_COLUMNS 120
                 STDOUT_REGEX "gpt3_5b_64g +64 +2.8 s +2.354 s +-15.9% +- +[0-9.]+ GiB +-"
                              "tp1 pp1 dp64 mb4 sp off recompute none zero 1"
                              "gpt 24 layers, hidden 4096, 32 heads, ffn 16384, vocab 50304, seq 2048, fp8 flash, dropout 0"
                              "50 step lines,[ \n]+measured = median of the last 34; no memory lines"
                              "llama2_7b_8g +8 +3.866 s +3.422 s" "llama 32 layers, hidden 4096, 32 heads, ffn 11008, vocab 32000, seq 4096"
                              "NeMo's experiment configuration")
parasim_cli_test(NAME calibrate_from_log_nemo_json ARGS calibrate from-log ${nemo_logs} --gpu h100-sxm5-80gb --json
                 JSON logs.0.stack=NeMo logs.0.peak_counts=none logs.0.step_lines=50 logs.1.gpus=8 logs.1.steps_used=20
                 STDOUT_REGEX "\"predicted_iteration_s\": 2\\.354099331977," "\"predicted_iteration_s\": 3\\.422138586375,")
parasim_cli_test(NAME calibrate_from_log_nemo_matches_rows ARGS validate tests/data/logs/nemo/runs.yaml --json
                 STDOUT_REGEX "\"predicted_iteration_s\": 2\\.354099331977," "\"predicted_iteration_s\": 3\\.422138586375,")
parasim_cli_test(NAME calibrate_from_log_nemo_no_steps ARGS calibrate from-log tests/data/logs/nemo/no_steps.log --gpu h100-sxm5-80gb RC 2
                 STDERR ${cal_data}/from_log_nemo_no_steps.expected)
parasim_cli_test(NAME calibrate_fit_nemo ARGS calibrate fit ${nemo_logs} --gpu h100-sxm5-80gb --json
                 JSON logs.0.id=gpt3_5b_64g logs.1.id=llama2_7b_8g)

# fit: the per-cluster correction on the three H100 logs; the corrected profile loads and prices a job.
set(fitted_profile ${CMAKE_CURRENT_BINARY_DIR}/h100-logs-fit.yaml)
parasim_cli_test(NAME calibrate_fit ARGS calibrate fit ${h100_logs} tests/data/logs/megatron/h100_gpt1.7b_s512_mb16.log --gpu h100-sxm5-80gb
                      --out ${fitted_profile} MAX_COLUMNS 120
                 STDOUT_REGEX "Correction +gemm x[0-9.]+ +memory-bound x[0-9.]+ +network not fitted"
                              "h100_gpt0.7b_mb4 +1.265 s +-42.4% +[-+][0-9]\\.[0-9]% +[-+][0-9.]+%"
                              "MAPE +35.3% +[0-9]\\.[0-9]% +[0-9.]+%" "Use it +parasim simulate JOB --set profile=")
parasim_cli_test(NAME calibrate_fit_json ARGS calibrate fit ${h100_logs} --gpu h100-sxm5-80gb --json
                 JSON network_fitted=OFF logs.0.id=h100_gpt0.7b_mb4 STDOUT_REGEX "\"profile\": null")
parasim_cli_test(NAME calibrate_fit_profile_used ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --set profile=${fitted_profile}
                 STDOUT_REGEX "Iteration +[0-9.]+ m?s")
set_tests_properties(cli_calibrate_fit_profile_used PROPERTIES DEPENDS cli_calibrate_fit)
parasim_cli_test(NAME calibrate_fit_profile_shown ARGS calibrate show ${fitted_profile}
                 STDOUT_REGEX "Source +log: the bundled h100 profile corrected by calibrate fit on 3 logs" "Hardware +H100-SXM5-80GB")
set_tests_properties(cli_calibrate_fit_profile_shown PROPERTIES DEPENDS cli_calibrate_fit)
