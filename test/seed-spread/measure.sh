#!/usr/bin/env bash
# The spread of a randomized test's checked quantities over many seeds, to set its tolerances from:
#
#   test/seed-spread/measure.sh TEST_BINARY GTEST_FILTER [SEEDS]
#   test/seed-spread/measure.sh build/test/itkSVDLowRankReconstructionImageFilterGTest \
#     'SVDLowRankReconstructionNoiseRank.RealBrainPlusNoiseIsDenoisedAndSigmaIsClose' 500
#
# One process runs the test SEEDS times (default 500) through --gtest_repeat, each repetition with a fresh seed,
# while SVDLR_SEED_SPREAD_LOG collects what the test records with RecordSpread (test/support/svdlrTestSeed.h).
# Prints, per test and quantity: the number of values, min, max, mean, standard deviation, and the seeds of the
# min and the max (SVDLR_TEST_SEED=<seed> replays one); then how many repetitions failed. The log is kept in
# SVDLR_SEED_SPREAD_LOG if set (appended to), else in a temporary file that is removed.
set -euo pipefail
binary=${1:?usage: measure.sh TEST_BINARY GTEST_FILTER [SEEDS]}
filter=${2:?usage: measure.sh TEST_BINARY GTEST_FILTER [SEEDS]}
seeds=${3:-500}
[[ -z ${SVDLR_TEST_SEED:-} ]] || { echo "error: unset SVDLR_TEST_SEED: it fixes every repetition's seed" >&2; exit 2; }

output=$(mktemp)
scratch=("$output")
log=${SVDLR_SEED_SPREAD_LOG:-}
if [[ -z $log ]]; then
  log=$(mktemp)
  scratch+=("$log")
fi
trap 'rm -f "${scratch[@]}"' EXIT

start=$(date +%s)
status=0
SVDLR_SEED_SPREAD_LOG=$log "$binary" --gtest_filter="$filter" --gtest_repeat="$seeds" --gtest_brief=1 \
  >"$output" 2>&1 || status=$?
failed=$(grep -c '^\[  FAILED  \] [A-Za-z_].*\..* (' "$output" || true)

awk '
  { key = $1 " " $2; v = $4 + 0
    if (!(key in n)) { order[++keys] = key; lo[key] = v; hi[key] = v; loSeed[key] = $3; hiSeed[key] = $3 }
    n[key]++; sum[key] += v; sq[key] += v * v
    if (v < lo[key]) { lo[key] = v; loSeed[key] = $3 }
    if (v > hi[key]) { hi[key] = v; hiSeed[key] = $3 } }
  END {
    printf "%-70s %-22s %6s %10s %10s %10s %9s  %s\n", "test", "quantity", "values", "min", "max", "mean", "sd", "seeds of min, max"
    for (i = 1; i <= keys; i++) {
      k = order[i]; split(k, part, " "); mean = sum[k] / n[k]; var = sq[k] / n[k] - mean * mean
      printf "%-70s %-22s %6d %10.5g %10.5g %10.5g %9.3g  %s %s\n", part[1], part[2], n[k], lo[k], hi[k], mean,
        sqrt(var > 0 ? var : 0), loSeed[k], hiSeed[k] } }' "$log"
printf '%s repetitions of %s: %s failed test runs, exit status %s, %s s, %s\n' "$seeds" "$filter" "$failed" "$status" \
  $(($(date +%s) - start)) "$(date -u +%F)"
if ((failed > 0)); then
  grep -B2 -A12 '^.*Failure$' "$output" | head -60
fi
