#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# device.sh STAGE... — the project's proof on the GPU machine, from the bundle benchmarks/gpu_bundle.sh made here
# (carried as .gpu; SVDLR_BUNDLE overrides). Stages, in the order named (benchmarks/README.md gives their times):
#   tests         every GoogleTest suite in the bundle (CUDA, engine, filters, tools): their summary lines
#   sanitizers    compute-sanitizer memcheck (with leak check), racecheck and synccheck on the CUDA suites' small tests
#   bench         the slice engine end to end against the peers (run_benchmarks.py; report.py reads bench.json)
#   denoise       the denoiser end to end against dwidenoise (denoise/end_to_end.py) at DENOISE_SIZES
#   peers         the denoising comparison with every peer and the figure (denoise/run_peers.py, evaluate.py, figure.py)
#   denoise-kernels  the CUDA denoiser against the CPU's output and cuSOLVER (svdlrDenoiseCudaBenchmark)
#   batch         the batch pipeline against a loop of processes, on the GPU and the CPU (with nsys when there)
#   denoise-batch the denoiser's batch mode: 20 DWI subjects on --devices 0 and 0,1, and dwidenoise on 3 of them
#   python        builds the Python extension there, times it against the C++ engine, runs its CUDA pytest files
#   bids-app      the BIDS App over 20 dwi subjects: 1 and 2 GPUs in one process and through Dask, against dwidenoise
#   gunzip        the .nii.gz read's decompression: libdeflate, ISA-L, ours and rapidgzip, and whether ours stays
#   magnitude     the automatic magnitude model's cost on the GPU, its plan, and under device memory limits
#   wheel         the CUDA wheel beside the machine's NVIDIA runtime wheels: a phantom against the bundle's tool
#   large         long series (LARGE_SIZES): ours on the GPU and the CPU, dwidenoise on a slab, ours dense
# Everything goes to a work folder; $OUT gets summary.md (every stage's lines and times), details.tar.gz (logs and
# results) and the denoising figure when made: a device call brings back only a few files.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle=$(cd "${SVDLR_BUNDLE:-$root/.gpu}" 2>/dev/null && pwd) ||
  { echo "no bundle: run benchmarks/gpu_bundle.sh here" >&2; exit 2; }
out=${OUT:-/tmp/svdlr-device/out}
work=${SVDLR_DEVICE_WORK:-/tmp/svdlr-device}
known=" tests sanitizers bench denoise peers denoise-kernels batch denoise-batch python bids-app gunzip magnitude large wheel "
[ $# -gt 0 ] || { echo "usage: $0 STAGE... (from:$known)" >&2; exit 2; }
for stage in "$@"; do [[ "$known" == *" $stage "* ]] || { echo "unknown stage '$stage' (from:$known)" >&2; exit 2; }; done
mkdir -p "$out" "$work"
rm -rf "$work/logs" # a warm machine keeps /tmp: this call's logs only
started=$(date +%s) # the denoise stage fits its rows into the call's 10 minutes from here
summary=$out/summary.md
note() { echo "$*" | tee -a "$summary"; }

# The bundle, unpacked outside the working tree (which a later call carries) and again when it changed: programs
# and libraries, the build paths the test suites name, the Python wheels.
unpacked=$work/bundle
stamp=$(cksum < "$bundle/binlib.tar.xz")
if [ "$(cat "$unpacked/stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$unpacked" "$work/site" && mkdir -p "$unpacked"
  tar -xJf "$bundle/binlib.tar.xz" -C "$unpacked" && echo "$stamp" > "$unpacked/stamp"
fi
ln -sfn "$bundle/data" "$unpacked/data"
source "$unpacked/env.sh"
export PATH=$PATH:/usr/local/cuda/bin # compute-sanitizer, ncu, nsys
bin=$unpacked/bin
while IFS=$'\t' read -r path target; do
  case "$target" in repo:*) target=$root/${target#repo:} ;; *) target=$unpacked/$target ;; esac
  [ -e "$path" ] || { mkdir -p "$(dirname "$path")" && ln -sf "$target" "$path"; } 2>/dev/null || true
done < "$bundle/paths.tsv"
# Installed again when the wheels changed: a call may carry fewer of them to stay within what a call carries.
wheels_stamp=$(ls "$bundle"/whl/*.whl 2>/dev/null | cksum)
if [ -n "$(ls "$bundle"/whl/*.whl 2>/dev/null)" ] && [ "$(cat "$work/site/.stamp" 2>/dev/null)" != "$wheels_stamp" ]; then
  rm -rf "$work/site"
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/site" "$bundle"/whl/*.whl &&
    echo "$wheels_stamp" > "$work/site/.stamp"
fi
export PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
colin=$bundle/data/ch2.nii.gz
colin_raw=$work/ch2_181x217x181_u8.raw # the bare voxels, for svdlrCudaBackendGTest (no ITK there)
[ -f "$colin_raw" ] || python3 -c "import gzip, sys; open(sys.argv[2], 'wb').write(gzip.open(sys.argv[1]).read()[352:])" \
  "$colin" "$colin_raw"
export SVDLR_COLIN27_RAW=$colin_raw
note "# device.sh $* — $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
  head -1), $(nproc) cores, bundle of commit $(cat "$bundle/commit" 2>/dev/null), $(date -u +%FT%TZ)"

# one NAME SECONDS COMMAND...: runs a command into NAME.log with a time limit; sets rc and took.
one() {
  local name=$1 limit=$2 t0; shift 2
  t0=$(date +%s)
  timeout "$limit" "$@" > "$dir/$name.log" 2>&1
  rc=$? took=$(( $(date +%s) - t0 ))
}

stage_tests() {
  local suites=${SUITES:-svdlrCudaBackendGTest svdlrLocalDenoiseCudaGTest itkLocalLowRankDenoisingImageFilterGTest
    itkSVDLowRankReconstructionImageFilterGTest svdlrEngineGTest svdlrLocalDenoiseGTest SVDLowRankDenoiseSeriesGTest
    SVDLowRankToolGTest SVDLowRankBatchGTest SVDLowRankBatchToolGTest SVDLowRankDenoiseBatchGTest
    SVDLowRankParallelGunzipGTest}
  for suite in $suites; do
    [ -x "$bin/$suite" ] || { note "$suite: not in the bundle"; continue; }
    one "$suite" "${SUITE_LIMIT:-240}" "$bin/$suite" --gtest_brief=1
    note "$suite (rc $rc, $took s): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$dir/$suite.log" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \] [A-Za-z]' "$dir/$suite.log" | head -10 | tee -a "$summary"
  done
}

stage_sanitizers() {
  # Small tests stand for the rest: the eigen-solver tests at n = 100..256 take minutes under memcheck.
  local engine='*SubspaceCheck*:*Subspace*:*Orthonormal*:*SolverChoice*:*ZeroAndConstant*:*Strided*:*InPlace*'
  engine+=':*ManySmallBatches*:*OnDevice*:*Noise*:*NaNSigmas*:*CachedResources*'
  # The resource cache's host tests ask for a device that does not exist on purpose: an API error by design.
  engine+=':-SVDLowRankDeviceResourceCache.*'
  local tiled='*Subspace*:*Orthonormal*:*Tiled*'
  local denoise='SmallEigenSolverCuda.MarchenkoPastur*:SmallEigenSolverCuda.Zero*:SmallEigenSolverCuda.MatricesTooLarge*'
  denoise+=':LocalDenoiseCuda.*'
  local small='LocalDenoiseCuda.MarchenkoPasturCentreVoxelEqualsCpuWhenVolumesAreTheSmallerSide'
  small+=':SmallEigenSolverCuda.ZeroAndRankOne*'
  while read -r name tool suite limit filter; do
    # SANITIZERS names a subset (e.g. "memcheck-denoise racecheck-denoise"), to fit a call.
    [ -z "${SANITIZERS:-}" ] || [[ " $SANITIZERS " == *" $name "* ]] || continue
    local extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    one "$name" "$limit" compute-sanitizer --tool "$tool" "${extra[@]}" "$bin/$suite" --gtest_brief=1 \
      --gtest_filter="$filter"
    note "$name (rc $rc, $took s): $(grep -E 'ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) ' \
      "$dir/$name.log" | tr '\n' ' ')"
  done <<EOF
memcheck-engine memcheck svdlrCudaBackendGTest 200 $engine
racecheck-engine racecheck svdlrCudaBackendGTest 300 $tiled
synccheck-engine synccheck svdlrCudaBackendGTest 50 $tiled
memcheck-denoise memcheck svdlrLocalDenoiseCudaGTest 150 $denoise
racecheck-denoise racecheck svdlrLocalDenoiseCudaGTest 50 $small
synccheck-denoise synccheck svdlrLocalDenoiseCudaGTest 40 $small
EOF
}

stage_bench() {
  (cd "$root/benchmarks" && python3 run_benchmarks.py --binary "$bin/svdlrBenchmark" --colin27 "$colin" --out "$dir") \
    > "$dir/bench.log" 2>&1
  tail -9 "$dir/bench.log" | tee -a "$summary"
}

# end_to_end SIZE NAME LINES ARGS...: denoise/end_to_end.py on the phantom of SIZE into NAME.{json,md,log}; its table
# (or the log's last LINES lines) into the summary.
end_to_end() {
  local size=$1 name=$2 lines=$3; shift 3
  # shellcheck disable=SC2086 # the size's four numbers
  python3 "$root/benchmarks/denoise/end_to_end.py" --size ${size//x/ } --work "$work/data/$size" \
    --colin27 "$bundle/data" --tool "$bin/SVDLowRankDenoiseSeries" "$@" --json "$dir/$name.json" \
    --markdown "$dir/$name.md" > "$dir/$name.log" 2>&1
  [ -f "$dir/$name.md" ] && tee -a "$summary" < "$dir/$name.md" || tail -"$lines" "$dir/$name.log" | tee -a "$summary"
}

# budget_share BUDGET RUNS: an equal share of what is left of BUDGET seconds (from the call's start) for RUNS runs, so
# that the last one is not starved.
budget_share() { echo $(( ($1 - ($(date +%s) - started)) / $2 )); }

stage_denoise() {
  # DENOISE_SIZES names one or more (96x96x60x65 and 112x112x72x91: a call each with every row), each given a share of
  # DENOISE_BUDGET. The 200-volume series: DENOISE_SIZES=176x176x120x200 DENOISE_DWIDENOISE_SLICES=8
  # DENOISE_ENGINE_REPEAT=1 DENOISE_ROWS=ours-gpu:all:whole,dwidenoise:all:whole (dwidenoise on a slab, extrapolated:
  # end_to_end.py says so); DENOISE_NO_ENGINE=1 leaves out the memory-to-memory engine rows (a minute at that size).
  local sizes=(${DENOISE_SIZES:-96x96x60x65}) i engine=$bin/svdlrDenoiseBenchmark
  [ -z "${DENOISE_NO_ENGINE:-}" ] || engine=""
  for i in "${!sizes[@]}"; do
    size=${sizes[$i]}
    end_to_end "$size" "$size" 5 --engine "$engine" --dwidenoise "$bin/dwidenoise" \
      --one-core-slices "${DENOISE_ONE_CORE_SLICES:-12}" --dwidenoise-slices "${DENOISE_DWIDENOISE_SLICES:-0}" \
      --engine-repeat "${DENOISE_ENGINE_REPEAT:-3}" ${DENOISE_ROWS:+--rows "$DENOISE_ROWS"} \
      "--ours-args=${DENOISE_OURS_ARGS:-}" "--dwidenoise-args=${DENOISE_DWIDENOISE_ARGS:-}" \
      --budget "$(budget_share "${DENOISE_BUDGET:-560}" $(( ${#sizes[@]} - i )))" \
      ${DENOISE_GPU_ENGINE_ONLY:+--no-cpu-engine}
    cp "$work/data/$size/end_to_end.log" "$dir/$size-commands.log" 2>/dev/null
    rm -f "$work/data/$size"/*_out.nii.gz "$work/data/$size"/*_sigma.nii.gz # disk: up to a GB per size
  done
}

stage_peers() {
  local first=1 d=$root/benchmarks/denoise
  for size in ${PEER_SIZES:-96x96x60x65}; do
    read -r nx ny nz nv <<< "${size//x/ }"
    local data=$work/data/peers$size results=$dir/r$size
    python3 "$d/make_dwi_phantom.py" --colin27 "$bundle/data" --size "$nx" "$ny" "$nz" "$nv" --out "$data" > /dev/null
    python3 "$d/run_peers.py" --data "$data" --out "$results" --threads "$(nproc)" --ours "$bin/svdlrDenoiseBenchmark" \
      --peers "${PEERS:-dwidenoise,ours-cpu,ours-cuda,ours-cpu-overlap,ours-cuda-overlap}" --repeat "${REPEAT:-3}" \
      --peer-repeat "${PEER_REPEAT:-1}" ${NO_MASK:+--no-mask} > "$dir/peers-$size.log" 2>&1
    python3 "$d/evaluate.py" --data "$data" --results "$results" --title "### $size, $(nproc) cores" \
      >> "$dir/peers-$size.log" 2>&1
    tee -a "$summary" < "$results/evaluation.md"
    [ $first = 1 ] && python3 "$d/figure.py" --data "$data" --results "$results" --png "$out/denoising-comparison.png" \
      >> "$dir/peers-$size.log" 2>&1
    first=0
    rm -f "$data"_*.nii "$data"_noisy.f32 "$results"/*.nii
  done
}

stage_denoise-kernels() {
  local data=$work/data/kernels size=(--size 96 96 60 65)
  mkdir -p "$data"
  python3 "$root/benchmarks/make_denoise_series.py" "$data/series.f32" --size 96 96 60 65 --clean "$data/clean.f32"
  one cpu 120 "$bin/svdlrDenoiseBenchmark" --input "$data/series.f32" "${size[@]}" --backend cpu --repeat 1 \
    --output "$data/cpu.f32" --rank-out "$data/cpu.u16"
  one gpu 120 "$bin/svdlrDenoiseBenchmark" --input "$data/series.f32" "${size[@]}" --backend cuda --repeat 7 \
    --output "$data/gpu.f32" --rank-out "$data/gpu.u16"
  one cuda-bench 150 "$bin/svdlrDenoiseCudaBenchmark" --input "$data/series.f32" "${size[@]}" --repeat 7 \
    --cusolver-repeat 2 --reference "$data/cpu.f32" --reference-rank "$data/cpu.u16"
  one cuda-bench-overlap 100 "$bin/svdlrDenoiseCudaBenchmark" --input "$data/series.f32" "${size[@]}" --repeat 3 \
    --cusolver-repeat 0 --aggregation overlap --shrinkage frobenius
  # The same as cuda-bench's first row within a 256 MiB device memory limit: many slabs, small batches.
  one cuda-bench-limit 100 "$bin/svdlrDenoiseCudaBenchmark" --input "$data/series.f32" "${size[@]}" --repeat 2 \
    --cusolver-repeat 0 --device-memory-limit 256M --reference "$data/cpu.f32" --reference-rank "$data/cpu.u16"
  # 200 volumes (7x7x7 patches, Gram matrices of 200 x 200: the many-volume case) on a small series, where
  # stage 1 keeps the packed lower triangle in shared memory.
  python3 "$root/benchmarks/make_denoise_series.py" "$data/series200.f32" --size 40 40 24 200
  one cuda-bench-200 120 "$bin/svdlrDenoiseCudaBenchmark" --input "$data/series200.f32" --size 40 40 24 200 \
    --repeat 2 --cusolver-repeat 0
  note "cpu (all cores): $(tail -1 "$dir/cpu.log" | cut -c1-300)"
  note "cuda (public API): $(tail -1 "$dir/gpu.log" | cut -c1-300)"
  python3 "$root/benchmarks/denoise_cuda_report.py" "$data" "$dir" 2>&1 | tee -a "$summary"
}

# Seconds and rates for the batch stage.
now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# batch_run NAME ARGS...: one run of the batch pipeline; notes its summary, sets vps (volumes per second).
batch_run() {
  local name=$1 t0 rc wall count; shift
  t0=$(now)
  "$bin/SVDLowRankReconstructImage" --rank "$RANK" --table "$dir/$name.tsv" -o "$b/out-$name" "$@" > "$dir/$name.log" 2>&1
  rc=$? wall=$(minus "$(now)" "$t0")
  count=$(awk -F'\t' '$3=="done"' "$dir/$name.tsv" 2>/dev/null | wc -l)
  vps=$(per "$count" "$wall")
  note "-- $name (exit $rc): $count volumes in $wall s = $vps volumes/s (process wall, start-up included)"
  grep -E '^(volumes|backend|time|steps|solvers|note):' "$dir/$name.log" | sed 's/^/   /' | tee -a "$summary"
}

# The batch pipeline's proof on one GPU (docs/batch.md): N Colin27-sized volumes with 1-10 % noise as .nii.gz (one
# broken) and .nii; the pipeline on the GPU; SAMPLE single-volume processes as a user's shell loop runs them; the
# pipeline on the CPU (N_CPU volumes); the .nii run under Nsight Systems when nsys is there. Target: >= 10x the loop.
stage_batch() {
  N=${N:-200} SAMPLE=${SAMPLE:-20} N_CPU=${N_CPU:-40} RANK=${RANK:-20} b=$work/batch
  local gpu=(--backend cuda --devices 0) t0 w name ext files
  rm -rf "$b" && mkdir -p "$b/loop"
  note "N=$N SAMPLE=$SAMPLE N_CPU=$N_CPU RANK=$RANK; host $(free -g | awk '/Mem:/{print $2}') GiB"
  t0=$(now)
  python3 "$root/benchmarks/make_batch_volumes.py" "$colin" "$b/gz" "$N" --gzip 6 --broken 1 > /dev/null
  python3 "$root/benchmarks/make_batch_volumes.py" "$colin" "$b/nii" "$N" --gzip 0 > /dev/null
  note "generated in $(minus "$(now)" "$t0") s; $(du -sh "$b/gz" | cut -f1) .nii.gz, $(du -sh "$b/nii" | cut -f1) .nii"
  batch_run gpu-gz --glob '*.nii.gz' "${gpu[@]}" "$b/gz"; local gpu_gz=$vps
  batch_run gpu-gz-fast --glob '*.nii.gz' "${gpu[@]}" --compression-level 1 "$b/gz"; local gpu_gz_fast=$vps
  batch_run gpu-nii --glob '*.nii' "${gpu[@]}" "$b/nii"; local gpu_nii=$vps
  local -A loop
  for ext in gz nii; do
    files=$(ls "$b/$ext"/vol-*."${ext/gz/nii.gz}" | head -n "$SAMPLE")
    mkdir -p "$b/loop/$ext"
    t0=$(now)
    for f in $files; do
      "$bin/SVDLowRankReconstructImage" --rank "$RANK" "${gpu[0]}" "${gpu[1]}" --no-figure "$f" \
        "$b/loop/$ext/$(basename "$f")" > "$dir/loop-$ext.log" 2>&1 || note "   failed: $f"
    done
    w=$(minus "$(now)" "$t0")
    loop[$ext]=$(per "$SAMPLE" "$w")
    note "-- loop .$ext: $SAMPLE processes in $w s = ${loop[$ext]} volumes/s ($(per "$w" "$SAMPLE") s per volume)"
  done
  # shellcheck disable=SC2046 # the generated names have no spaces
  batch_run cpu-gz --batch --backend cpu $(ls "$b/gz"/vol-*.nii.gz | head -n "$N_CPU"); local cpu_gz=$vps
  # shellcheck disable=SC2046
  batch_run cpu-nii --batch --backend cpu $(ls "$b/nii"/vol-*.nii | head -n "$N_CPU"); local cpu_nii=$vps
  local nsys
  nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)
  if [ -n "$nsys" ]; then
    t0=$(now)
    timeout 120 "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true -o "$b/trace" \
      "$bin/SVDLowRankReconstructImage" --rank "$RANK" --glob '*.nii' "${gpu[@]}" -o "$b/out-trace" "$b/nii" \
      > "$dir/trace.log" 2>&1
    w=$(minus "$(now)" "$t0")
    "$nsys" stats --report cuda_gpu_trace --format csv --force-export=true --output "$b/trace" "$b/trace.nsys-rep" \
      > /dev/null 2>&1
    local tool_wall
    tool_wall=$(grep -oE '^time: +[0-9.]+' "$dir/trace.log" | grep -oE '[0-9.]+$')
    python3 "$root/benchmarks/batch_gpu_trace.py" "$b/trace_cuda_gpu_trace.csv" "${tool_wall:-$w}" | tee -a "$summary"
  else
    note "no nsys: the solvers' busy share above is the engine's own (each GPU worker's time in svdlr::Reconstruct)"
  fi
  note "volumes/s: batch GPU .nii.gz $gpu_gz ($(per "$gpu_gz" "${loop[gz]}")x the loop, target 10x), .nii.gz at" \
    "gzip 1 $gpu_gz_fast, .nii $gpu_nii ($(per "$gpu_nii" "${loop[nii]}")x the loop); loop .nii.gz ${loop[gz]}," \
    ".nii ${loop[nii]}; batch CPU .nii.gz $cpu_gz, .nii $cpu_nii"
}

# The denoiser's batch mode (docs/batch.md): SUBJECTS (20) DWI series of DENOISE_BATCH_SIZE (96x96x60x65)
# as int16 .nii.gz, SVDLowRankDenoiseSeries --batch with --devices 0 and, where there are two GPUs, 0,1; dwidenoise
# -nthreads 16 on DWIDENOISE_SUBJECTS (3) of them, its time per subject scaled to all. Targets: two GPUs >= 1.8x
# one; one GPU >= 8x dwidenoise on 16 cores over the same subjects, end to end.
stage_denoise-batch() {
  local size=${DENOISE_BATCH_SIZE:-96x96x60x65} devices=(0) b=$work/denoise-batch
  [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ] && devices+=(0,1)
  rm -rf "$b"
  # shellcheck disable=SC2086 # the size's four numbers
  python3 "$root/benchmarks/denoise_batch.py" --tool "$bin/SVDLowRankDenoiseSeries" --work "$b" \
    --size ${size//x/ } --subjects "${SUBJECTS:-20}" --devices "${devices[@]}" --dwidenoise "$bin/dwidenoise" \
    --dwidenoise-subjects "${DWIDENOISE_SUBJECTS:-3}" --dwidenoise-threads 16 --json "$dir/denoise-batch.json" \
    2>&1 | tee "$dir/denoise-batch.log" | tee -a "$summary"
  cp "$b"/*.log "$b"/*.tsv "$dir/" 2>/dev/null
  rm -rf "$b" # disk: the series and their outputs
}

# python_package: builds the Python extension here (CUDA, sm_90) into $pkg, the package folder for PYTHONPATH.
pkg=$work/python-pkg
python_package() {
  local build=$work/python-build lapack=$work/python-lapack t0
  # The machine has cmake, nvcc and g++ but no LAPACK link library: FindLAPACK gets the bundle's OpenBLAS.
  mkdir -p "$lapack" && ln -sf "$unpacked/lib/libopenblas.so.0" "$lapack/libopenblas.so"
  t0=$(date +%s)
  cmake -S "$root/python" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSVDLR_USE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPython_EXECUTABLE="$(command -v python3)" -DBLA_VENDOR=OpenBLAS \
    -DCMAKE_LIBRARY_PATH="$lapack" -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$unpacked/lib" \
    -DSVDLR_LIBDEFLATE_INCLUDE_DIR="$unpacked/include" -DSVDLR_LIBDEFLATE_LIBRARY="$unpacked/lib/libdeflate.so.0" \
    -DSVDLR_TBB_INCLUDE_DIR="$unpacked/include" -DSVDLR_TBB_LIBRARY="$unpacked/lib/libtbb.so.12" \
    -DSVDLR_NIFTI_INCLUDE_DIR="$unpacked/include/nifti" -DSVDLR_NIFTI2_SHARED_LIBRARY="$unpacked/lib/libnifti2.so.2" \
    -DSVDLR_ZNZ_SHARED_LIBRARY="$unpacked/lib/libznz.so.3" \
    -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath-link,$unpacked/lib" > "$dir/configure.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" > "$dir/build.log" 2>&1 ||
    { note "the extension did not build: $(grep -m3 -i 'error' "$dir/configure.log" "$dir/build.log")"; return 1; }
  note "extension built in $(( $(date +%s) - t0 )) s"
  rm -rf "$pkg" && mkdir -p "$pkg" && cp -r "$root/python/itk_svdlowrankreconstruction" "$pkg/"
  cp "$build"/_engine*.so "$build"/libsvdlr_cuda*.so "$pkg/itk_svdlowrankreconstruction/" # the backend beside it
}

stage_python() {
  python_package || return
  (cd "$root/benchmarks" && PYTHONPATH=$pkg:$PYTHONPATH python3 python_overhead.py --binary "$bin/svdlrBenchmark" \
    --colin27 "$colin") 2>&1 | tee "$dir/overhead.log" | tail -6 | tee -a "$summary"
  # The pytest files with CUDA cases, against this extension: CI has no GPU, so this is where they run.
  (cd "$root/python/tests" && PYTHONPATH=$pkg:$PYTHONPATH python3 -m pytest -q -p no:cacheprovider -rs \
    test_gpu_arrays.py test_cuda_backend_loading.py test_denoise_batch.py test_engine_binding.py test_denoise.py) \
    > "$dir/pytest.log" 2>&1
  note "pytest (CUDA cases, rc $?): $(tail -1 "$dir/pytest.log")"
}

# The BIDS App (python/itk_svdlowrankreconstruction/bids) on SUBJECTS raw dwi runs of SIZE: one GPU and --devices 0,1 in
# one process, 1 and 2 Dask workers (one per GPU), and dwidenoise on every core (benchmarks/bids_app_session.py).
stage_bids-app() {
  python_package || return
  local size=${SIZE:-96x96x60x65} b=$work/bids-app nx ny nz nv
  read -r nx ny nz nv <<< "${size//x/ }"
  mkdir -p "$b"
  [ -f "$b/phantom$size.bval" ] || python3 "$root/benchmarks/denoise/make_dwi_phantom.py" --colin27 "$bundle/data" \
    --size "$nx" "$ny" "$nz" "$nv" --out "$b/phantom$size" > "$dir/phantom.log" 2>&1
  PYTHONPATH=$pkg:$PYTHONPATH timeout $(( ${BIDS_BUDGET:-540} - ($(date +%s) - started) )) \
    python3 "$root/benchmarks/bids_app_session.py" --phantom "$b/phantom$size" --subjects "${SUBJECTS:-20}" \
    --work "$b" --dwidenoise "$bin/dwidenoise" --dwidenoise-subjects "${DWIDENOISE_SUBJECTS:-2}" 2>&1 |
    tee "$dir/session.log" | grep -E '^(#|-|  )' | tee -a "$summary"
}

# The .nii.gz read's decompression, and whether our decoder (apps/io/SVDLowRankParallelGunzip.h) stays: on the denoise
# phantom (make_denoise_series.py) as scanners, dcm2niix and `gzip -6` write it (one gzip member at zlib level 6) and
# on the tool's own output of it (libdeflate members of 1 MiB), libdeflate and ISA-L on one thread, ours and
# rapidgzip on 1..16 threads, and the tool's read (its steps: line, best of two runs) of each file.
# svdlrGunzipBenchmark checks every result against libdeflate's, byte for byte, gunzip_compare.py rapidgzip's by
# size and CRC-32, and prints the verdict. GUNZIP_CASES adds sizes and int16 (e.g. "96x96x60x65:int16").
stage_gunzip() {
  local data=$work/data/gunzip case size kind name file run
  mkdir -p "$data"
  for case in ${GUNZIP_CASES:-96x96x60x65:float32}; do
    size=${case%%:*} kind=${case##*:} name=phantom${size}_$kind
    # shellcheck disable=SC2046,SC2086 # the size's four numbers; --int16 or nothing
    [ -f "$data/$name.nii.gz" ] || python3 "$root/benchmarks/make_denoise_series.py" "$data/$name.nii.gz" \
      --size ${size//x/ } $([ "$kind" = int16 ] && echo --int16) > "$dir/make-$name.log" 2>&1
    # The tool reads the one-member file and writes its own (the denoised series, our members); then reads that.
    for file in "$name" "${name}_own"; do
      for run in 1 2; do
        one "tool-$file-$run" 120 "$bin/SVDLowRankDenoiseSeries" "$data/$file.nii.gz" "$data/${file}_out.nii.gz" \
          --overwrite
      done
      [ "$file" = "$name" ] && mv "$data/${file}_out.nii.gz" "$data/${name}_own.nii.gz"
      one "$file" 200 "$bin/svdlrGunzipBenchmark" "$data/$file.nii.gz" --threads 1,2,4,8,16 --repeat 5
      note "$(cat "$dir/$file.log") (rc $rc)"
      one "$file-compare" 200 python3 "$root/benchmarks/gunzip_compare.py" "$data/$file.nii.gz" \
        --benchmark "$dir/$file.log" --tool-log "$dir/tool-$file-1.log" "$dir/tool-$file-2.log"
      note "$(cat "$dir/$file-compare.log") (rc $rc)"
      note "tool: $(grep -h 'steps:' "$dir/tool-$file-1.log" "$dir/tool-$file-2.log" | tr -s ' ' | tr '\n' ' ')"
    done
  done
}

stage_magnitude() {
  # Synthetic Rician series (make_denoise_series.py --magnitude: seconds, where the large stage's phantom on real
  # anatomy takes minutes), memory to memory: the engine with the tools' automatic magnitude model (its steps'
  # times in magnitude_steps_s) and without it, then the CUDA trace of the run without it.
  local sizes=(${MAGNITUDE_SIZES:-96x96x60x65 64x64x40x500 176x176x120x200}) data=$work/data/magnitude size
  mkdir -p "$data"
  for size in "${sizes[@]}"; do
    local dims=(${size//x/ })
    python3 "$root/benchmarks/make_denoise_series.py" "$data/$size.f32" --size "${dims[@]}" --magnitude
    for run in model plain; do
      one "$size-$run" 300 "$bin/svdlrDenoiseBenchmark" --input "$data/$size.f32" --size "${dims[@]}" --backend cuda \
        --repeat "${MAGNITUDE_REPEAT:-2}" $([ "$run" = model ] && echo --magnitude-model)
      note "$size $run (rc $rc, $took s): $(tail -1 "$dir/$size-$run.log" | cut -c1-700)"
    done
    if [ "${MAGNITUDE_TRACE:-1}" = 1 ]; then
      one "$size-trace" 300 "$bin/svdlrDenoiseCudaBenchmark" --input "$data/$size.f32" --size "${dims[@]}" --repeat 1 \
        --cusolver-repeat 0
      note "$size trace (rc $rc, $took s): $(head -1 "$dir/$size-trace.log" | cut -c1-900)"
    fi
    # MAGNITUDE_LIMITS="8G 200G": the run without the model under each device memory limit (the plan, the time).
    for limit in ${MAGNITUDE_LIMITS:-}; do
      one "$size-limit-$limit" 300 "$bin/svdlrDenoiseCudaBenchmark" --input "$data/$size.f32" --size "${dims[@]}" \
        --repeat 2 --cusolver-repeat 0 --device-memory-limit "$limit"
      note "$size limit $limit (rc $rc, $took s): $(head -1 "$dir/$size-limit-$limit.log" | cut -c1-900)"
    done
    rm -f "$data/$size.f32"
  done
}

stage_wheel() {
  # What pip gives a user: our wheel and NVIDIA's cu13 runtime wheels in one site-packages, so that the CUDA
  # backend's RPATH ($ORIGIN/../nvidia/cu13/lib) finds them. The machine's NVIDIA wheels are linked in beside ours.
  local wheel site=$work/wheel-site data=$work/data/wheel nvidia
  wheel=$(ls "$bundle"/whl-cuda/*.whl 2>/dev/null | head -1)
  [ -n "$wheel" ] || { note "no CUDA wheel in the bundle (whl-cuda/)"; return; }
  nvidia=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
  note "wheel: $(basename "$wheel"); the machine's NVIDIA wheels: ${nvidia:-none} ($(ls "$nvidia/cu13/lib" 2>/dev/null |
    grep -E 'cusolver|cublas|cudart' | tr '\n' ' '))"
  rm -rf "$site" && mkdir -p "$data"
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$wheel" > "$dir/pip.log" 2>&1 ||
    { note "pip install failed: $(tail -3 "$dir/pip.log")"; return; }
  [ -n "$nvidia" ] && ln -sfn "$nvidia" "$site/nvidia"
  PYTHONPATH=$root/python/tests:$PYTHONPATH python3 "$root/.ci/wheel-install-checks.py" phantom "$data/phantom.nii" "$data/mask.nii" > "$dir/phantom.log" 2>&1
  # No toolkit and no bundle libraries on the path: what the wheel needs, it must bring or find through pip's wheels.
  local python
  python=$(command -v python3) # the machine's Python (NumPy, NVIDIA's wheels): /usr/bin's has neither
  one wheel-run 300 env -u LD_LIBRARY_PATH PATH="$(dirname "$python"):/usr/bin:/bin" PYTHONPATH="$site:$work/site" \
    "$python" "$root/benchmarks/wheel_on_gpu.py" "$data/phantom.nii" "$data/mask.nii" "$data/wheel"
  note "$(cat "$dir/wheel-run.log") (rc $rc)"
  one tool-run 120 "$bin/SVDLowRankDenoiseSeries" --overwrite "$data/phantom.nii" "$data/tool.nii" \
    --mask "$data/mask.nii" --noise-map "$data/tool_sigma.nii"
  note "bundle tool, GPU (rc $rc, $took s): $(grep -h 'steps:' "$dir/tool-run.log" | tr -s ' ')"
  for pair in "wheel_gpu tool" "wheel_gpu_sigma tool_sigma" "wheel_cpu tool"; do
    read -r got want <<< "$pair"
    note "compare $got with $want: $(PYTHONPATH=$work/site python3 "$root/.ci/wheel-install-checks.py" compare \
      "$data/$got.nii" "$data/$want.nii" 2>&1 | tail -1)"
  done
  rm -rf "$data"
}

stage_large() {
  # The long series that studies acquire (30-300 volumes for diffusion, 300-1,000 for fMRI): each size a share of
  # LARGE_BUDGET. Past 100 volumes dwidenoise runs on LARGE_DWIDENOISE_SLICES central slices and is extrapolated
  # (end_to_end.py); LARGE_ROWS and LARGE_DENSE=0 trim a call that would not fit; LARGE_ROUNDS runs the rows again on
  # the same phantom, interleaved, for a median.
  local sizes=(${LARGE_SIZES:-64x64x40x500 176x176x120x200 96x96x60x1000}) i share round name rounds=${LARGE_ROUNDS:-1}
  local rows=${LARGE_ROWS:-ours-gpu:all:whole,ours-gpu:all:mask,ours-cpu:all:whole,ours-cpu:all:mask,dwidenoise:all:whole,dwidenoise:all:mask}
  for i in "${!sizes[@]}"; do
    size=${sizes[$i]}
    share=$(budget_share "${LARGE_BUDGET:-560}" $(( ${#sizes[@]} - i )))
    for round in $(seq 1 "$rounds"); do
      name=$size$([ "$rounds" -gt 1 ] && echo "-round$round")
      [ "$rounds" -gt 1 ] && note "round $round of $rounds:"
      end_to_end "$size" "$name" 5 --engine "" --dwidenoise "$bin/dwidenoise" --rows "$rows" \
        --dwidenoise-slices "$([ "${size##*x}" -gt 100 ] && echo "${LARGE_DWIDENOISE_SLICES:-12}" || echo 0)" \
        --budget "$(( share * 3 / 4 / rounds ))"
    done
    if [ "${LARGE_DENSE:-1}" = 1 ]; then # the dense run the default's PSNR is held to (within 0.1 dB)
      note "dense (--stride 1):"
      end_to_end "$size" "$size-dense" 3 --engine "" --rows ours-gpu:all:whole --ours-args="--stride 1" \
        --budget "$(( share / 4 ))"
    fi
    rm -rf "$work/data/$size" # disk: up to several GB per size
  done
}

for stage in "$@"; do
  dir=$work/logs/$stage
  mkdir -p "$dir"
  note ""
  note "## $stage"
  t0=$(date +%s)
  "stage_$stage"
  note "($stage took $(( $(date +%s) - t0 )) s)"
done
tar -czf "$out/details.tar.gz" -C "$work/logs" . 2>/dev/null
echo "summary: $summary; logs and results: $out/details.tar.gz"
