#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""Runs the MP-PCA denoisers on one phantom, each end to end, and saves their outputs for evaluate.py.

Peers: MRtrix3 dwidenoise, DIPY mppca, patch-denoise (MP-PCA), and ours (svdlrDenoiseBenchmark, CPU and CUDA).
Protocol, the same for everyone: 5x5x5 patches, the phantom's brain mask given to every tool (patches centred on,
or for patch-denoise touching, brain voxels; voxels outside are not denoised), --threads N for every tool that
takes a thread count (dwidenoise -nthreads; BLAS thread variables for the Python peers, whose loops are serial).
--no-mask runs everyone on the whole volume instead.

Times: wall_s is the whole process (start, reading, denoising, writing); cpu_s the CPU time it used (user + system,
all threads: on a shared machine it moves less than wall_s with the load); denoise_s is the denoising alone where
the tool reports it (ours: the median over --repeat runs, host memory to host memory; Python peers: around the call).
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
ALL_PEERS = ("dwidenoise", "dipy", "patch-denoise", "ours-cpu", "ours-cuda")


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
    cmd = [exe, "-force", "-quiet", "-nthreads", str(args.threads), "-extent", "5,5,5",
           "-noise", f"{out}_sigma.nii", p["noisy"], f"{out}_denoised.nii"]
    if not args.no_mask:
        cmd[1:1] = ["-mask", p["mask"]]
    proc, wall, cpu = timed(cmd)
    if proc.returncode != 0:
        return failure(proc)
    version = subprocess.run([exe, "-version"], capture_output=True, text=True).stdout.splitlines()[0].strip("= ")
    return {"wall_s": wall, "cpu_s": cpu, "version": version, "threads": args.threads, "noise_map": True,
            "rank_map": False, "command": " ".join(cmd)}


def run_python_peer(name, args, p, out):
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(args.threads)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [args.python, os.path.join(HERE, "python_peer.py"), name, "--data", args.data, "--out", out]
    if args.no_mask:
        cmd.append("--no-mask")
    proc, wall, cpu = timed(cmd, env)
    if proc.returncode != 0:
        return failure(proc)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result.update({"wall_s": wall, "cpu_s": cpu, "threads": args.threads, "command": " ".join(cmd)})
    return result


def find_ours(explicit):
    if explicit:
        return explicit
    for pattern in ("build*/bin", "build*", ".gpu*/bin"):
        hits = sorted(glob.glob(os.path.join(ROOT, pattern, "svdlrDenoiseBenchmark")))
        if hits:
            return hits[0]
    return shutil.which("svdlrDenoiseBenchmark")


def gpu_present():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU") > 0
    except OSError:
        return False


def run_ours(backend, args, p, out, truth, affine):
    exe = find_ours(args.ours)
    if not exe:
        return {"skipped": "svdlrDenoiseBenchmark not found (build it, or pass --ours)"}
    if backend == "cuda" and not gpu_present():
        return {"skipped": "no GPU on this machine (nvidia-smi lists none)"}
    nx, ny, nz, nv = truth["size"]
    raw = {"output": f"{out}.f32", "sigma": f"{out}_sigma.f32", "rank": f"{out}_rank.u16"}
    cmd = [exe, "--input", p["noisy_raw"], "--size", str(nx), str(ny), str(nz), str(nv), "--backend", backend,
           "--repeat", str(args.repeat), "--patch", "5", "5", "5", "--aggregation", args.aggregation,
           "--policy", args.policy, "--output", raw["output"], "--sigma-out", raw["sigma"], "--rank-out", raw["rank"]]
    if not args.no_mask:
        cmd[3:3] = ["--mask", p["mask_raw"]]
    helptext = subprocess.run([exe, "--help"], capture_output=True, text=True)
    if "--threads" in helptext.stdout + helptext.stderr:
        cmd += ["--threads", str(args.threads)]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS="1")
    proc, wall, cpu = timed(cmd, env)
    if proc.returncode != 0:
        return failure(proc)
    reported = json.loads(proc.stdout.strip().splitlines()[-1])
    shape = (nx, ny, nz)
    dwi_io.save_nifti(f"{out}_denoised.nii", dwi_io.read_raw(raw["output"], shape + (nv,), np.float32), affine)
    dwi_io.save_nifti(f"{out}_sigma.nii", dwi_io.read_raw(raw["sigma"], shape, np.float32), affine)
    dwi_io.save_nifti(f"{out}_rank.nii", dwi_io.read_raw(raw["rank"], shape, np.uint16), affine)
    for path in raw.values():
        os.remove(path)
    result = {"wall_s": wall, "cpu_s": cpu, "reported": reported, "denoise_s": seconds(reported, "median"),
              "denoise_min_s": seconds(reported, "min"), "threads": args.threads, "noise_map": True, "rank_map": True,
              "command": " ".join(cmd)}
    return result


def seconds(reported, which):
    """The reported time in seconds, whatever unit the key names (median_s, median_ms, ...)."""
    for key, value in reported.items():
        if key.startswith(which) and isinstance(value, (int, float)):
            return value / 1000.0 if key.endswith("_ms") else float(value)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="phantom path prefix (make_dwi_phantom.py --out)")
    parser.add_argument("--out", required=True, help="results folder")
    parser.add_argument("--peers", default=",".join(ALL_PEERS), help=f"comma-separated, from {','.join(ALL_PEERS)}")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=3, help="repeats of ours (its median is reported)")
    parser.add_argument("--aggregation", default="centre", choices=("centre", "overlap"), help="ours")
    parser.add_argument("--policy", default="mp", choices=("mp", "mp-cg", "gd"), help="ours")
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
    runs["protocol"] = {"mask": not args.no_mask, "patch": [5, 5, 5], "threads": args.threads}
    for name in peers:
        out = os.path.join(args.out, name)
        print(f"[{name}] running ...", flush=True)
        load_before = os.getloadavg()[0]
        if name == "dwidenoise":
            result = run_dwidenoise(args, p, out)
        elif name in ("dipy", "patch-denoise"):
            result = run_python_peer(name, args, p, out)
        else:
            result = run_ours(name.split("-")[1], args, p, out, truth, affine)
        result.update({"host": platform.node(), "cpus": os.cpu_count(), "mask": not args.no_mask,
                       "load_1min_before": round(load_before, 2), "load_1min_after": round(os.getloadavg()[0], 2),
                       "when": datetime.datetime.now().isoformat(timespec="seconds")})
        runs["methods"][name] = result
        with open(runs_path, "w") as f:
            json.dump(runs, f, indent=1)
        shown = {k: result[k] for k in ("wall_s", "cpu_s", "denoise_s", "skipped", "error") if k in result}
        print(f"[{name}] {json.dumps(shown)}", flush=True)


if __name__ == "__main__":
    main()
