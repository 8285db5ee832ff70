#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""End-to-end benchmark of the engine against its peers, in one process session on the GPU machine.

Generates the workloads (W1-W4 synthetic MRI-like slices, W5 the Colin27 volume), times our engine
through the svdlrBenchmark binary (CUDA from pinned and from pageable memory, and our CPU backend), then
the peers on the same data: NumPy on the CPU, PyTorch (default driver, gesvda, svd_lowrank), CuPy, and
cuBLAS for the reconstruction product alone. Every time has its accuracy beside it: the relative error
against a float64 truncated SVD and the worst per-slice optimality ratio ||A-R||_F / ||A-A_k||_F.

Writes bench.json (raw numbers) to --out and prints a markdown table; report.py turns the JSON into
docs/benchmarks.md and plots.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from make_batch_volumes import read_nifti

WORKLOADS = [  # name, slices, rows, cols, rank
    ("W1", 256, 256, 256, 32),
    ("W2", 64, 512, 512, 64),
    ("W3", 16, 1024, 1024, 64),
    ("W4", 1, 256, 256, 100),
    ("W5", 181, 217, 181, 20),  # Colin27, axial slices: rows = y, cols = x
]


def mri_like(count, rows, cols, rng):
    """Smooth structure that changes from slice to slice, plus 2% noise: an MRI-like spectrum, not white noise."""
    yy, xx = np.mgrid[0:rows, 0:cols]
    yy = yy / rows
    xx = xx / cols
    slices = []
    for i in range(count):
        width = 0.05 + 0.1 * i / max(count, 1)
        body = np.exp(-((xx - 0.5) ** 2 + (yy - 0.5) ** 2) / width)
        texture = 1 + 0.3 * np.sin(12 * xx * (1 + i / count)) * np.cos(9 * yy)
        slices.append(body * texture)
    data = np.stack(slices) + 0.02 * rng.standard_normal((count, rows, cols))
    return data.astype(np.float32)


def median_ms(fn, repeats, sync=lambda: None):
    """The median wall time of `repeats` calls after one warm-up, in ms; `sync` waits for the work to finish."""
    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(1e3 * (time.perf_counter() - start))
    return float(np.median(times))


class Reference:
    """The float64 truncated SVD of a workload, computed once and compared with every system's result."""

    def __init__(self, a, k):
        self.a64 = a.astype(np.float64)
        u, self.s, vt = np.linalg.svd(self.a64, full_matrices=False)
        self.truncated = (u[..., :k] * self.s[..., None, :k]) @ vt[..., :k, :]
        self.k = k


def accuracy(reference, r):
    """Relative error against the float64 truncated SVD, and the worst optimality ratio over slices whose
    tail is not negligible (zero or rank-deficient slices must be reproduced instead)."""
    a64, ref, s, k = reference.a64, reference.truncated, reference.s, reference.k
    r64 = r.astype(np.float64)
    rel = float(np.linalg.norm(r64 - ref) / np.linalg.norm(ref))
    tail = np.sqrt((s[..., k:] ** 2).sum(-1))
    err = np.linalg.norm(a64 - r64, axis=(-2, -1))
    scale = np.linalg.norm(a64, axis=(-2, -1))
    live = tail > 1e-6 * (scale + 1)
    worst = float((err[live] / tail[live]).max()) if live.any() else 1.0
    exact = float((err[~live] / (scale[~live] + 1)).max()) if (~live).any() else 0.0
    return {"rel_err": rel, "optimality_max": worst, "deficient_slices": int((~live).sum()),
            "deficient_err": exact, "finite": bool(np.isfinite(r).all())}


def run_ours(binary, name, data, reference, backend, memory, tmp, repeats, solver="auto", extra=()):
    """Times svdlrBenchmark on `data` and measures the accuracy of its output; `extra`: more flags."""
    k = reference.k
    count, rows, cols = data.shape
    src = os.path.join(tmp, f"{name}.f32")
    dst = os.path.join(tmp, f"{name}_{backend}_{memory}_{solver}.out.f32")
    data.tofile(src)
    cmd = [binary, "--input", src, "--output", dst, "--count", str(count), "--rows", str(rows), "--cols", str(cols),
           "--rank", str(k), "--backend", backend, "--memory", memory, "--repeats", str(repeats), "--name", name,
           "--solver", solver, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-400:]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result.update(accuracy(reference, np.fromfile(dst, np.float32).reshape(data.shape)))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="svdlrBenchmark")
    parser.add_argument("--colin27", required=True, help="ch2.nii.gz")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--tmp", default="/tmp/svdlr-bench")
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--skip-peers", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.tmp, exist_ok=True)

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    rng = np.random.default_rng(20261122)

    def cuda_ms(fn, reps=5, warm=1):
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return float(np.median(times))

    report = {"gpu": torch.cuda.get_device_name(0), "date": time.strftime("%Y-%m-%d"),
              "cpu_threads": os.cpu_count(), "rows": []}
    only = set(filter(None, args.only.split(",")))
    for name, count, rows, cols, k in WORKLOADS:
        if only and name not in only:
            continue
        data = read_nifti(args.colin27)[1] if name == "W5" else mri_like(count, rows, cols, rng)
        assert data.shape == (count, rows, cols), data.shape
        reference = Reference(data, k)
        row = {"name": name, "count": count, "rows": rows, "cols": cols, "rank": k, "systems": {}}
        systems = row["systems"]
        print(f"--- {name}: {count} x {rows}x{cols}, rank {k}", flush=True)
        reps = 10 if count * rows * cols <= 2**24 else 5
        systems["ours_cuda_pinned"] = run_ours(args.binary, name, data, reference, "cuda", "pinned", args.tmp, reps)
        systems["ours_cuda_pageable"] = run_ours(args.binary, name, data, reference, "cuda", "pageable", args.tmp, reps)
        systems["ours_cuda_exact_pinned"] = run_ours(args.binary, name, data, reference, "cuda", "pinned", args.tmp,
                                                     reps, solver="exact")
        systems["ours_cpu"] = run_ours(args.binary, name, data, reference, "cpu", "pageable", args.tmp, 3)
        for key in ("ours_cuda_pinned", "ours_cuda_pageable", "ours_cuda_exact_pinned", "ours_cpu"):
            print(f"  {key}: {systems[key]}", flush=True)

        if not args.skip_peers:
            def recon(u, s, vh):
                return (u[..., :k] * s[..., None, :k]) @ vh[..., :k, :]

            def numpy_run():
                u, s, vt = np.linalg.svd(data, full_matrices=False)
                return recon(u, s, vt)
            systems["numpy_cpu"] = {"median_ms": median_ms(numpy_run, 2 if rows >= 512 else 3),
                                    **accuracy(reference, numpy_run())}
            pinned = torch.from_numpy(data).pin_memory()
            out = torch.empty_like(pinned).pin_memory()
            on_gpu = pinned.to(dev)
            for driver in (None, "gesvda"):
                key = f"torch_{driver or 'default'}"
                try:
                    def svd_run():
                        return recon(*torch.linalg.svd(on_gpu, full_matrices=False, driver=driver))

                    def e2e():
                        d = pinned.to(dev, non_blocking=True)
                        out.copy_(recon(*torch.linalg.svd(d, full_matrices=False, driver=driver)), non_blocking=True)
                    systems[key] = {"median_ms": cuda_ms(e2e, reps=3), "device_only_ms": cuda_ms(svd_run, reps=3),
                                    **accuracy(reference, svd_run().cpu().numpy())}
                except Exception as error:  # gesvda throws on some real MRI slices
                    systems[key] = {"error": str(error)[:300]}
            try:
                def lowrank():
                    u, s, v = torch.svd_lowrank(on_gpu, q=min(k + 8, rows, cols), niter=2)
                    return (u[..., :k] * s[..., None, :k]) @ v[..., :, :k].transpose(-1, -2)
                systems["torch_svd_lowrank"] = {"median_ms": cuda_ms(lowrank, reps=3),
                                                **accuracy(reference, lowrank().cpu().numpy())}
            except Exception as error:
                systems["torch_svd_lowrank"] = {"error": str(error)[:300]}
            try:
                import cupy as cp
                on_cupy = cp.asarray(data)

                def cupy_run():
                    u, s, vt = cp.linalg.svd(on_cupy, full_matrices=False)
                    return (u[..., :k] * s[..., None, :k]) @ vt[..., :k, :]
                systems["cupy"] = {"median_ms": cuda_ms(cupy_run, reps=3),
                                   **accuracy(reference, cp.asnumpy(cupy_run()))}
            except Exception as error:
                systems["cupy"] = {"error": str(error)[:300]}
            # cuBLAS for the reconstruction product alone, from precomputed factors.
            u, s, vh = torch.linalg.svd(on_gpu.double(), full_matrices=False)
            uk = (u[..., :k] * s[..., None, :k]).float().contiguous()
            vk = vh[..., :k, :].float().contiguous()
            row["cublas_product_ms"] = cuda_ms(lambda: uk @ vk, reps=20)
            del pinned, out, on_gpu, u, s, vh, uk, vk
            torch.cuda.empty_cache()
            for key, value in systems.items():
                if not key.startswith("ours"):
                    print(f"  {key}: {value}", flush=True)
        report["rows"].append(row)
        with open(os.path.join(args.out, "bench.json"), "w") as fh:
            json.dump(report, fh, indent=1)

    print_table(report)


def print_table(report):
    print(f"\n{report['gpu']}, {report['date']}: median ms (relative error; worst optimality ratio)")
    names = []
    for row in report["rows"]:
        for key in row["systems"]:
            if key not in names:
                names.append(key)
    print("| workload | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for row in report["rows"]:
        cells = []
        for key in names:
            r = row["systems"].get(key, {})
            if "median_ms" in r:
                cells.append(f"{r['median_ms']:.2f} ({r['rel_err']:.1e}; {r['optimality_max']:.6f})")
            else:
                cells.append("failed" if "error" in r else "")
        print(f"| {row['name']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
