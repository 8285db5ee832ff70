#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# process_probe.sh BIN SERIES.nii.gz OUT_DIR
#
# Where a fresh SVDLowRankDenoiseSeries process spends its wall time, its own steps line included and beyond it
# (loading its libraries, their initialisers, the CUDA start-up, the exit), on the GPU machine (benchmarks/device.sh's
# process stage makes SERIES):
#   - `--help` three times: loading and exit with nothing else;
#   - the run on CUDA three times, each line it writes timed from the start (its last line to the exit is the
#     teardown), and twice without the warm-up thread (SVDLR_CUDA_WARMUP=0); the run on the CPU once;
#   - the CUDA backend's dlopen alone, in a fresh Python process;
#   - one CUDA run under strace (library opens, threads, the device files, its lines and the exit, timestamped) and
#     perf (where the CPU time goes), written to OUT_DIR.
set -uo pipefail
bin=$1 series=$2 out=$3
tool=$bin/SVDLowRankDenoiseSeries
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run=("$series" "$scratch/out.nii.gz" --noise-map "$scratch/sigma.nii.gz" --overwrite)
micros() { echo "${EPOCHREALTIME/./}"; }
wall() { local s; s=$(micros); "$@" > "$scratch/stdout" 2>&1; echo "$(( ($(micros) - s) / 1000 )) ms"; }
# Each line the command writes (stdout and stderr together) with the milliseconds since it started, then its exit.
timeline() {
  local start line
  start=$(micros)
  { "$@" 2>&1; echo "exit $?"; } | while IFS= read -r line; do
    printf '%7d ms  %s\n' "$(( ($(micros) - start) / 1000 ))" "${line:0:110}"
  done
}

echo "profilers: $(for p in perf nsys strace; do command -v "$p" > /dev/null && printf '%s ' "$p"; done)"
for i in 1 2 3; do echo "--help: $(wall "$tool" --help)"; done
for i in 1 2 3; do echo "cuda run $i:"; timeline "$tool" "${run[@]}" --backend cuda; done
for i in 1 2; do echo "cuda run without the warm-up $i:"; SVDLR_CUDA_WARMUP=0 timeline "$tool" "${run[@]}" --backend cuda; done
echo "cpu run:"; timeline "$tool" "${run[@]}" --backend cpu
for mode in RTLD_NOW RTLD_LAZY; do
  python3 -c "import ctypes, os, time; t = time.perf_counter()
ctypes.CDLL('$(dirname "$bin")/lib/libsvdlr_cuda.so', mode=os.$mode | os.RTLD_LOCAL)
print('dlopen of the CUDA backend, $mode: %.1f ms' % (1e3 * (time.perf_counter() - t)))"
done
LD_DEBUG=statistics "$tool" --help 2>&1 > /dev/null | grep -E 'total startup time|time needed for relocation' |
  sed 's/^ *[0-9]*: */ld.so: /'
if command -v strace > /dev/null; then
  strace -f -tt -e trace=execve,openat,clone,clone3,write,exit_group -o "$scratch/strace.txt" "$tool" "${run[@]}" \
    --backend cuda > /dev/null 2>&1
  grep -E 'execve|\.so|/dev/nvidia|clone|write\((1|2),|exit_group|\+\+\+' "$scratch/strace.txt" |
    grep -v ENOENT > "$out/strace-cuda-run.txt" && echo "strace: $out/strace-cuda-run.txt"
fi
if command -v perf > /dev/null; then
  perf record -q -F 2000 -g -o "$scratch/perf.data" "$tool" "${run[@]}" --backend cuda > /dev/null 2>&1 &&
    perf report -i "$scratch/perf.data" --no-children -g none --sort dso 2> /dev/null | grep -v '^#' | grep '%' |
    head -30 > "$out/perf-cuda-run.txt" &&
    perf report -i "$scratch/perf.data" --no-children -g none --sort dso,sym 2> /dev/null | grep -v '^#' | grep '%' |
    head -80 >> "$out/perf-cuda-run.txt" && echo "perf: $out/perf-cuda-run.txt"
fi
