#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# batch_bundle.sh OUTDIR TOOL [--dask]
#
# Packs what batch_session.sh (and batch_dask_session.sh) need on the GPU machine, which has no ITK:
#   OUTDIR/bin, env.sh, lib.tar.xz  SVDLowRankReconstructImage built with CUDA for sm_90, with its ITK and DCMTK
#                                   libraries (/work/shared/tools/gpu-bundle.sh; the libraries xz-compressed)
#   OUTDIR/ch2.nii.gz               Colin27, which the volumes are generated from
#   OUTDIR/*.py, *.sh               the generator, the trace reader, the Dask driver and the two session scripts
#   OUTDIR/whl/ (--dask)            Python 3.12 wheels of dask and distributed and their dependencies
# Typical use, here:
#   CUDACXX=/usr/local/cuda/bin/nvcc cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release \
#     -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build-cuda --target SVDLowRankReconstructImage
#   benchmarks/batch_bundle.sh /work/main/.gpu-batch build-cuda/apps/SVDLowRankReconstructImage --dask
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR TOOL [--dask]" >&2; exit 2; }
out=$1 tool=$2 dask=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$out"
bash "${SVDLR_GPU_BUNDLE:-/work/shared/tools/gpu-bundle.sh}" "$out" "$tool"
cp /usr/share/mricron/templates/ch2.nii.gz "$out/"
# The scripts too, so that the bundle runs from any checkout: bash OUTDIR/batch_session.sh OUTDIR
cp "$here/make_batch_volumes.py" "$here/batch_gpu_trace.py" "$here/batch_dask_shards.py" "$here/batch_session.sh" \
  "$here/batch_dask_session.sh" "$out/"
if [ "$dask" = --dask ]; then
  python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$out/whl" "distributed==2026.8.0" "dask==2026.8.0"
fi
tar -cJf "$out/lib.tar.xz" -C "$out" lib
rm -rf "$out/lib"
du -sh "$out" | awk '{print "bundle: " $1 " (a device call carries 64 MiB in all)"}'
