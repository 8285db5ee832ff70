#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Scores each denoiser's output against the phantom's ground truth, inside the brain mask.

Per method (the outputs run_peers.py left in DIR):
  PSNR    10 log10(peak^2 / MSE), MSE over every brain voxel of every volume, peak = the largest clean value in the
          brain (all volumes); and its gain over the noisy input's PSNR.
  SSIM    skimage's structural_similarity on each 3D volume (7x7x7 uniform window, data_range = the same peak),
          both volumes set to 0 outside the brain, its SSIM map averaged over the brain, then over volumes.
  sigma   the noise map's relative error against the true sigma, sigma_map / sigma - 1 over the brain: median and
          interquartile range.
  vs dwidenoise: the relative RMS difference ||x - x_dwidenoise|| / ||x_dwidenoise|| over the brain, and the median
          over the brain of noise map / dwidenoise's noise map.
Note: the ground truth is the noise-free magnitude; an MP-PCA output keeps the Rician bias of the magnitude data,
which every method shares.
Writes DIR/evaluation.json and DIR/evaluation.md (a Markdown table with the times from DIR/runs.json).
"""
import argparse
import json
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from skimage.metrics import structural_similarity

import dwi_io
from dwi_io import psnr

ORDER = ("noisy", "dwidenoise", "dipy", "patch-denoise", "ours-cpu", "ours-cuda", "ours-cpu-overlap",
         "ours-cuda-overlap")
LABELS = {"noisy": "noisy input", "dwidenoise": "MRtrix3 dwidenoise", "dipy": "DIPY mppca",
          "patch-denoise": "patch-denoise mp_pca", "ours-cpu": "ours, CPU", "ours-cuda": "ours, CUDA",
          "ours-cpu-overlap": "ours, CPU, overlap", "ours-cuda-overlap": "ours, CUDA, overlap"}


def ssim(test, clean, mask, peak):
    # Outside the mask the tools differ (dwidenoise, DIPY and patch-denoise write 0, ours copies the input), and the
    # window of a voxel at the brain's edge reaches outside: both images are set to 0 there, so only brain voxels count.
    def one(v):
        a = np.where(mask, clean[..., v], 0.0).astype(np.float32)
        b = np.where(mask, test[..., v], 0.0).astype(np.float32)
        _, smap = structural_similarity(a, b, data_range=peak, full=True)
        return float(smap[mask].mean())

    with ThreadPoolExecutor(os.cpu_count()) as pool:  # scipy's filters release the GIL
        return float(np.mean(list(pool.map(one, range(clean.shape[-1])))))


def relative_rms(a, b, mask):
    d = a[mask].astype(np.float64) - b[mask]
    return float(np.sqrt(np.sum(d * d) / np.sum(b[mask].astype(np.float64) ** 2)))


def load_optional(path):
    return dwi_io.load_nifti(path)[0] if os.path.exists(path) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="phantom path prefix")
    parser.add_argument("--results", required=True, help="folder run_peers.py wrote")
    parser.add_argument("--title", default="", help="heading line of the Markdown table")
    args = parser.parse_args()
    p = dwi_io.paths(args.data)
    truth = dwi_io.load_truth(args.data)
    sigma_true = float(truth["sigma"])
    clean, _ = dwi_io.load_nifti(p["clean"])
    mask = dwi_io.load_nifti(p["mask"], np.uint8)[0] > 0
    peak = float(clean[mask].max())
    runs_path = os.path.join(args.results, "runs.json")
    runs = json.load(open(runs_path))["methods"] if os.path.exists(runs_path) else {}

    noisy, _ = dwi_io.load_nifti(p["noisy"])
    psnr_noisy = psnr(noisy, clean, mask, peak)
    scores = {"noisy": {"psnr_db": psnr_noisy, "ssim": ssim(noisy, clean, mask, peak)}}
    del noisy
    reference = load_optional(os.path.join(args.results, "dwidenoise_denoised.nii"))
    reference_sigma = load_optional(os.path.join(args.results, "dwidenoise_sigma.nii"))
    for name in ORDER[1:]:
        out = load_optional(os.path.join(args.results, f"{name}_denoised.nii"))
        if out is None:
            continue
        s = {"psnr_db": psnr(out, clean, mask, peak), "ssim": ssim(out, clean, mask, peak)}
        s["psnr_gain_db"] = s["psnr_db"] - psnr_noisy
        sigma_map = load_optional(os.path.join(args.results, f"{name}_sigma.nii"))
        if sigma_map is not None:
            rel = sigma_map[mask].astype(np.float64) / sigma_true - 1.0
            q25, q50, q75 = np.percentile(rel, [25, 50, 75])
            s.update({"sigma_median": float(np.median(sigma_map[mask])), "sigma_rel_err_median": float(q50),
                      "sigma_rel_err_iqr": [float(q25), float(q75)]})
        if reference is not None and name != "dwidenoise":
            s["rel_rms_vs_dwidenoise"] = relative_rms(out, reference, mask)
            if sigma_map is not None and reference_sigma is not None:
                ok = mask & (reference_sigma > 0)
                s["sigma_ratio_vs_dwidenoise_median"] = float(np.median(sigma_map[ok] / reference_sigma[ok]))
        scores[name] = s

    result = {"data": os.path.abspath(args.data), "sigma_true": sigma_true, "peak": peak,
              "mask_voxels": int(mask.sum()), "volumes": int(clean.shape[-1]), "scores": scores, "runs": runs}
    with open(os.path.join(args.results, "evaluation.json"), "w") as f:
        json.dump(result, f, indent=1)
    table = markdown(result, args.title)
    with open(os.path.join(args.results, "evaluation.md"), "w") as f:
        f.write(table)
    print(table)


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def markdown(result, title):
    lines = []
    if title:
        lines += [title, ""]
    lines += [f"Brain mask: {result['mask_voxels']} voxels × {result['volumes']} volumes; true σ = "
              f"{result['sigma_true']:g}; PSNR peak = {result['peak']:.1f} (largest clean value in the brain).", "",
              "| method | threads | time (s) | CPU (s) | PSNR (dB) | gain (dB) | SSIM "
              "| σ rel. error, median [IQR] | rel. RMS diff. vs dwidenoise | σ ratio vs dwidenoise |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name in ORDER:
        s = result["scores"].get(name)
        run = result["runs"].get(name, {})
        if s is None:
            if "skipped" in run or "error" in run:
                why = run.get("skipped") or "failed: " + run["error"][:80]
                lines.append(f"| {LABELS[name]} | | | | | | | {why} | | |")
            continue
        sigma = "—"
        if "sigma_rel_err_median" in s:
            q25, q75 = s["sigma_rel_err_iqr"]
            sigma = f"{100 * s['sigma_rel_err_median']:+.1f} % [{100 * q25:+.1f}, {100 * q75:+.1f}]"
        lines.append("| " + " | ".join([
            LABELS[name], str(run.get("threads", "")), fmt(run.get("time_s"), ".2f"), fmt(run.get("cpu_s"), ".1f"),
            f"{s['psnr_db']:.2f}", fmt(s.get("psnr_gain_db"), "+.2f"), f"{s['ssim']:.4f}", sigma,
            fmt(s.get("rel_rms_vs_dwidenoise"), ".2e"), fmt(s.get("sigma_ratio_vs_dwidenoise_median"), ".4f")]) + " |")
    covers = [f"{LABELS[n]}: {r['time_covers']}" for n, r in result["runs"].items() if "time_covers" in r]
    if covers:
        lines += ["", "time: one run, as each tool lets it be taken — " + "; ".join(covers) + ". "
                  "CPU: the CPU time of that run, all threads."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
