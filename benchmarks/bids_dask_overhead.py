#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""The fixed cost of denoise_with_dask: the BIDS App's runs through Dask against the same runs in one process.

Makes N tiny dwi runs (python/tests/bids_dataset.py's series), times bids.process_runs over them in this process
(after one warm-up run, so that imports are not counted), then denoise_with_dask on a LocalCluster of one worker
(started before the clock): a first call on fresh workers (their imports included) and a second one. With one
worker both do the same work one run after another, so the difference is what Dask adds.

    python3 benchmarks/bids_dask_overhead.py [--runs 16] [--processes] [--reports]
"""
import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
from bids_dataset import low_rank_signal, write_nifti  # noqa: E402


def make_runs(root: Path, count: int, rng: np.random.Generator) -> None:
    (root / "dataset_description.json").parent.mkdir(parents=True, exist_ok=True)
    (root / "dataset_description.json").write_text('{"Name": "overhead", "BIDSVersion": "1.9.0"}')
    for s in range(count):
        signal = low_rank_signal(rng)
        write_nifti(root / f"sub-{s:02d}" / "dwi" / f"sub-{s:02d}_dwi.nii.gz", signal + rng.normal(0, 1, signal.shape))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=16)
    parser.add_argument("--processes", action="store_true", help="a worker process (default: a worker thread)")
    parser.add_argument("--reports", action="store_true", help="draw the reportlets too")
    parser.add_argument("--backend", default="cpu")
    arguments = parser.parse_args()

    import distributed

    import itk_svdlowrankreconstruction as svdlr
    from itk_svdlowrankreconstruction import bids

    options = bids.DenoiseOptions(backend=arguments.backend, threads=1)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "raw"
        make_runs(root, arguments.runs, np.random.default_rng(1))
        runs = bids.find_runs(str(root))
        bids.process_runs(runs[:1], os.path.join(folder, "warm"), options, reports=arguments.reports)
        start = time.perf_counter()
        bids.process_runs(runs, os.path.join(folder, "direct"), options, reports=arguments.reports)
        direct = time.perf_counter() - start

        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=arguments.processes,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            timings = []
            for call in ("first", "second"):
                start = time.perf_counter()
                rows = svdlr.denoise_with_dask(client, runs, os.path.join(folder, call), options=options,
                                               reports=arguments.reports)
                timings.append(time.perf_counter() - start)
                assert all(r["status"] == "done" for r in rows), rows
    worker = "process" if arguments.processes else "thread"
    print(f"{arguments.runs} runs of 12x12x8x12, reports {'on' if arguments.reports else 'off'}, one worker {worker}:")
    print(f"  in this process: {direct:.3f} s ({direct / arguments.runs * 1000:.1f} ms a run)")
    for call, seconds in zip(("first", "second"), timings):
        print(f"  through Dask, {call} call: {seconds:.3f} s: fixed cost {seconds - direct:+.3f} s "
              f"({(seconds - direct) / arguments.runs * 1000:+.1f} ms a run)")


if __name__ == "__main__":
    main()
