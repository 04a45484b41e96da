"""How iteration time moves with the NIC bandwidth and the GPU count, for one model: a notebook in plain
Python (`# %%` cells run one at a time in VS Code, Spyder or Jupyter's jupytext).

    PYTHONPATH=build/python python3 examples/sweep_nic_and_gpus.py --out nic_sweep.png

Every point is the scenario with one more override per varied key, re-planned by parasim's planner
(each GPU count and bandwidth gets its own best plan) and simulated; the band is the 80% prediction
interval of parasim's error model.
"""
# %% Parameters
import argparse

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--scenario", default="scenarios/jobs/llama2-7b-lab.yaml", help="the job: model, cluster, training, global batch")
parser.add_argument("--nodes", default="1,2,4,8", help="GPU nodes, comma-separated")
parser.add_argument("--nic", default="50Gb/s,100Gb/s,200Gb/s,400Gb/s", help="bandwidth per NIC, comma-separated")
parser.add_argument("--out", default="nic_sweep.png", help="the chart (PNG)")
args = parser.parse_args()
nodes = [int(n) for n in args.nodes.split(",")]
nics = args.nic.split(",")

# %% The study: every (nodes, NIC bandwidth) pair, re-planned and simulated in-process
import sys

import parasim


def progress(phase, done, total):
    # A line redrawn in place on a terminal, plain lines elsewhere (a log, a notebook's output).
    on_terminal = sys.stderr.isatty()
    end = "" if on_terminal and done < total else "\n"
    print(f"{chr(13) if on_terminal else ''}{phase} {done}/{total}", end=end, file=sys.stderr, flush=True)


study = parasim.whatif(args.scenario, vary={"cluster.nodes": nodes, "cluster.node.nics.bandwidth": nics}, progress=progress)

# %% The table: one line a variant
print(f"{'GPUs':>5}  {'NIC':>8}  {'iteration':>10}  {'80% interval':>19}  {'MFU':>6}  plan")
for v in study.variants:
    if v.failure:
        print(f"{v.gpus:>5}  {v.values['cluster.node.nics.bandwidth']:>8}  {'-':>10}  {'':>19}  {'':>6}  {v.failure}")
        continue
    band = f"{v.interval['lo']:.3f} - {v.interval['hi']:.3f} s"
    print(f"{v.gpus:>5}  {v.values['cluster.node.nics.bandwidth']:>8}  {v.iteration_s:>8.3f} s  {band:>19}  {100 * v.mfu:5.1f}%  {v.plan}")

# %% The chart: iteration time against NIC bandwidth, a curve per GPU count
import matplotlib

matplotlib.use("Agg")  # files, no display
import matplotlib.pyplot as plt

gbps = [float(n.lower().removesuffix("gb/s")) for n in nics]
figure, axes = plt.subplots(figsize=(7, 4.5))
for i, n in enumerate(nodes):
    row = [v for v in study.variants[i * len(nics):(i + 1) * len(nics)] if not v.failure]
    if not row:
        continue
    x = [gbps[nics.index(v.values["cluster.node.nics.bandwidth"])] for v in row]
    line, = axes.plot(x, [v.iteration_s for v in row], marker="o", label=f"{row[0].gpus} GPUs")
    axes.fill_between(x, [v.interval["lo"] for v in row], [v.interval["hi"] for v in row], color=line.get_color(), alpha=0.15)
axes.set_xscale("log", base=2)
axes.set_xticks(gbps, [f"{g:g}" for g in gbps])
axes.set_xlabel("NIC bandwidth per GPU (Gb/s)")
axes.set_ylabel("seconds per iteration")
axes.set_title(f"{study.to_dict()['study']}: re-planned at each point (band: 80% interval)")
axes.grid(alpha=0.3)
axes.legend()
figure.tight_layout()
figure.savefig(args.out, dpi=120)
print(f"wrote {args.out}")
