#!/usr/bin/env python3
"""torchtitan job configs as torchtitan v0.2.2 reads them: `parasim plan JOB --framework torchtitan
--out DIR` for each job, then DIR/torchtitan.toml parsed by Python's own TOML reader (tomllib), every
key checked against v0.2.2's JobConfig fields (a fixture copied from its job_config.py as data), and
the values against what its ParallelDims, batch and pipeline set-up assert: the degrees multiply to
the job's GPUs, the global batch is whole local batches, the model parts cover every layer once in
order. Jobs after --refused must be refused with exit 2 and no file. Jobs after --confirm go through
`parasim confirm JOB --framework torchtitan --out DIR` instead: every plan's torchtitan.toml checked
as above, its launch_torchtitan.sh run by the folder's own run_on_node.sh with the stub torchrun
(tests/launch/torchrun) from a torchtitan checkout, torchtitan.train started on that plan's config,
and `confirm --read DIR` refusing the folder while no plan has a step line.
usage: check_torchtitan.py --parasim BIN --work DIR [JOB.yaml ...] [--refused JOB.yaml ...] [--confirm JOB.yaml ...]"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
KEYS = HERE.parent / "data" / "launch" / "torchtitan-v0.2.2-job-config-keys.txt"
SCHEDULES = {"1F1B", "GPipe", "Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV"}
CONVERTERS = {"quantize.linear.float8", "quantize.grouped_mm.float8", "quantize.linear.mx", "quantize.grouped_mm.mx"}


def flatten(table, prefix=""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def problems(config, gpus):
    known = {line.strip() for line in KEYS.read_text().splitlines() if line.strip() and not line.startswith("#")}
    found = [f"{key}: not a field of torchtitan v0.2.2's JobConfig" for key, _ in flatten(config) if key not in known]
    par, tr = config["parallelism"], config["training"]
    degree = lambda k: par.get(k, 1)
    shard = par.get("data_parallel_shard_degree", -1)
    world = degree("data_parallel_replicate_degree") * shard * degree("context_parallel_degree") * degree("tensor_parallel_degree") * degree(
        "pipeline_parallel_degree")
    if shard < 1 or world != gpus:
        found.append(f"parallel degrees multiply to {world}, the job has {gpus} GPUs")
    dp = degree("data_parallel_replicate_degree") * max(shard, 1)
    if tr["global_batch_size"] % (tr["local_batch_size"] * dp) != 0:
        found.append(f"global batch {tr['global_batch_size']} is not whole local batches of {tr['local_batch_size']} x dp {dp}")
    if degree("pipeline_parallel_degree") > 1:
        if par["pipeline_parallel_schedule"] not in SCHEDULES:
            found.append(f"schedule {par['pipeline_parallel_schedule']} is not one of torchtitan's")
        if tr["local_batch_size"] % par["pipeline_parallel_microbatch_size"] != 0:
            found.append("the local batch is not whole micro-batches")
        parts = par["module_fqns_per_model_part"]
        flat = [name for part in parts for name in part]
        layers = [n for n in flat if n.startswith("layers.")]
        if flat[0] != "tok_embeddings" or flat[-2:] != ["norm", "output"] or layers != [f"layers.{i}" for i in range(len(layers))]:
            found.append("the model parts do not cover the embedding, every layer once in order, the norm and the output")
        if len(parts) % degree("pipeline_parallel_degree") != 0:
            found.append(f"{len(parts)} model parts over {degree('pipeline_parallel_degree')} stages")
    for c in config["model"].get("converters", []):
        if c not in CONVERTERS:
            found.append(f"converter {c} is not registered in torchtitan v0.2.2")
    return found


def confirm_problems(parasim, work, job):
    out = pathlib.Path(work) / (pathlib.Path(job).stem + "-confirm")
    run = subprocess.run([parasim, "confirm", job, "--framework", "torchtitan", "--top", "3", "--steps", "8", "--out", str(out)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return [f"confirm exit {run.returncode}: {run.stderr.strip()[-300:]}"]
    manifest = json.loads((out / "confirm.json").read_text())
    found = [] if manifest.get("framework") == "torchtitan" else ["confirm.json does not name torchtitan"]
    checkout = pathlib.Path(work) / "torchtitan-checkout"
    checkout.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PATH=f"{HERE}{os.pathsep}{os.environ.get('PATH', '')}", TORCHTITAN=str(checkout), MASTER_ADDR="node0", NODE_RANK="0")
    node = subprocess.run(["bash", str(out / "run_on_node.sh")], capture_output=True, text=True, env=env)
    if node.returncode != 0 or "failed" in node.stdout:
        found.append(f"run_on_node.sh: exit {node.returncode}: {(node.stdout + node.stderr).strip()[-300:]}")
    for plan in manifest["plans"]:
        toml = out / plan["dir"] / "torchtitan.toml"
        config = tomllib.loads(toml.read_text())
        found += [f"{plan['dir']}: {p}" for p in problems(config, manifest["gpus"])]
        if config["training"]["steps"] != 8:
            found.append(f"{plan['dir']}: {config['training']['steps']} steps, not 8")
        log = out / plan["dir"] / "node0.log"
        text = log.read_text() if log.exists() else ""
        wanted = f"-m torchtitan.train --job.config_file {toml.resolve()}"
        if "torchrun" not in text or wanted not in text or "--local-ranks-filter 0" not in text:
            found.append(f"{plan['dir']}/node0.log is not torchtitan.train on its config: {text.strip()[-300:]}")
    back = subprocess.run([parasim, "confirm", "--read", str(out)], capture_output=True, text=True)
    if back.returncode != 2 or "no plan has a measured step time" not in back.stderr:
        found.append(f"confirm --read on runs without step lines: exit {back.returncode}: {back.stderr.strip()[-300:]}")
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parasim", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("jobs", nargs="*")
    ap.add_argument("--refused", nargs="*", default=[])
    ap.add_argument("--confirm", nargs="*", default=[])
    a = ap.parse_args()
    failed = 0
    for job in a.confirm:
        found = confirm_problems(a.parasim, a.work, job)
        print(("FAIL " if found else "ok   ") + f"{job} confirm --framework torchtitan")
        for f in found:
            print("     " + f)
        failed += bool(found)
    for job in a.jobs:
        out = pathlib.Path(a.work) / pathlib.Path(job).stem
        run = subprocess.run([a.parasim, "plan", job, "--framework", "torchtitan", "--out", str(out)], capture_output=True, text=True)
        toml = out / "torchtitan.toml"
        if run.returncode != 0 or not toml.exists():
            print(f"FAIL {job}: exit {run.returncode}, no torchtitan.toml\n{run.stderr}")
            failed += 1
            continue
        plans = json.loads((out / "plans.json").read_text())
        found = problems(tomllib.loads(toml.read_text()), plans["gpus"])
        if plans["launch"]["framework"] != "torchtitan":
            found.append("plans.json does not name torchtitan as the framework")
        print(("FAIL " if found else "ok   ") + f"{job}: {plans['launch']['launched']['plan'] if plans['launch'].get('launched') else '-'}")
        for f in found:
            print("     " + f)
        failed += bool(found)
    for job in a.refused:
        out = pathlib.Path(a.work) / (pathlib.Path(job).stem + "-refused")
        run = subprocess.run([a.parasim, "plan", job, "--framework", "torchtitan", "--out", str(out)], capture_output=True, text=True)
        ok = run.returncode == 2 and "ships no model" in run.stderr and not (out / "torchtitan.toml").exists()
        print(("ok   " if ok else "FAIL ") + f"{job} refused: {run.stderr.strip()[:100]}")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
