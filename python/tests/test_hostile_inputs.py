# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The hostile-input suite's Python table (docs/reliability.md; the tools' table is
apps/test/SVDLowRankHostileInputGTest.cxx): ``reconstruct_volume`` on damaged inputs and on a disk that fills, each
case with the row status expected, a phrase of its message, and the files it may leave (after a failure: none)."""

from __future__ import annotations

import gzip
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from itk_svdlowrankreconstruction._batch import reconstruct_volume
from itk_svdlowrankreconstruction._engine import check_image_file


def _nifti(values: np.ndarray) -> bytes:
    """A NIfTI-1 single file of float32 voxels, values in [z, y, x] order."""
    header = bytearray(352)
    struct.pack_into("<i", header, 0, 348)
    dims = [values.ndim] + list(values.shape[::-1]) + [1] * (7 - values.ndim)
    struct.pack_into("<8h", header, 40, *dims)
    struct.pack_into("<hh", header, 70, 16, 32)
    struct.pack_into("<8f", header, 76, *([1.0] * 8))
    struct.pack_into("<ff", header, 108, 352.0, 1.0)
    header[344:348] = b"n+1\0"
    return bytes(header) + values.astype("<f4").tobytes()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-inputs")
    rng = np.random.default_rng()
    volume = rng.normal(100.0, 10.0, (10, 32, 32)).astype(np.float32)
    whole = _nifti(volume)
    (folder / "vol.nii").write_bytes(whole)
    (folder / "vol.nii.gz").write_bytes(gzip.compress(whole))
    (folder / "trunc.nii").write_bytes(whole[: len(whole) // 2])
    (folder / "trunc.nii.gz").write_bytes(gzip.compress(whole)[: len(gzip.compress(whole)) * 3 // 5])
    damaged = volume.copy()
    damaged[5, 4, 3] = np.nan
    (folder / "nan.nii.gz").write_bytes(gzip.compress(_nifti(damaged)))
    (folder / "empty.nii.gz").write_bytes(b"")
    (folder / "garbage.nii.gz").write_bytes(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    _round2_inputs(folder)
    return folder


def _round2_inputs(folder):
    """Round 2 (the NIfTI read path): a header that lies, gzip streams that fail, values beyond float32, a FIFO."""
    volume = np.full((8, 16, 16), 100.0, np.float32)
    whole = _nifti(volume)
    dimzero = bytearray(_nifti(np.full((5, 16, 16, 16), 100.0, np.float32)))
    struct.pack_into("<h", dimzero, 46, 0)  # dim[3]: 0, over 16 times the data of one slice
    (folder / "dimzero.nii.gz").write_bytes(gzip.compress(bytes(dimzero)))
    crc = bytearray(gzip.compress(whole, compresslevel=0))  # stored blocks: a flipped voxel byte fails only the CRC
    crc[10 + 5 + 352 + 100] ^= 0x40
    (folder / "crc.nii.gz").write_bytes(bytes(crc))
    (folder / "bomb.nii.gz").write_bytes(gzip.compress(whole + bytes(16 << 20), compresslevel=1))
    slope = bytearray(whole[:352]) + np.full(16 * 16 * 8, 1000, "<i2").tobytes()
    struct.pack_into("<hh", slope, 70, 4, 16)  # int16
    struct.pack_into("<f", slope, 112, 1e38)  # scl_slope
    (folder / "slope.nii.gz").write_bytes(gzip.compress(bytes(slope)))
    os.mkfifo(folder / "fifo.nii.gz")


# name, input, reconstruct_volume's options, status, a phrase of the message, a file existing before, a file-size
# limit in bytes (a disk that fills: RLIMIT_FSIZE in a child process).
CASES = [
    ("whole_nifti_gz", "vol.nii.gz", {}, "done", "", None, 0),
    ("whole_nifti", "vol.nii", {}, "done", "", None, 0),
    ("missing_input", "missing.nii.gz", {}, "failed", "missing.nii.gz", None, 0),
    ("empty_file", "empty.nii.gz", {}, "failed", "empty.nii.gz", None, 0),
    ("garbage_file", "garbage.nii.gz", {}, "failed", "garbage.nii.gz", None, 0),
    ("truncated_nifti", "trunc.nii", {}, "failed", "bytes of pixel data are missing", None, 0),
    ("truncated_nifti_gz", "trunc.nii.gz", {}, "failed", "is truncated", None, 0),
    ("nan_in_nifti", "nan.nii.gz", {}, "failed", "holds NaN or Inf at voxel [3, 4, 5]", None, 0),
    ("rank_and_energy", "vol.nii.gz", {"rank": 5, "energy_fraction": 0.9}, "failed", "ValueError", None, 0),
    ("noise_sigma_nan", "vol.nii.gz", {"noise_sigma": float("nan")}, "failed", "ValueError", None, 0),
    ("output_exists", "vol.nii.gz", {}, "skipped", "output exists", "out.nii.gz", 0),
    ("output_exists_overwrite", "vol.nii.gz", {"overwrite": True}, "done", "", "out.nii.gz", 0),
    ("disk_full_nifti_gz", "vol.nii.gz", {}, "failed", "writing", None, 16384),
    ("disk_full_nifti", "vol.nii", {}, "failed", "writing", None, 16384),
    # docs/reliability.md, "More cases": the NIfTI read path.
    ("r2_dim_zero", "dimzero.nii.gz", {}, "failed", "dim[3] is 0", None, 0),
    ("r2_crc_fails", "crc.nii.gz", {}, "failed", "fails its CRC-32 check", None, 0),
    ("r2_gzip_bomb", "bomb.nii.gz", {}, "failed", "holds more data than its header declares", None, 0),
    ("r2_slope_overflows", "slope.nii.gz", {}, "failed", "values that overflow float32", None, 0),
    ("r2_fifo", "fifo.nii.gz", {}, "failed", "not a regular file (a FIFO)", None, 0),
]


def _run_on_filling_disk(input_path, output_path, options, limit):
    """reconstruct_volume in a child process whose files may not grow past ``limit`` bytes (SIGXFSZ ignored, so a
    write past it fails as one on a full disk does); returns its row."""
    code = (
        "import json, resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from itk_svdlowrankreconstruction._batch import reconstruct_volume\n"
        f"row = reconstruct_volume({input_path!r}, {output_path!r}, backend='cpu', **{options!r})\n"
        "sys.stdout.write(json.dumps({'status': row['status'], 'message': row['message']}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    import json  # noqa: PLC0415

    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name,source,options,status,phrase,existing,limit", CASES, ids=[c[0] for c in CASES])
def test_hostile_input(inputs, tmp_path, name, source, options, status, phrase, existing, limit):
    folder = tmp_path / name
    folder.mkdir()
    output = folder / "out.nii.gz"
    if existing:
        (folder / existing).write_bytes(b"precious")
    before = sorted(os.listdir(inputs))
    if limit:
        row = _run_on_filling_disk(str(inputs / source), str(output), options, limit)
    else:
        row = reconstruct_volume(str(inputs / source), str(output), backend="cpu", **options)
    assert row["status"] == status, row
    assert phrase in (row["message"] or ""), row
    left = sorted(os.listdir(folder))
    if status == "done":
        assert left == ["out.nii.gz"]
    elif existing:
        assert left == [existing] and (folder / existing).read_bytes() == b"precious"
    else:
        assert left == [], "a failed run left files"
    assert sorted(os.listdir(inputs)) == before


def test_check_image_file_is_the_tools_rule(inputs):
    check_image_file(str(inputs / "vol.nii.gz"), values=True)
    with pytest.raises(OSError, match="bytes of pixel data are missing"):
        check_image_file(str(inputs / "trunc.nii"))
    with pytest.raises(ValueError, match="NaN or Inf"):
        check_image_file(str(inputs / "nan.nii.gz"), values=True)


# docs/reliability.md, "More cases": the BIDS App's denoiser. A patch longer than the image names the axis as the caller
# gave patch_size (array order; ITK's x, y, z for an ITK image), not the engine's own order.
@pytest.mark.parametrize("order", ["nibabel", "itk_numpy", "itk_image"])
def test_a_patch_longer_than_the_image_names_the_callers_axis(order):
    from itk_svdlowrankreconstruction import local_low_rank_denoising_image_filter

    series = np.random.default_rng(1).normal(size=(32, 24, 16, 6)).astype(np.float32)  # x, y, z, volumes
    if order == "nibabel":
        with pytest.raises(ValueError, match=r"patch_size\[0\] = 35 exceeds the series' 32 voxels along that axis"):
            local_low_rank_denoising_image_filter(series, volume_axis=-1, patch_size=(35, 3, 3), backend="cpu")
        with pytest.raises(ValueError, match=r"patch_size\[2\] = 17 exceeds the series' 16 voxels"):
            local_low_rank_denoising_image_filter(series, volume_axis=-1, patch_size=(3, 3, 17), backend="cpu")
    elif order == "itk_numpy":  # (volumes, z, y, x): patch_size in that array order
        with pytest.raises(ValueError, match=r"patch_size\[0\] = 17 exceeds the series' 16 voxels"):
            local_low_rank_denoising_image_filter(series.T, volume_axis=0, patch_size=(17, 3, 3), backend="cpu")
    else:
        itk = pytest.importorskip("itk")
        image = itk.image_from_array(np.ascontiguousarray(series.T))  # an itk.Image of dimension 4, x fastest
        with pytest.raises(ValueError, match=r"patch_size\[0\] = 35 exceeds the image's 32 voxels along ITK axis 0"):
            local_low_rank_denoising_image_filter(image, patch_size=(35, 3, 3), backend="cpu")
# docs/reliability.md, "More cases": the gradient table against its series, the rule SVDLowRankDenoiseSeries checks up
# front, for the BIDS App, which copies .bval and .bvec into the derivative.
def test_check_gradient_table_is_the_tools_rule(tmp_path):
    from itk_svdlowrankreconstruction._engine import check_gradient_table  # noqa: PLC0415

    series = tmp_path / "dwi.nii.gz"
    series.write_bytes(gzip.compress(_nifti(np.ones((25, 4, 4, 4), np.float32))))
    assert check_gradient_table(str(series)) == 25  # no table beside it: nothing to disagree
    (tmp_path / "dwi.bval").write_text(" ".join(["0"] + ["1000"] * 24) + "\n")
    (tmp_path / "dwi.bvec").write_text("\n".join(" ".join(["1"] * 25) for _ in range(3)) + "\n")
    assert check_gradient_table(str(series)) == 25
    (tmp_path / "few.bval").write_text("0 1000 1000\n")
    with pytest.raises(ValueError, match=r"few.bval' hold 3 values for the 25 volumes of '.*dwi.nii.gz'"):
        check_gradient_table(str(series), bval=str(tmp_path / "few.bval"))
    (tmp_path / "two.bvec").write_text("\n".join(" ".join(["1"] * 25) for _ in range(2)) + "\n")
    with pytest.raises(ValueError, match="two.bvec' hold 2 rows"):
        check_gradient_table(str(series), bvec=str(tmp_path / "two.bvec"))
    # An impossible header: the tools' reader's ValueError (svdlr_io::InvalidImageFile, which the module translates
    # wherever it leaves a binding), which the BIDS App reports as that run's failure.
    impossible = bytearray(_nifti(np.ones((25, 4, 4, 4), np.float32)))
    struct.pack_into("<h", impossible, 42, 0)  # dim[1]
    (tmp_path / "impossible.nii").write_bytes(bytes(impossible))
    with pytest.raises(ValueError, match=r"impossible NIfTI header: dim\[1\] is 0"):
        check_gradient_table(str(tmp_path / "impossible.nii"))
# docs/reliability.md, "More cases": sets of outputs and long names.
def _series(folder, name="series.nii.gz"):
    rng = np.random.default_rng(7)
    path = folder / name
    path.write_bytes(gzip.compress(_nifti(rng.normal(100.0, 10.0, (6, 8, 8, 8)).astype(np.float32))))
    return path


def test_a_legal_name_of_252_bytes_is_written(inputs, tmp_path):
    output = tmp_path / ("n" * 245 + ".nii.gz")
    row = reconstruct_volume(str(inputs / "vol.nii.gz"), str(output), backend="cpu")
    assert row["status"] == "done", row
    assert sorted(os.listdir(tmp_path)) == [output.name]


def test_a_denoised_series_is_renamed_after_its_maps(tmp_path, monkeypatch):
    from itk_svdlowrankreconstruction import _batch  # noqa: PLC0415
    from itk_svdlowrankreconstruction._nifti_series import denoise_nifti  # noqa: PLC0415

    renamed = []
    move = _batch._move_into_place
    monkeypatch.setattr(_batch, "_move_into_place",
                        lambda temporary, target, overwrite: (renamed.append(os.path.basename(target)),
                                                              move(temporary, target, overwrite)))
    denoise_nifti(str(_series(tmp_path)), str(tmp_path / "out.nii.gz"), noise_map_path=str(tmp_path / "sigma.nii.gz"),
                  rank_map_path=str(tmp_path / "rank.nii.gz"))
    assert renamed[-1] == "out.nii.gz" and sorted(renamed) == ["out.nii.gz", "rank.nii.gz", "sigma.nii.gz"]


def test_a_batch_resume_redoes_a_series_whose_maps_are_missing(tmp_path):
    from itk_svdlowrankreconstruction._denoise_batch import denoise_batch  # noqa: PLC0415

    series = _series(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "series_denoised.nii.gz").write_bytes(b"left by a run killed between its renames")
    rows = denoise_batch([str(series)], out, backend="cpu", maps=True)
    assert [row["status"] for row in rows] == ["done"], rows
    assert sorted(os.listdir(out)) == ["series_denoised.nii.gz", "series_rank.nii.gz", "series_sigma.nii.gz"]
    again = denoise_batch([str(series)], out, backend="cpu", maps=True)
    assert [row["status"] for row in again] == ["skipped"]
def test_check_image_file_says_what_is_wrong_with_a_nifti_file(inputs):
    """Round 2: the same words as the tools, OSError for a file that cannot be read as it is, ValueError for one
    whose content cannot be used."""
    with pytest.raises(ValueError, match=r"dim\[3\] is 0"):
        check_image_file(str(inputs / "dimzero.nii.gz"))
    with pytest.raises(OSError, match="is corrupt: gzip member 1 fails its CRC-32 check"):
        check_image_file(str(inputs / "crc.nii.gz"), values=True)
    with pytest.raises(ValueError, match="holds more data than its header declares"):
        check_image_file(str(inputs / "bomb.nii.gz"))
    with pytest.raises(ValueError, match="overflow float32"):
        check_image_file(str(inputs / "slope.nii.gz"), values=True)
    with pytest.raises(OSError, match=r"not a regular file \(a FIFO\)"):
        check_image_file(str(inputs / "fifo.nii.gz"))
