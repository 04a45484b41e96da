# parasim confirm: the top plans written as short runs with their runners, and read back once run.
set(confirm_job tests/data/confirm/gpt0.7b-h200-1gpu.yaml)
set(confirm_out ${CMAKE_CURRENT_BINARY_DIR}/confirm-out)
set(confirm_expected ${CMAKE_CURRENT_SOURCE_DIR}/expected/confirm)

# Written: four distinct plans Megatron-LM runs, in predicted order, each in its folder; twice the same bytes.
parasim_cli_test(NAME confirm_write ARGS confirm ${confirm_job} --top 4 --steps 12 --out ${confirm_out} "--extra-args=--transformer-impl local"
                 STDOUT_REGEX "Confirming gpt0.7b-h200-1gpu: GPT-0.7B on 1 x H200-SXM-141GB, 12 iterations a plan"
                              "1 +tp1 · pp1 · dp1 · mb16 +[0-9.]+ ms +[0-9.]+ GiB +1 +plan-01" "4 +tp1 .* +plan-04"
                              "sbatch confirm.sbatch" "bash .*confirm-out/run_on_node.sh" "parasim confirm --read .*confirm-out"
                 FILE ${confirm_out}/confirm.json REPEAT MAX_COLUMNS 120)
parasim_cli_test(NAME confirm_write_json ARGS confirm ${confirm_job} --top 2 --steps 12 --out ${confirm_out}-json --json
                 JSON parasim_confirm=1 scenario=gpt0.7b-h200-1gpu gpus=1 nodes=1 steps=12 plans.0.dir=plan-01 plans.1.dir=plan-02
                      plans.0.simulated_rank=1 "plans.0.plan=tp1 · pp1 · dp1 · mb16" megatron_lm_commit=d98e8a64ddf34856e74b24714e3bedb2f5a39553
                 STDOUT_REGEX "\"--micro-batch-size\",\n +\"16\"")
# The runners run every plan under a stub torchrun, each log reads back to its plan, and a folder
# without step lines is refused on reading.
add_test(NAME cli_confirm_runners_stub_torchrun
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/launch/check_launch.py --parasim $<TARGET_FILE:parasim>
                 --work ${CMAKE_CURRENT_BINARY_DIR}/confirm-stub --confirm ${confirm_job} ${lab})
set_tests_properties(cli_confirm_runners_stub_torchrun PROPERTIES WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} LABELS cli)

# Site arguments: known flags, never the plan's or the model's; a folder is needed.
parasim_cli_test(NAME confirm_extra_args_plan_flag ARGS confirm ${confirm_job} --out ${confirm_out}-bad "--extra-args=--micro-batch-size 2"
                 RC 2 STDERR ${confirm_expected}/extra_args_plan_flag.expected)
parasim_cli_test(NAME confirm_extra_args_misspelt ARGS confirm ${confirm_job} --out ${confirm_out}-bad "--extra-args=--tensor-model-paralel-size 2"
                 RC 2 STDERR ${confirm_expected}/extra_args_misspelt.expected)
parasim_cli_test(NAME confirm_no_out ARGS confirm ${confirm_job} RC 2 STDERR ${confirm_expected}/no_out.expected)
parasim_cli_test(NAME confirm_read_missing ARGS confirm --read tests/data/confirm/nowhere RC 2 STDERR ${confirm_expected}/read_missing.expected)

# Read back: the four plans run for real on one H200 (tests/data/confirm/h200-1gpu/PROVENANCE.md).
set(confirmed tests/data/confirm/h200-1gpu)
parasim_cli_test(NAME confirm_read ARGS confirm --read ${confirmed} MAX_COLUMNS 120
                 STDOUT_REGEX "1 +tp1 · pp1 · dp1 · mb16 +610.4 ms +1.072 s +-43.1% +1 +68.13 GiB +67.54 GiB"
                              "Measured fastest: #1 tp1 · pp1 · dp1 · mb16 \\(the predicted fastest\\)"
                              "agree on 5 of 5 pairs of measured plans \\(1 more predicted equally fast\\)"
                              "calibrate fit ${confirmed}/plan-\\*/\\*.log --gpu h200-sxm-141gb")
parasim_cli_test(NAME confirm_read_json ARGS confirm --read ${confirmed} --json REPEAT
                 JSON measured_fastest=plan-01 pairs=5 pairs_agreeing=5 pairs_predicted_tied=1 plans.0.measured_rank=1 plans.3.measured_rank=4
                      plans.0.steps_used=8 plans.0.measured_iteration_s=1.0722
                 STDOUT_REGEX "\"max_allocated_mib\": 40400.47")
# What confirm measured corrects the model: calibrate fit on the same logs, named by their folders.
parasim_cli_test(NAME confirm_read_then_fit ARGS calibrate fit ${confirmed}/plan-01/node0.log ${confirmed}/plan-02/node0.log
                 ${confirmed}/plan-03/node0.log ${confirmed}/plan-04/node0.log --gpu h200-sxm-141gb
                 STDOUT_REGEX "plan-01/node0 +1.072 s +-4[0-9].[0-9]%" "plan-04/node0 +1.121 s")

# torchtitan: the plans torchtitan v0.2.2 runs of Qwen3-1.7B on one H200, as job configs with launch
# scripts (tests/launch/check_torchtitan.py --confirm runs them under a stub torchrun), priced as
# torchtitan runs them (PyTorch's loss over fp32 logits, FlashAttention-2): mb 8 without recompute,
# which ran out of memory on the H200 (below), no longer fits; mb 4, measured fastest there, leads.
set(confirm_titan_job tests/data/confirm/qwen3-1.7b-h200-1gpu.yaml)
parasim_cli_test(NAME confirm_write_torchtitan ARGS confirm ${confirm_titan_job} --framework torchtitan --top 4 --steps 12 --out ${confirm_out}-torchtitan
                 STDOUT_REGEX "Confirming qwen3-1.7b-h200-1gpu: Qwen3-1.7B on 1 x H200-SXM-141GB, 12 iterations a plan"
                              "1 +tp1 · pp1 · dp1 · mb4 +[0-9.]+ ms +9[0-9.]+ GiB +1 +plan-01" "4 +tp1 · pp1 · dp1 · mb8 · recompute selective"
                              "TORCHTITAN=/path/to/torchtitan sbatch confirm.sbatch"
                 FILE ${confirm_out}-torchtitan/plan-04/launch_torchtitan.sh REPEAT MAX_COLUMNS 120)
parasim_cli_test(NAME confirm_write_torchtitan_json ARGS confirm ${confirm_titan_job} --framework torchtitan --top 2 --steps 12
                      --out ${confirm_out}-torchtitan-json --json
                 JSON framework=torchtitan torchtitan_release=v0.2.2 plans.0.dir=plan-01 "plans.0.plan=tp1 · pp1 · dp1 · mb4"
                 STDOUT_REGEX "\"local_batch_size\",\n +\"4\"" "\"data_parallel_shard_degree\",\n +\"1\"")
parasim_cli_test(NAME confirm_torchtitan_extra_args ARGS confirm ${confirm_titan_job} --framework torchtitan --out ${confirm_out}-bad
                      "--extra-args=--lr 1e-4" RC 2 STDERR ${confirm_expected}/torchtitan_extra_args.expected)
# Read back: the four plans run for real on one H200 under torchtitan v0.2.2
# (tests/data/confirm/h200-torchtitan/PROVENANCE.md); the fastest predicted ran out of memory.
set(confirmed_titan tests/data/confirm/h200-torchtitan)
parasim_cli_test(NAME confirm_read_torchtitan ARGS confirm --read ${confirmed_titan} MAX_COLUMNS 120
                 STDOUT_REGEX "1 +tp1 · pp1 · dp1 · mb8 +768.8 ms +- +- +- +125.6 GiB +-"
                              "plan-01: .*plan-01/node0.log:128:1: error: no step line" "torch.OutOfMemoryError: CUDA out of"
                              "2 +tp1 · pp1 · dp1 · mb4 +773.4 ms +1.06 s +-27.1% +1 +78.71 GiB +113.7 GiB"
                              "Measured fastest: #2 tp1 · pp1 · dp1 · mb4 \\(the predicted fastest of those that ran\\)"
                              "agree on 3 of 3 pairs of measured plans"
                              "calibrate fit --gpu h200-sxm-141gb --out profile.yaml .\n +${confirmed_titan}/plan-02/node0.log .\n"
                              "plan-04/node0.log\n")
# The command it prints, on the plans that ran (calibrate fit refuses the one without step lines).
parasim_cli_test(NAME confirm_read_torchtitan_then_fit ARGS calibrate fit --gpu h200-sxm-141gb ${confirmed_titan}/plan-02/node0.log
                      ${confirmed_titan}/plan-03/node0.log ${confirmed_titan}/plan-04/node0.log --json
                 JSON logs.0.id=plan-02/node0 logs.2.id=plan-04/node0)
parasim_cli_test(NAME confirm_read_torchtitan_json ARGS confirm --read ${confirmed_titan} --json
                 JSON measured_fastest=plan-02 pairs=3 pairs_agreeing=3 plans.1.measured_rank=1 plans.3.measured_rank=3 plans.1.steps_used=8
                 STDOUT_REGEX "\"max_reserved_mib\": 116439.04")
# And again once plans were priced as torchtitan runs them (tests/data/confirm/h200-torchtitan-2):
# every plan ran, the predicted fastest is the measured fastest.
set(confirmed_priced tests/data/confirm/h200-torchtitan-2)
parasim_cli_test(NAME confirm_read_torchtitan_priced ARGS confirm --read ${confirmed_priced} MAX_COLUMNS 120
                 STDOUT_REGEX "1 +tp1 · pp1 · dp1 · mb4 +879.4 ms +1.104 s +-20.4% +1 +93.31 GiB +113.7 GiB"
                              "4 +tp1 · pp1 · dp1 · mb8 · recompute selective +948.1 ms +1.23 s +-22.9% +3 +118.1 GiB +124.8 GiB"
                              "Measured fastest: #1 tp1 · pp1 · dp1 · mb4 \\(the predicted fastest\\)" "agree on 5 of 6 pairs of measured plans")
