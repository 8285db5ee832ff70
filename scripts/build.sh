#!/usr/bin/env bash
# Configures and builds the module against the installed ITK into ${SVDLR_BUILD_DIR:-build}.
# The CUDA backend is compiled when a CUDA toolkit is found (set SVDLR_USE_CUDA=OFF to skip it);
# CUDA code compiles here even without a GPU, and its tests then skip with a message.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SVDLR_BUILD_DIR:-$root/build}

cuda_args=()
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
if [ -n "${SVDLR_USE_CUDA:-}" ]; then
  cuda_args+=("-DSVDLR_USE_CUDA=${SVDLR_USE_CUDA}")
fi
# Without a GPU here to target, compile for the architecture given, else for Hopper (sm_90) only,
# which keeps CI's build short; users with other GPUs set CUDAARCHS or CMAKE_CUDA_ARCHITECTURES.
if [ -z "${CUDAARCHS:-}" ]; then
  cuda_args+=("-DCMAKE_CUDA_ARCHITECTURES=${SVDLR_CUDA_ARCHITECTURES:-90}")
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${cuda_args[@]}"
cmake --build "$build" -j "${SVDLR_JOBS:-$(nproc)}"
