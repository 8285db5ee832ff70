#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Draws the comparison at a glance: one axial slice of one diffusion-weighted volume.

Top row, on one grey scale: noisy | ours | dwidenoise | ground truth. Bottom row: our noise map (true sigma in its
title), our rank map, and the absolute errors of ours and of dwidenoise against the ground truth, on one scale.
Titles carry each series' PSNR in the brain from DIR/evaluation.json when it is there.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import dwi_io  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="phantom path prefix")
    parser.add_argument("--results", required=True, help="folder run_peers.py wrote")
    parser.add_argument("--ours", default="", help="method whose maps are shown (default ours-cuda, else ours-cpu)")
    parser.add_argument("--volume", type=int, default=-1, help="volume shown (default: the first with b > 0)")
    parser.add_argument("--slice", type=int, default=-1, help="axial slice (default: the brain's middle)")
    parser.add_argument("--png", default=os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                                                      "denoising-comparison.png"))
    args = parser.parse_args()
    p = dwi_io.paths(args.data)
    truth = dwi_io.load_truth(args.data)
    ours = args.ours or next((m for m in ("ours-cuda", "ours-cpu")
                              if os.path.exists(os.path.join(args.results, f"{m}_denoised.nii"))), None)
    if ours is None:
        raise SystemExit(f"error: no output of ours in {args.results}")
    bvals = np.atleast_1d(np.loadtxt(p["bval"]))
    volume = args.volume if args.volume >= 0 else int(np.argmax(bvals > 0))
    mask = dwi_io.load_nifti(p["mask"], np.uint8)[0] > 0
    zs = np.nonzero(mask.any((0, 1)))[0]
    z = args.slice if args.slice >= 0 else int((zs[0] + zs[-1]) // 2)
    xs, ys = np.nonzero(mask[:, :, z].any(1))[0], np.nonzero(mask[:, :, z].any(0))[0]
    crop = (slice(max(xs[0] - 3, 0), xs[-1] + 4), slice(max(ys[0] - 3, 0), ys[-1] + 4))

    def plane(path, vol=True):
        image = dwi_io.load_nifti(path)[0]
        return (image[..., z, volume] if vol else image[..., z])[crop].T  # rows = y, shown with origin lower

    r = args.results
    inside = mask[:, :, z][crop].T
    # Outside the brain the tools were not asked to denoise (dwidenoise writes 0, ours copies the input): show 0.
    series = {"noisy": plane(p["noisy"]), "ours": np.where(inside, plane(f"{r}/{ours}_denoised.nii"), 0.0),
              "dwidenoise": np.where(inside, plane(f"{r}/dwidenoise_denoised.nii"), 0.0),
              "ground truth": plane(p["clean"])}
    scores = {}
    ev = os.path.join(r, "evaluation.json")
    if os.path.exists(ev):
        scores = json.load(open(ev))["scores"]
    psnr = {"noisy": scores.get("noisy", {}).get("psnr_db"), "ours": scores.get(ours, {}).get("psnr_db"),
            "dwidenoise": scores.get("dwidenoise", {}).get("psnr_db")}
    sigma = plane(f"{r}/{ours}_sigma.nii", vol=False)
    rank = plane(f"{r}/{ours}_rank.nii", vol=False)

    fig, axes = plt.subplots(2, 4, figsize=(15, 8.2), constrained_layout=True)
    vmax = float(np.percentile(series["ground truth"][inside], 99.5))
    for ax, (name, image) in zip(axes[0], series.items()):
        im = ax.imshow(image, cmap="gray", vmin=0, vmax=vmax, origin="lower")
        ax.set_title(name + (f"\nPSNR {psnr[name]:.1f} dB (brain, all volumes)" if psnr.get(name) else "\n"))
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="signal (a.u.)")
    shown = np.where(inside, sigma, np.nan)
    im = axes[1, 0].imshow(shown, cmap="viridis", origin="lower")
    axes[1, 0].set_title(f"our noise map σ\n(true σ = {truth['sigma']:g})")
    fig.colorbar(im, ax=axes[1, 0], shrink=0.8)
    im = axes[1, 1].imshow(np.where(inside, rank, np.nan), cmap="magma", origin="lower")
    axes[1, 1].set_title("our rank map\n(components kept per patch)")
    fig.colorbar(im, ax=axes[1, 1], shrink=0.8)
    errors = {name: np.where(inside, np.abs(series[name] - series["ground truth"]), np.nan)
              for name in ("ours", "dwidenoise")}
    emax = float(np.nanpercentile(np.concatenate([e.ravel() for e in errors.values()]), 99))
    for ax, (name, err) in zip(axes[1, 2:], errors.items()):
        im = ax.imshow(err, cmap="inferno", vmin=0, vmax=emax, origin="lower")
        ax.set_title(f"|{name} − ground truth|")
    fig.colorbar(im, ax=axes[1, 2:].tolist(), shrink=0.8)
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    nx, ny, nz, nv = truth["size"]
    fig.suptitle(f"MP-PCA denoising of the Colin27 DWI phantom {nx}×{ny}×{nz}×{nv}: axial slice {z}, "
                 f"volume {volume} (b = {bvals[volume]:g} s/mm²), Rician σ = {truth['sigma']:g}; ours = {ours}")
    os.makedirs(os.path.dirname(os.path.abspath(args.png)), exist_ok=True)
    fig.savefig(args.png, dpi=80)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
