#!/usr/bin/env python3
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
"""The denoiser as users run it, against dwidenoise, end to end on one phantom: one Markdown table and one JSON.

Rows (--rows, default all): dwidenoise and ours on the CPU with one thread and with every core, and ours on the GPU,
each on the whole volume and inside the brain mask. Every row runs the real tool as a fresh process, .nii.gz in and
.nii.gz out (SVDLowRankDenoiseSeries; dwidenoise), both at their defaults unless --ours-args / --dwidenoise-args say
otherwise, and gives:
  wall      the process's wall time, reading and writing included;
  read, checks, filter, write, verify
            ours: the tool's own "steps:" line (SVDLowRankDenoiseSeries's summary): decoding the inputs, the raw
            checks (truncation, NaN and Inf), the ITK filter around the engine, writing the outputs (compression
            included), and verifying and renaming them into place;
  engine    ours: svdlrDenoiseBenchmark on the same series, memory to memory, with the patch the tool used (median of
            --engine-repeat on the GPU, where the first run pays the set-up; one run on the CPU);
  PSNR gain and sigma error inside the brain mask against the phantom's truth (evaluate.py's definitions: PSNR peak
            = the largest clean value in the brain; sigma error = median over the brain of map / true sigma - 1);
  host MiB  the process's peak resident set: ours, the tool's memory line (its VmHWM once the outputs are written);
            dwidenoise, its VmHWM watched from here; GPU MiB: the tool's memory line (the denoiser's buffers).
Rows on the complex phantom (make_complex_phantom.py, the same --size, anatomy and noise level; not in the default
set: name them in --rows), ours on the GPU, all cores: cx-magnitude (its magnitude, the tool's defaults), cx-phase
(--phase: the smooth phase removed on the CPU in the read step, the real part denoised) and cx-vst (--vst on the
magnitude: stabilised and inverted on the host around the filter's engine call, sigma from a first pass), each whole
and masked, so that the complex path's time stands beside the magnitude path's on the same data (the target:
GPU time within 1.5x of the magnitude path). Their PSNR is against the noise-free magnitude.
One-thread rows are pinned to one core (sched_setaffinity, ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=1, -nthreads 1).
With --one-core-slices K they run on the K central slices of the same phantom (a slab), to fit a time budget; their
rows say so, and their times compare with each other, not with the full-size rows; each is paired with the same tool
on every core on that slab (TOOL:all:REGION:slab, added by itself), and the table ends with the speed-up from one
thread to every core on the same data.
With --dwidenoise-slices K the all-core dwidenoise rows run on the K central slices too, for series too long to
denoise whole within a device call (200 volumes: about 40 minutes on 16 cores); the table then adds dwidenoise's
whole-volume time extrapolated by slices (its cost is linear in them), marked as an estimate, and our GPU's ratio to it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import numpy as np

import dwi_io
from dwi_io import gpu_present, psnr

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = ("dwidenoise", "ours-cpu", "ours-gpu")
ALL_ROWS = [f"{tool}:{threads}:{region}" for threads in ("all", "1") for tool in ("ours-gpu",) + TOOLS[:2]
            for region in ("whole", "mask") if not (tool == "ours-gpu" and threads == "1")]
# The order they run in: the most telling and the cheapest first, dwidenoise (today 6x our CPU backend's time at 65
# volumes and 30x at 500) after ours in each group; when the time budget runs out, the rows not started are listed as
# skipped.
# With --one-core-slices the one-thread rows run on a slab, so each is paired with the same tool on every core on that
# slab (TOOL:all:REGION:slab, added by itself): the 1 -> all-cores scaling then compares like with like.
SLAB_ROWS = [f"{tool}:all:{region}:slab" for tool in TOOLS[:2] for region in ("whole", "mask")]
# The complex phantom's rows (named in --rows only): ours on the GPU, magnitude, --phase and --vst.
COMPLEX_TOOLS = ("ours-gpu-cx-magnitude", "ours-gpu-cx-phase", "ours-gpu-cx-vst")
COMPLEX_ROWS = [f"{tool}:all:{region}" for tool in COMPLEX_TOOLS for region in ("whole", "mask")]
COMPLEX_ARGS = {"ours-gpu-cx-magnitude": [], "ours-gpu-cx-phase": ["--phase", "{phase}"], "ours-gpu-cx-vst": ["--vst"]}
RUN_ORDER = [
    "ours-gpu:all:whole", "ours-gpu:all:mask", *COMPLEX_ROWS, "ours-cpu:all:mask", "ours-cpu:all:whole",
    "dwidenoise:all:mask", "dwidenoise:all:whole",
    "ours-cpu:all:mask:slab", "ours-cpu:1:mask", "dwidenoise:all:mask:slab", "dwidenoise:1:mask",
    "ours-cpu:all:whole:slab", "ours-cpu:1:whole", "dwidenoise:all:whole:slab", "dwidenoise:1:whole"]


# The tool's "steps:" line, in its order (apps/tool/SVDLowRankDenoiseSummary.h).
STEPS = ("read", "checks", "filter", "write", "verify")


def thread_count(threads):
    return 1 if threads == "1" else os.cpu_count()


class PeakResident(threading.Thread):
    """Watches a child's peak resident set: /proc/PID/status's VmHWM, read every 20 ms once the child runs `program`.
    Not wait4's ru_maxrss, which also counts this script's resident set copied at fork, before the exec (with a series
    loaded here, that is hundreds of MiB the tool never used)."""

    def __init__(self, pid, program):
        super().__init__(daemon=True)
        self.pid, self.program, self.kib = pid, os.path.realpath(program), 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                if os.path.realpath(f"/proc/{self.pid}/exe") == self.program:
                    with open(f"/proc/{self.pid}/status") as status:
                        hwm = next(line for line in status if line.startswith("VmHWM:"))
                    self.kib = max(self.kib, int(hwm.split()[1]))
            except (OSError, StopIteration, ValueError):
                pass  # not yet exec'd, or already gone
            self.done.wait(0.02)


def run_process(cmd, log, env=None, cpus=None, limit=None):
    """Runs cmd as a fresh process, killed after `limit` s; returns (exit code, output, wall s, peak resident MiB of
    that process)."""
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                                preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    except OSError as error:  # a missing program is that row's failure, not the table's
        return 127, str(error), 0.0, 0.0
    peak = PeakResident(proc.pid, cmd[0])
    peak.start()
    timer = threading.Timer(limit, proc.kill) if limit else None
    if timer:
        timer.start()
    output = proc.stdout.read()
    proc.wait()
    wall = time.perf_counter() - start
    peak.done.set()
    peak.join()
    if timer:
        timer.cancel()
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{output}\n(exit {proc.returncode}, {wall:.2f} s)\n\n")
    return proc.returncode, output, wall, peak.kib / 1024.0


class DataSet:
    """One phantom (or a slab of it) as the tools read it: .nii.gz series and mask, raw copies for the engine, and
    the clean series and mask in memory for the scores; `phase` (the complex phantom's) as .nii.gz when given."""

    def __init__(self, work, name, noisy, affine, clean, mask, sigma, slices=None, phase=None):
        if slices:
            first = max(0, (noisy.shape[2] - slices) // 2)
            noisy, clean, mask = (a[:, :, first:first + slices] for a in (noisy, clean, mask))
        self.sigma = float(sigma)
        self.label = f"{slices}-slice slab" if slices else "full"
        self.size = list(noisy.shape)
        self.files = {k: os.path.join(work, f"{name}_{k}") for k in ("noisy.nii.gz", "mask.nii.gz", "noisy.f32",
                                                                       "mask.u8", "phase.nii.gz")}
        dwi_io.save_nifti(self.files["noisy.nii.gz"], noisy, affine)
        dwi_io.save_nifti(self.files["mask.nii.gz"], mask, affine)
        dwi_io.write_raw(self.files["noisy.f32"], noisy, np.float32)
        dwi_io.write_raw(self.files["mask.u8"], mask, np.uint8)
        if phase is not None:
            dwi_io.save_nifti(self.files["phase.nii.gz"], phase, affine)
        self.clean, self.mask = clean, mask > 0
        self.peak = float(clean[self.mask].max())
        self.psnr_noisy = psnr(noisy, clean, self.mask, self.peak)

    @classmethod
    def dwi(cls, prefix, work, name, slices=None):
        """make_dwi_phantom.py's phantom."""
        p = dwi_io.paths(prefix)
        noisy, affine = dwi_io.load_nifti(p["noisy"])
        return cls(work, name, noisy, affine, dwi_io.load_nifti(p["clean"])[0],
                   dwi_io.load_nifti(p["mask"], np.uint8)[0], dwi_io.load_truth(prefix)["sigma"], slices)

    @classmethod
    def complex(cls, prefix, work, name):
        """make_complex_phantom.py's phantom (no noise volumes): its magnitude and phase."""
        noisy, affine = dwi_io.load_nifti(f"{prefix}_mag.nii.gz")
        with open(f"{prefix}_truth.json") as f:
            sigma = json.load(f)["sigma"]
        return cls(work, name, noisy, affine, dwi_io.load_nifti(f"{prefix}_truth_mag.nii.gz")[0],
                   dwi_io.load_nifti(f"{prefix}_mask.nii.gz", np.uint8)[0], sigma,
                   phase=dwi_io.load_nifti(f"{prefix}_phase.nii.gz")[0])

    def score(self, output, sigma_map):
        """PSNR gain and the sigma map's median relative error, inside the brain mask."""
        out = dwi_io.load_nifti(output)[0]
        scores = {"psnr_db": psnr(out, self.clean, self.mask, self.peak)}
        scores["psnr_gain_db"] = scores["psnr_db"] - self.psnr_noisy
        if os.path.exists(sigma_map):
            rel = dwi_io.load_nifti(sigma_map)[0][self.mask].astype(np.float64) / self.sigma - 1.0
            scores["sigma_rel_err_median"] = float(np.median(rel))
        return scores


def summary_value(output, pattern):
    match = re.search(pattern, output, re.MULTILINE)
    return float(match.group(1)) if match else None


def run_row(row, data, args, work, log, limit):
    tool, threads, region = row.split(":")[:3]
    n = thread_count(threads)
    cpus = {sorted(os.sched_getaffinity(0))[0]} if n == 1 else None
    out, sigma = (os.path.join(work, f"{row.replace(':', '_')}_{k}.nii.gz") for k in ("out", "sigma"))
    for path in (out, sigma):
        if os.path.exists(path):
            os.remove(path)
    masked = region == "mask"
    env = dict(os.environ, ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=str(n), OPENBLAS_NUM_THREADS=str(n),
               OMP_NUM_THREADS=str(n))
    result = {"row": row, "tool": tool, "threads": n, "region": region, "data": data.label, "size": data.size}
    if tool == "dwidenoise":
        cmd = [args.dwidenoise, data.files["noisy.nii.gz"], out, "-noise", sigma, "-nthreads", str(n), "-quiet",
               "-force"] + args.dwidenoise_args.split() + (["-mask", data.files["mask.nii.gz"]] if masked else [])
    else:
        extra = [a.format(phase=data.files["phase.nii.gz"]) for a in COMPLEX_ARGS.get(tool, [])]
        cmd = [args.tool, data.files["noisy.nii.gz"], out, "--noise-map", sigma, "--overwrite", "--backend",
               "cuda" if tool.startswith("ours-gpu") else "cpu"] + extra + args.ours_args.split() + (
                   ["--mask", data.files["mask.nii.gz"]] if masked else [])
    code, output, wall, host_mib = run_process(cmd, log, env, cpus, limit)
    if code != 0:
        killed = " (killed: out of time)" if wall >= limit else ""
        result["error"] = f"exit {code}{killed}: " + output.strip()[-300:]
        return result
    result.update({"wall_s": wall, "host_mib": host_mib, **data.score(out, sigma)})
    if tool != "dwidenoise":
        result["filter_s"] = summary_value(output, r"^time:\s+([0-9.eE+-]+) s")
        for step in STEPS:
            result[f"{step}_s"] = summary_value(output, rf"^steps:.*\b{step} ([0-9.eE+-]+) s")
        result["gpu_mib"] = summary_value(output, r"^memory:.*GPU ([0-9.]+) MiB")
        # The tool's own figure, taken once the outputs are written: watched from here, its VmHWM also catches what the
        # libraries touch at exit (OpenBLAS's buffers: tens of MiB on a small series), which is not the denoiser's.
        result["host_watched_mib"] = result["host_mib"]
        result["host_mib"] = summary_value(output, r"^memory:\s+peak host ([0-9.]+) MiB") or host_mib
        patch = re.search(r"^patch:\s+(\d+) x (\d+) x (\d+)", output, re.MULTILINE)
        if tool == "ours-gpu" or (tool == "ours-cpu" and args.cpu_engine):
            result["engine_s"] = run_engine(tool, n, masked, patch.groups() if patch else None, data, args, log, env,
                                            cpus, limit - wall)
    return result


def engine_settings(ours_args):
    """The settings of our tool's extra arguments that svdlrDenoiseBenchmark also takes, so that both time the same
    work: --preset, --policy, --aggregation and --shrinkage (as `--flag value` or `--flag=value`)."""
    words = ours_args.replace("=", " ").split()
    settings = []
    for flag in ("--preset", "--policy", "--aggregation", "--shrinkage"):
        if flag in words[:-1]:
            settings += [flag, words[words.index(flag) + 1]]
    return settings


def run_engine(tool, threads, masked, patch, data, args, log, env, cpus, limit):
    if not args.engine or limit <= 1:
        return None
    repeat = args.engine_repeat if tool == "ours-gpu" else 1
    cmd = [args.engine, "--input", data.files["noisy.f32"], "--size", *map(str, data.size), "--backend",
           "cuda" if tool == "ours-gpu" else "cpu", "--threads", str(threads), "--repeat", str(repeat)]
    cmd += (["--patch", *patch] if patch else []) + engine_settings(args.ours_args) + args.engine_args.split()
    cmd += ["--mask", data.files["mask.u8"]] if masked else []
    code, output, _, _ = run_process(cmd, log, env, cpus, limit)
    try:
        return float(json.loads(output.strip().splitlines()[-1])["median_s"]) if code == 0 else None
    except (ValueError, KeyError, IndexError):
        return None


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def scaling(results):
    """Lines on the speed-up from one thread to every core, for each tool and region whose two rows ran on the same
    data (the one-thread slab and its all-cores pair, or the full volume when there is no slab): process wall, and
    for ours the filter too (the part that is threaded; reading and writing are not)."""
    done = {(r["tool"], r["threads"], r["region"], r["data"]): r for r in results if "wall_s" in r}
    lines = []
    for (tool, threads, region, data), one in sorted(done.items()):
        many = next((r for (t, n, g, d), r in done.items() if (t, g, d) == (tool, region, data) and n > 1), None)
        if threads != 1 or many is None:
            continue
        text = f"- {tool}, {region} ({data}): 1 → {many['threads']} threads {one['wall_s'] / many['wall_s']:.1f}× wall"
        if one.get("filter_s") and many.get("filter_s"):
            text += f", {one['filter_s'] / many['filter_s']:.1f}× filter"
        lines.append(text)
    return lines


def markdown(results, title):
    header = ["tool", "threads", "region", "data", "wall (s)", *(f"{step} (s)" for step in STEPS), "engine (s)",
              "PSNR gain (dB)", "σ error", "host MiB", "GPU MiB"]
    lines = [title, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in results:
        if "error" in r or "skipped" in r:
            cells = [r["tool"], str(r["threads"]), r["region"], r["data"], r.get("skipped") or r["error"][:120]]
            lines.append("| " + " | ".join(cells + [""] * (len(header) - len(cells))) + " |")
            continue
        sigma = r.get("sigma_rel_err_median")
        cells = [r["tool"], str(r["threads"]), r["region"], r["data"], fmt(r["wall_s"], ".2f"),
                 *(fmt(r.get(f"{step}_s"), ".2f") for step in STEPS), fmt(r.get("engine_s"), ".3f"),
                 fmt(r["psnr_gain_db"], "+.2f"), "—" if sigma is None else f"{100 * sigma:+.1f} %",
                 fmt(r["host_mib"], ".0f"), fmt(r.get("gpu_mib"), ".0f")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "wall: the process, .nii.gz in and out; read, checks, filter, write, verify: the tool's own steps "
              "(decoding the inputs; the raw checks; the ITK filter; writing, compression included; verifying and "
              "renaming into place); engine: svdlrDenoiseBenchmark, memory to memory; PSNR gain and σ error inside the "
              "brain mask against the truth; host: peak resident set; GPU: the denoiser's device buffers."]
    speedups = scaling(results)
    if speedups:
        lines += ["", "Scaling, from one thread to every core on the same data:", *speedups]
    if any(r["row"] in COMPLEX_ROWS for r in results):
        lines += ["", "ours-gpu-cx-*: the complex phantom at the same size (make_complex_phantom.py): its magnitude, "
                      "--phase (the demodulation falls in the read step) and --vst (the transforms in the filter step, "
                      "with a first pass for sigma); PSNR gain over that phantom's noisy magnitude."]
    return "\n".join(lines) + "\n"


def extrapolated(results, nz):
    """Lines for the dwidenoise rows run on a slab: the whole-volume estimate and our GPU's ratio to it."""
    lines = []
    for r in results:
        if "whole_estimate_s" not in r:
            continue
        ours = next((o for o in results if o["row"] == f"ours-gpu:all:{r['region']}" and "wall_s" in o), None)
        ratio = f"; ours-gpu {ours['wall_s']:.1f} s is {r['whole_estimate_s'] / ours['wall_s']:.1f}x faster" if ours else ""
        lines.append(f"- dwidenoise, {r['threads']} threads, {r['region']}: {r['wall_s']:.1f} s on the {r['data']}, "
                     f"so an estimated {r['whole_estimate_s']:.0f} s for all {nz} slices{ratio}")
    return ("\n" + "\n".join(lines) + "\n") if lines else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs=4, metavar=("NX", "NY", "NZ", "NV"), required=True)
    parser.add_argument("--work", required=True, help="folder for the phantom, the outputs and the logs")
    parser.add_argument("--colin27", help="folder with ch2.nii.gz and ch2bet.nii.gz (make_dwi_phantom.py's default)")
    parser.add_argument("--rows", default=",".join(ALL_ROWS),
                        help=f"comma-separated, from {','.join(ALL_ROWS + COMPLEX_ROWS)} (default: all but the "
                             f"complex phantom's)")
    parser.add_argument("--one-core-slices", type=int, default=0, help="run the one-thread rows on a slab this thick")
    parser.add_argument("--dwidenoise-slices", type=int, default=0,
                        help="run the all-core dwidenoise rows on a slab this thick and extrapolate (long series); "
                        "raised to dwidenoise's patch extent (7 for 200 volumes, 9 for 500) where thinner: on a "
                        "thinner slab dwidenoise 3.0.3 crashes (SIGSEGV or a double free, seen with 4 and 6 slices)")
    parser.add_argument("--tool", default=shutil.which("SVDLowRankDenoiseSeries"), help="our tool")
    parser.add_argument("--engine", default=shutil.which("svdlrDenoiseBenchmark"), help="our engine's benchmark")
    parser.add_argument("--dwidenoise", default=shutil.which("dwidenoise"))
    parser.add_argument("--engine-repeat", type=int, default=3)
    parser.add_argument("--no-cpu-engine", dest="cpu_engine", action="store_false",
                        help="engine times for the GPU rows only (on the CPU the engine is most of the filter)")
    parser.add_argument("--budget", type=float, default=0, help="seconds for everything; rows that would start "
                        "later are skipped, and a row still running then is stopped (0: no limit)")
    parser.add_argument("--ours-args", default="", help="extra arguments for our tool, e.g. '--policy mp-cg'")
    parser.add_argument("--engine-args", default="", help="extra arguments for svdlrDenoiseBenchmark")
    parser.add_argument("--dwidenoise-args", default="", help="extra arguments for dwidenoise")
    parser.add_argument("--json", help="results (default WORK/end_to_end.json)")
    parser.add_argument("--markdown", help="table (default WORK/end_to_end.md)")
    args = parser.parse_args()
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = sorted(set(rows) - set(ALL_ROWS + SLAB_ROWS + COMPLEX_ROWS))
    if unknown:
        sys.exit(f"error: unknown rows {unknown}; choose from {ALL_ROWS + COMPLEX_ROWS}")
    if not args.tool:
        sys.exit("error: SVDLowRankDenoiseSeries not found: pass --tool")
    os.makedirs(args.work, exist_ok=True)
    log = os.path.join(args.work, "end_to_end.log")
    open(log, "w").close()  # this run's commands only
    nx, ny, nz, nv = args.size
    prefix = os.path.join(args.work, f"dwi{nx}x{ny}x{nz}x{nv}")
    start = time.perf_counter()
    end = start + (args.budget or float("inf"))
    if not os.path.exists(dwi_io.paths(prefix)["truth"]):
        cmd = [sys.executable, os.path.join(HERE, "make_dwi_phantom.py"), "--size", *map(str, args.size), "--out",
               prefix] + (["--colin27", args.colin27] if args.colin27 else [])
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    full = DataSet.dwi(prefix, args.work, "full")
    one_core = any(row.split(":")[1] == "1" for row in rows)
    slab = DataSet.dwi(prefix, args.work, "slab", args.one_core_slices) if args.one_core_slices and one_core else full
    if slab is not full:  # each one-thread row's all-cores pair on the slab
        rows += [f"{tool}:all:{region}:slab" for tool, threads, region in (row.split(":")[:3] for row in rows)
                 if threads == "1" and f"{tool}:all:{region}:slab" not in rows]
    peer_rows = any(row.startswith("dwidenoise:all:") and not row.endswith(":slab") for row in rows)
    peer_slab = (DataSet.dwi(prefix, args.work, "peerslab", max(args.dwidenoise_slices, dwi_io.default_patch_side(nv)))
                 if args.dwidenoise_slices and peer_rows else None)
    complex_data = None
    if any(row in COMPLEX_ROWS for row in rows):
        cx_prefix = os.path.join(args.work, f"cx{nx}x{ny}x{nz}x{nv}")
        if not os.path.exists(f"{cx_prefix}_truth.json"):
            cmd = [sys.executable, os.path.join(HERE, "make_complex_phantom.py"), "--size", *map(str, args.size),
                   "--out", cx_prefix] + (["--colin27", args.colin27] if args.colin27 else [])
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        complex_data = DataSet.complex(cx_prefix, args.work, "cx")
    print(f"phantom {nx}x{ny}x{nz}x{nv} ready in {time.perf_counter() - start:.1f} s; {os.cpu_count()} cores",
          flush=True)

    gpu = gpu_present()
    results = []
    for row in sorted(rows, key=RUN_ORDER.index):
        tool, threads, region = row.split(":")[:3]
        if row in COMPLEX_ROWS:
            data = complex_data
        else:
            data = (slab if threads == "1" or row.endswith(":slab") else
                    peer_slab if peer_slab and tool == "dwidenoise" else full)
        threads = thread_count(threads)
        remaining = end - time.perf_counter()
        skipped = ("not started: the time budget (--budget) ran out" if remaining < 5 else
                   "no GPU here (nvidia-smi lists none)" if tool.startswith("ours-gpu") and not gpu else
                   "dwidenoise not found" if tool == "dwidenoise" and not args.dwidenoise else None)
        if skipped:
            result = {"row": row, "tool": tool, "threads": threads, "region": region, "data": data.label,
                      "skipped": skipped}
        else:
            result = run_row(row, data, args, args.work, log, min(remaining, 1e6))
            if data is peer_slab and "wall_s" in result:
                result["whole_estimate_s"] = result["wall_s"] * nz / peer_slab.size[2]
        results.append(result)
        shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items() if k not in ("row", "size")}
        print(f"[{row}] {json.dumps(shown)}", flush=True)

    results.sort(key=lambda r: (ALL_ROWS + SLAB_ROWS + COMPLEX_ROWS).index(r["row"]))
    title = (f"### {nx}×{ny}×{nz}×{nv}, {os.cpu_count()} cores" +
             (f" (one-thread rows on the {args.one_core_slices} central slices)" if args.one_core_slices else ""))
    report = {"size": args.size, "cores": os.cpu_count(), "sigma_true": full.sigma, "psnr_noisy_db": full.psnr_noisy,
              "one_core_slices": args.one_core_slices, "seconds": time.perf_counter() - start, "rows": results}
    with open(args.json or os.path.join(args.work, "end_to_end.json"), "w") as f:
        json.dump(report, f, indent=1)
    table = markdown(results, title) + extrapolated(results, nz)
    with open(args.markdown or os.path.join(args.work, "end_to_end.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
