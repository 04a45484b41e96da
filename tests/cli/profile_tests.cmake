# A scenario's calibration profile: the bundled file gives what the built-in default gives; a changed
# figure moves the prediction; a misspelt key is a one-line error.
parasim_cli_test(NAME profile_bundled_equals_default ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml
                 --set profile=scenarios/profiles/a100-sxm4.yaml STDOUT_REGEX "Iteration +28.18 s")
parasim_cli_test(NAME profile_default ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml STDOUT_REGEX "Iteration +28.18 s")
# GEMMs at 0.6 of the peak instead of 0.869 make the iteration slower.
parasim_cli_test(NAME profile_changed ARGS simulate scenarios/jobs/gpt3-175b-1024-a100.yaml
                 --set profile=scenarios/profiles/a100-sxm4.yaml --set profile.gemm.efficiency.fp16=0.6
                 STDOUT_REGEX "Iteration +37.95 s")
