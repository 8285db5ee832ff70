# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Many 4D series denoised in one process: :func:`denoise_batch`, on the command-line tools' batch pipeline.

The pipeline is the tools' C++ (apps/batch/SVDLowRankBatchStages, compiled into ``_engine`` as ``batch_pipeline``):
reader threads, one worker per CUDA device (or one CPU worker using every core), writer threads, and its rules, the
same as ``SVDLowRankDenoiseSeries --batch`` (docs/batch.md):

* a run whose outputs all exist is skipped (outputs appear only complete, by a rename, the series last), so a re-run
  resumes; a run with only some of them (killed between the renames) is redone;
* a run that fails (a file that cannot be read, a 3D image, NaN) is a row with status "failed" and its message,
  and the others go on;
* the readers scale with the GPUs, and a byte budget bounds the series in flight.

Each series goes through the three steps of :func:`._nifti_series.denoise_nifti` (the BIDS App's, Dask's and
Nipype's path for one series): :func:`read_series` on a reader thread, :func:`denoise_series` on its worker's device,
:func:`write_series` on a writer thread. :func:`denoise_on_pipeline` offers the same to the BIDS App as its
denoising step (``process_runs(..., denoise_batch=denoise_on_pipeline([0, 1]))``).
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _engine
from ._batch import Volume, output_path_for
from ._nifti_series import DenoiseOptions, SeriesResult, denoise_series, read_series, write_series

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
    report_volume: Optional[int] = None  # keep a reportlet's data of this volume (SeriesResult.report)
    echoes: Tuple[str, ...] = ()  # the further echoes of a multi-echo series, denoised jointly with it
    echo_outputs: Tuple[str, ...] = ()  # where they are written, in the same order
    bval: Optional[str] = None  # the b-values, for demean="shells"


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
    paths = {key: os.fspath(value) if isinstance(value, (str, os.PathLike)) else value for key, value in fields.items()}
    return DenoiseRun(**paths)


class _Steps:
    """The pipeline's three steps for ``runs``; keeps each run's result, or the exception that stopped it, by index
    (the pipeline reports a failure by its message alone)."""

    def __init__(self, runs: Sequence[DenoiseRun], options: DenoiseOptions,
                 started: Optional[Callable[[int], Any]] = None):
        self.runs = runs
        self.options = options
        self.started = started  # called with a run's index as its reading starts
        self.outcomes: Dict[int, Union[SeriesResult, BaseException]] = {}

    def _keeping_failure(self, index: int, step: Callable[[], Any]) -> Any:
        try:
            return step()
        except BaseException as error:
            self.outcomes[index] = error
            raise

    def read(self, index: int) -> Tuple[Tuple[int, Any], int]:
        run = self.runs[index]
        if self.started is not None:
            self.started(index)
        series = self._keeping_failure(index, lambda: read_series(
            run.series, mask_path=run.mask, sigma_map_path=run.known_sigma_map, options=self.options,
            echo_paths=run.echoes, bval_path=run.bval))
        return (index, series), 2 * series.noisy.nbytes  # the series and its denoised copy

    def work(self, staged: Tuple[int, Any], device: int) -> Tuple[Any, Dict[str, Any]]:
        index, series = staged
        options = dataclasses.replace(self.options, backend="cpu" if device < 0 else "cuda",
                                      device_id=max(device, 0))
        maps = self._keeping_failure(index, lambda: denoise_series(series, options))
        return (index, series, maps), {}

    def write(self, index: int, staged: Tuple[int, Any, Tuple[Any, ...]]) -> None:
        _, series, (denoised, sigma, rank) = staged
        run = self.runs[index]
        for target in _output_set(run):
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        self.outcomes[index] = self._keeping_failure(index, lambda: write_series(
            series, denoised, sigma, rank, run.output, noise_map_path=run.noise_map, rank_map_path=run.rank_map,
            report_volume=run.report_volume, echo_output_paths=run.echo_outputs))


def _with_result(row: Dict[str, Any], steps: _Steps) -> Dict[str, Any]:
    """The pipeline's row, with the rank and sigma ranges inside the mask from the run's result."""
    result = steps.outcomes.get(row["index"])
    if isinstance(result, SeriesResult):
        row.update(rank_min=int(result.rank["min"]), rank_max=int(result.rank["max"]),
                   sigma_min=result.sigma["min"], sigma_max=result.sigma["max"])
    return row


def denoise_batch(
    runs: Iterable[RunSpec],
    output_dir: Optional[str] = None,
    *,
    options: Optional[DenoiseOptions] = None,
    devices: Optional[Sequence[int]] = None,
    backend: str = "auto",
    readers: int = 0,
    writers: int = 0,
    memory_bytes: int = 0,
    overwrite: bool = False,
    maps: bool = False,
    on_run: Optional[Callable[[Dict[str, Any], int, int], Any]] = None,
    return_totals: bool = False,
) -> Union[List[Dict[str, Any]], Tuple[List[Dict[str, Any]], Dict[str, Any]]]:
    """Denoises many 4D NIfTI series in one process, on every GPU, as ``SVDLowRankDenoiseSeries --batch`` does.

    Parameters
    ----------
    runs : iterable of paths, dicts or :class:`DenoiseRun`
        Each a series; a dict names its ``series`` and optionally its ``mask``, ``known_sigma_map``, ``output``,
        ``noise_map``, ``rank_map`` and ``report_volume`` (outputs left out are named under ``output_dir``: see
        :func:`plan_run`).
    output_dir : str, optional
        Where outputs not named go.
    options : DenoiseOptions, optional
        The denoiser's options for every series (its backend and device are the worker's).
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

    Returns
    -------
    One row per run, in order: index, input, output, status ("done", "skipped", "failed"), message, rank_min,
    rank_max, sigma_min, sigma_max (inside the mask; NaN where no noise is modelled), device (-1: the CPU),
    read_seconds, work_seconds, write_seconds. Never raises for one run's failure.
    """
    steps = _Steps([plan_run(spec, output_dir, maps) for spec in runs], options or DenoiseOptions())
    rows, totals = _run(steps, devices, backend, readers, writers, memory_bytes, overwrite, on_run)
    return (rows, totals) if return_totals else rows


def _output_set(run: DenoiseRun) -> List[str]:
    """What one run writes together, its series first (renamed last, so that a run killed between the renames
    leaves it missing): a resume skips a run only when all exist, and redoes one whose set is incomplete."""
    return [path for path in (run.output, run.noise_map, run.rank_map, *run.echo_outputs) if path is not None]


def _run(steps: _Steps, devices: Optional[Sequence[int]], backend: str, readers: int, writers: int,
         memory_bytes: int, overwrite: bool, on_run: Optional[Callable[[Dict[str, Any], int, int], Any]]) -> tuple:
    rows, totals = _engine.batch_pipeline(
        [run.series for run in steps.runs],
        [_output_set(run) for run in steps.runs],
        steps.read,
        steps.work,
        steps.write,
        backend=backend,
        devices=[int(d) for d in devices] if devices is not None else [],
        readers=int(readers),
        writers=int(writers),
        memory_bytes=int(memory_bytes),
        overwrite=bool(overwrite),
        on_item=None if on_run is None else lambda row, done, total: on_run(_with_result(row, steps), done, total),
    )
    return [_with_result(row, steps) for row in rows], totals


def denoise_on_pipeline(devices: Optional[Sequence[int]] = None, **pipeline: Any) -> Callable[..., Iterator[tuple]]:
    """The BIDS App's denoising step (``bids._runner.DenoiseBatch``) on the batch pipeline: its jobs in; out, as
    each series finishes, its index and :class:`SeriesResult` or the exception that stopped it. The App decides
    which runs to do, so outputs are replaced (as :func:`denoise_nifti` replaces them). ``pipeline``: the keywords
    of :func:`denoise_batch` (backend, readers, writers, memory_bytes)."""

    def batch(jobs: Sequence[Any], options: DenoiseOptions) -> Iterator[tuple]:
        from .bids._runner import job_started  # noqa: PLC0415 (the App's seam; the App imports this module)

        # A job without the multi-echo fields is one series.
        steps = _Steps([DenoiseRun(series=job.input, output=job.denoised, noise_map=job.noise, rank_map=job.rank,
                                   report_volume=job.report_volume, echoes=tuple(getattr(job, "echo_inputs", ())),
                                   echo_outputs=tuple(getattr(job, "echo_denoised", ())),
                                   bval=getattr(job, "bval", None)) for job in jobs], options,
                       started=lambda index: job_started(jobs[index]))
        finished: "queue.Queue[Optional[int]]" = queue.Queue()
        refused: List[BaseException] = []

        def run() -> None:
            try:
                _run(steps, devices, pipeline.get("backend", "auto"), pipeline.get("readers", 0),
                     pipeline.get("writers", 0), pipeline.get("memory_bytes", 0), True,
                     lambda row, done, total: finished.put(row["index"]))
            except BaseException as error:  # refused as a whole (a device that cannot be used)
                refused.append(error)
            finally:
                finished.put(None)

        thread = threading.Thread(target=run, name="svdlr-denoise-batch")
        thread.start()
        try:
            while (index := finished.get()) is not None:
                yield index, steps.outcomes.get(index, RuntimeError("the series was not denoised"))
        finally:  # stopped early (an interrupt): the pipeline finishes what it holds
            thread.join()
        if refused:
            for index in range(len(steps.runs)):
                yield index, refused[0]

    return batch
