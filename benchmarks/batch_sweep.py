#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Streams against no streams: W1 and W5 end to end for several batch sizes.

One batch runs on one stream with nothing to overlap; two or more batches alternate over the pipeline's
two stream slots, so the copies of one batch overlap the solve of another. Prints a markdown table.

usage: batch_sweep.py --binary svdlrBenchmark --colin27 ch2_181x217x181_u8.raw
"""
import argparse
import json
import os
import subprocess

import numpy as np

from run_benchmarks import mri_like


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--colin27", required=True, help="raw 181x217x181 unsigned char, x fastest")
    parser.add_argument("--tmp", default="/tmp/svdlr-batch-sweep")
    args = parser.parse_args()
    os.makedirs(args.tmp, exist_ok=True)
    colin = np.fromfile(args.colin27, np.uint8).reshape(181, 217, 181).astype(np.float32)
    workloads = [("W1", mri_like(256, 256, 256, np.random.default_rng(1)), 32, (256, 128, 64, 32, 16)),
                 ("W5", colin, 20, (181, 91, 46, 23))]
    print("| workload | slices per batch | batches | memory | median ms |\n|---|---|---|---|---|")
    for name, data, k, batches in workloads:
        path = os.path.join(args.tmp, name + ".f32")
        data.tofile(path)
        count, rows, cols = data.shape
        for batch in batches:
            for memory in ("pinned", "pageable"):
                proc = subprocess.run([args.binary, "--input", path, "--count", str(count), "--rows", str(rows),
                                       "--cols", str(cols), "--rank", str(k), "--backend", "cuda", "--memory", memory,
                                       "--batch", str(batch), "--repeats", "7"], capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"| {name} | {batch} | | {memory} | failed: {proc.stderr.strip()[-80:]} |")
                    continue
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                print(f"| {name} | {batch} | {-(-count // batch)} | {memory} | {result['median_ms']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
