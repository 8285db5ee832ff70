#!/usr/bin/env bash
# The CUDA backend is loaded only when used (docs/architecture.md, "How the CUDA backend is loaded"):
#  1. the engine's library and the tools do not link the CUDA runtime, cuBLAS, cuSOLVER or the driver (readelf -d);
#  2. a CPU run and --help load none of them, nor the backend (LD_DEBUG=files); an Auto run, which asks for the GPU,
#     loads the backend (the control that shows the check sees a load);
#  3. where the backend cannot be loaded, --backend auto runs on the CPU with the reason, and --backend cuda fails
#     with it (SVDLR_CUDA_BACKEND pointed at a folder without it).
# Usage: cuda-backend-loading.sh ENGINE_LIBRARY RECONSTRUCT_TOOL DENOISE_TOOL BACKEND_FILE_NAME VOLUME WORK_DIR
set -uo pipefail
engine=$1 reconstruct=$2 denoise=$3 backend=$4 volume=$5 work=$6
cuda_libraries='lib(cuda|cudart|cublas|cublasLt|cusolver)\.so'
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
mkdir -p "$work/empty"

for binary in "$engine" "$reconstruct" "$denoise"; do
  needed=$(readelf -d "$binary" | grep NEEDED)
  [ -n "$needed" ] || fail "readelf -d $binary lists no NEEDED entry"
  if grep -qE "\[$cuda_libraries" <<<"$needed"; then
    fail "$binary links a CUDA library: $(grep -E "$cuda_libraries" <<<"$needed" | tr -s ' ')"
  fi
done

# The files a run loads, from the dynamic loader's own trace.
loaded_by() {
  LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE "file=[^ ]*" | sort -u
}
cpu_run=(--overwrite --rank 5 --no-figure --backend cpu "$volume" "$work/cpu.nii.gz")
for run in "$reconstruct ${cpu_run[*]}" "$denoise --help" "$reconstruct --help"; do
  # shellcheck disable=SC2086 # the words of $run are the command line
  files=$(loaded_by $run)
  [ -n "$files" ] || fail "LD_DEBUG=files showed no file loaded by: $run"
  if grep -qE "$cuda_libraries|$backend" <<<"$files"; then
    fail "'$run' loaded: $(grep -E "$cuda_libraries|$backend" <<<"$files" | tr '\n' ' ')"
  fi
done
files=$(loaded_by "$reconstruct" --overwrite --rank 5 --no-figure --backend auto "$volume" "$work/auto.nii.gz")
grep -q "$backend" <<<"$files" || fail "an Auto run did not load $backend"

export SVDLR_CUDA_BACKEND=$work/empty/$backend
output=$("$reconstruct" --overwrite --rank 5 --no-figure --backend auto "$volume" "$work/missing-auto.nii.gz" 2>&1)
status=$?
[ $status -eq 0 ] || fail "--backend auto without the backend exited $status: $output"
grep -q "note: *CUDA backend unavailable, ran on the CPU: $backend could not be loaded: .*No such file" <<<"$output" ||
  fail "--backend auto without the backend did not say why it ran on the CPU: $output"
output=$("$reconstruct" --overwrite --rank 5 --no-figure --backend cuda "$volume" "$work/missing-cuda.nii.gz" 2>&1)
status=$?
[ $status -ne 0 ] || fail "--backend cuda without the backend succeeded"
grep -q "CUDA backend requested but unavailable: $backend could not be loaded" <<<"$output" ||
  fail "--backend cuda without the backend did not say why: $output"

[ $failures -eq 0 ] && echo "CUDA backend loading: all checks passed"
exit $failures
