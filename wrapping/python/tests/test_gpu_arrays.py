# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""CuPy arrays and PyTorch tensors come back as the same type, on the same device.

Skipped without CuPy/PyTorch or without a CUDA device. The result must equal the NumPy path's.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import matrices_with_gap, relative_error, truncated_svd
from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter as svdlr_filter


def cuda_devices(framework) -> int:
    try:
        if framework == "cupy":
            import cupy

            return cupy.cuda.runtime.getDeviceCount()
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # no driver, no runtime: no device
        return 0


@pytest.fixture
def cupy():
    module = pytest.importorskip("cupy")
    if cuda_devices("cupy") == 0:
        pytest.skip("CuPy finds no CUDA device")
    return module


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def torch_cuda(torch):
    if cuda_devices("torch") == 0:
        pytest.skip("PyTorch finds no CUDA device")
    return torch


@pytest.fixture
def volume(rng):
    return matrices_with_gap(rng, 5, 48, 40, 4).astype(np.float32)


def check_against_reference(result_host, volume, rank=4):
    for i in range(len(volume)):
        assert relative_error(result_host[i], truncated_svd(volume[i], rank)) <= 1e-5


def test_cupy_array_comes_back_as_cupy_on_its_device(cupy, volume):
    device = cupy.asarray(volume)
    result, details = svdlr_filter(device, rank=4, output_pixel_type="same", return_details=True)
    assert isinstance(result, cupy.ndarray)
    assert result.device.id == device.device.id and result.dtype == cupy.float32 and result.shape == volume.shape
    check_against_reference(cupy.asnumpy(result), volume)
    assert details.backend in ("cpu", "cuda")


def test_cupy_array_on_second_device_stays_there(cupy, volume):
    if cuda_devices("cupy") < 2:
        pytest.skip("needs two CUDA devices")
    with cupy.cuda.Device(1):
        device = cupy.asarray(volume)
    result = svdlr_filter(device, rank=4)
    assert result.device.id == 1
    check_against_reference(cupy.asnumpy(result), volume)


def test_cupy_slice_dimension_matches_numpy(cupy, rng):
    volume = rng.standard_normal((6, 10, 8)) + 2.0
    from_numpy = svdlr_filter(volume, rank=2, slice_dimension=0, output_pixel_type="same")
    from_cupy = svdlr_filter(cupy.asarray(volume), rank=2, slice_dimension=0, output_pixel_type="same")
    np.testing.assert_allclose(cupy.asnumpy(from_cupy), from_numpy, atol=1e-10)


def test_torch_cuda_tensor_comes_back_on_its_device(torch_cuda, volume):
    torch = torch_cuda
    tensor = torch.from_numpy(volume).to("cuda")
    result = svdlr_filter(tensor, rank=4)
    assert isinstance(result, torch.Tensor)
    assert result.device == tensor.device and result.dtype == torch.float32
    check_against_reference(result.cpu().numpy(), volume)


def test_torch_tensor_requiring_grad_is_accepted_and_result_is_detached(torch_cuda, volume):
    torch = torch_cuda
    tensor = torch.from_numpy(volume).to("cuda").requires_grad_(True)
    result = svdlr_filter(tensor, rank=4)
    assert not result.requires_grad


def test_torch_cpu_tensor_comes_back_as_cpu_tensor(torch, volume):
    tensor = torch.from_numpy(volume.copy())
    result = svdlr_filter(tensor, rank=4, output_pixel_type="same")
    assert isinstance(result, torch.Tensor) and result.device.type == "cpu"
    check_against_reference(result.numpy(), volume)
    np.testing.assert_array_equal(tensor.numpy(), volume)  # the input is untouched


def test_cuda_backend_on_cupy_input_runs_on_the_gpu_when_built(cupy, volume):
    from itk_svdlowrankreconstruction import cuda_device_usable

    if not cuda_device_usable(0):
        pytest.skip("this build cannot use the CUDA backend on device 0")
    result, details = svdlr_filter(cupy.asarray(volume), rank=4, backend="cuda", return_details=True)
    assert details.backend == "cuda"
    check_against_reference(cupy.asnumpy(result), volume)
