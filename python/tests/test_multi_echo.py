# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Multi-echo series and demeaning from Python: the engine's groups (demean_groups, shell_groups), the denoiser's
demean= against its volume_groups, a 5D NIfTI and echo files through denoise_nifti, and the BIDS App grouping a
func run's echoes into one joint denoise with one derivative per echo."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bids_dataset import AFFINE, SHAPE, SIGMA, all_files, low_rank_signal, write_nifti

nibabel = pytest.importorskip("nibabel")

from itk_svdlowrankreconstruction import _engine, bids, local_low_rank_denoising_image_filter  # noqa: E402
from itk_svdlowrankreconstruction._nifti_series import DenoiseOptions, denoise_nifti  # noqa: E402

ECHO_DECAY = (1.0, 0.6)  # the second echo's signal, relative to the first's


def _echoes(rng: np.random.Generator) -> list:
    signal = 50.0 + low_rank_signal(rng)
    return [decay * signal + rng.normal(0.0, SIGMA, SHAPE) for decay in ECHO_DECAY]


def _joint(series: list, **keywords) -> np.ndarray:
    stacked = np.concatenate(series, axis=3).astype(np.float32)
    return local_low_rank_denoising_image_filter(stacked, volume_axis=-1, backend="cpu", **keywords)


def test_groups_are_the_engines_rule():
    assert list(_engine.demean_groups("none", 4)) == []
    assert list(_engine.demean_groups("all", 3)) == [0, 0, 0]
    assert list(_engine.demean_groups("echoes", 6, 3)) == [0, 0, 1, 1, 2, 2]
    assert list(_engine.shell_groups([0, 1000, 5, 2000, 1010])) == [0, 1, 0, 2, 1]
    assert list(_engine.demean_groups("shells", 3, 1, [1000, 0, 990])) == [1, 0, 1]
    for bad in (lambda: _engine.demean_groups("shells", 3, 1, [0, 1000]),
                lambda: _engine.demean_groups("echoes", 5, 2),
                lambda: _engine.demean_groups("echoes", 4, 1),
                lambda: _engine.demean_groups("by-volume", 4)):
        with pytest.raises(ValueError):
            bad()
    assert _engine.DEFAULT_DEMEAN in _engine.DEMEAN_CHOICES


def test_demean_is_the_engines_volume_groups_and_changes_the_result(rng):
    echoes = _echoes(rng)
    stacked = np.concatenate(echoes, axis=3).astype(np.float32)
    groups = list(_engine.demean_groups("echoes", stacked.shape[3], 2))
    by_name = _joint(echoes, demean="echoes", echoes=2)
    by_groups = _engine.denoise_local_low_rank(np.moveaxis(stacked, -1, 0).copy(), backend="cpu",
                                               volume_groups=groups)[0]
    np.testing.assert_array_equal(by_name, np.moveaxis(by_groups, 0, -1))
    assert np.max(np.abs(by_name - _joint(echoes))) > 1e-3  # demeaning is not a no-op
    with pytest.raises(ValueError):
        _joint(echoes, demean="shells", bvalues=[0.0] * 3)  # one b-value per volume


def test_five_d_and_echo_files_give_the_joint_denoise_in_their_own_shape(rng, tmp_path):
    echoes = _echoes(rng)
    write_nifti(tmp_path / "five.nii.gz", np.stack(echoes, axis=4))
    for number, echo in enumerate(echoes, start=1):
        write_nifti(tmp_path / f"echo{number}.nii.gz", echo)
    options = DenoiseOptions(backend="cpu", demean="echoes")
    expected = _joint(echoes, demean="echoes", echoes=2)

    result = denoise_nifti(str(tmp_path / "five.nii.gz"), str(tmp_path / "five_out.nii.gz"), options=options)
    five = nibabel.load(str(tmp_path / "five_out.nii.gz"))
    assert five.shape == SHAPE + (2,) and np.allclose(five.affine, AFFINE)
    np.testing.assert_allclose(np.asarray(five.dataobj), np.stack(np.split(expected, 2, axis=3), axis=4), atol=1e-5)
    assert result.shape == SHAPE[:3] + (2 * SHAPE[3],)

    denoise_nifti(str(tmp_path / "echo1.nii.gz"), str(tmp_path / "out1.nii.gz"), options=options,
                  echo_paths=[str(tmp_path / "echo2.nii.gz")], echo_output_paths=[str(tmp_path / "out2.nii.gz")])
    for number, part in enumerate(np.split(expected, 2, axis=3), start=1):
        image = nibabel.load(str(tmp_path / f"out{number}.nii.gz"))
        assert image.shape == SHAPE and np.allclose(image.affine, AFFINE)
        np.testing.assert_allclose(np.asarray(image.dataobj), part, atol=1e-5)


def test_echoes_that_differ_and_a_five_d_image_of_one_echo_are_refused(rng, tmp_path):
    echoes = _echoes(rng)
    write_nifti(tmp_path / "echo1.nii.gz", echoes[0])
    write_nifti(tmp_path / "short.nii.gz", echoes[1][..., :-1])
    write_nifti(tmp_path / "one.nii.gz", echoes[0][..., None])
    with pytest.raises(ValueError, match="echo 2 .* has shape"):
        denoise_nifti(str(tmp_path / "echo1.nii.gz"), str(tmp_path / "out1.nii.gz"),
                      echo_paths=[str(tmp_path / "short.nii.gz")], echo_output_paths=[str(tmp_path / "out2.nii.gz")])
    with pytest.raises(ValueError, match="1 echo"):
        denoise_nifti(str(tmp_path / "one.nii.gz"), str(tmp_path / "out.nii.gz"))
    assert not list(tmp_path.glob("out*"))


def test_bids_app_denoises_a_multi_echo_run_jointly_with_one_derivative_per_echo(rng, tmp_path):
    root, out = tmp_path / "raw", tmp_path / "out"
    (root).mkdir()
    (root / "dataset_description.json").write_text(json.dumps({"Name": "echoes", "BIDSVersion": "1.9.0"}))
    echoes = _echoes(rng)
    folder = root / "sub-01" / "func"
    names = [f"sub-01_task-rest_echo-{n}_bold" for n in (1, 2)]
    for name, echo, time in zip(names, echoes, (0.015, 0.035)):
        write_nifti(folder / f"{name}.nii.gz", echo)
        (folder / f"{name}.json").write_text(json.dumps({"EchoTime": time, "RepetitionTime": 2.0}))
    assert bids.main([str(root), str(out), "participant", "--datatype", "func", "--backend", "cpu", "--no-reports",
                      "--demean", "echoes", "--quiet"]) == _engine.EXIT_SUCCESS

    expected = np.split(_joint(echoes, demean="echoes", echoes=2), 2, axis=3)
    derivatives = out / "sub-01" / "func"
    for name, part, time in zip(names, expected, (0.015, 0.035)):
        stem = name[: -len("_bold")]
        image = nibabel.load(str(derivatives / f"{stem}_desc-denoised_bold.nii.gz"))
        np.testing.assert_allclose(np.asarray(image.dataobj), part, atol=1e-4)
        sidecar = json.loads((derivatives / f"{stem}_desc-denoised_bold.json").read_text())
        assert sidecar["EchoTime"] == time  # each echo keeps its own metadata
        assert sorted(Path(s).name for s in sidecar["Sources"]) == sorted(f"{n}.nii.gz" for n in names)
        assert sidecar["DenoisingParameters"]["demean"] == "echoes"
        assert (derivatives / f"{stem}_stat-noise_boldmap.nii.gz").is_file()
    assert "each echo" in (out / "logs" / "CITATION.md").read_text()
    # A re-run finds both echoes complete and skips the run.
    before = {p: (out / p).stat().st_mtime_ns for p in all_files(out) if p.startswith("sub-")}
    assert bids.main([str(root), str(out), "participant", "--datatype", "func", "--backend", "cpu", "--no-reports",
                      "--demean", "echoes", "--quiet"]) == _engine.EXIT_SUCCESS
    assert before == {p: (out / p).stat().st_mtime_ns for p in all_files(out) if p.startswith("sub-")}


def test_shells_come_from_the_bval_file_and_a_missing_one_is_named(rng, tmp_path):
    from bids_dataset import BVALS  # noqa: PLC0415

    series = 50.0 + low_rank_signal(rng) + rng.normal(0.0, SIGMA, SHAPE)
    write_nifti(tmp_path / "dwi.nii.gz", series)
    (tmp_path / "dwi.bval").write_text(" ".join(str(b) for b in BVALS) + "\n")
    options = DenoiseOptions(backend="cpu", demean="shells")
    denoise_nifti(str(tmp_path / "dwi.nii.gz"), str(tmp_path / "out.nii.gz"), options=options,
                  bval_path=str(tmp_path / "dwi.bval"))
    expected = _joint([series], demean="shells", bvalues=BVALS)
    np.testing.assert_allclose(np.asarray(nibabel.load(str(tmp_path / "out.nii.gz")).dataobj), expected, atol=1e-5)
    assert len(set(_engine.shell_groups(BVALS))) == 3  # b=0, 1000, 2000
    with pytest.raises(ValueError, match="needs the b-values"):
        denoise_nifti(str(tmp_path / "dwi.nii.gz"), str(tmp_path / "out2.nii.gz"), options=options)
