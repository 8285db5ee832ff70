# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Many volumes: which files a run takes, where each one's output goes, and the per-volume function.

The rules are those of ``SVDLowRankReconstructImage --batch`` (apps/batch, docs/batch.md):

* folders are searched recursively, hidden names (starting with ".") skipped; a pattern with a "/" matches the path
  under the folder, a "*" never crossing a "/" (``sub-*/anat/*.nii.gz``); one without matches the file name at any
  depth (``*.nii.gz``);
* outputs mirror the inputs' tree under the output folder, with a tag that says what was done before the
  extension: ``sub-01/anat/sub-01_T1w.nii.gz`` at rank 20 becomes ``OUT/sub-01/anat/sub-01_T1w_svd-rank20.nii.gz``;
* an output appears only when complete (written under a hidden temporary name, then renamed), so an output that
  exists is complete, and a re-run skips it;
* a volume that fails is a row with status "failed" and its message; the others go on.

:func:`reconstruct_volume` is the one function a scheduler maps over the volumes (:mod:`._dask` does, through Dask).
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence

import numpy as np

from . import _engine
from ._filter import svd_low_rank_reconstruction_image_filter, with_policy

# The rules themselves are the tool's C++ (apps/batch/SVDLowRankBatchInputs.cxx, compiled into _engine): one
# implementation, so that a run from Python and one from the command line find and name the same volumes.

#: Image files a folder search takes by default: NIfTI, NRRD, MetaImage and Analyze headers.
DEFAULT_PATTERNS = tuple(_engine.batch_default_patterns())
#: A BIDS-like layout's anatomical images.
BIDS_PATTERNS = tuple(_engine.batch_bids_patterns())
#: The columns of a result row, in order.
COLUMNS = ("input", "output", "status", "slices", "rank_min", "rank_max", "sigma_min", "sigma_max", "seconds",
           "backend", "message")


@dataclass(frozen=True)
class Volume:
    """One input file and its path under the folder it was found in (mirrored in the output tree)."""

    path: str
    relative: str


def find_volumes(
    paths: Iterable[str],
    *,
    patterns: Optional[Sequence[str]] = None,
    bids: bool = False,
    exclude: Optional[str] = None,
) -> List[Volume]:
    """The volumes among ``paths``: files as given, folders searched for ``patterns`` (default
    :data:`DEFAULT_PATTERNS`; ``bids=True`` adds :data:`BIDS_PATTERNS`), never inside ``exclude``.

    Raises FileNotFoundError for a path that does not exist, ValueError when nothing is found or two volumes
    would share an output."""
    found = _engine.batch_find_inputs([os.fspath(p) for p in paths], patterns=list(patterns or ()), bids=bids,
                                      exclude=os.fspath(exclude) if exclude else "")
    return [Volume(path, relative) for path, relative in found]


def method_tag(*, policy: Optional[str] = None, rank: Optional[int] = None, energy_fraction: Optional[float] = None,
               noise_sigma: Optional[float] = None, noise_rank: Optional[str] = None) -> str:
    """The tag an output's name carries: svd-rank20, svd-energy0.95, svd-gd, svd-gd-sigma12.5, svd-mp,
    svd-mp-cordero2019, from the C++ module (svdlr::OutputTag), as the command-line tool's. Rank DEFAULT_RANK
    (svdlr/Defaults.h) when no policy keyword is given, as every interface's default. noise_rank is the deprecated
    name of policy."""
    keywords = with_policy(dict(policy=policy, rank=rank, energy_fraction=energy_fraction, noise_sigma=noise_sigma,
                                noise_rank=noise_rank))
    if all(value is None for value in keywords.values()):
        keywords["rank"] = _engine.DEFAULT_RANK
    return _engine.output_tag(**keywords)


def output_path_for(volume: Volume, output_dir: str, tag: str) -> str:
    """Where ``volume``'s output goes: its relative path under ``output_dir``, ``_<tag>`` before the extension."""
    return _engine.batch_output_path(volume.relative, os.fspath(output_dir), tag)


def _temporary_for(target: str) -> str:
    """A hidden name beside ``target`` that keeps its extension (which picks ITK's writer), within a file name's 255
    bytes for any legal name: the tools' pattern and rule (``_engine.partial_name_parts``), so that each finds the
    other's. Every Python writer takes its temporaries here, so first the stale ones beside ``target`` go, by the
    tools' own rule (``_engine.remove_stale_partials_beside``: those of a process that no longer runs, e.g. one
    killed with SIGKILL)."""
    _engine.remove_stale_partials_beside(os.fspath(target))
    folder, name = os.path.split(os.fspath(target))
    start, extension = _engine.partial_name_parts(name)
    return os.path.join(folder, f"{start}{os.getpid()}-{time.monotonic_ns()}{extension}")


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _verify_written(temporary: str, target: str) -> None:
    """The tools' check before the rename (docs/reliability.md): ITK's NIfTI writer reports a full disk only on
    stderr, so the file is checked to hold the data its header promises."""
    if not os.path.exists(temporary) or os.path.getsize(temporary) == 0:
        raise OSError(f"writing '{target}' failed: the writer left no file or an empty one (is the disk full?)")
    try:
        _engine.check_image_file(temporary)
    except OSError as error:
        raise OSError(f"writing '{target}' failed: what was written is incomplete (is the disk full?): {error}") \
            from error


def _move_into_place(temporary: str, target: str, overwrite: bool) -> None:
    """Renames ``temporary`` to ``target``; without ``overwrite`` refuses atomically (a hard link) a target that
    another process wrote meanwhile, as the tools do."""
    if overwrite:
        os.replace(temporary, target)
        return
    try:
        os.link(temporary, target)
    except FileExistsError as error:
        raise FileExistsError(f"'{target}' appeared while this run wrote it (another process?); not replaced") \
            from error
    except OSError:  # a file system without hard links: the check and the rename are two steps
        if os.path.exists(target):
            raise FileExistsError(f"'{target}' exists; not replaced") from None
        os.replace(temporary, target)
        return
    os.remove(temporary)


class _VolumeIO:
    """Reads and writes one volume through the ``itk`` wheels, or, where they are not installed (a lean GPU
    worker), NIfTI files through nibabel: a float32 array in ITK's NumPy axis order [z, y, x], geometry kept."""

    def __init__(self) -> None:
        try:
            import itk  # noqa: PLC0415 (imported where used: a Dask worker needs it only here)

            self._itk, self._nibabel = itk, None
        except ImportError:
            import nibabel  # noqa: PLC0415

            self._itk, self._nibabel = None, nibabel
        self._source = None

    def read(self, path: str) -> Any:
        if self._itk is not None:
            return self._itk.imread(path, self._itk.F)
        self._source = self._nibabel.load(path)
        if len(self._source.shape) != 3:
            raise ValueError(f"'{path}' has {len(self._source.shape)} dimensions; 3D volumes are supported")
        return np.ascontiguousarray(np.asanyarray(self._source.dataobj, dtype=np.float32).T)  # (x,y,z) -> [z,y,x]

    def write(self, result: Any, path: str) -> None:
        if self._itk is not None:
            self._itk.imwrite(result, path, compression=True)
            return
        header = self._source.header.copy()
        header.set_data_dtype(np.float32)
        header.set_slope_inter(1.0, 0.0)
        self._nibabel.save(self._nibabel.Nifti1Image(result.T, self._source.affine, header), path)


def _row(input_path: str, output_path: str, status: str, **values: Any) -> Dict[str, Any]:
    row: Dict[str, Any] = {"input": input_path, "output": output_path, "status": status, "slices": 0,
                           "rank_min": 0, "rank_max": 0, "sigma_min": math.nan, "sigma_max": math.nan,
                           "seconds": 0.0, "backend": "", "message": ""}
    row.update(values)
    return row


def reconstruct_volume(
    input_path: str,
    output_path: str,
    *,
    policy: Optional[str] = None,
    rank: Optional[int] = None,
    energy_fraction: Optional[float] = None,
    noise_sigma: Optional[float] = None,
    noise_rank: Optional[str] = None,
    backend: str = "auto",
    solver: str = "auto",
    device_id: int = 0,
    overwrite: bool = False,
) -> Dict[str, Any]:
    """Reads one volume, reconstructs each slice along its last axis, writes it atomically; never raises for
    the volume's own failure. Returns a row (:data:`COLUMNS`) with status "done", "skipped" (the output exists,
    from an earlier run) or "failed" (``message`` says why; nothing is written)."""
    if not overwrite and os.path.exists(output_path):
        return _row(input_path, output_path, "skipped", message="output exists")
    start = time.perf_counter()
    try:
        io = _VolumeIO()
        _engine.check_image_file(input_path, values=True)  # data cut short, NaN in NIfTI: what the readers would hide
        try:
            image = io.read(input_path)
        except Exception as error:  # ITK raises RuntimeError, nibabel its own errors, for a file that is no image
            raise OSError(f"cannot read '{input_path}': {str(error).strip().splitlines()[-1]}") from error
        keywords = with_policy(dict(policy=policy, rank=rank, energy_fraction=energy_fraction,
                                    noise_sigma=noise_sigma, noise_rank=noise_rank))
        result, details = svd_low_rank_reconstruction_image_filter(
            image, backend=backend, solver=solver, device_id=device_id, return_details=True, **keywords)
        os.makedirs(os.path.dirname(output_path) or ".", exist_ok=True)
        temporary = _temporary_for(output_path)
        try:
            io.write(result, temporary)
            _verify_written(temporary, output_path)
            _move_into_place(temporary, output_path, overwrite)
        finally:
            _remove_quietly(temporary)
        sigmas = np.asarray(details.noise_sigma if details.noise_sigma is not None else [], dtype=float)
        sigmas = sigmas[np.isfinite(sigmas)]
        return _row(input_path, output_path, "done", slices=int(len(details.ranks)),
                    rank_min=int(np.min(details.ranks)), rank_max=int(np.max(details.ranks)),
                    sigma_min=float(sigmas.min()) if sigmas.size else math.nan,
                    sigma_max=float(sigmas.max()) if sigmas.size else math.nan,
                    seconds=time.perf_counter() - start, backend=details.backend)
    except Exception as error:  # one volume's failure is a row, not the end of the run
        return _row(input_path, output_path, "failed", seconds=time.perf_counter() - start,
                    message=f"{type(error).__name__}: {error}")


def plan(inputs: Iterable[str], output_dir: str, options: Dict[str, Any], *, patterns: Optional[Sequence[str]] = None,
         bids: bool = False) -> List[tuple]:
    """(input path, output path) for every volume a run takes: :func:`find_volumes` and :func:`output_path_for`,
    tagged by the rank policy the keywords among ``options`` choose."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    tag = method_tag(**{key: options.get(key) for key in ("policy", "rank", "energy_fraction", "noise_sigma")})
    volumes = find_volumes(inputs, patterns=patterns, bids=bids, exclude=output_dir)
    return [(v.path, output_path_for(v, output_dir, tag)) for v in volumes]


def reconstruct_many(
    inputs: Iterable[str],
    output_dir: str,
    *,
    patterns: Optional[Sequence[str]] = None,
    bids: bool = False,
    device_ids: Optional[Sequence[int]] = None,
    workers: Optional[int] = None,
    **options: Any,
) -> List[Dict[str, Any]]:
    """Every volume of ``inputs`` (files and folders) into ``output_dir``, on this machine: one worker per CUDA
    device in ``device_ids`` (default: every device when the CUDA backend is usable), else ``workers`` CPU
    workers (default 1: the engine already uses every core for one volume). ``options`` go to
    :func:`reconstruct_volume` (policy, rank, energy_fraction, noise_sigma, backend, solver, overwrite).
    Returns the rows in input order. For many machines, see :func:`reconstruct_with_dask`; for the fastest run on
    one machine, the command-line tool's pipeline (``SVDLowRankReconstructImage --batch``)."""
    options = with_policy(options)  # noise_rank, the deprecated name, warned about once here
    pairs = plan(inputs, output_dir, options, patterns=patterns, bids=bids)
    if device_ids is None and options.get("backend", "auto") != "cpu":
        device_ids = [d for d in range(_engine.cuda_device_count()) if _engine.cuda_device_usable(d)[0]]
    lanes = list(device_ids) if device_ids else [0] * max(1, workers or 1)
    free: "queue.Queue[int]" = queue.Queue()
    for lane in lanes:
        free.put(lane)

    def run(index: int) -> Dict[str, Any]:
        device = free.get()  # one volume at a time per device: the devices are dealt out as they come free
        try:
            return reconstruct_volume(*pairs[index], device_id=device, **options)
        finally:
            free.put(device)

    with ThreadPoolExecutor(max_workers=len(lanes)) as pool:
        return list(pool.map(run, range(len(pairs))))


def write_table(rows: Iterable[Dict[str, Any]], path: str) -> None:
    """The rows as tab-separated values, :data:`COLUMNS` in order."""
    with open(path, "w", encoding="utf-8") as table:
        table.write("\t".join(COLUMNS) + "\n")
        for row in rows:
            table.write("\t".join(str(row.get(c, "")).replace("\t", " ").replace("\n", " ") for c in COLUMNS) + "\n")
