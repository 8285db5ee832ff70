# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""CuPy arrays and PyTorch tensors come back as the same type, on the same device.

Skipped without CuPy/PyTorch or without a CUDA device. The result must equal the NumPy path's. With the
CUDA backend built, device data must stay on the device: no host copy, the engine's device entry point.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import matrices_with_gap, relative_error, truncated_svd
from itk_svdlowrankreconstruction import _engine, _filter
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
def on_device_only(monkeypatch):
    """Needs the zero-copy path (CUDA backend built, device 0 usable) and makes any host round trip fail."""
    if not _engine.DEVICE_INPUT_SUPPORTED or not _engine.cuda_device_usable(0)[0]:
        pytest.skip("this build cannot work on device arrays where they are")

    host_path = _filter.to_host

    def no_host_copy(data):
        if isinstance(data, np.ndarray):
            return host_path(data)  # the NumPy references the tests compare with
        raise AssertionError("device data was copied to the host")

    monkeypatch.setattr(_filter, "to_host", no_host_copy)


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


def test_device_input_is_supported_exactly_when_the_cuda_backend_is_built():
    assert _engine.DEVICE_INPUT_SUPPORTED == _engine.cuda_backend_built()


def test_cupy_array_stays_on_the_device(cupy, volume, on_device_only):
    device = cupy.asarray(volume)
    result, details = svdlr_filter(device, rank=4, output_pixel_type="same", return_details=True)
    assert details.backend == "cuda"
    assert isinstance(result, cupy.ndarray) and result.device.id == device.device.id
    attributes = cupy.cuda.runtime.pointerGetAttributes(result.data.ptr)
    assert attributes.type == cupy.cuda.runtime.memoryTypeDevice
    check_against_reference(cupy.asnumpy(result), volume)
    np.testing.assert_array_equal(cupy.asnumpy(device), volume)  # the input is untouched


def test_cupy_slices_along_every_axis_and_integer_output_match_numpy(cupy, rng, on_device_only):
    volume = (rng.standard_normal((6, 10, 8)) * 40.0 + 100.0).astype(np.float32)
    for axis in (0, 1, 2):
        for pixel_type in ("same", np.uint8, np.float64):
            from_cupy = svdlr_filter(
                cupy.asarray(volume), rank=2, slice_dimension=axis, output_pixel_type=pixel_type, backend="cuda"
            )
            from_numpy = svdlr_filter(
                volume, rank=2, slice_dimension=axis, output_pixel_type=pixel_type, backend="cuda"
            )
            assert isinstance(from_cupy, cupy.ndarray) and from_cupy.dtype == from_numpy.dtype
            assert from_cupy.flags.c_contiguous and from_cupy.shape == volume.shape
            tolerance = 1 if pixel_type is np.uint8 else 1e-3
            np.testing.assert_allclose(cupy.asnumpy(from_cupy), from_numpy, rtol=1e-5, atol=tolerance)


def test_engine_writes_cupy_out_in_place_on_the_callers_stream(cupy, volume):
    if not _engine.DEVICE_INPUT_SUPPORTED or not _engine.cuda_device_usable(0)[0]:
        pytest.skip("this build cannot work on device arrays where they are")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        matrices = cupy.asarray(volume)
        expected, _ = _engine.reconstruct(volume.copy(), rank=4, backend="cuda")
        out = cupy.empty_like(matrices)
        result, details = _engine.reconstruct(matrices, rank=4, out=out, stream=stream.ptr)
        assert result is out and details["backend"] == "cuda"
        np.testing.assert_allclose(cupy.asnumpy(out), expected, rtol=0, atol=1e-5)
        same, _ = _engine.reconstruct(matrices, rank=4, out=matrices, stream=stream.ptr)  # in place
        assert same is matrices
        np.testing.assert_array_equal(cupy.asnumpy(matrices), cupy.asnumpy(out))


def test_engine_needs_out_for_a_device_array(cupy, volume):
    if not _engine.DEVICE_INPUT_SUPPORTED:
        pytest.skip("this build has no CUDA backend")
    with pytest.raises(TypeError, match="out"):
        _engine.reconstruct(cupy.asarray(volume), rank=4)


def test_engine_rejects_the_cpu_backend_for_a_device_array(cupy, volume):
    if not _engine.DEVICE_INPUT_SUPPORTED:
        pytest.skip("this build has no CUDA backend")
    matrices = cupy.asarray(volume)
    with pytest.raises(ValueError, match="CPU"):
        _engine.reconstruct(matrices, rank=4, backend="cpu", out=cupy.empty_like(matrices))


def test_cupy_nan_names_the_slice_on_the_device(cupy, volume, on_device_only):
    device = cupy.asarray(volume)
    device[3, 5, 7] = cupy.nan
    with pytest.raises(ValueError, match="slice 3 along axis 2"):
        svdlr_filter(device, rank=4)


def test_torch_cuda_tensor_stays_on_the_device(torch_cuda, volume, on_device_only):
    torch = torch_cuda
    tensor = torch.from_numpy(volume).to("cuda").requires_grad_(True)
    result, details = svdlr_filter(tensor, rank=4, output_pixel_type="same", return_details=True)
    assert details.backend == "cuda"
    assert isinstance(result, torch.Tensor) and result.device == tensor.device and result.is_cuda
    assert not result.requires_grad and result.is_contiguous()
    check_against_reference(result.cpu().numpy(), volume)


def test_torch_slices_and_uint8_output_match_numpy(torch_cuda, rng, on_device_only):
    torch = torch_cuda
    volume = (rng.standard_normal((6, 10, 8)) * 40.0 + 100.0).astype(np.float32)
    for axis in (0, 1):
        from_torch = svdlr_filter(
            torch.from_numpy(volume).cuda(), rank=2, slice_dimension=axis, output_pixel_type=np.uint8
        )
        from_numpy = svdlr_filter(volume, rank=2, slice_dimension=axis, output_pixel_type=np.uint8)
        assert from_torch.dtype == torch.uint8 and from_torch.is_cuda
        np.testing.assert_allclose(from_torch.cpu().numpy(), from_numpy, atol=1)


def test_engine_writes_torch_out_on_the_current_stream(torch_cuda, volume):
    torch = torch_cuda
    if not _engine.DEVICE_INPUT_SUPPORTED or not _engine.cuda_device_usable(0)[0]:
        pytest.skip("this build cannot work on device arrays where they are")
    expected, _ = _engine.reconstruct(volume.copy(), rank=4, backend="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        matrices = torch.from_numpy(volume).cuda()
        out = torch.empty_like(matrices)
        result, _ = _engine.reconstruct(
            matrices, rank=4, out=out, stream=torch.cuda.current_stream(matrices.device).cuda_stream
        )
        assert result is out
        np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=0, atol=1e-5)
