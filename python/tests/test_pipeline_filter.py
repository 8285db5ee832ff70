# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""svd_low_rank_reconstruction_pipeline_filter: the function as an itk.PyImageFilter stage of an ITK pipeline (the
`itk` wheels), and one Python call against one C++ call (the tool) on Colin27."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import REPO_ROOT, truncated_svd

from itk_svdlowrankreconstruction import (
    svd_low_rank_reconstruction_image_filter,
    svd_low_rank_reconstruction_pipeline_filter,
)


def low_rank_volume(rng, shape=(4, 30, 22), rank=3):
    u = rng.standard_normal((shape[0], shape[1], rank))
    v = rng.standard_normal((shape[0], rank, shape[2]))
    return (100.0 * (u @ v) + 5.0 * rng.standard_normal(shape)).astype(np.float32)


def relative_error(result, expected):
    return float(np.linalg.norm(np.asarray(result, np.float64) - expected) / np.linalg.norm(expected))


def test_stage_runs_inside_a_pipeline_and_reruns_when_modified(itk, rng):
    array = low_rank_volume(rng)
    image = itk.image_from_array(array)
    image.SetSpacing((0.7, 0.8, 2.0))
    image_type = itk.Image[itk.F, 3]
    stage = svd_low_rank_reconstruction_pipeline_filter(image_type, input=image, rank=3, backend="cpu")
    cast = itk.CastImageFilter[image_type, itk.Image[itk.SS, 3]].New(stage)
    cast.Update()

    output = stage.GetOutput()
    assert tuple(output.GetSpacing()) == (0.7, 0.8, 2.0)
    reconstruction = itk.array_from_image(output)
    np.testing.assert_array_equal(
        reconstruction, itk.array_view_from_image(svd_low_rank_reconstruction_image_filter(image, rank=3, backend="cpu"))
    )
    assert relative_error(reconstruction, truncated_svd(array, 3)) < 2e-5
    np.testing.assert_array_equal(itk.array_view_from_image(cast.GetOutput()), np.trunc(reconstruction).astype(np.int16))
    assert list(stage.svdlr_details.ranks) == [3, 3, 3, 3]

    stage.svdlr_parameters["rank"] = 1
    stage.Modified()
    cast.Update()
    assert relative_error(itk.array_view_from_image(stage.GetOutput()), truncated_svd(array, 1)) < 2e-5
    assert list(stage.svdlr_details.ranks) == [1, 1, 1, 1]


def test_stage_runs_when_only_the_filter_downstream_is_kept(itk, rng):
    array = low_rank_volume(rng, shape=(2, 12, 10))
    image_type = itk.Image[itk.F, 3]
    extract = itk.ExtractImageFilter[image_type, image_type].New(
        svd_low_rank_reconstruction_pipeline_filter(image_type, input=itk.image_from_array(array), rank=2)
    )
    extract.SetExtractionRegion(itk.ImageRegion[3]([0, 0, 1], [10, 12, 1]))
    extract.Update()
    assert relative_error(itk.array_view_from_image(extract.GetOutput()), truncated_svd(array, 2)[1:2]) < 2e-5


def test_stage_takes_an_integer_input_and_a_double_output(itk, rng):
    array = np.rint(np.abs(low_rank_volume(rng, shape=(3, 16, 12)))).clip(0, 65535).astype(np.uint16)
    stage = svd_low_rank_reconstruction_pipeline_filter(
        itk.Image[itk.US, 3], itk.Image[itk.D, 3], input=itk.image_from_array(array), rank=2
    )
    stage.Update()
    result = itk.array_view_from_image(stage.GetOutput())
    assert result.dtype == np.float64
    assert relative_error(result, truncated_svd(array, 2)) < 1e-12


def test_stage_refuses_bad_parameters_and_types_when_built(itk):
    image_type = itk.Image[itk.F, 2]
    with pytest.raises(ValueError):
        svd_low_rank_reconstruction_pipeline_filter(image_type, rank=0)
    with pytest.raises(ValueError, match="either rank or energy_fraction"):
        svd_low_rank_reconstruction_pipeline_filter(image_type, rank=2, energy_fraction=0.5)
    with pytest.raises(TypeError, match="unknown parameter"):
        svd_low_rank_reconstruction_pipeline_filter(image_type, rnak=2)
    with pytest.raises(TypeError, match="output image type"):
        svd_low_rank_reconstruction_pipeline_filter(image_type, itk.Image[itk.UC, 2], rank=2)


def test_error_during_the_run_reaches_update_and_is_kept(itk, rng):
    array = low_rank_volume(rng, shape=(2, 8, 8))
    array[1, 3, 3] = np.nan
    stage = svd_low_rank_reconstruction_pipeline_filter(itk.Image[itk.F, 3], input=itk.image_from_array(array), rank=1)
    with pytest.raises(RuntimeError):
        stage.Update()
    assert isinstance(stage.svdlr_error, ValueError)
    assert "slice 1 along axis 2" in str(stage.svdlr_error)


def _reconstruct_tool():
    path = os.environ.get("SVDLR_RECONSTRUCT_TOOL") or str(REPO_ROOT / "build" / "apps" / "SVDLowRankReconstructImage")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else shutil.which("SVDLowRankReconstructImage")


def test_python_and_the_cpp_tool_give_the_same_pixels_on_colin27(itk, colin27_nii, tmp_path):
    tool = _reconstruct_tool()
    if tool is None:
        pytest.skip("SVDLowRankReconstructImage is not built (set SVDLR_RECONSTRUCT_TOOL to its path)")
    volume = itk.imread(colin27_nii, itk.F)
    itk.imwrite(volume, str(tmp_path / "ch2_float.nii.gz"))
    subprocess.run(
        [tool, "--rank", "20", "--backend", "cpu", "--no-figure", "ch2_float.nii.gz", "cpp.nii.gz"],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    cpp = itk.array_view_from_image(itk.imread(str(tmp_path / "cpp.nii.gz")))

    function = svd_low_rank_reconstruction_image_filter(volume, rank=20, backend="cpu")
    stage = svd_low_rank_reconstruction_pipeline_filter(itk.Image[itk.F, 3], input=volume, rank=20, backend="cpu")
    stage.Update()

    assert cpp.dtype == np.float32
    np.testing.assert_array_equal(itk.array_view_from_image(function), cpp)
    np.testing.assert_array_equal(itk.array_view_from_image(stage.GetOutput()), cpp)
