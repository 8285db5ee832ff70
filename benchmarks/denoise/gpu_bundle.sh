#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# gpu_bundle.sh OUTDIR [svdlrDenoiseBenchmark built for sm_90]
#
# Packs what the GPU machine needs to run the denoising comparison there, in OUTDIR (carry it in the device call):
#   OUTDIR/bin, env.sh        dwidenoise with libmrtrix and the other libraries it needs, and our benchmark program
#   OUTDIR/lib.tar.xz         when named (packed by /work/shared/tools/gpu-bundle.sh; the libraries compressed):
#                             there, `tar -xJf OUTDIR/lib.tar.xz -C OUTDIR && source OUTDIR/env.sh` (gpu_run.sh does)
#   OUTDIR/colin27/           ch2.nii.gz and ch2bet.nii.gz, the anatomy the phantom is made from (no mricron-data there)
#   OUTDIR/denoise/           these scripts; there: bash OUTDIR/denoise/gpu_run.sh OUTDIR
#   OUTDIR/whl/               Python 3.12 manylinux wheels the GPU image lacks: dipy, nibabel, patch-denoise (14 MB);
#                             numpy, scipy, scikit-image, matplotlib, h5py, tqdm, packaging are in the image already,
#                             and dipy's trx-python is not imported by its denoisers. Install there with
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site OUTDIR/whl/*.whl
#   export PYTHONPATH=/tmp/site
# Run setup_peers.sh first (it installs mrtrix3 and mricron-data here). Safe to run again: OUTDIR is rebuilt.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [svdlrDenoiseBenchmark]" >&2; exit 2; }
out=$1; shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundler=${SVDLR_GPU_BUNDLE:-/work/shared/tools/gpu-bundle.sh}
templates=/usr/share/mricron/templates

rm -rf "$out"
# The real path, not /usr/bin's link: dwidenoise finds libmrtrix through its RUNPATH, $ORIGIN/../lib.
bash "$bundler" "$out" "$(readlink -f "$(command -v dwidenoise)")" "$@"
mkdir -p "$out/colin27" "$out/whl" "$out/denoise"
cp "$templates/ch2.nii.gz" "$templates/ch2bet.nii.gz" "$out/colin27/"
cp "$here"/*.py "$here/gpu_run.sh" "$out/denoise/"  # the scripts too, so the bundle runs from any checkout
# The same versions as setup_peers.sh pins; one version of each, so the offline install cannot conflict.
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$out/whl" \
  dipy==1.12.1 nibabel==5.4.2 patch-denoise==1.4.4
# OpenBLAS alone is 36 MB (every CPU kind's kernels): the libraries travel xz-compressed (46 MB -> 7.5 MB) and
# gpu_run.sh unpacks them there.
tar -cJf "$out/lib.tar.xz" -C "$out" lib
rm -rf "$out/lib"
du -sh "$out"/* | awk '{print "  " $2 ": " $1}'
total=$(du -sm "$out" | cut -f1)
echo "  total: ${total} MB"
[ "$total" -le 50 ] || echo "warning: the bundle is ${total} MB; a device call carries 64 MiB in all" >&2
