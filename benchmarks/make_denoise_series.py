#!/usr/bin/env python3
"""Writes a synthetic diffusion-like 4D series for the local denoiser's benchmarks, as raw little-endian float32 in
ITK's 4D order (x fastest, then y, z, volume), with its noise-free signal alongside when asked.

The head is an ellipsoid of three compartments whose fractions vary smoothly in space: free water (isotropic,
D = 3.0e-3 mm^2/s), grey matter (isotropic, 0.8e-3) and white matter along three fixed fibre directions
(D_par = 1.7e-3, D_perp = 0.3e-3), so that every patch's Casorati matrix has a handful of signal components.
5 b=0 volumes, then b=1000 and b=2000 shells along random directions (65 volumes for the default size). S0 = 1000
inside, 0 outside; Gaussian noise of sigma (default 20: SNR 50 at b=0) everywhere, as in magnitude data far above
the noise floor; with --magnitude, the magnitude of complex Gaussian noise instead (Rician, non-negative, so that
the tools' automatic magnitude model applies). Deterministic for a given --seed. An OUT ending in .nii.gz gets the
series as NIfTI (float32, or int16 with --int16) in one gzip member at zlib level 6, as scanners, dcm2niix and
`gzip -6` write it. Usage:
    make_denoise_series.py OUT.f32 [--size 96 96 60 65] [--sigma 20] [--seed 1] [--magnitude] [--clean CLEAN.f32]
    make_denoise_series.py OUT.nii.gz [--int16] [same options]
"""
import argparse
import gzip

import numpy as np


def series(nx, ny, nz, nv, sigma, seed, magnitude=False):
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(np.linspace(-1, 1, nz), np.linspace(-1, 1, ny), np.linspace(-1, 1, nx), indexing="ij")
    head = (x / 0.85) ** 2 + (y / 0.95) ** 2 + (z / 0.9) ** 2 < 1.0

    b0 = min(5, nv)
    shells = nv - b0
    bvalues = np.concatenate([np.zeros(b0), np.full(shells - shells // 2, 1000.0), np.full(shells // 2, 2000.0)])
    directions = rng.normal(size=(nv, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)

    # Smooth compartment fractions (positive, summing to 1).
    def smooth(a, b, c, phase):
        return 1.2 + np.sin(a * x + phase) * np.cos(b * y + 2 * phase) * np.cos(c * z + 3 * phase)

    weights = np.stack([smooth(2.0, 1.5, 1.0, 0.3), smooth(1.3, 2.2, 1.7, 1.1),
                        smooth(2.7, 1.1, 2.1, 2.0), smooth(1.7, 2.9, 1.3, 2.9), smooth(3.1, 1.9, 2.5, 0.7)])
    weights /= weights.sum(axis=0, keepdims=True)

    fibres = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, 0.3, 0.9]])
    fibres /= np.linalg.norm(fibres, axis=1, keepdims=True)
    profiles = [np.exp(-bvalues * 3.0e-3), np.exp(-bvalues * 0.8e-3)]
    for f in fibres:
        cosine = directions @ f
        profiles.append(np.exp(-bvalues * (0.3e-3 + 1.4e-3 * cosine**2)))
    profiles = np.stack(profiles)  # (5, nv)

    signal = np.einsum("cv,czyx->vzyx", profiles, weights * (1000.0 * head)).astype(np.float32)
    def noise():  # float32 draws: a 176x176x120x200 series is 743 M of them
        return np.float32(sigma) * rng.standard_normal(signal.shape, dtype=np.float32)

    noisy = np.hypot(signal + noise(), noise()) if magnitude else signal + noise()
    return noisy, signal


def write_nifti_gz(path, noisy, int16):
    import nibabel as nib

    data = noisy.transpose()  # (x, y, z, volume)
    data = np.clip(np.rint(data), -32768, 32767).astype(np.int16) if int16 else data
    with open(path, "wb") as f:
        f.write(gzip.compress(nib.Nifti1Image(data, np.eye(4)).to_bytes(), compresslevel=6))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--size", type=int, nargs=4, default=[96, 96, 60, 65], metavar=("NX", "NY", "NZ", "NV"))
    parser.add_argument("--sigma", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--magnitude", action="store_true")
    parser.add_argument("--clean")
    parser.add_argument("--int16", action="store_true")
    args = parser.parse_args()
    noisy, clean = series(*args.size, args.sigma, args.seed, args.magnitude)
    if args.output.endswith(".nii.gz"):
        write_nifti_gz(args.output, noisy, args.int16)
    else:
        noisy.tofile(args.output)
    if args.clean:
        clean.tofile(args.clean)


if __name__ == "__main__":
    main()
