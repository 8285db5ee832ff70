#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Patch shape x aggregation weighting (issue 21, item 6): PSNR gain and sigma error of each configuration against the
phantoms' truth, as users run the tool. One Markdown table (stdout) and one JSON (--json).

Phantoms (--phantoms, default all three):
  series   make_denoise_series.py (the engine benchmarks' synthetic head: Gaussian noise of sigma 20, SNR 50 at b=0,
           65 volumes), scored in the head (its clean b=0 > 0);
  dwi      make_dwi_phantom.py (Colin27, Rician noise sigma 0.05 x the CSF b=0 signal: WM SNR 9 at b=0), in the brain;
  dwi-low  the same at sigma 0.10 (WM SNR 4.5 at b=0).
Each configuration is a fresh SVDLowRankDenoiseSeries process on the CPU with the phantom's mask, the defaults apart
from --patch-shape and --aggregation: cuboid (the default 5x5x5 for 65 volumes) or sphere (the default radius, sqrt(6):
81 voxels), and overlap (uniform weights), rank (1/(1+rank)) or gaussian (FWHM 2 voxels); centre-voxel rows for each
shape as the baseline of no aggregation. PSNR as evaluate.py (peak: the largest clean value in the mask); sigma error:
median over the mask of map / true sigma - 1.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dwi_io  # noqa: E402
from evaluate import psnr  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = ("cuboid", "sphere")
AGGREGATIONS = ("centre", "overlap", "rank", "gaussian")


def make_phantoms(kinds, size, work, python):
    """{kind: (noisy .nii.gz, mask .nii.gz, clean array, mask array, sigma)}, made once in `work`."""
    phantoms = {}
    affine = np.diag([2.0, 2.0, 2.0, 1.0])
    for kind in kinds:
        prefix = os.path.join(work, kind)
        if kind == "series":
            raw, clean_raw = prefix + "_noisy.f32", prefix + "_clean.f32"
            if not os.path.exists(raw):
                subprocess.run([python, os.path.join(HERE, "..", "make_denoise_series.py"), raw, "--size",
                                *map(str, size), "--clean", clean_raw], check=True)
            shape = (size[3], size[2], size[1], size[0])  # raw: x fastest, then y, z, volume
            noisy = np.fromfile(raw, np.float32).reshape(shape).transpose(3, 2, 1, 0)
            clean = np.fromfile(clean_raw, np.float32).reshape(shape).transpose(3, 2, 1, 0)
            mask = (clean[..., 0] > 0).astype(np.uint8)
            for name, array in ((prefix + "_noisy.nii.gz", noisy), (prefix + "_mask.nii.gz", mask)):
                dwi_io.save_nifti(name, array, affine)
            phantoms[kind] = (prefix + "_noisy.nii.gz", prefix + "_mask.nii.gz", clean, mask > 0, 20.0)
        else:
            noise = "0.05" if kind == "dwi" else "0.10"
            p = dwi_io.paths(prefix)
            if not os.path.exists(p["noisy"]):
                subprocess.run([python, os.path.join(HERE, "make_dwi_phantom.py"), "--out", prefix, "--size",
                                *map(str, size), "--noise", noise], check=True)
            mask = dwi_io.load_nifti(p["mask"], np.uint8)[0]
            phantoms[kind] = (p["noisy"], p["mask"], dwi_io.load_nifti(p["clean"])[0], mask > 0,
                              dwi_io.load_truth(prefix)["sigma"])
    return phantoms


def run(tool, phantom, shape, aggregation, work, threads):
    noisy, mask_file, clean, mask, sigma = phantom
    out, noise = os.path.join(work, "out.nii.gz"), os.path.join(work, "sigma.nii.gz")
    cmd = [tool, noisy, out, "--noise-map", noise, "--mask", mask_file, "--backend", "cpu", "--nthreads",
           str(threads), "--overwrite", "--quiet", "--patch-shape", shape, "--aggregation", aggregation]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - start
    noisy_array = dwi_io.load_nifti(noisy)[0]
    peak = float(clean[mask].max())
    result = dwi_io.load_nifti(out)[0]
    sigma_map = dwi_io.load_nifti(noise)[0][mask].astype(np.float64)
    return {"psnr_db": psnr(result, clean, mask, peak),
            "psnr_gain_db": psnr(result, clean, mask, peak) - psnr(noisy_array, clean, mask, peak),
            "sigma_rel_err_median": float(np.median(sigma_map / sigma - 1.0)), "wall_s": wall,
            "command": " ".join(cmd)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="SVDLowRankDenoiseSeries")
    parser.add_argument("--work", required=True)
    parser.add_argument("--size", type=int, nargs=4, default=[64, 64, 30, 65], metavar=("NX", "NY", "NZ", "NV"))
    parser.add_argument("--phantoms", default="series,dwi,dwi-low")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    phantoms = make_phantoms(args.phantoms.split(","), args.size, args.work, sys.executable)
    results = []
    for kind, phantom in phantoms.items():
        for shape in SHAPES:
            for aggregation in AGGREGATIONS:
                row = {"phantom": kind, "shape": shape, "aggregation": aggregation,
                       **run(args.tool, phantom, shape, aggregation, args.work, args.threads)}
                results.append(row)
                print(json.dumps(row), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    kinds = list(phantoms)
    print("| shape | aggregation | " + " | ".join(f"{k}: PSNR gain (dB) | {k}: σ error" for k in kinds) + " |")
    print("|---|---|" + "---|---|" * len(kinds))
    for shape in SHAPES:
        for aggregation in AGGREGATIONS:
            cells = []
            for kind in kinds:
                r = next(r for r in results if (r["phantom"], r["shape"], r["aggregation"]) == (kind, shape, aggregation))
                cells += [f"{r['psnr_gain_db']:+.2f}", f"{100 * r['sigma_rel_err_median']:+.1f} %"]
            print(f"| {shape} | {aggregation} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
