#!/usr/bin/env python3
"""What both tools write beside and into a NIfTI output, checked with nibabel (an independent NIfTI reader):

- the header keeps the input's sform/qform codes, descrip and time unit (ITK 5.2's writer drops them);
- the output is float32 by default, the input's type under --output-type same;
- a JSON sidecar names the tool, version, parameters, rank summary and the input's SHA-256.

Usage: nifti-provenance-check.py RECONSTRUCT_TOOL DENOISE_TOOL COLIN27_NII SCRATCH_DIR
Exits 77 (CTest's skip code) when nibabel is not installed.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

try:
    import nibabel as nib
    import numpy as np
except ImportError as error:
    print(f"skipped: {error} (pip install nibabel)")
    sys.exit(77)

reconstruct, denoise, colin27, scratch = sys.argv[1:5]
shutil.rmtree(scratch, ignore_errors=True)  # a fresh folder: what is checked was written by this run
os.makedirs(scratch)
failures = []


def check(condition, what):
    print(("ok:     " if condition else "FAILED: ") + what)
    if not condition:
        failures.append(what)


def sha256(path):
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def header_fields(path):
    header = nib.load(path).header
    return (int(header["sform_code"]), int(header["qform_code"]), bytes(header["descrip"]).rstrip(b"\0"),
            header.get_xyzt_units()[1])


def run(*command):
    result = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
    print("$", " ".join(command), "->", result.returncode)
    if result.returncode != 0:
        print(result.stdout, result.stderr)
    return result


# 1. Colin27 (uint8, sform_code 4 = MNI, qform_code 0, descrip "spm - algebra"), the tool's defaults.
out = os.path.join(scratch, "ch2_svd.nii.gz")
result = run(reconstruct, "--backend", "cpu", "--no-figure", colin27, out)
check(result.returncode == 0, "SVDLowRankReconstructImage on Colin27 succeeds")
check(header_fields(out) == header_fields(colin27),
      f"header fields kept: {header_fields(out)} == {header_fields(colin27)}")
check(nib.load(out).get_data_dtype() == np.float32, f"float32 by default, got {nib.load(out).get_data_dtype()}")
np.testing.assert_allclose(nib.load(out).affine, nib.load(colin27).affine, atol=1e-4)
sidecar = json.load(open(os.path.join(scratch, "ch2_svd.json")))
check(sidecar["tool"] == "SVDLowRankReconstructImage", "sidecar names the tool")
check(sidecar["inputs"][0]["sha256"] == sha256(colin27), "sidecar holds the input's SHA-256")
check(sidecar["parameters"]["rank"] == 20 and sidecar["rank"]["median"] == 20, "the default rank, 20, is recorded")
check(sidecar["gitDescribe"] != "" and sidecar["version"] != "", "version and git describe are recorded")

same = os.path.join(scratch, "ch2_same.nii")
result = run(reconstruct, "--backend", "cpu", "--no-figure", "--output-type", "same", "--quiet", colin27, same)
check(result.returncode == 0 and result.stdout == "", "--quiet prints nothing on success")
check(nib.load(same).get_data_dtype() == np.uint8, "--output-type same writes the input's uint8")
check(header_fields(same) == header_fields(colin27), "header fields kept in an uncompressed .nii too")

# 2. A 4D int16 series with a time unit (seconds), an MNI sform and a description, through the denoiser.
seed = int.from_bytes(os.urandom(4), "little")
print(f"seed {seed}")
rng = np.random.default_rng(seed)
image = nib.Nifti1Image((rng.normal(500, 20, (10, 9, 8, 7))).astype(np.int16), np.diag([2.0, 2.0, 2.5, 1.0]))
image.header.set_xyzt_units("mm", "sec")
image.header["descrip"] = b"a test series"
image.set_sform(image.affine, code=4)
image.set_qform(image.affine, code=2)
series = os.path.join(scratch, "series.nii.gz")
nib.save(image, series)
denoised = os.path.join(scratch, "denoised.nii.gz")
result = run(denoise, "--backend", "cpu", "--json", series, denoised, "-noise", "sigma.nii.gz")
check(result.returncode == 0, "SVDLowRankDenoiseSeries succeeds")
check(header_fields(denoised) == header_fields(series),
      f"4D header fields kept: {header_fields(denoised)} == {header_fields(series)}")
check(header_fields(os.path.join(scratch, "sigma.nii.gz"))[:3] == header_fields(series)[:3], "the noise map too")
check(nib.load(denoised).get_data_dtype() == np.float32, "float32 by default")
document = json.loads(result.stdout)
check(document == json.load(open(os.path.join(scratch, "denoised.json"))), "--json prints the sidecar's document")
check(document["inputs"][0]["sha256"] == sha256(series), "the series' SHA-256")
check(document["sigma"] is not None and document["sigma"]["min"] > 0, "the sigma summary")

if failures:
    print(f"{len(failures)} checks failed")
    sys.exit(1)
print("all checks passed")
