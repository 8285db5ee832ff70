# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The Python per-series path's NIfTI reader and writer (the tools', through _engine): the voxels nibabel reads, the
headers nibabel writes, every datatype and scaling, and the failures named."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest

from itk_svdlowrankreconstruction import _engine
from itk_svdlowrankreconstruction._nifti_series import read_series, write_series

nibabel = pytest.importorskip("nibabel")

AFFINE = np.array([[-1.5, 0.1, 0, 90], [0, 1.5, 0.2, -126], [0, 0, 2.0, -72], [0, 0, 0, 1]])


def _save(path, data, dtype, slope=None, inter=None, big_endian=False):
    header = nibabel.Nifti1Header(endianness=">" if big_endian else "<")
    header.set_data_dtype(dtype)
    image = nibabel.Nifti1Image(data.astype(dtype), AFFINE, header)
    if slope is not None:
        image.header.set_slope_inter(slope, inter)
    image.set_sform(AFFINE, 4)
    image.set_qform(AFFINE, 1)
    image.header["pixdim"][4] = 2.5  # TR, which the output must keep
    image.header.set_xyzt_units("mm", "sec")
    nibabel.save(image, str(path))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64, np.float32, np.float64])
@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize("big_endian", [False, True])
def test_the_voxels_are_nibabels(tmp_path, dtype, scaled, big_endian):
    seed = 20261126
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 100, size=(5, 4, 3, 6)).astype(dtype)
    path = tmp_path / "series.nii.gz"
    _save(path, data, dtype, *((0.5, 3.0) if scaled else (None, None)), big_endian=big_endian)
    voxels = _engine.load_nifti_float32(str(path))
    assert voxels is not None
    ours = voxels.T
    theirs = np.asanyarray(nibabel.load(str(path)).dataobj, dtype=np.float64)
    assert ours.shape == theirs.shape and ours.dtype == np.float32
    # Small integers scaled by 0.5 and shifted by 3 are exact in float32, whatever order the arithmetic takes.
    np.testing.assert_array_equal(ours, theirs.astype(np.float32))


def test_what_it_leaves_to_nibabel_and_what_it_refuses(tmp_path):
    data = np.ones((4, 4, 3, 2), np.complex64)
    complex_path = tmp_path / "complex.nii.gz"
    nibabel.save(nibabel.Nifti1Image(data, AFFINE), str(complex_path))
    assert _engine.load_nifti_float32(str(complex_path)) is None
    two = tmp_path / "two.nii"
    nibabel.save(nibabel.Nifti2Image(np.ones((4, 4, 3, 2), np.float32), AFFINE), str(two))
    assert _engine.load_nifti_float32(str(two)) is None

    nan = tmp_path / "nan.nii.gz"
    values = np.ones((4, 4, 3, 2), np.float32)
    values[1, 2, 0, 1] = np.nan
    nibabel.save(nibabel.Nifti1Image(values, AFFINE), str(nan))
    with pytest.raises(ValueError, match="NaN"):
        _engine.load_nifti_float32(str(nan))

    whole = tmp_path / "whole.nii.gz"
    nibabel.save(nibabel.Nifti1Image(np.ones((16, 16, 8, 4), np.float32), AFFINE), str(whole))
    cut = tmp_path / "cut.nii.gz"
    cut.write_bytes(gzip.compress(gzip.decompress(whole.read_bytes())[:-1000]))
    with pytest.raises(OSError, match="cut.nii.gz"):
        _engine.load_nifti_float32(str(cut))
    with pytest.raises(OSError, match="cut.nii.gz"):
        read_series(str(cut))


def test_write_gzip_file_names_what_it_cannot_write(tmp_path):
    with pytest.raises(OSError, match="no-such-folder"):
        _engine.write_gzip_file(str(tmp_path / "no-such-folder" / "x.nii.gz"), b"\0" * 352, np.zeros(8, np.float32))
    if os.path.exists("/dev/full"):
        with pytest.raises(OSError, match="/dev/full"):
            _engine.write_gzip_file("/dev/full", b"\0" * 352, np.zeros(1 << 20, np.float32))


@pytest.mark.parametrize("big_endian", [False, True])
def test_a_series_written_reads_back_with_the_sources_header(tmp_path, big_endian):
    seed = 7
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    data = rng.normal(100, 10, size=(6, 5, 4, 7)).astype(np.float32)
    source_path = tmp_path / "source.nii.gz"
    _save(source_path, data.astype(np.int16), np.int16, 2.0, 1.0, big_endian=big_endian)
    series = read_series(str(source_path))
    np.testing.assert_array_equal(series.noisy, np.asanyarray(nibabel.load(str(source_path)).dataobj,
                                                              dtype=np.float32))
    denoised = series.noisy * 0.5
    sigma = np.full(data.shape[:3], 1.5, np.float32)
    rank = np.arange(np.prod(data.shape[:3]), dtype=np.uint16).reshape(data.shape[:3])
    outputs = [tmp_path / "out.nii.gz", tmp_path / "sigma.nii.gz", tmp_path / "rank.nii"]
    write_series(series, denoised, sigma, rank, str(outputs[0]), noise_map_path=str(outputs[1]),
                 rank_map_path=str(outputs[2]))
    for path, expected, dtype in zip(outputs, (denoised, sigma, rank), (np.float32, np.float32, np.uint16)):
        image = nibabel.load(str(path))
        assert image.get_data_dtype() == dtype
        np.testing.assert_array_equal(np.asanyarray(image.dataobj), expected)
        np.testing.assert_allclose(image.affine, AFFINE, atol=1e-5)
        assert int(image.header["sform_code"]) == 4 and int(image.header["qform_code"]) == 1
        assert image.header.get_xyzt_units() == ("mm", "sec")
        if len(expected.shape) == 4:
            assert float(image.header["pixdim"][4]) == 2.5
        assert image.header.get_slope_inter() in ((1.0, 0.0), (None, None))
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temporary left


def test_a_device_denoises_one_series_at_a_time_and_devices_run_side_by_side(monkeypatch):
    import threading
    import time

    from itk_svdlowrankreconstruction import _denoise, _nifti_series

    active, most, guard = {}, {}, threading.Lock()

    def fake_filter(noisy, *, device_id=0, backend="auto", **_):
        key = "cpu" if backend == "cpu" else device_id
        with guard:
            active[key] = active.get(key, 0) + 1
            most[key] = max(most.get(key, 0), active[key])
            most["all"] = max(most.get("all", 0), sum(active.values()))
        time.sleep(0.2)
        with guard:
            active[key] -= 1
        return noisy, noisy[..., 0], noisy[..., 0]

    monkeypatch.setattr(_denoise, "local_low_rank_denoising_image_filter", fake_filter)
    series = _nifti_series.ReadSeries(None, np.zeros((2, 2, 2, 3), np.float32), None, None, 0.0)
    options = [_nifti_series.DenoiseOptions(backend="cuda", device_id=d) for d in (0, 0, 1, 1)]
    threads = [threading.Thread(target=_nifti_series.denoise_series, args=(series, o)) for o in options]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1 and most[1] == 1  # each device: one series at a time
    assert most["all"] == 2  # the two devices at once
