# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""denoise_batch: many 4D NIfTI series on the tools' batch pipeline. A broken series is a failed row named by its
path and the others are written; a re-run skips what exists and redoes what is missing; each output equals the
single-series path's (denoise_nifti) bit for bit, on the CPU and on every GPU there is; the BIDS App's denoising
step on the pipeline yields each series' result or error."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from itk_svdlowrankreconstruction import _engine
from itk_svdlowrankreconstruction._denoise_batch import denoise_batch, denoise_on_pipeline
from itk_svdlowrankreconstruction._nifti_series import DenoiseOptions, SeriesResult, denoise_nifti

nibabel = pytest.importorskip("nibabel")

SHAPE = (10, 9, 8, 20)  # x, y, z, volumes: the default patch is then 3 x 3 x 3
AFFINE = np.diag([2.0, 2.0, 2.5, 1.0])


def _series(rng, rank=3, sigma=2.0):
    """A low-rank signal (rank ``rank``) plus Gaussian noise, float32, (x, y, z, volumes)."""
    spatial = rng.normal(size=(int(np.prod(SHAPE[:3])), rank))
    profiles = rng.normal(size=(rank, SHAPE[3])) * 12.0 * sigma
    clean = (spatial @ profiles).reshape(SHAPE)
    return (clean + rng.normal(0.0, sigma, SHAPE)).astype(np.float32)


@pytest.fixture
def study(tmp_path, rng):
    """Three series (the second with a mask) and one broken file, as runs."""
    runs = []
    for n in (1, 2, 3):
        path = tmp_path / f"sub-0{n}" / "dwi" / f"sub-0{n}_dwi.nii.gz"
        path.parent.mkdir(parents=True)
        nibabel.save(nibabel.Nifti1Image(_series(rng), AFFINE), str(path))
        runs.append({"series": str(path)})
    mask = np.zeros(SHAPE[:3], dtype=np.uint8)
    mask[2:8, 2:7, 2:6] = 1
    nibabel.save(nibabel.Nifti1Image(mask, AFFINE), str(tmp_path / "mask.nii.gz"))
    runs[1]["mask"] = str(tmp_path / "mask.nii.gz")
    broken = tmp_path / "sub-04" / "dwi" / "sub-04_dwi.nii.gz"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not a NIfTI file")
    runs.append({"series": str(broken)})
    return tmp_path, runs


def _data(path):
    return np.asanyarray(nibabel.load(path).dataobj)


def _expect_equal_to_single_series(tmp_path, runs, rows, backend, options=None):
    """Each done row's series and maps equal denoise_nifti's on the same device, bit for bit."""
    options = options or DenoiseOptions()
    for run, row in zip(runs[:3], rows):
        assert row["status"] == "done", row
        single = DenoiseOptions(**{**options.__dict__, "backend": backend, "device_id": max(row["device"], 0)})
        reference = str(tmp_path / "reference" / f"{row['index']}_dwi.nii.gz")
        (tmp_path / "reference").mkdir(exist_ok=True)
        denoise_nifti(run["series"], reference, noise_map_path=reference.replace("_dwi", "_sigma"),
                      rank_map_path=reference.replace("_dwi", "_rank"), mask_path=run.get("mask"), options=single)
        np.testing.assert_array_equal(_data(row["output"]), _data(reference))
        np.testing.assert_array_equal(nibabel.load(row["output"]).affine, AFFINE)
        np.testing.assert_array_equal(_data(row["output"].replace("_denoised", "_sigma")),
                                      _data(reference.replace("_dwi", "_sigma")))
        np.testing.assert_array_equal(_data(row["output"].replace("_denoised", "_rank")),
                                      _data(reference.replace("_dwi", "_rank")))


def test_a_broken_series_fails_by_name_and_the_others_equal_the_single_series_path(study):
    tmp_path, runs = study
    finished = []
    options = DenoiseOptions(policy="mp-cg")
    rows, totals = denoise_batch(runs, tmp_path / "out", options=options, backend="cpu", maps=True,
                                 on_run=lambda row, done, total: finished.append((row["status"], total)),
                                 return_totals=True)
    assert [row["status"] for row in rows] == ["done", "done", "done", "failed"]
    assert rows[3]["input"] == runs[3]["series"] and runs[3]["series"] in rows[3]["message"]
    assert (totals["done"], totals["skipped"], totals["failed"]) == (3, 0, 1)
    assert sorted(finished) == sorted((row["status"], 4) for row in rows)
    assert rows[0]["output"] == str(tmp_path / "out" / "sub-01_dwi_denoised.nii.gz")  # the tool's name
    assert rows[1]["rank_min"] >= 1 and rows[1]["sigma_min"] > 0  # inside the mask
    _expect_equal_to_single_series(tmp_path, runs, rows, "cpu", options)
    assert not (tmp_path / "out" / "sub-04_dwi_denoised.nii.gz").exists()
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_re_run_skips_what_exists_and_redoes_what_is_missing(study):
    tmp_path, runs = study
    denoise_batch(runs[:3], tmp_path / "out", backend="cpu")
    stamp = (tmp_path / "out" / "sub-01_dwi_denoised.nii.gz").stat().st_mtime_ns
    (tmp_path / "out" / "sub-03_dwi_denoised.nii.gz").unlink()
    second = denoise_batch(runs[:3], tmp_path / "out", backend="cpu")
    assert [row["status"] for row in second] == ["skipped", "skipped", "done"]
    assert (tmp_path / "out" / "sub-01_dwi_denoised.nii.gz").stat().st_mtime_ns == stamp


def test_runs_that_name_no_output_need_an_output_dir(study):
    _, runs = study
    with pytest.raises(ValueError, match="output_dir"):
        denoise_batch(runs, backend="cpu")


def test_the_bids_apps_denoising_step_on_the_pipeline_yields_each_result_or_error(study):
    tmp_path, runs = study
    jobs = [SimpleNamespace(input=run["series"], denoised=str(tmp_path / f"{n}_denoised.nii.gz"),
                            noise=str(tmp_path / f"{n}_sigma.nii.gz"), rank=str(tmp_path / f"{n}_rank.nii.gz"),
                            report_volume=0 if n == 0 else None)
            for n, run in enumerate([runs[0], runs[2], runs[3]])]
    outcomes = dict(denoise_on_pipeline(backend="cpu")(jobs, DenoiseOptions()))
    assert sorted(outcomes) == [0, 1, 2]
    assert isinstance(outcomes[0], SeriesResult) and outcomes[0].report is not None
    assert isinstance(outcomes[1], SeriesResult) and outcomes[1].report is None
    assert isinstance(outcomes[2], OSError) and runs[3]["series"] in str(outcomes[2])
    reference = denoise_nifti(runs[0]["series"], str(tmp_path / "reference.nii.gz"), options=DenoiseOptions(
        backend="cpu"))
    np.testing.assert_array_equal(_data(jobs[0].denoised), _data(str(tmp_path / "reference.nii.gz")))
    assert outcomes[0].rank == reference.rank


@pytest.mark.parametrize("devices", [[0], [0, 1]])
def test_each_gpu_writes_what_the_single_series_path_writes_on_it(study, devices):
    if _engine.cuda_device_count() < len(devices) or not _engine.cuda_device_usable(0)[0]:
        pytest.skip(f"needs {len(devices)} usable CUDA device(s)")
    tmp_path, runs = study
    rows = denoise_batch(runs, tmp_path / "out", backend="cuda", devices=devices, maps=True)
    assert rows[3]["status"] == "failed"
    assert {row["device"] for row in rows[:3]} <= set(devices)
    _expect_equal_to_single_series(tmp_path, runs, rows, "cuda")
