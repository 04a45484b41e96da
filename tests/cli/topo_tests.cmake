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
parasim_cli_test(NAME topo_dot ARGS topo scenarios/clusters/h100-1024.yaml --dot --set nodes=2
                 STDOUT_REGEX "^graph \"H100-1024\" {" "\"node1/gpu7\" -- \"node1/nvswitch0\" \\[label=\"450 GB/s\"\\]")
parasim_cli_test(NAME topo_dot_too_large ARGS topo scenarios/default.yaml --dot RC 2
                 STDERR ${CMAKE_CURRENT_SOURCE_DIR}/expected/dot_too_large.expected)
parasim_cli_test(NAME schema_cluster ARGS schema cluster STDOUT_REGEX "\\| `nodes` \\| integer \\|" "### `node`")

# DGX A100: 600 GB/s NVLink = 300 GB/s each way inside an island; 200 Gb/s HDR NIC per GPU = 25 GB/s.
parasim_cli_test(NAME topo_dgx_a100_json ARGS topo scenarios/clusters/dgx-a100-1024.yaml --json
                 JSON gpus=1024 islands.count=128 islands.size=8
                      bandwidth_bytes_per_s.intra_island=300000000000.0
                      bandwidth_bytes_per_s.inter_island_per_gpu=25000000000.0)
# GB200 NVL72: the NVLink domain is the rack, islands of 72; NVLink 5 1.8 TB/s = 900 GB/s each way.
parasim_cli_test(NAME topo_nvl72_json ARGS topo scenarios/clusters/gb200-nvl72-8racks.yaml --json
                 JSON gpus=576 islands.count=8 islands.size=72
                      bandwidth_bytes_per_s.intra_island=900000000000.0
                      bandwidth_bytes_per_s.inter_island_per_gpu=50000000000.0)
# Llama-3-like 16K: 8 pods of 2048 GPUs, 1:7 above the pods: bisection 4 pods x 2048 x 50 GB/s / 7
# = 58.514 TB/s (the max flow rounds each link to whole kB/s, hence a regex on the leading digits; CMake regexes have no {n}).
parasim_cli_test(NAME topo_llama3_16k_json ARGS topo scenarios/clusters/llama3-h100-16k.yaml --json
                 JSON gpus=16384 islands.count=2048
                      bandwidth_bytes_per_s.inter_island_per_gpu=50000000000.0
                 STDOUT_REGEX "\"bisection\": 585142[0-9]+\\.")
# One 100 Gb/s NIC for eight RTX 4090: 12.5 GB/s shared by 8 GPUs crossing at once.
parasim_cli_test(NAME topo_pcie_box_json ARGS topo scenarios/clusters/pcie-4090-2node.yaml --json
                 JSON bandwidth_bytes_per_s.inter_island_per_gpu=1562500000.0
                      bandwidth_bytes_per_s.bisection=12500000000.0)
