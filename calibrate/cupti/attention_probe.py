#!/usr/bin/env python3
"""Times attention kernels on this node's GPU 0 (the CUPTI collector runs cuBLAS and NCCL, not attention).

    python3 calibrate/cupti/attention_probe.py --out attention.json [--trace layer.pt.trace.json.gz]

What it runs, through PyTorch's scaled_dot_product_attention in BF16, one backend at a time (flash:
FlashAttention-2, built for sm80; cudnn: cuDNN's fused attention, what Transformer Engine runs on Hopper):
head dim 128 at 512 .. 32768 keys with batch x sequence = 16384 tokens (FlashAttention's benchmark
shape), causal and not, and head dims 64 and 256 at 4096 keys. Each point is timed with CUDA events over
--iterations launches after warm-ups: the forward alone, and forward plus backward; the backward is their
difference. FLOPs follow FlashAttention's benchmarks: forward 4·b·h·s²·d, half of it when causal;
backward 2.5 times the forward. The JSON keeps the raw seconds beside the TFLOP/s so that any other
convention can be applied to it.

--trace also writes a PyTorch profiler (Kineto, CUPTI underneath) trace of three training steps of one
Llama-2-7B layer (hidden 4096, 32 heads, SwiGLU 11008, 4096 tokens, BF16): `parasim calibrate
from-trace` reads it.
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def time_ms(fn, iterations):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iterations


def random_qkv(batch, heads, seq, head_dim):
    shape = (batch, heads, seq, head_dim)
    return [torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3)]


def attention_point(backend, batch, heads, seq, head_dim, causal, iterations):
    q, k, v = random_qkv(batch, heads, seq, head_dim)
    grad = torch.randn_like(q)
    with sdpa_kernel([BACKENDS[backend]]):
        forward = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        forward_ms = time_ms(lambda: forward(), iterations)

        def step():
            out = forward()
            out.backward(grad)
            q.grad = k.grad = v.grad = None

        step_ms = time_ms(step, iterations)
    flops = 4.0 * batch * heads * seq * seq * head_dim * (0.5 if causal else 1.0)
    backward_ms = step_ms - forward_ms
    return {
        "backend": backend, "batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim, "causal": causal,
        "forward_s": forward_ms / 1e3, "backward_s": backward_ms / 1e3,
        "forward_tflops": flops / (forward_ms / 1e3) / 1e12,
        "backward_tflops": 2.5 * flops / (backward_ms / 1e3) / 1e12,
    }


def attention_points(iterations):
    shapes = [(128, s, c) for s in (512, 1024, 2048, 4096, 8192, 16384, 32768) for c in (False, True)]
    shapes += [(d, 4096, c) for d in (64, 256) for c in (False, True)]
    points = []
    for backend in BACKENDS:
        for head_dim, seq, causal in shapes:
            batch, heads = max(1, 16384 // seq), 2048 // head_dim
            try:
                p = attention_point(backend, batch, heads, seq, head_dim, causal, iterations)
            except Exception as e:  # a backend that does not run a shape says why; the others go on
                p = {"backend": backend, "seq": seq, "head_dim": head_dim, "causal": causal, "error": str(e).splitlines()[0][:200]}
            points.append(p)
            print(json.dumps(p), flush=True)
            torch.cuda.empty_cache()
    return points


class Layer(torch.nn.Module):
    """One Llama-2-7B decoder layer: RMSNorm, QKV, attention, output, RMSNorm, SwiGLU."""

    def __init__(self, hidden=4096, heads=32, ffn=11008):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.RMSNorm(hidden), torch.nn.RMSNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = torch.nn.Linear(hidden, hidden, bias=False)
        self.gate_up = torch.nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, h)
        x = x + self.out(a)
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def layer_trace(path):
    layer = Layer().cuda().to(torch.bfloat16)
    x = torch.randn(1, 4096, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def step():
        layer(x).sum().backward()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
        for _ in range(3):
            step()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as src, gzip.open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="JSON file of the measured attention points")
    ap.add_argument("--trace", help="also write a Kineto trace of a Llama-2-7B layer's training steps here (.json.gz)")
    ap.add_argument("--iterations", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("attention_probe: error: no CUDA GPU on this machine", file=sys.stderr)
        return 4
    props = torch.cuda.get_device_properties(0)
    began = time.time()
    report = {
        "device": props.name, "multiprocessors": props.multi_processor_count,
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "flops_convention": "forward 4*b*h*s^2*d, half when causal; backward 2.5x forward",
        "points": attention_points(args.iterations),
    }
    report["seconds"] = time.time() - began
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    if args.trace:
        layer_trace(args.trace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
