#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Accuracy and time of the CUDA subspace solver over its block width and iteration count, beside the
exact solver, on the benchmark's workloads (one device call; data and accuracy as in run_benchmarks.py).

Writes subspace_sweep.json to --out and prints a table: median ms, relative error against the float64
truncated SVD, worst per-slice optimality ratio.
"""
import argparse
import json
import os
import sys

from run_benchmarks import WORKLOADS, Reference, mri_like, read_nifti, run_ours

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="svdlrBenchmark")
    parser.add_argument("--colin27", required=True, help="ch2.nii.gz")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--tmp", default="/tmp/svdlr-sweep")
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--iterations", default="2,3,4,6,8")
    parser.add_argument("--oversampling", default="16,k", help="p values; 'k' means p = k")
    args = parser.parse_args()
    os.makedirs(args.tmp, exist_ok=True)
    rng = np.random.default_rng(20261122)
    only = set(filter(None, args.only.split(",")))
    rows_out = []
    print("| workload | solver | w | q | ms | rel err | worst optimality |")
    print("|---|---|---|---|---|---|---|")
    for name, count, rows, cols, k in WORKLOADS:
        if only and name not in only:
            continue
        data = read_nifti(args.colin27) if name == "W5" else mri_like(count, rows, cols, rng)
        reference = Reference(data, k)
        settings = [("exact", 0, 0, []), ("auto", 0, 0, [])]
        n = min(rows, cols)
        for p in args.oversampling.split(","):
            w = min(n, 160, k + (k if p == "k" else int(p)))
            for q in (int(v) for v in args.iterations.split(",")):
                settings.append(("subspace", w, q, ["--subspace-width", str(w), "--subspace-iterations", str(q)]))
        for solver, w, q, extra in settings:
            r = run_ours(args.binary, name, data, reference, "cuda", "pinned", args.tmp, 7, solver, extra)
            rows_out.append({"name": name, "solver": solver, "width": w, "iterations": q, **r})
            if "error" in r:
                print(f"| {name} | {solver} | {w} | {q} | failed: {r['error'][:80]} | | |", flush=True)
            else:
                print(f"| {name} | {solver} ({r.get('solver', '')}) | {w} | {q} | {r['median_ms']:.2f} | "
                      f"{r['rel_err']:.1e} | {r['optimality_max']:.7f} |", flush=True)
        with open(os.path.join(args.out, "subspace_sweep.json"), "w") as fh:
            json.dump(rows_out, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())
