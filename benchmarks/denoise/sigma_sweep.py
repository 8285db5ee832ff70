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
        [--rician-prototype]
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


def rician_corrected(sigma_map, denoised, volumes, passes=4):
    """The prototype of the engine's --sigma-floor-correction (svdlr::CorrectSigmaForNoiseFloor, which averages rho
    over the voxels inside the mask only, over the patch window shifted inward at the borders): the sigma map of magnitude data corrected for the Rician floor. MP-PCA measures
    the magnitude's own spread, which is below sigma where the signal is within a few sigma of 0: Var[M | nu] =
    nu^2 + 2 sigma^2 - E[M | nu]^2. Taking the denoised series as E[M | nu] (inverted for nu with the Rice mean), each
    voxel's variance ratio rho = Var[M | nu] / sigma^2 is averaged over its volumes and over a patch around it (the
    patch's sigma measures the mean variance of its entries), and sigma = map / sqrt(rho); rho depends on sigma, so
    the steps repeat. The smallest odd cube of at least `volumes` voxels is the patch (the engine's default)."""
    from scipy import ndimage, special
    nu = np.linspace(0.0, 60.0, 6001)
    half = nu * nu / 4.0  # x / 2 with x = nu^2 / 2: E[M]/sigma = sqrt(pi/2) [(1 + x) I0e(x/2) + x I1e(x/2)]
    mean = np.sqrt(np.pi / 2.0) * ((1.0 + 2.0 * half) * special.i0e(half) + 2.0 * half * special.i1e(half))
    side = dwi_io.default_patch_side(volumes)
    measured = sigma_map.astype(np.float64)
    sigma = measured.copy()
    for _ in range(passes):
        scale = np.where(sigma > 0, sigma, 1.0)[..., None]
        ratio = np.maximum(denoised / scale, mean[0])
        signal = np.interp(ratio, mean, nu)
        rho = np.clip(signal * signal + 2.0 - ratio * ratio, 0.3, 1.2).mean(axis=-1)
        sigma = measured / np.sqrt(ndimage.uniform_filter(rho, size=side, mode="nearest"))
    return sigma


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
    parser.add_argument("--rician-prototype", action="store_true",
                        help="also score each Rician run's sigma map corrected for the floor (rician_corrected)")
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
                    if model == "rician" and args.rician_prototype:
                        corrected = rician_corrected(sigma_map, denoised.astype(np.float64), volumes)
                        scores["rician corrected"] = sigma_scores(corrected, truth, brain)
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
    corrected = [row for row in rows if "rician corrected" in row[configs[0]]]
    if corrected:
        print()
        print("| case | seed | " + " | ".join(f"{c}, floor-corrected map: median abs / median / IQR" for c in configs)
              + " |")
        print("|---|---|" + "---|" * len(configs))
        for row in corrected:
            cells = [f"{100 * row[c]['rician corrected']['median abs']:.1f} % / "
                     f"{100 * row[c]['rician corrected']['median']:+.1f} % / "
                     f"{100 * row[c]['rician corrected']['iqr']:.1f} %" for c in configs]
            print(f"| {row['case']} | {row['seed']} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
