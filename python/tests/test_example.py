"""examples/sweep_nic_and_gpus.py: the notebook-style sweep runs and draws its chart."""
import os
import subprocess
import sys

import parasim


def test_the_nic_and_gpu_sweep_writes_its_png(tmp_path):
    png = tmp_path / "sweep.png"
    env = dict(os.environ, MPLBACKEND="Agg")
    run = subprocess.run([sys.executable, "examples/sweep_nic_and_gpus.py", "--nodes", "1,2", "--nic", "100Gb/s,400Gb/s", "--out", str(png)],
                         capture_output=True, text=True, env=env, check=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    # Its table is the study's: one line a variant, the figures of parasim.whatif.
    study = parasim.whatif("scenarios/jobs/llama2-7b-lab.yaml", vary={"cluster.nodes": [1, 2], "cluster.node.nics.bandwidth": ["100Gb/s", "400Gb/s"]})
    lines = run.stdout.splitlines()
    assert len(lines) == 1 + 4 + 1 and lines[-1] == f"wrote {png}"
    for line, variant in zip(lines[1:5], study.variants):
        assert f"{variant.iteration_s:.3f} s" in line and variant.plan in line
    assert "variants 4/4" in run.stderr
