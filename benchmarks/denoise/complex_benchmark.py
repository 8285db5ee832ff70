#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Runs and scores the complex-data denoisers on one make_complex_phantom.py data set (coils = 1).

Methods (every one gets the brain mask, 5x5x5 patches, the signal volumes; the noise volumes only where named):
  ours-magnitude       SVDLowRankDenoiseSeries on the magnitude (MP-PCA, sigma estimated: the default)
  ours-complex         --phase: phase demodulated, the real part denoised (sigma estimated), |real| written
  ours-complex-noise   --phase --noise-volumes K: as above, sigma from the K noise volumes
  ours-magnitude-noise --noise-volumes K on the magnitude alone (Rayleigh-corrected sigma)
  ours-magnitude-vst   --vst on the magnitude: variance-stabilised for the Rician model, sigma from a first MP-PCA pass,
                       denoised, inverted exactly (the magnitude's expectation, floor kept)
  ours-magnitude-vst-floor
                       --vst --noise-floor: the same, the noise floor removed (the signal nu written)
  ours-magnitude-vst-noise, ours-magnitude-vst-floor-noise
                       the same with --noise-volumes K (sigma from the noise volumes, Rayleigh)
  ours-magnitude-floor-noise
                       --noise-floor --noise-volumes K without --vst: magnitude MP-PCA, the floor removed from its output
  ours-*-overlap       ours-magnitude, ours-complex and ours-complex-noise with --aggregation overlap (every patch holding a voxel
                       averaged, as patch-denoise recombines)
  ours-complex-noise-nordic[-overlap]
                       ours-complex-noise with --policy nordic --shrinkage hard (NORDIC's threshold sigma (sqrt(m) +
                       sqrt(n)) on the noise volumes' sigma, the values above it kept as they are), --aggregation
                       centre (or overlap)
  ours-complex-noise-nordic-default, ours-magnitude-noise-nordic-default
                       --policy nordic at today's defaults (overlap, optimal shrinkage), complex or magnitude
  ours-complex-nordic-sigma
                       --policy nordic with one sigma for the image, the generator's (the sigma where g = 1)
  METHOD+g             METHOD with --gfactor PREFIX_gfactor.nii.gz (make_complex_phantom.py --gfactor); the sigma
                       error is then against sigma g
  METHOD+gest          METHOD with --estimate-gfactor (the map estimated from the series by a first MP-PCA pass),
                       written with --gfactor-out and scored against the generator's map: the median |g_est / g - 1|
                       in the mask as estimated, and of its shape (g_est scaled so that the medians match)
  pd-nordic            patch-denoise's NordicDenoiser on the complex series as acquired (patch-denoise removes no
                       phase), noise_std from the noise volumes
  pd-nordic-demod      the same on the complex series with its smooth phase removed first (scipy's Gaussian of the
                       complex image, sigma 2 voxels in plane, as ours), |output| scored: NORDIC as its authors run
                       it, with a phase removed before the low-rank step
  pd-nordic-demod-edge pd-nordic-demod with noise_std scaled so that its threshold is the noise edge of a patch's
                       own 125 x V matrix: patch-denoise 1.4.4 draws its random matrices with 125 V rows (its patch
                       shape includes the volume axis), which puts its threshold about 4x above that edge
  pd-mppca             patch-denoise's MPPCADenoiser on the magnitude
  dwidenoise           MRtrix3 dwidenoise on the magnitude (-extent 5,5,5, default estimator)
Scores inside the mask against the noise-free magnitude: PSNR (peak: the largest clean value), its gain over the
noisy magnitude, and the noise map's median relative error against the true sigma where a tool writes one.
Prints one markdown table row per method and merges them into PREFIX_complex_results.json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import nibabel as nib
import numpy as np

from dwi_io import psnr

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    return np.asarray(nib.load(path).dataobj)


def save_like(path, array, reference):
    image = nib.Nifti1Image(np.asarray(array), nib.load(reference).affine)
    image.header.set_xyzt_units("mm", "sec")
    nib.save(image, path)


def demodulated(z):
    """Re(z e^{-i phi}) with phi the argument of z low-passed in plane by a Gaussian of sigma 2 voxels."""
    from scipy import ndimage
    smooth = np.empty_like(z)
    for v in range(z.shape[-1]):
        smooth[..., v] = (ndimage.gaussian_filter(z[..., v].real, (2, 2, 0), mode="constant", truncate=3.0)
                          + 1j * ndimage.gaussian_filter(z[..., v].imag, (2, 2, 0), mode="constant", truncate=3.0))
    return (z * np.exp(-1j * np.angle(smooth))).real.astype(np.float32)


def run(command, env=None):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr[-2000:]}")
    return time.perf_counter() - start


def peer(kind, data_path, mask_path, out_path, noise_std):
    """In a process of its own with one BLAS thread (set by the caller): a patch-denoise denoiser."""
    from patch_denoise.space_time.lowrank import MPPCADenoiser, NordicDenoiser
    data = load(data_path)
    mask = load(mask_path) > 0
    if kind.startswith("pd-nordic"):
        denoiser = NordicDenoiser((5, 5, 5), (4, 4, 4), recombination="weighted")
        denoised = denoiser.denoise(data, mask=mask, mask_threshold=0, noise_std=float(noise_std), progbar=False)[0]
    else:
        denoiser = MPPCADenoiser((5, 5, 5), (4, 4, 4), threshold_scale=1.0, recombination="weighted")
        denoised = denoiser.denoise(data, mask=mask, mask_threshold=0, progbar=False)[0]
    save_like(out_path, np.abs(denoised).astype(np.float32), mask_path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="make_complex_phantom.py prefix")
    parser.add_argument("--tool", default=os.path.join(HERE, "../../build/apps/SVDLowRankDenoiseSeries"))
    parser.add_argument("--methods", default="ours-magnitude,ours-complex,ours-complex-noise,ours-magnitude-noise,"
                                             "pd-nordic,pd-nordic-demod,pd-mppca,dwidenoise")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--peer", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        peer(args.peer[0], args.peer[1], args.peer[2], args.peer[3], args.peer[4])
        return

    d = args.data
    with open(f"{d}_truth.json") as f:
        truth = json.load(f)
    sigma, k, nv = truth["sigma"], truth["noise_volumes"], truth["size"][3]
    mask_path = f"{d}_mask.nii.gz"
    mask = load(mask_path) > 0
    clean = load(f"{d}_truth_mag.nii.gz").astype(np.float64)
    mag_all = load(f"{d}_mag.nii.gz")
    # The signal volumes alone, for the methods that do not take noise volumes.
    signal = {"mag": f"{d}_sig_mag.nii.gz", "phase": f"{d}_sig_phase.nii.gz", "complex": f"{d}_sig_complex.nii.gz"}
    save_like(signal["mag"], mag_all[..., :nv], mask_path)
    save_like(signal["phase"], load(f"{d}_phase.nii.gz")[..., :nv], mask_path)
    complex_all = load(f"{d}_complex.nii.gz")
    save_like(signal["complex"], complex_all[..., :nv], mask_path)
    signal["demodulated"] = f"{d}_sig_demodulated.nii.gz"
    save_like(signal["demodulated"], demodulated(complex_all[..., :nv]), mask_path)
    noise = complex_all[..., nv:]
    noise_sigma = float(np.sqrt(np.mean(noise.real ** 2 + noise.imag ** 2) / 2.0)) if k > 0 else sigma

    out = f"{d}_out"
    os.makedirs(out, exist_ok=True)
    ours = [args.tool, "--mask", mask_path, "--backend", "cpu", "--nthreads", str(args.threads), "--overwrite",
            "--quiet", "--patch", "5"]
    methods = {
        "ours-magnitude": lambda o, s: ours + [signal["mag"], o, "--noise-map", s],
        "ours-complex": lambda o, s: ours + [signal["mag"], o, "--phase", signal["phase"], "--noise-map", s],
        "ours-complex-noise": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--phase", f"{d}_phase.nii.gz",
                                                   "--noise-volumes", str(k), "--noise-map", s],
        "ours-magnitude-noise": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--noise-volumes", str(k),
                                                     "--noise-map", s],
        "ours-magnitude-overlap": lambda o, s: ours + [signal["mag"], o, "--noise-map", s, "--aggregation",
                                                       "overlap"],
        "ours-complex-overlap": lambda o, s: ours + [signal["mag"], o, "--phase", signal["phase"], "--noise-map", s,
                                                     "--aggregation", "overlap"],
        "ours-complex-noise-overlap": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--phase", f"{d}_phase.nii.gz",
                                                           "--noise-volumes", str(k), "--noise-map", s,
                                                           "--aggregation", "overlap"],
        "ours-complex-noise-nordic": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--phase", f"{d}_phase.nii.gz",
                                                          "--noise-volumes", str(k), "--noise-map", s, "--policy",
                                                          "nordic", "--shrinkage", "hard", "--aggregation", "centre"],
        "ours-complex-noise-nordic-overlap": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--phase",
                                                                  f"{d}_phase.nii.gz", "--noise-volumes", str(k),
                                                                  "--noise-map", s, "--policy", "nordic",
                                                                  "--shrinkage", "hard", "--aggregation", "overlap"],
        "ours-magnitude-vst": lambda o, s: ours + [signal["mag"], o, "--noise-map", s, "--vst"],
        "ours-magnitude-vst-floor": lambda o, s: ours + [signal["mag"], o, "--noise-map", s, "--vst",
                                                         "--noise-floor"],
        "ours-magnitude-vst-noise": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--noise-volumes", str(k),
                                                         "--noise-map", s, "--vst"],
        "ours-magnitude-vst-floor-noise": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--noise-volumes", str(k),
                                                               "--noise-map", s, "--vst", "--noise-floor"],
        "ours-magnitude-floor-noise": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--noise-volumes", str(k),
                                                           "--noise-map", s, "--noise-floor"],
        "ours-complex-noise-nordic-default": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--phase",
                                                                  f"{d}_phase.nii.gz", "--noise-volumes", str(k),
                                                                  "--noise-map", s, "--policy", "nordic"],
        "ours-complex-nordic-sigma": lambda o, s: ours + [signal["mag"], o, "--phase", signal["phase"],
                                                          "--noise-sigma", repr(sigma), "--noise-map", s,
                                                          "--policy", "nordic"],
        "ours-magnitude-noise-nordic-default": lambda o, s: ours + [f"{d}_mag.nii.gz", o, "--noise-volumes", str(k),
                                                                    "--noise-map", s, "--policy", "nordic"],
        "dwidenoise": lambda o, s: ["dwidenoise", signal["mag"], o, "-mask", mask_path, "-extent", "5,5,5",
                                    "-noise", s, "-nthreads", str(args.threads), "-force", "-quiet"],
    }
    env1 = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    noisy_psnr = psnr(mag_all[..., :nv], clean, mask)
    # With a g-factor (make_complex_phantom.py --gfactor), the true sigma of a voxel is sigma g; a method name ending
    # in "+g" is that method with --gfactor.
    gfactor_path = f"{d}_gfactor.nii.gz"
    true_sigma = sigma * (load(gfactor_path)[mask].astype(np.float64) if os.path.exists(gfactor_path) else 1.0)
    rows = []
    for name in args.methods.split(","):
        if "-noise" in name and k == 0:
            continue
        o, s = f"{out}/{name}.nii.gz", f"{out}/{name}_sigma.nii.gz"
        base, _, variant = name.partition("+")
        gest = f"{out}/{name}_gfactor.nii.gz"
        extra = {"": [], "g": ["--gfactor", gfactor_path], "gest": ["--estimate-gfactor", "--gfactor-out", gest]}
        if base in methods:
            seconds = run(methods[base](o, s) + extra[variant])
        else:
            source = {"pd-nordic": signal["complex"], "pd-nordic-demod": signal["demodulated"],
                      "pd-nordic-demod-edge": signal["demodulated"]}.get(name, signal["mag"])
            # NordicDenoiser's threshold is noise_std x the mean largest singular value of real N(0, 1) patches:
            # complex noise of sigma per channel has sqrt(2) sigma per complex entry; a real part has sigma.
            std = np.sqrt(2.0) * noise_sigma if name == "pd-nordic" else noise_sigma
            if name == "pd-nordic-demod-edge":
                std *= (np.sqrt(125) + np.sqrt(nv)) / (np.sqrt(125 * nv) + np.sqrt(nv))
            seconds = run([sys.executable, __file__, "--data", d, "--peer", name, source, mask_path, o, str(std)],
                          env=env1)
            s = None
        result = np.abs(load(o)).astype(np.float64)
        row = {"method": name, "psnr_db": psnr(result, clean, mask), "seconds": seconds}
        row["gain_db"] = row["psnr_db"] - noisy_psnr
        if s and os.path.exists(s):
            estimate = load(s)[mask]
            row["sigma_median_rel_error"] = float(np.median(estimate / true_sigma - 1.0))
            row["sigma_median_abs_rel_error"] = float(np.median(np.abs(estimate / true_sigma - 1.0)))
        if variant == "gest" and os.path.exists(gfactor_path):
            g_true = load(gfactor_path)[mask].astype(np.float64)
            g_est = load(gest)[mask].astype(np.float64)
            row["gfactor_median_abs_rel_error"] = float(np.median(np.abs(g_est / g_true - 1.0)))
            shape = g_est * np.median(g_true) / np.median(g_est)
            row["gfactor_shape_median_abs_rel_error"] = float(np.median(np.abs(shape / g_true - 1.0)))
        rows.append(row)
        err = row.get("sigma_median_rel_error")
        print(f"| {truth['wm_b0_snr_median']:g} | {name} | {row['psnr_db']:.2f} | {row['gain_db']:+.2f} | "
              f"{'' if err is None else f'{100 * err:+.1f} %'} | {seconds:.1f} |", flush=True)
    # Merged with an earlier run's rows, so that methods can be run one at a time.
    path = f"{d}_complex_results.json"
    earlier = []
    if os.path.exists(path):
        with open(path) as f:
            earlier = [r for r in json.load(f)["rows"] if r["method"] not in {row["method"] for row in rows}]
    with open(path, "w") as f:
        json.dump({"truth": truth, "noisy_psnr_db": noisy_psnr, "noise_volume_sigma": noise_sigma,
                   "rows": earlier + rows}, f, indent=1)


if __name__ == "__main__":
    main()
