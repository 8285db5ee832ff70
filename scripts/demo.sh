#!/usr/bin/env bash
# The main job on a fresh machine: install, build, and reconstruct the Colin27 brain at rank 20.
# Writes demo-output/ch2_rank20.nii.gz and demo-output/ch2_rank20_figure.png and prints a summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
set -a; source "$root/test/test-data.env"; set +a # SVDLR_COLIN27_NII
mkdir -p "$root/demo-output"
"${SVDLR_BUILD_DIR:-$root/build}/apps/SVDLowRankReconstructImage" --overwrite --rank "${SVDLR_RANK:-20}" \
  "$SVDLR_COLIN27_NII" "$root/demo-output/ch2_rank${SVDLR_RANK:-20}.nii.gz" "$@"
