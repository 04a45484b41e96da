#!/usr/bin/env python3
"""Checks a Chrome trace written by `parasim simulate --trace`: valid JSON, traceEvents with the keys
Perfetto and chrome://tracing need, and one process per simulated GPU plus the links process.
Further checks, by flag:
  --two-directions  compute slices of both directions, named (down) and (up) (DualPipe, a V's way back)
  --fb-overlap      expert all-to-alls of F&B backwards on tracks of their own, some of them running
                    while the same GPU computes (the overlap), and no two slices of one GPU track
                    overlapping in part
Usage: check_trace.py TRACE EXPECTED_PROCESSES [--two-directions] [--fb-overlap]"""
import json
import sys

path, expected, flags = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
unknown = flags - {"--two-directions", "--fb-overlap"}
assert not unknown, f"unknown flags {unknown}"
with open(path) as f:
    trace = json.load(f)
events = trace["traceEvents"]
processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
slices = [e for e in events if e["ph"] == "X"]
for e in events:
    for key in ("ph", "pid", "tid"):
        assert key in e, f"event without {key}: {e}"
for e in slices:
    assert "ts" in e and "dur" in e and e["dur"] >= 0, f"bad slice: {e}"
assert len(processes) == expected, f"{len(processes)} processes, expected {expected}"
assert len(slices) >= 10, f"only {len(slices)} slices"
gpu_pids = {e["pid"] for e in slices if e.get("cat") == "compute"}
assert len(gpu_pids) == expected - 1, f"compute on {len(gpu_pids)} processes"
compute = [e for e in slices if e.get("cat") == "compute"]

if "--two-directions" in flags:
    down = sum(1 for e in compute if e["name"].endswith("(down)"))
    up = sum(1 for e in compute if e["name"].endswith("(up)"))
    assert down > 0 and up > 0, f"compute slices down {down}, up {up}: expected both directions"

if "--fb-overlap" in flags:
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    paired = [e for e in slices if names.get((e["pid"], e["tid"]), "").endswith("(F&B backward)") and "all_to_all" in e["name"]]
    assert paired, "no expert all-to-all on an F&B backward track"
    # Slices of one GPU track nest or follow each other (the Trace Event Format's rule for X events).
    tracks = {}
    for e in slices:
        if e["pid"] in gpu_pids:
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for key, spans in tracks.items():
        spans.sort()
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert b0 >= a1 - 1e-3, f"slices overlap in part on track {key} ({names.get(key)}): [{a0}, {a1}] and [{b0}, {b1}]"
    # Some of them run while the same GPU computes: the overlap.
    busy = {}
    for e in compute:
        busy.setdefault(e["pid"], []).append((e["ts"], e["ts"] + e["dur"]))
    hidden = 0
    for e in paired:
        start, end = e["ts"], e["ts"] + e["dur"]
        if any(s < end and start < t for s, t in busy.get(e["pid"], [])):
            hidden += 1
    assert hidden > 0, "no F&B all-to-all runs under compute"
    print(f"{len(paired)} F&B all-to-alls, {hidden} of them under compute")
print(f"{path}: {len(events)} events, {len(slices)} slices, {len(processes)} processes")
