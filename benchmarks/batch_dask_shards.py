#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Many volumes over the GPU workers of a Dask cluster, for the batch-dask stage of device.sh.

    batch_dask_shards.py SCHEDULER_FILE TOOL INPUT_DIR OUTPUT_DIR MODE [RANK]

MODE "shards": the volumes are cut into shards (four per worker), and each task runs the batch pipeline of the
command-line tool (SVDLowRankReconstructImage --batch, one CUDA start-up per shard) on its worker's GPU: what a
machine without this package's Python wheel can run. MODE "volumes": one task per volume through the package's own
Dask path, itk_svdlowrankreconstruction.reconstruct_with_dask (needs the package and nibabel or itk on the workers).
Each worker sees one GPU (CUDA_VISIBLE_DEVICES), as dask-cuda's LocalCUDACluster sets it. Prints volumes/s."""
import csv
import glob
import os
import subprocess
import sys
import time

from distributed import Client, progress


def run_shard(tool, files, output, rank, table):
    """One task: the tool's batch pipeline on `files`, on this worker's GPU; returns the table's rows."""
    backend = os.environ.get("SVDLR_BATCH_BACKEND", "cuda")  # cpu: a dry run on a machine without a GPU
    devices = ["--devices", "0"] if backend == "cuda" else []
    command = [tool, "--batch", "--backend", backend, *devices, "--rank", str(rank), "--table", table, "-o", output]
    command += files
    finished = subprocess.run(command, capture_output=True, text=True)
    if not os.path.exists(table):
        return [{"input": f, "status": "failed", "message": finished.stderr[-500:]} for f in files]
    with open(table, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    worker = os.environ.get("CUDA_VISIBLE_DEVICES", "?")
    for row in rows:
        row["gpu"] = worker
    return rows


def main():
    scheduler_file, tool, inputs, output, mode = sys.argv[1:6]
    rank = int(sys.argv[6]) if len(sys.argv) > 6 else 20
    client = Client(scheduler_file=scheduler_file)
    workers = len(client.scheduler_info()["workers"])
    files = sorted(glob.glob(os.path.join(inputs, "vol-*.nii*")))
    start = time.perf_counter()
    if mode == "shards":
        count = 4 * workers
        shards = [files[i::count] for i in range(count)]
        futures = client.map(run_shard, [tool] * count, shards, [output] * count, [rank] * count,
                             [os.path.join(output, f".table-{i}.tsv") for i in range(count)], pure=False)
        progress(futures)
        rows = [row for shard in client.gather(futures) for row in shard]
    else:
        import itk_svdlowrankreconstruction as svdlr

        rows = svdlr.reconstruct_with_dask(client, inputs, output, patterns=["vol-*.nii*"], rank=rank,
                                           backend=os.environ.get("SVDLR_BATCH_BACKEND", "cuda"), device_id=0)
    wall = time.perf_counter() - start
    done = sum(1 for r in rows if r["status"] == "done")
    failed = sum(1 for r in rows if r["status"] == "failed")
    gpus = sorted({r.get("gpu", "") for r in rows if r.get("gpu")})
    print(f"dask {mode}: {workers} GPU worker(s) {','.join(gpus)}: {done} done, {failed} failed in {wall:.2f} s = "
          f"{done / wall:.2f} volumes/s")
    client.close()


if __name__ == "__main__":
    main()
