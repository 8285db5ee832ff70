#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Where a BIDS App process spends the time its main() does not: the App's command line as a fresh process on one GPU
and on two, alternated and repeated, each split into the interpreter's start and the package's import, main() (the
runs), and the rest (the interpreter's start, and its and the libraries' exit: CUDA contexts and cached device resources
freed).
When two GPUs beat one by less in whole processes than inside main() (bids_app_trace.py), this says which of those
fixed costs grows with the GPUs.

    python3 bids_app_process_probe.py --phantom WORK/phantom96x96x60x65 --work WORK --subjects 20 [--repeat 3]

(benchmarks/device.sh, stage bids-app with BIDS_PROBE=1, calls it on the session's dataset, WORK/raw.)
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bids_app_session import make_dataset

# The child: the App's main() between two clocks, each printed as seconds since the child's own start.
CHILD = """
import sys, time
started = time.perf_counter()
from itk_svdlowrankreconstruction.bids._cli import main
imported = time.perf_counter()
code = main(sys.argv[1:])
finished = time.perf_counter()
print(f"PROBE {imported - started:.4f} {finished - imported:.4f}", file=sys.stderr)
sys.exit(code)
"""


def one_process(raw: Path, out: Path, devices: str) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(raw), str(out), "participant", "--backend", "cuda",
                           "--no-reports", "--devices", devices], capture_output=True, text=True)
    wall = time.perf_counter() - start
    probe = [line.split() for line in done.stderr.splitlines() if line.startswith("PROBE ")]
    if done.returncode != 0 or not probe:
        raise SystemExit(f"svdlr-bids --devices {devices} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    imported, main = float(probe[0][1]), float(probe[0][2])
    return {"wall": wall, "import": imported, "main": main, "rest": wall - imported - main}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phantom", required=True, help="make_dwi_phantom.py's --out prefix")
    parser.add_argument("--work", required=True)
    parser.add_argument("--subjects", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    work = Path(arguments.work)
    make_dataset(arguments.phantom, arguments.subjects, work / "raw")
    runs = {"0": [], "0,1": []}
    for _ in range(arguments.repeat):
        for devices, results in runs.items():
            results.append(one_process(work / "raw", work / "out-probe", devices))
    print(f"# svdlr-bids as fresh processes, {arguments.subjects} subjects, medians of {arguments.repeat}")
    medians = {}
    for devices, results in runs.items():
        medians[devices] = {key: statistics.median(r[key] for r in results) for key in results[0]}
        m = medians[devices]
        print(f"- --devices {devices}: process {m['wall']:.2f} s = the package's import {m['import']:.2f} + main() "
              f"{m['main']:.2f} + the interpreter's start and exit {m['rest']:.2f}; every process: "
              + ", ".join(f"{r['wall']:.2f}" for r in results))
    one, two = medians["0"], medians["0,1"]
    print(f"- two GPUs over one: {one['wall'] / two['wall']:.2f}x whole processes, {one['main'] / two['main']:.2f}x "
          "inside main()")


if __name__ == "__main__":
    main()
