# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: test data files, generators with known answers, and the float64 reference."""

from __future__ import annotations

import os
from pathlib import Path

# The float64 references are many small SVDs: NumPy's threaded OpenBLAS only oversubscribes the cores
# there (8-20x slower on a busy 2-core machine). Set before NumPy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


def _test_data_paths() -> dict[str, str]:
    """test/test-data.env, the one file that says where the real test data is; the environment overrides it."""
    paths = {}
    for line in (REPO_ROOT / "test" / "test-data.env").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and key.isupper() and not line.startswith("#"):
            paths[key] = os.environ.get(key, value)
    return paths


_PATHS = _test_data_paths()
#: ITK's example data (Debian package insighttoolkit5-examples) and the Colin27 template (mricron-data).
BRAIN_SLICE_PNG = os.environ.get(
    "SVDLR_BRAIN_SLICE_PNG", _PATHS["SVDLR_ITK_EXAMPLE_DATA_DIR"] + "/BrainProtonDensitySlice.png"
)
COLIN27_NII = _PATHS["SVDLR_COLIN27_NII"]


def skip_or_fail(message: str) -> None:
    """Skips, or fails when SVDLR_REQUIRE_TEST_DATA=1 (CI sets it, so that missing data cannot pass silently)."""
    if os.environ.get("SVDLR_REQUIRE_TEST_DATA") == "1":
        pytest.fail(message + " (SVDLR_REQUIRE_TEST_DATA=1)")
    pytest.skip(message)


@pytest.fixture
def itk():
    """The `itk` module (from the itk wheels)."""
    try:
        import itk as module
    except ImportError:
        skip_or_fail("itk is not installed: pip install itk")
    return module


def _data_file(path: str, package: str) -> str:
    if not os.path.isfile(path):
        skip_or_fail(f"{path} is missing: install the Debian package {package}")
    return path


@pytest.fixture
def brain_slice_png() -> str:
    return _data_file(BRAIN_SLICE_PNG, "insighttoolkit5-examples")


@pytest.fixture
def colin27_nii() -> str:
    return _data_file(COLIN27_NII, "mricron-data")


#: The seed of `rng`: fixed, so that every run draws the data the Python tests' tolerances were set on.
#: SVDLR_TEST_SEED draws other data (as it replays a seed of the C++ tests); a failure's output shows the seed.
DEFAULT_SEED = 20261122


@pytest.fixture
def rng() -> np.random.Generator:
    seed = int(os.environ.get("SVDLR_TEST_SEED", DEFAULT_SEED))
    print(f"SVDLR_TEST_SEED={seed}")  # pytest shows a failing test's captured output
    return np.random.default_rng(seed)


def truncated_svd(matrices: np.ndarray, rank: int) -> np.ndarray:
    """The float64 reference: the rank-`rank` truncated SVD of every matrix of a (..., rows, cols) array."""
    u, s, vt = np.linalg.svd(np.asarray(matrices, dtype=np.float64), full_matrices=False)
    return (u[..., :rank] * s[..., None, :rank]) @ vt[..., :rank, :]


def matrices_with_gap(rng: np.random.Generator, count: int, rows: int, cols: int, rank: int) -> np.ndarray:
    """`count` random rows x cols matrices whose singular values drop from >= 10 to <= 1 after `rank`.

    The gap makes the rank-`rank` subspace well conditioned, so a backward-stable SVD reproduces the
    reference reconstruction to within a small multiple of the working precision.
    """
    p = min(rows, cols)
    values = np.concatenate([np.linspace(20.0, 10.0, rank), np.linspace(1.0, 0.01, p - rank)])
    u, _ = np.linalg.qr(rng.standard_normal((count, rows, p)))
    v, _ = np.linalg.qr(rng.standard_normal((count, cols, p)))
    return (u * values[None, None, :]) @ np.swapaxes(v, 1, 2)


def relative_error(result: np.ndarray, reference: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(result, np.float64) - reference) / np.linalg.norm(reference))


@pytest.fixture
def expect_ctrl_c_stops():
    """A check that `run(progress)` stops at Ctrl-C: its progress callback presses Ctrl-C at its first call, and the
    engine must raise KeyboardInterrupt without calling it again. Python's own Ctrl-C handler is in place for the
    test, whatever an earlier test's library (a Dask cluster, a worker pool) left installed, and put back after."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach Python only on the main thread")

    def check(run):
        calls = []

        def press_ctrl_c(done, total):
            calls.append(done)
            if len(calls) == 1:
                signal.raise_signal(signal.SIGINT)  # to this thread: os.kill may pick another thread

        with pytest.raises(KeyboardInterrupt):
            run(press_ctrl_c)
        assert len(calls) == 1, "the engine went on after Ctrl-C"

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield check
    signal.signal(signal.SIGINT, previous)
