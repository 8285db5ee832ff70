#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# Builds the Python extension on the GPU machine (its Python 3.12 is not the one here) and times it against the C++
# engine (python_overhead.py). The machine has cmake, nvcc and g++ but no nanobind and no LAPACK headers or link
# library: the bundle carries nanobind's wheel, and OpenBLAS (which holds LAPACK) from the startup bundle.
# Here:  python3 -m pip download -q --no-deps nanobind==3.1.0 -d .gpu-perf/whl
# There: bash benchmarks/python_session.sh     (after startup_session.sh unpacked .gpu-perf/lib)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=${BUNDLE:-$root/.gpu-perf}
[ -d "$bundle/lib" ] || tar -xJf "$bundle/lib.tar.xz" -C "$bundle"
source "$bundle/env.sh"
site=/tmp/svdlr-py-site
build=/tmp/svdlr-py-build
python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$bundle"/whl/nanobind-*.whl
# FindLAPACK looks for libopenblas.so; the bundle has the runtime's libopenblas.so.0.
linkdir=/tmp/svdlr-py-lapack && mkdir -p "$linkdir"
ln -sf "$bundle"/lib/libopenblas.so.0 "$linkdir/libopenblas.so"
start=$(date +%s)
PYTHONPATH=$site cmake -S "$root/python" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSVDLR_USE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DPython_EXECUTABLE="$(command -v python3)" -DBLA_VENDOR=OpenBLAS \
  -DCMAKE_LIBRARY_PATH="$linkdir" -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$bundle/lib" \
  -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath-link,$bundle/lib" > /tmp/py-configure.log 2>&1 ||
  { tail -30 /tmp/py-configure.log; exit 1; }
cmake --build "$build" -j16 > /tmp/py-build.log 2>&1 || { grep -m5 -B2 -A8 "error" /tmp/py-build.log; exit 1; }
echo "extension built in $(( $(date +%s) - start )) s"
pkg=/tmp/svdlr-py-pkg && rm -rf "$pkg" && mkdir -p "$pkg"
cp -r "$root/python/itk_svdlowrankreconstruction" "$pkg/"
cp "$build"/_engine*.so "$pkg/itk_svdlowrankreconstruction/"
cd "$root/benchmarks"
PYTHONPATH=$pkg:$site python3 python_overhead.py --binary "$bundle/bin/svdlrBenchmark" --colin27 "$bundle/data/ch2.nii.gz"
