# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The functional filter, in the style of ITK's Python functional API (``itk.median_image_filter``...)."""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np

from . import _engine
from ._adapters import SUPPORTED_DTYPES, check_integer, to_device, to_host


@dataclass(frozen=True)
class ReconstructionDetails:
    """What the engine did, slice by slice.

    Slice ``i`` is the slice at index ``i`` along ``slice_dimension`` (ITK's axis convention), counted from
    the start of the image's buffer; a 2D image is a single slice.
    """

    singular_values: np.ndarray
    """float64, shape (slices, min(rows, cols)): the singular values of each slice, descending. All of them
    with the exact solver; with the subspace solver only the leading ones, and NaN for the rest."""
    ranks: np.ndarray
    """int64, shape (slices,): how many singular triplets each slice kept."""
    backend: str
    """Where the work ran: "cpu" or "cuda"."""
    slice_dimension: Optional[int]
    """The ITK axis the volume was cut along (0 = x, 1 = y, 2 = z); None for a 2D image."""
    solver: str = "exact"
    """How the singular subspace was found: "exact" (always on the CPU) or "subspace"."""
    notes: str = ""
    """The engine's remarks, e.g. why backend="auto" ran on the CPU; empty when it had nothing to say."""
    noise_sigma: Optional[np.ndarray] = None
    """float64, shape (slices,): the standard deviation of each pixel's noise that noise_rank estimated for the
    slice (or noise_sigma, when given); NaN with rank or energy_fraction, which do not model noise."""
    slices_redone: int = 0
    """How many slices failed the subspace solver's a-posteriori optimality check and were redone by the
    exact solver in the same call (0 with the exact solver)."""
    redone_slices: Optional[np.ndarray] = None
    """int64, ascending: those slices' indices (their singular_values rows are complete)."""


def svd_low_rank_reconstruction_image_filter(
    image: Any,
    *,
    policy: Optional[str] = None,
    rank: Optional[int] = None,
    energy_fraction: Optional[float] = None,
    noise_sigma: Optional[float] = None,
    noise_rank: Optional[str] = None,
    slice_dimension: Optional[int] = None,
    backend: str = "auto",
    solver: str = "auto",
    device_id: Optional[int] = None,
    return_details: bool = False,
    output_pixel_type: Any = None,
    max_matrices_per_batch: int = 0,
    threads: int = 0,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Union[Any, Tuple[Any, ReconstructionDetails]]:
    """Replaces a 2D image, or every slice of a 3D image, by its rank-k truncated SVD reconstruction.

    Each slice A (rows x cols) becomes U_k S_k V_k^T, its best rank-k approximation in the Frobenius norm.

    Parameters
    ----------
    image : itk.Image, numpy.ndarray, cupy.ndarray or torch.Tensor
        A 2D or 3D scalar image with pixel type unsigned char, short, unsigned short, float or double
        (NumPy dtypes uint8, int16, uint16, float32, float64). Arrays are read in ITK's NumPy axis order:
        a volume is indexed [z, y, x], as ``itk.array_view_from_image`` returns it.
    policy : "fixed", "energy", "gd", "mp", "mp-cg" or "nordic", optional
        How each slice's rank is chosen (the names and keywords of
        :func:`local_low_rank_denoising_image_filter` too): a fixed rank, an energy fraction, or from the noise
        (see noise_rank below). By default the policy whose parameter is given (rank: "fixed", energy_fraction:
        "energy", noise_sigma: "gd"), else "fixed" with rank {DEFAULT_RANK}.
    rank : int >= 1, optional
        Singular triplets kept per slice; clamped to min(rows, cols). The default, when no other policy is
        given, is {DEFAULT_RANK}, as for the C++ filter and the command-line tool (svdlr/Defaults.h).
    energy_fraction : float in (0, 1], optional
        Instead of a fixed rank: keep, per slice, the fewest triplets whose squared singular values hold at
        least this fraction of the slice's squared Frobenius norm.
    noise_rank : "gd", "mp" or "mp-cg", optional
        Deprecated (DeprecationWarning): the old name of ``policy`` for the noise policies, which keep, per
        slice, the singular values that stand out of the noise, for a slice that is a low-rank signal plus white
        noise, with the noise's standard deviation per pixel estimated per slice
        (``details.noise_sigma``). "gd": Gavish & Donoho's (2014) optimal hard threshold, sigma from the median
        singular value. "mp": the Marchenko-Pastur bulk edge with sigma as MP-PCA estimates it (Veraart et al.
        2016; MRtrix3 dwidenoise's default). "mp-cg": the same with Cordero-Grande et al.'s (2019) estimator
        (dwidenoise ``-estimator Exp2``).
    noise_sigma : float > 0, optional
        Gavish-Donoho with this known noise sigma per pixel, in pixel units (implies noise_rank "gd"); with
        policy "nordic", NORDIC's threshold sigma (sqrt(rows) + sqrt(cols)) for it, which needs it (ValueError
        without). Give one of rank, energy_fraction and noise_rank/noise_sigma.
    slice_dimension : int, optional
        For a 3D image, the ITK axis along which it is cut into 2D slices: 0 = x, 1 = y, 2 = z (NumPy axis
        2 - slice_dimension). Default: the last ITK axis, z, i.e. NumPy axis 0. A slice keeps its other two
        axes in ITK order: its rows run along the higher one. Ignored for a 2D image (one slice).
    backend : "auto", "cpu" or "cuda"
        "auto" uses the GPU when the CUDA backend is built and a device is usable, else the CPU.
    solver : "auto", "exact" or "subspace"
        How the CUDA backend finds each slice's leading singular subspace. "exact" computes every singular
        value at about float64 accuracy. "subspace" (subspace iteration on a block of w > rank vectors) is
        much faster for small ranks, within the same accuracy bounds, but computes only the leading w
        singular values (the details hold NaN for the others); it needs ``rank`` below {MAX_SUBSPACE_WIDTH}, not
        ``energy_fraction`` or ``noise_rank``. "auto" takes "subspace" for float32 work with a fixed rank where it pays off,
        else "exact". The CPU backend always computes the exact SVD.
    device_id : int, optional
        CUDA device. Default: the device holding a CuPy/PyTorch input, else 0. A CuPy/PyTorch input is
        worked on in place on its device only when this is its device (or None).
    return_details : bool
        Also return a :class:`ReconstructionDetails` (per-slice singular values and ranks, backend and
        solver used).
    output_pixel_type : optional
        Pixel type of the result, as an ITK type (``itk.F``, ``itk.UC``...) or a NumPy dtype. Default: float
        (float32), like the C++ filter's default output ``itk.Image[itk.F, D]`` and the tool's --output-type. ``"same"`` keeps the input's
        type. Integer outputs are rounded to the nearest integer (halves away from zero, as the C++ filter)
        and clamped to the type's range.
    max_matrices_per_batch : int
        Slices per engine batch; 0 lets the backend choose (from free memory on the GPU).
    threads : int
        CPU worker threads; 0 uses all hardware threads.
    progress : callable(done, total), optional
        Called between batches. Raise from it to stop; the exception propagates. Ctrl-C also stops the
        work at the next batch boundary, with KeyboardInterrupt.

    Returns
    -------
    The reconstruction, of the kind given: an ``itk.Image`` with the input's origin, spacing, direction
    and region; a NumPy array (C-contiguous, same shape); a CuPy array or torch tensor on the input's
    device (detached from autograd). With ``return_details=True``: ``(result, details)``.

    The work runs at float32 precision, or float64 when the input or the output is double (float64), as in the
    C++ filter: a float64 input with the default float32 output is computed in float64, then rounded.

    A CuPy array or a PyTorch CUDA tensor stays on its device: the reshaping, type conversions and the
    reconstruction all run there (on the framework's current stream), with no copy through host memory,
    when the CUDA backend is built and the backend is "cuda" or "auto" with a usable device. Otherwise
    (backend="cpu", a build without CUDA, ``device_id`` naming another device, or a uint16 tensor) the data
    is copied to the host and the result back to the device.

    Raises
    ------
    ValueError
        rank < 1, energy_fraction outside (0, 1], an unknown noise_rank, noise_sigma not finite and > 0, more
        than one of rank/energy_fraction/noise_rank given, solver="subspace" without a rank,
        slice_dimension out of range, an empty image, or NaN/Inf in the image (the message names the slice).
    TypeError
        An unsupported object, pixel type or argument type.
    RuntimeError
        backend="cuda" without a usable CUDA device, or a failure on the device.
    """
    warn_noise_rank(noise_rank)
    check_parameters(
        policy=policy,
        rank=rank,
        energy_fraction=energy_fraction,
        noise_rank=noise_rank,
        noise_sigma=noise_sigma,
        slice_dimension=slice_dimension,
        backend=backend,
        solver=solver,
        device_id=device_id,
        max_matrices_per_batch=max_matrices_per_batch,
        threads=threads,
    )

    data = _on_device(image, backend, device_id, output_pixel_type) or to_host(image)
    array = data.array
    if data.dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"svdlr: dtype {data.dtype} is not supported (uint8, int16, uint16, float32, float64); "
            "convert first, e.g. with .astype(numpy.float32)"
        )
    # How the image is cut into slices is svdlr/SliceStack.h's rule (the C++ filter's): ITK axes, NumPy's reversed.
    try:
        stack_axis = _engine.slice_axes(array.ndim, slice_dimension)[2]
    except ValueError as error:
        raise ValueError(f"{error} (shape {tuple(array.shape)})") from None
    if 0 in tuple(array.shape):
        raise ValueError(f"svdlr: the image is empty (shape {tuple(array.shape)})")
    output_dtype = _output_dtype(output_pixel_type, data.dtype)
    compute_dtype = _compute_dtype(data.dtype, output_dtype)
    ops = data.ops  # NumPy on the host; CuPy or PyTorch on the caller's device

    # (count, rows, cols) batch, C-contiguous in the compute type: one copy at most.
    if array.ndim == 2:
        slice_dimension = numpy_axis = None  # ignored, as in the C++ filter: a 2D image is one slice
        batch = ops.contiguous(array, compute_dtype)
    else:
        slice_dimension = stack_axis
        numpy_axis = array.ndim - 1 - stack_axis
        batch = ops.contiguous(ops.moveaxis(array, numpy_axis, 0), compute_dtype)

    # Work in place when `batch` is a copy made here; never write into the caller's memory. On the host the
    # engine allocates the result; on a device the framework does.
    private = data.private or not ops.shares_memory(batch, array)
    out = batch if private else (ops.empty_like(batch) if data.on_device else None)
    try:
        result, engine_details = _engine.reconstruct(
            batch,
            policy=policy,
            rank=None if rank is None else int(rank),
            energy_fraction=None if energy_fraction is None else float(energy_fraction),
            noise_rank=noise_rank,
            noise_sigma=None if noise_sigma is None else float(noise_sigma),
            backend=backend,
            solver=solver,
            device_id=int(device_id) if device_id is not None else (data.device_id or 0),
            max_matrices_per_batch=int(max_matrices_per_batch),
            threads=int(threads),
            progress=progress,
            out=out,
            stream=data.stream,
        )
    except ValueError as error:
        if getattr(error, "error_code", None) == "NonFiniteInput":
            raise ValueError(
                _engine.non_finite_slice_message(array.ndim, -1 if error.matrix_index is None else error.matrix_index,
                                                 slice_dimension)
            ) from error
        raise

    result = ops.to_dtype(result, output_dtype)
    if numpy_axis is not None and numpy_axis != 0:
        result = ops.contiguous(ops.moveaxis(result, 0, numpy_axis), output_dtype)
    output = data.wrap(result)
    if not return_details:
        return output
    # The engine's details dict holds the other fields, by their names.
    return output, ReconstructionDetails(slice_dimension=slice_dimension, **engine_details)


def warn_noise_rank(noise_rank: Any, stacklevel: int = 3) -> None:
    """The DeprecationWarning of the old keyword noise_rank, for the public functions that still take it."""
    if noise_rank is not None:
        warnings.warn(
            "svdlr: noise_rank is deprecated; give the same name as policy (policy=%r)" % (noise_rank,),
            DeprecationWarning,
            stacklevel=stacklevel,
        )


def with_policy(parameters: Dict[str, Any], *, warn: bool = True, stacklevel: int = 4) -> Dict[str, Any]:
    """``parameters`` with the deprecated noise_rank given as policy (after its DeprecationWarning when ``warn``),
    for the functions that pass them on."""
    noise_rank = parameters.get("noise_rank")
    if noise_rank is None:
        return {key: value for key, value in parameters.items() if key != "noise_rank"}
    if warn:
        warn_noise_rank(noise_rank, stacklevel=stacklevel)
    if parameters.get("policy") is not None:
        raise ValueError("svdlr: give policy or noise_rank (its deprecated name), not both")
    renamed = {key: value for key, value in parameters.items() if key != "noise_rank"}
    renamed["policy"] = noise_rank
    return renamed


def check_parameters(
    *,
    policy: Any = None,
    rank: Any = None,
    energy_fraction: Any = None,
    noise_rank: Any = None,
    noise_sigma: Any = None,
    slice_dimension: Any = None,
    backend: Any = "auto",
    solver: Any = "auto",
    device_id: Any = None,
    max_matrices_per_batch: Any = 0,
    threads: Any = 0,
) -> None:
    """Raises what svd_low_rank_reconstruction_image_filter raises for these keywords before it looks at an image
    (the pipeline stage of _pipeline.py checks them when it is built)."""
    _check_policy(policy, rank, energy_fraction, noise_rank, noise_sigma)
    _check_choice("backend", backend, _engine.BACKENDS)
    _check_choice("solver", solver, _engine.SOLVERS)
    _engine.check_options(
        policy=policy,
        rank=rank,
        energy_fraction=energy_fraction,
        noise_rank=noise_rank,
        noise_sigma=None if noise_sigma is None else float(noise_sigma),
        backend=backend,
        solver=solver,
    )
    if device_id is not None:
        check_integer("device_id", device_id, minimum=0)
    if slice_dimension is not None:
        check_integer("slice_dimension", slice_dimension, minimum=0)
    check_integer("max_matrices_per_batch", max_matrices_per_batch, minimum=0)
    check_integer("threads", threads, minimum=0)


def _on_device(image: Any, backend: str, device_id: Optional[int], output_pixel_type: Any) -> Any:
    """The caller's CuPy array or CUDA tensor as a DeviceData when the engine can work on it where it is;
    None when the data must go through the host (see the docstring above)."""
    if backend == "cpu" or not _engine.DEVICE_INPUT_SUPPORTED:
        return None
    data = to_device(image)
    if data is None or (device_id is not None and device_id != data.device_id):
        return None
    try:
        output_dtype = _output_dtype(output_pixel_type, data.dtype)
    except TypeError:
        return None  # the host path raises it
    if not data.ops.supports(output_dtype):
        return None
    if backend == "auto" and not _engine.cuda_device_usable(data.device_id)[0]:
        return None  # "auto" runs on the CPU then, which needs the data on the host
    return data


def _check_choice(name: str, value: Any, choices: Tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"svdlr: {name} must be one of {', '.join(map(repr, choices))}; got {value!r}")


def _check_policy(policy: Any, rank: Any, energy_fraction: Any, noise_rank: Any, noise_sigma: Any) -> None:
    if policy is not None:
        _check_choice("policy", policy, _engine.POLICIES)
    # Which of them go together is _engine.check_options' to say, with the same words.
    if noise_rank is not None:
        _check_choice("noise_rank", noise_rank, _engine.NOISE_RANKS)
    if noise_sigma is not None:
        if isinstance(noise_sigma, bool) or not isinstance(noise_sigma, numbers.Real):
            raise TypeError(f"svdlr: noise_sigma must be a number, got {noise_sigma!r}")
    if rank is not None:
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral):
            raise TypeError(f"svdlr: rank must be an integer, got {rank!r}")
    if energy_fraction is not None:
        if isinstance(energy_fraction, bool) or not isinstance(energy_fraction, numbers.Real):
            raise TypeError(f"svdlr: energy_fraction must be a number, got {energy_fraction!r}")


def _output_dtype(output_pixel_type: Any, input_dtype: np.dtype) -> np.dtype:
    if output_pixel_type is None:
        output_pixel_type = _engine.DEFAULT_OUTPUT_TYPE  # "float32": svdlr/Defaults.h, as the tools
    if isinstance(output_pixel_type, str) and output_pixel_type == "same":
        return input_dtype
    dtype_like = output_pixel_type
    if not isinstance(output_pixel_type, (str, type, np.dtype)):
        dtype_like = getattr(output_pixel_type, "dtype", output_pixel_type)  # itk.F, itk.UC... carry their dtype
    try:
        dtype = np.dtype(dtype_like)
    except TypeError:
        dtype = None
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(
            f"svdlr: output_pixel_type {output_pixel_type!r} is not supported "
            '(unsigned char, short, unsigned short, float, double, or "same")'
        )
    return dtype


def _compute_dtype(input_dtype: np.dtype, output_dtype: np.dtype) -> np.dtype:
    """float64 or float32, by the C++ filter's rule (svdlr/SliceStack.h's WorksInDouble)."""
    works_in_double = _engine.works_in_double(input_dtype == np.float64, output_dtype == np.float64)
    return np.dtype(np.float64 if works_in_double else np.float32)


# The engine's limits, written into the docstring from the one table that holds them (svdlr/Names.h).
svd_low_rank_reconstruction_image_filter.__doc__ = svd_low_rank_reconstruction_image_filter.__doc__.replace(
    "{MAX_SUBSPACE_WIDTH}", str(_engine.MAX_SUBSPACE_WIDTH)
).replace("{DEFAULT_RANK}", str(_engine.DEFAULT_RANK))
