# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""`import itk` and the extension live in one process, in either import order.

The extension links the ITK-free engine only; the `itk` wheels bring their own ITK, LAPACK-like
(vnl/netlib) and threading libraries. Each order runs in a fresh interpreter, so that neither library
is already loaded when the other one comes in.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

IMPORT_ITK = "import itk\n"
IMPORT_EXTENSION = "from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter as svdlr_filter\n"

WORK = textwrap.dedent(
    """
    import numpy as np
    rng = np.random.default_rng(1)
    array = (rng.standard_normal((4, 30, 20)) + 5.0).astype(np.float32)
    image = itk.image_from_array(array)
    # ITK's own filters, before and after the extension has run
    smoothed = itk.median_image_filter(image, radius=1)
    result = svdlr_filter(smoothed, rank=3)
    again = itk.median_image_filter(result, radius=1)
    u, s, vt = np.linalg.svd(itk.array_from_image(smoothed).astype(np.float64), full_matrices=False)
    reference = (u[..., :3] * s[..., None, :3]) @ vt[..., :3, :]
    error = np.linalg.norm(itk.array_from_image(result) - reference) / np.linalg.norm(reference)
    assert error < 1e-5, error
    assert itk.array_from_image(again).shape == array.shape
    print("ok")
    """
)


@pytest.mark.parametrize("first", ["itk", "extension"])
def test_itk_and_extension_in_one_process(itk, first):
    imports = IMPORT_ITK + IMPORT_EXTENSION if first == "itk" else IMPORT_EXTENSION + IMPORT_ITK
    completed = subprocess.run(
        [sys.executable, "-c", imports + WORK], capture_output=True, text=True, timeout=300, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().endswith("ok")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the ELF dynamic section with ldd and nm")
def test_extension_neither_links_itk_nor_exports_engine_symbols():
    import shutil

    from itk_svdlowrankreconstruction import _engine

    if shutil.which("ldd") is None or shutil.which("nm") is None:
        pytest.skip("ldd or nm is not installed")
    libraries = subprocess.run(["ldd", _engine.__file__], capture_output=True, text=True, check=True).stdout
    # The names, not the paths they resolve to: a wheel's vendored OpenBLAS is found through this package's folder.
    names = [line.split()[0] for line in libraries.splitlines() if line.strip()]
    assert [name for name in names if "itk" in name.lower()] == [], libraries
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", _engine.__file__], capture_output=True, text=True, check=True
    ).stdout
    exported = [line.split()[-1] for line in symbols.splitlines() if line.strip()]
    assert [name for name in exported if "svdlr" in name.lower()] == []
