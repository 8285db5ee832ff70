#!/usr/bin/env bash
# Installs what building, testing and demonstrating the module needs on Debian 12 (bookworm):
# ITK 5.2.1, LAPACK/OpenBLAS, GoogleTest, DCMTK and the real MRI used by the tests and the demo.
# Python packages come from PyPI into a virtual environment (scripts/test-python.sh).
# Safe to run again; does nothing that is already done.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache
  libinsighttoolkit5-dev        # ITK 5.2.1
  libopenblas-dev liblapack-dev # LAPACK for the CPU backend
  libgtest-dev                  # GoogleTest
  insighttoolkit5-examples      # real MRI slices (BrainProtonDensitySlice.png, ...)
  mricron-data                  # the Colin27 brain, ch2.nii.gz
  libdcmtk-dev dcmtk            # DICOM series in and out (the tool's DCMTK I/O)
  libpng-dev                    # PNG files are checked through libpng before ITK reads them
  libtbb-dev                    # oneTBB: the engine's thread pool where the caller gives none
  libdeflate-dev                # .nii.gz read and written fast (libdeflate: whole buffers, members on every core)
  libnifti2-dev                 # NIfTI-1/2 headers read and converted (nifti_clib)
  libisal-dev                   # ISA-L's igzip: the .nii.gz writers (apps/io/SVDLowRankGzip.cxx), the gunzip benchmark
  libssl-dev                    # OpenSSL's libcrypto: the SHA-256 of the inputs in the provenance sidecar
  libgdcm-dev                   # JPEG 2000 pixel data (GDCM with OpenJPEG), the syntaxes DCMTK lacks
  libopenjp2-7-dev              # each JPEG 2000 frame's header read (OpenJPEG) before GDCM decodes the frame
  valgrind                      # shows DCMTK's JPEG-LS encoder writing out of bounds (docs/dicom.md)
  libcli11-dev                  # the command lines of the tools (CLI11)
  nlohmann-json3-dev            # the tools' JSON sidecars and --json documents (nlohmann::json)
  dcm2niix libgdcm-tools        # DICOM cross-checks in the tests (dcm2niix, GDCM's tools)
  python3-nibabel               # the NIfTI header and sidecar test reads our .nii.gz back with nibabel
  python3 python3-venv python3-dev # the Python module is built and tested in a virtual environment
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
