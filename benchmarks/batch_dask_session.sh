#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# Several GPUs through Dask, on the two-GPU machine, in one device call of about 4 minutes (docs/batch.md):
#   N Colin27-sized .nii volumes (make_batch_volumes.py), then a Dask scheduler and one worker per GPU, each seeing
#   only its GPU (CUDA_VISIBLE_DEVICES, as dask-cuda's LocalCUDACluster does), with 1 and then 2 workers:
#   batch_dask_shards.py maps the work over them (MODE=shards: the tool's batch pipeline per shard; MODE=volumes:
#   the package's reconstruct_with_dask, one task per volume, when a Python 3.12 wheel of the package is in
#   BUNDLE/whl). For comparison, the tool's own pipeline with --devices 0 and --devices 0,1 in one process.
# Target: >= 1.8x with two GPUs.
#
# Here: benchmarks/batch_bundle.sh /work/main/.gpu-batch build-cuda/apps/SVDLowRankReconstructImage --dask
# There (device run, nvidia-h200-x2, carry [".gpu-batch"]):  bash .gpu-batch/batch_dask_session.sh .gpu-batch
set -uo pipefail
bundle=$(cd "${1:?usage: $0 BUNDLE}" && pwd)
N=${N:-200} RANK=${RANK:-20} MODE=${MODE:-}
work=${WORK:-/tmp/svdlr-batch-dask}
keep=${OUT:-$work/keep}
[ -d "$bundle/lib" ] || tar -xJf "$bundle/lib.tar.xz" -C "$bundle"
source "$bundle/env.sh"
tool=$bundle/bin/SVDLowRankReconstructImage
rm -rf "$work"; mkdir -p "$work" "$keep"
backend=cuda
if [ "${SMOKE:-0}" = 1 ]; then # a dry run of the script on a machine without a GPU, with its own Python packages
  backend=cpu
else
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/site" "$bundle"/whl/*.whl
  export PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH}
fi
export SVDLR_BATCH_BACKEND=$backend
if [ -z "$MODE" ]; then
  if python3 -c "import itk_svdlowrankreconstruction" 2> /dev/null; then MODE=volumes; else MODE=shards; fi
fi
nvidia-smi --query-gpu=index,name --format=csv,noheader
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
[ "${SMOKE:-0}" = 1 ] && gpus=2
echo "host: $(nproc) cores, $gpus GPUs; N=$N RANK=$RANK MODE=$MODE"
python3 "$bundle/make_batch_volumes.py" "$bundle/ch2.nii.gz" "$work/nii" "$N" --gzip 0

echo "== the tool's pipeline in one process"
for devices in 0 0,1; do
  [ "$backend" = cuda ] || [ "$devices" = 0 ] || continue
  "$tool" --rank "$RANK" --glob 'vol-*.nii' --backend "$backend" --devices "$devices" -o "$work/out-tool-$devices" \
    "$work/nii" > "$keep/tool-$devices.log" 2>&1
  echo "-- --devices $devices: $(grep -E '^time:' "$keep/tool-$devices.log")"
done

echo "== Dask: one worker per GPU"
for workers in 1 2; do
  [ "$workers" -le "$gpus" ] || { echo "only $gpus GPU(s): no run with $workers workers"; continue; }
  python3 -m distributed.cli.dask_scheduler --no-dashboard --port 0 --scheduler-file "$work/scheduler.json" \
    > "$work/scheduler.log" 2>&1 &
  scheduler=$!
  for _ in $(seq 50); do [ -s "$work/scheduler.json" ] && break; sleep 0.2; done
  pids=()
  for gpu in $(seq 0 $((workers - 1))); do
    CUDA_VISIBLE_DEVICES=$gpu python3 -m distributed.cli.dask_worker --scheduler-file "$work/scheduler.json" \
      --nthreads 1 --nworkers 1 --name "gpu$gpu" --no-dashboard > "$work/worker-$gpu.log" 2>&1 &
    pids+=($!)
  done
  python3 - "$work/scheduler.json" "$workers" <<'PY'
import sys, time
from distributed import Client
client = Client(scheduler_file=sys.argv[1])
client.wait_for_workers(int(sys.argv[2]), timeout=60)
PY
  timeout 240 python3 "$bundle/batch_dask_shards.py" "$work/scheduler.json" "$tool" "$work/nii" \
    "$work/out-dask-$workers" "$MODE" "$RANK" 2>&1 | grep -oE 'dask (shards|volumes): .*' | tee "$keep/dask-$workers.txt"
  kill "${pids[@]}" "$scheduler" 2> /dev/null
  wait 2> /dev/null
  rm -f "$work/scheduler.json"
done
one=$(grep -oE '[0-9.]+ volumes/s' "$keep/dask-1.txt" 2> /dev/null | grep -oE '^[0-9.]+')
two=$(grep -oE '[0-9.]+ volumes/s' "$keep/dask-2.txt" 2> /dev/null | grep -oE '^[0-9.]+')
[ -n "$one" ] && [ -n "$two" ] && python3 -c "print(f'two GPUs through Dask: {$two / $one:.2f}x one GPU (target 1.8x)')"
