#!/usr/bin/env bash
# Runs every fuzz target for SECONDS in all (split evenly), after building them with clang into
# ${SVDLR_FUZZ_BUILD_DIR:-build-fuzz} and fetching their seed corpora (fetch-seeds.sh). The corpora grow in
# BUILD/fuzz/corpus/TARGET across runs; logs go to BUILD/fuzz/logs, crashing inputs to BUILD/fuzz/artifacts.
# Replays the committed reproducers (regressions/) first. Prints each target's executions and coverage
# (libFuzzer's cov and ft) and exits 1 when a reproducer fails again or a target finds a new failure.
#   apps/fuzz/run-fuzzers.sh 90           # CI: 90 s in all
#   nice -n 10 apps/fuzz/run-fuzzers.sh 1800
set -euo pipefail
total=${1:?usage: run-fuzzers.sh SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${SVDLR_FUZZ_BUILD_DIR:-$root/build-fuzz}

if [ ! -f "$build/build.ninja" ]; then
  launcher=()
  command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CC=${SVDLR_FUZZ_CC:-clang} CXX=${SVDLR_FUZZ_CXX:-clang++} cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" -DSVDLR_USE_CUDA=OFF -DSVDLR_BUILD_FUZZERS=ON \
    -DSVDLR_BUILD_BENCHMARKS=OFF -DSVDLR_BUILD_EXAMPLES=OFF > /dev/null
fi
targets=()
all=(SVDLowRankPngStackFuzzer SVDLowRankDicomFileFuzzer SVDLowRankDicomFolderFuzzer SVDLowRankDicomHeaderFuzzer
     SVDLowRankNiftiFuzzer SVDLowRankNiftiGzipFuzzer SVDLowRankParallelGunzipFuzzer SVDLowRankMetaImageFuzzer
     SVDLowRankNrrdFuzzer)
for t in "${all[@]}"; do
  # The DICOM targets exist only when DCMTK was found.
  if ninja -C "$build" -t query "$t" > /dev/null 2>&1; then targets+=("$t"); fi
done
cmake --build "$build" -j "${SVDLR_JOBS:-2}" --target "${targets[@]}"

# The committed reproducers (regressions/) first: each must now pass through its target.
if ! (cd "$build" && ctest -R '\.Regressions$' --output-on-failure); then
  echo "run-fuzzers: a reproducer in apps/fuzz/regressions fails again" >&2
  exit 1
fi

seeds=$build/fuzz/seeds
[ -d "$seeds/SVDLowRankPngStackFuzzer" ] && [ -d "$seeds/SVDLowRankParallelGunzipFuzzer" ] || "$here/fetch-seeds.sh" "$seeds"
mkdir -p "$build/fuzz/logs"
each=$(( total / ${#targets[@]} ))
[ "$each" -ge 1 ] || each=1
failed=()
# Leaks inside third-party libraries found and checked (lsan.supp says which and why).
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
for t in "${targets[@]}"; do
  corpus=$build/fuzz/corpus/$t
  artifacts=$build/fuzz/artifacts/$t
  log=$build/fuzz/logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$seeds/$t"
  # -malloc_limit_mb above 4 GiB: DCMTK 3.6.7 allocates an element's value from its 32-bit length field before it
  # reads it (a 929-byte file asked for 3.4 GB; the tool then says the stream is invalid, exit 3, in 2.8 s and
  # 0.3 GB resident, docs/fuzzing.md). The memory is never touched; -rss_limit_mb still catches real growth.
  options=(-max_total_time="$each" -rss_limit_mb=2048 -malloc_limit_mb=4200 -timeout=25 -max_len=65536
           -print_final_stats=1 -artifact_prefix="$artifacts/")
  [[ $t == *Dicom* ]] && options+=(-dict="$here/dicom.dict")
  if ! "$build/apps/fuzz/$t" "${options[@]}" "$corpus" "$seeds/$t" > "$log" 2>&1; then
    failed+=("$t")
  fi
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || echo "?")
  echo "$t: ${each} s, ${runs} executions; ${done_line:-no DONE line: see $log}"
done
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do
    echo "run-fuzzers: $t FAILED; its log: $build/fuzz/logs/$t.log; inputs: $build/fuzz/artifacts/$t/" >&2
    grep -E 'ERROR|contract broken|SUMMARY' "$build/fuzz/logs/$t.log" | head -5 >&2
  done
  exit 1
fi
