#!/usr/bin/env bash
# Installs a wheel as a user would, in a fresh minimal Debian 12 root (debootstrap --variant=minbase: Python and venv,
# no compiler, no ITK, no OpenBLAS, no libdeflate), and checks it against this checkout's tool (docs/building.md,
# "The install test"):
#   - `pip install WHEEL` pulls numpy and nothing else;
#   - the import time in a fresh process, and that it maps no CUDA library;
#   - with the [bids,nipype] extras: svdlr-bids on a tiny BIDS dataset, denoise_nifti on a 96x96x60x65 phantom and
#     the Nipype interface each give the tool's output (SVDLowRankDenoiseSeries, same input, default options) to
#     1e-6 of its range, and denoise_nifti in a fresh process is timed against the tool.
# Prints each check's result and the time since the start; exits 1 if an output differs.
#
#   .ci/test-wheel-install.sh dist/svdlowrankreconstruction-*.whl
#
# Needs root (chroot, mount) and network to deb.debian.org once (the root is cached) and to PyPI on every run.
# Settings (environment):
#   SVDLR_REFERENCE_TOOL   the tool to compare with (default build/apps/SVDLowRankDenoiseSeries)
#   SVDLR_MINBASE_CACHE    where the root's tarball is kept (default ~/.cache/svdlr-minbase); every run unpacks a
#                          pristine copy of it
#   SVDLR_PHANTOM, SVDLR_PHANTOM_MASK  a 4D NIfTI series and its mask for the timed run (default: a phantom of
#                          that size generated in the root)
#   SVDLR_PHANTOM_ROUNDS   how many times the phantom is timed, tool then wheel (default 3)
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 WHEEL" >&2
  exit 2
fi
wheel=$(realpath "$1")
tool=$(realpath "${SVDLR_REFERENCE_TOOL:-$root_dir/build/apps/SVDLowRankDenoiseSeries}")
[ -x "$tool" ] || {
  echo "test-wheel-install.sh: no tool at $tool (build it: scripts/build.sh; or set SVDLR_REFERENCE_TOOL)" >&2
  exit 2
}
cache=${SVDLR_MINBASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svdlr-minbase}
tarball=$cache/bookworm-minbase-python3.tar
started=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
stamp() { printf '[%6s s] %s\n' "$(since "$started")" "$*"; }

if [ ! -f "$tarball" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
  mkdir -p "$cache"
  fresh=$(mktemp -d "$cache/root.XXXXXX")
  stamp "debootstrap --variant=minbase bookworm (once; cached in $tarball)"
  debootstrap --variant=minbase --include=python3,python3-venv bookworm "$fresh" http://deb.debian.org/debian \
    >"$cache/debootstrap.log"
  tar --numeric-owner -C "$fresh" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
  rm -rf "$fresh"
fi

chroot_dir=$(mktemp -d /var/tmp/svdlr-minbase.XXXXXX)
cleanup() {
  for m in dev/shm sys proc; do
    mountpoint -q "$chroot_dir/$m" && umount "$chroot_dir/$m"
  done
  rm -rf --one-file-system "$chroot_dir"
}
trap cleanup EXIT
tar --numeric-owner -C "$chroot_dir" -xf "$tarball"
mount -t proc proc "$chroot_dir/proc"
mount -t sysfs -o ro sysfs "$chroot_dir/sys" # the engine counts usable cores from the cgroup, as on the host
mount -t tmpfs tmpfs "$chroot_dir/dev/shm"
# pip in the root reaches PyPI as pip here does: the same configuration, CA bundle and resolver.
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$chroot_dir/etc/pip.conf"
mkdir -p "$chroot_dir/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$chroot_dir/etc/ssl/certs/"
cp -L /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
mkdir -p "$chroot_dir/test"
cp "$wheel" "$chroot_dir/test/"
cp "$root_dir/.ci/wheel-install-checks.py" "$root_dir/python/tests/bids_dataset.py" "$chroot_dir/test/"
stamp "fresh root in $chroot_dir: $(chroot "$chroot_dir" python3 --version)"

# A clean environment, as a user's shell in that root would have: only a proxy or index this host needs to reach PyPI
# is passed on.
pass_env=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_INDEX_URL PIP_EXTRA_INDEX_URL; do
  [ -n "${!v:-}" ] && pass_env+=("$v=${!v}")
done
in_root() { chroot "$chroot_dir" env -i -C /test PATH=/venv/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "${pass_env[@]}" "$@"; }
checks() { in_root python /test/wheel-install-checks.py "$@"; }
in_root python3 -m venv /venv
in_root python -m pip install -q --disable-pip-version-check --report /test/install.json "/test/$(basename "$wheel")"
checks installed /test/install.json svdlowrankreconstruction numpy
stamp "installed"
checks import-time 5

in_root python -m pip install -q --disable-pip-version-check "/test/$(basename "$wheel")[bids,nipype]"
stamp "extras [bids,nipype] installed"

failures=0
compare() { checks compare "$1" "$2" || failures=$((failures + 1)); }

# The BIDS App on a tiny dataset: each denoised run against the tool on that run's raw series.
checks dataset /test/bids
in_root svdlr-bids /test/bids /test/bids/derivatives/svdlr participant --quiet
stamp "svdlr-bids"
while read -r raw; do
  derived=${raw/\/test\/bids\//\/test\/bids\/derivatives\/svdlr\/}
  derived=${derived%_dwi.nii.gz}_desc-denoised_dwi.nii.gz
  "$tool" --quiet "$chroot_dir$raw" "$chroot_dir${raw%.nii.gz}_tool.nii" >/dev/null
  compare "$derived" "${raw%.nii.gz}_tool.nii"
done < <(cd "$chroot_dir" && find test/bids -path test/bids/derivatives -prune -o -name '*_dwi.nii.gz' -printf '/%p\n' | sort)

# The Nipype interface on one run.
checks nipype /test/bids/sub-02/dwi/sub-02_dwi.nii.gz /test/nipype_denoised.nii.gz
compare /test/nipype_denoised.nii.gz /test/bids/sub-02/dwi/sub-02_dwi_tool.nii
stamp "nipype"

# denoise_nifti on the 96x96x60x65 phantom in a fresh process, timed against the tool on the same file.
if [ -n "${SVDLR_PHANTOM:-}" ]; then
  cp "$SVDLR_PHANTOM" "$chroot_dir/test/phantom.nii"
  cp "$SVDLR_PHANTOM_MASK" "$chroot_dir/test/phantom_mask.nii"
else
  checks phantom /test/phantom.nii /test/phantom_mask.nii
fi
python_run='from itk_svdlowrankreconstruction._nifti_series import denoise_nifti
denoise_nifti("/test/phantom.nii", "/test/phantom_wheel.nii", mask_path="/test/phantom_mask.nii",
              noise_map_path="/test/phantom_wheel_sigma.nii")'
seconds() { # wall time of a command, in seconds
  local t0
  t0=$(date +%s.%N)
  "$@" >/dev/null
  since "$t0"
}
for round in $(seq "${SVDLR_PHANTOM_ROUNDS:-3}"); do
  tool_s=$(seconds "$tool" --quiet --overwrite "$chroot_dir/test/phantom.nii" "$chroot_dir/test/phantom_tool.nii" \
    --mask "$chroot_dir/test/phantom_mask.nii" --noise-map "$chroot_dir/test/phantom_tool_sigma.nii")
  wheel_s=$(seconds in_root python -c "$python_run")
  printf 'phantom round %d: tool %s s, wheel (fresh python, denoise_nifti) %s s\n' "$round" "$tool_s" "$wheel_s"
done
compare /test/phantom_wheel.nii /test/phantom_tool.nii
compare /test/phantom_wheel_sigma.nii /test/phantom_tool_sigma.nii
stamp "phantom"

# A long series through the wheel and the tool: Gram matrices of order 340, where the CPU denoiser calls the
# vendored OpenBLAS's dsyrk, dgemm and dsytrd (svdlrPatchLowRank.cxx), which the 65-volume runs above never reach.
checks long-series /test/long.nii
in_root python -c 'from itk_svdlowrankreconstruction._nifti_series import denoise_nifti
denoise_nifti("/test/long.nii", "/test/long_wheel.nii")'
"$tool" --quiet "$chroot_dir/test/long.nii" "$chroot_dir/test/long_tool.nii" >/dev/null
compare /test/long_wheel.nii /test/long_tool.nii
stamp "long series"

if [ "$failures" -gt 0 ]; then
  echo "test-wheel-install.sh: $failures outputs differ from the tool's" >&2
  exit 1
fi
stamp "all checks passed"
