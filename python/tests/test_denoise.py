# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""local_low_rank_denoising_image_filter and the engine's denoise_local_low_rank: on series with a known answer
(a low-rank signal plus Gaussian noise of known sigma), against a float64 NumPy reference, in both axis
conventions, on itk.Image and itk.VectorImage, against the C++ tool, and on bad input."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import REPO_ROOT

from itk_svdlowrankreconstruction import _engine, local_low_rank_denoising_image_filter as denoise

SIGMA = 2.0
AMPLITUDE = 12.0  # per component, in units of sigma


def low_rank_series(rng, shape=(10, 12, 14), volumes=30, rank=3):
    """(clean, noisy) float32 series in ITK's NumPy order (volumes, z, y, x): `rank` random volume profiles,
    each mixed by a spatial weight that oscillates within a few voxels, so that every patch of 3 voxels or more
    a side holds all of them well above the noise; plus N(0, SIGMA^2) noise."""
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in shape), indexing="ij")
    weights = [
        1.0 + 0.2 * np.sin(0.3 * x + 0.2 * y),
        np.sin(1.9 * x + 0.4 * z),
        np.cos(2.1 * y + 0.5 * x),
        np.sin(1.7 * z + 0.9 * y + 0.3),
    ]
    t = np.arange(volumes, dtype=np.float64)
    clean = np.zeros((volumes,) + tuple(shape))
    for k in range(rank):
        profile = np.cos(rng.uniform(0.05, 0.4) * t + rng.uniform(0.0, 6.3)) + 0.3 * rng.standard_normal(volumes)
        clean += AMPLITUDE * SIGMA * profile[:, None, None, None] * weights[k][None]
    noisy = clean + SIGMA * rng.standard_normal(clean.shape)
    return clean.astype(np.float32), noisy.astype(np.float32)


def rms(a, b):
    return float(np.sqrt(np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2)))


@pytest.fixture
def series(rng):
    return low_rank_series(rng)


def test_denoises_and_estimates_sigma_and_rank(series):
    clean, noisy = series
    # The configuration the bounds were set for: dwidenoise's (the preset) with the Veraart estimator, which the
    # keyword given overrides.
    result, sigma, rank = denoise(noisy, preset="dwidenoise", policy="mp", backend="cpu", return_maps=True)
    assert result.shape == noisy.shape and result.dtype == np.float32
    assert sigma.shape == rank.shape == noisy.shape[1:]
    assert sigma.dtype == np.float32 and rank.dtype == np.uint16
    # A rank-3 patch of 125 voxels x 30 volumes keeps about 3 (125 + 30) of its 3750 noise dimensions.
    assert rms(result, clean) < 0.7 * rms(noisy, clean)
    interior = (slice(2, -2),) * 3  # patches shifted inward at the borders see a different neighbourhood
    assert np.median(sigma[interior]) == pytest.approx(SIGMA, rel=0.05)
    assert np.median(rank[interior]) == 3


def test_both_axis_conventions_give_the_same_result(series):
    _, noisy = series
    itk_order = denoise(noisy, patch_size=(3, 5, 7), backend="cpu", return_maps=True)
    nibabel_view = noisy.transpose(3, 2, 1, 0)  # (x, y, z, volumes): a strided view, not a copy
    assert not nibabel_view.flags.c_contiguous
    nibabel = denoise(nibabel_view, volume_axis=-1, patch_size=(7, 5, 3), backend="cpu", return_maps=True)
    nibabel_axis_3 = denoise(nibabel_view, volume_axis=3, patch_size=(7, 5, 3), backend="cpu", return_maps=True)
    nibabel_copy = denoise(
        np.ascontiguousarray(nibabel_view), volume_axis=-1, patch_size=(7, 5, 3), backend="cpu", return_maps=True
    )

    assert nibabel[0].shape == nibabel_view.shape and nibabel[1].shape == nibabel_view.shape[:3]
    np.testing.assert_allclose(nibabel[0].transpose(3, 2, 1, 0), itk_order[0], rtol=0, atol=1e-4 * SIGMA * AMPLITUDE)
    np.testing.assert_allclose(nibabel[1].transpose(2, 1, 0), itk_order[1], rtol=1e-4)
    np.testing.assert_array_equal(nibabel[2].transpose(2, 1, 0), itk_order[2])
    for other in (nibabel_axis_3, nibabel_copy):
        for a, b in zip(other, nibabel):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * SIGMA * AMPLITUDE)


def test_any_strides_give_the_result_of_a_contiguous_copy(rng):
    _, noisy = low_rank_series(rng, shape=(10, 12, 28))
    view = noisy[:, ::-1, :, ::2]  # negative and non-unit strides
    for volume_axis, array in ((0, view), (-1, view.transpose(1, 2, 3, 0))):
        result, sigma, rank = denoise(array, volume_axis=volume_axis, backend="cpu", return_maps=True)
        copy = denoise(np.ascontiguousarray(array), volume_axis=volume_axis, backend="cpu", return_maps=True)
        np.testing.assert_allclose(result, copy[0], rtol=0, atol=1e-5 * SIGMA * AMPLITUDE)
        np.testing.assert_allclose(sigma, copy[1], rtol=1e-5)
        np.testing.assert_array_equal(rank, copy[2])


def test_float64_and_integer_series_are_denoised_in_float32(series):
    _, noisy = series
    expected = denoise(noisy, backend="cpu")
    np.testing.assert_allclose(denoise(noisy.astype(np.float64), backend="cpu"), expected, rtol=0, atol=1e-5)
    rounded = np.round(noisy).astype(np.int16)
    np.testing.assert_allclose(
        denoise(rounded, backend="cpu"), denoise(rounded.astype(np.float32), backend="cpu"), rtol=0, atol=1e-5
    )


def test_fixed_rank_matches_a_float64_reference_patch_by_patch(rng):
    _, noisy = low_rank_series(rng, shape=(7, 8, 9), volumes=12, rank=2)
    patch = (3, 5, 3)
    # The reference takes each voxel's row of its own patch: the centre voxel, with the hard threshold (which the
    # default shrinkage gives a fixed rank without sigma).
    result = denoise(noisy, policy="fixed", rank=2, patch_size=patch, aggregation="centre", backend="cpu")
    volumes, shape = noisy.shape[0], noisy.shape[1:]
    voxels = [(0, 0, 0), (6, 7, 8), (3, 4, 4), (0, 1, 8), (6, 0, 2), (2, 6, 1)]  # corners, edges, interior
    for voxel in voxels:
        # The patch around the voxel, shifted inward at the borders to lie inside the image.
        start = [min(max(c - p // 2, 0), n - p) for c, p, n in zip(voxel, patch, shape)]
        block = noisy[:, start[0] : start[0] + patch[0], start[1] : start[1] + patch[1], start[2] : start[2] + patch[2]]
        casorati = block.reshape(volumes, -1).T.astype(np.float64)  # patch voxels x volumes
        u, s, vt = np.linalg.svd(casorati, full_matrices=False)
        approximation = (u[:, :2] * s[:2]) @ vt[:2]
        row = np.ravel_multi_index(tuple(c - b for c, b in zip(voxel, start)), patch)
        reference = approximation[row]
        got = result[(slice(None),) + voxel]
        assert np.linalg.norm(got - reference) <= 1e-5 * np.linalg.norm(reference), voxel


def test_mask_copies_the_voxels_outside_and_a_known_sigma_replaces_the_estimate(series):
    _, noisy = series
    mask = np.zeros(noisy.shape[1:], dtype=bool)
    mask[:, :, :7] = True
    result, sigma, rank = denoise(noisy, mask=mask, noise_sigma=1.5, backend="cpu", return_maps=True)
    np.testing.assert_array_equal(result[:, ~mask], noisy[:, ~mask])
    assert np.all(result[:, mask] != noisy[:, mask])
    np.testing.assert_array_equal(sigma[mask], 1.5)
    np.testing.assert_array_equal(sigma[~mask], 0)
    np.testing.assert_array_equal(rank[~mask], 0)
    assert np.all(rank[mask] > 0)

    sigma_map = np.linspace(1.0, 3.0, mask.size, dtype=np.float32).reshape(mask.shape)
    # Each voxel's sigma is its own patch's with the centre voxel (the mean of the patches holding it with overlap).
    _, written, _ = denoise(noisy, noise_sigma=sigma_map, aggregation="centre", backend="cpu", return_maps=True)
    np.testing.assert_array_equal(written, sigma_map)


def test_the_default_is_overlap_with_optimal_shrinkage_and_beats_the_dwidenoise_preset(series):
    clean, noisy = series
    assert _engine.DENOISE_PRESETS == ("default", "dwidenoise")
    default = denoise(noisy, backend="cpu")
    explicit = denoise(noisy, aggregation="overlap", shrinkage="frobenius", policy="mp-cg", backend="cpu")
    np.testing.assert_array_equal(default, explicit)
    np.testing.assert_array_equal(denoise(noisy, preset="default", backend="cpu"), default)
    dwidenoise = denoise(noisy, preset="dwidenoise", backend="cpu")
    np.testing.assert_array_equal(
        dwidenoise, denoise(noisy, aggregation="centre", shrinkage="hard", policy="mp-cg", backend="cpu")
    )
    assert rms(default, clean) < rms(dwidenoise, clean)


def test_keywords_override_the_preset_and_auto_shrinkage_is_hard_for_a_fixed_rank(series):
    _, noisy = series
    np.testing.assert_array_equal(
        denoise(noisy, preset="dwidenoise", aggregation="overlap", backend="cpu"),
        denoise(noisy, aggregation="overlap", shrinkage="hard", policy="mp-cg", backend="cpu"),
    )
    np.testing.assert_array_equal(
        denoise(noisy, rank=2, backend="cpu"), denoise(noisy, rank=2, shrinkage="hard", backend="cpu")
    )
    assert not np.array_equal(
        denoise(noisy, rank=2, noise_sigma=SIGMA, backend="cpu"),
        denoise(noisy, rank=2, noise_sigma=SIGMA, shrinkage="hard", backend="cpu"),
    )


def _itk_series(itk, array):
    image = itk.image_from_array(np.ascontiguousarray(array))
    image.SetSpacing([0.9, 1.1, 1.3, 2.5])
    image.SetOrigin([10.0, -20.0, 30.0, 4.0])
    direction = np.eye(4)
    direction[:2, :2] = [[0.0, 1.0], [1.0, 0.0]]
    image.SetDirection(itk.matrix_from_array(direction))
    return image


def test_itk_image_comes_back_with_its_geometry_and_maps_on_its_grid(itk, series):
    _, noisy = series
    image = _itk_series(itk, noisy)
    result, sigma, rank = denoise(image, patch_size=(7, 5, 3), backend="cpu", return_maps=True)
    expected = denoise(noisy, patch_size=(3, 5, 7), backend="cpu", return_maps=True)  # ITK (x, y, z) = array reversed

    assert itk.template(result)[0] is itk.Image and itk.template(result)[1][1] == 4
    assert tuple(result.GetSpacing()) == tuple(image.GetSpacing())
    assert tuple(result.GetOrigin()) == tuple(image.GetOrigin())
    np.testing.assert_array_equal(itk.array_from_matrix(result.GetDirection()), itk.array_from_matrix(image.GetDirection()))
    np.testing.assert_array_equal(itk.array_view_from_image(result), expected[0])
    for map_image, values in ((sigma, expected[1]), (rank, expected[2])):
        assert itk.template(map_image)[1][1] == 3
        assert tuple(map_image.GetSpacing()) == tuple(image.GetSpacing())[:3]
        assert tuple(map_image.GetOrigin()) == tuple(image.GetOrigin())[:3]
        np.testing.assert_array_equal(
            itk.array_from_matrix(map_image.GetDirection()), itk.array_from_matrix(image.GetDirection())[:3, :3]
        )
        np.testing.assert_array_equal(itk.array_view_from_image(map_image), values)


def test_itk_vector_image_gives_the_same_result_as_the_4d_image(itk, series):
    _, noisy = series
    vector = itk.image_from_array(np.ascontiguousarray(noisy.transpose(1, 2, 3, 0)), is_vector=True)
    vector.SetSpacing([0.9, 1.1, 1.3])
    assert itk.template(vector)[0] is itk.VectorImage
    result = denoise(vector, backend="cpu")
    assert itk.template(result)[0] is itk.VectorImage
    assert tuple(result.GetSpacing()) == (0.9, 1.1, 1.3)
    np.testing.assert_allclose(
        itk.array_view_from_image(result).transpose(3, 0, 1, 2),
        denoise(noisy, backend="cpu"),
        rtol=0,
        atol=1e-4 * SIGMA * AMPLITUDE,
    )


def _denoise_tool():
    path = os.environ.get("SVDLR_DENOISE_TOOL") or str(REPO_ROOT / "build" / "apps" / "SVDLowRankDenoiseSeries")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else shutil.which("SVDLowRankDenoiseSeries")


def test_python_and_the_cpp_tool_give_the_same_pixels(itk, series, tmp_path):
    tool = _denoise_tool()
    if tool is None:
        pytest.skip("SVDLowRankDenoiseSeries is not built (set SVDLR_DENOISE_TOOL to its path)")
    _, noisy = series
    itk.imwrite(_itk_series(itk, noisy), str(tmp_path / "series.mha"))
    subprocess.run(
        [tool, "--backend", "cpu", "--patch", "5,3,3", "--policy", "gd", "--shrinkage", "frobenius",
         "--noise-map", "sigma.mha", "--rank-map", "rank.mha", "series.mha", "denoised.mha"],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    result, sigma, rank = denoise(
        itk.imread(str(tmp_path / "series.mha")),
        patch_size=(5, 3, 3),
        policy="gd",
        shrinkage="frobenius",
        backend="cpu",
        return_maps=True,
    )
    np.testing.assert_allclose(
        itk.array_view_from_image(itk.imread(str(tmp_path / "denoised.mha"))),
        itk.array_view_from_image(result),
        rtol=0,
        atol=1e-5 * SIGMA * AMPLITUDE,
    )
    np.testing.assert_allclose(
        itk.array_view_from_image(itk.imread(str(tmp_path / "sigma.mha"))), itk.array_view_from_image(sigma), rtol=1e-5
    )
    np.testing.assert_array_equal(
        itk.array_view_from_image(itk.imread(str(tmp_path / "rank.mha"))), itk.array_view_from_image(rank)
    )


def test_denoise_nifti_and_the_cpp_tool_give_the_same_pixels_under_a_mask(tmp_path):
    """A magnitude series under an irregular mask, each at its defaults: the automatic magnitude model's sigma pass
    fills the holes of its coarse patch lattice in voxel order, which the tool and denoise_nifti must walk alike."""
    nib = pytest.importorskip("nibabel")
    from itk_svdlowrankreconstruction._nifti_series import denoise_nifti  # noqa: PLC0415

    tool = _denoise_tool()
    if tool is None:
        pytest.skip("SVDLowRankDenoiseSeries is not built (set SVDLR_DENOISE_TOOL to its path)")
    rng = np.random.default_rng(7)
    nx, ny, nz, nv = 28, 22, 14, 20
    x, y, z = np.meshgrid(np.linspace(-1, 1, nx), np.linspace(-1, 1, ny), np.linspace(-1, 1, nz), indexing="ij")
    mask = ((x / 0.9) ** 2 + (y / 0.7) ** 2 + (z / 0.8) ** 2 < 1).astype(np.uint8)
    signal = 100.0 * (1.5 + np.sin(3 * x + 2 * y)[..., None] * np.cos(np.arange(nv) / 3.0))
    magnitude = np.hypot(signal + rng.normal(0, 10, signal.shape), rng.normal(0, 10, signal.shape)).astype(np.float32)
    nib.save(nib.Nifti1Image(magnitude, np.eye(4)), str(tmp_path / "series.nii"))
    nib.save(nib.Nifti1Image(mask, np.eye(4)), str(tmp_path / "mask.nii"))
    subprocess.run([tool, "--backend", "cpu", "--mask", "mask.nii", "--noise-map", "tool_sigma.nii", "series.nii",
                    "tool.nii"], cwd=tmp_path, check=True, capture_output=True)
    denoise_nifti(str(tmp_path / "series.nii"), str(tmp_path / "python.nii"), mask_path=str(tmp_path / "mask.nii"),
                  noise_map_path=str(tmp_path / "python_sigma.nii"))

    def voxels(name):
        return np.asarray(nib.load(str(tmp_path / name)).dataobj)

    np.testing.assert_allclose(voxels("python.nii"), voxels("tool.nii"), rtol=0, atol=1e-5 * magnitude.max())
    np.testing.assert_allclose(voxels("python_sigma.nii"), voxels("tool_sigma.nii"), rtol=1e-5)


def test_torch_cpu_tensor_comes_back_as_a_tensor(series):
    torch = pytest.importorskip("torch")
    _, noisy = series
    result, sigma, _ = denoise(torch.from_numpy(noisy), backend="cpu", return_maps=True)
    assert isinstance(result, torch.Tensor) and isinstance(sigma, torch.Tensor)
    np.testing.assert_array_equal(result.numpy(), denoise(noisy, backend="cpu"))


def test_cupy_array_comes_back_on_its_device(series):
    cupy = pytest.importorskip("cupy")
    if cupy.cuda.runtime.getDeviceCount() == 0:
        pytest.skip("no CUDA device")
    _, noisy = series
    result = denoise(cupy.asarray(noisy), backend="cpu")
    assert isinstance(result, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(result), denoise(noisy, backend="cpu"))


# Bad input: Python exceptions with the engine's messages.


def test_a_single_volume_is_refused(itk, series):
    _, noisy = series
    with pytest.raises(ValueError, match="4D series"):
        denoise(noisy[0])
    with pytest.raises(ValueError, match="at least 2 volumes"):
        denoise(noisy[:1])
    with pytest.raises(ValueError, match="itk.Image of dimension 3; a single volume"):
        denoise(itk.image_from_array(np.ascontiguousarray(noisy[0])))


def test_nan_is_named_by_its_voxel(itk, series):
    _, noisy = series
    broken = noisy.copy()
    broken[4, 3, 5, 6] = np.nan  # volume 4, voxel (z 3, y 5, x 6)
    with pytest.raises(ValueError, match=r"NaN or Inf at voxel \(3, 5, 6\)") as error:
        denoise(broken, backend="cpu")
    assert error.value.voxel == (3, 5, 6)
    with pytest.raises(ValueError, match=r"NaN or Inf at voxel \(6, 5, 3\)"):
        denoise(broken.transpose(3, 2, 1, 0), volume_axis=-1, backend="cpu")
    with pytest.raises(ValueError, match=r"NaN or Inf at voxel \[6, 5, 3\] \(ITK index"):
        denoise(_itk_series(itk, broken), backend="cpu")


def test_maps_of_another_shape_are_refused(series):
    _, noisy = series
    with pytest.raises(ValueError, match=r"mask has shape \(10, 12, 13\), but the series' spatial shape is"):
        denoise(noisy, mask=np.ones((10, 12, 13), dtype=bool))
    with pytest.raises(ValueError, match="noise_sigma has shape"):
        denoise(noisy, noise_sigma=np.ones((12, 10, 14), dtype=np.float32))
    negative = np.full(noisy.shape[1:], 2.0, dtype=np.float32)
    negative[1, 2, 3] = -1.0
    with pytest.raises(ValueError, match=r"noise_sigma must be finite and >= 0, got -1.* at voxel \(1, 2, 3\)"):
        denoise(noisy, noise_sigma=negative)


def test_spheres_and_weighted_aggregations_denoise_and_report_their_patch(series):
    clean, noisy = series
    plain = denoise(noisy, backend="cpu")
    for keywords in ({"patch_shape": "sphere"}, {"patch_radius": 2.0, "aggregation": "rank"},
                     {"aggregation": "gaussian"}, {"patch_shape": "sphere", "aggregation": "gaussian"}):
        result = denoise(noisy, backend="cpu", **keywords)
        assert rms(result, clean) < 0.7 * rms(noisy, clean), keywords
        assert not np.array_equal(result, plain), keywords  # the keywords reached the engine
    radius, voxels = _engine.sphere_patch_used(list(noisy.shape[1:]), noisy.shape[0])
    # 30 volumes want 20/17 x 30 = 35.3 voxels: |d|² <= 4 holds 33, |d|² <= 5 holds 57.
    assert radius == pytest.approx(np.sqrt(5.0)) and voxels == 57
    assert set(_engine.AGGREGATIONS) == {"centre", "overlap", "rank", "gaussian"}
    assert set(_engine.PATCH_SHAPES) == {"cuboid", "sphere"}


@pytest.mark.parametrize(
    "options, message",
    [
        ({"policy": "svd"}, "policy must be"),
        ({"policy": "fixed"}, "needs rank"),
        ({"policy": "mp", "rank": 3}, "rank goes with policy"),
        ({"aggregation": "middle"}, "aggregation must be"),
        ({"shrinkage": "soft"}, "shrinkage must be"),
        ({"patch_stride": 2, "aggregation": "centre"}, "OverlapAverage"),
        ({"patch_stride": 2, "preset": "dwidenoise"}, "OverlapAverage"),
        ({"preset": "best"}, "preset must be"),
        ({"policy": "fixed", "rank": 2, "shrinkage": "frobenius"}, "needs"),
        ({"patch_size": (3, 3)}, "3 extents"),
        ({"patch_size": (4, 3, 3)}, "odd"),
        ({"patch_size": (3, 3, 15)}, "larger than the image|exceeds"),
        ({"backend": "gpu"}, "backend must be"),
        ({"patch_shape": "ball"}, "patch_shape must be"),
        ({"patch_shape": "sphere", "patch_size": (3, 3, 3)}, "a sphere takes patch_radius"),
        ({"patch_shape": "cuboid", "patch_radius": 2.0}, "needs patch_shape"),
        ({"patch_radius": -1.0}, "patch_radius must be"),
        ({"patch_radius": 2.0, "patch_stride": 2}, "stride"),
        # Round 2: a sphere larger than the 14 x 12 x 10 image is refused as a cuboid is, not cut to the whole image.
        ({"patch_radius": 6.0}, "spans 13 voxels along axis ., more than the image.s 1[02]"),
        ({"patch_radius": 1e9}, "more than the image's"),
        ({"volume_axis": 4}, "volume_axis must be"),
    ],
)
def test_invalid_options_are_refused(series, options, message):
    _, noisy = series
    with pytest.raises(ValueError, match=message):
        denoise(noisy, **options)


def test_volume_axis_must_fit_an_itk_series(itk, series):
    _, noisy = series
    with pytest.raises(ValueError, match="volume_axis 3 does not fit"):
        denoise(_itk_series(itk, noisy), volume_axis=3)


def test_exception_in_progress_stops_the_work_and_propagates(series):
    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop(done)

    with pytest.raises(Stop):
        denoise(series[1], backend="cpu", max_patches_per_batch=16, progress=progress)


def test_ctrl_c_stops_the_work_between_batches(series, expect_ctrl_c_stops):
    expect_ctrl_c_stops(
        lambda progress: _engine.denoise_local_low_rank(
            series[1], backend="cpu", max_patches_per_batch=16, progress=progress
        )
    )


def test_gpu_memory_limit_takes_sizes_and_refuses_anything_else(series):
    _, noisy = series
    expected = denoise(noisy, backend="cpu")
    for limit in ("8G", "512MiB", 1 << 30):
        # The CPU ignores the limit; the keyword is still checked.
        np.testing.assert_array_equal(denoise(noisy, backend="cpu", gpu_memory_limit=limit), expected)
    for limit in ("8 GB", "8X", "", "-1G", 0, -5):
        with pytest.raises(ValueError, match="gpu_memory_limit"):
            denoise(noisy, backend="cpu", gpu_memory_limit=limit)
    with pytest.raises(TypeError, match="gpu_memory_limit"):
        denoise(noisy, backend="cpu", gpu_memory_limit=True)


def test_gpu_memory_limit_bounds_the_device_buffers_and_keeps_the_result(series):
    if not _engine.cuda_device_usable(0)[0]:
        pytest.skip("needs the CUDA backend and a usable CUDA device")
    _, noisy = series
    expected = denoise(noisy, backend="cuda")
    np.testing.assert_allclose(denoise(noisy, backend="cuda", gpu_memory_limit="2M"), expected, rtol=0, atol=1e-4)
    with pytest.raises(ValueError, match="device memory limit"):
        denoise(noisy, backend="cuda", gpu_memory_limit=1024)
