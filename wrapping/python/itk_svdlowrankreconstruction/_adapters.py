# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Conversions between what the caller passes and the host NumPy arrays the engine works on.

Supported kinds: ``itk.Image`` (scalar pixels), NumPy arrays, CuPy arrays and PyTorch tensors. ITK, CuPy
and PyTorch are imported only when the caller hands over one of their objects, so that a NumPy user pays
for none of them.
"""

from __future__ import annotations

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


@dataclass
class HostData:
    """The caller's data as a host array in ITK's NumPy axis order ([z, y, x] for a volume)."""

    array: np.ndarray  # a view of the caller's own memory unless `private`: never write to it then
    wrap: Callable[[np.ndarray], Any]  # turns the host result into the kind of object the caller gave
    kind: str  # "itk", "numpy", "cupy" or "torch"
    device_id: Optional[int] = None  # the CUDA device holding the caller's data, if any
    private: bool = False  # `array` is a copy made here (from device memory): free to overwrite


def to_host(data: Any) -> HostData:
    """Returns the caller's data as a host array and the function that wraps a result like it."""
    if isinstance(data, np.ndarray):
        return HostData(np.asarray(data), lambda result: result, "numpy")
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
        output.SetOrigin(image.GetOrigin())
        output.SetSpacing(image.GetSpacing())
        output.SetDirection(image.GetDirection())
        return output

    return HostData(itk.array_view_from_image(image), wrap, "itk")


def _from_cupy(array: Any) -> HostData:
    import cupy

    device_id = int(array.device.id)

    def wrap(result: np.ndarray) -> Any:
        with cupy.cuda.Device(device_id):
            return cupy.asarray(result)

    return HostData(cupy.asnumpy(array), wrap, "cupy", device_id, private=True)


def _from_torch(tensor: Any) -> HostData:
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"svdlr: expected a torch.Tensor, got {type(tensor).__qualname__}")
    device = tensor.device
    device_id = device.index if device.type == "cuda" else None

    def wrap(result: np.ndarray) -> Any:
        return torch.from_numpy(result).to(device)

    # A CPU tensor's .numpy() shares its memory; a CUDA tensor's host copy is ours.
    return HostData(tensor.detach().cpu().numpy(), wrap, "torch", device_id, private=device.type != "cpu")
