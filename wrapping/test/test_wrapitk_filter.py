# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""itk.SVDLowRankReconstructionImageFilter through ITK's own Python wrapping (WrapITK): the object API, the
functional API, a pipeline with ITK's reader and ExtractImageFilter, every wrapped pixel type in 2D and 3D against a float64
reference, the enums, the per-slice accessors, ITK's exceptions, and the C++ tool on Colin27."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest
from conftest import truncated_svd

# (ITK pixel type name, NumPy dtype) of every input type the module wraps.
PIXEL_TYPES = [("UC", np.uint8), ("SS", np.int16), ("US", np.uint16), ("F", np.float32), ("D", np.float64)]


def low_rank_plus_noise(rng, shape, rank, dtype):
    """A stack of slices (NumPy order [z, y, x], or [y, x]), each a random rank-`rank` matrix plus noise, scaled
    into the dtype's range: nothing special about it but its size."""
    rows, cols = shape[-2:]
    count = int(np.prod(shape[:-2], dtype=np.int64))
    u = rng.standard_normal((count, rows, rank))
    v = rng.standard_normal((count, rank, cols))
    data = (u @ v).reshape(shape) + 0.3 * rng.standard_normal(shape)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        low, high = max(info.min, -20000), min(info.max, 20000)
        data = (data - data.min()) / (data.max() - data.min()) * (high - low) + low
        return np.rint(data).astype(dtype)
    return (50.0 * data).astype(dtype)


def reference(array, rank):
    """float64 rank-`rank` reconstruction of every [y, x] slice (the filter's default SliceDimension, z)."""
    return truncated_svd(array, rank)


def relative_error(result, expected):
    expected = np.asarray(expected, np.float64)
    return float(np.linalg.norm(np.asarray(result, np.float64) - expected) / np.linalg.norm(expected))


def new_filter(itk, image, output_pixel=None):
    dimension = image.GetImageDimension()
    input_type = type(image)
    output_type = itk.Image[output_pixel or itk.F, dimension]
    return itk.SVDLowRankReconstructionImageFilter[input_type, output_type].New()


@pytest.mark.parametrize("dimension", [2, 3])
@pytest.mark.parametrize("pixel, dtype", PIXEL_TYPES, ids=[p for p, _ in PIXEL_TYPES])
def test_object_api_on_every_pixel_type_matches_the_float64_reference(itk, rng, pixel, dtype, dimension):
    shape = (5, 24, 31) if dimension == 3 else (24, 31)
    array = low_rank_plus_noise(rng, shape, rank=4, dtype=dtype)
    image = itk.image_from_array(array)
    assert itk.template(image)[1] == (getattr(itk, pixel), dimension)

    svd = new_filter(itk, image)
    svd.SetInput(image)
    svd.SetRank(4)
    svd.SetBackend(itk.SVDLowRankReconstructionEnums.Backend_CPU)
    svd.Update()
    output = svd.GetOutput()

    assert itk.template(output)[1] == (itk.F, dimension)
    result = itk.array_from_image(output)
    assert result.shape == array.shape and result.dtype == np.float32
    # float32 work: a few float32 epsilons of the slice's norm (the reference keeps 4 of 24 singular values
    # of a slice that is rank 4 plus noise, so the error is not hidden by a small residual).
    assert relative_error(result, reference(array, 4)) < 2e-5


@pytest.mark.parametrize("dimension", [2, 3])
def test_double_input_with_double_output_is_computed_in_float64(itk, rng, dimension):
    shape = (4, 20, 17) if dimension == 3 else (20, 17)
    array = low_rank_plus_noise(rng, shape, rank=3, dtype=np.float64)
    image = itk.image_from_array(array)
    svd = new_filter(itk, image, output_pixel=itk.D)
    svd.SetInput(image)
    svd.SetRank(3)
    svd.Update()
    result = itk.array_from_image(svd.GetOutput())
    assert result.dtype == np.float64
    assert relative_error(result, reference(array, 3)) < 1e-12


def test_geometry_is_kept_and_the_input_is_untouched(itk, rng):
    array = low_rank_plus_noise(rng, (3, 16, 12), rank=2, dtype=np.float32)
    image = itk.image_from_array(array)
    image.SetSpacing((0.5, 1.25, 3.0))
    image.SetOrigin((-10.0, 4.0, 2.5))
    direction = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    image.SetDirection(itk.matrix_from_array(direction))
    before = array.copy()

    svd = new_filter(itk, image)
    svd.SetInput(image)
    svd.SetRank(2)
    svd.Update()
    output = svd.GetOutput()

    assert tuple(output.GetSpacing()) == (0.5, 1.25, 3.0)
    assert tuple(output.GetOrigin()) == (-10.0, 4.0, 2.5)
    np.testing.assert_array_equal(itk.array_from_matrix(output.GetDirection()), direction)
    np.testing.assert_array_equal(itk.array_view_from_image(image), before)


def test_functional_api_gives_the_object_api_result(itk, rng):
    array = low_rank_plus_noise(rng, (4, 30, 26), rank=5, dtype=np.int16)
    image = itk.image_from_array(array)

    result = itk.svd_low_rank_reconstruction_image_filter(image, rank=5)

    svd = new_filter(itk, image)
    svd.SetInput(image)
    svd.SetRank(5)
    svd.Update()
    assert itk.template(result)[1] == (itk.F, 3)
    np.testing.assert_array_equal(itk.array_view_from_image(result), itk.array_view_from_image(svd.GetOutput()))
    assert relative_error(itk.array_view_from_image(result), reference(array, 5)) < 2e-5


def test_functional_api_takes_the_other_parameters_by_keyword(itk, rng):
    array = low_rank_plus_noise(rng, (6, 14, 18), rank=3, dtype=np.float32)
    image = itk.image_from_array(array)
    # Slices normal to x (ITK axis 0): NumPy's [:, :, x]. A slice's reconstruction does not depend on which of
    # its axes is called rows.
    result = itk.svd_low_rank_reconstruction_image_filter(image, rank=2, slice_dimension=0)
    expected = np.moveaxis(truncated_svd(np.moveaxis(array, 2, 0), 2), 0, 2)
    assert relative_error(itk.array_view_from_image(result), expected) < 2e-5


def test_pipeline_reader_filter_extract_on_colin27(itk, colin27_mha):
    image_type = itk.Image[itk.F, 3]
    volume = itk.array_from_image(itk.imread(colin27_mha, itk.F)).astype(np.float64)
    middle = volume.shape[0] // 2

    reader = itk.ImageFileReader[image_type].New(FileName=colin27_mha)
    svd = itk.SVDLowRankReconstructionImageFilter[image_type, image_type].New(reader)
    svd.SetRank(20)
    extract = itk.ExtractImageFilter[image_type, itk.Image[itk.F, 2]].New(svd)
    reader.UpdateOutputInformation()
    region = reader.GetOutput().GetLargestPossibleRegion()
    size, start = list(region.GetSize()), list(region.GetIndex())
    extract.SetExtractionRegion(itk.ImageRegion[3]([start[0], start[1], start[2] + middle], [size[0], size[1], 0]))
    extract.SetDirectionCollapseToSubmatrix()
    extract.Update()

    # The extract asks for one z slice, and the filter computes just that whole slice (streaming through the
    # pipeline: the MetaImage reader reads just that slice too).
    slice_2d = itk.array_view_from_image(extract.GetOutput())
    assert relative_error(slice_2d, truncated_svd(volume[middle], 20)) < 2e-5
    assert list(svd.GetOutput().GetBufferedRegion().GetSize()) == [size[0], size[1], 1]

    # A change of the filter reruns it when the pipeline is updated again, here on the whole volume.
    svd.SetRank(5)
    svd.UpdateLargestPossibleRegion()
    assert relative_error(itk.array_view_from_image(svd.GetOutput()), truncated_svd(volume, 5)) < 2e-5


def test_accessors_return_sequences_of_the_singular_values_ranks_and_sigmas(itk, rng):
    array = low_rank_plus_noise(rng, (3, 12, 9), rank=2, dtype=np.float64)
    image = itk.image_from_array(array)
    svd = new_filter(itk, image, output_pixel=itk.D)
    svd.SetInput(image)
    svd.SetRank(2)
    svd.Update()

    singular_values = np.array([list(s) for s in svd.GetSingularValues()])
    expected = np.linalg.svd(array, compute_uv=False)
    assert singular_values.shape == (3, 9)
    np.testing.assert_allclose(singular_values, expected, rtol=1e-12, atol=1e-12 * expected.max())
    assert list(svd.GetEffectiveRanks()) == [2, 2, 2]
    assert all(math.isnan(sigma) for sigma in svd.GetNoiseSigmas())
    assert svd.GetBackendUsed() == itk.SVDLowRankReconstructionEnums.Backend_CPU
    assert svd.GetSolverUsed() == itk.SVDLowRankReconstructionEnums.Solver_Exact


def test_energy_fraction_and_noise_policies_through_the_enums(itk, rng):
    array = low_rank_plus_noise(rng, (4, 40, 30), rank=3, dtype=np.float64)
    image = itk.image_from_array(array)
    svd = new_filter(itk, image, output_pixel=itk.D)
    svd.SetInput(image)

    svd.SetEnergyFraction(0.95)
    assert svd.GetRankSelection() == itk.SVDLowRankReconstructionEnums.RankSelection_EnergyFraction
    svd.Update()
    s = np.linalg.svd(array, compute_uv=False)
    energy = np.cumsum(s**2, axis=1) / np.sum(s**2, axis=1, keepdims=True)
    expected_ranks = [int(np.searchsorted(e, 0.95) + 1) for e in energy]
    assert list(svd.GetEffectiveRanks()) == expected_ranks

    svd.SetRankSelection(itk.SVDLowRankReconstructionEnums.RankSelection_GavishDonoho)
    svd.Update()
    sigmas = np.array(svd.GetNoiseSigmas())
    # The noise added is 0.3 per pixel, times the scale 50; the median-based estimate is within 20 % on 30 x 40.
    assert np.all(np.abs(sigmas / 15.0 - 1.0) < 0.2), sigmas
    assert list(svd.GetEffectiveRanks()) == [3, 3, 3, 3]


def test_invalid_parameters_raise_itk_exceptions_with_their_message(itk, rng):
    image = itk.image_from_array(low_rank_plus_noise(rng, (2, 8, 8), rank=1, dtype=np.float32))
    svd = new_filter(itk, image)
    svd.SetInput(image)

    svd.SetRank(0)
    with pytest.raises(RuntimeError, match="Rank selection"):
        svd.Update()

    svd.SetRank(1)
    svd.SetSliceDimension(3)
    with pytest.raises(RuntimeError, match="SliceDimension must be 0, 1 or 2 for a 3D image, got 3"):
        svd.Update()

    svd.SetSliceDimension(2)
    svd.SetEnergyFraction(1.5)
    with pytest.raises(RuntimeError, match="Rank selection"):
        svd.Update()


def test_cuda_backend_without_cuda_names_the_build(itk, rng):
    image = itk.image_from_array(low_rank_plus_noise(rng, (8, 8), rank=1, dtype=np.float32))
    svd = new_filter(itk, image)
    if svd.IsCUDABackendBuilt():
        pytest.skip("this build of the module has the CUDA backend")
    svd.SetInput(image)
    svd.SetBackend(itk.SVDLowRankReconstructionEnums.Backend_CUDA)
    with pytest.raises(RuntimeError, match="no CUDA backend"):
        svd.Update()


def test_nan_in_the_input_names_the_slice(itk, rng):
    array = low_rank_plus_noise(rng, (3, 8, 8), rank=1, dtype=np.float32)
    array[1, 4, 5] = np.nan
    with pytest.raises(RuntimeError, match=r"Input slice 1 along axis 2 \(z\) contains NaN or Inf"):
        itk.svd_low_rank_reconstruction_image_filter(itk.image_from_array(array), rank=1)


def test_colin27_matches_the_cpp_tool(itk, colin27_mha, reconstruct_tool, tmp_path):
    """One C++ call (apps/tool, any ITK) and one WrapITK call, same float input and parameters: same pixels."""
    volume = itk.imread(colin27_mha, itk.F)
    float_input = str(tmp_path / "ch2_float.mha")
    itk.imwrite(volume, float_input)
    subprocess.run(
        [reconstruct_tool, "--rank", "20", "--backend", "cpu", "--no-figure", float_input, str(tmp_path / "cpp.mha")],
        check=True,
        capture_output=True,
    )
    cpp = itk.imread(str(tmp_path / "cpp.mha"))
    assert itk.template(cpp)[1] == (itk.F, 3)

    python = itk.svd_low_rank_reconstruction_image_filter(volume, rank=20, backend=itk.SVDLowRankReconstructionEnums.Backend_CPU)

    np.testing.assert_array_equal(itk.array_view_from_image(python), itk.array_view_from_image(cpp))
    assert tuple(python.GetSpacing()) == tuple(cpp.GetSpacing())


def test_local_low_rank_denoising_of_a_vector_image_series(itk, rng):
    """The MP-PCA denoiser on a 3D itk.VectorImage series (one component per volume): a rank-3 signal that varies
    within a few voxels plus N(0, sigma^2) noise comes out closer to the signal, with sigma estimated."""
    sigma, shape, volumes = 2.0, (8, 10, 12), 30
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in shape), indexing="ij")
    weights = [1.0 + 0.2 * np.sin(0.3 * x + 0.2 * y), np.sin(1.9 * x + 0.4 * z), np.cos(2.1 * y + 0.5 * x)]
    t = np.arange(volumes, dtype=np.float64)
    clean = np.zeros(tuple(shape) + (volumes,))
    for weight in weights:
        profile = np.cos(rng.uniform(0.05, 0.4) * t + rng.uniform(0.0, 6.3)) + 0.3 * rng.standard_normal(volumes)
        clean += 12.0 * sigma * weight[..., None] * profile[None, None, None, :]
    noisy = (clean + sigma * rng.standard_normal(clean.shape)).astype(np.float32)

    series_type = itk.VectorImage[itk.F, 3]
    series = itk.image_from_array(noisy, is_vector=True)
    assert isinstance(series, series_type)
    denoise = itk.LocalLowRankDenoisingImageFilter[series_type, series_type].New(series)
    denoise.SetRankSelection(itk.SVDLowRankReconstructionEnums.RankSelection_MarchenkoPastur)
    denoise.SetBackend(itk.SVDLowRankReconstructionEnums.Backend_CPU)
    denoise.Update()

    result = itk.array_from_image(denoise.GetOutput())
    assert result.shape == noisy.shape
    rms = lambda a: float(np.sqrt(np.mean((np.asarray(a, np.float64) - clean) ** 2)))  # noqa: E731
    assert rms(result) < 0.7 * rms(noisy), (rms(result), rms(noisy))
    estimated = itk.array_from_image(denoise.GetNoiseSigmaOutput())
    assert abs(float(np.median(estimated)) / sigma - 1.0) < 0.2

    # In place (its base class, InPlaceImageFilter, wrapped by this module for VectorImage to VectorImage): the same
    # series in what was the input's buffer.
    in_place = itk.LocalLowRankDenoisingImageFilter[series_type, series_type].New(series)
    in_place.SetRankSelection(itk.SVDLowRankReconstructionEnums.RankSelection_MarchenkoPastur)
    in_place.SetBackend(itk.SVDLowRankReconstructionEnums.Backend_CPU)
    assert not in_place.GetInPlace()
    in_place.InPlaceOn()
    in_place.Update()
    np.testing.assert_array_equal(itk.array_from_image(in_place.GetOutput()), result)
