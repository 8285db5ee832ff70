# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""File names and I/O of one phantom data set, shared by the generator, the peers' runner and the evaluation, the
default patch side for its volume count, the PSNR every script scores with, and whether there is a GPU.

A data set is a path prefix P (for example build/denoise/dwi96): P_noisy.nii, P_clean.nii, P_mask.nii,
P.bval / P.bvec (FSL), P.b (MRtrix), P_truth.json (sigma and the model), and for svdlrDenoiseBenchmark the raw
files P_noisy.f32 (float32) and P_mask.u8 (uint8), little-endian in ITK order: x fastest, then y, z, volume.
Arrays in memory are numpy (x, y, z[, volume]), as nibabel gives them.
"""
import json
import os
import struct
import subprocess
import zlib
from concurrent.futures import ThreadPoolExecutor

import nibabel as nib
import numpy as np


def default_patch_side(volumes):
    """The side of the default cubic patch for a series of `volumes` volumes, ours and dwidenoise's alike: the
    smallest odd cube holding at least as many voxels as there are volumes (5 for 65, 7 for 200, 9 for 500)."""
    side = 1
    while side ** 3 < volumes:
        side += 2
    return side


def psnr(test, clean, mask, peak=None):
    """PSNR inside the mask; the peak is the largest clean value there unless given."""
    peak = float(clean[mask].max()) if peak is None else peak
    diff = np.asarray(test)[mask].astype(np.float64) - clean[mask]
    return float(10.0 * np.log10(peak * peak / np.mean(diff * diff)))


def gpu_present():
    try:
        return "GPU" in subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except OSError:
        return False


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
    if path.endswith(".gz"):
        gzip_parallel(image.to_bytes(), path)
    else:
        nib.save(image, path)


def gzip_parallel(data, path, level=1, chunk=1 << 22):
    """Writes data as one gzip member, its deflate stream cut into chunks compressed on every core (as pigz does):
    a 3 GB series takes seconds instead of minutes with nibabel's one thread. Level 1, nibabel's own default; the
    result is an ordinary .nii.gz to every reader. Each chunk but the last ends with a sync flush, so the compressed
    pieces join byte-aligned into a single valid stream."""
    view = memoryview(data).cast("B")
    pieces = [view[i:i + chunk] for i in range(0, len(view), chunk)] or [view]

    def deflate(index):
        packer = zlib.compressobj(level, zlib.DEFLATED, -15)
        body = packer.compress(pieces[index])
        return body + packer.flush(zlib.Z_FINISH if index == len(pieces) - 1 else zlib.Z_SYNC_FLUSH)

    with ThreadPoolExecutor(os.cpu_count()) as pool:
        crc = pool.submit(zlib.crc32, view)  # zlib releases the GIL: the checksum runs beside the compression
        bodies = list(pool.map(deflate, range(len(pieces))))
        checksum = crc.result()
    partial = path + ".partial"
    with open(partial, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")  # magic, deflate, no flags, no time, unknown OS
        for body in bodies:
            f.write(body)
        f.write(struct.pack("<II", checksum, len(view) & 0xFFFFFFFF))
    os.replace(partial, path)


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
