# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Many volumes: the input search and output names (the command-line tool's rules), the per-volume function
against a float64 reference, and the same function mapped over a folder by Dask on a LocalCluster of CPU worker
processes, with a broken input and a re-run that skips what is done."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import COLIN27_NII, skip_or_fail

import itk_svdlowrankreconstruction as svdlr
from itk_svdlowrankreconstruction._batch import method_tag, output_path_for, Volume

itk = pytest.importorskip("itk")


def _touch(path, content=b"x"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)


@pytest.fixture
def study(tmp_path, rng):
    """Three small volumes cut from Colin27 with noise of different strengths, and one broken file, in a
    BIDS-like tree."""
    if not os.path.exists(COLIN27_NII):
        skip_or_fail(f"Colin27 is missing: {COLIN27_NII}")
    colin = itk.array_from_image(itk.imread(COLIN27_NII, itk.F))  # [z, y, x]
    volumes = {}
    for v in range(3):
        block = colin[60 + 9 * v : 60 + 9 * v + 36 : 9, 60:156, 50:130].astype(np.float32)
        noisy = block + rng.normal(0.0, 2.0 + 4.0 * v, block.shape).astype(np.float32)
        image = itk.image_from_array(np.ascontiguousarray(noisy))
        image.SetSpacing([1.0, 1.5, 2.0 + v])
        path = tmp_path / "study" / f"sub-0{v + 1}" / "anat" / f"sub-0{v + 1}_T1w.nii.gz"
        path.parent.mkdir(parents=True)
        itk.imwrite(image, str(path), compression=True)
        volumes[str(path)] = noisy
    _touch(str(tmp_path / "study" / "sub-04" / "anat" / "sub-04_T1w.nii.gz"), b"not a NIfTI file")
    _touch(str(tmp_path / "study" / "sub-01" / "func" / "sub-01_bold.nii.gz"))
    return tmp_path, volumes


def _rank_k_float64(volume, k):
    out = np.empty(volume.shape, dtype=np.float64)
    for z, matrix in enumerate(volume.astype(np.float64)):
        u, s, vt = np.linalg.svd(matrix, full_matrices=False)
        out[z] = (u[:, :k] * s[:k]) @ vt[:k]
    return out


def test_patterns_and_names_follow_the_tools_rules(tmp_path):
    for name in ("sub-01/anat/sub-01_T1w.nii.gz", "sub-02/ses-1/anat/sub-02_ses-1_T2w.nii",
                 "sub-01/func/sub-01_bold.nii.gz", "sub-01/anat/.sub-01_T1w.partial-3.nii.gz", "README"):
        _touch(str(tmp_path / name))
    found = svdlr.find_volumes([str(tmp_path)], bids=True)
    assert [v.relative for v in found] == ["sub-01/anat/sub-01_T1w.nii.gz", "sub-02/ses-1/anat/sub-02_ses-1_T2w.nii"]
    assert [v.relative for v in svdlr.find_volumes([str(tmp_path)], patterns=["*.nii.gz"])] == [
        "sub-01/anat/sub-01_T1w.nii.gz", "sub-01/func/sub-01_bold.nii.gz"]
    volume = Volume("/d/sub-01/anat/sub-01_T1w.nii.gz", "sub-01/anat/sub-01_T1w.nii.gz")
    assert output_path_for(volume, "/out", method_tag(rank=20)) == "/out/sub-01/anat/sub-01_T1w_svd-rank20.nii.gz"
    assert method_tag(energy_fraction=0.95) == "svd-energy0.95"
    assert method_tag(noise_rank="mp-cg") == "svd-mp-cordero2019"
    assert method_tag(noise_sigma=12.5) == "svd-gd-sigma12.5"
    with pytest.raises(FileNotFoundError):
        svdlr.find_volumes([str(tmp_path / "missing")])


def test_one_volume_equals_float64_then_skips_and_a_broken_one_fails_cleanly(study):
    root, volumes = study
    source = next(iter(volumes))
    target = str(root / "out" / "one_svd-rank3.nii.gz")
    row = svdlr.reconstruct_volume(source, target, rank=3, backend="cpu")
    assert row["status"] == "done", row["message"]
    assert (row["slices"], row["rank_min"], row["rank_max"]) == (4, 3, 3)
    written = itk.imread(target)
    assert tuple(written.GetSpacing()) == (1.0, 1.5, 2.0)
    expected = _rank_k_float64(volumes[source], 3)
    got = itk.array_from_image(written)
    assert np.max(np.abs(got - expected)) < 1e-3 * np.max(np.abs(expected))
    assert np.max(np.abs(got - volumes[source])) > 1.0  # rank 3 did change the volume

    again = svdlr.reconstruct_volume(source, target, rank=3, backend="cpu")
    assert again["status"] == "skipped"

    broken = str(root / "study" / "sub-04" / "anat" / "sub-04_T1w.nii.gz")
    failed = svdlr.reconstruct_volume(broken, str(root / "out" / "broken_svd-rank3.nii.gz"), rank=3, backend="cpu")
    assert failed["status"] == "failed" and "sub-04_T1w.nii.gz" in failed["message"]
    assert sorted(os.listdir(root / "out")) == ["one_svd-rank3.nii.gz"]  # no output, no temporary


def test_dask_local_cluster_maps_the_volumes_reports_the_broken_one_and_resumes(study):
    distributed = pytest.importorskip("distributed")
    root, volumes = study
    out = str(root / "derivatives")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        rows = svdlr.reconstruct_with_dask(client, str(root / "study"), out, bids=True, noise_rank="mp",
                                           backend="cpu", progress=False)
        assert [r["status"] for r in rows] == ["done", "done", "done", "failed"], rows
        assert "sub-04_T1w.nii.gz" in rows[3]["message"]
        for row in rows[:3]:
            assert os.path.exists(row["output"]) and row["output"].endswith("_T1w_svd-mp.nii.gz")
            assert 0 < row["sigma_min"] <= row["sigma_max"]  # Marchenko-Pastur estimated the noise
        # The rows carry the engine's per-slice estimates: the same as the filter's on the same volume.
        for row in rows[:3]:
            _, details = svdlr.svd_low_rank_reconstruction_image_filter(
                itk.imread(row["input"], itk.F), noise_rank="mp", backend="cpu", return_details=True)
            assert row["sigma_min"] == pytest.approx(np.min(details.noise_sigma), rel=1e-12)
            assert row["sigma_max"] == pytest.approx(np.max(details.noise_sigma), rel=1e-12)
        before = [os.path.getmtime(r["output"]) for r in rows[:3]]

        # A re-run through the scheduler's address: what is done is skipped, the broken file fails again.
        again = svdlr.reconstruct_with_dask(cluster.scheduler_address, str(root / "study"), out, bids=True,
                                            noise_rank="mp", backend="cpu", progress=False)
        assert [r["status"] for r in again] == ["skipped", "skipped", "skipped", "failed"]
        assert [os.path.getmtime(r["output"]) for r in again[:3]] == before
    assert not os.path.exists(os.path.join(out, "sub-04"))
    table = root / "table.tsv"
    svdlr.write_table(rows, str(table))
    assert table.read_text().splitlines()[0].startswith("input\toutput\tstatus")


def test_reconstruct_many_on_local_threads(study):
    root, _ = study
    rows = svdlr.reconstruct_many([str(root / "study")], str(root / "many"), bids=True, rank=2, backend="cpu",
                                  workers=2)
    assert [r["status"] for r in rows] == ["done", "done", "done", "failed"]
    assert os.path.exists(root / "many" / "sub-02" / "anat" / "sub-02_T1w_svd-rank2.nii.gz")
