#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# gpu_bundle.sh [--peers] [--dask] [--no-build] [--cuda-wheel=WHEEL]
#
# Run here (no GPU): builds the module for the GPU machine (sm_90, scripts/build.sh into $SVDLR_BUILD_DIR, default
# build/) and packs into .gpu/ (SVDLR_GPU_BUNDLE_DIR overrides) everything benchmarks/device.sh needs there, where
# there is no ITK, DCMTK, LAPACK, GoogleTest, mrtrix3 or network:
#   .gpu/binlib.tar.xz  the GPU test suites, the tools, the benchmark programs and dwidenoise, with every library
#                       they need (/work/shared/tools/gpu-bundle.sh; xz-compressed: OpenBLAS alone is 36 MB)
#   .gpu/paths.tsv      absolute paths compiled into the test suites (tools, examples, test data, a source folder)
#                       and what stands for them there: device.sh links them, so those tests run instead of failing
#                       or skipping
#   .gpu/data/          Colin27 (ch2, ch2bet) and ITK's BrainProtonDensitySlice.png
#   .gpu/whl/           Python 3.12 wheels the GPU image lacks: nibabel (the denoise phantom), nanobind (the python
#                       stage), rapidgzip (the gunzip stage's reference); with --peers also dipy and patch-denoise,
#                       with --dask dask, distributed and dask-cuda
#   .gpu/whl-cuda/      with --cuda-wheel, that wheel (scripts/build-wheel.sh --cuda, cp312 or abi3): the wheel stage
# The scripts themselves travel with the working tree. Then: device run, carry [".gpu"],
#   command "bash benchmarks/device.sh STAGE..." (benchmarks/README.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SVDLR_BUILD_DIR:-$root/build}
out=${SVDLR_GPU_BUNDLE_DIR:-$root/.gpu}
peers=0 dask=0 rebuild=1 cuda_wheel=""
for option in "$@"; do
  case "$option" in
    --peers) peers=1 ;;
    --dask) dask=1 ;;
    --no-build) rebuild=0 ;;
    --cuda-wheel=*) cuda_wheel=${option#--cuda-wheel=} ;;
    *) echo "usage: $0 [--peers] [--dask] [--no-build] [--cuda-wheel=WHEEL]" >&2; exit 2 ;;
  esac
done

if [ $rebuild = 1 ]; then
  mkdir -p "$build"
  env -u CUDAARCHS SVDLR_BUILD_DIR="$build" SVDLR_CUDA_ARCHITECTURES=90 SVDLR_JOBS="${SVDLR_JOBS:-$(nproc)}" \
    "$root/scripts/build.sh" > "$build/gpu-bundle-build.log" 2>&1 || { tail -30 "$build/gpu-bundle-build.log"; exit 1; }
fi
grep -q '^CMAKE_CUDA_ARCHITECTURES:.*=.*90' "$build/CMakeCache.txt" ||
  { echo "error: $build is not built for sm_90 (CMAKE_CUDA_ARCHITECTURES)" >&2; exit 1; }

# What device.sh runs; a program this build lacks (no CUDA, no DCMTK) is left out with a note.
programs=(test/svdlrCudaBackendGTest test/svdlrLocalDenoiseCudaGTest test/svdlrEngineGTest test/svdlrLocalDenoiseGTest
  test/itkSVDLowRankReconstructionImageFilterGTest test/itkLocalLowRankDenoisingImageFilterGTest
  apps/test/SVDLowRankDenoiseSeriesGTest apps/test/SVDLowRankToolGTest apps/test/SVDLowRankBatchGTest
  apps/test/SVDLowRankBatchToolGTest apps/test/SVDLowRankDenoiseBatchGTest apps/test/SVDLowRankParallelGunzipGTest
  apps/SVDLowRankReconstructImage
  apps/SVDLowRankDenoiseSeries
  apps/DicomSeriesExample examples/LocalLowRankDenoisingExample examples/ReaderFilterWriterExample
  benchmarks/svdlrBenchmark benchmarks/svdlrDenoiseBenchmark benchmarks/svdlrDenoiseCudaBenchmark
  benchmarks/svdlrGunzipBenchmark)
found=()
for program in "${programs[@]}"; do
  if [ -x "$build/$program" ]; then found+=("$build/$program"); else echo "note: no $build/$program" >&2; fi
done
# The real file, not /usr/bin's link: dwidenoise finds libmrtrix through its RUNPATH, $ORIGIN/../lib.
dwidenoise=$(readlink -f "$(command -v dwidenoise)") ||
  { echo "error: no dwidenoise here (bash benchmarks/denoise/setup_peers.sh installs mrtrix3)" >&2; exit 1; }

rm -rf "$out"
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
bash "${SVDLR_GPU_BUNDLE:-/work/shared/tools/gpu-bundle.sh}" "$staging" "${found[@]}" "$dwidenoise" > /dev/null
# Headers of the libraries the Python extension links: the GPU machine has no -dev packages, and device.sh builds the
# extension there (its file checks use libdeflate and nifti_clib, its engine oneTBB).
mkdir -p "$out/data" "$out/whl" "$staging/include"
cp "$(echo '#include <libdeflate.h>' | cpp -H -o /dev/null 2>&1 | awk '/libdeflate.h/ {print $2; exit}')" \
  "$staging/include/" || { echo "error: no libdeflate.h here (scripts/install-deps.sh installs libdeflate-dev)" >&2; exit 1; }
cp -r /usr/include/oneapi "$staging/include/" ||
  { echo "error: no oneTBB headers here (scripts/install-deps.sh installs libtbb-dev)" >&2; exit 1; }
# nifti_clib, shared as the extension links it (CMake/SVDLowRankNifti.cmake), and its headers.
mkdir -p "$staging/include/nifti"
cp /usr/include/nifti/{nifti1.h,nifti2.h,nifti2_io.h,znzlib.h} "$staging/include/nifti/" &&
  cp -L /usr/lib/x86_64-linux-gnu/libnifti2.so.2 /usr/lib/x86_64-linux-gnu/libznz.so.3 "$staging/lib/" ||
  { echo "error: no nifti_clib here (scripts/install-deps.sh installs libnifti2-dev)" >&2; exit 1; }
tar -cJf "$out/binlib.tar.xz" -C "$staging" bin lib share include env.sh

# Test data (test/test-data.env) and the tools and examples the app suites start by their build paths.
# shellcheck disable=SC1090 # the test data's paths, one place (test/test-data.env)
source <(grep -E '^SVDLR_[A-Z0-9_]+=' "$root/test/test-data.env")
templates=$(dirname "$SVDLR_COLIN27_NII")
cp "$SVDLR_COLIN27_NII" "$templates/ch2bet.nii.gz" "$out/data/"
cp "$SVDLR_ITK_EXAMPLE_DATA_DIR/BrainProtonDensitySlice.png" "$out/data/" 2>/dev/null || true
{
  echo "$SVDLR_COLIN27_NII	data/ch2.nii.gz"
  echo "$templates/ch2bet.nii.gz	data/ch2bet.nii.gz"
  echo "$SVDLR_ITK_EXAMPLE_DATA_DIR/BrainProtonDensitySlice.png	data/BrainProtonDensitySlice.png"
  for program in "${found[@]}"; do echo "$program	bin/$(basename "$program")"; done
  echo "$root/apps/fuzz/regressions	repo:apps/fuzz/regressions" # a source folder: the working tree has it there
} > "$out/paths.tsv"

# Python 3.12 wheels for the GPU image, one version each so the offline install cannot conflict (the versions
# benchmarks/denoise/setup_peers.sh pins).
wheels=(nibabel==5.4.2 nanobind==3.1.0 rapidgzip==0.16.2)
[ $peers = 1 ] && wheels+=(dipy==1.12.1 patch-denoise==1.4.4)
# dask-cuda 26.10 pins dask and distributed to 2026.7.1 (through rapids-dask-dependency, which it never imports).
# Its other needs the GPU image already has (numba, pynvml, pandas, numpy) except cuda-core, its bindings and zict.
dask_pins=(dask==2026.7.1 distributed==2026.7.1)
[ $dask = 1 ] && wheels+=("${dask_pins[@]}" dask-cuda==26.10.0 cuda-core==1.2.2 cuda-bindings==13.5.0
  cuda-pathfinder==1.9.1 zict==3.0.0)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform any -d "$out/whl" "${wheels[@]}"
if [ $dask = 1 ]; then # their dependencies too (cloudpickle, toolz, msgpack, ...)
  python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$out/whl" "${dask_pins[@]}"
fi

[ -z "$cuda_wheel" ] || { mkdir -p "$out/whl-cuda" && cp "$cuda_wheel" "$out/whl-cuda/"; }

git -C "$root" rev-parse --short HEAD > "$out/commit"
tree=$(git -C "$root" ls-files -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
bundle=$(du -sb "$out" | cut -f1)
total=$(( (tree + bundle) / 1048576 ))
du -sh "$out"/* | awk '{print "  " $2 ": " $1}'
echo "bundle $(( bundle / 1048576 )) MiB + working tree $(( tree / 1048576 )) MiB = $total MiB (a device call carries 64 MiB)"
[ "$total" -lt 64 ] || { echo "error: too large to carry" >&2; exit 1; }
