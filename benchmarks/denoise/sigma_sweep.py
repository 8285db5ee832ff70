#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""How far our noise map is from the true sigma: voxelwise error of the sigma map inside the
brain over phantoms of several noise levels, volume counts and masks, and with a noise level that varies in space,
for each configuration of SVDLowRankDenoiseSeries given; also the PSNR gain of each output.

Each case takes the clean series of a make_dwi_phantom.py phantom (made here if missing) and adds its own noise
with a seed: Rician (|S + sigma (n1 + i n2)|, as the phantoms and the scanner's magnitude), non-central chi (chiN: N coils
combined by root-sum-of-squares, the signal in one, run with --coils N) or Gaussian
(S + sigma n1, which separates the estimator's own bias from the Rician floor's). sigma is the fraction given times
the CSF b=0 signal (1000); the varying case grows it linearly along x from 0.5x to 1.5x.

Scores inside the brain mask, with e = sigma map / true sigma - 1 per voxel:
  median |e|     the target's figure (<= 2 %)
  median e       the bias
  IQR of e       the spread (variance); median |e| is about max(|bias|, IQR / 2)
  PSNR gain      over the noisy input, peak = the largest clean value in the brain

    sigma_sweep.py --tool build/apps/SVDLowRankDenoiseSeries --work build/sigma [--size 48 48 24] [--seeds 1]
        [--noise rician,gaussian] [--configs default,dwidenoise] [--cases 0,1,...] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import dwi_io
import preset_sweep
from dwi_io import psnr

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> extra arguments of SVDLowRankDenoiseSeries (the run adds input, output, --noise-map and --mask)
CONFIGS = {
    "default": [],
    "plain": ["--no-magnitude-model"],  # the default before the automatic magnitude model
    "dwidenoise": ["--preset", "dwidenoise"],
    "default-residual": ["--noise-estimator", "residual"],
    "default-mp": ["--noise-estimator", "mp"],
    "dwidenoise-residual": ["--preset", "dwidenoise", "--noise-estimator", "residual"],
    "vst": ["--vst"],
    "vst-residual": ["--vst", "--noise-estimator", "residual"],
    "default-sigma-floor": ["--sigma-floor-correction"],
    "default-residual-sigma-floor": ["--noise-estimator", "residual", "--sigma-floor-correction"],
    # patch centres subsampled (Large series, item 1): every voxel is still in at least one patch
    "dense": ["--stride", "1"],
    "stride2": ["--stride", "2"],
    "stride2-gaussian": ["--stride", "2", "--aggregation", "gaussian"],
    "stride2-rank": ["--stride", "2", "--aggregation", "rank"],
    "stride3": ["--stride", "3"],
    "stride3-gaussian": ["--stride", "3", "--aggregation", "gaussian"],
    "stride3-rank": ["--stride", "3", "--aggregation", "rank"],
    "stride4": ["--stride", "4"],
    # the Rician floor removed (magnitude data by default?)
    "vst-floor": ["--vst", "--noise-floor"],
    "stride2-vst-floor": ["--stride", "2", "--vst", "--noise-floor"],
    "stride2-floor": ["--stride", "2", "--noise-floor"],
}

# preset_sweep.py's cases (its PSNR sweep: name, sigma as a fraction of CSF b=0, volumes, masked, varying
# along x), and the sigma 0.05 phantom on its whole volume
CASES = preset_sweep.CASES + [("sigma 0.05, 65 vol, whole", 0.05, 65, False, False),
                              ("sigma 0.05, 200 vol, mask", 0.05, 200, True, False),
                              ("sigma 0.05, 500 vol, mask", 0.05, 500, True, False)]


def clean_phantom(work, size, volumes):
    prefix = os.path.join(work, f"p{size[0]}x{size[1]}x{size[2]}x{volumes}")
    if not os.path.exists(dwi_io.paths(prefix)["clean"]):
        subprocess.run([sys.executable, os.path.join(HERE, "make_dwi_phantom.py"), "--size", *map(str, size),
                        str(volumes), "--out", prefix], check=True, stdout=subprocess.DEVNULL)
    return prefix


def sigma_field(shape, level, varying):
    """The true sigma per voxel (3D): level x 1000, or 0.5..1.5 x that along x."""
    nx = shape[0]
    scale = (0.5 + np.arange(nx) / max(1, nx - 1)) if varying else np.ones(nx)
    return np.broadcast_to((level * 1000.0 * scale)[:, None, None], shape[:3]).astype(np.float32)


def add_noise(clean, sigma, model, seed):
    rng = np.random.default_rng(seed)
    s = sigma[..., None]
    n1 = rng.standard_normal(clean.shape, dtype=np.float32)
    if model == "gaussian":
        return (clean + s * n1).astype(np.float32)
    n2 = rng.standard_normal(clean.shape, dtype=np.float32)
    squares = (clean + s * n1) ** 2 + (s * n2) ** 2
    for _ in range(coil_count(model) - 1):  # root-sum-of-squares over coils, the signal in the first
        squares += (s * rng.standard_normal(clean.shape, dtype=np.float32)) ** 2 + \
            (s * rng.standard_normal(clean.shape, dtype=np.float32)) ** 2
    return np.sqrt(squares).astype(np.float32)


def coil_count(model):
    """rician: 1; chiN: N coils combined by root-sum-of-squares (non-central chi), as --coils N."""
    return int(model[3:]) if model.startswith("chi") else 1


def sigma_scores(estimated, truth, mask):
    e = estimated[mask].astype(np.float64) / truth[mask] - 1.0
    q1, q3 = np.percentile(e, [25, 75])
    return {"median abs": float(np.median(np.abs(e))), "median": float(np.median(e)), "iqr": float(q3 - q1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="SVDLowRankDenoiseSeries")
    parser.add_argument("--work", required=True, help="folder for phantoms and outputs")
    parser.add_argument("--size", type=int, nargs=3, default=[48, 48, 24])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seeds", default="1", help="comma-separated noise seeds (each case runs once per seed)")
    parser.add_argument("--noise", default="rician", help="comma-separated: rician, gaussian")
    parser.add_argument("--configs", default="default,dwidenoise", help="comma-separated names of CONFIGS")
    parser.add_argument("--cases", help="comma-separated indices into the case list (default: all)")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    chosen = [CASES[int(i)] for i in args.cases.split(",")] if args.cases else CASES
    configs = args.configs.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]

    rows = []
    for name, level, volumes, masked, varying in chosen:
        base = clean_phantom(args.work, args.size, volumes)
        files = dwi_io.paths(base)
        clean, affine = dwi_io.load_nifti(files["clean"])
        brain = dwi_io.load_nifti(files["mask"])[0] > 0
        truth = sigma_field(clean.shape, level, varying)
        for model in args.noise.split(","):
            for seed in seeds:
                noisy = add_noise(clean, truth, model, seed)
                noisy_path = os.path.join(args.work, "noisy.nii")
                dwi_io.save_nifti(noisy_path, noisy, affine)
                row = {"case": name, "noise": model, "seed": seed, "noisy psnr": psnr(noisy, clean, brain)}
                for config in configs:
                    out, sigma_out = (os.path.join(args.work, f) for f in ("out.nii", "sigma.nii"))
                    command = [args.tool, "--backend", "cpu", "--nthreads", str(args.threads), "--overwrite",
                               "--quiet", noisy_path, out, "--noise-map", sigma_out, *CONFIGS[config]]
                    command += ["--mask", files["mask"]] if masked else []
                    command += ["--coils", str(coil_count(model))] if coil_count(model) > 1 else []
                    start = time.perf_counter()
                    subprocess.run(command, check=True)
                    seconds = time.perf_counter() - start
                    sigma_map, denoised = dwi_io.load_nifti(sigma_out)[0], dwi_io.load_nifti(out)[0]
                    scores = sigma_scores(sigma_map, truth, brain)
                    scores["psnr gain"] = psnr(denoised, clean, brain) - row["noisy psnr"]
                    scores["seconds"] = seconds
                    row[config] = scores
                rows.append(row)
                print(json.dumps(row), flush=True)

    print()
    print("| case | noise | seed | " + " | ".join(f"{c}: median abs / median / IQR, PSNR gain, time" for c in configs) + " |")
    print("|---|---|---|" + "---|" * len(configs))
    for row in rows:
        cells = [f"{100 * row[c]['median abs']:.1f} % / {100 * row[c]['median']:+.1f} % / "
                 f"{100 * row[c]['iqr']:.1f} %, {row[c]['psnr gain']:+.2f} dB, {row[c]['seconds']:.1f} s"
                 for c in configs]
        print(f"| {row['case']} | {row['noise']} | {row['seed']} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
