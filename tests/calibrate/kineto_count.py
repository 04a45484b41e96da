#!/usr/bin/env python3
"""Independent check of `parasim calibrate from-trace`: counts GPU activity by class in Kineto traces
with Python's own json and gzip, applying the classification rules of calibrate/kernel_class.hpp
written out again here, and compares kernel counts and total time per class, per file and in all,
with what parasim reports (--json).

usage: kineto_count.py PARASIM TRACE [TRACE ...]
Exit 0 when every count and time agrees, 1 (with the differences) otherwise.
"""
import decimal
import gzip
import json
import subprocess
import sys

# calibrate/kernel_class.hpp, in order; first match wins, on the lower-cased name with "fbgemm" and "convert" removed.
RULES = [
    ("attention", ["flash", "fmha", "attention", "attn", "sdpa"]),
    ("convolution", ["conv", "fprop", "dgrad", "wgrad", "scudnn", "winograd", "implicit_gemm", "fft2d", "cudnn::cnn", "cask_cudnn"]),
    ("gemm", ["gemm", "gemv", "splitkreduce", "cublas", "cutlass", "triton_tem", "cijk_", "nvjet"]),
    ("reduction", ["reduce", "softmax", "norm", "bn_fw", "bn_bw", "welford", "triton_red", "triton_per"]),
    ("elementwise", ["elementwise", "fillfunctor", "copy", "triton_poi", "multi_tensor_apply", "nchwtonhwc", "nhwctonchw",
                     "index", "scatter", "gather", "transpose", "catarray"]),
]
CLASSES = ["gemm", "attention", "convolution", "elementwise", "reduction", "nccl", "memcpy", "memset", "other"]


def classify(name):
    s = name.lower().replace("fbgemm", "").replace("convert", "")
    if s.startswith("nccl"):
        return "nccl"
    for klass, patterns in RULES:
        if any(p in s for p in patterns):
            return klass
    return "other"


def to_ns(us):
    """Microseconds as written in the JSON (parsed as Decimal) to integer nanoseconds, half up."""
    return int((decimal.Decimal(us) * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def count(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    trace = json.loads(raw, parse_float=decimal.Decimal)
    totals = {c: {"count": 0, "ns": 0} for c in CLASSES}
    for e in trace["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in ("kernel", "Kernel"):
            klass = classify(e.get("name", ""))
        elif cat == "gpu_memcpy":
            klass = "memcpy"
        elif cat == "gpu_memset":
            klass = "memset"
        else:
            continue
        totals[klass]["count"] += 1
        totals[klass]["ns"] += to_ns(e.get("dur", 0))
    return totals


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    parasim, traces = sys.argv[1], sys.argv[2:]
    run = subprocess.run([parasim, "calibrate", "from-trace", *traces, "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"parasim exited {run.returncode}: {run.stderr}", file=sys.stderr)
        return 1
    report = json.loads(run.stdout)
    problems = []
    overall = {c: {"count": 0, "ns": 0} for c in CLASSES}
    if len(report["files"]) != len(traces):
        problems.append(f"parasim reports {len(report['files'])} files for {len(traces)} given")
    for path, got in zip(traces, report["files"]):
        if got["file"] != path:
            problems.append(f"file order: {got['file']} where {path} was expected")
        want = count(path)
        for c in CLASSES:
            overall[c]["count"] += want[c]["count"]
            overall[c]["ns"] += want[c]["ns"]
            g = got["classes"][c]
            if g["count"] != want[c]["count"] or g["ns"] != want[c]["ns"]:
                problems.append(f"{path}: {c}: parasim {g['count']} kernels, {g['ns']} ns; python {want[c]['count']} kernels, {want[c]['ns']} ns")
    for c in CLASSES:
        g = report["classes"][c]
        if g["count"] != overall[c]["count"] or g["ns"] != overall[c]["ns"]:
            problems.append(f"all files: {c}: parasim {g['count']}, {g['ns']} ns; python {overall[c]['count']}, {overall[c]['ns']} ns")
    for p in problems:
        print(p, file=sys.stderr)
    kernels = sum(overall[c]["count"] for c in CLASSES if c not in ("memcpy", "memset"))
    print(f"{len(traces)} files, {kernels} kernels: " + ", ".join(f"{c} {overall[c]['count']} ({overall[c]['ns'] / 1e6:.3f} ms)"
                                                                   for c in CLASSES if overall[c]["count"]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
