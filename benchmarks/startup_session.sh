#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# Where a fresh process's seconds go, and what bounds one small slice, on the GPU machine in one device call:
#   1. the tool's main job (Colin27, rank 20, .nii.gz out) as fresh processes: --backend cpu, cuda, auto, and
#      cuda without the background warm-up (SVDLR_CUDA_WARMUP=0); wall time per process and the tool's own
#      stage times (filter, reading the pixels, writing);
#   2. the OpenBLAS kernels the CPU backend ends up on, with and without OPENBLAS_CORETYPE;
#   3. W4 (one 256 x 256 slice, k = 100) and W5 end to end against the peers (run_benchmarks.py);
#   4. each cuSOLVER route to one float64 eigen-decomposition (svdlrEigenProbe).
# Here: build for sm_90, then bundle (the libraries travel xz-compressed):
#   /work/shared/tools/gpu-bundle.sh .gpu-perf build/apps/SVDLowRankReconstructImage build/benchmarks/svdlrBenchmark \
#     build/benchmarks/svdlrEigenProbe build/benchmarks/svdlrStartupProbe
#   tar -cJf .gpu-perf/lib.tar.xz -C .gpu-perf lib && rm -rf .gpu-perf/lib
#   mkdir -p .gpu-perf/data && cp /usr/share/mricron/templates/ch2.nii.gz .gpu-perf/data/
# There (device run, carry [".gpu-perf"]): bash benchmarks/startup_session.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${BUNDLE:-$root/.gpu-perf}
out=${OUT:-/tmp/startup-out}
mkdir -p "$out"
[ -d "$bundle/lib" ] || tar -xJf "$bundle/lib.tar.xz" -C "$bundle"
source "$bundle/env.sh"
tool=$bundle/bin/SVDLowRankReconstructImage
input=$bundle/data/ch2.nii.gz
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== 1. the main job as fresh processes (wall s | tool's own stage times)"
wall() { local t0 t1; t0=$(date +%s%N); "$@" > "$work/log" 2>&1; local rc=$?; t1=$(date +%s%N);
  printf '%d ms rc=%d | %s | %s\n' "$(( (t1 - t0) / 1000000 ))" "$rc" "$(grep -m1 '^backend' "$work/log")" \
    "$(grep -m1 '^time' "$work/log")"; }
printf 'process start only (--help): '; wall "$tool" --help
for run in 1 2 3; do
  for backend in cpu cuda auto; do
    printf '%-4s run %d: ' "$backend" "$run"
    wall "$tool" "$input" "$work/out_$backend.nii.gz" --rank 20 --backend "$backend" --overwrite --no-figure
  done
  printf 'cuda, no warm-up, run %d: ' "$run"
  SVDLR_CUDA_WARMUP=0 wall "$tool" "$input" "$work/out_nowarm.nii.gz" --rank 20 --backend cuda --overwrite --no-figure
done

echo "== the CUDA backend's start-up, step by step (fresh processes; lazy module loading, then eager)"
"$bundle/bin/svdlrStartupProbe"
"$bundle/bin/svdlrStartupProbe" | tail -n +3 | head -9 | sed 's/^/(again) /'
CUDA_MODULE_LOADING=EAGER "$bundle/bin/svdlrStartupProbe" | tail -n +3 | sed 's/^/(eager) /'

echo "== 2. OpenBLAS kernels"
echo "unset: $(OPENBLAS_VERBOSE=2 "$tool" "$input" "$work/o.nii.gz" --rank 20 --backend cpu --overwrite --no-figure 2>&1 |
  grep -E '^Core|^time' | tr '\n' ' ')"
for coretype in Haswell SkylakeX; do
  echo "OPENBLAS_CORETYPE='$coretype': $(OPENBLAS_CORETYPE=$coretype OPENBLAS_VERBOSE=2 "$tool" "$input" \
    "$work/o.nii.gz" --rank 20 --backend cpu --overwrite --no-figure 2>&1 | grep -E '^Core|^time' | tr '\n' ' ')"
done
grep -m1 "model name" /proc/cpuinfo; nproc

echo "== 3. W4 and W5 end to end against the peers"
cd "$root/benchmarks"
[ "${SKIP_PEERS:-0}" = 1 ] || python3 run_benchmarks.py --binary "$bundle/bin/svdlrBenchmark" --colin27 "$input" --out "$out" --only W4,W5 2>&1 | tail -8

echo "== 4. cuSOLVER routes to one eigen-decomposition"
"$bundle/bin/svdlrEigenProbe" 20
rm -rf "$work"
