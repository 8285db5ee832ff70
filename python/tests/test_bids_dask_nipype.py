# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The BIDS App's runs through Dask (denoise_with_dask on a LocalCluster), and the Nipype interface DenoiseSeries
run inside a tiny Nipype workflow."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from bids_dataset import SHAPE, all_files, make_raw_dataset, rmse

nibabel = pytest.importorskip("nibabel")

import itk_svdlowrankreconstruction as svdlr  # noqa: E402
from itk_svdlowrankreconstruction import _engine, bids  # noqa: E402


@pytest.fixture
def raw(tmp_path, rng):
    root = tmp_path / "raw"
    return root, make_raw_dataset(root, rng)


def test_dask_maps_one_task_per_run_reports_the_broken_one_and_resumes(raw, tmp_path):
    distributed = pytest.importorskip("distributed")
    root, _ = raw
    options = bids.DenoiseOptions(backend="cpu", threads=1)
    # The same runs in this process first: what Dask adds beyond the work is its fixed cost.
    start = time.perf_counter()
    direct = bids.process_runs(bids.find_runs(str(root)), str(tmp_path / "direct"), options)
    direct_seconds = time.perf_counter() - start

    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        start = time.perf_counter()
        rows = svdlr.denoise_with_dask(client, str(root), str(out), options=options)
        dask_seconds = time.perf_counter() - start
        print(f"{len(rows)} runs: {direct_seconds:.2f} s in this process, {dask_seconds:.2f} s through Dask "
              f"(1 worker): fixed cost {dask_seconds - direct_seconds:+.2f} s")
        assert [r["status"] for r in rows] == ["done", "done", "done", "failed"], rows
        assert "sub-02_run-2_dwi.nii.gz" in rows[3]["message"]
        assert [r["run"] for r in rows] == [r["run"] for r in direct]
        # The same outputs as in this process: the task is the same function.
        assert [p for p in all_files(out) if p.startswith("sub-")] == all_files(tmp_path / "direct")
        for row in rows[:3]:
            here = nibabel.load(row["output"].replace(str(out), str(tmp_path / "direct"))).get_fdata()
            np.testing.assert_array_equal(nibabel.load(row["output"]).get_fdata(), here)

        before = [os.path.getmtime(r["output"]) for r in rows[:3]]
        # Again from the command line, through the scheduler's address: what is done is skipped.
        code = bids.main([str(root), str(out), "participant", "--backend", "cpu", "--dask-scheduler",
                          cluster.scheduler_address])
        assert code == _engine.EXIT_SOME_FAILED
        assert [os.path.getmtime(r["output"]) for r in rows[:3]] == before
        again = svdlr.denoise_with_dask(cluster.scheduler_address, bids.find_runs(str(root)), str(out),
                                        options=options)
        assert [r["status"] for r in again] == ["skipped", "skipped", "skipped", "failed"]


def test_dask_workers_on_one_host_share_its_cores(raw, tmp_path):
    distributed = pytest.importorskip("distributed")
    root, _ = raw
    cores = _engine.usable_cpu_threads()

    def usable():  # on a worker (the extension's own functions do not pickle)
        from itk_svdlowrankreconstruction import _engine as engine

        return engine.usable_cpu_threads()

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert set(client.run(usable).values()) == {cores}  # every core each, before
        rows = svdlr.denoise_with_dask(client, str(root), str(tmp_path / "out"),
                                       options=bids.DenoiseOptions(backend="cpu"), reports=False)
        assert [r["status"] for r in rows][:3] == ["done"] * 3
        # Two workers on this host: half its cores each (one at least), for their reading, engine and writing.
        assert list(client.run(usable).values()) == [max(1, cores // 2)] * 2


def test_nipype_workflow_denoises_then_reuses_the_noise_map_as_a_known_sigma(raw, tmp_path):
    pytest.importorskip("nipype")
    from nipype import Node, Workflow

    from itk_svdlowrankreconstruction.interfaces import DenoiseSeries

    root, signals = raw
    relative = "sub-02/dwi/sub-02_dwi.nii.gz"
    mask = np.zeros(SHAPE[:3], dtype=np.uint8)
    mask[2:10, 2:10, 1:7] = 1
    mask_path = tmp_path / "mask.nii.gz"
    nibabel.save(nibabel.Nifti1Image(mask, nibabel.load(str(root / relative)).affine), str(mask_path))

    estimate = Node(DenoiseSeries(in_file=str(root / relative), mask=str(mask_path), extent=(3, 3, 3),
                                  estimator="Exp1", backend="cpu"), name="estimate")
    # The centre voxel: with overlap averaging (the default) a voxel's sigma is the mean over the patches holding it.
    apply = Node(DenoiseSeries(in_file=str(root / relative), mask=str(mask_path), extent=(3, 3, 3),
                               aggregation="centre", backend="cpu", out_file="applied.nii.gz"), name="apply")
    workflow = Workflow(name="denoise", base_dir=str(tmp_path / "work"))
    workflow.config["execution"]["remove_unnecessary_outputs"] = False  # keep every output the test looks at
    workflow.connect(estimate, "noise", apply, "sigma_map")
    graph = workflow.run()

    results = {node.name: node.result.outputs for node in graph.nodes()}
    estimated = results["estimate"]
    assert estimated.out_file.endswith("sub-02_dwi_denoised.nii.gz")
    assert estimated.noise.endswith("sub-02_dwi_noise.nii.gz") and estimated.rank.endswith("sub-02_dwi_rank.nii.gz")
    sigma = nibabel.load(estimated.noise).get_fdata()
    rank = nibabel.load(estimated.rank).get_fdata()
    noisy = nibabel.load(str(root / relative)).get_fdata()
    denoised = nibabel.load(estimated.out_file).get_fdata()
    inside = mask.astype(bool)
    assert np.all(sigma[~inside] == 0) and np.all(rank[~inside] == 0)
    np.testing.assert_array_equal(denoised[~inside], noisy[~inside].astype(np.float32))  # copied outside the mask
    clean = signals[relative]
    assert rmse(denoised[inside], clean[inside]) < 0.7 * rmse(noisy[inside], clean[inside])
    assert estimated.sigma_median == pytest.approx(float(np.median(sigma[inside])), rel=1e-6)

    applied = results["apply"]
    assert applied.out_file.endswith("applied.nii.gz")
    # The known sigma map given is the sigma the second node used, voxel by voxel.
    np.testing.assert_allclose(nibabel.load(applied.noise).get_fdata()[inside], sigma[inside], rtol=1e-6)


def test_nipype_interface_refuses_an_estimator_that_contradicts_the_policy(raw):
    pytest.importorskip("nipype")
    from itk_svdlowrankreconstruction.interfaces import DenoiseSeries

    root, _ = raw
    node = DenoiseSeries(in_file=str(root / "sub-02/dwi/sub-02_dwi.nii.gz"), estimator="Exp2", policy="mp")
    with pytest.raises(ValueError, match="contradicts"):
        node.run(cwd=str(root))


# docs/reliability.md, "More cases": Nipype's sigma_median without a mask is the median where the series holds data, not
# over a zero-filled background (0 when it fills half the image).
def test_nipype_sigma_median_without_a_mask_leaves_out_the_empty_background(tmp_path, rng):
    pytest.importorskip("nipype")
    from bids_dataset import low_rank_signal, write_nifti

    from itk_svdlowrankreconstruction.interfaces import DenoiseSeries

    shape = (24, 24, 12, 12)
    series = np.zeros(shape, dtype=np.float32)
    inside = (slice(6, 18), slice(6, 18), slice(2, 10))  # a sixth of the image; the rest exact zeros
    series[inside] = (low_rank_signal(rng, shape) + rng.normal(0.0, 1.0, shape))[inside]
    write_nifti(tmp_path / "series.nii.gz", series)
    result = DenoiseSeries(in_file=str(tmp_path / "series.nii.gz"), backend="cpu").run(cwd=str(tmp_path))
    sigma = nibabel.load(result.outputs.noise).get_fdata()
    holds_data = np.any(series != 0, axis=3)
    assert np.median(sigma) == 0.0  # the background's
    assert result.outputs.sigma_median == pytest.approx(float(np.median(sigma[holds_data])), rel=1e-6)
    assert 0.7 < result.outputs.sigma_median < 1.3  # the noise's sigma, 1
