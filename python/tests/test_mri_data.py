# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Real MRI: the reconstruction is as good as the optimal rank-k approximation (Eckart-Young).

The bound is on the optimality ratio ||A - R||_F / ||A - A_k||_F <= 1 + 1e-4, with A_k the float64
truncated SVD. Slices whose optimal error is negligible (background slices, all zero in Colin27) cannot
give a meaningful ratio; there the result must simply reproduce A.
"""

from __future__ import annotations

import numpy as np
import pytest

from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter as svdlr_filter

RATIO_BOUND = 1.0 + 1e-4


def optimality_ratios(original: np.ndarray, result: np.ndarray, rank: int):
    """Per slice of (count, rows, cols) arrays: (ratios where meaningful, number of negligible slices)."""
    a = original.astype(np.float64)
    tail = np.linalg.svd(a, compute_uv=False)[:, rank:]
    optimal = np.sqrt(np.sum(tail**2, axis=1))  # ||A - A_k||_F, by Eckart-Young
    achieved = np.linalg.norm(a - result.astype(np.float64), axis=(1, 2))
    scale = np.maximum(np.linalg.norm(a, axis=(1, 2)), 1.0)
    meaningful = optimal > 1e-3 * scale
    negligible = ~meaningful
    assert np.all(achieved[negligible] <= 1e-5 * scale[negligible]), "a negligible slice was not reproduced"
    return achieved[meaningful] / optimal[meaningful], int(negligible.sum())


@pytest.mark.parametrize("rank", [5, 20])
def test_brain_slice_is_optimal(itk, brain_slice_png, rank):
    image = itk.imread(brain_slice_png, itk.F)
    result = svdlr_filter(image, rank=rank)
    original = itk.array_from_image(image)
    assert original.std() > 0
    ratios, _ = optimality_ratios(original[None], itk.array_from_image(result)[None], rank)
    assert ratios.size == 1 and ratios[0] <= RATIO_BOUND


def test_brain_slice_read_as_unsigned_char_keeps_its_type_on_request(itk, brain_slice_png):
    image = itk.imread(brain_slice_png, itk.UC)
    result = svdlr_filter(image, rank=30, output_pixel_type="same")
    assert itk.template(result) == itk.template(image)
    original = itk.array_view_from_image(image).astype(np.float64)
    difference = itk.array_view_from_image(result) - original
    # Rank 30 of a 217 x 181 slice: close to the image (within 10% in the Frobenius norm), but not it.
    assert 0 < np.linalg.norm(difference) < 0.1 * np.linalg.norm(original)


@pytest.mark.parametrize("slice_dimension", [2, 0])
def test_colin27_volume_is_optimal_on_every_slice(itk, colin27_nii, slice_dimension):
    image = itk.imread(colin27_nii, itk.F)
    rank = 16
    result, details = svdlr_filter(image, rank=rank, slice_dimension=slice_dimension, return_details=True)
    numpy_axis = 2 - slice_dimension
    original = np.moveaxis(itk.array_from_image(image), numpy_axis, 0)
    reconstructed = np.moveaxis(itk.array_from_image(result), numpy_axis, 0)
    ratios, negligible = optimality_ratios(original, reconstructed, rank)
    assert ratios.size >= 0.9 * len(original), f"only {ratios.size} of {len(original)} slices were checked"
    assert ratios.max() <= RATIO_BOUND, f"worst slice {int(np.argmax(ratios))}: ratio {ratios.max()}"
    assert details.singular_values.shape == (len(original), min(original.shape[1:]))
    assert np.all(details.ranks[details.singular_values[:, 0] > 0] == rank)


def test_colin27_keeps_its_geometry(itk, colin27_nii):
    image = itk.imread(colin27_nii)  # unsigned char, with a flipped direction matrix
    result = svdlr_filter(image, energy_fraction=0.99)
    assert tuple(result.GetOrigin()) == tuple(image.GetOrigin())
    assert tuple(result.GetSpacing()) == tuple(image.GetSpacing())
    np.testing.assert_array_equal(
        itk.array_from_matrix(result.GetDirection()), itk.array_from_matrix(image.GetDirection())
    )
    assert result.GetLargestPossibleRegion() == image.GetLargestPossibleRegion()
