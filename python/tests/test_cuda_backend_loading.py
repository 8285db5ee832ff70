# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The CUDA backend is a library beside the extension, loaded on the first GPU call only.

`import` and a CPU run must load neither the backend nor the CUDA runtime, cuBLAS, cuSOLVER or the driver; where the
backend cannot be loaded, backend="auto" runs on the CPU and backend="cuda" fails, each with the reason. Each case
runs in a fresh interpreter, so that nothing is loaded before it starts.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from itk_svdlowrankreconstruction import _engine

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads ELF files and /proc/self/maps")

BACKEND_FILE = "libsvdlr_cuda.so"
CUDA_LIBRARIES = re.compile(r"lib(cuda|cudart|cublas|cublasLt|cusolver)\.so|" + re.escape(BACKEND_FILE))

DENOISE = textwrap.dedent(
    """
    import numpy as np
    from itk_svdlowrankreconstruction import local_low_rank_denoising_image_filter as denoise
    rng = np.random.default_rng(3)
    series = (100 + rng.standard_normal((12, 14, 16, 10))).astype(np.float32)
    """
)
LOADED_FILES = textwrap.dedent(
    """
    with open("/proc/self/maps") as maps:
        print("\\n".join(sorted({line.split()[-1] for line in maps if "/" in line})))
    """
)


def run_python(code: str, **environment: str) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, **environment},
    )
    assert completed.returncode == 0, completed.stderr
    return completed


def test_extension_does_not_link_cuda():
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    dynamic = subprocess.run(["readelf", "-d", _engine.__file__], capture_output=True, text=True, check=True).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed, dynamic
    assert not [line for line in needed if CUDA_LIBRARIES.search(line)], needed


@pytest.mark.parametrize("work", ["import", "cpu denoise"])
def test_import_and_cpu_run_load_no_cuda_library(work):
    code = "import itk_svdlowrankreconstruction\n"
    if work == "cpu denoise":
        code += DENOISE + "denoise(series, backend='cpu')\n"
    loaded = run_python(code + LOADED_FILES).stdout.splitlines()
    assert any("_engine" in path for path in loaded), loaded  # the check sees what the process loaded
    assert not [path for path in loaded if CUDA_LIBRARIES.search(os.path.basename(path))]


@pytest.mark.skipif(not _engine.cuda_backend_built(), reason="this build has no CUDA backend")
def test_backend_is_installed_beside_the_extension():
    assert (Path(_engine.__file__).parent / BACKEND_FILE).is_file()


@pytest.mark.skipif(not _engine.cuda_backend_built(), reason="this build has no CUDA backend")
def test_missing_backend_gives_its_reason(tmp_path):
    code = DENOISE + textwrap.dedent(
        """
        from itk_svdlowrankreconstruction import _engine
        usable, why = _engine.cuda_device_usable(0)
        assert not usable
        print("why:", why)
        expected = denoise(series, backend="cpu")
        assert np.array_equal(denoise(series, backend="auto"), expected)
        try:
            denoise(series, backend="cuda")
        except Exception as error:
            print("cuda:", error)
        else:
            raise AssertionError("backend='cuda' ran without the CUDA backend")
        """
    )
    output = run_python(code, SVDLR_CUDA_BACKEND=str(tmp_path / BACKEND_FILE)).stdout
    missing = BACKEND_FILE + " could not be loaded: .*No such file"
    assert re.search("why: " + missing, output), output
    assert re.search("cuda: .*CUDA backend requested but unavailable: " + missing, output), output
