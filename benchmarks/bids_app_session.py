#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""The BIDS App on a GPU machine: SUBJECTS raw dwi runs denoised end to end, on one GPU and on two in one process,
through Dask with one and two workers (one per GPU), against dwidenoise on every core (benchmarks/device.sh,
stage bids-app, builds the package and the phantom and calls this with PYTHONPATH set).

Each configuration writes a fresh derivative folder; its time is wall-clock for the whole run (the command line's
as a new process, Dask's from the call, its workers already started). Prints lines for the summary: "# ..." headers,
"- ..." results and "  ..." details.

    python3 bids_app_session.py --phantom WORK/phantom96x96x60x65 --subjects 20 --work WORK --dwidenoise dwidenoise
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

CLI = [sys.executable, "-m", "itk_svdlowrankreconstruction.bids._cli"]


def make_dataset(phantom: str, subjects: int, raw: Path) -> None:
    """SUBJECTS copies of the phantom's noisy series as sub-NN/dwi/sub-NN_dwi.nii.gz, with its gradient table."""
    if (raw / f"sub-{subjects:02d}").exists():
        return
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    (raw / "dataset_description.json").write_text(json.dumps({"Name": "phantom", "BIDSVersion": "1.9.0"}))
    compressed = raw / "series.nii.gz.tmp"
    with open(f"{phantom}_noisy.nii", "rb") as source, gzip.open(compressed, "wb", compresslevel=1) as target:
        shutil.copyfileobj(source, target, 1 << 24)
    for s in range(1, subjects + 1):
        folder = raw / f"sub-{s:02d}" / "dwi"
        folder.mkdir(parents=True)
        shutil.copyfile(compressed, folder / f"sub-{s:02d}_dwi.nii.gz")
        shutil.copyfile(f"{phantom}.bval", folder / f"sub-{s:02d}_dwi.bval")
        shutil.copyfile(f"{phantom}.bvec", folder / f"sub-{s:02d}_dwi.bvec")
    compressed.unlink()


def timed_cli(raw: Path, out: Path, *options: str) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    done = subprocess.run(CLI + [str(raw), str(out), "participant", *options], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        print(f"  svdlr-bids {' '.join(options)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds


def dask_workers(gpus: int, folder: Path):
    """A scheduler and one worker per GPU, each seeing only its GPU and running THREADS_PER_GPU_WORKER tasks at once
    (what svdlr.local_cuda_cluster() starts through dask_cuda.LocalCUDACluster)."""
    scheduler_file = folder / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    processes = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--no-dashboard",
                                   "--port", "0", "--scheduler-file", str(scheduler_file)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    for _ in range(100):
        if scheduler_file.exists() and scheduler_file.stat().st_size:
            break
        time.sleep(0.1)
    from itk_svdlowrankreconstruction._dask import THREADS_PER_GPU_WORKER

    for gpu in range(gpus):
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
             "--nthreads", str(THREADS_PER_GPU_WORKER), "--nworkers", "1", "--name", f"gpu{gpu}", "--no-dashboard"],
            env={**os.environ, "CUDA_VISIBLE_DEVICES": str(gpu)}, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
    return scheduler_file, processes


def timed_dask(raw: Path, out: Path, gpus: int, folder: Path, backend: str) -> float:
    from distributed import Client

    import itk_svdlowrankreconstruction as svdlr
    from itk_svdlowrankreconstruction import bids

    scheduler_file, processes = dask_workers(gpus, folder)
    try:
        with Client(scheduler_file=str(scheduler_file)) as client:
            client.wait_for_workers(gpus, timeout=120)
            shutil.rmtree(out, ignore_errors=True)
            start = time.perf_counter()
            rows = svdlr.denoise_with_dask(client, str(raw), str(out),
                                           options=bids.DenoiseOptions(backend=backend), reports=False)
            seconds = time.perf_counter() - start
            failed = [r for r in rows if r["status"] != "done"]
            if failed:
                print(f"  {len(failed)} Dask runs did not finish: {failed[0]['message'][:300]}")
            return seconds
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def local_cuda_cluster_check(raw: Path, out: Path) -> None:
    """svdlr.local_cuda_cluster() and denoise_with_dask on it, where dask-cuda is installed."""
    try:
        import dask_cuda  # noqa: F401
    except ImportError:
        print("  dask-cuda is not installed here: LocalCUDACluster not tried (workers were started by hand)")
        return
    import itk_svdlowrankreconstruction as svdlr
    from itk_svdlowrankreconstruction import bids

    with svdlr.local_cuda_cluster() as client:
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        rows = svdlr.denoise_with_dask(client, str(raw), str(out), options=bids.DenoiseOptions(backend="cuda"),
                                       reports=False)
        print(f"- LocalCUDACluster ({len(client.scheduler_info()['workers'])} workers): "
              f"{sum(r['status'] == 'done' for r in rows)}/{len(rows)} runs in {time.perf_counter() - start:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phantom", required=True, help="make_dwi_phantom.py's --out prefix")
    parser.add_argument("--subjects", type=int, default=20)
    parser.add_argument("--work", required=True)
    parser.add_argument("--dwidenoise", default="dwidenoise")
    parser.add_argument("--backend", default="cuda", help="cpu: a dry run of this script on a machine without GPU")
    parser.add_argument("--dwidenoise-subjects", type=int, default=2, help="dwidenoise runs on this many")
    arguments = parser.parse_args()

    from itk_svdlowrankreconstruction import _engine

    work = Path(arguments.work)
    raw = work / "raw"
    make_dataset(arguments.phantom, arguments.subjects, raw)
    gpus = _engine.cuda_device_count() if arguments.backend != "cpu" else 1
    backend = arguments.backend
    n = arguments.subjects
    print(f"# svdlr-bids: {n} subjects of {Path(arguments.phantom).name}, {gpus} GPU(s), {os.cpu_count()} cores")

    # One GPU named: without --devices (or --device) the App shares the runs over every GPU of the host.
    one_gpu = ["--devices", "0"] if backend != "cpu" else []
    one = timed_cli(raw, work / "out-1gpu", "--backend", backend, "--no-reports", *one_gpu)
    print(f"- one GPU, one process: {one:.1f} s ({n / one:.2f} runs/s)")
    figures = timed_cli(raw, work / "out-reports", "--backend", backend, "--participant-label", "01", *one_gpu)
    print(f"  one run with its reportlet: {figures:.1f} s "
          f"({'drawn' if list((work / 'out-reports').rglob('*.png')) else 'no reportlet (matplotlib missing?)'})")
    results = {"one": one}
    if gpus >= 2:
        two = timed_cli(raw, work / "out-2gpu", "--backend", backend, "--no-reports", "--devices", "0,1")
        results["two"] = two
        print(f"- two GPUs, one process (--devices 0,1): {two:.1f} s: {one / two:.2f}x one GPU (target 1.8x)")
    for workers in (1, 2)[: max(1, min(gpus, 2))]:
        seconds = timed_dask(raw, work / f"out-dask{workers}", workers, work, backend)
        results[f"dask{workers}"] = seconds
        print(f"- Dask, {workers} worker(s), one GPU each: {seconds:.1f} s ({n / seconds:.2f} runs/s)")
    if "dask2" in results:
        print(f"- two GPUs through Dask: {results['dask1'] / results['dask2']:.2f}x one worker (target 1.8x); "
              f"Dask against one process on two GPUs: {results['dask2'] / results['two']:.2f} (target within 10%)")
    print(f"- Dask against one process on one GPU: {results['dask1'] / one:.2f} (target within 10%)")
    local_cuda_cluster_check(raw, work / "out-localcuda")

    if shutil.which(arguments.dwidenoise) or os.path.exists(arguments.dwidenoise):
        scratch = work / "dwidenoise"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        count = min(arguments.dwidenoise_subjects, n)
        start = time.perf_counter()
        for s in range(1, count + 1):
            series = raw / f"sub-{s:02d}" / "dwi" / f"sub-{s:02d}_dwi.nii.gz"
            subprocess.run([arguments.dwidenoise, str(series), str(scratch / f"{s}.nii.gz"), "-noise",
                            str(scratch / f"{s}_noise.nii.gz"), "-nthreads", str(os.cpu_count()), "-quiet"],
                           check=True)
        per_run = (time.perf_counter() - start) / count
        print(f"- dwidenoise, {os.cpu_count()} threads: {per_run:.1f} s a run ({count} runs), so {per_run * n:.0f} s "
              f"for {n}: one GPU is {per_run * n / one:.1f}x faster end to end (target 8x)")


if __name__ == "__main__":
    main()
