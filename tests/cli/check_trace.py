#!/usr/bin/env python3
"""Checks a Chrome trace written by `parasim simulate --trace`: valid JSON, traceEvents with the keys
Perfetto and chrome://tracing need, and one process per simulated GPU plus the links process.
Usage: check_trace.py TRACE EXPECTED_PROCESSES"""
import json
import sys

path, expected = sys.argv[1], int(sys.argv[2])
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
print(f"{path}: {len(events)} events, {len(slices)} slices, {len(processes)} processes")
