#!/usr/bin/env bash
# Puts real DICOM MRI files for the tests into DEST (default: ./dicom-test-data), from the test data
# that pydicom and nibabel ship: the Debian packages python3-pydicom / python3-nibabel when installed,
# else their wheels from PyPI (pip download, nothing installed). Nothing large is committed.
#
#   pydicom/  MR_small*.dcm: one 64x64 MR slice in several transfer syntaxes (explicit and implicit VR,
#             big endian, RLE, JPEG-LS, JPEG 2000), MR_truncated.dcm, and CT5N/ (a 5-slice CT series)
#             localizer/ (the three images, axial, coronal and sagittal, of one tri-planar MR localizer) and
#             angio/ (seven MR angiography projections, each at its own angle) from dicomdirtests
#   nibabel/  0.dcm and 1.dcm (two 256x256 slices of one Siemens MR series), decimal_rescale.dcm
#             (MR with RescaleSlope 2, RescaleIntercept -4096), csa_slice_norm.dcm (an oblique slice)
#
# Without network and packages it prints why and exits 0, so that the tests skip; with
# SVDLR_REQUIRE_TEST_DATA=1 it exits 1 instead.
set -uo pipefail
dest=${1:-dicom-test-data}
mkdir -p "$dest/pydicom" "$dest/nibabel"

fail() {
  echo "fetch-test-data: $*" >&2
  if [ "${SVDLR_REQUIRE_TEST_DATA:-0}" = 1 ]; then exit 1; fi
  echo "fetch-test-data: the tests that need real DICOM files will skip" >&2
  exit 0
}

have() { [ -s "$dest/pydicom/MR_small.dcm" ] && [ -s "$dest/nibabel/series/1.dcm" ] && [ -s "$dest/pydicom/angio/4678" ]; }
if have; then
  echo "fetch-test-data: already in $dest"
  exit 0
fi

# Where the packages' data folders are: Debian's packages, else unpacked wheels.
pydicom_dir=/usr/lib/python3/dist-packages/pydicom/data/test_files
nibabel_dir=/usr/lib/python3/dist-packages/nibabel
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -s "$pydicom_dir/MR_small.dcm" ] || [ ! -s "$nibabel_dir/tests/data/0.dcm" ]; then
  python3 -m pip download --no-deps --disable-pip-version-check -q -d "$work" "pydicom==3.0.*" "nibabel==5.*" \
    || fail "pip could not download pydicom and nibabel (no network?)"
  (cd "$work" && for w in *.whl; do python3 -m zipfile -e "$w" unpacked/; done) || fail "cannot unpack the wheels"
  pydicom_dir=$work/unpacked/pydicom/data/test_files
  nibabel_dir=$work/unpacked/nibabel
fi

for f in MR_small.dcm MR_small_implicit.dcm MR_small_bigendian.dcm MR_small_RLE.dcm \
         MR_small_jpeg_ls_lossless.dcm MR_small_jp2klossless.dcm MR_truncated.dcm; do
  cp "$pydicom_dir/$f" "$dest/pydicom/" || fail "pydicom has no $f"
done
mkdir -p "$dest/pydicom/CT5N"
cp "$pydicom_dir"/dicomdirtests/98892001/CT5N/* "$dest/pydicom/CT5N/" || fail "pydicom has no CT5N series"
mkdir -p "$dest/pydicom/localizer" "$dest/pydicom/angio"
for f in 6273 6605 6935; do
  cp "$pydicom_dir/dicomdirtests/98892003/MR2/$f" "$dest/pydicom/localizer/" || fail "pydicom has no localizer image $f"
done
cp "$pydicom_dir"/dicomdirtests/98892003/MR700/* "$dest/pydicom/angio/" || fail "pydicom has no angio projections"
mkdir -p "$dest/nibabel/series"
cp "$nibabel_dir/tests/data/0.dcm" "$nibabel_dir/tests/data/1.dcm" "$dest/nibabel/series/" || fail "nibabel has no 0.dcm/1.dcm"
cp "$nibabel_dir/nicom/tests/data/decimal_rescale.dcm" "$nibabel_dir/nicom/tests/data/csa_slice_norm.dcm" \
  "$dest/nibabel/" || fail "nibabel has no decimal_rescale.dcm"
echo "fetch-test-data: real DICOM files in $dest"
