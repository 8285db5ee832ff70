# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Conversions between what the caller passes and the arrays the engine works on.

Supported kinds: ``itk.Image`` (scalar pixels), NumPy arrays, CuPy arrays and PyTorch tensors. ITK, CuPy
and PyTorch are imported only when the caller hands over one of their objects, so that a NumPy user pays
for none of them.

Host data becomes a NumPy array (:func:`to_host`). A CuPy array or a PyTorch CUDA tensor stays on its
device (:func:`to_device`): the filter reshapes and converts it there with the framework's own operations
(:class:`_CupyOps`, :class:`_TorchOps`) and the engine reads and writes it through DLPack, on the
framework's current stream. Builds without the CUDA backend fall back to a copy through the host.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

#: NumPy dtypes of the pixel types the C++ filter instantiates: uchar, short, ushort, float, double.
SUPPORTED_DTYPES = (
    np.dtype(np.uint8),
    np.dtype(np.int16),
    np.dtype(np.uint16),
    np.dtype(np.float32),
    np.dtype(np.float64),
)


def check_integer(name: str, value: Any, minimum: int) -> None:
    """TypeError unless ``value`` is an integer (not a bool), ValueError when it is below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"svdlr: {name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"svdlr: {name} must be >= {minimum}, got {value}")


def copy_geometry(output: Any, image: Any) -> Any:
    """``output`` (an itk.Image) with the origin, spacing and direction of ``image``."""
    output.SetOrigin(image.GetOrigin())
    output.SetSpacing(image.GetSpacing())
    output.SetDirection(image.GetDirection())
    return output


class _NumpyOps:
    """The array operations the filter needs, on host NumPy arrays."""

    @staticmethod
    def moveaxis(array: Any, source: int, destination: int) -> Any:
        return np.moveaxis(array, source, destination)

    @staticmethod
    def contiguous(array: Any, dtype: np.dtype) -> Any:
        """A C-contiguous array of `dtype`: `array` itself when it already is one."""
        return np.ascontiguousarray(array, dtype=dtype)

    @staticmethod
    def empty_like(array: Any) -> Any:
        return np.empty_like(array)

    @staticmethod
    def shares_memory(a: Any, b: Any) -> bool:
        return bool(np.may_share_memory(a, b))

    @staticmethod
    def to_dtype(result: Any, dtype: np.dtype) -> Any:
        """`result` (ours: may be overwritten) in `dtype`; integers round halves away from zero and clamp."""
        if result.dtype == dtype:
            return result
        if dtype.kind in "iu":
            # Nearest integer, halves away from zero (std::round, as the C++ filter), clamped to the type's range.
            info = np.iinfo(dtype)
            np.add(result, np.copysign(0.5, result), out=result)
            np.trunc(result, out=result)
            np.clip(result, info.min, info.max, out=result)
        return result.astype(dtype)


@dataclass
class HostData:
    """The caller's data as a host array in ITK's NumPy axis order ([z, y, x] for a volume)."""

    array: np.ndarray  # a view of the caller's own memory unless `private`: never write to it then
    wrap: Callable[[np.ndarray], Any]  # turns the host result into the kind of object the caller gave
    device_id: Optional[int] = None  # the CUDA device holding the caller's data, if any
    private: bool = False  # `array` is a copy made here (from device memory): free to overwrite
    ops: Any = _NumpyOps
    on_device: bool = False
    stream: int = 0  # not used on the host

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype


@dataclass
class DeviceData:
    """A CuPy array or a PyTorch CUDA tensor, in ITK's NumPy axis order, worked on where it is."""

    array: Any  # the caller's own array: never written to
    device_id: int
    dtype: np.dtype  # its element type, as a NumPy dtype
    ops: Any  # _CupyOps or _TorchOps
    private: bool = False
    on_device: bool = True

    @property
    def stream(self) -> int:
        """The framework's current stream on the array's device, as an integer (0: legacy default stream)."""
        return self.ops.stream()

    @staticmethod
    def wrap(result: Any) -> Any:
        return result  # already an array of the caller's framework, on its device


def to_device(data: Any) -> Optional[DeviceData]:
    """The caller's data as a DeviceData if it is a CuPy array or a PyTorch CUDA tensor of a dtype that the
    framework converts on the device; otherwise None (the caller then uses :func:`to_host`)."""
    module = type(data).__module__ or ""
    if module.startswith("cupy"):
        import cupy

        if not isinstance(data, cupy.ndarray):
            return None
        ops = _CupyOps(cupy, int(data.device.id))
        return DeviceData(data, ops.device_id, np.dtype(data.dtype), ops)
    if module.startswith("torch"):
        import torch

        if not isinstance(data, torch.Tensor) or data.device.type != "cuda":
            return None
        ops = _TorchOps(torch, data.device)
        dtype = ops.numpy_dtype(data.dtype)
        if dtype is None:
            return None
        return DeviceData(data.detach(), ops.device_id, dtype, ops)
    return None


class _CupyOps:
    """The filter's array operations on CuPy arrays, on the array's device and CuPy's current stream."""

    def __init__(self, cupy: Any, device_id: int):
        self.cupy = cupy
        self.device_id = device_id

    def supports(self, dtype: np.dtype) -> bool:
        return True

    def stream(self) -> int:
        with self.cupy.cuda.Device(self.device_id):
            return int(self.cupy.cuda.get_current_stream().ptr)

    def moveaxis(self, array: Any, source: int, destination: int) -> Any:
        return self.cupy.moveaxis(array, source, destination)

    def contiguous(self, array: Any, dtype: np.dtype) -> Any:
        with self.cupy.cuda.Device(self.device_id):
            return self.cupy.ascontiguousarray(array, dtype=dtype)

    def empty_like(self, array: Any) -> Any:
        with self.cupy.cuda.Device(self.device_id):
            return self.cupy.empty_like(array)

    def shares_memory(self, a: Any, b: Any) -> bool:
        return bool(self.cupy.may_share_memory(a, b))

    def to_dtype(self, result: Any, dtype: np.dtype) -> Any:
        if result.dtype == dtype:
            return result
        cupy = self.cupy
        with cupy.cuda.Device(self.device_id):
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                result = cupy.clip(cupy.trunc(result + cupy.copysign(0.5, result)), info.min, info.max)
            return result.astype(dtype)


class _TorchOps:
    """The filter's array operations on PyTorch CUDA tensors, on the tensor's device and current stream."""

    _NAMES = ("uint8", "int16", "float32", "float64")  # uint16 CUDA tensors lack most ops: host path

    def __init__(self, torch: Any, device: Any):
        self.torch = torch
        self.device = device
        self.device_id = device.index if device.index is not None else torch.cuda.current_device()

    def numpy_dtype(self, torch_dtype: Any) -> Optional[np.dtype]:
        for name in self._NAMES:
            if getattr(self.torch, name) == torch_dtype:
                return np.dtype(name)
        return None

    def torch_dtype(self, dtype: np.dtype) -> Any:
        return getattr(self.torch, np.dtype(dtype).name)

    def supports(self, dtype: np.dtype) -> bool:
        return np.dtype(dtype).name in self._NAMES

    def stream(self) -> int:
        return int(self.torch.cuda.current_stream(self.device).cuda_stream)

    def moveaxis(self, array: Any, source: int, destination: int) -> Any:
        return self.torch.movedim(array, source, destination)

    def contiguous(self, array: Any, dtype: np.dtype) -> Any:
        return array.to(dtype=self.torch_dtype(dtype)).contiguous()

    def empty_like(self, array: Any) -> Any:
        return self.torch.empty_like(array, memory_format=self.torch.contiguous_format)

    def shares_memory(self, a: Any, b: Any) -> bool:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()

    def to_dtype(self, result: Any, dtype: np.dtype) -> Any:
        target = self.torch_dtype(dtype)
        if result.dtype == target:
            return result
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            result = self.torch.clamp(self.torch.trunc(result + 0.5 * self.torch.sign(result)), info.min, info.max)
        return result.to(target)


def to_host(data: Any) -> HostData:
    """Returns the caller's data as a host array and the function that wraps a result like it."""
    if isinstance(data, np.ndarray):
        return HostData(np.asarray(data), lambda result: result)
    module = type(data).__module__ or ""
    if module.startswith("itk"):
        return _from_itk(data)
    if module.startswith("cupy"):
        return _from_cupy(data)
    if module.startswith("torch"):
        return _from_torch(data)
    raise TypeError(
        "svdlr: expected an itk.Image, a NumPy array, a CuPy array or a torch.Tensor, got "
        f"{type(data).__module__}.{type(data).__qualname__}"
    )


def _from_itk(image: Any) -> HostData:
    import itk

    try:
        image_template, (pixel_type, dimension) = itk.template(image)
    except Exception as error:  # not an instantiated ITK template at all
        raise TypeError(f"svdlr: expected an itk.Image, got {type(image).__qualname__}") from error
    if image_template is not itk.Image:
        raise TypeError(
            f"svdlr: expected a scalar itk.Image, got {type(image).__qualname__}; "
            "read multi-component files as scalar images, e.g. itk.imread(path, itk.F)"
        )
    dtype = getattr(pixel_type, "dtype", None)
    if dtype is None or np.dtype(dtype) not in SUPPORTED_DTYPES:
        raise TypeError(
            f"svdlr: pixel type {pixel_type} is not supported (unsigned char, short, unsigned short, float, "
            "double); read the image as scalar, e.g. itk.imread(path, itk.F)"
        )
    if dimension not in (2, 3):
        raise ValueError(f"svdlr: expected a 2D or 3D image, got {dimension}D")

    def wrap(result: np.ndarray) -> Any:
        output = itk.image_from_array(result)
        output.SetRegions(image.GetBufferedRegion())  # keeps a non-zero start index, if any
        return copy_geometry(output, image)

    return HostData(itk.array_view_from_image(image), wrap)


def _from_cupy(array: Any) -> HostData:
    import cupy

    device_id = int(array.device.id)

    def wrap(result: np.ndarray) -> Any:
        with cupy.cuda.Device(device_id):
            return cupy.asarray(result)

    return HostData(cupy.asnumpy(array), wrap, device_id, private=True)


def _from_torch(tensor: Any) -> HostData:
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"svdlr: expected a torch.Tensor, got {type(tensor).__qualname__}")
    device = tensor.device
    device_id = device.index if device.type == "cuda" else None

    def wrap(result: np.ndarray) -> Any:
        return torch.from_numpy(result).to(device)

    # A CPU tensor's .numpy() shares its memory; a CUDA tensor's host copy is ours.
    return HostData(tensor.detach().cpu().numpy(), wrap, device_id, private=device.type != "cpu")
