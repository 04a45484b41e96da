# parasim whatif end to end: the quick bundled study (CI), sensitivity, the chart and data files, bad
# input; the full bundled studies under the label `long`, each within its three minutes.
set(lab scenarios/jobs/llama2-7b-lab.yaml)
set(whatif_out ${CMAKE_CURRENT_BINARY_DIR}/whatif-out)
set(CHECK_OUTPUTS ${CMAKE_CURRENT_SOURCE_DIR}/whatif_check_outputs.cmake)
set(whatif_expected ${CMAKE_CURRENT_SOURCE_DIR}/expected)

# A check of the files a run wrote, after the run (fixture); STEM whatif or sensitivity.
function(whatif_check_test name dir stem rows chart)
  add_test(NAME cli_${name}_files COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DSTEM=${stem} -DROWS=${rows} -DCHART=${chart} -DMIN_BYTES=10000
                                          -P ${CHECK_OUTPUTS})
  set_tests_properties(cli_${name} PROPERTIES FIXTURES_SETUP ${name})
  set_tests_properties(cli_${name}_files PROPERTIES FIXTURES_REQUIRED ${name} LABELS "cli;${ARGN}")
endfunction()

parasim_cli_test(NAME whatif_help ARGS whatif --help STDOUT_REGEX "--vary" "--fixed-plan" "--sensitivity" "--by" "--out" "--chart")

# The quick study: 2 x 3 variants, re-planned; the same bytes twice; table, CSV, JSON and chart.
parasim_cli_test(NAME whatif_lab ARGS whatif scenarios/whatif/lab-nics.yaml --out ${whatif_out}/lab
                 STDOUT_REGEX "Study +lab-nics" "cluster.nodes +cluster.node.nics.bandwidth" "best plan" "speed-up" "1.00x" "exposed dp"
                              "Fastest +4 / 400 Gb/s"
                 FILE ${whatif_out}/lab/whatif.json REPEAT MAX_COLUMNS 120)
whatif_check_test(whatif_lab ${whatif_out}/lab whatif 6 svg)
parasim_cli_test(NAME whatif_lab_json ARGS whatif scenarios/whatif/lab-nics.yaml --json --threads 1
                 JSON study=lab-nics mode=re-planned axes.0.key=cluster.nodes variants.0.speedup=1.0 variants.0.gpus=16 variants.5.gpus=32
                      "variants.5.label=4 / 400 Gb/s" variants.0.plan_changed=OFF)
# --vary on the command line, several keys, a PNG chart; --set applies to every variant.
parasim_cli_test(NAME whatif_vary_png ARGS whatif ${lab} --vary cluster.node.hardware.hbm.capacity=40GiB,80GiB --set cluster.node.nics.bandwidth=200Gb/s
                 --out ${whatif_out}/png --chart png STDOUT_REGEX "cluster.node.hardware.hbm.capacity" "40GiB" "80GiB")
whatif_check_test(whatif_vary_png ${whatif_out}/png whatif 2 png)
# The plan kept: every variant simulates the scenario's own plan.
parasim_cli_test(NAME whatif_fixed_plan ARGS whatif ${lab} --vary cluster.node.nics.bandwidth=100Gb/s,400Gb/s --fixed-plan --json
                 JSON "mode=fixed plan" variants.0.scenario_plan=ON variants.1.scenario_plan=ON variants.1.tp=2 variants.1.pp=2 variants.1.plan_changed=OFF)
# Every variant's iteration with its 80% prediction interval (the bundled error model), in the table and JSON.
parasim_cli_test(NAME whatif_intervals ARGS whatif ${lab} --vary cluster.node.nics.bandwidth=100Gb/s,400Gb/s --fixed-plan
                 STDOUT_REGEX "iteration +tokens/s" "\n +plan tp[^\n]+\n +80% interval [0-9.]+ ms - [0-9.]+ m?s · compute ")
parasim_cli_test(NAME whatif_intervals_json ARGS whatif ${lab} --vary cluster.node.nics.bandwidth=100Gb/s,400Gb/s --fixed-plan --json
                 STDOUT_REGEX "\"interval\": \\{\n +\"hi\": [0-9.e-]+,\n +\"lo\": [0-9.e-]+\n")
# A value with commas inside brackets is one value.
parasim_cli_test(NAME whatif_list_value ARGS whatif ${lab} --fixed-plan --json
                 "--vary=cluster.node.nics.affinity=[0,0,0,0,1,1,1,1],[0,0,0,0,0,0,0,0]" --set cluster.node.nics.count=2
                 JSON axes.0.values.0=[0,0,0,0,1,1,1,1] axes.0.values.1=[0,0,0,0,0,0,0,0] variants.1.label=[0,0,0,0,0,0,0,0] variants.1.fits=ON)
# No gnuplot: one line says so, CSV and JSON are still written, exit 0.
parasim_cli_test(NAME whatif_no_gnuplot ARGS whatif ${lab} --vary cluster.nodes=2,4 --out ${whatif_out}/nognuplot --gnuplot /nonexistent/gnuplot
                 STDOUT_REGEX "Fastest")
whatif_check_test(whatif_no_gnuplot ${whatif_out}/nognuplot whatif 2 none)

# Sensitivity: every hardware parameter of the lab cluster, ranked; files and chart.
parasim_cli_test(NAME whatif_sensitivity ARGS whatif ${lab} --sensitivity --by 10% --out ${whatif_out}/sensitivity
                 STDOUT_REGEX "Sensitivity .* -10% and \\+10%" " 1  peak-flops" "nic-bandwidth" "overlap-slowdown" "hbm-capacity" "re-planned -10%"
                 MAX_COLUMNS 120)
whatif_check_test(whatif_sensitivity ${whatif_out}/sensitivity sensitivity 12 svg)
parasim_cli_test(NAME whatif_sensitivity_fixed_json ARGS whatif ${lab} --sensitivity --fixed-plan --json
                 JSON "mode=fixed plan" parameters.0.name=peak-flops fraction=0.25)

# Bad input: one line naming the key, exit 2.
foreach(case IN ITEMS
        "unknown_key|--vary|cluster.node.nics.bandwith=400Gb/s,800Gb/s"
        "malformed_value|--vary|cluster.node.nics.bandwidth=400Gb/s,fast"
        "bad_yaml_value|--vary|cluster.nodes={2"
        "not_an_assignment|--vary|cluster.nodes"
        "empty_value|--vary|cluster.nodes=2,,4"
        "twice|--vary|cluster.nodes=2|--vary|cluster.nodes=4"
        "nothing_to_vary"
        "bad_by|--sensitivity|--by|125%"
        "sensitivity_with_vary|--sensitivity|--vary|cluster.nodes=2"
        "fixed_plan_unsuitable|--fixed-plan|--vary|cluster.nodes=1,2")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 name)
  list(REMOVE_AT case 0)
  parasim_cli_test(NAME whatif_error_${name} ARGS whatif ${lab} ${case} RC 2 STDERR ${whatif_expected}/whatif_${name}.expected)
endforeach()
parasim_cli_test(NAME whatif_error_no_scenario ARGS whatif RC 2 STDERR ${whatif_expected}/whatif_no_scenario.expected)
parasim_cli_test(NAME whatif_error_bad_chart ARGS whatif ${lab} --vary cluster.nodes=2 --chart gif RC 2 STDERR ${whatif_expected}/whatif_bad_chart.expected)
# Study files: an unknown scenario key points at the study's line; a typo in the study itself too.
parasim_cli_test(NAME whatif_error_study_key ARGS whatif tests/cli/expected/whatif_study_unknown_key.yaml RC 2
                 STDERR ${whatif_expected}/whatif_study_unknown_key.expected)
parasim_cli_test(NAME whatif_error_study_typo ARGS whatif tests/cli/expected/whatif_study_typo.yaml RC 2
                 STDERR ${whatif_expected}/whatif_study_typo.expected)

# The bundled studies, in full: each under three minutes on a 2-core machine (TIMEOUT), writing
# table, CSV, JSON and chart.
foreach(study IN ITEMS "gpu-generations|3|png" "nic-bandwidth|3|svg" "islands-moe|4|svg")
  string(REPLACE "|" ";" study "${study}")
  list(GET study 0 name)
  list(GET study 1 rows)
  list(GET study 2 chart)
  string(REPLACE "-" "_" id ${name})
  parasim_cli_test(NAME whatif_study_${id} ARGS whatif scenarios/whatif/${name}.yaml --out ${whatif_out}/${name} --chart ${chart}
                   STDOUT_REGEX "Study +${name}" "best plan" "Fastest" LABELS long)
  set_tests_properties(cli_whatif_study_${id} PROPERTIES TIMEOUT 180)
  whatif_check_test(whatif_study_${id} ${whatif_out}/${name} whatif ${rows} ${chart} long)
endforeach()

# Open MPI: the variants spread over 2 and 3 ranks give the same bytes as one process (table, CSV,
# JSON), for a bundled study and for sensitivity. Skipped, saying so, where Open MPI is absent.
if(MPI_CXX_FOUND AND MPIEXEC_EXECUTABLE)
  foreach(run IN ITEMS "lab_np2|2|whatif|whatif|scenarios/whatif/lab-nics.yaml" "lab_np3|3|whatif|whatif|scenarios/whatif/lab-nics.yaml"
                       "sensitivity_np2|2|sensitivity|whatif|${lab}|--sensitivity")
    string(REPLACE "|" ";" run "${run}")
    list(GET run 0 name)
    list(GET run 1 np)
    list(GET run 2 stem)
    list(SUBLIST run 3 -1 args)
    string(REPLACE ";" "|" args "${args}")
    add_test(NAME cli_whatif_mpi_${name}
             COMMAND ${CMAKE_COMMAND} -DPARASIM=$<TARGET_FILE:parasim> -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${np} -DWORKDIR=${PROJECT_SOURCE_DIR}
                     -DOUT=${whatif_out}/mpi-${name} -DSTEM=${stem} "-DARGS=${args}" -P ${CMAKE_CURRENT_SOURCE_DIR}/whatif_mpi_compare.cmake)
    set_tests_properties(cli_whatif_mpi_${name} PROPERTIES LABELS "cli;mpi")
    if(PARASIM_SANITIZE)
      # Open MPI's own allocations outlive MPI_Finalize; LeakSanitizer would fail every rank on them.
      set_tests_properties(cli_whatif_mpi_${name} PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
    endif()
  endforeach()
else()
  add_test(NAME cli_whatif_mpi COMMAND ${CMAKE_COMMAND} -E echo "skipped: Open MPI not found (apt-get install libopenmpi-dev openmpi-bin, then reconfigure)")
  set_tests_properties(cli_whatif_mpi PROPERTIES LABELS "cli;mpi" SKIP_REGULAR_EXPRESSION "skipped: Open MPI not found")
endif()

# Constraints reach every re-plan: --fix (as parasim plan --fix), --framework; a bad one is one line.
parasim_cli_test(NAME whatif_fixed_dims ARGS whatif scenarios/whatif/lab-nics.yaml --fix tp=2 --fix zero=1 --framework megatron --json
                 JSON variants.0.tp=2 variants.0.zero=1 variants.3.tp=2 variants.5.tp=2 variants.5.zero=1)
parasim_cli_test(NAME whatif_bad_fix ARGS whatif scenarios/whatif/lab-nics.yaml --fix tq=2 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/plan_bad_fix.expected)
# Every re-plan keeps plan's headroom free: the default (auto, the memory model's median error) or
# the amount given; 70 GiB of an H100's 79.65 leaves a 7B model nothing on one node, but a plan on two.
parasim_cli_test(NAME whatif_headroom ARGS whatif ${lab} --vary cluster.nodes=1,2 --headroom 70GiB --json --threads 1
                 JSON variants.0.fits=OFF variants.1.fits=ON
                 STDOUT_REGEX "no plan of the [0-9]+ considered fits in 9.65 GiB per GPU")
parasim_cli_test(NAME whatif_bad_headroom ARGS whatif ${lab} --vary cluster.nodes=1 --headroom lots RC 2
                 STDERR ${whatif_expected}/whatif_bad_headroom.expected)

# Under --framework torchtitan every re-plan is priced as torchtitan runs it (FlashAttention-2, PyTorch's
# loss over fp32 logits), as plan prices it: on the Qwen3-1.7B H200 job mb 4 leads, as measured there
# (tests/data/confirm/h200-torchtitan), where the scenario's own kernels crowned mb 8 that ran out of memory.
parasim_cli_test(NAME whatif_framework_torchtitan ARGS whatif tests/data/confirm/qwen3-1.7b-h200-1gpu.yaml --vary cluster.nodes=1
                      --framework torchtitan
                 STDOUT_REGEX "best plan tp1 · pp1 · dp1 · mb4\n" "879.4 ms")
