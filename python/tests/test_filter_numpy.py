# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The functional filter on NumPy arrays: axis order, slicing, pixel types, details and validation."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import matrices_with_gap, relative_error, truncated_svd
from itk_svdlowrankreconstruction import ReconstructionDetails
from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter as svdlr_filter


@pytest.fixture
def volume(rng):
    """A (z, y, x) = (5, 12, 9) float64 volume, random and far from zero."""
    return rng.standard_normal((5, 12, 9)) + 3.0


@pytest.mark.parametrize(("slice_dimension", "numpy_axis"), [(None, 0), (2, 0), (1, 1), (0, 2)])
def test_slices_are_cut_along_itk_axis_counted_from_x(volume, slice_dimension, numpy_axis):
    result = svdlr_filter(volume, rank=2, slice_dimension=slice_dimension, output_pixel_type="same")
    moved = np.moveaxis(volume, numpy_axis, 0)
    expected = np.moveaxis(truncated_svd(moved, 2), 0, numpy_axis)
    assert result.shape == volume.shape and result.flags.c_contiguous
    assert relative_error(result, expected) <= 1e-10


def test_details_describe_each_slice(volume):
    result, details = svdlr_filter(volume, rank=3, slice_dimension=0, return_details=True)
    assert isinstance(details, ReconstructionDetails)
    assert details.slice_dimension == 0 and details.backend in ("cpu", "cuda")
    # ITK axis 0 (x) has 9 slices, each (z, y) = 5 x 12, so 5 singular values per slice.
    assert details.singular_values.shape == (9, 5) and details.ranks.shape == (9,)
    expected = np.linalg.svd(np.moveaxis(volume, 2, 0), compute_uv=False)
    np.testing.assert_allclose(details.singular_values, expected, rtol=1e-5)
    np.testing.assert_array_equal(details.ranks, 3)
    # float64 data takes the exact solver everywhere: nothing for the subspace solver's check to redo.
    assert details.slices_redone == 0 and details.redone_slices.shape == (0,)


def test_two_dimensional_array_is_one_slice(rng):
    image = matrices_with_gap(rng, 1, 40, 30, 4)[0]
    result, details = svdlr_filter(image, rank=4, output_pixel_type=np.float64, return_details=True)
    assert details.slice_dimension is None and details.singular_values.shape == (1, 30)
    assert relative_error(result, truncated_svd(image, 4)) <= 1e-10


def test_float32_on_matrices_with_gap_matches_reference(rng):
    volume = matrices_with_gap(rng, 4, 50, 35, 6).astype(np.float32)
    result = svdlr_filter(volume, rank=6)
    assert result.dtype == np.float32
    for i in range(len(volume)):
        assert relative_error(result[i], truncated_svd(volume[i], 6)) <= 1e-5


def test_energy_fraction_is_applied_per_slice(rng):
    volume = matrices_with_gap(rng, 3, 20, 20, 4)
    _, details = svdlr_filter(volume, energy_fraction=0.9, return_details=True)
    energy = np.cumsum(details.singular_values**2, axis=1) / np.sum(details.singular_values**2, axis=1, keepdims=True)
    expected = 1 + np.argmax(energy >= 0.9, axis=1)
    np.testing.assert_array_equal(details.ranks, expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32, np.float64])
def test_default_output_is_float32_for_every_supported_input_type(rng, dtype):
    image = rng.integers(1, 200, size=(3, 10, 8)).astype(dtype)
    result = svdlr_filter(image, rank=2)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, truncated_svd(image, 2), rtol=0, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32, np.float64])
def test_same_output_type_keeps_the_input_type(rng, dtype):
    image = rng.integers(1, 200, size=(3, 10, 8)).astype(dtype)
    assert svdlr_filter(image, rank=2, output_pixel_type="same").dtype == dtype


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (np.uint8, [0, 255, 12, 13, 200, 0, 2]),
        (np.int16, [-4, 300, 12, 13, 200, -3, 2]),
        (np.uint16, [0, 300, 12, 13, 200, 0, 2]),
    ],
)
def test_integer_output_is_rounded_and_clamped(dtype, expected):
    # Full rank reproduces the input (to rounding error, so no exact halves here), so rounding to the
    # nearest integer and clamping are what shape the result.
    image = np.array([[-3.7, 300.2, 12.4, 12.6, 200.0, -2.7, 2.3]], dtype=np.float64)
    result = svdlr_filter(image, rank=1, output_pixel_type=dtype)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result[0], expected)


def test_input_is_never_modified(volume):
    before = volume.copy()
    svdlr_filter(volume, rank=1, output_pixel_type="same")
    svdlr_filter(volume, rank=1, slice_dimension=0)
    np.testing.assert_array_equal(volume, before)


def test_fortran_ordered_and_strided_inputs_work(volume):
    expected = svdlr_filter(np.ascontiguousarray(volume[:, ::2, :]), rank=2, output_pixel_type="same")
    strided = svdlr_filter(volume[:, ::2, :], rank=2, output_pixel_type="same")
    fortran = svdlr_filter(np.asfortranarray(volume[:, ::2, :]), rank=2, output_pixel_type="same")
    np.testing.assert_allclose(strided, expected, atol=1e-12)
    np.testing.assert_allclose(fortran, expected, atol=1e-12)


def test_progress_callback_sees_every_slice(volume):
    calls = []
    svdlr_filter(volume, rank=1, max_matrices_per_batch=2, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (5, 5)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"rank": 0}, ValueError, "rank must be at least 1"),
        ({"rank": -1}, ValueError, "rank must be at least 1"),
        ({"rank": 1.5}, TypeError, "rank must be an integer"),
        ({"rank": True}, TypeError, "rank must be an integer"),
        ({"energy_fraction": 0.0}, ValueError, r"energy fraction must be in \(0, 1\]"),
        ({"energy_fraction": 1.01}, ValueError, r"energy fraction must be in \(0, 1\]"),
        ({"energy_fraction": float("nan")}, ValueError, r"energy fraction must be in \(0, 1\]"),
        ({"rank": 2, "energy_fraction": 0.5}, ValueError, "not both"),
        ({"slice_dimension": 3}, ValueError, "slice_dimension must be 0, 1 or 2"),
        ({"slice_dimension": -1}, ValueError, "slice_dimension must be >= 0"),
        ({"backend": "gpu"}, ValueError, "backend must be one of"),
        ({"device_id": -1}, ValueError, "device_id must be >= 0"),
        ({"output_pixel_type": np.int32}, TypeError, "output_pixel_type"),
    ],
)
def test_invalid_parameters_are_rejected(volume, options, error, message):
    with pytest.raises(error, match=message):
        svdlr_filter(volume, **options)


def test_slice_dimension_is_ignored_for_a_2d_image_as_in_the_cpp_filter(rng):
    image = rng.standard_normal((6, 5))
    result, details = svdlr_filter(image, rank=1, slice_dimension=0, output_pixel_type="same", return_details=True)
    assert details.slice_dimension is None
    np.testing.assert_allclose(result, truncated_svd(image, 1), atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 5, 5), (4, 0, 5), (0, 3)])
def test_empty_image_is_rejected(shape):
    with pytest.raises(ValueError, match="empty"):
        svdlr_filter(np.ones(shape, np.float32), rank=1)


@pytest.mark.parametrize("shape", [(7,), (2, 3, 4, 5)])
def test_image_that_is_not_2d_or_3d_is_rejected(shape):
    with pytest.raises(ValueError, match="2D or 3D"):
        svdlr_filter(np.ones(shape, np.float32), rank=1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_, np.complex64, np.float16])
def test_unsupported_dtype_is_rejected(dtype):
    with pytest.raises(TypeError, match="not supported"):
        svdlr_filter(np.ones((3, 4, 4), dtype), rank=1)


def test_unsupported_object_is_rejected():
    with pytest.raises(TypeError, match="expected an itk.Image, a NumPy array"):
        svdlr_filter([[1.0, 2.0], [3.0, 4.0]], rank=1)


@pytest.mark.parametrize(
    ("slice_dimension", "index", "name"), [(2, 3, r"slice 3 along axis 2 \(z\)"), (0, 7, r"slice 7 along axis 0 \(x\)")]
)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_pixel_is_rejected_naming_the_slice(volume, slice_dimension, index, name, bad):
    image = volume.astype(np.float32)
    # numpy axis = 2 - slice_dimension; put the bad pixel in slice `index` along that axis
    position = [1, 1, 1]
    position[2 - slice_dimension] = index
    image[tuple(position)] = bad
    with pytest.raises(ValueError, match=name):
        svdlr_filter(image, rank=1, slice_dimension=slice_dimension)


def test_non_finite_pixel_in_a_2d_image_is_rejected(rng):
    image = rng.standard_normal((5, 5))
    image[2, 2] = np.nan
    with pytest.raises(ValueError, match="the input image contains NaN or Inf"):
        svdlr_filter(image, rank=1)
