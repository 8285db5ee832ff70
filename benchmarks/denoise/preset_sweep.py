#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Scores our denoiser's configurations against dwidenoise's default over phantoms of several noise levels, volume
counts and masks, and with a noise level that varies in space: PSNR gain inside the brain over the noisy input.

Each case is a phantom from make_dwi_phantom.py (made here if missing). The spatially varying case takes the clean
series of its base phantom and adds Rician noise whose sigma grows linearly along x from 0.5x to 1.5x the base
level (seed 7). Every run goes through the tools as users run them: SVDLowRankDenoiseSeries and dwidenoise, NIfTI
in and out. Prints one Markdown table (rows: cases; columns: configurations), then how far `--preset dwidenoise`
is from dwidenoise's own output (its default, which decomposes in float32, and with `-datatype float64`), then the
CPU seconds of each configuration, and writes all of it as JSON.

How far two outputs are apart, inside the brain mask (every volume of every voxel where the mask is not 0):
  relative RMS      sqrt(sum (ours - theirs)^2 / sum theirs^2)
  max relative      max |ours - theirs| / max |theirs|   (the largest difference against the signal's peak)

    preset_sweep.py --tool build/apps/SVDLowRankDenoiseSeries --work build/sweep [--size 64 64 30] [--threads 1]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

import dwi_io
from dwi_io import psnr

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> extra arguments of SVDLowRankDenoiseSeries, or ("dwidenoise", its extra arguments)
DWIDENOISE = "dwidenoise (Exp2)"
DWIDENOISE64 = "dwidenoise -datatype float64"
PRESET = "ours --preset dwidenoise"
CONFIGS = {
    "ours before (mp, centre, hard)": ["--preset", "dwidenoise", "--policy", "mp"],
    "ours default (overlap, auto shrinkage, mp-cg)": [],
    "ours default with --policy mp": ["--policy", "mp"],
    PRESET: ["--preset", "dwidenoise"],
    DWIDENOISE: ("dwidenoise", []),
    DWIDENOISE64: ("dwidenoise", ["-datatype", "float64"]),
}

# name, noise (fraction of CSF b=0), volumes, masked, varying sigma
CASES = [
    ("sigma 0.02, 65 vol, mask", 0.02, 65, True, False),
    ("sigma 0.05, 65 vol, mask", 0.05, 65, True, False),
    ("sigma 0.10, 65 vol, mask", 0.10, 65, True, False),
    ("sigma 0.05, 30 vol, whole", 0.05, 30, False, False),
    ("sigma 0.05, 150 vol, mask", 0.05, 150, True, False),
    ("sigma 0.025-0.075 along x, 65 vol, whole", 0.05, 65, False, True),
]


def phantom(work, size, noise, volumes):
    prefix = os.path.join(work, f"p{size[0]}x{size[1]}x{size[2]}x{volumes}_n{noise:g}")
    if not os.path.exists(dwi_io.paths(prefix)["clean"]):
        subprocess.run([sys.executable, os.path.join(HERE, "make_dwi_phantom.py"), "--size", *map(str, size),
                        str(volumes), "--noise", str(noise), "--out", prefix], check=True, stdout=subprocess.DEVNULL)
    return prefix


def varying_noise(prefix, noise):
    """The base phantom's clean series with Rician noise of sigma 0.5..1.5 x the base level along x."""
    out = prefix + "_varying"
    if os.path.exists(out + "_noisy.nii"):
        return out
    clean, affine = dwi_io.load_nifti(dwi_io.paths(prefix)["clean"])
    nx = clean.shape[0]
    sigma = noise * 1000.0 * (0.5 + np.arange(nx, dtype=np.float32) / max(1, nx - 1))[:, None, None, None]
    rng = np.random.default_rng(7)
    n1 = rng.standard_normal(clean.shape, dtype=np.float32)
    n2 = rng.standard_normal(clean.shape, dtype=np.float32)
    noisy = np.hypot(clean + sigma * n1, sigma * n2).astype(np.float32)
    dwi_io.save_nifti(out + "_noisy.nii", noisy, affine)
    return out


def difference(ours, theirs, mask):
    """Relative RMS and max relative difference inside the mask (the module docstring defines them)."""
    a = ours[mask].astype(np.float64)
    b = theirs[mask].astype(np.float64)
    return {"relative rms": float(np.sqrt(np.sum((a - b) ** 2) / np.sum(b * b))),
            "max relative": float(np.max(np.abs(a - b)) / np.max(np.abs(b)))}


def run_timed(command, env):
    """Runs a command; returns its wall seconds and the CPU seconds (user + system) of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="SVDLowRankDenoiseSeries")
    parser.add_argument("--work", required=True, help="folder for phantoms and outputs")
    parser.add_argument("--size", type=int, nargs=3, default=[64, 64, 30])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cases", help="comma-separated indices into the case list (default: all)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ, ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=str(args.threads))
    chosen = [CASES[int(i)] for i in args.cases.split(",")] if args.cases else CASES

    rows = []
    for name, noise, volumes, masked, varying in chosen:
        base = phantom(args.work, args.size, noise, volumes)
        files = dwi_io.paths(base)
        noisy_path = varying_noise(base, noise) + "_noisy.nii" if varying else files["noisy"]
        clean, _ = dwi_io.load_nifti(files["clean"])
        brain = dwi_io.load_nifti(files["mask"])[0] > 0
        noisy, _ = dwi_io.load_nifti(noisy_path)
        reference = psnr(noisy, clean, brain)
        row = {"case": name, "noisy psnr": reference, "cpu seconds": {}, "wall seconds": {}}
        outputs = {}
        for index, (config, extra) in enumerate(CONFIGS.items()):
            out = os.path.join(args.work, f"out{index}.nii")
            if isinstance(extra, tuple):
                command = ["dwidenoise", *extra[1], "-nthreads", str(args.threads), "-force", "-quiet", noisy_path, out]
                command += ["-mask", files["mask"]] if masked else []
            else:
                command = [args.tool, "--backend", "cpu", "--overwrite", noisy_path, out, *extra]
                command += ["--mask", files["mask"]] if masked else []
            row["wall seconds"][config], row["cpu seconds"][config] = run_timed(command, env)
            outputs[config] = dwi_io.load_nifti(out)[0]
            row[config] = psnr(outputs[config], clean, brain) - reference
        row["preset vs dwidenoise"] = difference(outputs[PRESET], outputs[DWIDENOISE], brain)
        row["preset vs dwidenoise float64"] = difference(outputs[PRESET], outputs[DWIDENOISE64], brain)
        row["dwidenoise vs dwidenoise float64"] = difference(outputs[DWIDENOISE], outputs[DWIDENOISE64], brain)
        rows.append(row)
        print(json.dumps(row), flush=True)

    header = "| case | noisy PSNR (dB) | " + " | ".join(CONFIGS) + " |"
    print(header)
    print("|" + "---|" * (2 + len(CONFIGS)))
    for row in rows:
        print(f"| {row['case']} | {row['noisy psnr']:.2f} | " +
              " | ".join(f"{row[c]:+.2f}" for c in CONFIGS) + " |")
    print()
    print("| case | default - dwidenoise (dB) | `--preset dwidenoise` - dwidenoise (dB) | preset vs dwidenoise: "
          "relative RMS, max relative | preset vs `-datatype float64` | dwidenoise vs its `-datatype float64` |")
    print("|---|---|---|---|---|---|")
    default = list(CONFIGS)[1]
    pair = lambda d: f"{d['relative rms']:.1e}, {d['max relative']:.1e}"  # noqa: E731
    for row in rows:
        print(f"| {row['case']} | {row[default] - row[DWIDENOISE]:+.2f} | {row[PRESET] - row[DWIDENOISE]:+.5f} | "
              f"{pair(row['preset vs dwidenoise'])} | {pair(row['preset vs dwidenoise float64'])} | "
              f"{pair(row['dwidenoise vs dwidenoise float64'])} |")
    print()
    print("| case | " + " | ".join(f"{c}: CPU s (wall s)" for c in CONFIGS) + " |")
    print("|---|" + "---|" * len(CONFIGS))
    for row in rows:
        print(f"| {row['case']} | " + " | ".join(
            f"{row['cpu seconds'][c]:.1f} ({row['wall seconds'][c]:.1f})" for c in CONFIGS) + " |")
    with open(os.path.join(args.work, "preset_sweep.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
