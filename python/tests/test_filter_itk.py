# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The functional filter on itk.Image: metadata round trip, pixel types, and rejected image kinds."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import truncated_svd
from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter as svdlr_filter

ORIGIN = (-12.5, 40.0, 3.25)
SPACING = (0.7, 0.9, 2.5)
# Rotations, not the identity.
DIRECTIONS = {
    2: np.array([[0.0, -1.0], [1.0, 0.0]]),
    3: np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]),
}


def make_image(itk, array):
    image = itk.image_from_array(np.ascontiguousarray(array))
    dimension = array.ndim
    image.SetOrigin(ORIGIN[:dimension])
    image.SetSpacing(SPACING[:dimension])
    image.SetDirection(itk.matrix_from_array(DIRECTIONS[dimension]))
    return image


def assert_same_geometry(itk, result, image):
    assert tuple(result.GetOrigin()) == pytest.approx(tuple(image.GetOrigin()))
    assert tuple(result.GetSpacing()) == pytest.approx(tuple(image.GetSpacing()))
    np.testing.assert_array_equal(
        itk.array_from_matrix(result.GetDirection()), itk.array_from_matrix(image.GetDirection())
    )
    assert result.GetBufferedRegion() == image.GetBufferedRegion()
    assert result.GetLargestPossibleRegion() == image.GetLargestPossibleRegion()


def test_volume_round_trip_keeps_geometry_and_matches_numpy(itk, rng):
    array = (rng.standard_normal((6, 14, 11)) + 4.0).astype(np.float32)
    image = make_image(itk, array)
    result = svdlr_filter(image, rank=3)
    assert itk.template(result) == itk.template(itk.Image[itk.F, 3])
    assert_same_geometry(itk, result, image)
    np.testing.assert_allclose(itk.array_view_from_image(result), truncated_svd(array, 3), atol=1e-4)


@pytest.mark.parametrize("slice_dimension", [0, 1])
def test_slice_dimension_follows_itk_axes(itk, rng, slice_dimension):
    array = rng.standard_normal((6, 14, 11)) + 4.0
    image = make_image(itk, array)
    result = svdlr_filter(image, rank=2, slice_dimension=slice_dimension, output_pixel_type=itk.D)
    numpy_axis = 2 - slice_dimension
    expected = np.moveaxis(truncated_svd(np.moveaxis(array, numpy_axis, 0), 2), 0, numpy_axis)
    np.testing.assert_allclose(itk.array_view_from_image(result), expected, atol=1e-10)


def test_2d_image_round_trip(itk, rng):
    array = rng.standard_normal((20, 16)) + 4.0
    image = make_image(itk, array)
    result, details = svdlr_filter(image, rank=4, return_details=True)
    assert itk.template(result) == itk.template(itk.Image[itk.F, 2])
    assert_same_geometry(itk, result, image)
    assert details.singular_values.shape == (1, 16)


def test_nonzero_start_index_is_kept(itk, rng):
    image = itk.Image[itk.F, 3].New()
    region = itk.ImageRegion[3]()
    region.SetIndex((5, -2, 7))
    region.SetSize((9, 8, 4))
    image.SetRegions(region)
    image.Allocate()
    image.SetOrigin(ORIGIN)
    itk.array_view_from_image(image)[:] = rng.standard_normal((4, 8, 9)) + 2.0
    result = svdlr_filter(image, rank=2)
    assert_same_geometry(itk, result, image)
    # The same physical point holds the reconstruction of the same pixel.
    index = (6, 0, 9)
    point = image.TransformIndexToPhysicalPoint(index)
    assert tuple(result.TransformPhysicalPointToIndex(point)) == index


@pytest.mark.parametrize(
    ("pixel", "dtype"), [("UC", np.uint8), ("SS", np.int16), ("US", np.uint16), ("F", np.float32), ("D", np.float64)]
)
def test_every_pixel_type_of_the_cpp_filter_is_accepted(itk, rng, pixel, dtype):
    pixel_type = getattr(itk, pixel)
    image = make_image(itk, rng.integers(1, 250, size=(3, 10, 12)).astype(dtype))
    default = svdlr_filter(image, rank=2)
    same = svdlr_filter(image, rank=2, output_pixel_type="same")
    assert itk.template(default) == itk.template(itk.Image[itk.F, 3])
    assert itk.template(same) == itk.template(itk.Image[pixel_type, 3])
    assert_same_geometry(itk, same, image)


def test_itk_output_pixel_type_is_honoured_with_rounding(itk):
    image = make_image(itk, np.array([[-3.7, 300.2, 12.4, 12.6, 200.0]], dtype=np.float32))
    result = svdlr_filter(image, rank=1, output_pixel_type=itk.UC)
    assert itk.template(result) == itk.template(itk.Image[itk.UC, 2])
    np.testing.assert_array_equal(itk.array_view_from_image(result)[0], [0, 255, 12, 13, 200])


def test_input_image_is_not_modified(itk, rng):
    array = rng.standard_normal((3, 8, 8)).astype(np.float32) + 1.0
    image = make_image(itk, array)
    svdlr_filter(image, rank=1)
    np.testing.assert_array_equal(itk.array_view_from_image(image), array)


def test_rgb_image_is_rejected_with_a_hint(itk):
    rgb = itk.Image[itk.RGBPixel[itk.UC], 2].New()
    rgb.SetRegions([4, 4])
    rgb.Allocate()
    with pytest.raises(TypeError, match=r"itk.imread\(path, itk.F\)"):
        svdlr_filter(rgb, rank=1)


def test_vector_image_is_rejected(itk):
    vector = itk.VectorImage[itk.F, 2].New()
    vector.SetRegions([4, 4])
    vector.SetNumberOfComponentsPerPixel(2)
    vector.Allocate()
    with pytest.raises(TypeError, match="scalar itk.Image"):
        svdlr_filter(vector, rank=1)


def test_unsupported_itk_pixel_type_is_rejected(itk):
    image = itk.image_from_array(np.ones((4, 5, 6), np.int32))
    with pytest.raises(TypeError, match="pixel type"):
        svdlr_filter(image, rank=1)


def test_nan_in_itk_image_names_the_slice(itk, rng):
    array = rng.standard_normal((4, 6, 6)).astype(np.float32)
    array[2, 1, 1] = np.nan
    with pytest.raises(ValueError, match=r"slice 2 along axis 2 \(z\)"):
        svdlr_filter(make_image(itk, array), rank=1)
