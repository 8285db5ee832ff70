# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Where a run's derivatives go, what their sidecars say, and the dataset-level files (docs/bids.md).

For a run ``sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_dwi.nii.gz`` the App writes, under OUTPUT_DIR::

    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.nii.gz   the denoised series (float32)
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.json     its sidecar (written last: see below)
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.bval     copies of the run's gradient table
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.bvec
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-noise_dwi.nii.gz      sigma of each voxel's patch (3D, float32)
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-rank_dwi.nii.gz       the rank each voxel's patch kept (3D, uint16)
    sub-01/figures/sub-01_ses-1_acq-b1000_desc-denoising_dwi.png       the reportlet

The denoised series' sidecar is written after every other file of the run, so a run is complete exactly when the
series and its sidecar both exist: a re-run skips those runs and redoes the others from the start."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

from ._layout import Run

#: The BIDS version the derivatives follow.
BIDS_VERSION = "1.9.0"
#: The "desc" labels of the outputs.
DESC_DENOISED, DESC_NOISE, DESC_RANK, DESC_REPORT = "denoised", "noise", "rank", "denoising"
#: The name the App's GeneratedBy entry and the sidecars give it.
APP_NAME = "svdlr-bids"


@dataclass(frozen=True)
class RunOutputs:
    """Every path a run writes."""

    denoised: str
    sidecar: str
    bval: str
    bvec: str
    noise: str
    rank: str
    figure: str


def outputs_for(run: Run, output_dir: str) -> RunOutputs:
    folder = os.path.join(output_dir, *run.relative.split("/")[:-1])
    figures = os.path.join(output_dir, f"sub-{run.subject}", "figures")

    def named(desc: str, extension: str, where: str = folder) -> str:
        return os.path.join(where, f"{run.stem}_desc-{desc}_{run.suffix}{extension}")

    return RunOutputs(denoised=named(DESC_DENOISED, ".nii.gz"), sidecar=named(DESC_DENOISED, ".json"),
                      bval=named(DESC_DENOISED, ".bval"), bvec=named(DESC_DENOISED, ".bvec"),
                      noise=named(DESC_NOISE, ".nii.gz"), rank=named(DESC_RANK, ".nii.gz"),
                      figure=named(DESC_REPORT, ".png", figures))


def is_complete(outputs: RunOutputs) -> bool:
    """Whether an earlier run wrote this run's outputs to the end (its sidecar comes last)."""
    return os.path.isfile(outputs.sidecar) and os.path.isfile(outputs.denoised)


def _write_atomically(path: str, write: Any) -> None:
    """``write(temporary)`` into a hidden name beside ``path``, then renamed over it."""
    folder, name = os.path.split(path)
    os.makedirs(folder or ".", exist_ok=True)
    temporary = os.path.join(folder, f".{name}.partial-{os.getpid()}-{time.monotonic_ns()}")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def write_text_atomically(text: str, path: str) -> None:
    def write(temporary: str) -> None:
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)

    _write_atomically(path, write)


def write_json_atomically(document: Dict[str, Any], path: str) -> None:
    write_text_atomically(json.dumps(document, indent=2, allow_nan=False) + "\n", path)


def copy_atomically(source: str, target: str) -> None:
    _write_atomically(target, lambda temporary: shutil.copyfile(source, temporary))


def raw_uri(run: Run) -> str:
    """The run's raw file as a BIDS URI (the "raw" dataset of dataset_description's DatasetLinks)."""
    return f"bids:raw:{run.relative}"


def _finite_or_none(summary: Dict[str, float]) -> Dict[str, Optional[float]]:
    return {key: (value if value == value and abs(value) != float("inf") else None) for key, value in summary.items()}


def series_sidecar(run: Run, parameters: Dict[str, Any], rank: Dict[str, float], sigma: Dict[str, float],
                   seconds: float, version: str) -> Dict[str, Any]:
    """The denoised series' sidecar: the raw sidecar's fields, then where it came from and how it was made."""
    sidecar = dict(run.metadata)
    sidecar.update({
        "Description": "Denoised by local low-rank approximation of patches (MP-PCA by default) with "
                       "SVDLowRankReconstruction",
        "Sources": [raw_uri(run)],
        "SoftwareName": APP_NAME,
        "SoftwareVersion": version,
        "DenoisingParameters": parameters,
        "NoiseSigma": _finite_or_none(sigma),
        "RankKept": _finite_or_none(rank),
        "DenoisingSeconds": round(seconds, 3),
    })
    return sidecar


def map_sidecar(run: Run, description: str, units: str, version: str) -> Dict[str, Any]:
    return {"Description": description, "Units": units, "Sources": [raw_uri(run)], "SoftwareName": APP_NAME,
            "SoftwareVersion": version}


def map_sidecar_path(map_path: str) -> str:
    return map_path[: -len(".nii.gz")] + ".json"


def dataset_description(bids_dir: str, version: str) -> Dict[str, Any]:
    raw = Path(bids_dir).resolve().as_uri()
    return {
        "Name": "SVDLowRankReconstruction: denoised series",
        "BIDSVersion": BIDS_VERSION,
        "DatasetType": "derivative",
        "GeneratedBy": [{
            "Name": APP_NAME,
            "Version": version,
            "Description": "Local low-rank (MP-PCA) denoising of diffusion and functional series, from the "
                           "svdlowrankreconstruction Python package (ITK remote module SVDLowRankReconstruction)",
        }],
        "SourceDatasets": [{"URL": raw}],
        "DatasetLinks": {"raw": raw},
    }
