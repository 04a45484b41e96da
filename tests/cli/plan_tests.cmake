# parasim plan end to end: Galvatron's space, the search on a 16-GPU lab job, its outputs (plan YAML
# that simulate reads back, Megatron-LM arguments, DeepSpeed config), given plans, bad input.
set(lab scenarios/jobs/llama2-7b-lab.yaml)
set(plan_out ${CMAKE_CURRENT_BINARY_DIR}/plan-out)

parasim_cli_test(NAME plan_help ARGS plan --help STDOUT_REGEX "--list-space" "--explain" "--include" "--from-megatron-args" "--headroom")
# Galvatron's published counts: 34 per-layer strategies on 8 GPUs, 22 without DP+SDP trees.
parasim_cli_test(NAME plan_space_8 ARGS plan --list-space --gpus 8
                 STDOUT_REGEX "8 GPUs: 34 per-layer strategies; 22 without mixing DP and SDP" "pp1 · tp2×dp4 \\(tp inner\\)" "pruned \\(dp with sdp\\)")
parasim_cli_test(NAME plan_space_64_json ARGS plan --list-space --gpus 64 --json JSON strategies=229 without_dp_with_sdp=79)

# The search: a best plan, its launch arguments, the files; twice the same bytes.
parasim_cli_test(NAME plan_lab ARGS plan ${lab} --out ${plan_out}
                 STDOUT_REGEX "Searched +[0-9]+ candidates; [0-9]+ fit" "Launch +tp[0-9]" "Megatron-LM arguments" "--tensor-model-parallel-size [0-9]"
                              "--global-batch-size 32" "given"
                 FILE ${plan_out}/best_plan.yaml REPEAT)
set_tests_properties(cli_plan_lab PROPERTIES FIXTURES_SETUP planned)
parasim_cli_test(NAME plan_lab_json ARGS plan ${lab} --json --top 3 REPEAT JSON gpus=16 plans.0.rank=1 plans.0.fits=ON)
# The plan file is a plan simulate accepts, and it simulates to the time the planner reported.
parasim_cli_test(NAME plan_best_simulates ARGS simulate ${lab} --plan ${plan_out}/best_plan.yaml STDOUT_REGEX "Iteration" "Memory +fits")
set_tests_properties(cli_plan_best_simulates PROPERTIES FIXTURES_REQUIRED planned)
# Plans given as YAML or as Megatron-LM arguments are ranked with the rest; --explain compares.
parasim_cli_test(NAME plan_given ARGS plan ${lab} --top 40 --explain
                 --from-megatron-args "--tensor-model-parallel-size 8 --sequence-parallel --pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 32"
                 STDOUT_REGEX "given\n +tp8 sp · pp2 1f1b · dp1 · mb1" "Why the best plan beats runner-up" "Why the best plan beats given plan" "Largest difference")
parasim_cli_test(NAME plan_power_of_two ARGS plan ${lab} --power-of-two --micro-batch 1 --micro-batch 2 --json JSON gpus=16)

parasim_cli_test(NAME plan_negative_headroom ARGS plan ${lab} --headroom=-3GiB RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_negative_headroom.expected)
parasim_cli_test(NAME plan_bad_headroom ARGS plan ${lab} --headroom "3 parsecs" RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_bad_headroom.expected)
parasim_cli_test(NAME plan_bad_megatron_args ARGS plan ${lab} --from-megatron-args "--tensor-model-parallel-size x" RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_bad_megatron_args.expected)
parasim_cli_test(NAME plan_missing_include ARGS plan ${lab} --include nowhere.yaml RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_missing_include.expected)
parasim_cli_test(NAME plan_space_not_power_of_two ARGS plan --list-space --gpus 12 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_space_not_power_of_two.expected)
parasim_cli_test(NAME plan_no_scenario ARGS plan RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_no_scenario.expected)
parasim_cli_test(NAME plan_needs_model ARGS plan scenarios/clusters/lab-2node.yaml RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_needs_model.expected)
# Llama-3 405B on 16 GPUs: nothing fits, and the planner says so with the counts.
parasim_cli_test(NAME plan_nothing_fits ARGS plan ${lab} --set model=scenarios/models/llama-3-405b.yaml RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_nothing_fits.expected)

# Constraints: --fix pins a dimension, --max-pp bounds the pipeline; every searched plan obeys them
# (the scenario's own plan, tp2, is left out as it does not).
parasim_cli_test(NAME plan_fixed ARGS plan ${lab} --fix tp=4 --fix schedule=zb-h1 --max-pp 2 --json --top 3
                 JSON plans.0.tp=4 plans.0.pp=2 plans.0.schedule=zb-h1 plans.1.tp=4 plans.1.schedule=zb-h1 plans.2.tp=4)
parasim_cli_test(NAME plan_bad_fix ARGS plan ${lab} --fix tq=4 RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_bad_fix.expected)
parasim_cli_test(NAME plan_fix_nothing ARGS plan ${lab} --fix tp=32 RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_fix_nothing.expected)
# Which constraint removed the last candidate, and why (issue 26, item 3): tp 16 on Llama-3 70B's 8 key/value heads.
parasim_cli_test(NAME plan_fix_tp16_kv_heads ARGS plan scenarios/default.yaml --fix tp=16 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_fix_tp16_kv_heads.expected)
# Together, not alone: no single pin is to blame.
parasim_cli_test(NAME plan_fix_together ARGS plan ${lab} --fix tp=4 --fix pp=8 --fix dp=2 --fix mb=64 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_fix_together.expected)
# A time limit still returns a plan (a generous one here: the search takes about a second).
parasim_cli_test(NAME plan_time_limit ARGS plan ${lab} --time-limit 60 --json JSON gpus=16 time_limited=OFF plans.0.fits=ON)

# The planner against published plans (planner issue): each row's model, cluster, precision and batch
# planned from scratch with the published plan (its unprinted fields filled as validate fills them)
# among the candidates; the plan found must be at least as fast under the same simulator (exit 3
# otherwise). Two small rows in CI (copied into tests/data); every row of ../shared/validation/megatron.yaml
# under the long label (about 5 minutes on 2 cores).
set(megatron_rows tests/data/validation/megatron_two_rows.yaml)
parasim_cli_test(NAME plan_published_subset ARGS plan --published ${megatron_rows} --rows korthikanti-t5-02-22B-sel-sp
                 --rows megatron-readme-h100-weak-01-1.7B --json
                 JSON checked=2 sound=2 rows.0.id=korthikanti-t5-02-22B-sel-sp rows.0.sound=ON rows.1.sound=ON rows.1.published_fits=ON)
parasim_cli_test(NAME plan_published_subset_table ARGS plan --published ${megatron_rows} --rows megatron-readme-h100-weak-01-1.7B
                 MAX_COLUMNS 120 STDOUT_REGEX "megatron-readme-h100-weak-01-1.7B +tp1 · pp1 · dp48 zero1 · mb4" "1 rows planned: the best plan found is at least as fast as the published one on 1")
# --explain: every cost of a published plan against the best plan's, the largest difference named.
parasim_cli_test(NAME plan_published_explain ARGS plan --published ${megatron_rows} --rows korthikanti-t5-02-22B-sel-sp --explain
                 STDOUT_REGEX "Why the best plan beats the published plan of korthikanti-t5-02-22B-sel-sp" "Largest difference: exposed tp communication")
parasim_cli_test(NAME plan_published_bad_row ARGS plan --published ${megatron_rows} --rows no-such-row RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_published_bad_row.expected)
parasim_cli_test(NAME plan_published_megatron ARGS plan --published ${PROJECT_SOURCE_DIR}/../shared/validation/megatron.yaml --json
                 JSON checked=40 sound=40 LABELS long)
# --framework: what the plan must launch on (Megatron-DeepSpeed: 1F1B, no interleaving).
parasim_cli_test(NAME plan_framework_deepspeed ARGS plan ${lab} --framework deepspeed --json --top 3
                 JSON plans.0.schedule=1f1b plans.0.vpp=1 plans.1.schedule=1f1b plans.2.vpp=1 launch.framework=megatron-deepspeed
                      launch.megatron_deepspeed_commit=4efb479d)
# ... and the launch is Megatron-DeepSpeed's: its pretrain_gpt.py arguments beside the DeepSpeed config.
parasim_cli_test(NAME plan_framework_deepspeed_launch ARGS plan ${lab} --framework deepspeed
                 STDOUT_REGEX "Megatron-DeepSpeed arguments \\(Megatron-DeepSpeed 4efb479d; --out writes launch_megatron_deepspeed.sh and ds_config.json\\)"
                              "--zero-stage 2\n" "--deepspeed --deepspeed_config \"[$]HERE/ds_config.json\"")
parasim_cli_test(NAME plan_bad_framework ARGS plan ${lab} --framework torch RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_bad_framework.expected)
# --framework torchtitan: the plan torchtitan v0.2.2 runs and its job config, printed and named in
# plans.json; a model it does not ship is refused before any search (exit 2).
parasim_cli_test(NAME plan_framework_torchtitan ARGS plan scenarios/jobs/llama3-8b-128k-cp8.yaml --framework torchtitan
                 STDOUT_REGEX "torchtitan job config \\(torchtitan v0.2.2; --out writes torchtitan.toml\\)" "  name = \"llama3\"\n  flavor = \"8B\""
                              "  seq_len = 131072" "  data_parallel_shard_degree = [0-9]+")
parasim_cli_test(NAME plan_framework_torchtitan_json ARGS plan scenarios/jobs/llama3-8b-128k-cp8.yaml --framework torchtitan --json
                 JSON launch.framework=torchtitan launch.torchtitan_release=v0.2.2 plans.0.schedule=1f1b)
parasim_cli_test(NAME plan_torchtitan_refused ARGS plan ${lab} --framework torchtitan RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_torchtitan_refused.expected)
# Megatron-LM cannot launch DeepSeek's schedules: when the nominal best needs one (DualPipe-V for 17
# micro-batches over pp 8), what is launched is the fastest plan Megatron-LM runs (interleaved in groups
# of 9 and 8), and the nominal best is named with the gap and the reason.
parasim_cli_test(NAME plan_megatron_launchable ARGS plan ${lab} --global-batch 17
                 STDOUT_REGEX "Launch +tp[0-9]+ .*1f1b" "Nominal +tp[0-9]+ sp · pp[0-9]+ vpp2 dualpipe-v [^\n]*\n +is [0-9.]+% faster [^\n]*Megatron-LM cannot run it:\n +Megatron-LM has no DualPipe schedule \\(dualpipe-v: torchtitan's DualPipeV"
                              "Megatron-LM arguments \\(Megatron-LM d98e8a6")
# --from-megatron-args reads a launch line, script or file; a flag it does not know is exit 2 naming it,
# or skipped and listed under --ignore-unknown-flags.
parasim_cli_test(NAME plan_megatron_unknown_flag ARGS plan ${lab} --from-megatron-args "--tensor-model-parallel-size 2 --frobnicate 3 --global-batch-size 32" RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_megatron_unknown_flag.expected)
parasim_cli_test(NAME simulate_megatron_ignore_unknown ARGS simulate ${lab} --ignore-unknown-flags --json
                 --from-megatron-args "--tensor-model-parallel-size 2 --sequence-parallel --pipeline-model-parallel-size 2 --frobnicate 3 --micro-batch-size 1 --global-batch-size 32"
                 JSON "plan=tp2 sp · pp2 1f1b · dp4 · mb1")
# Priced with torch.optim's foreach Adam, the Megatron-LM launch says what its arguments cannot: with
# Transformer Engine or apex, Megatron-LM's Adam is fused.
parasim_cli_test(NAME plan_foreach_adam_noted ARGS plan ${lab} --set training.optimizer_kernel=foreach MAX_COLUMNS 120
                 STDOUT_REGEX "# priced with torch.optim's foreach Adam \\(sqrt\\(v\\) out of place\\); with Transformer Engine or apex, Adam is fused")
# A ZeRO-3 plan priced as FSDP runs it says so beside its DeepSpeed config; priced as DeepSpeed runs it, it does not.
parasim_cli_test(NAME plan_zero3_priced_as_fsdp ARGS plan ${lab} --fix zero=3 STDOUT_REGEX "DeepSpeed config" "priced as FSDP runs ZeRO-3")
parasim_cli_test(NAME plan_zero3_priced_as_deepspeed ARGS plan ${lab} --fix zero=3 --set training.zero3_engine=deepspeed
                 STDOUT_REGEX "DeepSpeed config" "zero_optimization")
# The default job's plan fits 120 columns: the figures a row, the plan under it with the runs of its
# layer split folded ([2,3*2,2*33,...]); --wide puts the plan and its whole split in the row.
parasim_cli_test(NAME plan_default_readable ARGS plan scenarios/default.yaml MAX_COLUMNS 120
                 STDOUT_REGEX " #  tie  iteration +80% interval  tokens/s  TFLOP/s/GPU" "\n 1 +1 +[0-9.]+ s +[0-9.]+ s - [0-9.]+ s +[0-9]+ [^\n]*\n    tp[0-9]+ sp · "
                              "Launch +tp[0-9]+")
# Every simulated plan carries its 80% prediction interval (the bundled error model, scenarios/error_model.yaml).
parasim_cli_test(NAME plan_intervals_json ARGS plan ${lab} --json STDOUT_REGEX "\"interval\": \\{\n +\"hi\": [0-9.e-]+,\n +\"lo\": [0-9.e-]+\n")
parasim_cli_test(NAME simulate_interval ARGS simulate ${lab} STDOUT_REGEX "Iteration +[0-9.]+ m?s \\(80% interval [0-9.]+ m?s - [0-9.]+ m?s\\)")
parasim_cli_test(NAME simulate_interval_json ARGS simulate ${lab} --json STDOUT_REGEX "\"interval\": \\{\n +\"hi\": [0-9.e-]+,\n +\"lo\": [0-9.e-]+\n")
parasim_cli_test(NAME plan_wide ARGS plan ${lab} --wide STDOUT_REGEX " #  plan +tie +iteration" "\n\\*?1  tp[0-9]+ [^\n]*· mb[0-9]+ +[0-9]+ +[0-9.]+ ms ")
# Ties and the recommendation (issue 26, item 2): every plan's tie group and margin in JSON; the default
# job's fastest launchable plan keeps 20 MiB free, so a tied plan with the memory model's margin is launched
# and the output says why.
parasim_cli_test(NAME plan_default_ties ARGS plan scenarios/default.yaml MAX_COLUMNS 120
                 STDOUT_REGEX "tie: plans within [0-9.]+% of their group's fastest"
                              "capacity 79.65 GiB less headroom 6.48 GiB"
                              "\nTied +tp[^\n]+ is [0-9.]+% faster by[ \n]+the simulator, inside the[ \n]+median error of a difference between plans \\([0-9.]+%\\); it is simpler")
# --explain: what the plan launched gives up against the nominal fastest, and why it was taken anyway.
parasim_cli_test(NAME plan_default_explain_launched ARGS plan scenarios/default.yaml --explain
                 MAX_COLUMNS 120
                 STDOUT_REGEX "Why the best plan beats the plan launched \\(#[0-9]+\\) \\(tp[^\n]+\\):[ \n]+[0-9.]+ m?s vs [0-9.]+ m?s per iteration, \\+[0-9.]+%"
                              "\nLaunched   anyway: tp[^\n]+\n +[^\n]*median error of a difference")
parasim_cli_test(NAME plan_ties_json ARGS plan ${lab} --json JSON plans.0.tie_group=1 plans.0.rank=1
                 STDOUT_REGEX "\"margin\": [0-9.e+]+" "\"recommended\": true" "\"why_recommended\": ")
# DeepSpeed's config only for a plan DeepSpeed runs (issue 20): an interleaved pipeline gets none and the
# reason instead; a Ulysses plan over data parallelism carries both sizes of DeepSpeed's mesh.
parasim_cli_test(NAME plan_no_ds_config_interleaved ARGS plan ${lab} --fix pp=2 --fix vpp=2 --out ${CMAKE_CURRENT_BINARY_DIR}/plan-interleaved
                 STDOUT_REGEX "Launch +tp1 · pp2 vpp2 interleaved-1f1b"
                              "\nDeepSpeed  no ds_config.json: DeepSpeed's pipeline engine has no interleaved schedule \\(virtual pipeline stages\\)\n")
parasim_cli_test(NAME plan_ds_config_ulysses_mesh ARGS plan scenarios/jobs/llama3-8b-128k-cp8.yaml --fix cp=8 --fix cp_kind=ulysses --fix pp=1 --fix tp=1
                 STDOUT_REGEX "Launch +tp1 · cp8 ulysses · pp1 · dp8" "DeepSpeed config \\(ds_config.json\\)\n\\{" "\"data_parallel_size\": 8,"
                              "\"sequence_parallel_size\": 8,")
# Megatron-LM runs DeepSeek-V3 with selective recompute by module where the attention core alone does
# not fit and full recompute is slower: the launch line lists the modules, with the fp8 recipe that
# allows recomputing the norms and the experts' activation. Its 60 micro-batches a replica over pp 8
# run interleaved in Megatron-Core's groups of 10.
parasim_cli_test(NAME plan_recompute_modules_launch ARGS plan scenarios/jobs/deepseek-v3-2048-h800.yaml --framework megatron --top 3
                 STDOUT_REGEX "recompute selective \\(([a-z_]+,)*moe_act,([a-z_]+,)*mla_up_proj\\)" "--recompute-granularity selective"
                 "--recompute-modules ([a-z_]+ )*moe_act ([a-z_]+ )*mla_up_proj" "--fp8-recipe tensorwise"
                 "interleaved-1f1b in groups of 10" "--microbatch-group-size-per-virtual-pipeline-stage 10")
# Work over a second reports progress on stderr: a bar on a terminal, plain lines elsewhere (here a
# pipe): one once a second has passed, one every 5 s, and the last with "done" (the default job's
# analytical scan takes seconds); none with --json.
add_test(NAME cli_plan_progress_lines COMMAND sh -c "$<TARGET_FILE:parasim> plan scenarios/default.yaml 2>&1 >/dev/null")
set_tests_properties(cli_plan_progress_lines PROPERTIES WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} LABELS cli
                     PASS_REGULAR_EXPRESSION "\nanalytical: [0-9]+/[0-9]+ \\([0-9]+%\\), [0-9]+ s, done\n" FAIL_REGULAR_EXPRESSION "\\[#")
add_test(NAME cli_plan_progress_silent_json COMMAND sh -c "$<TARGET_FILE:parasim> plan scenarios/jobs/qwen3-30b-a3b-64-h100.yaml --json 2>&1 >/dev/null")
set_tests_properties(cli_plan_progress_silent_json PROPERTIES WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} LABELS cli
                     PASS_REGULAR_EXPRESSION "^searched [0-9]+ candidates" FAIL_REGULAR_EXPRESSION "analytical:")
# 6 micro-batches a replica over pp 4: the planner runs interleaved 1F1B in Megatron-Core's groups of 6
# (--microbatch-group-size-per-virtual-pipeline-stage), named in the plan and in its JSON.
parasim_cli_test(NAME plan_interleaved_microbatch_group ARGS plan ${lab} --set plan.global_batch=24 --fix pp=4 --fix schedule=interleaved-1f1b
                 --fix mb=1 --framework megatron --json JSON plans.0.microbatch_group=6 plans.0.schedule=interleaved-1f1b)
