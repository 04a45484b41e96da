# parasim topo end to end: the figures the foundation issue promises, through the CLI.

parasim_cli_test(NAME topo_help ARGS topo --help STDOUT_REGEX "--json" "--dot" "--set")
parasim_cli_test(NAME topo_missing_scenario ARGS topo tests/cli/no-such-file.yaml RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/missing_scenario.expected)
parasim_cli_test(NAME no_subcommand ARGS RC 2 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/no_subcommand.expected)
parasim_cli_test(NAME bad_set_path ARGS topo scenarios/default.yaml --set cluster.nodez=4 RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/bad_set_path.expected)
parasim_cli_test(NAME bad_set_value ARGS topo scenarios/default.yaml --set cluster.node.nics.bandwidth=fast RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/bad_set_value.expected)

# 1024 H100 in 128 DGX H100: islands of 8, 450 GB/s each way inside (900 GB/s NVLink), 50 GB/s per
# GPU across (400 Gb/s NIC per GPU), bisection 512 x 50 GB/s.
parasim_cli_test(NAME topo_h100_1024_json ARGS topo scenarios/clusters/h100-1024.yaml --json
                 JSON gpus=1024 islands.count=128 islands.size=8
                      bandwidth_bytes_per_s.intra_island=450000000000.0
                      bandwidth_bytes_per_s.inter_island_per_gpu=50000000000.0
                      bandwidth_bytes_per_s.inter_island_pair=50000000000.0
                      bandwidth_bytes_per_s.bisection=25600000000000.0
                      switches.leaf=32 switches.spine=16)
parasim_cli_test(NAME topo_default_table ARGS topo scenarios/default.yaml
                 STDOUT_REGEX "1024 x H100-SXM5-80GB in 128 islands of 8"
                              "intra-island GPU-GPU +450 GB/s"
                              "inter-island per GPU +50 GB/s"
                              "bisection +25.6 TB/s")
# --set reaches a key in a referenced file. 200 Gb/s NICs halve the per-GPU cross-island bandwidth
# (25 GB/s); 800 Gb/s NICs would give 100 GB/s, but the GPU's PCIe Gen5 x16 link on the way to the
# NIC carries only 32 GT/s x 16 x 128/130 / 8 = 63.015 GB/s.
parasim_cli_test(NAME topo_set_nic_200 ARGS topo scenarios/default.yaml --json --set cluster.node.nics.bandwidth=200Gb/s
                 JSON bandwidth_bytes_per_s.inter_island_per_gpu=25000000000.0)
parasim_cli_test(NAME topo_set_nic_800 ARGS topo scenarios/default.yaml --json --set cluster.node.nics.bandwidth=800Gb/s
                 JSON bandwidth_bytes_per_s.inter_island_per_gpu=63015384615.384613)
parasim_cli_test(NAME topo_dot ARGS topo scenarios/default.yaml --dot --set cluster.nodes=2
                 STDOUT_REGEX "^graph \"H100-1024\" {" "\"node1/gpu7\" -- \"node1/nvswitch0\" \\[label=\"450 GB/s\"\\]")
parasim_cli_test(NAME topo_dot_too_large ARGS topo scenarios/default.yaml --dot RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/dot_too_large.expected)
parasim_cli_test(NAME schema_cluster ARGS schema cluster STDOUT_REGEX "\\| `nodes` \\| integer \\|" "### `node`")
