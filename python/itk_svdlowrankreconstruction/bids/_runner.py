# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Runs in, one result row per run out: the BIDS App's work, the same from the command line and from Dask.

A run goes through three steps:

1. planning: its output paths; a run whose outputs are complete is skipped (a re-run resumes);
2. denoising: a :data:`DenoiseBatch` takes every series left and yields, as each finishes, its result or the
   exception that stopped it. The default denoises them one by one in this process; a batch pipeline over several
   GPUs can take its place (``process_runs(..., denoise_batch=...)``) without the other steps changing;
3. finishing, as each result arrives: the gradient table, the maps' sidecars, the reportlet, then the series'
   sidecar, which marks the run complete.

A run that fails at any step is a row with status "failed" and a message naming its file; the others go on."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _engine
from .._nifti_series import DenoiseOptions, SeriesResult, denoise_nifti, read_bvalues, reference_volume
from . import _outputs
from ._boilerplate import methods_text
from ._layout import Run
from ._report import matplotlib_missing, write_reportlet

#: The columns of a result row, in order.
COLUMNS = ("run", "status", "output", "seconds", "sigma_median", "rank_median", "message")


@dataclass(frozen=True)
class SeriesJob:
    """One series for the denoising step: the file it reads, the three images it writes, and the volume a
    reportlet shows (None: no reportlet)."""

    input: str
    denoised: str
    noise: str
    rank: str
    report_volume: Optional[int]
    echo_inputs: Tuple[str, ...] = ()  # a multi-echo run's further echoes, denoised jointly with `input`
    echo_denoised: Tuple[str, ...] = ()  # where they are written
    bval: Optional[str] = None  # the b-values, for demean="shells"
    #: Called when the denoising step starts on this series (reading it), for a progress line; a DenoiseBatch calls
    #: it through :func:`job_started`.
    on_start: Optional[Callable[[], Any]] = field(default=None, compare=False)


def job_started(job: Any) -> None:
    """What a :data:`DenoiseBatch` calls as it starts on ``job`` (a job without ``on_start`` is left alone)."""
    on_start = getattr(job, "on_start", None)
    if on_start is not None:
        on_start()


#: The denoising step: jobs in; out, as each series finishes (in any order), its index among the jobs and its
#: :class:`SeriesResult` or the exception that stopped it. Yielding as they finish lets each run be completed (its
#: sidecar written) at once, so that an interrupted batch keeps the runs it finished.
Outcome = Tuple[int, Union[SeriesResult, Exception]]
DenoiseBatch = Callable[[Sequence[SeriesJob], DenoiseOptions], Iterator[Outcome]]


def denoise_one_by_one(jobs: Sequence[SeriesJob], options: DenoiseOptions) -> Iterator[Outcome]:
    """The default :data:`DenoiseBatch`: each series in turn, in this process."""
    for index, job in enumerate(jobs):
        job_started(job)
        try:
            result: Union[SeriesResult, Exception] = denoise_nifti(
                job.input, job.denoised, noise_map_path=job.noise, rank_map_path=job.rank, options=options,
                report_volume=job.report_volume, echo_paths=job.echo_inputs, echo_output_paths=job.echo_denoised,
                bval_path=job.bval)
        except Exception as error:  # one series' failure is its result, not the end of the batch
            result = error
        yield index, result


def _row(run: Run, status: str, output: str, seconds: float = 0.0, result: Optional[SeriesResult] = None,
         message: str = "") -> Dict[str, Any]:
    return {"run": run.relative, "status": status, "output": output, "seconds": seconds,
            "sigma_median": result.sigma["median"] if result else float("nan"),
            "rank_median": result.rank["median"] if result else float("nan"), "message": message}


def _failure(run: Run, error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if run.relative.split("/")[-1] in text else f"{run.relative}: {text}"


def _finish(run: Run, outputs: _outputs.RunOutputs, result: SeriesResult, options: DenoiseOptions, reports: bool,
            version: str, echo_outputs: Sequence[_outputs.RunOutputs] = ()) -> str:
    """Everything after the images; the series' sidecar last. Returns a note for the row ("" when none). A
    multi-echo run's further echoes come first, each with the joint noise and rank maps and a sidecar naming every
    echo's raw file; the first echo's sidecar, last, marks the run complete."""
    sources = [_outputs.raw_uri(r) for r in (run,) + run.echoes]
    for echo, echo_output in zip(run.echoes, echo_outputs):
        _outputs.copy_atomically(outputs.noise, echo_output.noise)
        _outputs.copy_atomically(outputs.rank, echo_output.rank)
        _finish_one(echo, echo_output, result, options, False, version, sources)
    note = _finish_one(run, outputs, result, options, reports, version, sources)
    echoes = f"denoised jointly with {len(run.echoes)} further echo(es)" if run.echoes else ""
    return "; ".join(n for n in (echoes, note) if n)


def _parameters_used(options: DenoiseOptions, result: SeriesResult) -> Dict[str, Any]:
    """The options as the run used them, for the sidecars: the defaults filled in, and the patch as it was, a
    cuboid's extent (no radius) or a sphere's radius and voxel count (no extent), as the engine fitted it."""
    parameters = options.record(result.negative_values)
    parameters["policy"] = options.policy_used()
    fitted = len(result.shape) == 4
    if options.shape_used() == "sphere":
        del parameters["patch"]
        if fitted:
            parameters["patch_radius"], parameters["patch_voxels"] = _engine.sphere_patch_used(
                list(result.shape[:3]), result.shape[3], options.patch_radius)
    else:
        del parameters["patch_radius"]
        if parameters["patch"] is None and fitted:
            parameters["patch"] = list(_engine.patch_size_used(list(result.shape[:3]), result.shape[3]))
    if fitted:  # the stride used, as the engine chose it for this run (a sphere's box does not matter: 1)
        box = parameters.get("patch") or list(_engine.patch_size_used(list(result.shape[:3]), result.shape[3]))
        parameters["stride"] = _engine.patch_stride_used(box, parameters["patch_shape"], parameters["aggregation"],
                                                         options.stride or _engine.AUTO_PATCH_STRIDE)
    return parameters


def _finish_one(run: Run, outputs: _outputs.RunOutputs, result: SeriesResult, options: DenoiseOptions, reports: bool,
                version: str, sources: Sequence[str]) -> str:
    notes = []
    if run.bval and run.bvec:
        _outputs.copy_atomically(run.bval, outputs.bval)
        _outputs.copy_atomically(run.bvec, outputs.bvec)
    elif run.datatype == "dwi":
        notes.append("no .bval/.bvec found for this run: none written beside it")
    if reports:
        missing = matplotlib_missing()
        if missing:
            notes.append(missing)
        elif result.report is not None:
            write_reportlet(result.report, outputs.figure, run.relative.split("/")[-1])
    parameters = _parameters_used(options, result)
    for output_map, image in ((_outputs.NOISE_MAP, outputs.noise), (_outputs.RANK_MAP, outputs.rank)):
        _outputs.write_json_atomically(_outputs.map_sidecar(run, output_map, parameters, sources, version),
                                       image[: -len(".nii.gz")] + ".json")
    sidecar = _outputs.series_sidecar(run, parameters, result.rank, result.sigma, result.seconds, version)
    sidecar["Sources"] = list(sources)
    _outputs.write_json_atomically(sidecar, outputs.sidecar)
    return "; ".join(notes)


def process_runs(
    runs: Sequence[Run],
    output_dir: str,
    options: Optional[DenoiseOptions] = None,
    *,
    reports: bool = True,
    overwrite: bool = False,
    denoise_batch: DenoiseBatch = denoise_one_by_one,
    on_start: Optional[Callable[[Run], Any]] = None,
    on_row: Optional[Callable[[Dict[str, Any]], Any]] = None,
) -> List[Dict[str, Any]]:
    """Denoises ``runs`` into the BIDS derivative folder ``output_dir``; returns one row per run, in order
    (:data:`COLUMNS`; status "done", "skipped" or "failed"). Runs whose outputs are complete are skipped unless
    ``overwrite``. ``options``: default :class:`DenoiseOptions()`. Never raises for one run's failure.
    ``on_start(run)`` is called as the denoising step starts on a run, ``on_row(row)`` as each row is known (in the
    order runs finish), for progress lines."""
    options = options or DenoiseOptions()
    rows: List[Optional[Dict[str, Any]]] = [None] * len(runs)

    def settle(index: int, row: Dict[str, Any]) -> None:
        rows[index] = row
        if on_row is not None:
            on_row(row)

    pending = []
    for index, run in enumerate(runs):
        outputs = _outputs.outputs_for(run, output_dir)
        echo_outputs = tuple(_outputs.outputs_for(echo, output_dir) for echo in run.echoes)
        if not overwrite and all(_outputs.is_complete(o) for o in (outputs,) + echo_outputs):
            settle(index, _row(run, "skipped", outputs.denoised, message="outputs exist"))
            continue
        try:
            for each in (run,) + run.echoes:  # the tools' rule: a table that disagrees with its series fails the run
                _engine.check_gradient_table(each.path, each.bval, each.bvec)
            volume = reference_volume(read_bvalues(run.bval)) if reports else None
        except (OSError, ValueError) as error:
            settle(index, _row(run, "failed", outputs.denoised, message=_failure(run, error)))
            continue
        os.makedirs(os.path.dirname(outputs.denoised), exist_ok=True)
        pending.append((index, run, outputs, echo_outputs,
                        SeriesJob(run.path, outputs.denoised, outputs.noise, outputs.rank, volume,
                                  tuple(echo.path for echo in run.echoes), tuple(o.denoised for o in echo_outputs),
                                  run.bval, None if on_start is None else (lambda run=run: on_start(run)))))
    start = time.perf_counter()
    for position, result in denoise_batch([job for *_, job in pending], options):
        index, run, outputs, echo_outputs, _ = pending[position]
        if isinstance(result, Exception):
            settle(index, _row(run, "failed", outputs.denoised, time.perf_counter() - start,
                               message=_failure(run, result)))
            continue
        try:
            note = _finish(run, outputs, result, options, reports, _engine.__version__, echo_outputs)
            row = _row(run, "done", outputs.denoised, result.seconds, result, note)
        except Exception as error:  # a sidecar or figure that cannot be written fails this run only
            row = _row(run, "failed", outputs.denoised, result.seconds, result, _failure(run, error))
        settle(index, row)
    missing = [pending[p][1].relative for p in range(len(pending)) if rows[pending[p][0]] is None]
    if missing:
        raise RuntimeError(f"the denoising step returned no result for {', '.join(missing)}")
    return [row for row in rows if row is not None]


def process_run(run: Run, output_dir: str, options: Optional[DenoiseOptions] = None, *, reports: bool = True,
                overwrite: bool = False) -> Dict[str, Any]:
    """One run: the task Dask maps (:func:`denoise_with_dask`)."""
    return process_runs([run], output_dir, options, reports=reports, overwrite=overwrite)[0]


def prepare_output_dir(bids_dir: str, output_dir: str, options: DenoiseOptions, datatypes: Sequence[str]) -> None:
    """The dataset-level files, once per dataset: dataset_description.json (kept when there) and the methods
    boilerplate logs/CITATION.md (for this run's options). ValueError, before anything is written, for an
    ``output_dir`` that is or lies inside the raw dataset (:func:`._outputs.output_dir_problem`)."""
    problem = _outputs.output_dir_problem(bids_dir, output_dir)
    if problem:
        raise ValueError(problem)
    os.makedirs(output_dir, exist_ok=True)
    description = os.path.join(output_dir, "dataset_description.json")
    if not os.path.exists(description):
        _outputs.write_json_atomically(_outputs.dataset_description(bids_dir, _engine.__version__), description)
    _outputs.write_text_atomically(methods_text(options, _engine.__version__, list(datatypes)),
                                   os.path.join(output_dir, "logs", "CITATION.md"))
