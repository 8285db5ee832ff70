# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The BIDS App svdlr-bids on a tiny raw dataset (bids_dataset.py): two subjects, a second session, a broken run, a
func run and anatomical images to leave alone. Its outputs, names, sidecars, dataset files, exit codes and re-runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bids_dataset import AFFINE, SHAPE, SIGMA, all_files, hidden_files, make_raw_dataset, rmse

nibabel = pytest.importorskip("nibabel")

from itk_svdlowrankreconstruction._denoise_batch import denoise_on_pipeline
from itk_svdlowrankreconstruction import _engine, bids  # noqa: E402

GOOD_DWI = ["sub-01/ses-1/dwi/sub-01_ses-1_dwi.nii.gz", "sub-01/ses-2/dwi/sub-01_ses-2_acq-short_dwi.nii.gz",
            "sub-02/dwi/sub-02_dwi.nii.gz"]
BROKEN = "sub-02/dwi/sub-02_run-2_dwi.nii.gz"


@pytest.fixture
def raw(tmp_path, rng):
    root = tmp_path / "raw"
    signals = make_raw_dataset(root, rng)
    return root, signals, all_files(root)


def _derivative(relative: str, desc: str, extension: str = ".nii.gz") -> str:
    folder, name = relative.rsplit("/", 1)
    stem, suffix = name[: -len(".nii.gz")].rsplit("_", 1)
    return f"{folder}/{stem}_desc-{desc}_{suffix}{extension}"


def _run_app(*arguments: str) -> subprocess.CompletedProcess:
    """The installed console script, as a user runs it."""
    script = Path(sys.executable).parent / "svdlr-bids"
    return subprocess.run([str(script), *arguments], capture_output=True, text=True, timeout=300)


def test_app_writes_derivatives_of_every_dwi_run_and_names_the_broken_one(raw, tmp_path):
    root, signals, raw_files = raw
    out = tmp_path / "derivatives"
    done = _run_app(str(root), str(out), "participant", "--backend", "cpu")
    assert done.returncode == _engine.EXIT_SOME_FAILED == 4, done.stderr
    assert BROKEN in done.stderr and "truncated" in done.stderr
    assert "1 of 4 runs failed" in done.stderr

    expected = {"dataset_description.json", "logs/CITATION.md"}
    for relative in GOOD_DWI:
        expected |= {_derivative(relative, "denoised"), _derivative(relative, "denoised", ".json"),
                     _derivative(relative, "denoised", ".bval"), _derivative(relative, "denoised", ".bvec"),
                     _derivative(relative, "noise"), _derivative(relative, "noise", ".json"),
                     _derivative(relative, "rank"), _derivative(relative, "rank", ".json")}
        subject = relative.split("/")[0]
        expected.add(f"{subject}/figures/{_derivative(relative, 'denoising', '.png').rsplit('/', 1)[1]}")
    assert set(all_files(out)) == expected  # no anat, no func, nothing of the broken run, no temporary
    assert all_files(root) == raw_files  # the raw dataset is left as it was

    for relative in GOOD_DWI:
        source = nibabel.load(str(root / relative))
        denoised = nibabel.load(str(out / _derivative(relative, "denoised")))
        assert denoised.shape == SHAPE and denoised.get_data_dtype() == np.float32
        np.testing.assert_allclose(denoised.affine, AFFINE)
        assert int(denoised.header["sform_code"]) == 1
        clean = signals[relative]
        assert rmse(denoised.get_fdata(), clean) < 0.7 * rmse(source.get_fdata(), clean)  # it did denoise
        noise = nibabel.load(str(out / _derivative(relative, "noise")))
        rank = nibabel.load(str(out / _derivative(relative, "rank")))
        assert noise.shape == SHAPE[:3] and rank.shape == SHAPE[:3] and rank.get_data_dtype() == np.uint16
        assert 0.7 * SIGMA < np.median(noise.get_fdata()) < 1.3 * SIGMA
        for extension in (".bval", ".bvec"):
            copied = (out / _derivative(relative, "denoised", extension)).read_bytes()
            assert copied == (root / relative.replace("_dwi.nii.gz", "_dwi" + extension)).read_bytes()
        assert (out / relative.split("/")[0] / "figures").is_dir()

        sidecar = json.loads((out / _derivative(relative, "denoised", ".json")).read_text())
        assert sidecar["PhaseEncodingDirection"] == "j-"  # the run's own sidecar
        assert sidecar["TotalReadoutTime"] == 0.05  # nearer than the top-level dwi.json's 0.07
        assert sidecar["MagneticFieldStrength"] == 3  # inherited from the top-level dwi.json
        assert sidecar["Sources"] == [f"bids:raw:{relative}"]
        assert sidecar["SoftwareVersion"] == _engine.__version__
        assert sidecar["DenoisingParameters"]["policy"] == _engine.DEFAULT_DENOISE_POLICY
        assert sidecar["DenoisingParameters"]["backend"] == "cpu"
        assert sidecar["DenoisingParameters"]["patch"] == [3, 3, 3]  # the default used: the least odd cube >= 12
        assert sidecar["NoiseSigma"]["median"] == pytest.approx(float(np.median(noise.get_fdata())), rel=1e-6)
        assert sidecar["RankKept"]["min"] >= 1

    description = json.loads((out / "dataset_description.json").read_text())
    assert description["DatasetType"] == "derivative"
    assert description["GeneratedBy"][0]["Name"] == "svdlr-bids"
    assert description["GeneratedBy"][0]["Version"] == _engine.__version__
    assert description["DatasetLinks"]["raw"] == root.resolve().as_uri()
    boilerplate = (out / "logs" / "CITATION.md").read_text()
    assert "Veraart" in boilerplate and "McCormick" in boilerplate
    # The defaults: Cordero-Grande's estimator, the optimal shrinker, each voxel the mean over its patches.
    assert "Cordero-Grande" in boilerplate and "Gavish and Donoho's optimal shrinker" in boilerplate
    assert "mean of the reconstructions of the patches" in boilerplate


def test_figure_is_a_png_of_the_five_panels_and_the_histogram(raw, tmp_path):
    pytest.importorskip("matplotlib")
    root, _, _ = raw
    run = bids.find_runs(str(root), participant_labels=["02"])[0]
    row = bids.process_run(run, str(tmp_path / "out"), bids.DenoiseOptions(backend="cpu"))
    assert row["status"] == "done" and row["message"] == ""
    figure = Path(bids.outputs_for(run, str(tmp_path / "out")).figure)
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(figure.read_bytes()[16:20], "big"), int.from_bytes(figure.read_bytes()[20:24],
                                                                                        "big")
    assert width > 2 * height  # five panels side by side above a histogram


def test_a_rerun_skips_complete_runs_and_redoes_an_incomplete_one(raw, tmp_path):
    root, _, _ = raw
    out = tmp_path / "derivatives"
    arguments = [str(root), str(out), "participant", "--backend", "cpu", "--no-reports"]
    assert bids.main(arguments) == _engine.EXIT_SOME_FAILED
    images = {relative: out / _derivative(relative, "denoised") for relative in GOOD_DWI}
    before = {relative: path.stat().st_mtime_ns for relative, path in images.items()}
    # An interrupted run: its images were written, its sidecar (the last file) was not.
    (out / _derivative(GOOD_DWI[1], "denoised", ".json")).unlink()

    runs = bids.find_runs(str(root))
    rows = bids.process_runs(runs, str(out), bids.DenoiseOptions(backend="cpu"), reports=False)
    assert [(r["run"], r["status"]) for r in rows] == [
        (GOOD_DWI[0], "skipped"), (GOOD_DWI[1], "done"), (GOOD_DWI[2], "skipped"), (BROKEN, "failed")]
    assert images[GOOD_DWI[0]].stat().st_mtime_ns == before[GOOD_DWI[0]]
    assert images[GOOD_DWI[1]].stat().st_mtime_ns != before[GOOD_DWI[1]]
    assert (out / _derivative(GOOD_DWI[1], "denoised", ".json")).exists()
    assert hidden_files(out) == []
    assert bids.main(arguments) == _engine.EXIT_SOME_FAILED  # the broken run still fails; nothing else is redone
    assert all(images[r].stat().st_mtime_ns == s for r, s in
               [(GOOD_DWI[0], before[GOOD_DWI[0]]), (GOOD_DWI[2], before[GOOD_DWI[2]])])


def test_participant_and_session_labels_narrow_the_runs(raw, tmp_path, capsys):
    root, _, _ = raw
    out = tmp_path / "out"
    code = bids.main([str(root), str(out), "participant", "--participant-label", "sub-01", "--session_label", "2",
                      "--backend", "cpu", "--no-reports"])
    assert code == _engine.EXIT_SUCCESS
    assert [p for p in all_files(out) if p.endswith("_dwi.nii.gz")] == [
        _derivative(GOOD_DWI[1], "denoised"), _derivative(GOOD_DWI[1], "noise"), _derivative(GOOD_DWI[1], "rank")]
    assert bids.main([str(root), str(out), "participant", "--participant-label", "03"]) == _engine.EXIT_USAGE
    assert "sub-03" in capsys.readouterr().err


def test_func_runs_on_request_with_inherited_metadata_and_no_gradient_table(raw, tmp_path):
    root, signals, _ = raw
    out = tmp_path / "out"
    assert bids.main([str(root), str(out), "participant", "--datatype", "func", "--backend", "cpu",
                      "--no-reports"]) == _engine.EXIT_SUCCESS
    relative = "sub-01/ses-1/func/sub-01_ses-1_task-rest_bold.nii.gz"
    assert [p for p in all_files(out) if p.startswith("sub-")] == sorted([
        _derivative(relative, "denoised"), _derivative(relative, "denoised", ".json"), _derivative(relative, "noise"),
        _derivative(relative, "noise", ".json"), _derivative(relative, "rank"), _derivative(relative, "rank", ".json")])
    sidecar = json.loads((out / _derivative(relative, "denoised", ".json")).read_text())
    assert sidecar["RepetitionTime"] == 2.0 and sidecar["TaskName"] == "rest"  # from task-rest_bold.json
    assert "functional" in (out / "logs" / "CITATION.md").read_text()


def test_exp2_is_cordero_grande_in_the_sidecar_and_the_boilerplate(raw, tmp_path):
    root, _, _ = raw
    out = tmp_path / "out"
    assert bids.main([str(root), str(out), "participant", "--participant-label", "02", "--estimator", "Exp2",
                      "--backend", "cpu", "--no-reports", "--quiet"]) == _engine.EXIT_SOME_FAILED
    sidecar = json.loads((out / _derivative(GOOD_DWI[2], "denoised", ".json")).read_text())
    assert sidecar["DenoisingParameters"]["policy"] == "mp-cg"
    assert "Cordero-Grande" in (out / "logs" / "CITATION.md").read_text()
    assert bids.main([str(root), str(out), "participant", "--policy", "fixed"]) == _engine.EXIT_USAGE  # no --rank


def test_vst_and_noise_floor_reach_the_denoiser_the_sidecar_and_the_boilerplate(raw, tmp_path):
    root, _, _ = raw
    plain, stabilised = tmp_path / "plain", tmp_path / "vst"
    common = ["participant", "--participant-label", "02", "--backend", "cpu", "--no-reports", "--quiet"]
    assert bids.main([str(root), str(plain), *common]) == _engine.EXIT_SOME_FAILED  # sub-02's broken run
    assert bids.main([str(root), str(stabilised), *common, "--vst", "--noise-floor", "--coils", "4"]) == \
        _engine.EXIT_SOME_FAILED
    relative = GOOD_DWI[2]
    sidecar = json.loads((stabilised / _derivative(relative, "denoised", ".json")).read_text())
    parameters = sidecar["DenoisingParameters"]
    assert (parameters["vst"], parameters["noise_floor"], parameters["coils"]) == (True, True, 4)
    citation = (stabilised / "logs" / "CITATION.md").read_text()
    assert "variance-stabilised" in citation and "non-central chi (4 coils)" in citation and "[foi2011]" in citation
    # The transforms ran: removing a 4-coil floor lowers the mean of every voxel against the plain run's output.
    before = nibabel.load(str(plain / _derivative(relative, "denoised"))).get_fdata()
    after = nibabel.load(str(stabilised / _derivative(relative, "denoised"))).get_fdata()
    assert after.mean() < before.mean()
    assert bids.main([str(root), str(tmp_path / "bad"), *common, "--coils", "0"]) == _engine.EXIT_USAGE


def test_sigma_floor_correction_reaches_the_noise_map_the_sidecar_and_the_boilerplate(raw, tmp_path):
    root, _, _ = raw
    plain, corrected = tmp_path / "plain", tmp_path / "corrected"
    common = ["participant", "--participant-label", "02", "--backend", "cpu", "--no-reports", "--quiet"]
    assert bids.main([str(root), str(plain), *common]) == _engine.EXIT_SOME_FAILED  # sub-02's broken run
    assert bids.main([str(root), str(corrected), *common, "--sigma-floor-correction"]) == _engine.EXIT_SOME_FAILED
    relative = GOOD_DWI[2]
    sidecar = json.loads((corrected / _derivative(relative, "denoised", ".json")).read_text())
    assert sidecar["DenoisingParameters"]["sigma_floor_correction"] is True
    assert "smaller spread" in (corrected / "logs" / "CITATION.md").read_text()
    # The correction only raises sigma, and leaves the denoised series as it was.
    before = nibabel.load(str(plain / _derivative(relative, "noise"))).get_fdata()
    after = nibabel.load(str(corrected / _derivative(relative, "noise"))).get_fdata()
    assert np.all(after >= before) and after.sum() > before.sum()
    assert np.array_equal(nibabel.load(str(plain / _derivative(relative, "denoised"))).get_fdata(),
                          nibabel.load(str(corrected / _derivative(relative, "denoised"))).get_fdata())
    # Where it makes no sense, refused before any run.
    for bad in (["--noise-sigma", "2"], ["--vst"]):
        assert bids.main([str(root), str(tmp_path / "bad"), *common, "--sigma-floor-correction", *bad]) == \
            _engine.EXIT_USAGE
    assert not (tmp_path / "bad").exists()


def test_a_sphere_with_gaussian_weights_reaches_the_sidecar_and_the_boilerplate(raw, tmp_path):
    root, _, _ = raw
    out = tmp_path / "out"
    assert bids.main([str(root), str(out), "participant", "--participant-label", "02", "--backend", "cpu",
                      "--no-reports", "--quiet", "--patch-shape", "sphere", "--aggregation", "gaussian"]) == \
        _engine.EXIT_SOME_FAILED  # sub-02's broken run
    parameters = json.loads((out / _derivative(GOOD_DWI[2], "denoised", ".json")).read_text())["DenoisingParameters"]
    image = nibabel.load(str(out / _derivative(GOOD_DWI[2], "denoised")))
    radius, voxels = _engine.sphere_patch_used(list(image.shape[:3]), image.shape[3])
    assert (parameters["patch_shape"], parameters["aggregation"]) == ("sphere", "gaussian")
    assert (parameters["patch_radius"], parameters["patch_voxels"]) == (radius, voxels)
    citation = (out / "logs" / "CITATION.md").read_text()
    assert "spherical patch" in citation and "[manjon2013]" in citation
    assert bids.main([str(root), str(tmp_path / "bad"), "participant", "--aggregation", "median"]) == \
        _engine.EXIT_USAGE


def test_noise_estimator_reaches_the_denoiser_the_sidecar_and_the_boilerplate(raw, tmp_path):
    root, _, _ = raw
    plain, refit = tmp_path / "plain", tmp_path / "refit"
    common = ["participant", "--participant-label", "02", "--backend", "cpu", "--no-reports", "--quiet"]
    assert bids.main([str(root), str(plain), *common]) == _engine.EXIT_SOME_FAILED  # sub-02's broken run
    assert bids.main([str(root), str(refit), *common, "--noise-estimator", "residual"]) == _engine.EXIT_SOME_FAILED
    relative = GOOD_DWI[2]
    sidecar = json.loads((refit / _derivative(relative, "denoised", ".json")).read_text())
    assert sidecar["DenoisingParameters"]["noise_estimator"] == "residual"
    assert "degrees of freedom" in (refit / "logs" / "CITATION.md").read_text()
    default = json.loads((plain / _derivative(relative, "denoised", ".json")).read_text())
    assert default["DenoisingParameters"]["noise_estimator"] == _engine.DEFAULT_DENOISE_NOISE_ESTIMATOR
    assert sidecar["NoiseSigma"]["median"] > default["NoiseSigma"]["median"]
    assert bids.main([str(root), str(tmp_path / "bad"), *common, "--noise-estimator", "exp2"]) == _engine.EXIT_USAGE


def test_without_matplotlib_a_run_is_done_without_its_reportlet_and_says_so(raw, tmp_path, monkeypatch):
    root, _, _ = raw
    from itk_svdlowrankreconstruction.bids import _runner

    monkeypatch.setattr(_runner, "matplotlib_missing", lambda: "no reportlet: matplotlib is not installed")
    run = bids.find_runs(str(root), participant_labels=["02"])[0]
    row = bids.process_run(run, str(tmp_path / "out"), bids.DenoiseOptions(backend="cpu"))
    assert row["status"] == "done" and "matplotlib is not installed" in row["message"]
    assert not os.path.exists(bids.outputs_for(run, str(tmp_path / "out")).figure)


def test_the_denoising_step_is_one_call_over_every_pending_run(raw, tmp_path):
    """The seam a multi-GPU batch pipeline plugs into: a list of series in, one result (or error) per series out."""
    root, _, _ = raw
    calls = []

    def batch(jobs, options):
        calls.append([Path(job.input).name for job in jobs])
        return bids.denoise_one_by_one(jobs, options)

    runs = bids.find_runs(str(root))
    rows = bids.process_runs(runs, str(tmp_path / "out"), bids.DenoiseOptions(backend="cpu"), reports=False,
                             denoise_batch=batch)
    assert calls == [[Path(r.path).name for r in runs]]
    assert [r["status"] for r in rows] == ["done", "done", "done", "failed"]


def test_runs_on_the_batch_pipeline_give_the_same_outputs_in_order(raw, tmp_path):
    """denoise_on_pipeline: the tools' reader / worker / writer pipeline (here its CPU worker) gives what the
    one-by-one default gives, run for run."""
    root, _, _ = raw
    runs = bids.find_runs(str(root))
    options = bids.DenoiseOptions(backend="cpu", threads=1)
    serial = bids.process_runs(runs, str(tmp_path / "serial"), options, reports=False)
    lanes = bids.process_runs(runs, str(tmp_path / "lanes"), options, reports=False,
                              denoise_batch=denoise_on_pipeline(None, backend="cpu"))
    assert [(r["run"], r["status"]) for r in lanes] == [(r["run"], r["status"]) for r in serial]
    for a, b in zip(serial[:3], lanes[:3]):
        np.testing.assert_array_equal(nibabel.load(a["output"]).get_fdata(), nibabel.load(b["output"]).get_fdata())
    assert bids.main([str(root), str(tmp_path / "cli"), "participant", "--devices", "0,0"]) == _engine.EXIT_USAGE
    # --device is one device (the pipeline's list of one), not with --devices, and not negative
    for clash in (["--device", "0", "--devices", "0,1"], ["--device", "-1"]):
        assert bids.main([str(root), str(tmp_path / "cli"), "participant", *clash]) == _engine.EXIT_USAGE, clash


def test_device_options_choose_the_gpus_the_runs_share():
    from itk_svdlowrankreconstruction.bids._cli import _devices_used, _parser

    def used(*options):
        return _devices_used(_parser().parse_args(["raw", "out", "participant", *options]))

    assert used() is None  # every device
    assert used("--device", "1") == [1]
    assert used("--devices", "0,1") == [0, 1]
