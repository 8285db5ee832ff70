# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The extension module `_engine`: accuracy, options, outputs, errors, progress and Ctrl-C."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from conftest import matrices_with_gap, relative_error, truncated_svd
from itk_svdlowrankreconstruction import _engine


@pytest.mark.parametrize(("dtype", "tolerance"), [(np.float32, 1e-5), (np.float64, 1e-10)])
@pytest.mark.parametrize(("rows", "cols"), [(40, 40), (64, 24), (24, 64)])
def test_matches_float64_reference_on_matrices_with_spectral_gap(rng, dtype, tolerance, rows, cols):
    rank = 5
    matrices = matrices_with_gap(rng, 6, rows, cols, rank).astype(dtype)
    result, details = _engine.reconstruct(matrices, rank=rank, backend="cpu")
    assert result.dtype == dtype and result.shape == matrices.shape
    for i in range(len(matrices)):
        assert relative_error(result[i], truncated_svd(matrices[i], rank)) <= tolerance
    np.testing.assert_array_equal(details["ranks"], rank)


def test_two_dimensional_input_is_one_matrix(rng):
    matrix = matrices_with_gap(rng, 1, 30, 20, 3)[0]
    result, details = _engine.reconstruct(matrix, rank=3, backend="cpu")
    assert result.shape == (30, 20)
    assert details["singular_values"].shape == (1, 20)
    assert relative_error(result, truncated_svd(matrix, 3)) <= 1e-10


def test_singular_values_are_all_values_descending(rng):
    matrices = rng.standard_normal((3, 12, 9))
    _, details = _engine.reconstruct(matrices, rank=2, backend="cpu")
    np.testing.assert_allclose(details["singular_values"], np.linalg.svd(matrices, compute_uv=False), rtol=1e-12)
    assert details["singular_values"].dtype == np.float64 and details["ranks"].dtype == np.int64
    assert details["backend"] == "cpu"
    # Only the subspace solver's check redoes slices; the CPU's exact SVD never does.
    assert details["slices_redone"] == 0 and details["redone_slices"].shape == (0,)
    assert details["redone_slices"].dtype == np.int64


def test_rank_above_min_dimension_is_clamped(rng):
    matrices = rng.standard_normal((2, 7, 5))
    result, details = _engine.reconstruct(matrices, rank=50, backend="cpu")
    np.testing.assert_array_equal(details["ranks"], 5)
    np.testing.assert_allclose(result, matrices, atol=1e-12)


def test_energy_fraction_keeps_fewest_triplets_reaching_the_fraction(rng):
    values = np.array([8.0, 4.0, 2.0, 1.0, 0.5])  # energies 64, 16, 4, 1, 0.25 of 85.25
    u, _ = np.linalg.qr(rng.standard_normal((9, 5)))
    v, _ = np.linalg.qr(rng.standard_normal((6, 5)))
    matrix = (u * values) @ v.T
    for fraction, expected in [(0.5, 1), (0.8, 2), (0.95, 3), (0.99, 4), (1.0, 5)]:
        result, details = _engine.reconstruct(matrix, energy_fraction=fraction, backend="cpu")
        assert details["ranks"][0] == expected, fraction
        assert relative_error(result, truncated_svd(matrix, expected)) <= 1e-10


def test_default_policy_is_the_shared_default_rank(rng):
    # svdlr/Defaults.h: the same default as the C++ filter and the command-line tool.
    assert _engine.DEFAULT_RANK == 20
    _, details = _engine.reconstruct(rng.standard_normal((2, 40, 30)), backend="cpu")
    np.testing.assert_array_equal(details["ranks"], _engine.DEFAULT_RANK)


def test_non_contiguous_input_is_copied_not_rejected(rng):
    matrices = rng.standard_normal((4, 20, 10))[:, ::2, :]
    result, _ = _engine.reconstruct(matrices, rank=2, backend="cpu")
    np.testing.assert_allclose(result, truncated_svd(matrices, 2), atol=1e-10)


def test_read_only_input_is_accepted(rng):
    matrices = rng.standard_normal((2, 8, 8))
    matrices.flags.writeable = False
    result, _ = _engine.reconstruct(matrices, rank=2, backend="cpu")
    np.testing.assert_allclose(result, truncated_svd(matrices, 2), atol=1e-10)


def test_out_receives_result_and_may_be_the_input(rng):
    matrices = rng.standard_normal((3, 10, 8))
    expected = truncated_svd(matrices, 2)
    out = np.empty_like(matrices)
    result, _ = _engine.reconstruct(matrices, rank=2, backend="cpu", out=out)
    assert result is out
    np.testing.assert_allclose(out, expected, atol=1e-10)
    in_place, _ = _engine.reconstruct(matrices, rank=2, backend="cpu", out=matrices)
    assert in_place is matrices
    np.testing.assert_allclose(matrices, expected, atol=1e-10)


@pytest.mark.parametrize(
    "out",
    [np.empty((3, 10, 8), np.float32), np.empty((3, 8, 10)), np.empty((3, 10, 16))[:, :, ::2]],
    ids=["wrong-dtype", "wrong-shape", "not-c-contiguous"],
)
def test_unsuitable_out_is_rejected(rng, out):
    with pytest.raises((TypeError, ValueError)):
        _engine.reconstruct(rng.standard_normal((3, 10, 8)), rank=2, out=out)


def test_partially_overlapping_out_is_value_error(rng):
    buffer = rng.standard_normal((4, 6, 6))
    with pytest.raises(ValueError, match="overlap") as raised:
        _engine.reconstruct(buffer[:3], rank=1, backend="cpu", out=buffer[1:])
    assert raised.value.error_code == "InvalidArgument"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rank": 0}, "rank must be at least 1"),
        ({"rank": -3}, "rank must be at least 1"),
        ({"rank": 2, "energy_fraction": 0.5}, "not both"),
        ({"energy_fraction": 0.0}, "energy fraction"),
        ({"energy_fraction": 1.5}, "energy fraction"),
        ({"energy_fraction": float("nan")}, "energy fraction"),
        ({"backend": "gpu"}, "backend"),
        ({"device_id": -1}, "device_id"),
        ({"max_matrices_per_batch": -1}, "max_matrices_per_batch"),
        ({"threads": -1}, "threads"),
    ],
)
def test_invalid_options_are_value_errors(rng, options, message):
    with pytest.raises(ValueError, match=message):
        _engine.reconstruct(rng.standard_normal((2, 5, 5)), **options)


@pytest.mark.parametrize("shape", [(0, 4, 4), (3, 0, 4), (4, 0)])
def test_empty_input_is_value_error(shape):
    with pytest.raises(ValueError, match="empty"):
        _engine.reconstruct(np.ones(shape), rank=1)


@pytest.mark.parametrize("shape", [(5,), (2, 2, 3, 3)])
def test_input_that_is_not_2d_or_3d_is_value_error(shape):
    with pytest.raises(ValueError, match="shape"):
        _engine.reconstruct(np.ones(shape), rank=1)


def test_unsupported_dtype_is_type_error():
    with pytest.raises(TypeError, match="float32 or float64"):
        _engine.reconstruct(np.ones((2, 4, 4), np.int32), rank=1)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_value_error_naming_the_matrix(rng, bad):
    matrices = rng.standard_normal((4, 6, 5)).astype(np.float32)
    matrices[2, 3, 1] = bad
    with pytest.raises(ValueError, match="NaN or Inf") as raised:
        _engine.reconstruct(matrices, rank=2, backend="cpu")
    assert raised.value.error_code == "NonFiniteInput"
    assert raised.value.matrix_index == 2


def test_cuda_backend_without_usable_device_is_runtime_error(rng):
    if _engine.cuda_device_usable(0)[0]:
        pytest.skip("a usable CUDA device is present")
    with pytest.raises(RuntimeError) as raised:
        _engine.reconstruct(rng.standard_normal((2, 5, 5)), rank=1, backend="cuda")
    assert raised.value.error_code == "BackendUnavailable"


def test_auto_backend_runs_somewhere_and_says_where(rng):
    _, details = _engine.reconstruct(rng.standard_normal((2, 5, 5)), rank=1, backend="auto")
    # Without a device: the CPU. With one, a job this small may stay on the CPU while the GPU is cold in this
    # process (Auto's cold-start rule, docs/cuda.md), and goes to the GPU once it is warm.
    expected = {"cpu", "cuda"} if _engine.cuda_device_usable(0)[0] else {"cpu"}
    assert details["backend"] in expected
    assert isinstance(details["notes"], str)


def test_cuda_device_usable_explains_why_not():
    usable, why = _engine.cuda_device_usable(0)
    assert usable or why
    if not _engine.cuda_backend_built():
        assert not usable


def test_progress_reports_every_batch_up_to_the_total(rng):
    calls = []
    _engine.reconstruct(
        rng.standard_normal((7, 6, 6)),
        rank=1,
        backend="cpu",
        max_matrices_per_batch=2,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls, "progress was never called"
    assert all(total == 7 for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert calls[-1][0] == 7


def test_exception_in_progress_stops_the_work_and_propagates(rng):
    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop(done)

    with pytest.raises(Stop):
        _engine.reconstruct(
            rng.standard_normal((6, 6, 6)), rank=1, backend="cpu", max_matrices_per_batch=1, progress=progress
        )


def test_ctrl_c_during_the_work_raises_keyboard_interrupt(rng, expect_ctrl_c_stops):
    expect_ctrl_c_stops(
        lambda progress: _engine.reconstruct(
            rng.standard_normal((6, 6, 6)), rank=1, backend="cpu", max_matrices_per_batch=1, progress=progress
        )
    )


def test_engine_releases_the_gil_while_it_works(rng):
    # While one thread is inside the engine, this thread keeps running Python code. Were the GIL held,
    # this loop would stall for the whole engine call.
    matrices = rng.standard_normal((24, 160, 160))
    timing = {}

    def work():
        start = time.perf_counter()
        _engine.reconstruct(matrices, rank=3, backend="cpu", threads=1)
        timing["engine"] = time.perf_counter() - start

    worker = threading.Thread(target=work)
    worker.start()
    longest_stall, last = 0.0, time.perf_counter()
    while worker.is_alive():
        now = time.perf_counter()
        longest_stall, last = max(longest_stall, now - last), now
    worker.join()
    if timing["engine"] < 0.1:
        pytest.skip(f"the engine call took only {timing['engine']:.3f} s, too short to tell")
    assert longest_stall < 0.5 * timing["engine"]


@pytest.mark.parametrize(("shape", "volumes", "requested", "used"), [
    ((40, 40, 40), 65, None, [5, 5, 5]),  # the least odd cube of at least 65 voxels
    ((40, 40, 40), 200, None, [7, 7, 7]),
    ((40, 40, 3), 65, None, [5, 5, 3]),  # a thin image: the short axis cut to 3, 75 voxels already enough
    ((10, 10, 1), 65, None, [9, 9, 1]),  # cut to 1: the others grow two at a time, to 81 voxels
    ((40, 40, 40), 65, (3, 5, 7), [3, 5, 7]),  # a patch given is the patch used
])
def test_patch_size_used_is_the_engines_rule_in_array_order(shape, volumes, requested, used):
    assert _engine.patch_size_used(list(shape), volumes, None if requested is None else list(requested)) == used


def test_patch_size_used_refuses_what_is_not_a_series():
    with pytest.raises(ValueError, match="patch_size_used"):
        _engine.patch_size_used([10, 10], 5)
    with pytest.raises(ValueError, match="patch_size_used"):
        _engine.patch_size_used([10, 10, 10], 0)

