# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""``svdlr-bids BIDS_DIR OUTPUT_DIR participant [options]``: the BIDS App's command line (docs/bids.md).

It follows the BIDS-Apps convention (positional bids_dir, output_dir and analysis level; --participant-label, also
spelled --participant_label) and the denoiser options of SVDLowRankDenoiseSeries. Exit codes are the tools'
(apps/tool/SVDLowRankExitCodes.h, through the extension module)."""

from __future__ import annotations

import argparse
import math
import signal
import sys
from typing import List, Optional, Sequence

from .. import _engine
from .._nifti_series import ESTIMATOR_POLICIES, DenoiseOptions, policy_with_estimator
from ._layout import DEFAULT_DATATYPES, RUN_SUFFIXES, Run, find_runs
from ._outputs import output_dir_problem
from .._denoise_batch import denoise_on_pipeline
from ._runner import prepare_output_dir, process_runs


class _UsageError(Exception):
    pass


class _Stopped(BaseException):
    """SIGTERM, raised in the main thread: a BaseException, so that no run's failure handling catches it, and the
    finally blocks remove the temporary files of the run under way."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum


def _raise_stopped(signum: int, _frame) -> None:
    raise _Stopped(signum)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits with 2, the tools' usage code; say so through ours
        self.print_usage(sys.stderr)
        self.exit(_engine.EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _patch(text: str) -> tuple:
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes P or PX,PY,PZ (odd voxel counts), got '{text}'") from None
    if len(values) == 1:
        values *= 3
    if len(values) != 3 or any(v < 1 or v % 2 == 0 for v in values):
        raise argparse.ArgumentTypeError(f"takes P or PX,PY,PZ (odd voxel counts >= 1), got '{text}'")
    return tuple(values)


def _whole_number(low: int, high: int):
    """An argparse type: a whole number in [low, high], refused at parse time (exit 2) as the tools' CLI11 checks
    refuse theirs, so that a bad value never reaches a run."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"takes a whole number, got '{text}'") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"takes a whole number in [{low}, {high}], got {value}")
        return value

    return parse


def _real_number(description: str, accepts):
    """An argparse type: a finite number that ``accepts``; NaN and Inf are refused (float() takes them)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"takes {description}, got '{text}'") from None
        if not (math.isfinite(value) and accepts(value)):
            raise argparse.ArgumentTypeError(f"takes {description}, got '{text}'")
        return value

    return parse


# The tools' limits (apps/tool/SVDLowRankDenoiseOptions.cxx, SVDLowRankCommonOptions.cxx); --nthreads also takes 0
# here, the App's "every core".
_positive_int = _whole_number(1, 4294967295)
_stride = _whole_number(1, 65535)
_threads = _whole_number(0, 4096)
_device = _whole_number(0, 999999)
_radius = _real_number("a finite number >= 1", lambda r: r >= 1.0)
_fraction = _real_number("a finite number in (0, 1]", lambda f: 0.0 < f <= 1.0)
_sigma = _real_number("a finite number > 0", lambda s: s > 0.0)


def _device_list(text: str) -> list:
    try:
        devices = [int(d) for d in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes device numbers separated by commas (0,1), got '{text}'") from None
    if not devices or any(d < 0 for d in devices) or len(set(devices)) != len(devices):
        raise argparse.ArgumentTypeError(f"takes distinct device numbers >= 0 (0,1), got '{text}'")
    return devices


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="svdlr-bids",
        description="Denoises every dwi run (and func bold runs with --datatype func) of a BIDS dataset by local "
                    "low-rank approximation (MP-PCA), into a BIDS derivative dataset.",
        epilog=_engine.EXIT_CODE_TABLE.replace("(the same for both tools)", "(the same as the tools')")
        + "  4 here: some runs failed (listed), the others were written.\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bids_dir", help="the raw BIDS dataset")
    parser.add_argument("output_dir", help="the derivative dataset to write (created when missing)")
    parser.add_argument("analysis_level", choices=["participant"], help="only 'participant': one pass over runs")
    parser.add_argument("--participant-label", "--participant_label", nargs="+", metavar="L",
                        help="only these subjects (with or without 'sub-')")
    parser.add_argument("--session-label", "--session_label", nargs="+", metavar="S",
                        help="only these sessions (with or without 'ses-')")
    parser.add_argument("--datatype", nargs="+", choices=sorted(RUN_SUFFIXES), default=list(DEFAULT_DATATYPES),
                        help="which runs to denoise: dwi (default) and/or func (bold runs)")
    denoiser = parser.add_argument_group("denoiser (as SVDLowRankDenoiseSeries)")
    denoiser.add_argument("--patch", "--extent", type=_patch, metavar="PX,PY,PZ",
                          help="patch extent in voxels (odd); default: the smallest cube of at least as many "
                               "voxels as volumes")
    denoiser.add_argument("--stride", type=_stride, default=None,
                          help="centre patches on every N-th voxel; 1: every voxel (dense); default: half the patch's "
                               "smallest extent (2 for 5x5x5, 3 for 7x7x7)")
    denoiser.add_argument("--patch-shape", choices=list(_engine.PATCH_SHAPES),
                          help=f"cuboid (--patch) or sphere (--patch-radius) (default {_engine.DEFAULT_PATCH_SHAPE})")
    denoiser.add_argument("--patch-radius", type=_radius, metavar="R",
                          help="a sphere's radius in voxels (implies --patch-shape sphere); default: the smallest "
                               "holding 20/17 voxels per volume")
    denoiser.add_argument("--aggregation", choices=list(_engine.AGGREGATIONS),
                          help="centre, overlap, or overlap weighted by 1/(1+rank) (rank) or by a Gaussian of the "
                               f"distance, FWHM 2 voxels (gaussian) (default {_engine.DEFAULT_DENOISE_AGGREGATION})")
    denoiser.add_argument("--shrinkage", choices=["auto", "hard", "frobenius"],
                          help=f"default {_engine.DEFAULT_DENOISE_SHRINKAGE}")
    denoiser.add_argument("--noise-estimator", choices=list(_engine.NOISE_ESTIMATORS),
                          help="how each patch's sigma is measured once its rank is chosen: mp (the "
                               "Marchenko-Pastur fit's mean, dwidenoise's) or residual (the energy outside the kept "
                               f"rank over its degrees of freedom); default {_engine.DEFAULT_DENOISE_NOISE_ESTIMATOR}")
    denoiser.add_argument("--policy", choices=list(_engine.POLICIES),
                          help=f"how each patch's rank is chosen (default {_engine.DEFAULT_DENOISE_POLICY})")
    denoiser.add_argument("--estimator", type=str.lower, choices=sorted(ESTIMATOR_POLICIES),
                          help="as dwidenoise -estimator: exp1 = --policy mp, exp2 = --policy mp-cg")
    denoiser.add_argument("--rank", type=_positive_int, help="the rank every patch keeps (implies --policy fixed)")
    denoiser.add_argument("--energy-fraction", type=_fraction, help="with --policy energy")
    denoiser.add_argument("--noise-sigma", type=_sigma, help="a known sigma for every voxel, not estimated")
    denoiser.add_argument("--vst", action="store_true",
                          help="variance-stabilise the magnitude for its Rician (non-central chi) noise before the "
                               "low-rank step and invert after")
    denoiser.add_argument("--noise-floor", action="store_true",
                          help="write the signal with the magnitude's noise floor removed")
    denoiser.add_argument("--no-magnitude-model", action="store_true",
                          help="denoise the magnitude as it is (Gaussian noise, the floor kept; dwidenoise's model). "
                               "Without it, a run whose sigma is estimated is variance-stabilised and its noise "
                               "floor removed, as with --vst --noise-floor")
    denoiser.add_argument("--sigma-floor-correction", action="store_true",
                          help="correct the noise map estimated on the magnitude for its noise floor (not with "
                               "--noise-sigma or --vst)")
    denoiser.add_argument("--coils", type=_positive_int,
                          help="coils combined by root-sum-of-squares, for --vst, --noise-floor and "
                               "--sigma-floor-correction (default 1)")
    denoiser.add_argument("--demean", choices=list(_engine.DEMEAN_CHOICES),
                          help="subtract each voxel's mean over groups of volumes before the low-rank step and add "
                               "it back after: all, shells (dwi, from the run's .bval), echoes (multi-echo func "
                               f"runs, denoised jointly) or none (default {_engine.DEFAULT_DEMEAN})")
    denoiser.add_argument("--backend", choices=list(_engine.BACKENDS), default="auto")
    denoiser.add_argument("--device", type=_device, metavar="N",
                          help="the one CUDA device to use (default: every device, as --devices lists them)")
    denoiser.add_argument("--devices", type=_device_list, metavar="LIST",
                          help="CUDA devices to share the runs in this process (0,1), one run at a time each "
                               "(default: every device)")
    denoiser.add_argument("--nthreads", type=_threads, default=0, help="CPU threads (0: all)")
    run = parser.add_argument_group("run")
    run.add_argument("--no-reports", action="store_true", help="no reportlet figures")
    run.add_argument("--overwrite", action="store_true", help="redo runs whose outputs exist")
    run.add_argument("--dask-scheduler", metavar="ADDRESS",
                     help="run one task per run on this Dask scheduler (tcp://host:8786) instead of here")
    run.add_argument("--quiet", action="store_true", help="print failures only")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_engine.__version__}")
    return parser


def _options(arguments: argparse.Namespace) -> DenoiseOptions:
    if arguments.device is not None and arguments.devices is not None:
        raise _UsageError("--device takes one device number, and not with --devices")
    if arguments.no_magnitude_model and (arguments.vst or arguments.noise_floor or arguments.sigma_floor_correction):
        raise _UsageError("--no-magnitude-model turns the automatic model off; --vst, --noise-floor and "
                          "--sigma-floor-correction ask for one: give one or the other")
    try:
        policy = policy_with_estimator(arguments.policy, arguments.estimator, "--")
    except ValueError as error:
        raise _UsageError(str(error)) from None
    # The options by their names (--patch, --stride, --vst...), then those the command line spells otherwise.
    return DenoiseOptions.of(vars(arguments), patch_radius=arguments.patch_radius or 0.0, policy=policy,
                             device_id=arguments.device or 0, threads=arguments.nthreads,
                             magnitude_model=False if arguments.no_magnitude_model else None)


def _devices_used(arguments: argparse.Namespace) -> Optional[List[int]]:
    """The GPUs the runs share in this process: --devices, or the one --device, or None for every device."""
    if arguments.device is not None:
        return [arguments.device]
    return arguments.devices


def _print_start(run: Run) -> None:
    print(f"{'start':8s} {run.relative}", flush=True)


def _print_row(row: dict) -> None:
    """A run's line as it finishes: done with its time (and sigma and rank), skipped, or failed (also listed on
    stderr at the end)."""
    sigma = row["sigma_median"]
    values = ""
    if row["status"] == "done":
        values = f"  {row['seconds']:.1f} s" if math.isnan(sigma) else \
            f"  sigma {sigma:.4g}  rank {row['rank_median']:.0f}  {row['seconds']:.1f} s"
    print(f"{row['status']:8s} {row['run']}{values}{'  (' + row['message'] + ')' if row['message'] else ''}",
          flush=True)


def _outcome(rows: Sequence[dict]) -> str:
    """The last line when runs failed: how many of how many, and what became of the others."""
    failed = sum(row["status"] == "failed" for row in rows)
    if failed == len(rows):
        return f"all {failed} runs failed (listed above)" if failed > 1 else "the run failed (listed above)"
    done = sum(row["status"] == "done" for row in rows)
    skipped = sum(row["status"] == "skipped" for row in rows)
    others = [f"{done} done"] + ([f"{skipped} skipped (their outputs existed)"] if skipped else [])
    return f"{failed} of {len(rows)} runs failed (listed above); {', '.join(others)}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    # One line at a time, also into a pipe or a log file (block-buffered there by default): a run's line is kept
    # even when the process is killed after it.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    try:
        arguments = _parser().parse_args(argv)
    except SystemExit as done:  # --help, --version (0) or a bad command line (EXIT_USAGE): returned, not raised
        return int(done.code or 0)
    try:
        options = _options(arguments)
        _check_options(options)
        problem = output_dir_problem(arguments.bids_dir, arguments.output_dir)
        if problem:
            raise _UsageError(problem)
        runs = find_runs(arguments.bids_dir, participant_labels=arguments.participant_label,
                         session_labels=arguments.session_label, datatypes=arguments.datatype)
    except (_UsageError, LookupError) as error:
        print(f"svdlr-bids: error: {error}", file=sys.stderr)
        return _engine.EXIT_USAGE
    except (OSError, ValueError) as error:
        print(f"svdlr-bids: error: {error}", file=sys.stderr)
        return _engine.EXIT_INPUT_ERROR
    if not runs:
        print(f"svdlr-bids: error: no {' or '.join(arguments.datatype)} runs in '{arguments.bids_dir}' for this "
              "selection", file=sys.stderr)
        return _engine.EXIT_INPUT_ERROR
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        prepare_output_dir(arguments.bids_dir, arguments.output_dir, options, arguments.datatype)
        if arguments.dask_scheduler:
            from ._dask_runs import denoise_with_dask  # noqa: PLC0415

            rows = denoise_with_dask(arguments.dask_scheduler, runs, arguments.output_dir, options=options,
                                     reports=not arguments.no_reports, overwrite=arguments.overwrite)
            printed = False  # the workers' rows come back at the end
        else:
            # The tools' batch pipeline: readers, one worker per GPU (or the CPU), writers, as the C++ tool's --batch.
            batch = denoise_on_pipeline(_devices_used(arguments), backend=options.backend)
            rows = process_runs(runs, arguments.output_dir, options, reports=not arguments.no_reports,
                                overwrite=arguments.overwrite, denoise_batch=batch,
                                on_start=None if arguments.quiet else _print_start,
                                on_row=None if arguments.quiet else _print_row)
            printed = not arguments.quiet
    except (KeyboardInterrupt, _Stopped) as stop:  # temporary files are gone (finally blocks); complete runs stay
        signum = stop.signum if isinstance(stop, _Stopped) else int(signal.SIGINT)
        print(f"svdlr-bids: stopped by signal {signum}; the runs done are complete", file=sys.stderr)
        return _engine.EXIT_INTERRUPTED + signum
    except OSError as error:  # the output folder itself cannot be written
        print(f"svdlr-bids: error: {error}", file=sys.stderr)
        return _engine.EXIT_FAILURE
    finally:
        signal.signal(signal.SIGTERM, previous)
    failed = [row for row in rows if row["status"] == "failed"]
    for row in rows:
        if row["status"] == "failed":
            print(f"svdlr-bids: failed: {row['run']}: {row['message']}", file=sys.stderr)
        elif not arguments.quiet and not printed:
            _print_row(row)
    if failed:
        print(f"svdlr-bids: {_outcome(rows)}", file=sys.stderr)
        return _engine.EXIT_SOME_FAILED
    return _engine.EXIT_SUCCESS


def _check_options(options: DenoiseOptions) -> None:
    """The options' rules, checked once by the engine's own parser before any run starts (a bad option would
    otherwise fail every run)."""
    try:
        _engine.policy_description(policy=options.policy_used(), rank=options.rank,
                                   energy_fraction=options.energy_fraction, noise_sigma=options.noise_sigma)
    except (ValueError, TypeError) as error:
        raise _UsageError(str(error)) from error
    if options.sigma_floor_correction:
        problem = _engine.sigma_floor_correction_problem(vst=options.vst, known_sigma=options.noise_sigma is not None)
        if problem:
            raise _UsageError(f"--sigma-floor-correction: {problem}")


if __name__ == "__main__":
    sys.exit(main())
