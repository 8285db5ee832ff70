#!/usr/bin/env bash
# The local denoiser's CUDA backend on the GPU machine, in one device call: its test suite, compute-sanitizer
# (memcheck on the GPU tests, racecheck and synccheck on small ones), then the 96x96x60x65 series (generated there,
# benchmarks/make_denoise_series.py) through the CPU backend (the reference output) and the CUDA backend (public
# API end to end, and svdlrDenoiseCudaBenchmark: ours against cuSOLVER, with the trace). Logs and JSON to $OUT;
# a short summary last.
#
# Here (no GPU): build for sm_90, then bundle the programs and these two scripts into a folder the call carries:
#   cmake --build build --target svdlrLocalDenoiseCudaGTest svdlrDenoiseBenchmark svdlrDenoiseCudaBenchmark
#   ../shared/tools/gpu-bundle.sh BUNDLE build/test/svdlrLocalDenoiseCudaGTest \
#     build/benchmarks/svdlrDenoiseBenchmark build/benchmarks/svdlrDenoiseCudaBenchmark
#   cp benchmarks/denoise_cuda_session.sh benchmarks/make_denoise_series.py BUNDLE/
# On the GPU machine: bash BUNDLE/denoise_cuda_session.sh [tests] [bench]   (both by default)
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
# Everything is written to a work folder; at the end the few files worth keeping go to $OUT (a device call brings
# back only a handful).
keep=${OUT:-$bundle/out}
out=/tmp/denoise-cuda-session
mkdir -p "$out" "$keep"
source "$bundle/env.sh"
tests=$bundle/bin/svdlrLocalDenoiseCudaGTest
stages=${*:-tests bench}
want() { [[ " $stages " == *" $1 "* ]]; }
summary=$out/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
nproc | sed 's/^/cores: /' | tee -a "$out/gpu.txt"

if want tests; then
  echo "== GPU tests"
  timeout 240 "$tests" > "$out/tests.log" 2>&1
  note "tests: $(grep -E '^\[  (PASSED|FAILED) ' "$out/tests.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]|n = ' "$out/tests.log" | head -30
  echo "== compute-sanitizer"
  # The eigen-solver tests at n = 100..256 with every vector take minutes under memcheck: the small-n and
  # global-memory-path tests stand for them.
  timeout 170 compute-sanitizer --tool memcheck --leak-check full "$tests" --gtest_brief=1 \
    --gtest_filter='SmallEigenSolverCuda.MarchenkoPastur*:SmallEigenSolverCuda.Zero*:SmallEigenSolverCuda.MatricesTooLarge*:LocalDenoiseCuda.*' \
    > "$out/memcheck.log" 2>&1
  note "memcheck (rc $?): $(grep -E 'ERROR SUMMARY|PASSED|FAILED|LEAK' "$out/memcheck.log" | tr '\n' ' ')"
  tail -3 "$out/memcheck.log"
  small='LocalDenoiseCuda.MarchenkoPasturCentreVoxelEqualsCpuWhenVolumesAreTheSmallerSide:SmallEigenSolverCuda.ZeroAndRankOne*'
  timeout 120 compute-sanitizer --tool racecheck "$tests" --gtest_brief=1 --gtest_filter="$small" \
    > "$out/racecheck.log" 2>&1
  note "racecheck: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$out/racecheck.log" | tr '\n' ' ')"
  timeout 60 compute-sanitizer --tool synccheck "$tests" --gtest_brief=1 --gtest_filter="$small" \
    > "$out/synccheck.log" 2>&1
  note "synccheck: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/synccheck.log" | tr '\n' ' ')"
fi

if want bench; then
  echo "== 96x96x60x65 series"
  data=/tmp/denoise-bench
  mkdir -p "$data"
  python3 "$bundle/make_denoise_series.py" "$data/series.f32" --size 96 96 60 65 --clean "$data/clean.f32"
  size="--size 96 96 60 65"
  timeout 120 "$bundle/bin/svdlrDenoiseBenchmark" --input "$data/series.f32" $size --backend cpu --repeat 1 \
    --output "$data/cpu.f32" --rank-out "$data/cpu.u16" > "$out/cpu.json" 2> "$out/cpu.err"
  note "cpu (16 cores): $(cut -c1-300 "$out/cpu.json")"
  timeout 120 "$bundle/bin/svdlrDenoiseBenchmark" --input "$data/series.f32" $size --backend cuda --repeat 7 \
    --output "$data/gpu.f32" --rank-out "$data/gpu.u16" > "$out/gpu.json" 2> "$out/gpu.err"
  note "cuda (public API): $(cut -c1-300 "$out/gpu.json")"
  timeout 150 "$bundle/bin/svdlrDenoiseCudaBenchmark" --input "$data/series.f32" $size --repeat 7 --cusolver-repeat 2 \
    --variants --reference "$data/cpu.f32" --reference-rank "$data/cpu.u16" > "$out/cuda-bench.json" 2> "$out/cuda-bench.err"
  cat "$out/cuda-bench.err" >> "$summary"
  timeout 100 "$bundle/bin/svdlrDenoiseCudaBenchmark" --input "$data/series.f32" $size --repeat 3 --cusolver-repeat 0 \
    --aggregation overlap > "$out/cuda-bench-overlap.json" 2>> "$out/cuda-bench.err"
  python3 - "$data" "$out" >> "$summary" <<'PY'
import json, sys
import numpy as np
d, out = sys.argv[1], sys.argv[2]
for name in ("cuda-bench.json", "cuda-bench-overlap.json"):
    for line in open(f"{out}/{name}"):
        try:
            r = json.loads(line)
        except ValueError:
            print(line.strip()[:300]); continue
        if "error" in r:
            print(r); continue
        g = r["gpu_ms"]
        print(f"{r['aggregation']:7s} {r['solver']:55s} median {r['median_s']*1e3:7.1f} ms  gpu " +
              " ".join(f"{k} {v:.1f}" for k, v in g.items()) + f"  plan {r['plan']}")
        for key in ("vs_reference", "vs_first_configuration"):
            if key in r:
                print(f"    {key}: {r[key]}")
noisy, clean = (np.fromfile(f"{d}/{n}.f32", np.float32) for n in ("series", "clean"))
for name in ("cpu", "gpu"):
    try:
        out = np.fromfile(f"{d}/{name}.f32", np.float32)
        print(f"{name}: rms error vs clean {np.sqrt(np.mean((out - clean) ** 2)):.3f} (noisy {np.sqrt(np.mean((noisy - clean) ** 2)):.3f})")
    except Exception as error:
        print(name, error)
try:
    cpu, gpu = (np.fromfile(f"{d}/{n}.f32", np.float32) for n in ("cpu", "gpu"))
    rc, rg = (np.fromfile(f"{d}/{n}.u16", np.uint16) for n in ("cpu", "gpu"))
    print(f"gpu vs cpu: max abs {np.max(np.abs(gpu - cpu)):.3g}, rel rms {np.linalg.norm(gpu - cpu) / np.linalg.norm(cpu):.3g}, "
          f"rank differences {int(np.sum(rc != rg))} of {rc.size}, ranks {np.bincount(rc).tolist()}")
except Exception as error:
    print("compare", error)
PY
fi
for f in summary.txt tests.log memcheck.log racecheck.log cuda-bench.json cuda-bench-overlap.json cpu.json gpu.json; do
  [ -f "$out/$f" ] && tail -c 2000000 "$out/$f" > "$keep/$f"
done
echo "== summary"
cat "$summary"
