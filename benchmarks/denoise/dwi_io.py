# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""File names and I/O of one phantom data set, shared by the generator, the peers' runner and the evaluation.

A data set is a path prefix P (for example build/denoise/dwi96): P_noisy.nii, P_clean.nii, P_mask.nii,
P.bval / P.bvec (FSL), P.b (MRtrix), P_truth.json (sigma and the model), and for svdlrDenoiseBenchmark the raw
files P_noisy.f32 (float32) and P_mask.u8 (uint8), little-endian in ITK order: x fastest, then y, z, volume.
Arrays in memory are numpy (x, y, z[, volume]), as nibabel gives them.
"""
import json

import nibabel as nib
import numpy as np


def paths(prefix):
    return {
        "noisy": f"{prefix}_noisy.nii",
        "clean": f"{prefix}_clean.nii",
        "mask": f"{prefix}_mask.nii",
        "fractions": f"{prefix}_fractions.nii",
        "bval": f"{prefix}.bval",
        "bvec": f"{prefix}.bvec",
        "grad": f"{prefix}.b",
        "truth": f"{prefix}_truth.json",
        "noisy_raw": f"{prefix}_noisy.f32",
        "mask_raw": f"{prefix}_mask.u8",
    }


def save_nifti(path, array, affine):
    image = nib.Nifti1Image(np.asarray(array), affine)
    image.header.set_xyzt_units("mm", "sec")
    nib.save(image, path)


def load_nifti(path, dtype=np.float32):
    image = nib.load(path)
    return np.asarray(image.get_fdata(dtype=np.float32) if dtype == np.float32 else image.dataobj, dtype), image.affine


def write_raw(path, array, dtype):
    """Writes (x, y, z[, v]) with x fastest, little-endian."""
    np.asarray(array, dtype=np.dtype(dtype).newbyteorder("<")).T.tofile(path)


def read_raw(path, shape, dtype):
    """Reads a raw file written x fastest into an array of `shape` (x, y, z[, v])."""
    flat = np.fromfile(path, np.dtype(dtype).newbyteorder("<"))
    expected = int(np.prod(shape))
    if flat.size != expected:
        raise ValueError(f"{path}: {flat.size} values, expected {expected} for shape {tuple(shape)}")
    return flat.reshape(tuple(reversed(shape))).T


def load_truth(prefix):
    with open(paths(prefix)["truth"]) as f:
        return json.load(f)
