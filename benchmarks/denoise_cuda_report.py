#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""The denoise-kernels stage's summary (benchmarks/device.sh): the CUDA denoiser with our solver and cuSOLVER's, each
with its plan, then the CPU and GPU outputs against the clean series and against each other.

usage: denoise_cuda_report.py DATA LOGS
  DATA  series.f32, clean.f32, cpu.f32 / cpu.u16 and gpu.f32 / gpu.u16 (svdlrDenoiseBenchmark --output, --rank-out)
  LOGS  cuda-bench.log, cuda-bench-overlap.log, cuda-bench-limit.log and cuda-bench-200.log (200 volumes):
        svdlrDenoiseCudaBenchmark's JSON lines (other lines are shown)
"""
import json
import sys

import numpy as np


def configurations(path):
    rows = {}
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            if line.strip():
                print(line.strip()[:300])
            continue
        if "error" in r:
            print(r)
            continue
        rows[r["solver"]] = r
        limit = r.get("device_memory_limit", 0)
        memory = f"device {r.get('device_bytes', 0) / 2**20:.0f} MiB" + (f" (limit {limit / 2**20:.0f})" if limit else "")
        print(f"{r['aggregation']:7s} {r.get('shrinkage', 'hard'):9s} {r['solver']:55s} median "
              f"{r['median_s'] * 1e3:7.1f} ms  plan {r['plan']}  {memory}")
        for key in ("vs_reference", "vs_first_configuration"):
            if key in r:
                print(f"    {key}: {r[key]}")
    return rows


def batch_rank_load(rows, ranks):
    """The kept ranks as the batches of the first configuration's plan see them: their mean, and the sum over the
    batches of each batch's largest rank (one thread per patch computes its vectors: a batch waits on its slowest)."""
    first = rows.get("ours")
    if first is None or ranks is None:
        return
    nx, ny = first["size"][0], first["size"][1]
    plan = first["plan"]
    slab, batch = plan["centre_planes"] * nx * ny, plan["batch"]
    maxima = [int(ranks[s + b:min(s + slab, s + b + batch)].max())
              for s in range(0, ranks.size, slab) for b in range(0, min(slab, ranks.size - s), batch)]
    print(f"  ranks: mean {ranks.mean():.2f}, max {int(ranks.max())}; {len(maxima)} batches, their largest ranks "
          f"sum to {sum(maxima)} (against {len(maxima) * ranks.mean():.0f} at the mean)")


def main():
    data, logs = sys.argv[1], sys.argv[2]
    try:
        cpu_ranks = np.fromfile(f"{data}/cpu.u16", np.uint16)
    except OSError:
        cpu_ranks = None
    for name in ("cuda-bench.log", "cuda-bench-overlap.log", "cuda-bench-limit.log", "cuda-bench-200.log"):
        try:
            rows = configurations(f"{logs}/{name}")
        except OSError as error:
            print(name, error)
            continue
        if name == "cuda-bench.log":
            batch_rank_load(rows, cpu_ranks)
    noisy, clean = (np.fromfile(f"{data}/{n}.f32", np.float32) for n in ("series", "clean"))
    for name in ("cpu", "gpu"):
        try:
            out = np.fromfile(f"{data}/{name}.f32", np.float32)
            print(f"{name}: rms error vs clean {np.sqrt(np.mean((out - clean) ** 2)):.3f} "
                  f"(noisy {np.sqrt(np.mean((noisy - clean) ** 2)):.3f})")
        except (OSError, ValueError) as error:
            print(name, error)
    try:
        cpu, gpu = (np.fromfile(f"{data}/{n}.f32", np.float32) for n in ("cpu", "gpu"))
        rc, rg = (np.fromfile(f"{data}/{n}.u16", np.uint16) for n in ("cpu", "gpu"))
        print(f"gpu vs cpu: max abs {np.max(np.abs(gpu - cpu)):.3g}, rel rms "
              f"{np.linalg.norm(gpu - cpu) / np.linalg.norm(cpu):.3g}, rank differences {int(np.sum(rc != rg))} of "
              f"{rc.size}, ranks {np.bincount(rc).tolist()}")
    except (OSError, ValueError) as error:
        print("compare", error)


if __name__ == "__main__":
    main()
