#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Writes N Colin27-sized float32 NIfTI volumes with Gaussian noise of varied strength, for the batch pipeline's
benchmark and demo (docs/batch.md). Needs NumPy only (the GPU machine has no ITK and no nibabel): the NIfTI-1
header is Colin27's own, with the data type changed to float32.

    make_batch_volumes.py ch2.nii.gz OUTDIR N [--gzip LEVEL] [--broken K] [--jobs J]

Volume i goes to OUTDIR/vol-XXX.nii[.gz]; --gzip 0 writes .nii.
--broken K adds K files that are not NIfTI at all (the batch must report and skip them)."""
import argparse
import gzip
import os
import struct
from concurrent.futures import ProcessPoolExecutor

import numpy as np

_DTYPES = {2: np.uint8, 4: np.int16, 8: np.int32, 16: np.float32, 64: np.float64, 512: np.uint16}


def read_nifti(path):
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    header = bytearray(raw[:348])
    dims = struct.unpack("<8h", header[40:56])
    datatype = struct.unpack("<h", header[70:72])[0]
    offset = int(struct.unpack("<f", header[108:112])[0])
    slope, inter = struct.unpack("<2f", header[112:120])
    shape = dims[1 : 1 + dims[0]]
    data = np.frombuffer(raw, dtype=_DTYPES[datatype], count=int(np.prod(shape)), offset=offset)
    data = data.astype(np.float32).reshape(shape[::-1])  # NIfTI is x fastest: (z, y, x) in C order
    if slope not in (0.0, 1.0) or inter != 0.0:
        data = data * (slope if slope != 0.0 else 1.0) + inter
    return header, data


def float32_header(header):
    header = bytearray(header)
    header[70:72] = struct.pack("<h", 16)  # datatype FLOAT32
    header[72:74] = struct.pack("<h", 32)  # bitpix
    header[108:112] = struct.pack("<f", 352.0)  # vox_offset
    header[112:120] = struct.pack("<2f", 1.0, 0.0)  # scl_slope, scl_inter
    return bytes(header) + b"\0\0\0\0"  # no extensions


def path_for(out, i, gz):
    return os.path.join(out, f"vol-{i + 1:03d}{'.nii.gz' if gz else '.nii'}")


def write_one(job):
    header, data, path, sigma, seed, level = job
    rng = np.random.default_rng(seed)
    noisy = (data + rng.normal(0.0, sigma, data.shape).astype(np.float32)).astype("<f4")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    payload = header + noisy.tobytes()
    temporary = path + ".part"
    if level > 0:
        with gzip.open(temporary, "wb", compresslevel=level) as f:
            f.write(payload)
    else:
        with open(temporary, "wb") as f:
            f.write(payload)
    os.replace(temporary, path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("template")
    parser.add_argument("out")
    parser.add_argument("count", type=int)
    parser.add_argument("--gzip", type=int, default=6, help="gzip level, 0: uncompressed .nii")
    parser.add_argument("--broken", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()

    header, data = read_nifti(args.template)
    header = float32_header(header)
    scale = float(np.percentile(data, 99))
    # Noise from 1% to 10% of the bright tissue: each volume its own strength and its own draw.
    jobs = [
        (header, data, path_for(args.out, i, args.gzip > 0),
         scale * (0.01 + 0.09 * i / max(1, args.count - 1)), 1000 + i, args.gzip)
        for i in range(args.count)
    ]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        written = list(pool.map(write_one, jobs))
    for k in range(args.broken):
        path = path_for(args.out, args.count + k, args.gzip > 0)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"this is not a NIfTI file\n")
        written.append(path)
    print(f"{len(written)} files in {args.out} ({args.broken} broken), shape {data.shape[::-1]}")


if __name__ == "__main__":
    main()
