#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Runs the MP-PCA denoisers on one phantom, each end to end, and saves their outputs for evaluate.py.

Peers: MRtrix3 dwidenoise, DIPY mppca, patch-denoise (MP-PCA), and ours (svdlrDenoiseBenchmark, CPU and CUDA).
Protocol, the same for everyone: 5x5x5 patches, the phantom's brain mask given to every tool (patches centred on,
or for patch-denoise touching, brain voxels; voxels outside are not denoised), --threads N for every tool that
takes a thread count (dwidenoise -nthreads, ours); the Python peers' loops are serial and run with one BLAS thread,
which is their fastest setting.
--no-mask runs everyone on the whole volume instead.

Times: time_s is one run end to end, as each tool allows it to be taken: dwidenoise's process, file to file (median
of --peer-repeat runs); the Python peers' denoising call, memory to memory; ours, the engine call, memory to memory
(median of --repeat after a warm-up, as svdlrDenoiseBenchmark reports it). cpu_s is the CPU time of one run (user +
system, all threads; on a shared machine it moves less with the load than wall time); wall_s the whole process.
Writes DIR/METHOD_denoised.nii (+ _sigma.nii, _rank.nii where the tool gives them) and merges DIR/runs.json.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time

import numpy as np

import dwi_io

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_PEERS = ("dwidenoise", "dipy", "patch-denoise", "ours-cpu", "ours-cuda")
# Ours with overlapping patches averaged, as DIPY and patch-denoise recombine them (dwidenoise keeps the centre voxel).
ALL_PEERS = DEFAULT_PEERS + ("ours-cpu-overlap", "ours-cuda-overlap")


def timed(cmd, env=None):
    """Runs cmd; returns the process, its wall time and the CPU time (user + system) it and its children used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc, wall, cpu


def failure(proc):
    return {"error": (proc.stderr or proc.stdout).strip()[-600:], "returncode": proc.returncode}


def run_dwidenoise(args, p, out):
    exe = args.dwidenoise or shutil.which("dwidenoise")
    if not exe:
        return {"skipped": "dwidenoise not found (apt mrtrix3, or the GPU bundle's env.sh)"}
    cmd = [exe, "-force", "-quiet", "-nthreads", str(args.threads), "-extent", "5,5,5", "-estimator", args.estimator,
           "-noise", f"{out}_sigma.nii", p["noisy"], f"{out}_denoised.nii"]
    if not args.no_mask:
        cmd[1:1] = ["-mask", p["mask"]]
    walls, cpus = [], []
    for _ in range(args.peer_repeat):
        proc, wall, cpu = timed(cmd)
        if proc.returncode != 0:
            return failure(proc)
        walls.append(wall)
        cpus.append(cpu)
    version = subprocess.run([exe, "-version"], capture_output=True, text=True).stdout.splitlines()[0].strip("= ")
    return {"time_s": float(np.median(walls)), "time_covers": "process, file to file (NIfTI read and written)",
            "wall_s": float(np.median(walls)), "walls_s": walls, "cpu_s": float(np.median(cpus)), "version": version,
            "threads": args.threads, "noise_map": True, "rank_map": False, "command": " ".join(cmd)}


def run_python_peer(name, args, p, out):
    # Their patch loops are serial Python over 65x65 eigenproblems: a multi-threaded BLAS only adds synchronisation
    # (DIPY on a 24x24x12 crop here: 7.7 s with one BLAS thread, 257 s with two), so they get one, their best.
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [args.python, os.path.join(HERE, "python_peer.py"), name, "--data", args.data, "--out", out]
    if args.no_mask:
        cmd.append("--no-mask")
    proc, wall, cpu = timed(cmd, env)
    if proc.returncode != 0:
        return failure(proc)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result.update({"time_s": result["denoise_s"], "time_covers": "the denoising call, memory to memory",
                   "cpu_s": result["denoise_cpu_s"], "wall_s": wall, "process_cpu_s": cpu, "threads": 1,
                   "command": " ".join(cmd)})
    return result


def find_ours(explicit):
    if explicit:
        return explicit
    for pattern in ("build*/**/svdlrDenoiseBenchmark", ".gpu*/bin/svdlrDenoiseBenchmark"):
        hits = sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True))
        if hits:
            return hits[0]
    return shutil.which("svdlrDenoiseBenchmark")


def run_ours(backend, aggregation, args, p, out, truth, affine):
    exe = find_ours(args.ours)
    if not exe:
        return {"skipped": "svdlrDenoiseBenchmark not found (build it, or pass --ours)"}
    if backend == "cuda" and not dwi_io.gpu_present():
        return {"skipped": "no GPU on this machine (nvidia-smi lists none)"}
    nx, ny, nz, nv = truth["size"]
    raw = {"output": f"{out}.f32", "sigma": f"{out}_sigma.f32", "rank": f"{out}_rank.u16"}
    cmd = [exe, "--input", p["noisy_raw"], "--size", str(nx), str(ny), str(nz), str(nv), "--backend", backend,
           "--repeat", str(args.repeat), "--patch", "5", "5", "5", "--aggregation", aggregation,
           "--shrinkage", "hard",  # the peers' comparison: hard thresholding, as dwidenoise
           "--policy", args.policy, "--threads", str(args.threads),
           "--output", raw["output"], "--sigma-out", raw["sigma"], "--rank-out", raw["rank"]]
    if not args.no_mask:
        cmd[3:3] = ["--mask", p["mask_raw"]]
    proc, wall, cpu = timed(cmd)
    if proc.returncode != 0:
        return failure(proc)
    reported = json.loads(proc.stdout.strip().splitlines()[-1])
    shape = (nx, ny, nz)
    dwi_io.save_nifti(f"{out}_denoised.nii", dwi_io.read_raw(raw["output"], shape + (nv,), np.float32), affine)
    dwi_io.save_nifti(f"{out}_sigma.nii", dwi_io.read_raw(raw["sigma"], shape, np.float32), affine)
    dwi_io.save_nifti(f"{out}_rank.nii", dwi_io.read_raw(raw["rank"], shape, np.uint16), affine)
    for path in raw.values():
        os.remove(path)
    result = {"time_s": float(reported["median_s"]), "time_min_s": float(reported["min_s"]),
              "time_covers": f"the engine call, memory to memory, median of {args.repeat} after a warm-up",
              "wall_s": wall, "cpu_s": cpu / args.repeat, "cpu_covers": "process CPU time / repeats",
              "reported": reported, "threads": args.threads, "noise_map": True, "rank_map": True,
              "command": " ".join(cmd)}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="phantom path prefix (make_dwi_phantom.py --out)")
    parser.add_argument("--out", required=True, help="results folder")
    parser.add_argument("--peers", default=",".join(DEFAULT_PEERS), help=f"comma-separated, from {','.join(ALL_PEERS)}")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=3, help="repeats inside our program (median reported)")
    parser.add_argument("--peer-repeat", type=int, default=1, help="runs of dwidenoise (median reported)")
    # dwidenoise 3.0's default estimator is Exp2 (Cordero-Grande et al. 2019), which is our mp-cg; Exp1 (Veraart
    # et al. 2016) is our mp. The two defaults are the matching pair; name both to compare the other pair.
    parser.add_argument("--policy", default="mp-cg", choices=("mp", "mp-cg", "gd"), help="ours (default mp-cg)")
    parser.add_argument("--estimator", default="Exp2", choices=("Exp1", "Exp2"), help="dwidenoise (default Exp2)")
    parser.add_argument("--no-mask", action="store_true", help="run every tool on the whole volume")
    parser.add_argument("--ours", help="svdlrDenoiseBenchmark (default: build*/bin, then PATH)")
    parser.add_argument("--dwidenoise", help="dwidenoise (default: PATH)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with dipy and patch-denoise")
    args = parser.parse_args()
    peers = [s.strip() for s in args.peers.split(",") if s.strip()]
    unknown = sorted(set(peers) - set(ALL_PEERS))
    if unknown:
        sys.exit(f"error: unknown peers {unknown}; choose from {ALL_PEERS}")
    os.makedirs(args.out, exist_ok=True)
    p = dwi_io.paths(args.data)
    truth = dwi_io.load_truth(args.data)
    affine = dwi_io.load_nifti(p["mask"], np.uint8)[1]

    runs_path = os.path.join(args.out, "runs.json")
    runs = json.load(open(runs_path)) if os.path.exists(runs_path) else {"methods": {}}
    runs["data"] = os.path.abspath(args.data)
    runs["protocol"] = {"mask": not args.no_mask, "patch": [5, 5, 5], "threads": args.threads,
                        "ours_policy": args.policy, "dwidenoise_estimator": args.estimator}
    for name in peers:
        out = os.path.join(args.out, name)
        print(f"[{name}] running ...", flush=True)
        load_before = os.getloadavg()[0]
        if name == "dwidenoise":
            result = run_dwidenoise(args, p, out)
        elif name in ("dipy", "patch-denoise"):
            result = run_python_peer(name, args, p, out)
        else:
            parts = name.split("-")
            result = run_ours(parts[1], "overlap" if parts[-1] == "overlap" else "centre", args, p, out, truth, affine)
        result.update({"host": platform.node(), "cpus": os.cpu_count(), "mask": not args.no_mask,
                       "load_1min_before": round(load_before, 2), "load_1min_after": round(os.getloadavg()[0], 2),
                       "when": datetime.datetime.now().isoformat(timespec="seconds")})
        runs["methods"][name] = result
        with open(runs_path, "w") as f:
            json.dump(runs, f, indent=1)
        shown = {k: result[k] for k in ("time_s", "cpu_s", "wall_s", "skipped", "error") if k in result}
        print(f"[{name}] {json.dumps(shown)}", flush=True)


if __name__ == "__main__":
    main()
