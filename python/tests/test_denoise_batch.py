# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""denoise_batch: many 4D NIfTI series on the tools' batch pipeline. A broken series is a failed row named by its
path and the others are written; a re-run skips what exists and redoes what is missing; each output equals the
single-series function's on the same array, bit for bit (on the CPU, and on every GPU there is)."""

from __future__ import annotations

import numpy as np
import pytest

from itk_svdlowrankreconstruction import _engine, local_low_rank_denoising_image_filter
from itk_svdlowrankreconstruction._denoise_batch import denoise_batch

nibabel = pytest.importorskip("nibabel")

SHAPE = (10, 9, 8, 20)  # x, y, z, volumes: the default patch is then 3 x 3 x 3


def _series(rng, rank=3, sigma=2.0):
    """A low-rank signal (rank ``rank``) plus Gaussian noise, float32, (x, y, z, volumes)."""
    spatial = rng.normal(size=(int(np.prod(SHAPE[:3])), rank))
    profiles = rng.normal(size=(rank, SHAPE[3])) * 12.0 * sigma
    clean = (spatial @ profiles).reshape(SHAPE)
    return (clean + rng.normal(0.0, sigma, SHAPE)).astype(np.float32)


@pytest.fixture
def study(tmp_path, rng):
    """Three series (one with a mask) and one broken file; the arrays as written."""
    arrays = {}
    runs = []
    for n in (1, 2, 3):
        path = tmp_path / f"sub-0{n}" / "dwi" / f"sub-0{n}_dwi.nii.gz"
        path.parent.mkdir(parents=True)
        arrays[n] = _series(rng)
        nibabel.save(nibabel.Nifti1Image(arrays[n], np.diag([2.0, 2.0, 2.5, 1.0])), str(path))
        runs.append({"series": str(path)})
    mask = np.zeros(SHAPE[:3], dtype=np.uint8)
    mask[2:8, 2:7, 2:6] = 1
    nibabel.save(nibabel.Nifti1Image(mask, np.diag([2.0, 2.0, 2.5, 1.0])), str(tmp_path / "mask.nii.gz"))
    runs[1]["mask"] = str(tmp_path / "mask.nii.gz")
    broken = tmp_path / "sub-04" / "dwi" / "sub-04_dwi.nii.gz"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not a NIfTI file")
    runs.append({"series": str(broken)})
    return tmp_path, runs, arrays, mask


def _expect_equal_to_single_series(rows, arrays, mask, backend, **options):
    for n, row in zip((1, 2, 3), rows):
        assert row["status"] == "done", row
        device = max(row["device"], 0)
        reference, sigma, rank = local_low_rank_denoising_image_filter(
            arrays[n], volume_axis=3, mask=mask if n == 2 else None, backend=backend, device_id=device,
            return_maps=True, **options)
        output = nibabel.load(row["output"])
        np.testing.assert_array_equal(np.asanyarray(output.dataobj), reference)
        np.testing.assert_array_equal(output.affine, np.diag([2.0, 2.0, 2.5, 1.0]))
        np.testing.assert_array_equal(np.asanyarray(nibabel.load(row["output"].replace("_denoised", "_sigma")).dataobj),
                                      sigma)
        np.testing.assert_array_equal(np.asanyarray(nibabel.load(row["output"].replace("_denoised", "_rank")).dataobj),
                                      rank)


def test_a_broken_series_fails_by_name_and_the_others_equal_the_single_series_function(study):
    tmp_path, runs, arrays, mask = study
    finished = []
    rows, totals = denoise_batch(runs, tmp_path / "out", backend="cpu", maps=True, policy="mp-cg",
                                 on_run=lambda row, done, total: finished.append((row["status"], total)),
                                 return_totals=True)
    assert [row["status"] for row in rows] == ["done", "done", "done", "failed"]
    assert rows[3]["input"] == runs[3]["series"] and rows[3]["message"]
    assert (totals["done"], totals["skipped"], totals["failed"]) == (3, 0, 1)
    assert sorted(finished) == sorted((row["status"], 4) for row in rows)
    assert rows[0]["output"] == str(tmp_path / "out" / "sub-01_dwi_denoised.nii.gz")  # the tool's name
    assert rows[1]["rank_min"] >= 1 and rows[1]["sigma_min"] > 0  # inside the mask
    _expect_equal_to_single_series(rows, arrays, mask, "cpu", policy="mp-cg")
    assert not (tmp_path / "out" / "sub-04_dwi_denoised.nii.gz").exists()
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_re_run_skips_what_exists_and_redoes_what_is_missing(study):
    tmp_path, runs, _, _ = study
    first = denoise_batch(runs[:3], tmp_path / "out", backend="cpu")
    kept = first[0]["output"]
    stamp = (tmp_path / "out" / "sub-01_dwi_denoised.nii.gz").stat().st_mtime_ns
    (tmp_path / "out" / "sub-03_dwi_denoised.nii.gz").unlink()
    second = denoise_batch(runs[:3], tmp_path / "out", backend="cpu")
    assert [row["status"] for row in second] == ["skipped", "skipped", "done"]
    assert second[0]["output"] == kept
    assert (tmp_path / "out" / "sub-01_dwi_denoised.nii.gz").stat().st_mtime_ns == stamp


def test_runs_that_name_no_output_need_an_output_dir(study):
    _, runs, _, _ = study
    with pytest.raises(ValueError, match="output_dir"):
        denoise_batch(runs, backend="cpu")
    with pytest.raises(TypeError, match="device_id"):
        denoise_batch(runs, "out", device_id=1)


@pytest.mark.parametrize("devices", [[0], [0, 1]])
def test_each_gpu_writes_what_the_single_series_function_writes_on_it(study, devices):
    if _engine.cuda_device_count() < len(devices) or not _engine.cuda_device_usable(0)[0]:
        pytest.skip(f"needs {len(devices)} usable CUDA device(s)")
    tmp_path, runs, arrays, mask = study
    rows = denoise_batch(runs, tmp_path / "out", backend="cuda", devices=devices, maps=True)
    assert rows[3]["status"] == "failed"
    assert {row["device"] for row in rows[:3]} <= set(devices)
    _expect_equal_to_single_series(rows, arrays, mask, "cuda")
