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
    if desc in ("noise", "rank"):  # the maps: statistic maps of the run (docs/bids.md, "The outputs")
        return f"{folder}/{stem}_stat-{desc}_{suffix}map{extension}"
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
    assert [p for p in all_files(out) if p.endswith(".nii.gz")] == [
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


def test_the_sidecar_names_the_policy_an_energy_fraction_or_a_rank_implies():
    from itk_svdlowrankreconstruction._nifti_series import SeriesResult  # noqa: PLC0415
    from itk_svdlowrankreconstruction.bids._runner import _parameters_used  # noqa: PLC0415

    result = SeriesResult(shape=(), rank={}, sigma={}, seconds=0.0)  # no grid: nothing fitted to it
    for options, policy in ((bids.DenoiseOptions(energy_fraction=0.9), "energy"),
                            (bids.DenoiseOptions(rank=3), "fixed"),
                            (bids.DenoiseOptions(), _engine.DEFAULT_DENOISE_POLICY)):
        assert _parameters_used(options, result)["policy"] == policy


def test_vst_and_noise_floor_reach_the_denoiser_the_sidecar_and_the_boilerplate(raw, tmp_path):
    root, _, _ = raw
    plain, stabilised, automatic = tmp_path / "plain", tmp_path / "vst", tmp_path / "automatic"
    common = ["participant", "--participant-label", "02", "--backend", "cpu", "--no-reports", "--quiet"]
    # sub-02's broken run fails each
    assert bids.main([str(root), str(plain), *common, "--no-magnitude-model"]) == _engine.EXIT_SOME_FAILED
    assert bids.main([str(root), str(stabilised), *common, "--vst", "--noise-floor", "--coils", "4"]) == \
        _engine.EXIT_SOME_FAILED
    assert bids.main([str(root), str(automatic), *common]) == _engine.EXIT_SOME_FAILED
    relative = GOOD_DWI[2]
    sidecar = json.loads((stabilised / _derivative(relative, "denoised", ".json")).read_text())
    parameters = sidecar["DenoisingParameters"]
    assert (parameters["vst"], parameters["noise_floor"], parameters["coils"]) == (True, True, 4)
    assert parameters["magnitude_noise"] == "vst+noise-floor"
    # The default is the automatic model on a magnitude: the same noise model, named so; --no-magnitude-model none.
    for folder, model in ((automatic, "vst+noise-floor"), (plain, "none")):
        recorded = json.loads((folder / _derivative(relative, "denoised", ".json")).read_text())
        assert recorded["DenoisingParameters"]["magnitude_noise"] == model
    assert "variance-stabilised" in (automatic / "logs" / "CITATION.md").read_text()
    assert bids.main([str(root), str(tmp_path / "both"), *common, "--no-magnitude-model", "--vst"]) == \
        _engine.EXIT_USAGE
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
    assert bids.main([str(root), str(plain), *common, "--no-magnitude-model"]) == \
        _engine.EXIT_SOME_FAILED  # sub-02's broken run
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


# docs/reliability.md, "More cases": the BIDS App.

@pytest.mark.parametrize("inside", ["same", "subject", "dotdot", "symlink", "derivatives_itself"])
def test_an_output_dir_that_is_or_lies_in_the_raw_dataset_is_refused_up_front(raw, tmp_path, capsys, inside):
    root, _, raw_files = raw
    link = tmp_path / "link"
    link.symlink_to(root)
    out = {"same": root, "subject": root / "sub-01" / "out", "dotdot": tmp_path / "elsewhere" / ".." / "raw" / "x",
           "symlink": link, "derivatives_itself": root / "derivatives"}[inside]
    assert bids.main([str(root), str(out), "participant", "--backend", "cpu"]) == _engine.EXIT_USAGE
    assert "inside BIDS_DIR" in capsys.readouterr().err or inside in ("same", "symlink")
    assert all_files(root) == raw_files  # nothing written into the raw dataset: no derivative, no logs/
    with pytest.raises(ValueError, match="raw dataset"):  # Python's way in refuses it too
        bids.prepare_output_dir(str(root), str(out), bids.DenoiseOptions(), ["dwi"])
    assert all_files(root) == raw_files


def test_an_output_dir_under_derivatives_or_holding_the_raw_dataset_apart_is_taken(tmp_path):
    from itk_svdlowrankreconstruction.bids._outputs import output_dir_problem

    raw = tmp_path / "study" / "sourcedata" / "raw"
    assert output_dir_problem(str(raw), str(raw / "derivatives" / "svdlr")) is None  # BIDS's place for it
    assert output_dir_problem(str(raw), str(tmp_path / "study")) is None  # YODA: the raw dataset in sourcedata/
    assert output_dir_problem(str(raw), str(tmp_path / "other")) is None
    assert "inside OUTPUT_DIR" in output_dir_problem(str(tmp_path / "out" / "sub-01"), str(tmp_path / "out"))


def test_a_rerun_removes_the_partial_outputs_a_killed_run_left(raw, tmp_path):
    root, _, _ = raw
    out = tmp_path / "out"
    arguments = [str(root), str(out), "participant", "--participant-label", "02", "--backend", "cpu", "--no-reports",
                 "--quiet"]
    assert bids.main(arguments) == _engine.EXIT_SOME_FAILED  # sub-02's broken run
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a process id that no longer runs: a run killed with -9 left these
    folder = out / "sub-02" / "dwi"
    stale = [folder / f".sub-02_desc-denoised_dwi.partial-{dead.pid}-1.nii.gz",
             folder / f".sub-02_stat-noise_dwimap.partial-{dead.pid}-2.nii.gz",
             folder / f".sub-02_desc-denoised_dwi.partial-{dead.pid}-3.json"]
    alive = folder / f".sub-02_desc-denoised_dwi.partial-{os.getppid()}-4.nii.gz"  # a running process's: kept
    for path in stale + [alive]:
        path.write_bytes(b"partial")
    (out / _derivative(GOOD_DWI[2], "denoised", ".json")).unlink()  # the killed run had not finished
    assert bids.main(arguments) == _engine.EXIT_SOME_FAILED
    assert [p for p in stale if p.exists()] == []
    assert alive.exists()
    assert (out / _derivative(GOOD_DWI[2], "denoised", ".json")).exists()


@pytest.mark.parametrize("bad", [["--nthreads", "-1"], ["--nthreads", "two"], ["--nthreads", "5000"],
                                 ["--stride", "0"], ["--patch-radius", "nan"], ["--patch-radius", "0.5"],
                                 ["--energy-fraction", "1.5"], ["--energy-fraction", "nan"], ["--noise-sigma", "inf"],
                                 ["--noise-sigma", "-1"], ["--coils", "0"], ["--device", "-1"], ["--rank", "0"]])
def test_every_numeric_option_is_checked_when_the_command_line_is_read(raw, tmp_path, capsys, bad):
    root, _, _ = raw
    out = tmp_path / "out"
    assert bids.main([str(root), str(out), "participant", "--backend", "cpu", *bad]) == _engine.EXIT_USAGE
    assert bad[0] in capsys.readouterr().err
    assert not out.exists()  # refused before any run, not "2 of 2 runs failed"


def test_a_patch_too_large_names_the_axis_the_user_gave(tmp_path, rng):
    from bids_dataset import write_nifti

    root = tmp_path / "raw"
    write_nifti(root / "sub-01" / "dwi" / "sub-01_dwi.nii.gz", rng.normal(size=(32, 32, 16, 6)))
    done = _run_app(str(root), str(tmp_path / "out"), "participant", "--backend", "cpu", "--patch", "35,35,35")
    assert done.returncode == _engine.EXIT_SOME_FAILED, done.stderr
    assert "patch_size[0] = 35 exceeds the series' 32 voxels" in done.stderr, done.stderr  # x: PX, 32 voxels
    assert "16 voxels" not in done.stderr


def test_maps_are_statistic_maps_each_with_its_own_sidecar(raw, tmp_path):
    root, _, _ = raw
    out = tmp_path / "out"
    assert bids.main([str(root), str(out), "participant", "--participant-label", "02", "--backend", "cpu",
                      "--no-reports", "--quiet"]) == _engine.EXIT_SOME_FAILED
    relative = GOOD_DWI[2]
    assert (out / "sub-02/dwi/sub-02_stat-noise_dwimap.nii.gz").is_file()
    assert (out / "sub-02/dwi/sub-02_stat-rank_dwimap.nii.gz").is_file()
    assert not [p for p in all_files(out) if p.endswith("_dwi.nii.gz") and "desc-denoised" not in p]
    series = json.loads((out / _derivative(relative, "denoised", ".json")).read_text())
    noise = json.loads((out / _derivative(relative, "noise", ".json")).read_text())
    rank = json.loads((out / _derivative(relative, "rank", ".json")).read_text())
    assert noise != rank
    for sidecar, label in ((noise, "noise"), (rank, "rank")):
        assert sidecar["Description"] == _engine.OUTPUT_MAPS[label]["description"]  # the tool's own words
        assert sidecar["Sources"] == [f"bids:raw:{relative}"]
        assert sidecar["DenoisingParameters"] == series["DenoisingParameters"]
    assert (noise["Units"], rank["Units"]) == ("arbitrary", "1")  # not "same as the series"
    parameters = series["DenoisingParameters"]
    assert parameters["patch_shape"] == "cuboid" and parameters["patch"] == [3, 3, 3]
    assert "patch_radius" not in parameters and "patch_voxels" not in parameters  # a cuboid has no radius


def test_each_run_prints_its_start_and_its_done_line_at_once(raw, tmp_path):
    """Off a terminal too: the App is killed with -9 after the first run, and that run's lines are in the log."""
    root, _, _ = raw
    log = tmp_path / "log.txt"
    script = f"""
import os, signal, sys
from itk_svdlowrankreconstruction.bids import _cli, _runner

def batch(devices, backend):
    def run(jobs, options):
        outcomes = _runner.denoise_one_by_one(jobs, options)
        yield next(outcomes)
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)  # killed as the second run starts: nothing may be flushed at exit
    return run

_cli.denoise_on_pipeline = batch
sys.exit(_cli.main({[str(root), str(tmp_path / 'out'), 'participant', '--backend', 'cpu', '--no-reports']!r}))
"""
    with open(log, "w") as stdout:
        killed = subprocess.run([sys.executable, "-c", script], stdout=stdout, stderr=subprocess.PIPE, timeout=300)
    assert killed.returncode == -9, killed.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == f"start    {GOOD_DWI[0]}", lines
    assert lines[1].startswith(f"done     {GOOD_DWI[0]}") and lines[1].endswith(" s"), lines


def test_the_last_line_says_how_many_runs_failed_and_what_became_of_the_others(raw, tmp_path):
    root, _, _ = raw
    some = _run_app(str(root), str(tmp_path / "some"), "participant", "--backend", "cpu", "--no-reports")
    assert "svdlr-bids: 1 of 4 runs failed (listed above); 3 done" in some.stderr, some.stderr
    again = _run_app(str(root), str(tmp_path / "some"), "participant", "--backend", "cpu", "--no-reports")
    assert "1 of 4 runs failed (listed above); 0 done, 3 skipped (their outputs existed)" in again.stderr
    every = _run_app(str(root), str(tmp_path / "every"), "participant", "--backend", "cpu", "--patch", "13")
    assert every.returncode == _engine.EXIT_SOME_FAILED
    assert "all 4 runs failed (listed above)" in every.stderr and "done" not in every.stderr, every.stderr


def test_every_option_of_the_app_is_in_the_synopsis_of_docs_bids_md():
    from itk_svdlowrankreconstruction.bids._cli import _parser

    docs = Path(__file__).resolve().parents[2] / "docs" / "bids.md"
    if not docs.is_file():
        pytest.skip("docs/bids.md is not beside this checkout's tests")
    text = docs.read_text()
    synopsis = text[text.index("## The command"):text.index("| option | meaning |")]
    options = [a.option_strings[0] for a in _parser()._actions if a.option_strings and a.dest not in ("help",
                                                                                                        "version")]
    assert [o for o in options if o not in synopsis] == []


def test_a_gradient_table_that_disagrees_with_its_series_fails_that_run_only(raw, tmp_path):
    # docs/reliability.md, "More cases": the tools' rule (_engine.check_gradient_table) before the run's work, so that
    # the derivative never carries a .bval or .bvec that disagrees with its series.
    root, _, _ = raw
    bval = root / "sub-02/dwi/sub-02_dwi.bval"
    bval.write_text("0 1000 1000\n")
    out = tmp_path / "out"
    result = _run_app(str(root), str(out), "participant", "--backend", "cpu", "--no-reports")
    assert result.returncode == _engine.EXIT_SOME_FAILED, result.stderr
    assert "sub-02_dwi.bval' hold 3 values for the" in result.stderr, result.stderr
    assert not (out / _derivative(GOOD_DWI[2], "denoised")).exists()
    assert not (out / _derivative(GOOD_DWI[2], "denoised", ".bval")).exists()
    assert (out / _derivative(GOOD_DWI[0], "denoised")).exists()
