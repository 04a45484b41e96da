#!/usr/bin/env python3
"""The Python module's benchmark pair: 100 simulations of the default job in one process, the scenario
loaded once outside the loop, from C++ (build/bench/parasim_python_pair_bench) and from Python
(import parasim). Prints both per simulation and their ratio; exit 1 when Python takes more than 1.2x.
usage: PYTHONPATH=build/python python3 bench/python_vs_cpp.py build/bench/parasim_python_pair_bench"""
import json
import subprocess
import sys
import time

import parasim

cpp = json.loads(subprocess.run([sys.argv[1], "--benchmark_format=json"], check=True, capture_output=True, text=True).stdout)
cpp_ms = next(b["real_time"] for b in cpp["benchmarks"] if b["name"].startswith("BM_Default_Simulation"))

scenario = parasim.load_scenario("scenarios/default.yaml")
parasim.simulate(scenario)  # the first call imports nothing more, but warms the caches as C++'s first iteration does
start = time.perf_counter()
for _ in range(100):
    parasim.simulate(scenario)
py_ms = (time.perf_counter() - start) / 100 * 1000
ratio = py_ms / cpp_ms
print(f"default job, 100 simulations: C++ {cpp_ms:.2f} ms, Python {py_ms:.2f} ms per simulation, Python / C++ = {ratio:.3f} (target <= 1.2)")
sys.exit(0 if ratio <= 1.2 else 1)
