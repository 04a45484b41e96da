#!/usr/bin/env python3
"""Checks a Chrome trace written by `parasim simulate --trace`: valid JSON, traceEvents with the keys
Perfetto and chrome://tracing need, and one process per simulated GPU plus the links process.
Further checks, by flag:
  --strict          the Trace Event Format's rules: known phases (M, X, C, s, f), slices of one track
                    never overlapping in part, counters named after links ("a -> b") with finite
                    values, every flow start with its end, each bound to a slice of its track
  --two-directions  compute slices of both directions, named (down) and (up) (DualPipe, a V's way back)
  --fb-overlap      expert all-to-alls of F&B backwards on tracks of their own, some of them running
                    while the same GPU computes (the overlap), and no two slices of one GPU track
                    overlapping in part
A TRACE ending in .gz is read through gzip.
  --max-bytes=N     the file is at most N bytes
EXPECTED_PROCESSES may be "any".
Usage: check_trace.py TRACE EXPECTED_PROCESSES [--strict] [--two-directions] [--fb-overlap] [--max-bytes=N]"""
import gzip
import json
import os
import math
import sys

path, expected, flags = sys.argv[1], sys.argv[2], set(a for a in sys.argv[3:] if not a.startswith("--max-bytes="))
for a in sys.argv[3:]:
    if a.startswith("--max-bytes="):
        size = os.path.getsize(path)
        assert size <= int(a.split("=")[1]), f"{path} is {size} bytes, more than {a.split('=')[1]}"
unknown = flags - {"--strict", "--two-directions", "--fb-overlap"}
assert not unknown, f"unknown flags {unknown}"
with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
    trace = json.load(f)
events = trace["traceEvents"]
processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
slices = [e for e in events if e["ph"] == "X"]
for e in events:
    for key in ("ph", "pid", "tid"):
        assert key in e, f"event without {key}: {e}"
for e in slices:
    assert "ts" in e and "dur" in e and e["dur"] >= 0, f"bad slice: {e}"
if expected != "any":
    assert len(processes) == int(expected), f"{len(processes)} processes, expected {expected}"
assert len(slices) >= 10, f"only {len(slices)} slices"
gpu_pids = {e["pid"] for e in slices if e.get("cat") == "compute"}
has_links = any(e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"].startswith("links") for e in events)
assert len(gpu_pids) == len(processes) - has_links, f"compute on {len(gpu_pids)} processes"
compute = [e for e in slices if e.get("cat") == "compute"]

def spans_by_track(slices):
    tracks = {}
    for e in slices:
        tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in tracks.values():
        spans.sort()
    return tracks


if "--strict" in flags:
    phases = {e["ph"] for e in events}
    assert phases <= {"M", "X", "C", "s", "f"}, f"unexpected phases {phases - {'M', 'X', 'C', 's', 'f'}}"
    tracks = spans_by_track(slices)
    for key, spans in tracks.items():
        # Nested or disjoint: a slice starting inside the open one must end inside it too.
        open_ends = []
        for start, end in spans:
            while open_ends and open_ends[-1] <= start + 1e-6:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 1e-6, f"slices overlap in part on track {key}: ends {open_ends[-1]} and {end}"
            open_ends.append(end)
    for e in events:
        if e["ph"] == "C":
            assert " -> " in e["name"], f"counter not named after a link: {e['name']}"
            for v in e["args"].values():
                assert math.isfinite(v), f"counter value {v}"
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == sum(1 for e in events if e["ph"] == "s"), "a flow id starts twice"
    assert set(starts) == set(ends), f"flows without an end or a start: {set(starts) ^ set(ends)}"

    def enclosed(e):
        return any(s <= e["ts"] <= t for s, t in tracks.get((e["pid"], e["tid"]), []))

    for e in list(starts.values()) + list(ends.values()):
        assert enclosed(e), f"flow event outside any slice of its track: {e}"
    print(f"strict: {len(tracks)} tracks, {len(starts)} flows, {sum(1 for e in events if e['ph'] == 'C')} counters")

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
