#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# The batch pipeline's proof on one GPU, in one device call of about 4 minutes (docs/batch.md):
#   generate  N Colin27-sized float32 volumes with noise from 1% to 10% (make_batch_volumes.py), as .nii.gz (gzip 6,
#             and one broken file) and as .nii, on the machine's local disk;
#   gpu       the batch pipeline on the GPU (SVDLowRankReconstructImage --glob ... --backend cuda): .nii.gz with ITK's
#             compression, .nii.gz with --compression-level 1, .nii;
#   loop      SAMPLE single-volume processes (SVDLowRankReconstructImage IN OUT, as a user's shell loop runs them), the
#             first SAMPLE of the set, .nii.gz and .nii; volumes/s from their total time (the set's volumes are alike);
#   cpu       the batch pipeline on the CPU, on the first N_CPU volumes;
#   trace     the .nii run again under Nsight Systems (when nsys is there): H2D, kernels, D2H, and the GPU's busy share.
# Prints volumes/s per run and the ratios (targets: batch >= 10x the loop of processes; the GPU busy most of the time).
#
# Here: benchmarks/batch_bundle.sh /work/main/.gpu-batch build-cuda/apps/SVDLowRankReconstructImage
# There (device run, nvidia-h100-x1, carry [".gpu-batch"]):  bash .gpu-batch/batch_session.sh .gpu-batch
set -uo pipefail
bundle=$(cd "${1:?usage: $0 BUNDLE}" && pwd)
N=${N:-200} SAMPLE=${SAMPLE:-20} N_CPU=${N_CPU:-40} RANK=${RANK:-20}
work=${WORK:-/tmp/svdlr-batch}
keep=${OUT:-$work/keep} # a device call brings back what is under $OUT: the tables and logs go there
[ -d "$bundle/lib" ] || tar -xJf "$bundle/lib.tar.xz" -C "$bundle"
source "$bundle/env.sh"
tool=$bundle/bin/SVDLowRankReconstructImage
gpu=(--backend cuda --devices 0)
[ "${SMOKE:-0}" = 1 ] && gpu=(--backend cpu) # a dry run of the script on a machine without a GPU
rm -rf "$work/gz" "$work/nii" "$work/out-"* "$work/loop"
mkdir -p "$work" "$keep"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "host: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; N=$N SAMPLE=$SAMPLE N_CPU=$N_CPU RANK=$RANK"

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }
rate() { python3 -c "print(f'{$1 / $2:.2f}')"; }

echo "== generate"
t=$(now)
python3 "$bundle/make_batch_volumes.py" "$bundle/ch2.nii.gz" "$work/gz" "$N" --gzip 6 --broken 1
python3 "$bundle/make_batch_volumes.py" "$bundle/ch2.nii.gz" "$work/nii" "$N" --gzip 0
echo "generated in $(elapsed "$t" "$(now)") s; $(du -sh "$work/gz" | cut -f1) .nii.gz, $(du -sh "$work/nii" | cut -f1) .nii"

# batch NAME ARGS...: one run of the pipeline; prints its summary, keeps its log and table, sets $wall and $vps.
batch() {
  local name=$1; shift
  local t0; t0=$(now)
  "$tool" --rank "$RANK" --table "$keep/$name.tsv" -o "$work/out-$name" "$@" > "$work/$name.log" 2>&1
  local rc=$?
  wall=$(elapsed "$t0" "$(now)")
  cp "$work/$name.log" "$keep/" 2>/dev/null
  done_count=$(awk -F'\t' '$3=="done"' "$keep/$name.tsv" 2>/dev/null | wc -l)
  vps=$(rate "$done_count" "$wall")
  echo "-- $name (exit $rc): $done_count volumes in $wall s = $vps volumes/s (process wall, start-up included)"
  grep -E '^(volumes|backend|time|steps|solvers|note):' "$work/$name.log" | sed 's/^/   /'
}

echo "== gpu: the batch pipeline on one GPU"
batch gpu-gz --glob '*.nii.gz' "${gpu[@]}" "$work/gz"; gpu_gz=$vps
batch gpu-gz-fast --glob '*.nii.gz' "${gpu[@]}" --compression-level 1 "$work/gz"; gpu_gz_fast=$vps
batch gpu-nii --glob '*.nii' "${gpu[@]}" "$work/nii"; gpu_nii=$vps

echo "== loop: one process per volume (the first $SAMPLE)"
loop() { # loop NAME EXT
  local name=$1 ext=$2 t0 files
  mkdir -p "$work/loop/$name"
  files=$(ls "$work/$name"/vol-*"$ext" | head -n "$SAMPLE")
  t0=$(now)
  for f in $files; do
    "$tool" --rank "$RANK" "${gpu[0]}" "${gpu[1]}" --no-figure "$f" "$work/loop/$name/$(basename "$f")" > "$work/loop-$name.log" 2>&1 ||
      echo "   failed: $f"
  done
  local w; w=$(elapsed "$t0" "$(now)")
  loop_vps=$(rate "$SAMPLE" "$w")
  echo "-- loop $name: $SAMPLE processes in $w s = $loop_vps volumes/s ($(rate "$w" "$SAMPLE") s per volume;" \
       "the whole set of $N would take $(python3 -c "print(f'{$w / $SAMPLE * $N:.0f}')") s)"
  grep -E '^time:' "$work/loop-$name.log" | sed 's/^/   last process: /'
}
loop gz .nii.gz; loop_gz=$loop_vps
loop nii .nii; loop_nii=$loop_vps

echo "== cpu: the batch pipeline on the CPU (the first $N_CPU volumes)"
batch cpu-gz --batch --backend cpu $(ls "$work/gz"/vol-*.nii.gz | head -n "$N_CPU"); cpu_gz=$vps
batch cpu-nii --batch --backend cpu $(ls "$work/nii"/vol-*.nii | head -n "$N_CPU"); cpu_nii=$vps

nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2> /dev/null | head -n 1)
if [ -n "$nsys" ]; then
  echo "== trace: the .nii run under Nsight Systems"
  rm -rf "$work/out-trace"
  t0=$(now)
  timeout 120 "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true -o "$work/trace" \
    "$tool" --rank "$RANK" --glob '*.nii' --backend cuda --devices 0 -o "$work/out-trace" "$work/nii" \
    > "$work/trace.log" 2>&1
  trace_wall=$(elapsed "$t0" "$(now)")
  grep -E '^(time|solvers):' "$work/trace.log" | sed 's/^/   /'
  "$nsys" stats --report cuda_gpu_trace --format csv --force-export=true --output "$work/trace" "$work/trace.nsys-rep" \
    > /dev/null 2>&1
  tool_wall=$(grep -oE '^time: +[0-9.]+' "$work/trace.log" | grep -oE '[0-9.]+$')
  python3 "$bundle/batch_gpu_trace.py" "$work/trace_cuda_gpu_trace.csv" "${tool_wall:-$trace_wall}"
else
  echo "== trace: no nsys here; the solvers' busy share above is the engine's own (each GPU worker's time inside"
  echo "   svdlr::Reconstruct, which waits for its H2D copies, kernels and D2H copies)"
fi

echo "== summary (volumes/s; ratios against the loop of processes on the same files)"
python3 - "$gpu_gz" "$gpu_gz_fast" "$gpu_nii" "$loop_gz" "$loop_nii" "$cpu_gz" "$cpu_nii" <<'PY'
import sys
gpu_gz, gpu_gz_fast, gpu_nii, loop_gz, loop_nii, cpu_gz, cpu_nii = map(float, sys.argv[1:])
def ratio(a, b): return f"{a / b:.1f}x" if b > 0 else "n/a"
print(f"batch GPU .nii.gz       {gpu_gz:8.2f}   {ratio(gpu_gz, loop_gz)} the loop (target 10x), {ratio(gpu_gz, cpu_gz)} the CPU batch")
print(f"batch GPU .nii.gz gz-1  {gpu_gz_fast:8.2f}   {ratio(gpu_gz_fast, loop_gz)} the loop")
print(f"batch GPU .nii          {gpu_nii:8.2f}   {ratio(gpu_nii, loop_nii)} the loop (target 10x), {ratio(gpu_nii, cpu_nii)} the CPU batch")
print(f"loop of processes .nii.gz {loop_gz:6.2f}   .nii {loop_nii:.2f}")
print(f"batch CPU .nii.gz       {cpu_gz:8.2f}   .nii {cpu_nii:.2f}")
PY
