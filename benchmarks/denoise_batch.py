#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""The denoiser's batch mode against itself on one and two GPUs and against MRtrix3's dwidenoise and its targets.

Generates --subjects series of --size (default 20 of 96x96x60x65) as int16 .nii.gz, as dcm2niix writes DWI: the
phantom of make_denoise_series.py with its own noise seed per subject (sub-NN/dwi/sub-NN_dwi.nii.gz) and a list of
them (runs.tsv). Then, end to end, file to file, each timed as its process's wall time:
  - `SVDLowRankDenoiseSeries --batch runs.tsv --devices D` for each --devices list given (`cpu`: the CPU backend);
  - `dwidenoise -nthreads T` on the first --dwidenoise-subjects subjects, one process each (a few, to stay inside a
    device call; its per-subject time is scaled to all subjects, and the report says so).
Prints a markdown table (series/s and DWI volumes/s) and the ratios the targets name: two GPUs against one (>= 1.8x)
and one GPU against dwidenoise over the same subjects (>= 8x). --json writes the numbers.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import nibabel as nib
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_denoise_series  # noqa: E402  (the phantom: one rule for every denoising benchmark)


def write_subject(job):
    """Writes one subject's series; returns its path relative to the work folder."""
    work, index, size, sigma, seed = job
    noisy, _ = make_denoise_series.series(*size, sigma, seed)
    data = np.clip(np.rint(noisy), -32768, 32767).astype(np.int16).transpose(3, 2, 1, 0)  # (x, y, z, volume)
    affine = np.diag([2.0, 2.0, 2.0, 1.0])
    relative = f"sub-{index:02d}/dwi/sub-{index:02d}_dwi.nii.gz"
    os.makedirs(os.path.join(work, os.path.dirname(relative)), exist_ok=True)
    nib.save(nib.Nifti1Image(data, affine), os.path.join(work, relative))
    return relative


def generate(work, subjects, size, sigma, seed):
    jobs = [(work, i + 1, size, sigma, seed + i) for i in range(subjects)]
    with ProcessPoolExecutor(max_workers=min(subjects, os.cpu_count() or 1)) as pool:
        relatives = list(pool.map(write_subject, jobs))
    with open(os.path.join(work, "runs.tsv"), "w") as runs:
        runs.write("".join(f"{relative}\n" for relative in relatives))
    return relatives


def timed(command, log):
    start = time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT)
    return rc, time.perf_counter() - start


def batch_run(args, devices):
    """One batch process: its wall time, and the tool's own (from the pipeline's start; the difference is the
    process's start and end)."""
    name = "cpu" if devices == "cpu" else "gpu-" + devices.replace(",", "-")
    out = os.path.join(args.work, "out-" + name)
    table = os.path.join(args.work, name + ".tsv")
    subprocess.call(["rm", "-rf", out])
    backend = ["--backend", "cpu"] if devices == "cpu" else ["--backend", "cuda", "--devices", devices]
    command = [args.tool, "--batch", os.path.join(args.work, "runs.tsv"), "--output-dir", out, "--table", table,
               *backend, *args.tool_args.split()]
    rc, seconds = timed(command, os.path.join(args.work, name + ".log"))
    done = 0
    if os.path.exists(table):  # a run refused before any work (no such device) writes none
        with open(table) as rows:
            done = sum(1 for line in rows if line.split("\t")[2:3] == ["done"])
    with open(os.path.join(args.work, name + ".log")) as log:
        lines = [line.rstrip() for line in log]
    keys = ("series", "backend", "time", "steps", "solvers", "note")
    summary = [line for line in lines if line.split(":")[0] in keys]
    if rc not in (0, 4):  # refused as a whole: say why
        summary += lines[-3:]
    subprocess.call(["rm", "-rf", out])  # disk: 20 float32 series are 2.9 GB
    own = [line for line in summary if line.startswith("time:")]
    tool_wall = float(own[0].split()[1]) if own else float("nan")  # "time:     7.44 s wall, ..."
    return {"run": name, "command": " ".join(command), "exit": rc, "done": done, "seconds": seconds,
            "tool_wall": tool_wall, "series_per_s": done / seconds, "summary": summary}


def dwidenoise_runs(args, relatives):
    times = []
    for relative in relatives[: args.dwidenoise_subjects]:
        output = os.path.join(args.work, "dwidenoise_out.nii.gz")
        rc, seconds = timed([args.dwidenoise, "-nthreads", str(args.dwidenoise_threads), "-force", "-quiet",
                             os.path.join(args.work, relative), output],
                            os.path.join(args.work, "dwidenoise.log"))
        if rc != 0:
            raise SystemExit(f"dwidenoise failed on {relative} (see {args.work}/dwidenoise.log)")
        times.append(seconds)
        os.remove(output)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="SVDLowRankDenoiseSeries")
    parser.add_argument("--work", required=True)
    parser.add_argument("--size", type=int, nargs=4, default=[96, 96, 60, 65], metavar=("NX", "NY", "NZ", "NV"))
    parser.add_argument("--subjects", type=int, default=20)
    parser.add_argument("--sigma", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--devices", nargs="+", default=["0", "0,1"],
                        help="one batch run per device list ('cpu': the CPU backend)")
    parser.add_argument("--tool-args", default="", help="more options for every batch run")
    parser.add_argument("--dwidenoise", help="MRtrix3 dwidenoise; left out: no comparison")
    parser.add_argument("--dwidenoise-subjects", type=int, default=3)
    parser.add_argument("--dwidenoise-threads", type=int, default=16)
    parser.add_argument("--json")
    args = parser.parse_args()

    os.makedirs(args.work, exist_ok=True)
    start = time.perf_counter()
    relatives = generate(args.work, args.subjects, args.size, args.sigma, args.seed)
    volumes = args.size[3]
    size = "x".join(map(str, args.size))
    print(f"{args.subjects} subjects of {size} int16 .nii.gz generated in {time.perf_counter() - start:.1f} s")

    runs = [batch_run(args, devices) for devices in args.devices]
    print("\n| run | exit | series done | wall (s) | the tool's own wall (s) | series/s | DWI volumes/s |\n"
          "|---|---|---|---|---|---|---|")
    for run in runs:
        print(f"| batch {run['run']} | {run['exit']} | {run['done']} | {run['seconds']:.2f} | {run['tool_wall']:.2f} | "
              f"{run['series_per_s']:.3f} | {run['series_per_s'] * volumes:.1f} |")
    result = {"subjects": args.subjects, "size": args.size, "runs": runs}
    if args.dwidenoise:
        times = dwidenoise_runs(args, relatives)
        per_subject = sum(times) / len(times)
        result["dwidenoise"] = {"subjects_timed": len(times), "seconds": times, "threads": args.dwidenoise_threads}
        print(f"| dwidenoise -nthreads {args.dwidenoise_threads}, {len(times)} of the {args.subjects} subjects, one "
              f"process each | 0 | {len(times)} | {sum(times):.2f} | | {1 / per_subject:.3f} | "
              f"{volumes / per_subject:.1f} |")
    print()
    for run in runs:
        print(f"{run['run']}: " + " / ".join(line.strip() for line in run["summary"]))
    by_name = {run["run"]: run for run in runs}
    if "gpu-0" in by_name and "gpu-0-1" in by_name and by_name["gpu-0"]["done"] > 0:
        ratio = by_name["gpu-0-1"]["series_per_s"] / by_name["gpu-0"]["series_per_s"]
        result["two_gpus_over_one"] = ratio
        print(f"two GPUs / one: {ratio:.2f}x (target >= 1.8x)")
    if args.dwidenoise and runs:
        first = runs[0]
        ratio = first["series_per_s"] * per_subject
        result["one_run_over_dwidenoise"] = ratio
        print(f"batch {first['run']} / dwidenoise: {ratio:.2f}x over {args.subjects} subjects (dwidenoise's time "
              f"scaled from the {len(times)} subjects timed: {per_subject:.2f} s each; target >= 8x for one GPU)")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
