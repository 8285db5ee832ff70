# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The `solver` keyword: exact or subspace, what the details report, and release_cuda_resources.

The CPU backend is always exact. The GPU tests skip without a usable CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import truncated_svd
from itk_svdlowrankreconstruction import _engine, release_cuda_resources
from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter as svdlr_filter

SOLVERS = ("auto", "exact", "subspace")


def needs_gpu():
    if not _engine.cuda_device_usable(0)[0]:
        pytest.skip("needs the CUDA backend and a usable CUDA device")


def decaying_spectrum(rng, count, rows, cols):
    """float32 matrices whose singular values decay smoothly, with no gap: like MRI slices to an SVD."""
    p = min(rows, cols)
    values = 100.0 / (1.0 + np.arange(p)) ** 1.2
    u, _ = np.linalg.qr(rng.standard_normal((count, rows, p)))
    v, _ = np.linalg.qr(rng.standard_normal((count, cols, p)))
    return ((u * values[None, None, :]) @ np.swapaxes(v, 1, 2)).astype(np.float32)


def optimality_ratio(matrix, result, rank):
    """||A - R||_F / ||A - A_k||_F, against NumPy's float64 SVD."""
    a = np.asarray(matrix, np.float64)
    return np.linalg.norm(a - np.asarray(result, np.float64)) / np.linalg.norm(a - truncated_svd(a, rank))


@pytest.mark.parametrize("solver", SOLVERS)
def test_cpu_backend_is_exact_whatever_the_solver(rng, solver):
    matrices = rng.standard_normal((4, 12, 9)).astype(np.float32)
    _, details = _engine.reconstruct(matrices, rank=2, backend="cpu", solver=solver)
    assert details["solver"] == "exact"
    assert not np.isnan(details["singular_values"]).any()
    np.testing.assert_allclose(details["singular_values"], np.linalg.svd(matrices, compute_uv=False), rtol=1e-5)


@pytest.mark.parametrize("solver", SOLVERS)
def test_filter_accepts_every_solver_and_reports_exact_on_the_cpu(rng, solver):
    volume = rng.standard_normal((5, 12, 9)) + 3.0
    _, details = svdlr_filter(volume, rank=2, backend="cpu", solver=solver, return_details=True)
    assert details.solver == "exact"
    assert details.singular_values.shape == (5, 9) and not np.isnan(details.singular_values).any()


@pytest.mark.parametrize("solver", ["fast", "Exact", "", None])
def test_unknown_solver_is_value_error(rng, solver):
    matrices = rng.standard_normal((2, 5, 5))
    with pytest.raises((ValueError, TypeError), match="solver"):
        _engine.reconstruct(matrices, rank=1, solver=solver)
    with pytest.raises(ValueError, match="solver must be one of"):
        svdlr_filter(matrices, rank=1, solver=solver)


def test_engine_names_the_accepted_solvers(rng):
    with pytest.raises(ValueError, match='solver must be auto, exact or subspace, got "fast"'):
        _engine.reconstruct(rng.standard_normal((2, 5, 5)), rank=1, solver="fast")


@pytest.mark.parametrize("backend", ["cpu", "auto"])
def test_subspace_solver_with_energy_fraction_is_value_error(rng, backend):
    matrices = rng.standard_normal((2, 6, 6))
    with pytest.raises(ValueError, match="subspace.*needs a fixed rank"):
        _engine.reconstruct(matrices, energy_fraction=0.9, backend=backend, solver="subspace")
    with pytest.raises(ValueError, match="subspace.*needs a fixed rank"):
        svdlr_filter(matrices, energy_fraction=0.9, backend=backend, solver="subspace")


def test_release_cuda_resources_can_be_called_any_time(rng):
    release_cuda_resources()  # nothing cached yet (or no CUDA): a no-op
    matrices = rng.standard_normal((3, 8, 8)).astype(np.float32)
    first, _ = _engine.reconstruct(matrices, rank=2)
    release_cuda_resources()
    release_cuda_resources()
    second, _ = _engine.reconstruct(matrices, rank=2)  # the next run sets its resources up again
    np.testing.assert_allclose(second, first, rtol=0, atol=1e-4)


@pytest.mark.parametrize("kind", ["decaying", "noise"])
def test_auto_solver_on_the_gpu_takes_the_subspace_solver_for_float32_batches(rng, kind):
    needs_gpu()
    count, rows, cols, rank = 32, 64, 48, 8
    if kind == "decaying":
        volume = decaying_spectrum(rng, count, rows, cols)
    else:
        volume = (rng.standard_normal((count, rows, cols)) + 3.0).astype(np.float32)
    result, details = svdlr_filter(volume, rank=rank, return_details=True)
    assert details.backend == "cuda" and details.solver == "subspace"

    # Only the leading w singular values were computed, rank < w < min(rows, cols); NaN after them.
    values = details.singular_values
    assert values.shape == (count, cols)
    computed = np.isfinite(values).sum(axis=1)
    w = int(computed[0])
    assert (computed == w).all() and rank < w < cols
    assert not np.isnan(values[:, :w]).any() and np.isnan(values[:, w:]).all()
    reference = np.linalg.svd(volume.astype(np.float64), compute_uv=False)
    np.testing.assert_allclose(values[:, :rank], reference[:, :rank], rtol=1e-4)

    for i in range(count):
        assert optimality_ratio(volume[i], result[i], rank) <= 1.0 + 1e-4, f"slice {i}"


def test_exact_solver_on_the_gpu_computes_every_singular_value(rng):
    needs_gpu()
    volume = decaying_spectrum(rng, 32, 64, 48)
    _, details = _engine.reconstruct(volume, rank=8, backend="cuda", solver="exact")
    assert details["backend"] == "cuda" and details["solver"] == "exact"
    assert not np.isnan(details["singular_values"]).any()


def test_subspace_solver_on_the_gpu_keeps_float64_data_within_bounds(rng):
    needs_gpu()
    volume = decaying_spectrum(rng, 4, 64, 48).astype(np.float64)
    result, details = _engine.reconstruct(volume, rank=8, backend="cuda", solver="subspace")
    assert details["solver"] == "subspace"
    for i in range(len(volume)):
        assert optimality_ratio(volume[i], result[i], 8) <= 1.0 + 1e-4, f"matrix {i}"
