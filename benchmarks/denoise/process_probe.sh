#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# process_probe.sh BIN SERIES.nii.gz OUT_DIR
#
# Where a fresh SVDLowRankDenoiseSeries process spends the time its own steps line does not count (the wall minus
# "process": loading its libraries, their initialisers, the exit), on the GPU machine after the denoise stage made
# SERIES (benchmarks/device.sh leaves it at /tmp/svdlr-device/data/SIZE/full_noisy.nii.gz):
#   - `--help` three times: loading and exit with nothing else;
#   - the whole run on CUDA and on the CPU with a stride of 3 (a short filter), three times each: wall and steps;
#   - the dynamic loader's own statistics;
#   - a profile of one CUDA run by perf or nsys where the machine has them (written to OUT_DIR).
set -uo pipefail
bin=$1 series=$2 out=$3
tool=$bin/SVDLowRankDenoiseSeries
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
wall() { local s=$EPOCHREALTIME; "$@" > "$scratch/stdout" 2>&1; awk -v s="$s" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.3f", e - s }'; }

echo "profilers: $(for p in perf nsys strace ltrace; do command -v "$p" > /dev/null && printf '%s ' "$p"; done)"
for i in 1 2 3; do echo "--help: $(wall "$tool" --help) s"; done
for backend in cuda cpu; do
  extra=()
  [ "$backend" = cpu ] && extra=(--stride 3)
  for i in 1 2 3; do
    seconds=$(wall "$tool" "$series" "$scratch/out.nii.gz" --overwrite --backend "$backend" "${extra[@]}")
    echo "$backend run $i: wall $seconds s; $(grep '^steps:' "$scratch/stdout" | sed 's/^steps: *//')"
  done
done
LD_DEBUG=statistics "$tool" --help 2>&1 > /dev/null | grep -E 'total startup time|time needed for relocation' |
  sed 's/^ *[0-9]*: */ld.so: /'
if command -v perf > /dev/null; then
  perf record -q -F 2000 -g -o "$scratch/perf.data" "$tool" "$series" "$scratch/out.nii.gz" --overwrite \
    --backend cuda > /dev/null 2>&1 &&
    perf report -i "$scratch/perf.data" --no-children --sort dso,sym 2> /dev/null | grep -v '^#' | grep '%' |
    head -80 > "$out/perf-cuda-run.txt" && echo "perf: $out/perf-cuda-run.txt"
fi
if command -v nsys > /dev/null; then
  nsys profile -q -t cuda,osrt -o "$scratch/run" "$tool" "$series" "$scratch/out.nii.gz" --overwrite \
    --backend cuda > /dev/null 2>&1 &&
    nsys stats -q --report osrt_sum,cuda_api_sum "$scratch/run.nsys-rep" > "$out/nsys-cuda-run.txt" 2>&1 &&
    echo "nsys: $out/nsys-cuda-run.txt"
fi
