# Integers past what parasim keeps in 32 bits, products of legal values that would not fit, and numbers
# past a double's range: each an exit-2 line with its location (the file's line and column, or the
# --set argument), never a wrapped number, a crash or a hang. Expected lines: expected/hardening/.
set(hardening ${CMAKE_CURRENT_SOURCE_DIR}/expected/hardening)
set(lab scenarios/jobs/llama2-7b-lab.yaml)
foreach(case IN ITEMS
    "plan_tp_past_32_bits|simulate;${lab};--set;plan.tp=2147483648"
    "plan_degrees_product|simulate;${lab};--set;plan.tp=2147483647"
    "plan_vpp_product|simulate;${lab};--set;plan.vpp=2147483647"
    "plan_micro_batch_product|simulate;${lab};--set;plan.micro_batch=2147483647"
    "plan_global_batch_passes|simulate;${lab};--set;plan.global_batch=2147483520"
    "plan_beyond_int64|simulate;${lab};--set;plan.global_batch=99999999999999999999"
    "cluster_nodes_past_32_bits|topo;scenarios/clusters/lab-2node.yaml;--set;nodes=4294967297"
    "cluster_gpus_bound|topo;scenarios/clusters/lab-2node.yaml;--set;nodes=2147483647"
    "model_vocab_bound|simulate;${lab};--set;model.vocab=2147483647"
    "training_seq_len_bound|simulate;${lab};--set;training.seq_len=2147483648"
    "hf_vocab_bound|model;tests/data/hf/bad/vocab-2e31/config.json"
    "hf_vocab_past_32_bits|model;tests/data/hf/bad/vocab-2e32/config.json"
    "hf_number_overflow|model;tests/data/hf/bad/vocab-1e400/config.json"
    "number_overflow|simulate;${lab};--set;plan.bucket_params=1e400"
    "unit_product_overflow|topo;scenarios/clusters/lab-2node.yaml;--set;node.nics.bandwidth=1e308 TB/s"
    "hardware_sms_past_32_bits|topo;scenarios/clusters/lab-2node.yaml;--set;node.hardware.sms=4294967297")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(REMOVE_AT parts 0)
  parasim_cli_test(NAME hardening_${name} ARGS ${parts} RC 2 STDERR ${hardening}/${name}.expected)
endforeach()
# A validation row past the model's bounds is an error for that row; the other row runs.
parasim_cli_test(NAME hardening_validation_row_past_bounds ARGS validate tests/data/validation/huge_values.yaml RC 2
                 STDERR ${hardening}/validation_row_past_32_bits.expected STDOUT_REGEX "small +1 s +[0-9.]+ ms")
parasim_cli_test(NAME hardening_validation_row_absurd ARGS validate tests/data/validation/absurd_values.yaml RC 2
                 STDERR ${hardening}/validation_row_absurd.expected STDOUT_REGEX "small +1 s +[0-9.]+ ms")
# topo shows the cluster and does not judge a plan it does not use: the README's two-node --dot works.
parasim_cli_test(NAME topo_ignores_unfit_plan ARGS topo scenarios/default.yaml --set cluster.nodes=2 --dot STDOUT_REGEX "graph \"H100-1024\" \\{")
# simulate --fail-on-oom: the result is printed, and the exit code says the plan does not fit (3) or does (0).
parasim_cli_test(NAME simulate_fail_on_oom ARGS simulate scenarios/default.yaml --set plan.pp=1 --set plan.vpp=1 --set plan.dp=128 --set plan.zero=0
                 --fail-on-oom RC 3 STDOUT_REGEX "Memory +OOM on stage 0")
parasim_cli_test(NAME simulate_fail_on_oom_fits ARGS simulate scenarios/default.yaml --fail-on-oom STDOUT_REGEX "Memory +fits")
# Bundled hardware by its short name wherever a hardware file is expected; a name that is not one, or
# that names several, is an error listing them.
parasim_cli_test(NAME hardware_short_name ARGS topo scenarios/default.yaml --set cluster.node.hardware=h200 STDOUT_REGEX "1024 x H200-SXM-141GB")
parasim_cli_test(NAME hardware_ambiguous ARGS topo scenarios/default.yaml --set cluster.node.hardware=h100 RC 2 STDERR ${hardening}/hardware_ambiguous.expected)
parasim_cli_test(NAME hardware_unknown ARGS topo scenarios/default.yaml --set cluster.node.hardware=h20 RC 2 STDERR ${hardening}/hardware_unknown.expected)
# Every command's --help ends with examples of itself.
foreach(command IN ITEMS plan simulate validate tasks model topo whatif calibrate schema confirm)
  parasim_cli_test(NAME help_examples_${command} ARGS ${command} --help STDOUT_REGEX "Examples:\n  parasim ${command} ")
endforeach()
# A file that cannot be written (a full disk: /dev/full) is an error, not a success.
parasim_cli_test(NAME trace_disk_full ARGS simulate scenarios/jobs/llama2-7b-lab.yaml --trace /dev/full RC 2 STDERR ${hardening}/trace_disk_full.expected)
# Absurd finite values (a bandwidth of 1e-300, a sequence of 2^27 tokens on a 7B model) run the iteration past
# the simulator's 64-bit picosecond clock: one located line and exit 2 within seconds, never a hang or a wrapped
# clock (it gave MFU 628%); in a what-if study that variant's row says so and the others still run.
parasim_cli_test(NAME simulate_clock_nic ARGS simulate ${lab} --set cluster.node.nics.bandwidth=1e-300Gb/s RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_clock_nic.expected)
parasim_cli_test(NAME simulate_clock_seq ARGS simulate ${lab} --set training.seq_len=134217728 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_clock_seq.expected)
parasim_cli_test(NAME plan_clock_hbm ARGS plan ${lab} --set cluster.node.hardware.hbm.bandwidth=1e-200TB/s RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_clock_hbm.expected)
parasim_cli_test(NAME whatif_clock_variant ARGS whatif ${lab} --vary cluster.node.nics.bandwidth=1e-300Gb/s,400Gb/s --fixed-plan --json
                 JSON "variants.0.failure=the iteration would run past 100 days of simulated time (an activity of 1.49e+299 s): a bandwidth, a peak or a size in the scenario is out of proportion"
                      variants.0.internal_error=OFF variants.1.fits=ON)

# Every --help within 120 columns: descriptions wrap under their column (cli/help_formatter.hpp).
foreach(help_of IN ITEMS plan simulate whatif validate topo tasks model schema calibrate confirm)
  parasim_cli_test(NAME help_width_${help_of} ARGS ${help_of} --help MAX_COLUMNS 120 STDOUT_REGEX "Examples")
endforeach()
foreach(help_of IN ITEMS show diff from-trace from-log fit)
  parasim_cli_test(NAME help_width_calibrate_${help_of} ARGS calibrate ${help_of} --help MAX_COLUMNS 120 STDOUT_REGEX "Usage")
endforeach()
# An empty --set value says what it lacks (it read "found a list" before).
parasim_cli_test(NAME simulate_set_empty_value ARGS simulate ${lab} --set plan.tp= RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/simulate_set_empty_value.expected)
