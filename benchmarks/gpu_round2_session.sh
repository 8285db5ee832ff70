#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# Issue 12's proof in one device call: the GPU tests and compute-sanitizer (gpu_session.sh tests), the benchmark
# against the peers (all workloads), the start-up of a fresh process (startup_session.sh), and the Python
# package against the C++ engine (python_session.sh).
# Here (after SVDLR_CUDA_ARCHITECTURES=90 ./scripts/build.sh):
#   rm -rf .gpu && /work/shared/tools/gpu-bundle.sh .gpu build/test/svdlrCudaBackendGTest build/test/svdlrEngineGTest \
#     build/benchmarks/svdlrBenchmark build/benchmarks/svdlrEigenProbe build/benchmarks/svdlrStartupProbe \
#     build/apps/SVDLowRankReconstructImage
#   tar -cJf .gpu/lib.tar.xz -C .gpu lib && rm -rf .gpu/lib
#   mkdir -p .gpu/data && cp /usr/share/mricron/templates/ch2.nii.gz .gpu/data/
#   python3 -c "import gzip; open('.gpu/data/ch2_181x217x181_u8.raw','wb').write(gzip.open('.gpu/data/ch2.nii.gz').read()[352:])"
#   python3 -m pip download -q --no-deps nanobind==3.1.0 -d .gpu/whl
# There (device run, carry [".gpu"]): bash benchmarks/gpu_round2_session.sh; back here:
#   python3 benchmarks/report.py <files_at>/bench.json --docs docs
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export OUT=${OUT:-/tmp/round2-out}
mkdir -p "$OUT"
[ -d "$root/.gpu/lib" ] || tar -xJf "$root/.gpu/lib.tar.xz" -C "$root/.gpu"
bash "$root/benchmarks/gpu_session.sh" tests bench
echo "== start-up of a fresh process"
BUNDLE=$root/.gpu SKIP_PEERS=1 bash "$root/benchmarks/startup_session.sh" 2>&1 | grep -v "^== 3\|(again)"
echo "== Python against the C++ engine"
BUNDLE=$root/.gpu bash "$root/benchmarks/python_session.sh" 2>&1 | tail -6
