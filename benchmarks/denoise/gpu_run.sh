#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# gpu_run.sh BUNDLE — the whole denoising comparison on the GPU machine, in one device call (about 5 minutes).
#
# BUNDLE is what gpu_bundle.sh made (carried in the call). For each size in SIZES it makes the phantom (bit-identical
# to this machine's), runs the peers with every core, scores them, and leaves in $OUT: SIZE_evaluation.md, the same
# as .json (with the runs' times and commands), and denoising-comparison.png for the first size.
# NO_MASK=1 runs every tool on the whole volume instead of the brain mask; REPEAT and PEER_REPEAT set the repeats.
# PEERS: the peers for every size (default dwidenoise and ours, centre and overlap). DIPY and patch-denoise run a
# serial Python loop on one core (about 70 s each for 96x96x60x65 on the development machine, several times that for
# 128x128x80x100), so they are left to the development machine unless PEERS names them: their scores do not depend
# on the machine, the phantom being bit-identical.
#   device run, carry [".gpu-denoise"], command: "bash .gpu-denoise/denoise/gpu_run.sh .gpu-denoise"
set -euo pipefail
bundle=$(cd "${1:?usage: $0 BUNDLE}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=${SVDLR_DENOISE_WORK:-/tmp/svdlr-denoise}
out=${OUT:-$work/out}
sizes=${SIZES:-"96x96x60x65 128x128x80x100"}
peers=${PEERS:-dwidenoise,ours-cpu,ours-cuda,ours-cpu-overlap,ours-cuda-overlap}
export PYTHONUNBUFFERED=1
mkdir -p "$work" "$out"

[ -d "$bundle/lib" ] || tar -xJf "$bundle/lib.tar.xz" -C "$bundle"
source "$bundle/env.sh"
if ! python3 -c 'import dipy, nibabel, patch_denoise' 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$work/site" "$bundle"/whl/*.whl
  export PYTHONPATH="$work/site${PYTHONPATH:+:$PYTHONPATH}"
fi
ours=()
[ -x "$bundle/bin/svdlrDenoiseBenchmark" ] && ours=(--ours "$bundle/bin/svdlrDenoiseBenchmark")
nvidia-smi -L 2>/dev/null || true
echo "cores: $(nproc); dwidenoise: $(command -v dwidenoise); ours: ${ours[1]:-none}"

first=1
for size in $sizes; do
  read -r nx ny nz nv <<<"${size//x/ }"
  data="$work/dwi$nx"
  results="$work/r$nx"
  python3 "$here/make_dwi_phantom.py" --colin27 "$bundle/colin27" --size "$nx" "$ny" "$nz" "$nv" --out "$data"
  python3 "$here/run_peers.py" --data "$data" --out "$results" --peers "$peers" --threads "$(nproc)" \
    --repeat "${REPEAT:-3}" --peer-repeat "${PEER_REPEAT:-3}" ${NO_MASK:+--no-mask} "${ours[@]}"
  python3 "$here/evaluate.py" --data "$data" --results "$results" --title "### ${nx}×${ny}×${nz}×${nv}, $(nproc) cores"
  cp "$results/evaluation.md" "$out/${size}_evaluation.md"
  cp "$results/evaluation.json" "$out/${size}_evaluation.json"
  if [ $first = 1 ] && [ -n "${ours[*]}" ]; then
    python3 "$here/figure.py" --data "$data" --results "$results" --png "$out/denoising-comparison.png" || true
  fi
  first=0
  rm -f "$data"_noisy.nii "$data"_clean.nii "$data"_noisy.f32 "$results"/*.nii  # disk: a few GB per size
done
