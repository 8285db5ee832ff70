#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Makes a complex-valued diffusion MRI series with ground truth: the Colin27 phantom with a phase and noise scans.

The magnitude is make_dwi_phantom.py's (phantom_anatomy.py, phantom_signal.py, gradient_table.py); the phase is
phantom_phase.py's (a smooth background field plus a per-volume offset, ramp and curvature). Noise: complex Gaussian,
sigma per channel (real and imaginary), the same everywhere; sigma is set by --wm-b0-snr (the median b=0 signal of
white matter over sigma) or by --noise (a fraction of the CSF b=0 signal, as make_dwi_phantom.py). With --coils N > 1
the signal is spread over N coils with smooth sensitivities (sum of |c|^2 = 1, so the root-sum-of-squares of the clean
coil images is the clean magnitude), each coil gets its own noise, and only the root-sum-of-squares magnitude is
written (non-central chi with 2N degrees of freedom; no phase). --noise-volumes K appends K noise-only volumes (noRF:
no excitation, so noise alone) to every noisy series, as NORDIC acquires them. --gfactor G scales the noise by a
g-factor map, g = 1 + (G - 1) min(1, x^2 + y^2) in the normalised in-plane coordinates (1 at the centre, G at the
middle of each edge and beyond), in the signal and the noise volumes alike, as parallel imaging amplifies it.

Writes, for --out PREFIX (V signal volumes, K noise volumes):
  PREFIX_mag.nii.gz        noisy magnitude, V + K volumes
  PREFIX_phase.nii.gz      noisy phase in radians, [-pi, pi), V + K volumes (coils = 1 only)
  PREFIX_complex.nii.gz    noisy complex64, V + K volumes (coils = 1 only)
  PREFIX_real.nii.gz, PREFIX_imag.nii.gz   its real and imaginary parts (coils = 1 only)
  PREFIX_truth_mag.nii.gz  the noise-free magnitude, V volumes
  PREFIX_truth_complex.nii.gz  the noise-free complex series, V volumes (coils = 1 only)
  PREFIX_truth_phase.nii.gz    the phase field applied, V volumes (coils = 1 only)
  PREFIX_mask.nii.gz       brain mask;  PREFIX.bval / .bvec (FSL), PREFIX.b (MRtrix): the V signal volumes only
  PREFIX_gfactor.nii.gz    the g-factor map (with --gfactor only; the noise's sigma in a voxel is sigma g)
  PREFIX_truth.json        sigma, K, coils, seeds, SNRs, checksums
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np

import dwi_io
import gradient_table
import make_dwi_phantom
import phantom_anatomy
import phantom_phase
import phantom_signal


def coil_sensitivities(shape, coils, rng):
    """(coils, nx, ny, nz) complex sensitivities: smooth Gaussian blobs around the head with a linear phase each,
    normalised so that sum over coils of |c|^2 = 1 in every voxel."""
    x, y, z = phantom_phase.coordinates(shape)
    maps = []
    for k in range(coils):
        angle = 2.0 * np.pi * k / coils
        cx, cy = 1.2 * np.cos(angle), 1.2 * np.sin(angle)
        weight = np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 1.5)
        phase = rng.uniform(-np.pi, np.pi) + rng.normal(0, 0.5) * x + rng.normal(0, 0.5) * y
        maps.append(weight * np.exp(1j * phase))
    maps = np.stack(maps)
    return maps / np.sqrt((np.abs(maps) ** 2).sum(0, keepdims=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs=4, metavar=("NX", "NY", "NZ", "NV"), default=[64, 64, 30, 40],
                        help="grid and signal volumes (noise volumes come on top)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--colin27", default=phantom_anatomy.TEMPLATES)
    parser.add_argument("--s0-csf", type=float, default=1000.0)
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--wm-b0-snr", type=float, help="median white-matter b=0 signal / sigma")
    noise.add_argument("--noise", type=float, default=0.05, help="sigma as a fraction of the CSF b=0 signal")
    parser.add_argument("--coils", type=int, default=1, help="receive coils combined by root-sum-of-squares")
    parser.add_argument("--noise-volumes", type=int, default=0, help="noise-only volumes appended (noRF)")
    parser.add_argument("--gfactor", type=float, default=None,
                        help="largest g-factor: the noise scaled by 1 at the centre up to G at the edges")
    args = parser.parse_args()
    nx, ny, nz, nv = args.size
    if min(args.size) < 1 or nv < 2 or args.coils < 1 or args.noise_volumes < 0:
        sys.exit(f"error: bad --size {args.size}, --coils {args.coils} or --noise-volumes {args.noise_volumes}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    p = dwi_io.paths(args.out)

    fractions, mask, affine, facts = phantom_anatomy.build((nx, ny, nz), args.colin27)
    bvals, bvecs = gradient_table.scheme(nv)
    anatomy_rng, noise_rng, phase_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(args.seed).spawn(3))
    spacing = np.asarray(facts["spacing_mm"])
    v1, v2, w2, s0_mod = phantom_signal.fibre_field(anatomy_rng, (nx, ny, nz), spacing)
    clean = phantom_signal.signal(fractions, v1, v2, w2, s0_mod, bvals, bvecs, args.s0_csf)
    wm = (fractions[2] > 0.9) & mask
    wm_b0 = float(np.median(clean[wm][:, bvals == 0]))
    sigma = wm_b0 / args.wm_b0_snr if args.wm_b0_snr else args.noise * args.s0_csf
    phase = phantom_phase.volume_phases((nx, ny, nz), nv, phase_rng)
    truth_complex = clean * np.exp(1j * phase).astype(np.complex64)

    k = args.noise_volumes
    shape = (nx, ny, nz, nv + k)
    if args.gfactor is not None and not (args.gfactor >= 1.0 and np.isfinite(args.gfactor)):
        sys.exit(f"error: --gfactor must be >= 1, got {args.gfactor}")
    x, y, _ = phantom_phase.coordinates((nx, ny, nz))
    gmap = (1.0 + (args.gfactor - 1.0) * np.minimum(1.0, x * x + y * y) if args.gfactor else np.ones((nx, ny, nz))
            ).astype(np.float32)
    gnoise = gmap[..., None]  # the noise's sigma is sigma g in every volume
    if args.coils == 1:
        noisy = np.zeros(shape, np.complex64)
        noisy[..., :nv] = truth_complex
        noisy += sigma * gnoise * (noise_rng.standard_normal(shape, np.float32)
                                   + 1j * noise_rng.standard_normal(shape, np.float32))
        magnitude = np.abs(noisy).astype(np.float32)
    else:
        coils = coil_sensitivities((nx, ny, nz), args.coils, phase_rng)
        power = np.zeros(shape, np.float32)
        for c in coils:
            image = np.zeros(shape, np.complex64)
            image[..., :nv] = truth_complex * c[..., None]
            image += sigma * gnoise * (noise_rng.standard_normal(shape, np.float32)
                                       + 1j * noise_rng.standard_normal(shape, np.float32))
            power += np.abs(image) ** 2
        magnitude = np.sqrt(power)
        noisy = None

    prefix = args.out
    dwi_io.save_nifti(f"{prefix}_mag.nii.gz", magnitude, affine)
    dwi_io.save_nifti(f"{prefix}_truth_mag.nii.gz", clean, affine)
    dwi_io.save_nifti(f"{prefix}_mask.nii.gz", mask.astype(np.uint8), affine)
    if noisy is not None:
        dwi_io.save_nifti(f"{prefix}_phase.nii.gz", np.angle(noisy).astype(np.float32), affine)
        dwi_io.save_nifti(f"{prefix}_complex.nii.gz", noisy, affine)
        dwi_io.save_nifti(f"{prefix}_real.nii.gz", noisy.real.astype(np.float32), affine)
        dwi_io.save_nifti(f"{prefix}_imag.nii.gz", noisy.imag.astype(np.float32), affine)
        dwi_io.save_nifti(f"{prefix}_truth_complex.nii.gz", truth_complex.astype(np.complex64), affine)
        dwi_io.save_nifti(f"{prefix}_truth_phase.nii.gz", np.angle(truth_complex).astype(np.float32), affine)
    if args.gfactor:
        dwi_io.save_nifti(f"{prefix}_gfactor.nii.gz", gmap, affine)
    make_dwi_phantom.write_gradients(p, bvals, bvecs, affine)

    truth = {
        "sigma": sigma,
        "noise": ("complex Gaussian, sigma per channel" if args.coils == 1 else
                  f"root-sum-of-squares of {args.coils} coils, complex Gaussian sigma per channel per coil"),
        "size": [nx, ny, nz, nv], "noise_volumes": k, "gfactor_max": args.gfactor, "coils": args.coils, "seed": args.seed,
        "s0_csf": args.s0_csf, **facts,
        "wm_b0_signal_median": round(wm_b0, 3),
        "wm_b0_snr_median": round(wm_b0 / sigma, 2),
        "wm_dw_snr_median": round(float(np.median(clean[wm][:, bvals > 0]) / sigma), 2),
        "psnr_noisy_magnitude_in_mask_db": round(dwi_io.psnr(magnitude[..., :nv], clean, mask), 3),
        "phase_model": phantom_phase.__doc__.split("\n\n")[1].strip().splitlines()[0],
        "sha256_mag": hashlib.sha256(magnitude.tobytes()).hexdigest(),
        "numpy": np.__version__,
    }
    with open(f"{prefix}_truth.json", "w") as f:
        json.dump(truth, f, indent=1)
    print(json.dumps({key: truth[key] for key in ("size", "noise_volumes", "coils", "sigma", "wm_b0_snr_median",
                                                  "wm_dw_snr_median", "psnr_noisy_magnitude_in_mask_db")}))


if __name__ == "__main__":
    main()
