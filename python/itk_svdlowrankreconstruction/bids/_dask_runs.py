# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""The BIDS App's runs on a Dask cluster, one task per run (:func:`denoise_with_dask`), mapped as
:mod:`.._dask` maps volumes. Here rather than in ``_dask`` so that the imports go one way: the App uses Dask's
mapping, never the reverse."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

from .._dask import _map_and_gather, _workers_per_host


def _prepare_worker(reports: bool, sharing: Dict[str, int], dask_worker: Any = None) -> None:
    """Run on every worker before the tasks start. Its share of the host's cores: several workers on one host
    (one per GPU) each take every core for their reading, writing and engine unless told, 2x the cores on a
    two-GPU host (measured: two workers 1.52x one, the one process 1.75x). Then what every run task needs, imported
    once per worker process (not inside the first task, where it would count as that run's time and, on a fresh
    worker, stall its first run)."""
    from .. import _engine  # noqa: PLC0415

    sharing_host = sharing.get(dask_worker.address, 1) if dask_worker is not None else 1
    _engine.limit_cpu_threads(0)  # this worker's own cores first (a cap from an earlier call lifted), then its share
    if sharing_host > 1:
        _engine.limit_cpu_threads(max(1, _engine.usable_cpu_threads() // sharing_host))
    import nibabel  # noqa: F401, PLC0415

    from . import _runner  # noqa: F401, PLC0415

    if reports:
        try:
            from matplotlib.figure import Figure  # noqa: F401, PLC0415
        except ImportError:
            pass  # the runs note that they have no reportlet


def denoise_with_dask(
    client: Union[str, Any],
    runs: Union[str, Sequence[Any]],
    output_dir: str,
    *,
    options: Any = None,
    reports: bool = True,
    overwrite: bool = False,
    progress: bool = False,
    participant_labels: Optional[Sequence[str]] = None,
    session_labels: Optional[Sequence[str]] = None,
    datatypes: Sequence[str] = ("dwi",),
) -> List[Dict[str, Any]]:
    """The BIDS App's runs on the workers of ``client`` (a ``distributed.Client`` or a scheduler address), one task
    per run: :func:`itk_svdlowrankreconstruction.bids.process_run`, with its rules (complete outputs are skipped
    unless ``overwrite``, a run that fails is a row with status "failed" and the others go on).

    ``runs``: a raw BIDS dataset folder (searched with ``participant_labels``, ``session_labels`` and
    ``datatypes``; its dataset_description.json and methods boilerplate are written into ``output_dir`` first), or
    runs from :func:`itk_svdlowrankreconstruction.bids.find_runs` (the caller writes the dataset files: the
    command line does). ``options``: a :class:`itk_svdlowrankreconstruction.bids.DenoiseOptions`. Returns one row
    per run, in order (``bids.COLUMNS``). Every worker needs this package with its ``bids`` extra and the same
    paths (a shared file system)."""
    from .._nifti_series import DenoiseOptions  # noqa: PLC0415
    from ._layout import find_runs  # noqa: PLC0415
    from ._runner import prepare_output_dir, process_run  # noqa: PLC0415

    options = options or DenoiseOptions()
    if isinstance(runs, (str, os.PathLike)):
        bids_dir = os.fspath(runs)
        runs = find_runs(bids_dir, participant_labels=participant_labels, session_labels=session_labels,
                         datatypes=datatypes)
        prepare_output_dir(bids_dir, output_dir, options, datatypes)
    runs = list(runs)
    keys = [f"svdlr-bids-{i}-{run.relative}" for i, run in enumerate(runs)]
    return _map_and_gather(client, process_run, [runs], keys, progress,
                           warm_up=lambda c: c.run(_prepare_worker, reports, _workers_per_host(c)),
                           output_dir=output_dir, options=options, reports=reports, overwrite=overwrite)
