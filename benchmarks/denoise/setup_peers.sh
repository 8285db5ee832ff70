#!/usr/bin/env bash
# Copyright SVDLowRankReconstruction contributors. Licensed under the Apache License, Version 2.0.
# Installs what the denoising comparison needs on this (Debian 12) machine. Safe to run again.
#   - apt: mrtrix3 (dwidenoise), mricron-data (the Colin27 brain the phantom is built from)
#   - a virtual environment (default .venv-denoise at the repository root; SVDLR_DENOISE_VENV overrides) with
#     numpy, scipy, nibabel, dipy, patch-denoise, scikit-image and matplotlib, at pinned versions.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=${SVDLR_DENOISE_VENV:-$root/.venv-denoise}

need_apt=()
command -v dwidenoise >/dev/null || need_apt+=(mrtrix3)
[ -f /usr/share/mricron/templates/ch2.nii.gz ] || need_apt+=(mricron-data)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_apt[@]}"
fi

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# The versions the comparison was first run with; a change of peer version is a change of the benchmark.
# patch-denoise 2.x needs Python >= 3.12 (Debian 12 has 3.11): 1.4.4 runs on both this machine and the GPU one.
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q \
  numpy==2.2.6 scipy==1.15.3 nibabel==5.4.2 dipy==1.12.1 patch-denoise==1.4.4 scikit-image==0.25.2 matplotlib==3.10.3
echo "dwidenoise: $(dwidenoise -version 2>/dev/null | head -1)"
"$venv/bin/python" -c 'import dipy, patch_denoise, nibabel, skimage, numpy
print("venv: dipy", dipy.__version__, "patch-denoise", patch_denoise.__version__, "numpy", numpy.__version__)'
