#!/usr/bin/env bash
# Seed corpora for the fuzz targets, from real files, into DEST (one folder per target). Nothing is committed:
#   DICOM: pydicom's and nibabel's test files (apps/test/fetch-test-data.sh: Debian's python3-pydicom and
#          python3-nibabel when installed, else their wheels from PyPI): MR slices in six transfer syntaxes
#          (explicit/implicit VR, big endian, RLE, JPEG-LS, JPEG 2000), a truncated one, a 5-slice CT series;
#   PNG:   the small grey slices of ITK's examples (Debian: insighttoolkit5-examples), and two 16-bit slices
#          written here (the examples have none);
#   NIfTI: small files written here, plain and, for the .nii.gz target, with its control bytes.
# Folder targets get the files of one series (or same-size PNG slices) joined with the separator the
# targets cut at (svdlrFuzzFiles.h).
set -euo pipefail
dest=${1:?usage: fetch-seeds.sh DEST}
here=$(cd "$(dirname "$0")" && pwd)
separator=$'\n--svdlr-next-file--\n'
itk_data=/usr/share/doc/insighttoolkit5-examples/examples/Data

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
file_seeds=$dest/SVDLowRankDicomFileFuzzer
folder_seeds=$dest/SVDLowRankDicomFolderFuzzer
header_seeds=$dest/SVDLowRankDicomHeaderFuzzer
png_seeds=$dest/SVDLowRankPngStackFuzzer
nifti_seeds=$dest/SVDLowRankNiftiFuzzer
nifti_gz_seeds=$dest/SVDLowRankNiftiGzipFuzzer
gunzip_seeds=$dest/SVDLowRankParallelGunzipFuzzer
mkdir -p "$file_seeds" "$folder_seeds" "$header_seeds" "$png_seeds" "$nifti_seeds" "$nifti_gz_seeds" "$gunzip_seeds"

# Joins files with the separator into one seed: join OUT FILE...
join() {
  local out=$1 first=1
  shift
  : > "$out"
  for f in "$@"; do
    [ $first = 1 ] || printf '%s' "$separator" >> "$out"
    cat "$f" >> "$out"
    first=0
  done
}

dicom=$dest/dicom-data
# The tests' copy, when a build already fetched it, saves a download.
tests_copy=${SVDLR_BUILD_DIR:-$here/../../build}/test-data/dicom
if [ ! -s "$dicom/pydicom/MR_small.dcm" ] && [ -s "$tests_copy/pydicom/MR_small.dcm" ]; then
  mkdir -p "$dicom" && cp -r "$tests_copy/." "$dicom/"
fi
SVDLR_REQUIRE_TEST_DATA=${SVDLR_REQUIRE_TEST_DATA:-0} "$here/../test/fetch-test-data.sh" "$dicom" >&2
if [ -s "$dicom/pydicom/MR_small.dcm" ]; then
  # Single files under 50 KB (the two 220 KB nibabel slices would slow every execution down).
  find "$dicom" -type f -size -50k | while read -r f; do
    name=$(echo "${f#"$dicom"/}" | tr '/' '_')
    cp "$f" "$file_seeds/$name"
    cp "$f" "$header_seeds/$name"
    join "$folder_seeds/$name" "$f"
  done
  mapfile -t ct < <(find "$dicom/pydicom/CT5N" -type f | sort)
  join "$folder_seeds/CT5N-series" "${ct[@]}"
  join "$folder_seeds/CT5N-three" "${ct[@]:0:3}"
  join "$folder_seeds/MR-and-CT" "$dicom/pydicom/MR_small.dcm" "${ct[0]}"
else
  echo "fetch-seeds: no DICOM test files (no network?); the DICOM targets start from an empty corpus" >&2
fi

if [ -d "$itk_data" ]; then
  for f in "$itk_data"/*.png; do
    [ "$(stat -c %s "$f")" -lt 30000 ] && cp "$f" "$png_seeds/$(basename "$f")"
  done
  if [ -s "$itk_data/FFTCosinus.png" ] && [ -s "$itk_data/FFTcenteredDC.png" ]; then
    join "$png_seeds/two-slices" "$itk_data/FFTCosinus.png" "$itk_data/FFTcenteredDC.png"
  fi
else
  echo "fetch-seeds: no ITK example images (Debian: insighttoolkit5-examples)" >&2
fi
# Two 16-bit grey 8x6 slices, PNG written by hand (signature, IHDR, IDAT, IEND): the 16-bit path of the reader.
python3 - "$png_seeds" "$separator" <<'PY'
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
def png16(width, height, value):
    rows = b"".join(b"\0" + b"".join(struct.pack(">H", (value * (x + 1) * (y + 2)) % 65536) for x in range(width))
                    for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
folder, separator = sys.argv[1], sys.argv[2].encode()
a, b = png16(8, 6, 1000), png16(8, 6, 1700)
open(folder + "/grey16.png", "wb").write(a)
open(folder + "/grey16-two-slices", "wb").write(a + separator + b)
PY
# NIfTI files written here: small sound ones of each kind the readers branch on (NIfTI-1 and -2, both byte orders,
# integers scaled, float64, 4D) for the .nii target, and the same with the .nii.gz target's two control bytes
# (SVDLowRankNiftiGzipFuzzer.cxx: members, a changed CRC or ISIZE, a cut, a bomb, trailing bytes, stored blocks).
python3 - "$nifti_seeds" "$nifti_gz_seeds" <<'PY'
import struct, sys
def nifti1(dims, datatype, bitpix, voxels, slope=0.0, order="<"):
    h = bytearray(352)
    struct.pack_into(order + "i", h, 0, 348)
    struct.pack_into(order + "8h", h, 40, len(dims), *dims, *([1] * (7 - len(dims))))
    struct.pack_into(order + "hh", h, 70, datatype, bitpix)
    struct.pack_into(order + "8f", h, 76, *([1.0] * 8))
    struct.pack_into(order + "fff", h, 108, 352.0, slope, 0.0)
    h[344:348] = b"n+1\0"
    return bytes(h) + voxels
def nifti2(dims, voxels):
    h = bytearray(544)
    struct.pack_into("<i", h, 0, 540)
    h[4:12] = b"n+2\0\r\n\x1a\n"
    struct.pack_into("<hh", h, 12, 16, 32)
    struct.pack_into("<8q", h, 16, len(dims), *dims, *([1] * (7 - len(dims))))
    struct.pack_into("<8d", h, 80, *([1.0] * 8))
    struct.pack_into("<q", h, 168, 544)
    return bytes(h) + voxels
floats = lambda n, order="<": struct.pack(order + "%df" % n, *[100.0 + (i * 37) % 17 for i in range(n)])
files = {
    "float32": nifti1([4, 4, 2], 16, 32, floats(32)),
    "float32-big-endian": nifti1([4, 4, 2], 16, 32, floats(32, ">"), order=">"),
    "int16-scaled": nifti1([4, 4, 2], 4, 16, struct.pack("<32h", *range(32)), slope=2.5),
    "uint8": nifti1([4, 4, 2], 2, 8, bytes(range(32))),
    "float64-4d": nifti1([2, 2, 2, 3], 64, 64, struct.pack("<24d", *[1.5 * i for i in range(24)])),
    "nifti2": nifti2([4, 4, 2], floats(32)),
}
plain, gz = sys.argv[1], sys.argv[2]
for name, data in files.items():
    open(f"{plain}/{name}.nii", "wb").write(data)
controls = {"one-member": (0, 0), "three-members": (2, 90), "crc": (4, 0), "isize": (8, 3), "cut": (16, 20),
            "bomb": (32, 20), "trailing": (64, 7), "stored-crc": (128 | 4, 0), "stored-two-members": (128 | 1, 128)}
for name, (control, amount) in controls.items():
    for kind in ("float32", "int16-scaled", "float64-4d", "nifti2"):
        open(f"{gz}/{kind}-{name}", "wb").write(bytes([control, amount]) + files[kind])
PY
# The parallel decoder's target: its four control bytes (SVDLowRankParallelGunzipFuzzer.cxx) and payloads of the kinds
# a series holds (floats, text, noise), compressed there with each block type, and one gzip stream as it is.
python3 - "$gunzip_seeds" <<'PY'
import gzip, random, struct, sys
out, rng = sys.argv[1], random.Random(7)
floats = struct.pack("<512f", *[100.0 + (i * 37) % 17 + rng.random() for i in range(512)])
text = b"".join(b"voxel %d volume %d\n" % (i, i % 7) for i in range(200))
noise = bytes(rng.getrandbits(8) for _ in range(3000))
def seed(name, control, shape, b2, b3, payload):
    open(f"{out}/{name}", "wb").write(bytes([control, shape, b2, b3]) + payload)
seed("floats-level6", 1 | 6 << 2, 0, 0, 0, floats)
seed("text-three-members-repeated", 3 | 9 << 2 | 128, 1 | 2 << 2, 5, 0, text)
seed("noise-stored", 1, 2 | 4 << 2, 0, 0, noise)
seed("floats-sync-flush", 1 | 6 << 2 | 64, 1 | 3 << 2, 0, 3, floats)
seed("text-fixed-huffman", 2 | 5 << 2, 4 << 5 | 1 << 2, 0, 0, text)
seed("text-rle-bit-flipped", 1 | 6 << 2, 3 << 5, 128 | 40, 2, text)
seed("gzip-as-is", 0, 0, 0, 0, gzip.compress(floats * 4, 6))
PY
for t in "$file_seeds" "$folder_seeds" "$header_seeds" "$png_seeds" "$nifti_seeds" "$nifti_gz_seeds" "$gunzip_seeds"; do
  echo "fetch-seeds: $(ls "$t" | wc -l) seeds in $t"
done
