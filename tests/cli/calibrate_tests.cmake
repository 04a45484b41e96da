# parasim calibrate end to end: show, diff, from-trace.
set(cal_data ${PROJECT_SOURCE_DIR}/tests/calibrate/data)

parasim_cli_test(NAME calibrate_help ARGS calibrate --help STDOUT_REGEX "show" "diff")
# Every number with its value and source; a bundled profile by name or by file.
parasim_cli_test(NAME calibrate_show_table ARGS calibrate show scenarios/profiles/a100-sxm4.yaml
                 STDOUT_REGEX "Profile +a100" "gemm.efficiency.bf16 +0.869 +public: \\[MAMF\\]" "fabrics.nvlink.step_latency +5.7 us")
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
# What changed and how the reference job (GPT-3 175B on 1024 A100) moves.
parasim_cli_test(NAME calibrate_diff ARGS calibrate diff a100 scenarios/profiles/h100-sxm5.yaml
                 STDOUT_REGEX "Numbers +11 changed" "gemm.efficiency.bf16 +0.869 +0.803 +-7.6%" "iteration [0-9.]+ s -> [0-9.]+ s \\([-+][0-9.]+%\\)")
parasim_cli_test(NAME calibrate_diff_same ARGS calibrate diff h200 scenarios/profiles/h200.yaml --json REPEAT
                 JSON a.name=h200 b.name=h200 reference.relative_change=0.0)
parasim_cli_test(NAME calibrate_diff_json ARGS calibrate diff a100 h100 --json
                 JSON changed.0.key=gemm.efficiency.bf16 reference.scenario=scenarios/jobs/gpt3-175b-1024-a100.yaml
                 STDOUT_REGEX "\"a\": 0.869" "\"b\": 0.803")
