#!/usr/bin/env bash
# The test suite on a fresh machine: install, build, run the C++ tests (CTest) and the Python tests.
# GPU tests skip with a message where no CUDA device is usable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SVDLR_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
(cd "$build" && ctest --output-on-failure -j "${SVDLR_JOBS:-$(nproc)}")
"$root/scripts/test-python.sh"
