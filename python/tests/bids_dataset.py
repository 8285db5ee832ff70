# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""A tiny raw BIDS dataset with known answers, for the BIDS App's tests.

Each series is a rank-3 signal (smooth spatial maps times smooth volume profiles) plus Gaussian noise of a known
sigma, so that a test can check the estimated sigma and that denoising brought the series closer to the signal."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Dict

import numpy as np

SHAPE = (12, 12, 8, 12)  # x, y, z, volumes
SIGMA = 1.0
BVALS = [0, 1000, 1000, 1000, 1000, 1000, 0, 2000, 2000, 2000, 2000, 2000]
AFFINE = np.array([[-2.0, 0, 0, 11.0], [0, 2.0, 0, -13.0], [0, 0, 2.5, -7.0], [0, 0, 0, 1.0]])


def low_rank_signal(rng: np.random.Generator, shape=SHAPE, rank: int = 3) -> np.ndarray:
    x, y, z = np.meshgrid(*(np.linspace(-1.0, 1.0, n) for n in shape[:3]), indexing="ij")
    maps = [np.exp(-(x - c) ** 2 - (y + c) ** 2 - z ** 2) for c in np.linspace(-0.5, 0.5, rank)]
    profiles = [1.0 + 0.5 * np.cos(np.linspace(0.0, np.pi * (k + 1), shape[3]) + rng.uniform(0, np.pi))
                for k in range(rank)]
    return 40.0 * sum(m[..., None] * p[None, None, None, :] for m, p in zip(maps, profiles))


def write_nifti(path: Path, data: np.ndarray, dtype=np.float32) -> None:
    import nibabel

    path.parent.mkdir(parents=True, exist_ok=True)
    image = nibabel.Nifti1Image(np.asarray(data, dtype=dtype), AFFINE)
    image.set_sform(AFFINE, 1)
    image.set_qform(AFFINE, 1)
    nibabel.save(image, str(path))


def _write_json(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


def _dwi_run(root: Path, relative: str, rng: np.random.Generator, signals: Dict[str, np.ndarray]) -> None:
    signal = low_rank_signal(rng)
    signals[relative] = signal
    path = root / relative
    write_nifti(path, signal + rng.normal(0.0, SIGMA, signal.shape))
    stem = str(path)[: -len("_dwi.nii.gz")]
    Path(stem + "_dwi.bval").write_text(" ".join(str(b) for b in BVALS) + "\n")
    directions = rng.normal(size=(3, SHAPE[3]))
    directions /= np.linalg.norm(directions, axis=0)
    Path(stem + "_dwi.bvec").write_text("\n".join(" ".join(f"{v:.6f}" for v in row) for row in directions) + "\n")
    _write_json(Path(stem + "_dwi.json"), {"PhaseEncodingDirection": "j-", "TotalReadoutTime": 0.05})


def make_raw_dataset(root: Path, rng: np.random.Generator) -> Dict[str, np.ndarray]:
    """Writes the dataset under ``root``; returns each good series' noiseless signal by its relative path.

    sub-01 has two sessions (a dwi run in each, one with an acq entity, a func bold run and a T1w in ses-1);
    sub-02 has no session, a good dwi run, a broken one (a .nii.gz cut in half) and a T1w. A top-level dwi.json and
    task-rest_bold.json give every run inherited fields."""
    signals: Dict[str, np.ndarray] = {}
    _write_json(root / "dataset_description.json", {"Name": "tiny", "BIDSVersion": "1.9.0", "DatasetType": "raw"})
    _write_json(root / "dwi.json", {"MagneticFieldStrength": 3, "TotalReadoutTime": 0.07})
    _write_json(root / "task-rest_bold.json", {"RepetitionTime": 2.0, "TaskName": "rest"})
    _dwi_run(root, "sub-01/ses-1/dwi/sub-01_ses-1_dwi.nii.gz", rng, signals)
    _dwi_run(root, "sub-01/ses-2/dwi/sub-01_ses-2_acq-short_dwi.nii.gz", rng, signals)
    _dwi_run(root, "sub-02/dwi/sub-02_dwi.nii.gz", rng, signals)
    _dwi_run(root, "sub-02/dwi/sub-02_run-2_dwi.nii.gz", rng, {})
    broken = root / "sub-02/dwi/sub-02_run-2_dwi.nii.gz"
    content = gzip.decompress(broken.read_bytes())
    broken.write_bytes(gzip.compress(content[: len(content) // 2]))
    bold = low_rank_signal(rng)
    signals["sub-01/ses-1/func/sub-01_ses-1_task-rest_bold.nii.gz"] = bold
    write_nifti(root / "sub-01/ses-1/func/sub-01_ses-1_task-rest_bold.nii.gz", bold + rng.normal(0, SIGMA, SHAPE))
    for anat in ("sub-01/ses-1/anat/sub-01_ses-1_T1w.nii.gz", "sub-02/anat/sub-02_T1w.nii.gz"):
        write_nifti(root / anat, rng.uniform(0, 100, SHAPE[:3]))
    return signals


def all_files(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def hidden_files(root: Path) -> list:
    return [name for name in all_files(root) if any(part.startswith(".") for part in Path(name).parts)]


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(a, float) - np.asarray(b, float)) ** 2)))


__all__ = ["AFFINE", "BVALS", "SHAPE", "SIGMA", "all_files", "hidden_files", "low_rank_signal", "make_raw_dataset",
           "rmse", "write_nifti"]
