# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the WrapITK suite, run with the Python of an ITK built with ITK_WRAP_PYTHON and this module's
wrapping (.ci/build-itk-wrapping.sh puts that ITK's Wrapping/Generators/Python on PYTHONPATH). The test data
paths and the float64 reference are the nanobind suite's (python/tests/conftest.py), loaded from there."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see python/tests/conftest.py

import numpy as np  # noqa: E402
import pytest  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("svdlr_python_conftest", REPO_ROOT / "python" / "tests" / "conftest.py")
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)
truncated_svd = _shared.truncated_svd
skip_or_fail = _shared.skip_or_fail
COLIN27_NII = _shared.COLIN27_NII


@pytest.fixture(scope="session")
def itk():
    """ITK's own `itk` package, with the filter wrapped: failing here is a failed build, not a reason to skip."""
    import itk as module

    assert hasattr(module, "SVDLowRankReconstructionImageFilter"), (
        f"itk from {module.__file__} has no SVDLowRankReconstructionImageFilter: the module's wrapping is not built"
    )
    return module


@pytest.fixture(scope="session")
def colin27_mha(itk, tmp_path_factory) -> str:
    """Colin27 (unsigned char) as a MetaImage file: the wrapped ITK reads MetaImage, not NIfTI (NIfTI's ITK module
    needs ITKTransform, whose wrapping .ci/build-itk-wrapping.sh leaves out). nibabel reads the NIfTI file; the
    geometry goes from NIfTI's RAS to ITK's LPS as ITK's NIfTI reader does it."""
    if not os.path.isfile(COLIN27_NII):
        skip_or_fail(f"{COLIN27_NII} is missing: install the Debian package mricron-data")
    nibabel = pytest.importorskip("nibabel")
    nifti = nibabel.load(COLIN27_NII)
    voxels = np.asarray(nifti.dataobj)  # [x, y, z], the file's own type
    assert voxels.dtype == np.uint8 and voxels.ndim == 3
    image = itk.image_from_array(np.ascontiguousarray(voxels.T))  # ITK's NumPy order [z, y, x]
    spacing = np.asarray(nifti.header.get_zooms()[:3], np.float64)
    ras_to_lps = np.diag([-1.0, -1.0, 1.0])
    image.SetSpacing(spacing.tolist())
    image.SetOrigin((ras_to_lps @ nifti.affine[:3, 3]).tolist())
    image.SetDirection(itk.matrix_from_array(ras_to_lps @ nifti.affine[:3, :3] / spacing))
    path = str(tmp_path_factory.mktemp("colin27") / "ch2.mha")
    itk.imwrite(image, path)
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261123)


@pytest.fixture
def reconstruct_tool() -> str:
    """The C++ command-line tool (apps/tool), built against any ITK: the same filter, called from C++."""
    path = os.environ.get("SVDLR_RECONSTRUCT_TOOL") or str(REPO_ROOT / "build" / "apps" / "SVDLowRankReconstructImage")
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    found = shutil.which("SVDLowRankReconstructImage")
    if found is None:
        skip_or_fail("SVDLowRankReconstructImage is not built (set SVDLR_RECONSTRUCT_TOOL to its path)")
    return found
