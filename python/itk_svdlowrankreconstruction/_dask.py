# Copyright SVDLowRankReconstruction contributors
# SPDX-License-Identifier: Apache-2.0
"""Many volumes on a Dask cluster: :func:`reconstruct_volume` mapped over a dataset with ``client.map``.

Dask does the scheduling (this package has no scheduler of its own): any ``distributed`` scheduler works (a
``LocalCluster``, ``dask_cuda.LocalCUDACluster`` for one worker per GPU, Slurm through ``dask-jobqueue``,
Kubernetes), and Dask's own progress bar and dashboard show the run. :func:`itk_svdlowrankreconstruction.denoise_with_dask`
(bids/_dask_runs.py) maps the BIDS App's runs the same way, through :func:`_map_and_gather`. Every worker needs this package installed and the input and output folders at the same paths (a
shared file system)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union
from urllib.parse import urlparse

from ._batch import plan, reconstruct_volume
from ._filter import with_policy


#: Threads of each GPU worker: while one run is on the GPU, one is read and one written (a device runs one series at
#: a time: _nifti_series.denoise_series), as the batch pipeline overlaps them in one process.
THREADS_PER_GPU_WORKER = 3


def local_cuda_cluster(**cluster_options: Any) -> Any:
    """A ``distributed.Client`` on ``dask_cuda.LocalCUDACluster``: one worker per GPU of this host, each seeing
    only its own GPU (so ``device_id`` 0 on every worker) and running :data:`THREADS_PER_GPU_WORKER` tasks at once.
    ``cluster_options`` go to LocalCUDACluster (e.g. ``CUDA_VISIBLE_DEVICES="0,1"``, ``threads_per_worker``).
    Needs the ``dask-cuda`` package."""
    from dask_cuda import LocalCUDACluster  # noqa: PLC0415
    from distributed import Client  # noqa: PLC0415

    cluster_options.setdefault("threads_per_worker", THREADS_PER_GPU_WORKER)
    return Client(LocalCUDACluster(**cluster_options))


def reconstruct_with_dask(
    client: Union[str, Any],
    inputs: Union[str, Iterable[str]],
    output_dir: str,
    *,
    patterns: Optional[Sequence[str]] = None,
    bids: bool = False,
    progress: bool = True,
    **options: Any,
) -> List[Dict[str, Any]]:
    """Reconstructs every volume of ``inputs`` (files and folders, searched as :func:`find_volumes` does) into
    ``output_dir`` on the workers of ``client`` (a ``distributed.Client``, or a scheduler address such as
    ``"tcp://scheduler:8786"``), one task per volume.

    ``options`` go to :func:`reconstruct_volume` (policy, rank, energy_fraction, noise_sigma, backend, solver,
    device_id, overwrite). Outputs that exist are skipped (a re-run resumes); a volume that fails is a row with
    status "failed", and the others go on. ``progress``: Dask's progress bar while the tasks run.

    Returns one row per volume, in input order (:data:`COLUMNS`: input, output, status, slices, rank_min,
    rank_max, sigma_min, sigma_max, seconds, backend, message); ``pandas.DataFrame(rows)`` makes it a table."""
    options = with_policy(options)  # noise_rank, the deprecated name, warned about once here
    pairs = plan(inputs, output_dir, options, patterns=patterns, bids=bids)
    sources, targets = [source for source, _ in pairs], [target for _, target in pairs]
    return _map_and_gather(client, reconstruct_volume, [sources, targets],
                           [f"svdlr-{i}-{target}" for i, target in enumerate(targets)], progress, **options)


def _map_and_gather(client: Union[str, Any], function: Any, iterables: List[List[Any]], keys: List[str],
                    progress: bool, warm_up: Optional[Callable[[Any], Any]] = None, **keywords: Any) -> List[Any]:
    """``function`` mapped over ``iterables`` on ``client`` (a Client, or a scheduler address: a Client opened and
    closed around the work), Dask's progress bar while the tasks run, the results in order. ``warm_up``: called with
    the client first (to run what every worker needs before the tasks)."""
    from distributed import Client, progress as progress_bar  # noqa: PLC0415

    own = isinstance(client, str)
    if own:
        client = Client(client)
    try:
        if warm_up:
            warm_up(client)
        # pure=False: a re-run must look at the output folder again, not reuse a cached result.
        futures = client.map(function, *iterables, key=keys, pure=False, **keywords)
        if progress:
            progress_bar(futures)
        return client.gather(futures)
    finally:
        if own:
            client.close()


def _workers_per_host(client: Any) -> Dict[str, int]:
    """Each worker's address, and how many of the client's workers share its host."""
    workers = client.scheduler_info()["workers"]
    host = {address: info.get("host") or urlparse(address).hostname for address, info in workers.items()}
    counts = Counter(host.values())
    return {address: counts[name] for address, name in host.items()}
