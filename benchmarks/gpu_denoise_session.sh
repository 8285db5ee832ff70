#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# The denoiser's proof on the GPU machine, in one or two device calls (a call may run 10 minutes):
#   tests   the CUDA suites (the slice engine with the noise policies, the local denoiser and its eigen-solver) and
#           the local filter with Backend Auto, then compute-sanitizer memcheck, racecheck and synccheck on small ones;
#   compare the DWI phantom comparison (benchmarks/denoise/gpu_run.sh) at SIZES, against dwidenoise on every core;
#   variants the CUDA denoiser's kernel variants against its defaults (benchmarks/denoise_cuda_session.sh bench).
#
# Here (no GPU), after building for sm_90 (scripts/build.sh):
#   benchmarks/denoise/gpu_bundle.sh /tmp/gpufinal build/test/svdlrCudaBackendGTest build/test/svdlrLocalDenoiseCudaGTest \
#     build/test/itkLocalLowRankDenoisingImageFilterGTest build/benchmarks/svdlrDenoiseBenchmark \
#     build/benchmarks/svdlrDenoiseCudaBenchmark
#   mkdir -p .gpu-final && tar -cJf .gpu-final/binlib.tar.xz -C /tmp/gpufinal bin lib env.sh share &&
#     cp -r /tmp/gpufinal/colin27 /tmp/gpufinal/whl .gpu-final/        # about 30 MB instead of 85
# On the GPU machine (device run, carry [".gpu-final"]):
#   bash benchmarks/gpu_denoise_session.sh .gpu-final tests compare          # SIZES=96x96x60x65 by default
#   SIZES=128x128x80x100 PEERS=dwidenoise,ours-cuda bash benchmarks/gpu_denoise_session.sh .gpu-final compare variants
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(cd "${1:?usage: $0 BUNDLE [tests] [compare] [variants]}" && pwd)
shift
stages=${*:-tests compare}
want() { [[ " $stages " == *" $1 "* ]]; }
keep=${OUT:-/tmp/gpu-denoise-session/keep} # a device call brings back 8 files at most: the results go there
out=/tmp/gpu-denoise-session                # the logs stay on the machine; their summary lines are printed
mkdir -p "$out" "$keep"
[ -d "$bundle/bin" ] || tar -xJf "$bundle/binlib.tar.xz" -C "$bundle"
source "$bundle/env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
bin=$bundle/bin

if want tests; then
  echo "== GPU tests"
  for suite in svdlrCudaBackendGTest svdlrLocalDenoiseCudaGTest itkLocalLowRankDenoisingImageFilterGTest; do
    timeout 240 "$bin/$suite" > "$out/$suite.log" 2>&1
    echo "$suite (rc $?): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran' "$out/$suite.log" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \]' "$out/$suite.log" | head -10
  done
  echo "== compute-sanitizer"
  small='LocalDenoiseCuda.*:SmallEigenSolverCuda.MarchenkoPastur*:SmallEigenSolverCuda.Zero*'
  timeout 150 compute-sanitizer --tool memcheck --leak-check full "$bin/svdlrLocalDenoiseCudaGTest" --gtest_brief=1 \
    --gtest_filter="$small" > "$out/memcheck-denoise.log" 2>&1
  echo "memcheck, denoiser (rc $?): $(grep -E 'ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED' "$out/memcheck-denoise.log" | tr '\n' ' ')"
  timeout 60 compute-sanitizer --tool memcheck --leak-check full "$bin/svdlrCudaBackendGTest" --gtest_brief=1 \
    --gtest_filter='*Noise*:*NaNSigmas*' > "$out/memcheck-noise.log" 2>&1
  echo "memcheck, noise policies (rc $?): $(grep -E 'ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED' "$out/memcheck-noise.log" | tr '\n' ' ')"
  race='LocalDenoiseCuda.MarchenkoPasturCentreVoxelEqualsCpuWhenVolumesAreTheSmallerSide:SmallEigenSolverCuda.ZeroAndRankOne*'
  timeout 60 compute-sanitizer --tool racecheck "$bin/svdlrLocalDenoiseCudaGTest" --gtest_brief=1 --gtest_filter="$race" \
    > "$out/racecheck.log" 2>&1
  echo "racecheck (rc $?): $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' "$out/racecheck.log" | tr '\n' ' ')"
  timeout 40 compute-sanitizer --tool synccheck "$bin/svdlrLocalDenoiseCudaGTest" --gtest_brief=1 --gtest_filter="$race" \
    > "$out/synccheck.log" 2>&1
  echo "synccheck (rc $?): $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/synccheck.log" | tr '\n' ' ')"
fi

if want compare; then
  echo "== DWI phantom: ours against dwidenoise"
  SIZES=${SIZES:-96x96x60x65} PEERS=${PEERS:-dwidenoise,ours-cpu,ours-cuda} PEER_REPEAT=${PEER_REPEAT:-1} \
    REPEAT=${REPEAT:-3} OUT=$keep bash "$root/benchmarks/denoise/gpu_run.sh" "$bundle" 2>&1 | tail -40
  cat "$keep"/*_evaluation.md 2>/dev/null
fi

if want variants; then
  echo "== CUDA denoiser: kernel variants"
  cp "$root/benchmarks/denoise_cuda_session.sh" "$root/benchmarks/make_denoise_series.py" "$bundle/"
  OUT=$out timeout 300 bash "$bundle/denoise_cuda_session.sh" bench 2>&1 | tail -30
  cp "$out/summary.txt" "$keep/variants-summary.txt" 2>/dev/null
fi
