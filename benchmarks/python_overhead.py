#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""What the Python package adds to the engine: W1 and W5 from NumPy (and from CuPy, device-resident) against the C++
pageable path (svdlrBenchmark), in one process on the GPU machine. Each time is the median of --repeats calls after
one warm-up; the Python rows time the whole call as a user makes it (time.perf_counter around it).

    python3 python_overhead.py --binary svdlrBenchmark --colin27 ch2.nii.gz
(the package must be importable: PYTHONPATH holds a folder with itk_svdlowrankreconstruction and its _engine)"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_batch_volumes import read_nifti  # noqa: E402
from run_benchmarks import median_ms, mri_like  # noqa: E402

from itk_svdlowrankreconstruction import _engine, svd_low_rank_reconstruction_image_filter  # noqa: E402


def cpp_pageable_ms(binary, data, k, repeats, tmp):
    path = os.path.join(tmp, "python_overhead.f32")
    data.tofile(path)
    count, rows, cols = data.shape
    out = subprocess.run([binary, "--input", path, "--count", str(count), "--rows", str(rows), "--cols", str(cols),
                          "--rank", str(k), "--backend", "cuda", "--memory", "pageable", "--repeats", str(repeats)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["median_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--colin27", required=True)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--tmp", default="/tmp/svdlr-python")
    args = parser.parse_args()
    os.makedirs(args.tmp, exist_ok=True)
    rng = np.random.default_rng(2026)
    workloads = [("W1", mri_like(256, 256, 256, rng), 32), ("W5", read_nifti(args.colin27)[1], 20)]
    print("| workload | C++ pageable ms | Python, fresh output | Python, out= reused | out=numpy.empty_like each call "
          "| filter function (NumPy) | CuPy in and out (device) |")
    print("|---|---|---|---|---|---|---|")
    for name, data, k in workloads:
        data = np.ascontiguousarray(data, dtype=np.float32)
        cpp = cpp_pageable_ms(args.binary, data, k, args.repeats, args.tmp)
        fresh = median_ms(lambda: _engine.reconstruct(data, rank=k, backend="cuda"), args.repeats)
        out = np.empty_like(data)
        reused = median_ms(lambda: _engine.reconstruct(data, rank=k, backend="cuda", out=out), args.repeats)
        numpy_fresh = median_ms(lambda: _engine.reconstruct(data, rank=k, backend="cuda", out=np.empty_like(data)),
                                args.repeats)
        # The public function on a NumPy volume (slices along NumPy's first axis by default).
        public = median_ms(lambda: svd_low_rank_reconstruction_image_filter(data, rank=k, backend="cuda"),
                           args.repeats)
        try:
            import cupy as cp
            on_device = cp.asarray(data)
            result = cp.empty_like(on_device)
            stream = cp.cuda.get_current_stream()
            device = median_ms(lambda: _engine.reconstruct(on_device, rank=k, backend="cuda", out=result,
                                                           stream=stream.ptr), args.repeats, stream.synchronize)
            device_text = f"{device:.2f}"
        except Exception as error:  # noqa: BLE001 - reported, not hidden
            device_text = f"failed: {str(error)[:80]}"

        def ratio(t):
            return f"{t:.2f} ({t / cpp:.2f}x)"
        print(f"| {name} | {cpp:.2f} | {ratio(fresh)} | {ratio(reused)} | {ratio(numpy_fresh)} | {ratio(public)} "
              f"| {device_text} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
