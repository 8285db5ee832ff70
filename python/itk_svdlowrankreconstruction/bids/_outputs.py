# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Where a run's derivatives go, what their sidecars say, and the dataset-level files (docs/bids.md).

For a run ``sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_dwi.nii.gz`` the App writes, under OUTPUT_DIR::

    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.nii.gz   the denoised series (float32)
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.json     its sidecar (written last: see below)
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.bval     copies of the run's gradient table
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_desc-denoised_dwi.bvec
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_stat-noise_dwimap.nii.gz   sigma of each voxel's patch (3D, float32)
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_stat-noise_dwimap.json     what the map is, its units, its sources
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_stat-rank_dwimap.nii.gz    the rank each voxel's patch kept (3D, uint16)
    sub-01/ses-1/dwi/sub-01_ses-1_acq-b1000_stat-rank_dwimap.json
    sub-01/figures/sub-01_ses-1_acq-b1000_desc-denoising_dwi.png       the reportlet

The maps are statistic maps of the run, named as QSIPrep and XCP-D name theirs (``stat-<label>_dwimap``,
``stat-<label>_boldmap``), so that nothing that looks for ``suffix=dwi`` or ``suffix=bold`` takes a 3D map for a
series. The denoised series' sidecar is written after every other file of the run, so a run is complete exactly when the
series and its sidecar both exist: a re-run skips those runs and redoes the others from the start."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from .. import _engine
from .._batch import _remove_quietly, _temporary_for
from ._layout import Run

#: The BIDS version the derivatives follow.
BIDS_VERSION = "1.9.0"
#: The "desc" labels of the outputs.
DESC_DENOISED, DESC_REPORT = "denoised", "denoising"
#: The maps' "stat" labels, descriptions and units: the extension's (svdlr/OutputMaps.h), which the tool's sidecars
#: take too.
NOISE_MAP, RANK_MAP = _engine.OUTPUT_MAPS["noise"], _engine.OUTPUT_MAPS["rank"]
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

    def statistic_map(label: str) -> str:  # a 3D map of the run: not a series of its suffix
        return os.path.join(folder, f"{run.stem}_stat-{label}_{run.suffix}map.nii.gz")

    return RunOutputs(denoised=named(DESC_DENOISED, ".nii.gz"), sidecar=named(DESC_DENOISED, ".json"),
                      bval=named(DESC_DENOISED, ".bval"), bvec=named(DESC_DENOISED, ".bvec"),
                      noise=statistic_map(NOISE_MAP["label"]), rank=statistic_map(RANK_MAP["label"]),
                      figure=named(DESC_REPORT, ".png", figures))


def is_complete(outputs: RunOutputs) -> bool:
    """Whether an earlier run wrote this run's outputs to the end (its sidecar comes last)."""
    return os.path.isfile(outputs.sidecar) and os.path.isfile(outputs.denoised)


def _write_atomically(path: str, write: Any) -> None:
    """``write(temporary)`` into a hidden name beside ``path``, then renamed over it."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    temporary = _temporary_for(path)
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        _remove_quietly(temporary)


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


def map_sidecar(run: Run, output_map: Dict[str, str], parameters: Dict[str, Any], sources: Sequence[str],
                version: str) -> Dict[str, Any]:
    """A map's sidecar: what the map is and its units (svdlr/OutputMaps.h, the tool's too: the noise map in the
    series' own "Units" where its sidecar gives them), the raw series it came from, and how the run made it."""
    units = output_map["units"]
    if output_map is NOISE_MAP and isinstance(run.metadata.get("Units"), str):
        units = run.metadata["Units"]
    return {"Description": output_map["description"], "Units": units, "Sources": list(sources),
            "SoftwareName": APP_NAME, "SoftwareVersion": version, "DenoisingParameters": parameters}


def output_dir_problem(bids_dir: str, output_dir: str) -> Optional[str]:
    """Why ``output_dir`` cannot take the derivatives of ``bids_dir``, or None. Compared once symbolic links and
    ".." are resolved:

    * the raw dataset itself, or a folder inside it other than its ``derivatives/<pipeline>/`` (where BIDS keeps a
      dataset's derivatives, and which the App's search never enters): the derivatives and logs/ would land among
      the raw runs, and a re-run would take the denoised series for raw ones;
    * a folder whose ``sub-<label>/`` or ``logs/`` holds the raw dataset: the App would write into it.

    A raw dataset elsewhere inside the derivative dataset (``sourcedata/``, as YODA nests it) is left alone."""
    raw, out = Path(bids_dir).resolve(), Path(output_dir).resolve()
    if out == raw or raw in out.parents:
        below = out.relative_to(raw).parts
        if len(below) < 2 or below[0] != "derivatives":
            where = "is BIDS_DIR" if out == raw else "is inside BIDS_DIR"
            return (f"OUTPUT_DIR '{output_dir}' {where} '{bids_dir}' ({out}): the derivatives would be written into "
                    f"the raw dataset; give a folder outside it, or {raw / 'derivatives' / APP_NAME}")
    elif out in raw.parents:
        first = raw.relative_to(out).parts[0]
        if first.startswith("sub-") or first == "logs":
            return (f"BIDS_DIR '{bids_dir}' is inside OUTPUT_DIR '{output_dir}' ({raw}), where the derivatives "
                    f"go ('{first}'): give an OUTPUT_DIR that does not hold the raw dataset there")
    return None


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
