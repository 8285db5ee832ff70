# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Many 4D series denoised in one process: :func:`denoise_batch`, on the command-line tools' batch pipeline.

The pipeline is the tools' C++ (apps/batch/SVDLowRankBatchStages, compiled into ``_engine`` as ``batch_pipeline``):
reader threads, one worker per CUDA device (or one CPU worker using every core), writer threads, and its rules, the
same as ``SVDLowRankDenoiseSeries --batch`` (docs/batch.md):

* a run whose output exists is skipped (outputs appear only complete, by a rename), so a re-run resumes;
* a run that fails (a file that cannot be read, a 3D image, NaN) is a row with status "failed" and its message,
  and the others go on;
* the readers scale with the GPUs, and a byte budget bounds the series in flight.

Each series is denoised by :func:`local_low_rank_denoising_image_filter`, the function a single series goes
through, on its worker's device. Series are read and written with nibabel (NIfTI), header and affine kept; the
outputs are float32, the sigma map float32 and the rank map uint16.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _engine
from ._batch import Volume, _move_into_place, _temporary_for, _verify_written, output_path_for
from ._denoise import local_low_rank_denoising_image_filter

#: The tags of the outputs' names, the tool's: <name>_denoised.nii.gz, <name>_sigma.nii.gz, <name>_rank.nii.gz.
DENOISED_TAG = _engine.BATCH_DENOISED_TAG
SIGMA_MAP_TAG = _engine.BATCH_SIGMA_MAP_TAG
RANK_MAP_TAG = _engine.BATCH_RANK_MAP_TAG


@dataclass(frozen=True)
class DenoiseRun:
    """One series of a batch: its inputs, and where its outputs go (None: not written)."""

    series: str
    output: str
    mask: Optional[str] = None
    known_sigma_map: Optional[str] = None  # a known sigma per voxel, in place of the estimate
    noise_map: Optional[str] = None  # where the sigma map is written
    rank_map: Optional[str] = None  # where the rank map is written


RunSpec = Union[str, os.PathLike, Dict[str, Any], DenoiseRun]


def plan_run(spec: RunSpec, output_dir: Optional[str] = None, maps: bool = False) -> DenoiseRun:
    """A :class:`DenoiseRun` from a series path, a dict (keys of :class:`DenoiseRun`; ``output`` and the maps may be
    left out when ``output_dir`` is given) or a run. Outputs left out are named as the tool names them: the series'
    file name under ``output_dir``, tagged (:data:`DENOISED_TAG`; with ``maps``, :data:`SIGMA_MAP_TAG` and
    :data:`RANK_MAP_TAG`)."""
    if isinstance(spec, DenoiseRun):
        return spec
    fields = {"series": os.fspath(spec)} if isinstance(spec, (str, os.PathLike)) else dict(spec)
    unknown = set(fields) - set(DenoiseRun.__dataclass_fields__)
    if unknown or "series" not in fields:
        raise ValueError(f"svdlr: a run needs 'series' and takes {sorted(DenoiseRun.__dataclass_fields__)}; "
                         f"got {sorted(fields)}")
    series = os.fspath(fields["series"])
    volume = Volume(series, os.path.basename(series))
    for key, tag, wanted in (("output", DENOISED_TAG, True), ("noise_map", SIGMA_MAP_TAG, maps),
                             ("rank_map", RANK_MAP_TAG, maps)):
        if fields.get(key) is None and wanted:
            if output_dir is None:
                raise ValueError(f"svdlr: the run of '{series}' names no {key} and no output_dir was given")
            fields[key] = output_path_for(volume, os.fspath(output_dir), tag)
    return DenoiseRun(**{key: None if value is None else os.fspath(value) for key, value in fields.items()})


def _nibabel() -> Any:
    try:
        import nibabel  # noqa: PLC0415 (only the batch path reads files)
    except ImportError as error:
        raise ImportError("svdlr: denoise_batch reads and writes NIfTI through nibabel: pip install nibabel") \
            from error
    return nibabel


def _read(run: DenoiseRun) -> Tuple[Tuple[Any, ...], int]:
    nibabel = _nibabel()
    _engine.check_image_file(run.series, values=True)  # data cut short, NaN: what the readers would hide
    image = nibabel.load(run.series)
    if len(image.shape) != 4:
        raise ValueError(f"'{run.series}' has {len(image.shape)} dimensions: a series is 4D (x, y, z, volumes)")
    series = image.get_fdata(dtype=np.float32)
    mask = None
    if run.mask is not None:
        mask = (np.asanyarray(nibabel.load(run.mask).dataobj) != 0).astype(np.uint8)
    sigma = None
    if run.known_sigma_map is not None:
        sigma = nibabel.load(run.known_sigma_map).get_fdata(dtype=np.float32)
    return (image, series, mask, sigma), 2 * series.nbytes  # the series and its denoised copy


def _work(staged: Tuple[Any, ...], device: int, options: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    image, series, mask, sigma = staged
    keywords = dict(options)
    if sigma is not None:
        keywords["noise_sigma"] = sigma
    denoised, noise_map, rank_map = local_low_rank_denoising_image_filter(
        series, volume_axis=3, mask=mask, backend="cpu" if device < 0 else "cuda", device_id=max(device, 0),
        return_maps=True, **keywords)
    inside = (mask != 0) if mask is not None else np.ones(rank_map.shape, dtype=bool)
    stats: Dict[str, Any] = {}
    if inside.any():
        ranks, sigmas = rank_map[inside], noise_map[inside]
        stats = {"rank_min": int(ranks.min()), "rank_max": int(ranks.max())}
        if sigmas.max() > 0:  # 0: no noise modelled (a fixed rank without a known sigma)
            stats.update(sigma_min=float(sigmas.min()), sigma_max=float(sigmas.max()))
    return (image, denoised, noise_map, rank_map), stats


def _write(run: DenoiseRun, staged: Tuple[Any, ...], overwrite: bool) -> None:
    """Every output under a temporary name, each verified, then renamed: the maps first, the series last, so that
    the series (whose presence marks a run done) appears only with its maps."""
    nibabel = _nibabel()
    image, denoised, noise_map, rank_map = staged
    outputs = [(run.noise_map, noise_map, np.float32), (run.rank_map, rank_map, np.uint16),
               (run.output, denoised, np.float32)]
    staged_files = []
    try:
        for target, data, dtype in outputs:
            if target is None:
                continue
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            header = image.header.copy()
            header.set_data_dtype(dtype)
            header.set_slope_inter(1.0, 0.0)
            temporary = _temporary_for(target)
            staged_files.append((temporary, target))
            nibabel.save(nibabel.Nifti1Image(np.asarray(data, dtype=dtype), image.affine, header), temporary)
            _verify_written(temporary, target)
        for temporary, target in staged_files:
            # The maps of a run redone are replaced (a stopped run may have left them); the series only on request.
            _move_into_place(temporary, target, overwrite or target != run.output)
    finally:
        for temporary, _ in staged_files:
            if os.path.exists(temporary):
                os.remove(temporary)


def denoise_batch(
    runs: Iterable[RunSpec],
    output_dir: Optional[str] = None,
    *,
    devices: Optional[Sequence[int]] = None,
    backend: str = "auto",
    readers: int = 0,
    writers: int = 0,
    memory_bytes: int = 0,
    overwrite: bool = False,
    maps: bool = False,
    on_run: Optional[Callable[[Dict[str, Any], int, int], Any]] = None,
    return_totals: bool = False,
    **options: Any,
) -> Union[List[Dict[str, Any]], Tuple[List[Dict[str, Any]], Dict[str, Any]]]:
    """Denoises many 4D NIfTI series in one process, on every GPU, as ``SVDLowRankDenoiseSeries --batch`` does.

    Parameters
    ----------
    runs : iterable of paths, dicts or :class:`DenoiseRun`
        Each a series; a dict names its ``series`` and optionally its ``mask``, ``known_sigma_map``, ``output``,
        ``noise_map`` and ``rank_map`` (outputs left out are named under ``output_dir``: see :func:`plan_run`).
    output_dir : str, optional
        Where outputs not named go.
    devices : sequence of int, optional
        The CUDA devices, one worker each; default every usable one. Without a usable device (or with
        ``backend="cpu"``) one CPU worker uses every core.
    backend : "auto", "cpu" or "cuda"
        "cuda" raises RuntimeError when a device named (or every device) cannot be used.
    readers, writers : int
        Threads; 0: the tools' defaults (readers: a quarter of the cores, at least two per GPU, at most half).
    memory_bytes : int
        Bytes of series in flight (each counts its float32 size twice); 0: a quarter of the RAM.
    overwrite : bool
        Redo runs whose output exists (else they are skipped).
    maps : bool
        Name the sigma and rank maps of runs that do not name them.
    on_run : callable(row, finished, total), optional
        Called as each run finishes (any status), one call at a time.
    return_totals : bool
        Also return the run's totals (done, skipped, failed, seconds, backend, devices, readers, writers, notes).
    **options
        The denoiser's keywords (policy, rank, patch_size, patch_stride, aggregation, shrinkage, noise_sigma,
        ...), as :func:`local_low_rank_denoising_image_filter` takes them, for every series; a run's
        ``known_sigma_map`` replaces ``noise_sigma`` for it.

    Returns
    -------
    One row per run, in order: input, output, status ("done", "skipped", "failed"), message, rank_min, rank_max,
    sigma_min, sigma_max (over the voxels inside the mask; NaN where no noise is modelled), device (-1: the CPU),
    read_seconds, work_seconds, write_seconds. Never raises for one run's failure.
    """
    for reserved in ("backend", "device_id", "volume_axis", "mask", "return_maps", "progress"):
        if reserved in options:
            raise TypeError(f"svdlr: denoise_batch sets '{reserved}' itself")
    planned = [plan_run(spec, output_dir, maps) for spec in runs]
    rows, totals = _engine.batch_pipeline(
        [run.series for run in planned],
        [run.output for run in planned],
        lambda index: _read(planned[index]),
        lambda staged, device: _work(staged, device, options),
        lambda index, staged: _write(planned[index], staged, overwrite),
        backend=backend,
        devices=[int(d) for d in devices] if devices is not None else [],
        readers=int(readers),
        writers=int(writers),
        memory_bytes=int(memory_bytes),
        overwrite=bool(overwrite),
        on_item=on_run,
    )
    return (rows, totals) if return_totals else rows
