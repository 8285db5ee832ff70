# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The checks that .ci/test-wheel-install.sh runs inside the minimal Debian root, with the venv's Python.

    wheel-install-checks.py installed REPORT.json NAME...   pip installed exactly these distributions
    wheel-install-checks.py import-time [RUNS]               fresh-process import of the package: wall and -X importtime
    wheel-install-checks.py dataset DIR                      a tiny raw BIDS dataset (python/tests/bids_dataset.py)
    wheel-install-checks.py phantom NOISY MASK               a 96x96x60x65 low-rank phantom with noise, and its mask
    wheel-install-checks.py long-series NOISY                a 16x16x12x340 low-rank series with noise: patches of 340
                                                             volumes, where the CPU calls BLAS and LAPACK (dsytrd)
    wheel-install-checks.py nipype IN OUT                    the Nipype interface DenoiseSeries on IN, its output to OUT
    wheel-install-checks.py compare GOT WANT                 |GOT - WANT| <= 1e-6 x WANT's range, voxel by voxel
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

TOLERANCE = 1e-6  # of the reference image's range (max - min), on every voxel
PACKAGE = "itk_svdlowrankreconstruction"


def installed(report_path: str, *expected: str) -> int:
    report = json.loads(Path(report_path).read_text())
    names = sorted(item["metadata"]["name"].lower() for item in report["install"])
    print("pip installed: " + ", ".join(f"{i['metadata']['name']} {i['metadata']['version']}"
                                        for i in report["install"]))
    if names != sorted(n.lower() for n in expected):
        print(f"FAIL: expected exactly {sorted(expected)}", file=sys.stderr)
        return 1
    return 0


def import_time(runs: str = "5") -> int:
    walls = []
    for _ in range(int(runs)):
        code = ("import time; t = time.perf_counter(); import " + PACKAGE +
                "; print(time.perf_counter() - t)")
        walls.append(float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                          text=True).stdout))
    # -X importtime's last line is the package itself: its cumulative time, its submodules and numpy included.
    trace = subprocess.run([sys.executable, "-X", "importtime", "-c", "import " + PACKAGE], check=True,
                           capture_output=True, text=True).stderr.splitlines()
    cumulative_us = int(trace[-1].split("|")[1])
    # What the import mapped: a CPU-only process must not load the CUDA libraries.
    maps = subprocess.run([sys.executable, "-c", f"import {PACKAGE}; print(open('/proc/self/maps').read())"],
                          check=True, capture_output=True, text=True).stdout
    cuda = sorted({line.split()[-1] for line in maps.splitlines()
                   if any(lib in line for lib in ("libcuda", "libcublas", "libcusolver", "libcudart"))})
    print(f"import {PACKAGE}: median {statistics.median(walls):.3f} s wall over {len(walls)} fresh processes "
          f"(min {min(walls):.3f}, max {max(walls):.3f}); -X importtime cumulative {cumulative_us / 1e6:.3f} s")
    print("CUDA libraries mapped after the import: " + (", ".join(cuda) if cuda else "none"))
    return 0


def dataset(directory: str) -> int:
    import numpy as np

    from bids_dataset import make_raw_dataset

    root = Path(directory)
    make_raw_dataset(root, np.random.default_rng(35))
    # The dataset's deliberately broken run (a .nii.gz cut short) is for the App's failure tests, not this one.
    for broken in root.rglob("sub-02_run-2_dwi.*"):
        broken.unlink()
    print(f"dataset: {sum(1 for _ in root.rglob('*_dwi.nii.gz'))} dwi runs under {root}")
    return 0


def phantom(noisy_path: str, mask_path: str) -> int:
    import nibabel
    import numpy as np

    from bids_dataset import AFFINE, low_rank_signal

    shape = (96, 96, 60, 65)
    rng = np.random.default_rng(96)
    signal = 10.0 * low_rank_signal(rng, shape, rank=6).astype(np.float32)
    noisy = signal + rng.normal(0.0, 20.0, shape).astype(np.float32)
    nibabel.save(nibabel.Nifti1Image(noisy, AFFINE), noisy_path)
    x, y, z = np.meshgrid(*(np.linspace(-1.0, 1.0, n) for n in shape[:3]), indexing="ij")
    mask = (x ** 2 + y ** 2 + z ** 2 < 0.9).astype(np.uint8)
    nibabel.save(nibabel.Nifti1Image(mask, AFFINE), mask_path)
    return 0


def long_series(noisy_path: str) -> int:
    import nibabel
    import numpy as np

    from bids_dataset import AFFINE, low_rank_signal

    shape = (16, 16, 12, 340)  # the default patch, 7x7x7, holds 343 voxels: Gram matrices of order 340
    rng = np.random.default_rng(340)
    noisy = 10.0 * low_rank_signal(rng, shape, rank=4) + rng.normal(0.0, 20.0, shape)
    nibabel.save(nibabel.Nifti1Image(noisy.astype(np.float32), AFFINE), noisy_path)
    return 0


def nipype(in_file: str, out_file: str) -> int:
    from itk_svdlowrankreconstruction.interfaces import DenoiseSeries

    work = Path(out_file).parent / "nipype-work"
    work.mkdir(parents=True, exist_ok=True)
    result = DenoiseSeries(in_file=in_file, backend="cpu").run(cwd=str(work))
    shutil.copyfile(result.outputs.out_file, out_file)
    print(f"nipype: {Path(result.outputs.out_file).name}, sigma median {result.outputs.sigma_median:.4g}")
    return 0


def compare(got_path: str, want_path: str) -> int:
    import nibabel
    import numpy as np

    got = np.asarray(nibabel.load(got_path).dataobj, dtype=np.float64)
    want = np.asarray(nibabel.load(want_path).dataobj, dtype=np.float64)
    if got.shape != want.shape:
        print(f"FAIL {got_path}: shape {got.shape}, the tool's {want.shape}", file=sys.stderr)
        return 1
    span = float(want.max() - want.min()) or 1.0
    worst = float(np.max(np.abs(got - want))) / span
    verdict = "ok" if worst <= TOLERANCE else "FAIL"
    print(f"{verdict} {Path(got_path).name}: max |wheel - tool| / tool's range = {worst:.2e} "
          f"(range {span:.6g}, limit {TOLERANCE:g})")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    commands = {"installed": installed, "import-time": import_time, "dataset": dataset, "phantom": phantom,
                "long-series": long_series, "nipype": nipype, "compare": compare}
    sys.exit(commands[sys.argv[1]](*sys.argv[2:]))
