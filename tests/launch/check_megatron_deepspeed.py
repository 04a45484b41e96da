#!/usr/bin/env python3
"""Megatron-DeepSpeed launches as a shell and that project's parser see them: `parasim plan JOB
--framework deepspeed --out DIR`, then DIR/launch_megatron_deepspeed.sh run under bash with the stub
torchrun (tests/launch/torchrun) first on PATH, and every flag of the command it ran checked against
Megatron-DeepSpeed's argument names (a fixture copied from its megatron/arguments.py and DeepSpeed's
add_config_arguments as data); --deepspeed_config names the folder's ds_config.json, whose batch
matches the arguments'. Jobs after --refused must end with no script, no ds_config.json and the reason in plans.json.
With --checker (../shared/tools/launch_check, set up): the ds_config.json also through DeepSpeed
v0.19.5's own DeepSpeedConfig with the plan's data-parallel size; exit 77 (skipped) when it is not set up.
usage: check_megatron_deepspeed.py --parasim BIN --work DIR [--checker DIR] JOB.yaml ... [--refused JOB.yaml ...]"""
import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
FLAGS = HERE.parent / "data" / "launch" / "megatron-deepspeed-4efb479-arguments.txt"


def deepspeed_verdict(checker, out, gpus):
    """DeepSpeed's own DeepSpeedConfig on the folder's ds_config.json (empty: it passed)."""
    d = subprocess.run([os.path.join(checker, "run.sh"), "check_ds_config.py", str(out / "ds_config.json"), "--gpus", str(gpus),
                        "--plan", str(out / "best_plan.yaml")], capture_output=True, text=True)
    return [] if d.stdout.startswith("PASS") else [f"DeepSpeed's config check: {(d.stdout + d.stderr).strip()[:300]}"]


def problems(out):
    known = {l.strip() for l in FLAGS.read_text().splitlines() if l.strip() and not l.startswith("#")}
    env = dict(os.environ, PATH=f"{HERE}{os.pathsep}{os.environ.get('PATH', '')}", MASTER_ADDR="node0", NODE_RANK="0", DATA_PATH="/data/x",
               MEGATRON_DEEPSPEED="/opt/mds")
    run = subprocess.run(["bash", str(out / "launch_megatron_deepspeed.sh")], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        return [f"the script failed under bash: {run.stderr.strip()}"]
    words = shlex.split(run.stdout.strip())
    args = words[words.index("/opt/mds/pretrain_gpt.py") + 1:]
    found = [f"{w}: not a Megatron-DeepSpeed flag" for w in args if w.startswith("--") and w not in known]
    value = lambda flag: args[args.index(flag) + 1] if flag in args else None
    ds = pathlib.Path(value("--deepspeed_config") or "")
    if not ds.is_file() or ds.resolve() != (out / "ds_config.json").resolve():
        return found + [f"--deepspeed_config {ds} is not the folder's ds_config.json"]
    config = json.loads(ds.read_text())
    if config["train_micro_batch_size_per_gpu"] != int(value("--micro-batch-size")) or config["train_batch_size"] != int(value("--global-batch-size")):
        found.append("ds_config.json's batch differs from the arguments'")
    if config["zero_optimization"]["stage"] != int(value("--zero-stage")):
        found.append("ds_config.json's ZeRO stage differs from --zero-stage")
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parasim", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--checker")
    ap.add_argument("jobs", nargs="*")
    ap.add_argument("--refused", nargs="*", default=[])
    a = ap.parse_args()
    if a.checker and not os.path.isfile(os.path.join(os.environ.get("DEEPSPEED", "/tmp/deepspeed"), ".deepspeed_commit")):
        print("skipped: launch checker not set up (../shared/tools/launch_check/README.md)")
        return 77
    failed = 0
    for job in a.jobs + a.refused:
        out = pathlib.Path(a.work).resolve() / pathlib.Path(job).stem
        run = subprocess.run([a.parasim, "plan", job, "--framework", "deepspeed", "--out", str(out)], capture_output=True, text=True)
        plans = json.loads((out / "plans.json").read_text()) if (out / "plans.json").is_file() else {}
        launch = plans.get("launch", {})
        if job in a.refused:
            ok = (run.returncode == 0 and not (out / "launch_megatron_deepspeed.sh").exists() and not (out / "ds_config.json").exists()
                  and launch.get("why_not_launchable") and plans.get("deepspeed", {}).get("ds_config") is False)
            print(("ok   " if ok else "FAIL ") + f"{job} not launched: {launch.get('why_not_launchable')}")
            failed += not ok
            continue
        found = [f"exit {run.returncode}: {run.stderr.strip()}"] if run.returncode != 0 else problems(out)
        if a.checker and not found:
            found += deepspeed_verdict(a.checker, out, plans["gpus"])
        if launch.get("framework") != "megatron-deepspeed":
            found.append("plans.json does not name Megatron-DeepSpeed as the framework")
        print(("FAIL " if found else "ok   ") + f"{job}: {launch.get('launched', {}).get('plan', '-') if launch.get('launched') else '-'}")
        for f in found:
            print("     " + f)
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
