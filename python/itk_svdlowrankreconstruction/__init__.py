# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Rank-k truncated SVD reconstruction of 2D images and of every slice of a volume.

Each slice A is replaced by U_k S_k V_k^T, on the CPU (LAPACK) or an NVIDIA GPU (CUDA). Works on
``itk.Image`` objects (from the ``itk`` wheels), NumPy arrays, and CuPy arrays / PyTorch tensors, and
returns the kind of object it was given::

    import itk
    from itk_svdlowrankreconstruction import svd_low_rank_reconstruction_image_filter

    image = itk.imread("brain.nii.gz", itk.F)
    smooth = svd_low_rank_reconstruction_image_filter(image, rank=20)

A 4D series (diffusion, fMRI, multi-echo MRI) is denoised by local low-rank approximation (MP-PCA) with
:func:`local_low_rank_denoising_image_filter`.

The extension module (``_engine``) links only the ITK-free engine, never ITK itself, so it cannot clash
with the ITK libraries inside the ``itk`` wheels; ``itk`` is needed only to pass ``itk.Image`` objects.
"""

from ._engine import __version__, cuda_backend_built, release_cuda_resources
from ._engine import cuda_device_usable as _cuda_device_usable
from ._batch import find_volumes, reconstruct_many, reconstruct_volume, write_table
from ._dask import local_cuda_cluster, reconstruct_with_dask
from ._denoise import local_low_rank_denoising_image_filter
from ._denoise_batch import denoise_batch
from ._filter import ReconstructionDetails, svd_low_rank_reconstruction_image_filter
from ._pipeline import svd_low_rank_reconstruction_pipeline_filter

__all__ = [
    "ReconstructionDetails",
    "__version__",
    "cuda_backend_built",
    "cuda_device_unusable_reason",
    "cuda_device_usable",
    "denoise_batch",
    "denoise_with_dask",
    "find_volumes",
    "local_cuda_cluster",
    "local_low_rank_denoising_image_filter",
    "reconstruct_many",
    "reconstruct_volume",
    "reconstruct_with_dask",
    "release_cuda_resources",
    "svd_low_rank_reconstruction_image_filter",
    "svd_low_rank_reconstruction_pipeline_filter",
    "write_table",
]


def cuda_device_usable(device_id: int = 0) -> bool:
    """True when the CUDA backend is built and CUDA device ``device_id`` can run it.

    :func:`cuda_device_unusable_reason` says why not.
    """
    return _cuda_device_usable(device_id)[0]


def cuda_device_unusable_reason(device_id: int = 0) -> str:
    """Why CUDA device ``device_id`` cannot run the CUDA backend; empty when it can."""
    usable, why = _cuda_device_usable(device_id)
    return "" if usable else why


def __getattr__(name: str):
    """denoise_with_dask on first use: it lives with the BIDS App (bids/_dask_runs.py), whose imports (nibabel) the
    package's own import does not pay for."""
    if name == "denoise_with_dask":
        from .bids._dask_runs import denoise_with_dask  # noqa: PLC0415

        return denoise_with_dask
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
