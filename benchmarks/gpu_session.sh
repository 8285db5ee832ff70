#!/usr/bin/env bash
# Everything the GPU machine has to prove, in one device call: the GPU test suite, compute-sanitizer
# (memcheck, racecheck, synccheck), the end-to-end benchmark against the peers, the solver sweep, the
# staging and batch sweeps, the reconstruction-kernel sweep, and Nsight Compute on our kernels.
#
# Here (no GPU), build for sm_90 and bundle, then carry .gpu to the device call:
#   SVDLR_CUDA_ARCHITECTURES=90 ./scripts/build.sh
#   ../shared/tools/gpu-bundle.sh .gpu build/test/svdlrCudaBackendGTest build/test/svdlrEngineGTest \
#     build/benchmarks/svdlrBenchmark build/benchmarks/svdlrKernelBenchmark
#   mkdir -p .gpu/data && cp /usr/share/mricron/templates/ch2.nii.gz .gpu/data/
#   python3 -c "import gzip; open('.gpu/data/ch2_181x217x181_u8.raw','wb').write(gzip.open('.gpu/data/ch2.nii.gz').read()[352:])"
# On the GPU machine (device run, carry [".gpu"]):
#   bash benchmarks/gpu_session.sh [tests] [bench] [sweeps]   # all three by default; logs and JSON to $OUT
# (a device command may run 10 minutes: tests + bench fit one call, sweeps another)
# Back here: python3 benchmarks/report.py <files_at>/bench.json --docs docs
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-session-out}
mkdir -p "$out"
source "$root/.gpu/env.sh"
export SVDLR_COLIN27_RAW=$root/.gpu/data/ch2_181x217x181_u8.raw
tests=$root/.gpu/bin/svdlrCudaBackendGTest
bench=$root/.gpu/bin/svdlrBenchmark
cd "$root/benchmarks"
stages=${*:-tests bench sweeps}
want() { [[ " $stages " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if want tests; then
echo "== GPU tests"
"$tests" --gtest_brief=1 2>&1 | tail -4
"$root/.gpu/bin/svdlrEngineGTest" --gtest_brief=1 2>&1 | tail -3
echo "== compute-sanitizer"
subset='*SubspaceCheck*:*Subspace*:*Orthonormal*:*SolverChoice*:*ZeroAndConstant*:*Strided*:*InPlace*:*ManySmallBatches*:*OnDevice*'
compute-sanitizer --tool memcheck --leak-check full "$tests" --gtest_brief=1 --gtest_filter="$subset" 2>&1 |
  grep -E "PASSED|FAILED|SUMMARY"
compute-sanitizer --tool racecheck "$tests" --gtest_brief=1 --gtest_filter='*Subspace*:*Orthonormal*:*Tiled*' 2>&1 |
  grep -E "PASSED|FAILED|SUMMARY"
compute-sanitizer --tool synccheck "$tests" --gtest_brief=1 --gtest_filter='*Subspace*:*Orthonormal*:*Tiled*' 2>&1 |
  grep -E "PASSED|FAILED|SUMMARY"
fi
if want bench; then
echo "== end-to-end benchmark against the peers"
python3 run_benchmarks.py --binary "$bench" --colin27 "$root/.gpu/data/ch2.nii.gz" --out "$out" 2>&1 | tail -9
fi
if want sweeps; then
echo "== subspace solver sweep"
python3 subspace_sweep.py --binary "$bench" --colin27 "$root/.gpu/data/ch2.nii.gz" --out "$out" \
  --iterations 6,8,10,12,14 --oversampling 16,k 2>&1 | tail -62 > "$out/subspace-sweep.md"
echo "(written to subspace-sweep.md)"
echo "== staging lanes (W1, pageable)"
w1=/tmp/svdlr-sweep/W1.f32 # written by subspace_sweep.py
for lanes in 0 2 8; do
  echo "lanes ${lanes:-default}: $("$bench" --input "$w1" --count 256 --rows 256 --cols 256 --rank 32 --memory pageable \
    --repeats 9 --staging-lanes "$lanes" --trace on 2>&1 | tail -2 | tr '\n' ' ' | cut -c1-420)"
done
echo "== streams against batches"
python3 batch_sweep.py --binary "$bench" --colin27 "$SVDLR_COLIN27_RAW" 2>&1 | tee "$out/batch-sweep.md" | tail -14
echo "== reconstruction kernel sweep"
"$root/.gpu/bin/svdlrKernelBenchmark" 20 2>&1 | tee "$out/kernel-sweep.md" | tail -12
echo "== Nsight Compute on our kernels (W1)"
ncu --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis \
  -k 'regex:Orthonormalizing|TiledLowRank|ConvertAndFlag' --launch-count 3 \
  "$bench" --input "$w1" --count 256 --rows 256 --cols 256 --rank 32 --memory pinned --repeats 1 --warmups 0 \
  > "$out/ncu-W1.txt" 2>&1
grep -E "^  [a-zA-Z].*\(|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy" \
  "$out/ncu-W1.txt" | head -40
ncu --metrics gpu__time_duration.sum --csv "$bench" --input "$w1" --count 256 --rows 256 --cols 256 --rank 32 \
  --memory pinned --repeats 1 --warmups 0 > "$out/ncu-W1-kernels.csv" 2>/dev/null
echo "(per-kernel durations in ncu-W1-kernels.csv)"
fi
