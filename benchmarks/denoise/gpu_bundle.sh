#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# gpu_bundle.sh OUTDIR [svdlrDenoiseBenchmark built for sm_90]
#
# Packs what the GPU machine needs to run the denoising comparison there, in OUTDIR (carry it in the device call):
#   OUTDIR/bin, lib, env.sh   dwidenoise with libmrtrix and the other libraries it needs, and our benchmark program
#                             when named (packed by /work/shared/tools/gpu-bundle.sh); `source OUTDIR/env.sh` there
#   OUTDIR/colin27/           ch2.nii.gz and ch2bet.nii.gz, the anatomy the phantom is made from (no mricron-data there)
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
mkdir -p "$out/colin27" "$out/whl"
cp "$templates/ch2.nii.gz" "$templates/ch2bet.nii.gz" "$out/colin27/"
# The same versions as setup_peers.sh pins; one version of each, so the offline install cannot conflict.
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$out/whl" \
  dipy==1.12.1 nibabel==5.4.2 patch-denoise==1.4.4
du -sh "$out"/* | awk '{print "  " $2 ": " $1}'
total=$(du -sm "$out" | cut -f1)
echo "  total: ${total} MB"
[ "$total" -le 50 ] || echo "warning: the bundle is ${total} MB; a device call carries 64 MiB in all" >&2
