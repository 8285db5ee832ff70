#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Makes a realistic diffusion MRI series with ground truth from the Colin27 brain (deterministic with --seed).

Anatomy: phantom_anatomy.py (segmentation of Colin27, resampling). Signal: phantom_signal.py (CSF, GM, WM with one
or two fibres, head tissue). Gradients: gradient_table.py (65 volumes: 1 b=0 + 64 at b=1000; 100 volumes: 10 b=0
+ 30 at b=1000 + 60 at b=2000). Noise: Rician, |S + sigma (n1 + i n2)|, with sigma = --noise x the CSF b=0 signal
(--s0-csf), the same everywhere.

Writes, for --out PREFIX: PREFIX_noisy.nii, PREFIX_clean.nii (the noise-free magnitude), PREFIX_mask.nii (brain),
PREFIX_fractions.nii (CSF, GM, WM, head), PREFIX.bval/.bvec (FSL), PREFIX.b (MRtrix), PREFIX_truth.json (sigma,
the model, checksums) and the raw PREFIX_noisy.f32 / PREFIX_mask.u8 that svdlrDenoiseBenchmark reads.
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np

import dwi_io
import gradient_table
import phantom_anatomy
import phantom_signal


def rician(clean, sigma, rng):
    """|clean + sigma (n1 + i n2)|, one volume at a time so the temporaries stay small."""
    noisy = np.empty_like(clean)
    for v in range(clean.shape[-1]):
        n = rng.standard_normal((2,) + clean.shape[:-1], dtype=np.float32)
        noisy[..., v] = np.hypot(clean[..., v] + sigma * n[0], sigma * n[1])
    return noisy


def write_gradients(p, bvals, bvecs, affine):
    np.savetxt(p["bval"], bvals[None, :], fmt="%g")
    # FSL's bvecs are in the voxel frame with x flipped when the affine's determinant is positive (ours is: RAS).
    fsl = bvecs.copy()
    if np.linalg.det(affine[:3, :3]) > 0:
        fsl[:, 0] *= -1.0
    np.savetxt(p["bvec"], fsl.T, fmt="%.6f")
    # MRtrix's table is in world (scanner) coordinates: our voxel axes are the world axes, only scaled.
    np.savetxt(p["grad"], np.c_[bvecs, bvals], fmt=["%.6f", "%.6f", "%.6f", "%g"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs=4, metavar=("NX", "NY", "NZ", "NV"), default=[96, 96, 60, 65])
    parser.add_argument("--out", required=True, help="path prefix of the files written, e.g. build/denoise/dwi96")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--colin27", default=phantom_anatomy.TEMPLATES, help="folder with ch2.nii.gz and ch2bet.nii.gz")
    parser.add_argument("--s0-csf", type=float, default=1000.0, help="b=0 signal of pure CSF (scanner-like units)")
    parser.add_argument("--noise", type=float, default=0.05, help="sigma as a fraction of the CSF b=0 signal")
    args = parser.parse_args()
    nx, ny, nz, nv = args.size
    if min(args.size) < 1 or nv < 2:
        sys.exit(f"error: --size needs positive sizes and at least 2 volumes, got {args.size}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    p = dwi_io.paths(args.out)

    fractions, mask, affine, facts = phantom_anatomy.build((nx, ny, nz), args.colin27)
    bvals, bvecs = gradient_table.scheme(nv)
    anatomy_rng, noise_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(args.seed).spawn(2))
    spacing = np.asarray(facts["spacing_mm"])
    v1, v2, w2, s0_mod = phantom_signal.fibre_field(anatomy_rng, (nx, ny, nz), spacing)
    clean = phantom_signal.signal(fractions, v1, v2, w2, s0_mod, bvals, bvecs, args.s0_csf)
    sigma = args.noise * args.s0_csf
    noisy = rician(clean, np.float32(sigma), noise_rng)

    dwi_io.save_nifti(p["noisy"], noisy, affine)
    dwi_io.save_nifti(p["clean"], clean, affine)
    dwi_io.save_nifti(p["mask"], mask.astype(np.uint8), affine)
    dwi_io.save_nifti(p["fractions"], np.moveaxis(fractions, 0, -1), affine)
    write_gradients(p, bvals, bvecs, affine)
    dwi_io.write_raw(p["noisy_raw"], noisy, np.float32)
    dwi_io.write_raw(p["mask_raw"], mask, np.uint8)

    wm = (fractions[2] > 0.9) & mask
    b0 = bvals == 0
    truth = {
        "sigma": sigma,
        "noise": "Rician, the same sigma in every voxel",
        "size": [nx, ny, nz, nv],
        "seed": args.seed,
        "s0_csf": args.s0_csf,
        "s0_relative": phantom_signal.S0,
        "diffusivities_mm2_per_s": {"csf": phantom_signal.D_CSF, "head": phantom_signal.D_HEAD,
                                    "gm_tensor_par_perp": phantom_signal.GM_TENSOR,
                                    "wm_fibre_tensor_par_perp": phantom_signal.WM_TENSOR},
        "bvals_count": {str(int(b)): int((bvals == b).sum()) for b in np.unique(bvals)},
        "min_angle_deg_per_shell": {str(int(b)): round(gradient_table.min_angle_degrees(bvecs[bvals == b]), 2)
                                    for b in np.unique(bvals) if b > 0},
        **facts,
        "wm_b0_snr_median": round(float(np.median(clean[wm][:, b0]) / sigma), 2),
        "wm_dw_snr_median": round(float(np.median(clean[wm][:, ~b0]) / sigma), 2),
        "wm_crossing_fraction": round(float((w2[wm] > 0.1).mean()), 3),
        "psnr_noisy_in_mask_db": round(dwi_io.psnr(noisy, clean, mask), 3),
        "psnr_peak": "max of the clean series inside the mask",
        "sha256_noisy_f32": hashlib.sha256(open(p["noisy_raw"], "rb").read()).hexdigest(),
        "numpy": np.__version__,
    }
    with open(p["truth"], "w") as f:
        json.dump(truth, f, indent=1)
    print(json.dumps({k: truth[k] for k in ("size", "sigma", "spacing_mm", "mask_voxels", "wm_b0_snr_median",
                                            "wm_dw_snr_median", "wm_crossing_fraction", "psnr_noisy_in_mask_db")}))


if __name__ == "__main__":
    main()
