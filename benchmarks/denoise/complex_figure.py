#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Draws the complex comparison at a glance: one axial slice of one diffusion-weighted volume of a complex phantom.

Noisy magnitude | ours on the magnitude (MP-PCA) | ours on the complex series (phase removed, sigma from the noise
volumes) | ground truth, on one grey scale, each titled with its PSNR in the brain (from PREFIX_complex_results.json);
then the sigma map from the noise volumes (true sigma in its title). Run complex_benchmark.py first.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nibabel as nib  # noqa: E402
import numpy as np  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="make_complex_phantom.py prefix")
    parser.add_argument("--volume", type=int, default=1, help="volume shown (default 1: the first at b = 1000)")
    parser.add_argument("--png", default=os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                                                      "denoising-complex.png"))
    args = parser.parse_args()
    d = args.data
    load = lambda path: np.asarray(nib.load(path).dataobj)  # noqa: E731
    with open(f"{d}_complex_results.json") as f:
        results = json.load(f)
    psnr = {row["method"]: row["psnr_db"] for row in results["rows"]}
    mask = load(f"{d}_mask.nii.gz") > 0
    z = int(np.median(np.nonzero(mask.any(axis=(0, 1)))[0]))
    v = args.volume
    panels = [(np.abs(load(f"{d}_mag.nii.gz")[..., v]), f"noisy magnitude\n{results['noisy_psnr_db']:.1f} dB"),
              (load(f"{d}_out/ours-magnitude.nii.gz")[..., v], f"ours, magnitude (MP-PCA)\n{psnr['ours-magnitude']:.1f} dB"),
              (load(f"{d}_out/ours-complex-noise.nii.gz")[..., v],
               f"ours, complex + noise volumes\n{psnr['ours-complex-noise']:.1f} dB"),
              (load(f"{d}_truth_mag.nii.gz")[..., v], "ground truth")]
    top = float(np.percentile(panels[3][0][mask[..., :]], 99.5))
    fig, axes = plt.subplots(1, 5, figsize=(17, 3.9))
    for ax, (image, title) in zip(axes, panels):
        ax.imshow(np.rot90(image[:, :, z]), cmap="gray", vmin=0, vmax=top)
        ax.set_title(title, fontsize=10)
    sigma = load(f"{d}_out/ours-complex-noise_sigma.nii.gz")
    shown = axes[4].imshow(np.rot90(np.where(mask[:, :, z], sigma[:, :, z], np.nan)), cmap="viridis")
    axes[4].set_title(f"sigma from 3 noise volumes\n(true {results['truth']['sigma']:.1f})", fontsize=10)
    fig.colorbar(shown, ax=axes[4], fraction=0.046)
    for ax in axes:
        ax.axis("off")
    fig.suptitle(f"b = 1000 volume {v}, axial slice {z}; white-matter b=0 SNR {results['truth']['wm_b0_snr_median']:g}",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(args.png, dpi=90)
    print(args.png)


if __name__ == "__main__":
    main()
