#!/usr/bin/env python3
"""`parasim simulate` with the steady state extrapolated against --full-replay, on the same job.

usage: compare_replays.py PARASIM SCENARIO [--set KEY=VALUE ...]

The extrapolated run must say so (extrapolated_rounds > 0 in JSON, a Replay line in the table), the
whole replay must not, and the two must agree: iteration and every stage's breakdown within 0.1% of
the iteration, the same task and event counts, the same throughput to 0.1%.
"""
import json
import subprocess
import sys


def run(parasim, args):
    out = subprocess.run([parasim, "simulate", *args], check=True, capture_output=True, text=True)
    return out.stdout


def main():
    parasim, scenario, *sets = sys.argv[1:]
    args = [scenario, *sets]
    fast = json.loads(run(parasim, args + ["--json"]))
    whole = json.loads(run(parasim, args + ["--json", "--full-replay"]))
    problems = []
    if fast["extrapolated_rounds"] <= 0:
        problems.append(f"no steady rounds extrapolated: {fast['extrapolated_rounds']}")
    if whole["extrapolated_rounds"] != 0:
        problems.append(f"--full-replay extrapolated {whole['extrapolated_rounds']} rounds")
    t = whole["iteration_s"]

    def close(what, a, b, scale):
        if abs(a - b) > 1e-3 * scale:
            problems.append(f"{what}: {a} extrapolated, {b} replayed")

    close("iteration_s", fast["iteration_s"], t, t)
    close("tokens_per_s", fast["tokens_per_s"], whole["tokens_per_s"], whole["tokens_per_s"])
    for sf, sw in zip(fast["stages"], whole["stages"]):
        for key, value in sw.items():
            if key.endswith("_s"):
                close(f"stage {sw['stage']} {key}", sf[key], value, t)
    for key in ("tasks", "events"):
        if fast[key] != whole[key]:
            problems.append(f"{key}: {fast[key]} extrapolated, {whole[key]} replayed")
    table = run(parasim, args)
    if "Replay      steady state:" not in table:
        problems.append("the table does not say the steady state was extrapolated")
    for p in problems:
        print(p)
    print(f"{scenario} {' '.join(sets)}: {fast['extrapolated_rounds']} rounds added; {fast['iteration_s']} s vs {t} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
