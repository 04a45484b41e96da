#!/usr/bin/env python3
"""Plans each job, runs its launch_megatron.sh under bash with a stub torchrun, and checks what the
script would run:

  1. `parasim plan JOB --framework F --out DIR` names a launched plan and writes launch_megatron.sh;
  2. the script runs under bash (set -euo pipefail) with tests/launch/torchrun first on PATH, which
     prints the environment and argv it was given: comments inside continued lines, an unquoted '|'
     or a missing variable fail here;
  3. `parasim simulate JOB --from-megatron-args` reads that argv, the script and megatron_args.txt
     back to the launched plan (plans.json's launch.launched.plan);
  4. with --checker: Megatron-LM's own parse_args + validate_args + TransformerConfig judge that
     argv as printed (../shared/tools/launch_check, Transformer Engine 2.14.0, the cluster's GPU);
     and, where DeepSpeed's tree is laid out too, DeepSpeedConfig reads ds_config.json with the plan's
     data-parallel size (config checks only: not its engine's, such as ZeRO-2/3 with a pipeline, which
     parasim's own rules keep out: no ds_config.json is written for a plan DeepSpeed cannot run, and
     plans.json says why).

With --confirm, `parasim confirm JOB --out DIR` instead: every plan's launch script, run by the
confirm folder's own run_on_node.sh with the stub torchrun, writes its argv into plan-NN/node0.log;
each reads back to its plan in confirm.json (and, with --checker, passes Megatron-LM's checks), and
`confirm --read DIR` refuses the folder, as no plan has a step line yet.

Exit 0 when every check passes, 1 otherwise; 77 (a ctest skip) with --checker when the checker is
not set up, after printing "skipped: launch checker not set up".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MEGATRON_COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"


def checker_ready(checker: str) -> str | None:
    """Why the launch checker cannot run here, or None."""
    root = os.environ.get("LAUNCHCHECK_ROOT", "/tmp/launchcheck-trixie")
    megatron = os.environ.get("MEGATRON_LM", "/tmp/megatron-lm")
    if not os.path.isfile(os.path.join(checker, "run.sh")):
        return f"no checker at {checker}"
    if not os.access(os.path.join(root, "usr/bin/python3"), os.X_OK):
        return f"no chroot at {root} (run {checker}/setup.sh)"
    stamp = os.path.join(megatron, ".megatron_commit")
    if not os.path.isfile(stamp) or open(stamp).read().strip() != MEGATRON_COMMIT:
        return f"{megatron} is not Megatron-LM {MEGATRON_COMMIT[:7]}"
    return None


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_job(o, job: str, framework: str) -> list[str]:
    """The failures of one job under one framework (empty: it passed)."""
    name = os.path.splitext(os.path.basename(job))[0] + "-" + framework
    out = os.path.join(o.work, name)
    shutil.rmtree(out, ignore_errors=True)
    p = run([o.parasim, "plan", job, "--framework", framework, "--out", out] + o.plan_arg)
    if p.returncode != 0:
        return [f"plan exit {p.returncode}: {p.stderr.strip()[-300:]}"]
    plans = json.load(open(os.path.join(out, "plans.json")))
    launch = plans["launch"]
    if not launch.get("launched"):
        return [f"nothing launched: {launch.get('why_not_launchable')}"]
    want = launch["launched"]["plan"]
    failures = []
    if "nominal" not in launch or not launch.get("gap_to_nominal", -1) >= 0:
        failures.append("plans.json lacks the nominal best or the gap to it")
    ds_config = os.path.join(out, "ds_config.json")
    deepspeed = plans.get("deepspeed", {})
    if deepspeed.get("ds_config") != os.path.isfile(ds_config):
        failures.append(f"plans.json says ds_config {deepspeed.get('ds_config')}, the folder {'has' if os.path.isfile(ds_config) else 'lacks'} it")
    if not deepspeed.get("ds_config") and not deepspeed.get("why_not"):
        failures.append("no ds_config.json and no reason in plans.json")
    for f in ("best_plan.yaml", "launch_megatron.sh", "megatron_args.txt") + (("ds_config.json",) if os.path.isfile(ds_config) else ()):
        if want not in open(os.path.join(out, f)).read():
            failures.append(f"{f} does not name the launched plan {want}")

    env = {k: v for k, v in os.environ.items() if k != "CUDA_DEVICE_MAX_CONNECTIONS"}
    env.update(PATH=HERE + os.pathsep + env.get("PATH", ""), MASTER_ADDR="node0", NODE_RANK="0",
               MEGATRON_LM=os.environ.get("MEGATRON_LM", "/tmp/megatron-lm"))
    s = run(["bash", os.path.join(out, "launch_megatron.sh")], env=env)
    argv = os.path.join(out, "torchrun_argv.txt")
    open(argv, "w").write(s.stdout)
    if s.returncode != 0 or "pretrain_gpt.py" not in s.stdout:
        return failures + [f"launch_megatron.sh under bash: exit {s.returncode}: {s.stderr.strip()[-300:]}"]

    for source in (argv, os.path.join(out, "launch_megatron.sh"), os.path.join(out, "megatron_args.txt")):
        r = run([o.parasim, "simulate", job, "--from-megatron-args", source, "--json"])
        if r.returncode != 0:
            failures.append(f"simulate --from-megatron-args {os.path.basename(source)}: {r.stderr.strip()[-300:]}")
        elif json.loads(r.stdout)["plan"] != want:
            failures.append(f"{os.path.basename(source)} reads back as {json.loads(r.stdout)['plan']}, not {want}")

    if o.checker:
        verdict = megatron_verdict(o, argv, plans["gpus"], launch.get("compute_capability"))
        json.dump(verdict, open(os.path.join(out, "megatron_check.json"), "w"), indent=2)
        if verdict.get("status") != "PASS":
            failures.append(f"Megatron-LM {verdict.get('status')} [{verdict.get('stage')}] {verdict.get('message', '')[:300]} "
                            f"({verdict.get('raised_at', '')})")
        if deepspeed_ready() and os.path.isfile(ds_config):
            d = run([os.path.join(o.checker, "run.sh"), "check_ds_config.py", os.path.join(out, "ds_config.json"), "--gpus", str(plans["gpus"]),
                     "--plan", os.path.join(out, "best_plan.yaml")])
            if not d.stdout.startswith("PASS"):
                failures.append(f"DeepSpeed's config check: {(d.stdout + d.stderr).strip()[:300]}")
    return failures


CONFIRM_SITE_ARGS = "--transformer-impl local --no-persist-layer-norm --lr 1e-4"


def megatron_verdict(o, argv: str, gpus: int, compute_capability: str | None) -> dict:
    """Megatron-LM's own checks on a torchrun argv line, as ../shared/tools/launch_check judges it."""
    cmd = [os.path.join(o.checker, "run.sh"), "check_megatron_args.py", argv, "--gpus", str(gpus), "--te-version", "2.14.0", "--json"]
    if compute_capability:
        cmd += ["--compute-capability", compute_capability]
    c = run(cmd)
    try:
        return json.loads(c.stdout)
    except json.JSONDecodeError:
        return {"status": "ERROR", "message": (c.stdout + c.stderr).strip()[-300:]}


def check_confirm(o, job: str) -> list[str]:
    """The failures of `parasim confirm` on one job (empty: it passed)."""
    out = os.path.join(o.work, os.path.splitext(os.path.basename(job))[0] + "-confirm")
    shutil.rmtree(out, ignore_errors=True)
    p = run([o.parasim, "confirm", job, "--top", "3", "--steps", "8", "--out", out, "--extra-args", CONFIRM_SITE_ARGS])
    if p.returncode != 0:
        return [f"confirm exit {p.returncode}: {p.stderr.strip()[-300:]}"]
    manifest = json.load(open(os.path.join(out, "confirm.json")))
    env = {k: v for k, v in os.environ.items() if k != "CUDA_DEVICE_MAX_CONNECTIONS"}
    env.update(PATH=HERE + os.pathsep + env.get("PATH", ""), MASTER_ADDR="node0", NODE_RANK="0",
               MEGATRON_LM=os.environ.get("MEGATRON_LM", "/tmp/megatron-lm"))
    r = run(["bash", os.path.join(out, "run_on_node.sh")], env=env)
    if r.returncode != 0:
        return [f"run_on_node.sh: exit {r.returncode}: {r.stderr.strip()[-300:]}"]
    failures = []
    for plan in manifest["plans"]:
        log = os.path.join(out, plan["dir"], "node0.log")
        text = open(log).read() if os.path.isfile(log) else ""
        if "pretrain_gpt.py" not in text or "--train-iters 8" not in text or "--lr 1e-4" not in text:
            failures.append(f"{plan['dir']}/node0.log is not its launch with 8 iterations and the site's --lr: {text[-300:]}")
            continue
        b = run([o.parasim, "simulate", job, "--from-megatron-args", log, "--json"])
        if b.returncode != 0:
            failures.append(f"{plan['dir']}: simulate --from-megatron-args: {b.stderr.strip()[-300:]}")
        elif json.loads(b.stdout)["plan"] != plan["plan"]:
            failures.append(f"{plan['dir']} reads back as {json.loads(b.stdout)['plan']}, not {plan['plan']}")
        if o.checker:
            verdict = megatron_verdict(o, log, manifest["gpus"], None)
            if verdict.get("status") != "PASS":
                failures.append(f"{plan['dir']}: Megatron-LM {verdict.get('status')} [{verdict.get('stage')}] {verdict.get('message', '')[:300]}")
    back = run([o.parasim, "confirm", "--read", out])
    if back.returncode != 2 or "no plan has a measured step time" not in back.stderr:
        failures.append(f"confirm --read on runs without step lines: exit {back.returncode}: {back.stderr.strip()[-300:]}")
    return failures


def deepspeed_ready() -> bool:
    """DeepSpeed's tree for check_ds_config.py is laid out (setup.sh's second argument)."""
    return os.path.isfile(os.path.join(os.environ.get("DEEPSPEED", "/tmp/deepspeed"), ".deepspeed_commit"))


def main() -> int:
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("jobs", nargs="+", help="scenario files to plan")
    a.add_argument("--parasim", required=True)
    a.add_argument("--work", required=True, help="folder for the plans")
    a.add_argument("--framework", action="append", help="any, megatron (repeatable; default both)")
    a.add_argument("--checker", help="../shared/tools/launch_check: also judge with Megatron-LM's own checks")
    a.add_argument("--plan-arg", action="append", default=[], help="an extra argument to parasim plan (repeatable)")
    a.add_argument("--confirm", action="store_true", help="check parasim confirm's folders instead of parasim plan's")
    o = a.parse_args()
    if o.checker:
        why = checker_ready(o.checker)
        if why:
            print(f"skipped: launch checker not set up ({why})")
            return 77
    os.makedirs(o.work, exist_ok=True)
    failed = 0
    runs = [(job, "confirm") for job in o.jobs] if o.confirm else [(job, f) for job in o.jobs for f in o.framework or ["any", "megatron"]]
    for job, what in runs:
        failures = check_confirm(o, job) if what == "confirm" else check_job(o, job, what)
        print(f"{'PASS' if not failures else 'FAIL'}  {job} {'confirm' if what == 'confirm' else '--framework ' + what}", flush=True)
        for f in failures:
            print(f"      {f}", flush=True)
        failed += bool(failures)
    print(f"{failed} failed of {len(runs)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
