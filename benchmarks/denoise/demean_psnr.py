#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""PSNR of SVDLowRankDenoiseSeries with --demean none, all and shells, over phantoms with a known clean series.

Phantoms (made here, deterministic for --seed):
  series   benchmarks/make_denoise_series.py's ellipsoid (5 b=0, then b=1000 and b=2000 shells in two blocks; Gaussian
           noise), at --sigma values; PSNR inside the head
  dwi      make_dwi_phantom.py's Colin27 phantom (Rician noise; 100 volumes: 10 interleaved b=0, b=1000, b=2000),
           at --noise values; PSNR inside the brain mask
Each run goes through the tool as users run it (NIfTI in and out, the .bval beside the series). Prints a Markdown
table of PSNR (dB) per phantom and --demean choice, with the gain of each choice over none, and writes it as JSON.

    demean_psnr.py --tool build/apps/SVDLowRankDenoiseSeries --work build/demean [--size 48 48 30]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/, for make_denoise_series

import dwi_io  # noqa: E402
import make_denoise_series  # noqa: E402

CHOICES = ("none", "all", "shells")


def psnr(test, clean, mask):
    peak = float(clean[mask].max())
    mse = float(np.mean((test[mask].astype(np.float64) - clean[mask]) ** 2))
    return 10.0 * np.log10(peak * peak / mse)


def series_phantom(work, size, sigma, seed):
    """make_denoise_series's phantom as NIfTI (x, y, z, volumes), its b-values beside it; (prefix, clean, mask)."""
    nx, ny, nz, nv = size
    noisy, clean = make_denoise_series.series(nx, ny, nz, nv, sigma, seed)  # (v, z, y, x)
    noisy, clean = (np.transpose(a, (3, 2, 1, 0)) for a in (noisy, clean))
    b0 = min(5, nv)
    shells = nv - b0
    bvalues = np.concatenate([np.zeros(b0), np.full(shells - shells // 2, 1000.0), np.full(shells // 2, 2000.0)])
    prefix = os.path.join(work, f"series_sigma{sigma:g}")
    dwi_io.save_nifti(prefix + ".nii", noisy, np.eye(4))
    np.savetxt(prefix + ".bval", bvalues[None, :], fmt="%g")
    return prefix + ".nii", clean, clean.max(axis=3) > 0


def dwi_phantom(work, size, noise, seed):
    prefix = os.path.join(work, f"dwi_noise{noise:g}")
    paths = dwi_io.paths(prefix)
    if not os.path.exists(paths["noisy"]):
        subprocess.run([sys.executable, os.path.join(HERE, "make_dwi_phantom.py"), "--size", *map(str, size),
                        "--out", prefix, "--noise", str(noise), "--seed", str(seed)], check=True,
                       stdout=subprocess.DEVNULL)
    # The tool reads the .bval named after the series.
    with open(paths["bval"]) as source, open(paths["noisy"][: -len(".nii")] + ".bval", "w") as target:
        target.write(source.read())
    clean = dwi_io.load_nifti(paths["clean"])[0]
    mask = dwi_io.load_nifti(paths["mask"], np.uint8)[0] > 0
    return paths["noisy"], clean, mask


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--size", type=int, nargs=3, default=[48, 48, 30])
    parser.add_argument("--sigma", type=float, nargs="+", default=[20.0, 50.0, 100.0])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.05, 0.1])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    phantoms = [(f"series 65 vol, sigma {s:g} (b=0 SNR {1000 / s:g})",
                 lambda s=s: series_phantom(args.work, args.size + [65], s, args.seed)) for s in args.sigma]
    phantoms += [(f"dwi 100 vol, Rician {n:g} of CSF b=0", lambda n=n: dwi_phantom(args.work, args.size + [100], n,
                                                                                     args.seed)) for n in args.noise]
    rows = []
    for name, make in phantoms:
        path, clean, mask = make()
        row = {"phantom": name, "noisy": psnr(dwi_io.load_nifti(path)[0], clean, mask)}
        for choice in CHOICES:
            output = os.path.join(args.work, f"out_{choice}.nii")
            subprocess.run([args.tool, path, output, "--demean", choice, "--backend", "cpu", "--quiet", "--overwrite",
                            "--nthreads", str(args.threads)], check=True)
            row[choice] = psnr(dwi_io.load_nifti(output)[0], clean, mask)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| phantom | noisy | none | all | shells | all - none | shells - none |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['phantom']} | {r['noisy']:.2f} | {r['none']:.3f} | {r['all']:.3f} | {r['shells']:.3f} | "
              f"{r['all'] - r['none']:+.3f} | {r['shells'] - r['none']:+.3f} |")
    with open(os.path.join(args.work, "demean_psnr.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
