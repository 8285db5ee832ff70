#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Runs one Python peer (DIPY's mppca or patch-denoise's MP-PCA) on a phantom, in a process of its own.

run_peers.py starts it with one BLAS thread set in the environment (it only acts before numpy is imported) and
times the whole process; this script also times its own parts: loading, denoising, saving. Prints one JSON line.
Both peers use 5x5x5 patches centred on (or sliding over) every voxel, overlapping patches recombined by their own
rule, and the brain mask unless --no-mask.
"""
import argparse
import json
import os
import time

import numpy as np

import dwi_io


def run_dipy(data, mask):
    from dipy.denoise.localpca import mppca
    denoised, sigma = mppca(data, mask=mask, patch_radius=2, pca_method="eig", return_sigma=True)
    return denoised, sigma, None


def run_patch_denoise(data, mask):
    from patch_denoise.space_time.lowrank import MPPCADenoiser
    # Patches of 5x5x5 voxels slide by one voxel (overlap 4), as DIPY's and ours do; "weighted" recombination is
    # the package's default (weights 1 / (2 + rank), after Manjon et al. 2013). mask_threshold=0: every patch that
    # holds at least one brain voxel is processed, so every brain voxel is denoised. Its noise and rank maps are
    # left unfilled by version 1.4.4 (the code that fills them is commented out), so it reports none.
    denoiser = MPPCADenoiser((5, 5, 5), (4, 4, 4), threshold_scale=1.0, recombination="weighted")
    denoised, _, _, _ = denoiser.denoise(data, mask=mask, mask_threshold=0, progbar=False)
    return denoised, None, None


PEERS = {"dipy": run_dipy, "patch-denoise": run_patch_denoise}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peer", choices=sorted(PEERS))
    parser.add_argument("--data", required=True, help="phantom path prefix")
    parser.add_argument("--out", required=True, help="output path prefix, e.g. results/dipy")
    parser.add_argument("--no-mask", action="store_true")
    args = parser.parse_args()
    p = dwi_io.paths(args.data)
    t0 = time.perf_counter()
    data, affine = dwi_io.load_nifti(p["noisy"])
    mask = None if args.no_mask else dwi_io.load_nifti(p["mask"], np.uint8)[0] > 0
    t1, c1 = time.perf_counter(), time.process_time()
    denoised, sigma, rank = PEERS[args.peer](data, mask)
    t2, c2 = time.perf_counter(), time.process_time()
    dwi_io.save_nifti(f"{args.out}_denoised.nii", denoised.astype(np.float32), affine)
    if sigma is not None:
        dwi_io.save_nifti(f"{args.out}_sigma.nii", sigma.astype(np.float32), affine)
    t3 = time.perf_counter()
    version = __import__({"dipy": "dipy", "patch-denoise": "patch_denoise"}[args.peer]).__version__
    print(json.dumps({"peer": args.peer, "version": version, "load_s": t1 - t0, "denoise_s": t2 - t1,
                      "denoise_cpu_s": c2 - c1, "save_s": t3 - t2, "noise_map": sigma is not None,
                      "rank_map": rank is not None,
                      "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}))


if __name__ == "__main__":
    main()
