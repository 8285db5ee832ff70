#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Where the BIDS App's time goes, on one GPU and on two in one process: the App's command line run in this
process (bids._cli.main) with each batch-pipeline step (read, work, write) and the engine call inside each timed
on the thread that ran it. A step's time outside its engine call is Python holding the GIL (or waiting for it),
so when two GPUs do not beat one, this says whether the GIL, the readers and writers, or the GPUs are the bound.

    python3 bids_app_trace.py --phantom WORK/phantom96x96x60x65 --subjects 20 --work WORK [--devices 0 0,1]

(benchmarks/device.sh, stage bids-app with BIDS_TRACE=1, calls it after bids_app_session.py, on its dataset.)
"""
import argparse
import shutil
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from bids_app_session import make_dataset

# What is timed: (owner module or class, attribute, label). The engine calls release the GIL.
STEPS = ("read", "work", "write")
ENGINE_CALLS = {"read": "load_nifti_float32", "work": "denoise_local_low_rank", "write": "write_gzip_file"}

Interval = Tuple[str, int, float, float]  # label, native thread id, start, end


def instrument(intervals: List[Interval]) -> Callable[[], None]:
    """Wraps the steps and the engine calls to append their intervals; returns what undoes it."""
    from itk_svdlowrankreconstruction import _denoise_batch, _engine

    undo = []

    def wrap(owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed(*args, **keywords):
            start = time.perf_counter()
            try:
                return original(*args, **keywords)
            finally:
                intervals.append((label, threading.get_native_id(), start, time.perf_counter()))

        setattr(owner, name, timed)
        undo.append(lambda: setattr(owner, name, original))

    for step in STEPS:
        wrap(_denoise_batch._Steps, step, step)
        wrap(_engine, ENGINE_CALLS[step], f"{step}: engine")
    return lambda: [u() for u in reversed(undo)]


def overlap_seconds(spans: List[Tuple[float, float]], at_least: int) -> float:
    """Seconds during which at least `at_least` of `spans` run at once."""
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running, since, total = 0, 0.0, 0.0
    for moment, change in events:
        if running >= at_least:
            total += moment - since
        running += change
        since = moment
    return total


def report(label: str, wall: float, intervals: List[Interval]) -> None:
    by_label: Dict[str, List[Interval]] = defaultdict(list)
    for interval in intervals:
        by_label[interval[0]].append(interval)
    print(f"- {label}: {wall:.2f} s for the App's main()")
    for step in STEPS:
        outer = by_label.get(step, [])
        inner = by_label.get(f"{step}: engine", [])
        if not outer:
            continue
        total = sum(e - s for _, _, s, e in outer)
        engine = sum(e - s for _, _, s, e in inner)
        threads = len({t for _, t, _, _ in outer})
        print(f"  {step}: {len(outer)} calls on {threads} thread(s), mean {total / len(outer):.3f} s, of which the "
              f"engine {engine / len(outer):.3f} s (Python {(total - engine) / len(outer):.3f} s a call; "
              f"{total:.2f} s in all)")
    work = [(s, e) for name, _, s, e in by_label.get("work: engine", [])]
    if work:
        print(f"  engine work running: {overlap_seconds(work, 1):.2f} s of the wall, two at once "
              f"{overlap_seconds(work, 2):.2f} s")
    python = [(s, e) for name, _, s, e in intervals if ": engine" not in name]
    print(f"  some step running: {overlap_seconds(python, 1):.2f} s; two or more {overlap_seconds(python, 2):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phantom", required=True, help="make_dwi_phantom.py's --out prefix")
    parser.add_argument("--subjects", type=int, default=20)
    parser.add_argument("--work", required=True)
    parser.add_argument("--backend", default="cuda", help="cpu: a dry run on a machine without GPU")
    parser.add_argument("--devices", nargs="+", default=["0", "0,1"], help="one traced run per device list")
    arguments = parser.parse_args()

    from itk_svdlowrankreconstruction.bids import _cli

    work = Path(arguments.work)
    raw = work / "raw"
    make_dataset(arguments.phantom, arguments.subjects, raw)
    print(f"# svdlr-bids traced in one process: {arguments.subjects} subjects")
    for devices in arguments.devices:
        out = work / f"out-trace-{devices.replace(',', '-')}"
        shutil.rmtree(out, ignore_errors=True)
        intervals: List[Interval] = []
        undo = instrument(intervals)
        try:
            start = time.perf_counter()
            options = ["--backend", arguments.backend, "--no-reports", "--quiet"]
            if arguments.backend != "cpu":
                options += ["--devices", devices]
            code = _cli.main([str(raw), str(out), "participant", *options])
            wall = time.perf_counter() - start
        finally:
            undo()
        if code != 0:
            print(f"  svdlr-bids --devices {devices} exited {code}")
        report(f"--devices {devices}" if arguments.backend != "cpu" else "cpu", wall, intervals)


if __name__ == "__main__":
    main()
